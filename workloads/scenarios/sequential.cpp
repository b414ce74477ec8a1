// sequential: the GEMM, then the ring reduce-scatter on the SMs (NVLS where sequential_uses_nvls
// holds), then the ring all-gather on the SMs. ideal runs these programs, and where
// ideal_simulated() holds, their twin with the SM direct reduce-scatter; ideal-rs-sm-nmc their twin
// with the SM direct NMC one. On a sublayer that all-gathers its input: the ring all-gather of A,
// then the whole GEMM.
#include <stdexcept>

#include "protocol/to_size.h"
#include "workloads/scenarios/common.h"
#include "workloads/scenarios/planners.h"

namespace t3 {

void plan_gemm_then_collectives(const SystemConfig& config, ScenarioPlan& plan,
                                ElementType out_element, const std::vector<Program>& reduce_scatter,
                                std::uint32_t tags_per_chunk) {
  plan.phases = {{"gemm", PhaseKind::Gemm},
                 {"reduce_scatter", PhaseKind::ReduceScatter},
                 {"all_gather", PhaseKind::AllGather}};
  const RingOnOutput ring =
      ring_on_output(config, plan, out_element, T3Ring{static_cast<int>(config.gpus)});
  for (int g = 0; g < config.gpus; ++g) {
    Program program;
    program.commands.push_back(barrier(kStartBarrier, "start"));
    append_gemm(program, plan.gemm.gpus[to_size(g)].launch);
    end_phase(program, plan.phases, 0);
    if (!reduce_scatter.empty()) {
      const auto& commands = reduce_scatter[to_size(g)].commands;
      program.commands.insert(program.commands.end(), commands.begin(), commands.end());
    } else {
      append_ring(program, ring, g, CollectiveOp::ReduceScatter, 1);
    }
    end_phase(program, plan.phases, 1);
    append_ring(program, ring, g, CollectiveOp::AllGather, 2);
    end_phase(program, plan.phases, 2);
    plan.programs.push_back(std::move(program));
    plan.owned_chunks.push_back(owner_chunk(g, static_cast<int>(config.gpus)));
  }
  rotate_output(config, plan, out_element, 1, tags_per_chunk);
}

void plan_sequential(const SystemConfig& config, const GemmShape& /*shape*/, ScenarioPlan& plan,
                     ElementType /*element*/, ElementType out_element) {
  if (!sequential_uses_nvls(config)) {
    plan_gemm_then_collectives(config, plan, out_element, {}, 0);
    return;
  }
  // NCCL's choice on an NVSwitch with NVLink SHARP: the NVLS reduce-scatter, which leaves chunk
  // g + 1 on GPU g as the ring's does, so the ring all-gather follows it unchanged.
  const RingOnOutput nvls = nvls_on_output(config, plan, out_element);
  std::vector<Program> reduce_scatter(to_size(config.gpus));
  for (int g = 0; g < config.gpus; ++g) {
    append_ring(reduce_scatter[to_size(g)], nvls, g, CollectiveOp::ReduceScatter, 1);
  }
  plan_gemm_then_collectives(config, plan, out_element, reduce_scatter, 0);
}

namespace {

// The sequential programs with an SM direct reduce-scatter in place of the ring's (`nmc`: pushed
// to the owners as near-memory updates, protocol/ring.h, Direct NMC; else pulled by them); the
// ring all-gather follows it as it follows the ring's (both leave chunk g + 1 on GPU g).
void plan_sm_direct(const SystemConfig& config, ScenarioPlan& plan, ElementType out_element,
                    bool nmc) {
  RingOnOutput direct = direct_on_output(config, plan, out_element);
  direct.spec.nmc = nmc;
  std::vector<Program> reduce_scatter(to_size(config.gpus));
  for (int g = 0; g < config.gpus; ++g) {
    append_ring(reduce_scatter[to_size(g)], direct, g, CollectiveOp::ReduceScatter, 1);
  }
  plan_gemm_then_collectives(config, plan, out_element, reduce_scatter, 0);
  plan.direct = true;
}

}  // namespace

void plan_ideal(const SystemConfig& config, const GemmShape& shape, ScenarioPlan& plan,
                ElementType element, ElementType out_element) {
  if (!ideal_simulated(config)) {
    plan_sequential(config, shape, plan, element, out_element);
    return;
  }
  plan_sm_direct(config, plan, out_element, false);
}

void plan_ideal_rs_sm_nmc(const SystemConfig& config, const GemmShape& /*shape*/,
                          ScenarioPlan& plan, ElementType /*element*/, ElementType out_element) {
  if (config.topology.kind == TopologyKind::Ring) {
    throw std::invalid_argument(
        "scenario ideal-rs-sm-nmc needs topology.kind = fully-connected or switch (system '" +
        config.name + "' has topology.kind = ring: a direct store would cross other GPUs' links)");
  }
  plan_sm_direct(config, plan, out_element, true);
}

// Sequential for an all-gathered input: the ring all-gather of A, then the whole GEMM.
void plan_sequential_gathered(const SystemConfig& config, ScenarioPlan& plan, ElementType element) {
  const int n = static_cast<int>(config.gpus);
  plan.phases = {{"all_gather", PhaseKind::AllGather}, {"gemm", PhaseKind::Gemm}};
  const RingOnOutput ring = ring_on(config, plan, plan.gemm.gpus.front().buffers.a_bytes,
                                    &GemmBuffers::a, element, T3Ring{n}, false);
  for (int g = 0; g < n; ++g) {
    Program program;
    program.commands.push_back(barrier(kStartBarrier, "start"));
    append_ring(program, ring, g, CollectiveOp::AllGather, 1);
    end_phase(program, plan.phases, 0);
    append_gemm(program, plan.gemm.gpus[to_size(g)].launch);
    end_phase(program, plan.phases, 1);
    plan.programs.push_back(std::move(program));
    plan.owned_chunks.push_back(owner_chunk(g, n));
  }
  // The ring's chunks are A's row bands, GPU g ring rank g (ring_on checked A's offsets).
  add_rotation_band(config, plan, ring.layout.front().buffer, ring.spec.bytes, element, "A");
}

}  // namespace t3
