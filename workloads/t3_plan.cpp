#include "workloads/t3_plan.h"

#include <cstdint>
#include <stdexcept>
#include <string>

#include "protocol/dispatcher_registers.h"
#include "protocol/mmio_map.h"
#include "protocol/ring.h"
#include "protocol/to_size.h"
#include "protocol/tracker_registers.h"

namespace t3 {

int T3Ring::rank(int gpu) const {
  const int position = direction == RingDirection::Descending ? gpu : -gpu;
  return wrap(position, gpus);
}
std::int64_t T3Ring::first_chunk(int gpu) const {
  return (rank(gpu) + 2) % gpus;
}
std::int64_t T3Ring::owned_chunk(int gpu) const {
  return (rank(gpu) + 1) % gpus;
}

int t3_next_gpu(int gpu, int gpus) {
  return T3Ring{gpus}.next(gpu);
}
std::int64_t t3_first_chunk(int gpu, int gpus) {
  return T3Ring{gpus}.first_chunk(gpu);
}
std::int64_t t3_owned_chunk(int gpu, int gpus) {
  return T3Ring{gpus}.owned_chunk(gpu);
}

namespace {

void require(bool ok, const std::string& what) {
  if (!ok) throw std::invalid_argument("t3 fused GEMM-RS: " + what);
}

void write(std::vector<HostCommand>& commands, std::uint64_t address, std::uint32_t value,
           const std::string& note) {
  commands.push_back({HostCommand::Kind::WriteRegister, address, value, note});
}

void write64(std::vector<HostCommand>& commands, std::uint64_t address, std::uint64_t value,
             const std::string& note) {
  write(commands, address, static_cast<std::uint32_t>(value), note + " (low)");
  write(commands, address + 4, static_cast<std::uint32_t>(value >> 32), note + " (high)");
}

// The fewest tile columns per tracker entry for which every group that can be pending at once
// has an entry: the groups of the chunks a GPU counts (ring: the n - 1 it receives; direct: its
// own).
std::int64_t tag_group(const SystemConfig& config, std::int64_t counted_chunks,
                       std::int64_t band_rows, std::int64_t grid_cols) {
  const std::int64_t rows = counted_chunks * band_rows;
  require(rows <= config.tracker.entries,
          "tracker.entries = " + std::to_string(config.tracker.entries) + " cannot hold the " +
              std::to_string(rows) + " tile rows a GPU receives, even one entry per row");
  const std::int64_t groups_per_row = config.tracker.entries / rows;
  return (grid_cols + groups_per_row - 1) / groups_per_row;
}

}  // namespace

T3GemmRsPlan plan_t3_gemm_rs(const SystemConfig& config, const GemmShape& shape,
                             ElementType element, ElementType out_element, bool direct) {
  const int n = static_cast<int>(config.gpus);
  const GemmConfig& tiles = config.gemm;
  require(n >= 2, "needs at least 2 GPUs, has " + std::to_string(n));
  require(shape.m % tiles.tile_m == 0,
          "M (" + std::to_string(shape.m) + ") must be a multiple of the tile height (" +
              std::to_string(tiles.tile_m) + "), so the chunks are equal bands of whole tile rows");
  const std::int64_t tile_rows = shape.m / tiles.tile_m;
  require(tile_rows % n == 0, std::to_string(tile_rows) + " tile rows do not split into " +
                                  std::to_string(n) +
                                  " equal chunks (the all-gather that follows needs them equal)");
  require(n <= tracker::kRegions && n <= dispatcher::kMaxChunks, "too many GPUs for the chunks");

  T3GemmRsPlan plan;
  plan.ring = T3Ring{n, config.workload.ring};
  plan.direct = direct;
  plan.gemm = plan_group_gemm(config, shape, element, out_element);
  // A ragged N leaves a last tile column of narrower tiles: the tracker counts those at
  // EDGE_THRESHOLD (tracker.h, tile geometry).
  const TiledLayout layout(shape.m, shape.n, tiles.tile_m, tiles.tile_n);
  const std::int64_t grid_cols = layout.grid_cols();
  const std::int64_t band_rows = tile_rows / n;
  plan.tiles_per_chunk = band_rows * grid_cols;
  plan.chunk_bytes = bytes_of(out_element, band_rows * tiles.tile_m * shape.n);
  const std::uint64_t tile_bytes = bytes_of(out_element, tiles.tile_m * tiles.tile_n);
  const std::uint64_t edge_bytes =
      bytes_of(out_element, tiles.tile_m * layout.tile_width(grid_cols - 1));
  require((direct ? n : 2) * tile_bytes <= UINT32_MAX && grid_cols <= UINT32_MAX,
          "a tile of " + std::to_string(tile_bytes) + " bytes or " + std::to_string(grid_cols) +
              " tile columns do not fit the tracker's 32-bit registers");
  plan.tag_group = tag_group(config, direct ? 1 : n - 1, band_rows, grid_cols);
  plan.groups_per_chunk = band_rows * ((grid_cols + plan.tag_group - 1) / plan.tag_group);
  const std::uint32_t flags = dispatcher::kUncached | dispatcher::kTagged;

  for (int g = 0; g < n; ++g) {
    const int next = plan.ring.next(g);
    GemmLaunch& launch = plan.gemm.gpus[g].launch;
    launch.order = WgOrder::ChunkStaggered;
    launch.chunks = n;
    launch.first_chunk = plan.ring.first_chunk(g);
    launch.label = "t3 gemm-rs";
    const auto local = chunk_outputs(plan.gemm.gpus[g].buffers.c, shape, tiles, n, out_element,
                                     OutputOp::Update, flags);
    const auto remote = chunk_outputs(plan.gemm.gpus[next].buffers.c, shape, tiles, n, out_element,
                                      OutputOp::Update, flags);
    launch.outputs = local;
    launch.outputs[to_size(launch.first_chunk)] = remote[to_size(launch.first_chunk)];
    const std::int64_t owned_chunk = plan.ring.owned_chunk(g);
    if (direct) {  // every chunk but its own straight to its owner
      for (int p = 0; p < n; ++p) {
        if (p == owned_chunk) continue;
        launch.outputs[to_size(p)] =
            chunk_outputs(plan.gemm.gpus[plan.ring.owner(p)].buffers.c, shape, tiles, n,
                          out_element, OutputOp::Update, flags)[to_size(p)];
      }
    }

    // A region per chunk this GPU receives: the local update and the incoming one(s) complete a
    // tile (direct: the owned chunk only, from every GPU).
    const std::uint32_t contributions = direct ? static_cast<std::uint32_t>(n) : 2;
    std::vector<HostCommand> setup;
    const std::uint64_t block = mmio_block(config, g, mmio_map::kTracker);
    write(setup, block + tracker::kTagGroup, static_cast<std::uint32_t>(plan.tag_group),
          "tile columns per tracker entry");
    for (int p = 0; p < n; ++p) {
      const bool owned = p == owned_chunk;
      if (p == launch.first_chunk || (direct && !owned)) continue;
      const std::string note = "tracker region " + std::to_string(p);
      const auto reg = [&](std::uint64_t r) { return block + tracker::region_register(p, r); };
      write64(setup, reg(tracker::kBaseLow), local[to_size(p)].base, note + " base");
      write64(setup, reg(tracker::kSizeLow), plan.chunk_bytes, note + " size");
      write(setup, reg(tracker::kThreshold), static_cast<std::uint32_t>(contributions * tile_bytes),
            note + " threshold: local + incoming update(s)");
      write(setup, reg(tracker::kGridCols), static_cast<std::uint32_t>(grid_cols),
            note + " tile columns");
      write(setup, reg(tracker::kEdgeThreshold),
            static_cast<std::uint32_t>(contributions * edge_bytes),
            note + " last-column threshold: local + incoming update(s)");
      write64(setup, reg(tracker::kDmaDstLow), owned ? 0 : remote[to_size(p)].base,
              note + " destination");
      write(setup, reg(tracker::kDmaOp), owned ? tracker::kOpNone : tracker::kOpUpdate,
            note + (owned ? " count only (owned chunk)" : " update the next GPU"));
      write(setup, reg(tracker::kElement), element_code(out_element), note + " element");
      write(setup, reg(tracker::kControl), tracker::kEnable, note + " enable");
    }
    plan.tracker_setup.push_back(std::move(setup));
  }
  return plan;
}

std::vector<Program> T3GemmRsPlan::programs() const {
  std::vector<Program> list;
  const int n = static_cast<int>(gemm.gpus.size());
  for (int g = 0; g < n; ++g) {
    Program program;
    program.commands = tracker_setup[to_size(g)];
    append_gemm(program, gemm.gpus[to_size(g)].launch);
    // The owned chunk is complete when every one of its tile groups fired in the tracker.
    const std::uint64_t tracker_block =
        gemm.gpus[to_size(g)].launch.dispatcher - mmio_map::kDispatcher + mmio_map::kTracker;
    HostCommand wait{
        HostCommand::Kind::PollRegister,
        tracker_block + tracker::kRegionDone + 4 * static_cast<std::uint64_t>(ring.owned_chunk(g)),
        static_cast<std::uint32_t>(groups_per_chunk), "wait for the owned chunk"};
    program.commands.push_back(wait);
    list.push_back(std::move(program));
  }
  return list;
}

}  // namespace t3
