#include "workloads/scenarios/common.h"

#include <algorithm>
#include <stdexcept>

#include "protocol/dispatcher_registers.h"
#include "protocol/to_size.h"
#include "workloads/plan_util.h"

namespace t3 {

HostCommand barrier(std::uint32_t id, const std::string& note) {
  return {HostCommand::Kind::Barrier, 0, id, note};
}

void end_phase(Program& program, const std::vector<PhaseSpec>& phases, std::size_t k) {
  program.commands.push_back(
      barrier(kStartBarrier + 1 + static_cast<std::uint32_t>(k), "end of " + phases.at(k).name));
}

RingOnOutput ring_on(const SystemConfig& config, const ScenarioPlan& plan, std::uint64_t bytes,
                     std::uint64_t GemmBuffers::*buffer, ElementType element, T3Ring order,
                     bool gated) {
  RingOnOutput ring;
  ring.order = order;
  ring.spec.ranks = static_cast<int>(config.gpus);
  ring.spec.bytes = bytes;
  ring.spec.element = element;
  const auto chunk_elements = static_cast<std::int64_t>(bytes / bytes_of(element, 1) /
                                                        static_cast<std::uint64_t>(config.gpus));
  ring.spec.channels =
      static_cast<int>(std::min<std::int64_t>(default_ring_channels(config), chunk_elements));
  if (gated) {
    // A ring that overlaps the GEMM stays resident beside it: it may take at most a quarter of
    // the SM slots, so the GEMM always has slots to run in.
    const std::int64_t slots = config.sm.count * config.sm.occupancy;
    ring.spec.channels = static_cast<int>(
        std::max<std::int64_t>(1, std::min<std::int64_t>(ring.spec.channels, slots / 4)));
    // Every channel moves its share of a chunk as one slice, each step whole, so step k completes
    // chunk k alone.
    const std::int64_t share = (chunk_elements + ring.spec.channels - 1) / ring.spec.channels;
    ring.spec.slice_bytes = static_cast<std::uint32_t>(align_up(bytes_of(element, share), 4));
  } else {
    // A gated ring keeps one ring: its producer follows that ring's chunk order.
    ring.spec.ring_strides = ring_strides_for(config, ring.spec.channels);
  }
  const std::uint64_t base = plan.gemm.gpus.front().buffers.*buffer;
  const auto by_gpu = plan_collective(config.address_map, ring.spec, base - hbm_base(config, 0));
  for (int r = 0; r < ring.spec.ranks; ++r) {
    const auto g = static_cast<std::size_t>(order.gpu(r));
    if (by_gpu[g].buffer != plan.gemm.gpus[g].buffers.*buffer) {
      throw std::logic_error("scenario: the ring collective's buffer is not GPU " +
                             std::to_string(g) + "'s GEMM buffer");
    }
    ring.layout.push_back(by_gpu[g]);
  }
  return ring;
}

RingOnOutput ring_on_output(const SystemConfig& config, const ScenarioPlan& plan,
                            ElementType element, T3Ring order, bool gated) {
  return ring_on(config, plan, plan.output_bytes, &GemmBuffers::c, element, order, gated);
}

RingOnOutput direct_on_output(const SystemConfig& config, const ScenarioPlan& plan,
                              ElementType element) {
  RingOnOutput direct;
  direct.order = T3Ring{static_cast<int>(config.gpus)};
  direct.spec.ranks = static_cast<int>(config.gpus);
  direct.spec.bytes = plan.output_bytes;
  direct.spec.element = element;
  direct.spec.direct = true;
  const auto chunk_elements = static_cast<std::int64_t>(plan.output_bytes / bytes_of(element, 1) /
                                                        static_cast<std::uint64_t>(config.gpus));
  // As many channels as the ring would have, within what the mailbox holds flags for.
  direct.spec.channels = static_cast<int>(std::min<std::int64_t>(
      {default_ring_channels(config), direct_mailbox_channels(direct.spec.ranks),
       std::max<std::int64_t>(1, chunk_elements)}));
  const std::uint64_t base = plan.gemm.gpus.front().buffers.c;
  direct.layout = plan_collective(config.address_map, direct.spec, base - hbm_base(config, 0));
  for (int g = 0; g < direct.spec.ranks; ++g) {
    if (direct.layout[to_size(g)].buffer != plan.gemm.gpus[to_size(g)].buffers.c) {
      throw std::logic_error("scenario: the direct collective's buffer is not GPU " +
                             std::to_string(g) + "'s C");
    }
  }
  return direct;
}

RingOnOutput nvls_on_output(const SystemConfig& config, ScenarioPlan& plan, ElementType element) {
  RingOnOutput nvls = direct_on_output(config, plan, element);
  if (plan.multicast_groups.empty()) {
    std::vector<int> every_gpu;
    for (int g = 0; g < config.gpus; ++g) every_gpu.push_back(g);
    plan.multicast_groups.push_back(every_gpu);
  }
  nvls.spec.nvls = true;
  nvls.spec.multicast = 1;  // multicast_groups[0]
  plan.nvls = true;
  plan.direct = true;
  return nvls;
}

void append_ring(Program& program, const RingOnOutput& ring, int gpu, CollectiveOp op,
                 std::uint32_t sequence) {
  CollectiveLaunch launch = ring_launch(ring.layout, ring.spec, ring.order.rank(gpu), op, sequence);
  launch.label = std::string(ring.spec.nvls     ? "nvls "
                             : ring.spec.direct ? "direct "
                                                : "ring ") +
                 (op == CollectiveOp::ReduceScatter ? "reduce-scatter" : "all-gather");
  append_collective(program, launch);
}

void require_equal_chunks(const SystemConfig& config, const GemmShape& shape) {
  const std::int64_t tile_rows = (shape.m + config.gemm.tile_m - 1) / config.gemm.tile_m;
  if (shape.m % config.gemm.tile_m != 0 || tile_rows % config.gpus != 0) {
    throw std::invalid_argument(
        "scenario: M = " + std::to_string(shape.m) + " must be a multiple of tile_m (" +
        std::to_string(config.gemm.tile_m) + ") with its tile rows splitting into " +
        std::to_string(config.gpus) + " equal chunks, one per GPU");
  }
}

void add_rotation_band(const SystemConfig& config, ScenarioPlan& plan, std::uint64_t buffer,
                       std::uint64_t bytes, ElementType element, const std::string& what, int sign,
                       std::uint32_t tags_per_chunk) {
  if (!plan.rotation_refused.empty()) return;
  const auto n = static_cast<std::uint64_t>(config.gpus);
  const std::uint64_t element_bytes = bytes_of(element, 1);
  if (bytes % (n * element_bytes) != 0) {
    plan.rotation = {};
    plan.rotation_refused = what + "'s " + std::to_string(bytes / element_bytes) +
                            " elements do not split into " + std::to_string(n) +
                            " equal chunks, so the GPUs' programs are not rotations of one another";
    return;
  }
  plan.rotation.gpus = static_cast<int>(config.gpus);
  plan.rotation.bands.push_back({buffer - hbm_base(config, 0), bytes / n, sign, 0, tags_per_chunk});
}

void rotate_output(const SystemConfig& config, ScenarioPlan& plan, ElementType out_element,
                   int sign, std::uint32_t tags_per_chunk) {
  const std::uint64_t offset = plan.gemm.gpus.front().buffers.c - hbm_base(config, 0);
  for (int g = 0; g < config.gpus; ++g) {
    if (plan.gemm.gpus[to_size(g)].buffers.c - hbm_base(config, g) != offset) {
      throw std::logic_error("scenario: GPU " + std::to_string(g) +
                             "'s output is not at GPU 0's offset, so GPUs are not rotations of "
                             "one another");
    }
  }
  add_rotation_band(config, plan, plan.gemm.gpus.front().buffers.c, plan.output_bytes, out_element,
                    "C", sign, tags_per_chunk);
}

OutputBand whole_output(const ScenarioPlan& plan) {
  OutputBand band{0, plan.output_bytes, {}};
  for (const GpuGemm& gpu : plan.gemm.gpus) band.address.push_back(gpu.buffers.c);
  return band;
}

HostCommand comm_queue_first(const GemmLaunch& gemm) {
  return {HostCommand::Kind::WriteRegister,
          gemm.dispatcher + dispatcher::queue_register(kCommQueue, dispatcher::kQueuePriority), 1,
          "communication queue first, as NCCL's high-priority streams"};
}

GemmLaunch row_band(const GemmLaunch& whole, const GemmShape& band, std::int64_t index,
                    std::uint64_t output, const std::string& label) {
  GemmLaunch launch = whole;
  launch.shape = band;
  launch.order = raster_order(whole.tiles, band);  // a kernel of its own: rasterised as one
  launch.a = whole.a + static_cast<std::uint64_t>(index) * bytes_of(whole.element, band.m * band.k);
  launch.outputs = chunk_outputs(output, band, whole.tiles, 1, whole.out_element);
  launch.label = label;
  return launch;
}

GemmLaunch chunk_part_band(const GemmLaunch& whole, const GemmShape& part_shape,
                           std::uint64_t part_bytes, int chunk, std::int64_t index_in_chunk,
                           std::int64_t parts) {
  const std::int64_t index = chunk * parts + index_in_chunk;
  return row_band(
      whole, part_shape, index,
      whole.outputs.front().base + static_cast<std::uint64_t>(index) * part_bytes,
      "chunk " + std::to_string(chunk) + " part " + std::to_string(index_in_chunk) + " gemm");
}

void require_whole_bands(const SystemConfig& config, const GemmShape& shape, const char* scenario,
                         const char* what) {
  const std::int64_t bands = config.gpus * config.workload.split;
  if (shape.m % (bands * config.gemm.tile_m) != 0) {
    throw std::invalid_argument(
        std::string("scenario ") + scenario +
        ": workload.split = " + std::to_string(config.workload.split) +
        ": M = " + std::to_string(shape.m) + " does not cut into " + std::to_string(bands) + " " +
        what + " of whole tile rows (tile_m " + std::to_string(config.gemm.tile_m) + ")");
  }
}

}  // namespace t3
