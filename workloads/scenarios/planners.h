// One planner per scenario, each in its own file here; the table in workloads/scenario.cpp names
// them. A planner is called with plan.scenario, plan.gemm and plan.output_bytes set (and
// plan.gathers_input for an all-gathered input) and fills in the phases, programs and owned
// chunks, the direct flag, the rotation and, where the output is not C as one band, the bands.
// Internal to workloads/.
#pragma once

#include <cstdint>
#include <vector>

#include "config/system_config.h"
#include "protocol/program.h"
#include "workloads/scenario.h"

namespace t3 {

// A scenario on a sublayer that reduce-scatters its GEMM's output.
using ReducedOutputPlanner = void (*)(const SystemConfig& config, const GemmShape& shape,
                                      ScenarioPlan& plan, ElementType element,
                                      ElementType out_element);
// A scenario on a sublayer that all-gathers its GEMM's input A (ScenarioPlan::gathers_input).
using GatheredInputPlanner = void (*)(const SystemConfig& config, ScenarioPlan& plan,
                                      ElementType element);

// sequential.cpp: sequential, and ideal (experiments/ combines the phases of its runs).
void plan_sequential(const SystemConfig& config, const GemmShape& shape, ScenarioPlan& plan,
                     ElementType element, ElementType out_element);
// ideal's own programs: sequential's with the SM direct reduce-scatter where ideal_simulated()
// holds, sequential's otherwise.
void plan_ideal(const SystemConfig& config, const GemmShape& shape, ScenarioPlan& plan,
                ElementType element, ElementType out_element);
// ideal-rs-sm-nmc: sequential's with the SM direct NMC reduce-scatter (fully-connected and switch
// topologies; throws std::invalid_argument naming topology.kind on a ring).
void plan_ideal_rs_sm_nmc(const SystemConfig& config, const GemmShape& shape, ScenarioPlan& plan,
                          ElementType element, ElementType out_element);
void plan_sequential_gathered(const SystemConfig& config, ScenarioPlan& plan, ElementType element);
// GEMM, then `reduce_scatter` (one program per GPU; empty: the SM ring's), then the SM ring
// all-gather. `tags_per_chunk`: the tracking tags the reduce-scatter gives each chunk of C.
void plan_gemm_then_collectives(const SystemConfig& config, ScenarioPlan& plan,
                                ElementType out_element, const std::vector<Program>& reduce_scatter,
                                std::uint32_t tags_per_chunk);

// t3.cpp: t3 and t3-mca (the same programs under another hbm.arbitration).
void plan_t3(const SystemConfig& config, const GemmShape& shape, ScenarioPlan& plan,
             ElementType element, ElementType out_element);

// ideal_rs_nmc.cpp
void plan_ideal_rs_nmc(const SystemConfig& config, const GemmShape& shape, ScenarioPlan& plan,
                       ElementType element, ElementType out_element);

// slicing.cpp
void plan_slicing(const SystemConfig& config, const GemmShape& shape, ScenarioPlan& plan,
                  ElementType element, ElementType out_element);

// commfuse.cpp
void plan_commfuse(const SystemConfig& config, const GemmShape& shape, ScenarioPlan& plan,
                   ElementType element, ElementType out_element);
// Whether commfuse's programs are rotations of GPU 0's on `config` (not with the copy engine).
bool commfuse_rotation_invariant(const SystemConfig& config);

// t3_switch.cpp: refuses (ConfigError naming topology.switch_reductions) a system whose switch
// does not reduce.
void plan_t3_switch(const SystemConfig& config, const GemmShape& shape, ScenarioPlan& plan,
                    ElementType element, ElementType out_element);
// Never: the switch's reductions read every GPU, and under rotational symmetry it has no reducer.
bool t3_switch_rotation_invariant(const SystemConfig& config);

// commfuse_ag.cpp
void plan_commfuse_ag(const SystemConfig& config, ScenarioPlan& plan, ElementType element);

}  // namespace t3
