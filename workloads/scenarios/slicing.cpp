#include <algorithm>
#include <stdexcept>

#include "protocol/to_size.h"
#include "workloads/scenarios/common.h"
#include "workloads/scenarios/planners.h"

namespace t3 {

// Software overlap (see scenario.h): n x workload.split bands, each a GEMM launch on queue 0 and,
// once it is done, its ring reduce-scatter on queue 1 while the next band computes; then the ring
// all-gather of each band. Each band has its own buffer with its ring FIFO after it (the FIFO
// follows the buffer, protocol/ring.h), from where C starts.
void plan_slicing(const SystemConfig& config, const GemmShape& /*shape*/, ScenarioPlan& plan,
                  ElementType /*element*/, ElementType out_element) {
  const int n = static_cast<int>(config.gpus);
  const GemmShape& shape = plan.gemm.shape;
  const std::int64_t slices = n * config.workload.split;
  require_whole_bands(config, shape, "slicing", "slices");
  plan.phases = {{"gemm_rs", PhaseKind::GemmReduceScatter}, {"all_gather", PhaseKind::AllGather}};
  const GemmShape band_shape{shape.m / slices, shape.n, shape.k};
  const std::uint64_t band_bytes = plan.output_bytes / static_cast<std::uint64_t>(slices);

  CollectiveSpec spec;
  spec.ranks = n;
  spec.bytes = band_bytes;
  spec.element = out_element;
  spec.channels = static_cast<int>(
      std::min<std::int64_t>(default_ring_channels(config),
                             static_cast<std::int64_t>(band_bytes / bytes_of(out_element, 1)) / n));
  spec.channels = std::max(spec.channels, 1);
  spec.ring_strides = ring_strides_for(config, spec.channels);
  std::vector<std::vector<CollectiveGpuLayout>> layouts;  // per band, by GPU
  std::uint64_t offset = plan.gemm.gpus.front().buffers.c - hbm_base(config, 0);
  for (std::int64_t i = 0; i < slices; ++i) {
    layouts.push_back(plan_collective(config.address_map, spec, offset));
    const CollectiveGpuLayout& first = layouts.back().front();
    if (first.end - hbm_base(config, 0) > config.hbm.capacity_bytes) {
      throw std::invalid_argument("scenario slicing: " + std::to_string(slices) +
                                  " bands with their FIFOs do not fit in hbm.capacity_bytes");
    }
    OutputBand band{static_cast<std::uint64_t>(i) * band_bytes, band_bytes, {}};
    for (const CollectiveGpuLayout& gpu : layouts.back()) band.address.push_back(gpu.buffer);
    plan.bands.push_back(std::move(band));
    // Every GPU does slice i at the same time, and slice i's ring is rank g on GPU g: its buffer
    // rotates as C does in sequential; its FIFO (after it) keeps its offset.
    add_rotation_band(config, plan, first.buffer, band_bytes, out_element,
                      "slice " + std::to_string(i));
    offset = first.end - hbm_base(config, 0);
  }

  const auto sequence = [](std::int64_t k) { return static_cast<std::uint32_t>(k + 1); };
  for (int g = 0; g < n; ++g) {
    const GemmLaunch& whole = plan.gemm.gpus[to_size(g)].launch;
    const auto band_gemm = [&](std::int64_t i) {
      return row_band(whole, band_shape, i, plan.bands[to_size(i)].address[g],
                      "slice " + std::to_string(i) + " gemm");
    };
    const auto band_ring = [&](std::int64_t i, CollectiveOp op, std::uint32_t seq, int queue) {
      CollectiveLaunch launch = ring_launch(layouts[to_size(i)], spec, g, op, seq);
      launch.label = "slice " + std::to_string(i) +
                     (op == CollectiveOp::ReduceScatter ? " reduce-scatter" : " all-gather");
      launch.queue = queue;
      return launch;
    };
    Program program;
    program.commands.push_back(comm_queue_first(whole));
    program.commands.push_back(barrier(kStartBarrier, "start"));
    append_gemm(program, band_gemm(0));
    for (std::int64_t i = 0; i < slices; ++i) {
      GemmLaunch next;
      if (i + 1 < slices) {
        next = band_gemm(i + 1);
        next.wait = false;
        append_gemm(program, next);
      }
      if (i > 0) {
        program.commands.push_back(wait_kernel(
            whole.dispatcher, kCommQueue, "slice " + std::to_string(i - 1) + " reduce-scatter"));
      }
      CollectiveLaunch rs = band_ring(i, CollectiveOp::ReduceScatter, sequence(i), kCommQueue);
      rs.wait = i + 1 == slices;  // the last band's reduce-scatter is the tail
      append_collective(program, rs);
      if (i + 1 < slices) program.commands.push_back(wait_kernel(whole.dispatcher, 0, next.label));
    }
    end_phase(program, plan.phases, 0);
    for (std::int64_t i = 0; i < slices; ++i) {
      append_collective(program, band_ring(i, CollectiveOp::AllGather, sequence(slices + i), 0));
    }
    end_phase(program, plan.phases, 1);
    plan.programs.push_back(std::move(program));
    plan.owned_chunks.push_back(owner_chunk(g, n));
  }
}

}  // namespace t3
