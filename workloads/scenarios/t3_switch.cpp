// t3-switch: T3 with the reduction done by the switch (NVLink SHARP, topology.switch_reductions)
// instead of by near-memory updates. Every GPU computes C's chunks in the same order into its own
// C, one launch per chunk on queue 0. Once chunk k is done on a GPU, its host launches pull k on
// queue 1, whose SM channels announce it to every GPU (the NVLS kernel's arrival flags); on the
// chunk's owner the pull then loads the chunk through the switch (multimem.ld_reduce: the sum of
// every GPU's copy) and stores it in place, while the GEMM goes on with chunk k + 1. Then the
// ring all-gather. docs/t3.md, "T3 over the switch", has the design and why.
#include <stdexcept>

#include "config/config_io.h"
#include "protocol/to_size.h"
#include "workloads/scenarios/common.h"
#include "workloads/scenarios/planners.h"

namespace t3 {

namespace {

void require_switch_reductions(const SystemConfig& config) {
  if (config.topology.kind != TopologyKind::Switch || !config.topology.switch_reductions) {
    throw ConfigError(
        "topology.switch_reductions: scenario t3-switch reduces its chunks in the switch and "
        "needs topology.kind = switch with topology.switch_reductions = true (system '" +
        config.name + "' has " +
        (config.topology.kind == TopologyKind::Switch ? "a switch that does not reduce"
                                                      : "no switch") +
        ")");
  }
}

}  // namespace

bool t3_switch_rotation_invariant(const SystemConfig& /*config*/) {
  return false;
}

void plan_t3_switch(const SystemConfig& config, const GemmShape& /*shape*/, ScenarioPlan& plan,
                    ElementType /*element*/, ElementType out_element) {
  require_switch_reductions(config);
  const int n = static_cast<int>(config.gpus);
  plan.phases = {{"gemm_rs", PhaseKind::GemmReduceScatter}, {"all_gather", PhaseKind::AllGather}};
  const RingOnOutput pull = nvls_on_output(config, plan, out_element);
  // A GPU's pull of a chunk it does not own only announces it: the same channels and flags on a
  // one-element scratch buffer after C, which leaves every GPU's range but the last rank's empty
  // (that one loads the one element through the switch).
  RingOnOutput announce = pull;
  announce.spec.bytes = bytes_of(out_element, 1);
  const std::uint64_t c0 = plan.gemm.gpus.front().buffers.c;
  announce.layout = plan_collective(config.address_map, announce.spec,
                                    receive_area(c0, plan.output_bytes) - hbm_base(config, 0));
  const RingOnOutput gather = ring_on_output(config, plan, out_element, T3Ring{n});
  const GemmShape& shape = plan.gemm.shape;
  const GemmShape chunk_shape{shape.m / n, shape.n, shape.k};
  const std::uint64_t chunk_bytes = plan.output_bytes / static_cast<std::uint64_t>(n);
  for (int g = 0; g < n; ++g) {
    const GemmLaunch& whole = plan.gemm.gpus[to_size(g)].launch;
    const auto gemm_of = [&](int chunk) {
      GemmLaunch launch = chunk_part_band(whole, chunk_shape, chunk_bytes, chunk, 0, 1);
      launch.wait = false;
      return launch;
    };
    const auto pull_of = [&](int chunk) {
      const bool owns = owner_chunk(g, n) == chunk;
      const RingOnOutput& on = owns ? pull : announce;
      CollectiveLaunch launch = ring_launch(on.layout, on.spec, g, CollectiveOp::ReduceScatter,
                                            static_cast<std::uint32_t>(chunk + 1));
      launch.queue = kCommQueue;
      launch.wait = false;
      launch.label = (owns ? "switch pull of chunk " : "announce chunk ") + std::to_string(chunk);
      return launch;
    };
    Program program;
    program.commands.push_back(comm_queue_first(whole));
    program.commands.push_back(barrier(kStartBarrier, "start"));
    // Chunk k's GEMM runs while chunk k - 1 is pulled; chunks in the same order on every GPU, so
    // a chunk is complete everywhere at about the same time.
    append_gemm(program, gemm_of(0));
    std::string previous_pull;
    for (int chunk = 0; chunk < n; ++chunk) {
      program.commands.push_back(wait_kernel(whole.dispatcher, 0, gemm_of(chunk).label));
      if (chunk + 1 < n) append_gemm(program, gemm_of(chunk + 1));
      if (!previous_pull.empty()) {
        program.commands.push_back(wait_kernel(whole.dispatcher, kCommQueue, previous_pull));
      }
      const CollectiveLaunch launch = pull_of(chunk);
      append_collective(program, launch);
      previous_pull = launch.label;
    }
    program.commands.push_back(wait_kernel(whole.dispatcher, kCommQueue, previous_pull));
    end_phase(program, plan.phases, 0);
    // The pulls used sequences 1 .. n in the same mailbox words.
    append_ring(program, gather, g, CollectiveOp::AllGather, static_cast<std::uint32_t>(n + 1));
    end_phase(program, plan.phases, 1);
    plan.programs.push_back(std::move(program));
    plan.owned_chunks.push_back(owner_chunk(g, n));
  }
  plan.rotation_refused =
      "t3-switch reduces in the switch, which reaches every GPU (under rotational symmetry the "
      "switch has no reducer)";
}

}  // namespace t3
