// ideal-rs-nmc: sequential, but the reduce-scatter is done by the DMA engines with near-memory
// updates (dma_collective.h) instead of SM kernels: a ring, or straight to each chunk's owner
// under workload.collective = direct.
#include "config/config_io.h"
#include "workloads/dma_collective.h"
#include "workloads/scenarios/planners.h"

namespace t3 {

void plan_ideal_rs_nmc(const SystemConfig& config, const GemmShape& /*shape*/, ScenarioPlan& plan,
                       ElementType /*element*/, ElementType out_element) {
  DmaCollectiveSpec spec;
  plan.direct = direct_collective(config);
  spec.pattern = plan.direct ? DmaPattern::Direct : DmaPattern::Ring;
  spec.ranks = static_cast<int>(config.gpus);
  spec.bytes = plan.output_bytes;
  spec.element = out_element;
  std::vector<std::uint64_t> buffers;
  for (const GpuGemm& gpu : plan.gemm.gpus) buffers.push_back(gpu.buffers.c);
  // The DMA ring tags its slices chunk by chunk.
  const auto tags_per_chunk = static_cast<std::uint32_t>(dma_slices(spec));
  const std::vector<Program> reduce_scatter =
      dma_collective_programs(config, buffers, spec, {CollectiveOp::ReduceScatter});
  plan_gemm_then_collectives(config, plan, out_element, reduce_scatter, tags_per_chunk);
}

}  // namespace t3
