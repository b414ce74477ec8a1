// commfuse-ag: CommFuse's Flash-AG (see scenario.h), for a sublayer that all-gathers its GEMM's
// input.
#include "protocol/to_size.h"
#include "workloads/scenarios/common.h"
#include "workloads/scenarios/planners.h"

namespace t3 {

// CommFuse's Flash-AG (see scenario.h): the ring all-gather of A on queue 1 from the start, each
// step one whole chunk per channel; the GEMM band by band on queue 0, the band already here first,
// then each band once every channel's READY flag shows its step arrived.
void plan_commfuse_ag(const SystemConfig& config, ScenarioPlan& plan, ElementType element) {
  const int n = static_cast<int>(config.gpus);
  const GemmShape& shape = plan.gemm.shape;
  const std::int64_t parts = config.workload.split;
  require_whole_bands(config, shape, "commfuse-ag", "launches");
  plan.phases = {{"ag_gemm", PhaseKind::AllGatherGemm}};
  const RingOnOutput ring = ring_on(config, plan, plan.gemm.gpus.front().buffers.a_bytes,
                                    &GemmBuffers::a, element, T3Ring{n}, true);
  const GemmShape part_shape{shape.m / (n * parts), shape.n, shape.k};
  const std::uint64_t part_bytes = plan.output_bytes / static_cast<std::uint64_t>(n * parts);
  for (int g = 0; g < n; ++g) {
    const GemmLaunch& whole = plan.gemm.gpus[to_size(g)].launch;
    const CollectiveGpuLayout& here = ring.layout[to_size(g)];
    Program program;
    program.commands.push_back(comm_queue_first(whole));
    program.commands.push_back(barrier(kStartBarrier, "start"));
    CollectiveLaunch gather = ring_launch(ring.layout, ring.spec, g, CollectiveOp::AllGather, 1);
    gather.label = "flash-ag ring";
    gather.queue = kCommQueue;
    gather.wait = false;
    append_collective(program, gather);
    std::string running;  // the GEMM launch in flight on queue 0
    for (int step = -1; step < n - 1; ++step) {
      // Step -1: the band this GPU holds; step s: the one prev sent at its step s.
      const int chunk = owner_chunk(g - step - 1, n);
      for (int c = 0; step >= 0 && c < ring.spec.channels; ++c) {
        HostCommand arrived{HostCommand::Kind::PollAtLeast, ready_flag(here.flags, c),
                            static_cast<std::uint32_t>(step + 1),
                            "flash-ag: chunk " + std::to_string(chunk) + " arrived on channel " +
                                std::to_string(c) + " (READY count, ring step " +
                                std::to_string(step) + ")"};
        arrived.interval_ns = ring.spec.poll_ns;
        program.commands.push_back(arrived);
      }
      for (std::int64_t part = 0; part < parts; ++part) {
        if (!running.empty()) program.commands.push_back(wait_kernel(whole.dispatcher, 0, running));
        GemmLaunch launch = chunk_part_band(whole, part_shape, part_bytes, chunk, part, parts);
        launch.wait = false;
        append_gemm(program, launch);
        running = launch.label;
      }
    }
    program.commands.push_back(wait_kernel(whole.dispatcher, 0, running));
    program.commands.push_back(wait_kernel(whole.dispatcher, kCommQueue, gather.label));
    end_phase(program, plan.phases, 0);
    plan.programs.push_back(std::move(program));
    plan.owned_chunks.push_back(owner_chunk(g, n));
  }
  // GPU g's program is GPU 0's with every chunk moved by g: the ring is rank g on GPU g, and the
  // GEMM takes the bands in the order the ring brings them, starting from the one GPU g holds.
  // Only the ring crosses GPUs (into A's row bands; C stays local).
  add_rotation_band(config, plan, ring.layout.front().buffer, ring.spec.bytes, element, "A");
}

}  // namespace t3
