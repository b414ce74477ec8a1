// The five configurations T3 is judged against (REFERENCES.md section 1), each a complete run of
// one sublayer on the whole group, as plain data: one program per GPU plus the names of the
// phases its barriers mark. No SystemC.
//
//   sequential    GEMM (output stored, cached), then the RCCL-style ring reduce-scatter on the
//                 SMs, then the ring all-gather on the SMs.
//   t3            the fused GEMM + reduce-scatter (t3_plan.h: tracker, DMA engine and near-memory
//                 updates) under FCFS memory arbitration, then the ring all-gather on the SMs.
//   t3-mca        t3 with communication-aware arbitration (hbm.arbitration = mca).
//   ideal         max(GEMM alone, reduce-scatter alone) + all-gather, with the best
//                 reduce-scatter the system offers. It runs the sequential programs, whose phases
//                 each run alone on the group (a barrier between them), and combines the measured
//                 phase times; where a direct collective can run (ideal_simulated) it also runs
//                 them with the SM direct reduce-scatter, ideal-rs-nmc and ideal-rs-sm-nmc, and
//                 takes the run whose reduce-scatter is the fastest.
//   ideal-rs-nmc  sequential, but the reduce-scatter is done by the DMA engines with near-memory
//                 updates (dma_collective.h) instead of SM kernels.
//
// Phases. Every program starts with its one-time setup (tracker regions), then a Barrier with id
// kStartBarrier: the sublayer's clock starts when that barrier releases. Phase k ends when the
// Barrier with id kStartBarrier + 1 + k releases on every GPU. After the reduce-scatter each GPU
// holds one chunk fully reduced (owned_chunks: g + 1 mod n, or T3's ring rank + 1 on the
// ascending ring), and after the all-gather every GPU's C holds the whole reduced output.
//
// Each scenario's planner is its own file in workloads/scenarios/; the table in scenario.cpp names
// them with the sublayers they apply to.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "config/system_config.h"
#include "protocol/program.h"
#include "protocol/rotation.h"
#include "workloads/gemm_plan.h"
#include "workloads/sublayer.h"

namespace t3 {

//   slicing       software overlap without T3's hardware: the GEMM is cut into n x workload.split
//                 slices of output rows (bands), each its own launch; as soon as a band is done
//                 its ring reduce-scatter runs on the SMs from a second hardware queue (of higher
//                 priority, as NCCL's streams are) while the next band computes. The last band's
//                 reduce-scatter is exposed (the tail). Then the ring all-gather of every band.
//   commfuse      CommFuse's Flash-RS (REFERENCES section 2): the ring reduce-scatter's n - 1
//                 peer-to-peer steps overlap the GEMM step by step. The GEMM runs chunk by chunk
//                 in the order the ring consumes them (the chunk a GPU keeps last; each chunk in
//                 workload.split launches), and the ring, launched at the start on a second
//                 hardware queue, takes step k as soon as the host has opened its gate for chunk
//                 k. Sends and adds run on the SMs beside the GEMM. Then the ring all-gather.
//   commfuse-ag   CommFuse's Flash-AG, for a sublayer that all-gathers its GEMM's input
//                 (gathers_input: fc1-ag): the ring all-gather of A's row bands runs on a second
//                 hardware queue from the start, and the GEMM runs band by band: first the band
//                 this GPU holds, then each band as soon as the host has seen it arrive (the ring's
//                 READY flags of that step, polled in the mailbox). Its sequential baseline is
//                 the ring all-gather, then the whole GEMM.
//   t3-switch     T3 with the switch doing the reduction (topology.switch_reductions): every GPU
//                 computes the chunks in the same order into its own C; once a chunk is done on a
//                 GPU it flags that on every GPU (an arrival flag per SM channel, the NVLS
//                 kernel's), and the chunk's owner, once every GPU has, pulls it reduced through
//                 the switch (multimem.ld_reduce on the SMs) while the GEMM goes on with the next
//                 chunk. Then the ring all-gather. docs/t3.md, "T3 over the switch".
//   ideal-rs-sm-nmc  sequential, but the reduce-scatter is T3's communication run alone: the SMs
//                 store each chunk's partials straight into its owner as near-memory updates
//                 (protocol/ring.h, Direct NMC); fully-connected and switch topologies. One of
//                 ideal's candidates.
enum class Scenario {
  Sequential,
  T3,
  T3Mca,
  Ideal,
  IdealRsNmc,
  Slicing,
  CommFuse,
  CommFuseAg,
  T3Switch,
  IdealRsSmNmc
};

// The paper's five, in the order above: what compare and sweeps run unless asked for more.
std::vector<Scenario> all_scenarios();
// Every scenario there is: the five, then the software-overlap ones.
std::vector<Scenario> known_scenarios();
// Whether every GPU's program is GPU 0's rotated (ScenarioPlan::rotation) on `config`, so that
// one GPU can stand for the group (sim.symmetry): every scenario but CommFuse's copy-engine
// variant, whose flags the copy engine moves between mailboxes (MMIO, which the rotation does not
// map), and t3-switch, whose reductions in the switch read every GPU. A plan may still state no
// rotation for a shape whose chunks are unequal (ScenarioPlan::rotation_refused).
bool rotation_invariant(const SystemConfig& config, Scenario scenario);
// "sequential", "t3", "t3-mca", "ideal", "ideal-rs-nmc", "slicing", "commfuse", "commfuse-ag",
// "t3-switch", "ideal-rs-sm-nmc".
const char* to_string(Scenario scenario);
// The inverse of to_string; anything else throws ConfigError listing the valid names.
Scenario parse_scenario(const std::string& name);

// The configuration a scenario runs on: t3 forces hbm.arbitration = fcfs and t3-mca forces mca
// (that is what tells them apart); the others keep what `config` says.
SystemConfig scenario_config(const SystemConfig& config, Scenario scenario);

inline constexpr std::uint32_t kStartBarrier = 0x10;

// What a phase moves: compute-class DRAM traffic is always the GEMM's; communication-class traffic
// belongs to the phase's collective.
enum class PhaseKind { Gemm, GemmReduceScatter, ReduceScatter, AllGather, AllGatherGemm };
const char* to_string(PhaseKind kind);

struct PhaseSpec {
  std::string name;  // "gemm", "gemm_rs", "reduce_scatter", "all_gather", "ag_gemm"
  PhaseKind kind;
};

// Where a band of the output lives: bytes [offset, offset + bytes) of the whole output (C,
// tile-contiguous) are at address[g] on GPU g. Most scenarios have one band, C itself; slicing
// has one per slice, each with its ring FIFO after it.
struct OutputBand {
  std::uint64_t offset = 0;
  std::uint64_t bytes = 0;
  std::vector<std::uint64_t> address;  // per GPU
};

struct ScenarioPlan {
  Scenario scenario = Scenario::Sequential;
  GroupGemmPlan
      gemm;  // the operands and output of every GPU (the same addresses in every scenario)
  std::uint64_t output_bytes = 0;          // C bytes per GPU: n equal chunks
  std::vector<PhaseSpec> phases;           // phase k ends at barrier kStartBarrier + 1 + k
  std::vector<std::int64_t> owned_chunks;  // per GPU: the chunk it holds reduced after the RS
  std::vector<OutputBand> bands;           // the output, each band reduce-scattered on its own
  std::vector<Program> programs;           // one per GPU
  // The reduce-scatter goes straight to each chunk's owner (t3, t3-mca and ideal-rs-nmc under
  // workload.collective = direct); otherwise it follows the ring.
  bool direct = false;
  // The reduce-scatter runs through the switch's multicast groups (NVLS: sequential where
  // sequential_uses_nvls holds, t3-switch), so `direct` holds too.
  bool nvls = false;
  // The switch's multicast groups the programs name, in order: group i + 1 is
  // multicast_groups[i] (SwitchReducer::add_group numbers them from 1). The run makes them before
  // it starts.
  std::vector<std::vector<int>> multicast_groups;
  // The collective all-gathers the GEMM's input A (a gathers_input sublayer): GPU g starts with
  // A's row band owner_chunk(g) and every GPU computes its own C (nothing is reduced).
  bool gathers_input = false;
  // Every GPU's program is GPU 0's rotated by its index: how addresses and tags move with it
  // (protocol/rotation.h). The bands are the buffers whose chunk positions the collectives
  // number: C; each slice's buffer (slicing); A (a gathers_input sublayer).
  RotationMap rotation;
  // Why the plan states no rotation (rotation.gpus = 0), for the refusal of sim.symmetry.
  std::string rotation_refused;
};

// Throws std::invalid_argument naming what cannot be planned (e.g. an output whose tile rows do
// not split into one equal chunk per GPU).
ScenarioPlan plan_scenario(const SystemConfig& config, const GemmShape& shape, Scenario scenario,
                           ElementType element = ElementType::Fp16,
                           ElementType out_element = ElementType::Fp16);

// The plan for `scenario` on `sublayer`'s GEMM `shape`: plan_scenario for a sublayer that reduces
// its output; for one that all-gathers its input (fc1-ag) sequential (the ring all-gather, then
// the GEMM) or commfuse-ag. Throws std::invalid_argument naming the scenario and the sublayer for
// a scenario that does not apply to it.
ScenarioPlan plan_sublayer_scenario(const SystemConfig& config, Sublayer sublayer,
                                    const GemmShape& shape, Scenario scenario);
// Whether `scenario` applies to `sublayer` (the refusal above).
bool applies_to(Scenario scenario, Sublayer sublayer);

// Whether ideal has programs of its own on `config`: the sequential ones with the SM direct
// reduce-scatter, which the group's fabric carries (a switch or a fully-connected mesh) and
// workload.collective allows (direct_collective in config_io.h, the rule T3's reduce-scatter
// follows). Elsewhere ideal derives from the sequential run alone.
bool ideal_simulated(const SystemConfig& config);

// Ring channels the SM collectives use, as NCCL picks them for the class of machine: 24 on a
// switch (NCCL's search finds 12 rings on an 8-GPU NVSwitch A100 or H100 and doubles them), 16 on
// point-to-point rings and meshes (no published figure for them); at most one per resident
// workgroup slot. docs/calibration.md has the sources.
int default_ring_channels(const SystemConfig& config);

// Whether sequential's reduce-scatter runs NVLS (the SM NVLS kernel through the switch) instead of
// the SM ring, as NCCL's tuner picks the faster of the two on an NVSwitch with NVLink SHARP: on a
// switch with topology.switch_reductions (where rotational symmetry is refused, so every GPU is
// simulated), with workload.collective not ring, at 8 GPUs or more (below that the ring was the
// faster in the model's own runs). docs/t3.md has the measurements the rule rests on.
bool sequential_uses_nvls(const SystemConfig& config);

}  // namespace t3
