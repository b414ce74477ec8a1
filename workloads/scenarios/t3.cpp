// t3 and t3-mca: T3's fused GEMM + reduce-scatter (t3_plan.h: tracker, DMA engine and near-memory
// updates), then the ring all-gather on the SMs. The two differ only in hbm.arbitration (the
// table in scenario.cpp forces fcfs or mca).
#include "config/config_io.h"
#include "protocol/to_size.h"
#include "workloads/scenarios/common.h"
#include "workloads/scenarios/planners.h"
#include "workloads/t3_plan.h"

namespace t3 {

void plan_t3(const SystemConfig& config, const GemmShape& shape, ScenarioPlan& plan,
             ElementType element, ElementType out_element) {
  plan.phases = {{"gemm_rs", PhaseKind::GemmReduceScatter}, {"all_gather", PhaseKind::AllGather}};
  const T3GemmRsPlan fused =
      plan_t3_gemm_rs(config, shape, element, out_element, direct_collective(config));
  plan.gemm = fused.gemm;
  plan.direct = fused.direct;
  const RingOnOutput ring = ring_on_output(config, plan, out_element, fused.ring);
  std::vector<Program> programs = fused.programs();
  for (int g = 0; g < config.gpus; ++g) {
    Program& program = programs[to_size(g)];
    // The tracker's regions are set up before the clock starts, as a library configures them
    // once per buffer.
    const auto setup = static_cast<std::ptrdiff_t>(fused.tracker_setup[g].size());
    program.commands.insert(program.commands.begin() + setup, barrier(kStartBarrier, "start"));
    end_phase(program, plan.phases, 0);
    append_ring(program, ring, g, CollectiveOp::AllGather, 1);
    end_phase(program, plan.phases, 1);
    plan.owned_chunks.push_back(fused.ring.owned_chunk(g));
  }
  plan.programs = std::move(programs);
  rotate_output(config, plan, out_element,
                fused.ring.direction == RingDirection::Descending ? 1 : -1,
                static_cast<std::uint32_t>(fused.tiles_per_chunk));
}

}  // namespace t3
