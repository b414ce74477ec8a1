// t3-switch: T3 with the reduction done by the switch (NVLink SHARP, topology.switch_reductions)
// instead of by near-memory updates. Every GPU computes C's chunks in the same order into its own
// C in one launch, its stores counted by the GPU's tracker. Once the tracker has seen chunk k
// complete, the host launches announce k on queue 1, whose SM channels announce it to every GPU
// (the NVLS kernel's arrival flags); the chunk's owner also launches its pull on queue 2, which
// waits for every announcement, loads the chunk through the switch (multimem.ld_reduce: the sum
// of every GPU's copy) and stores it in place, while the GEMM goes on. Then the ring all-gather.
// docs/t3.md, "T3 over the switch", has the design and why.
#include <stdexcept>

#include "config/config_io.h"
#include "protocol/dispatcher_registers.h"
#include "protocol/gemm_layout.h"
#include "protocol/mmio_map.h"
#include "protocol/to_size.h"
#include "protocol/tracker_registers.h"
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

// Each GPU's tracker counts its own stores of C, one count-only region per chunk with one tile per
// entry (TAG_GROUP 1): a chunk is complete here when every one of its tiles fired.
struct ChunkTracking {
  std::uint32_t tiles_per_chunk = 0;
  std::uint32_t tile_bytes = 0, edge_bytes = 0, grid_cols = 0;
  std::uint64_t chunk_bytes = 0;

  // `outputs`: the GEMM's output map on `gpu`, one entry per chunk.
  std::vector<HostCommand> setup(const SystemConfig& config,
                                 const std::vector<OutputChunk>& outputs, int gpu,
                                 ElementType out_element) const {
    std::vector<HostCommand> commands;
    const auto write = [&](std::uint64_t address, std::uint32_t value, const std::string& note) {
      commands.push_back({HostCommand::Kind::WriteRegister, address, value, note});
    };
    const std::uint64_t block = mmio_block(config, gpu, mmio_map::kTracker);
    write(block + tracker::kTagGroup, 1, "one tile per tracker entry");
    for (int p = 0; p < config.gpus; ++p) {
      const std::string note = "tracker region " + std::to_string(p);
      const auto reg = [&](std::uint64_t r) { return block + tracker::region_register(p, r); };
      const std::uint64_t base = outputs.at(to_size(p)).base;
      write(reg(tracker::kBaseLow), static_cast<std::uint32_t>(base), note + " base (low)");
      write(reg(tracker::kBaseLow) + 4, static_cast<std::uint32_t>(base >> 32),
            note + " base (high)");
      write(reg(tracker::kSizeLow), static_cast<std::uint32_t>(chunk_bytes), note + " size (low)");
      write(reg(tracker::kSizeLow) + 4, static_cast<std::uint32_t>(chunk_bytes >> 32),
            note + " size (high)");
      write(reg(tracker::kThreshold), tile_bytes, note + " threshold: the tile's own stores");
      write(reg(tracker::kGridCols), grid_cols, note + " tile columns");
      write(reg(tracker::kEdgeThreshold), edge_bytes, note + " last-column threshold");
      write(reg(tracker::kDmaOp), tracker::kOpNone, note + " count only");
      write(reg(tracker::kElement), element_code(out_element), note + " element");
      write(reg(tracker::kControl), tracker::kEnable, note + " enable");
    }
    return commands;
  }

  HostCommand wait_for(const SystemConfig& config, int gpu, int chunk) const {
    HostCommand poll{HostCommand::Kind::PollAtLeast,
                     mmio_block(config, gpu, mmio_map::kTracker) + tracker::kRegionDone +
                         4 * static_cast<std::uint64_t>(chunk),
                     tiles_per_chunk, "chunk " + std::to_string(chunk) + " stored here"};
    poll.interval_ns = dispatcher::kDefaultPollNs;
    return poll;
  }
};

ChunkTracking chunk_tracking(const SystemConfig& config, const ScenarioPlan& plan,
                             ElementType out_element) {
  const int n = static_cast<int>(config.gpus);
  const GemmShape& shape = plan.gemm.shape;
  const GemmConfig& tiles = config.gemm;
  if (n > tracker::kRegions || n > dispatcher::kMaxChunks) {
    throw std::invalid_argument("scenario t3-switch: " + std::to_string(n) +
                                " GPUs need more tracker regions or output chunks than there are");
  }
  const TiledLayout layout(shape.m, shape.n, tiles.tile_m, tiles.tile_n);
  ChunkTracking tracking;
  tracking.grid_cols = static_cast<std::uint32_t>(layout.grid_cols());
  tracking.tiles_per_chunk =
      static_cast<std::uint32_t>(shape.m / tiles.tile_m / n * layout.grid_cols());
  tracking.tile_bytes =
      static_cast<std::uint32_t>(bytes_of(out_element, tiles.tile_m * tiles.tile_n));
  tracking.edge_bytes = static_cast<std::uint32_t>(
      bytes_of(out_element, tiles.tile_m * layout.tile_width(layout.grid_cols() - 1)));
  tracking.chunk_bytes = plan.output_bytes / static_cast<std::uint64_t>(n);
  return tracking;
}

// The owner's pull runs here, beside the announcements on kCommQueue.
constexpr int kPullQueue = kCommQueue + 1;

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
  const ChunkTracking tracking = chunk_tracking(config, plan, out_element);
  for (int g = 0; g < n; ++g) {
    GemmLaunch gemm = plan.gemm.gpus[to_size(g)].launch;
    // Every GPU computes the chunks in the same order, so a chunk is complete everywhere at about
    // the same time; its stores are tagged and uncached, so the tracker counts them.
    gemm.order = WgOrder::ChunkStaggered;
    gemm.chunks = n;
    gemm.first_chunk = 0;
    gemm.outputs =
        chunk_outputs(plan.gemm.gpus[to_size(g)].buffers.c, plan.gemm.shape, config.gemm, n,
                      out_element, OutputOp::Store, dispatcher::kUncached | dispatcher::kTagged);
    gemm.label = "t3-switch gemm";
    gemm.wait = false;
    // Every GPU announces every chunk on queue 1, one launch after the other, so the flags it
    // stores into each peer's mailbox only grow.
    const auto announce_of = [&](int chunk) {
      CollectiveLaunch launch =
          ring_launch(announce.layout, announce.spec, g, CollectiveOp::ReduceScatter,
                      static_cast<std::uint32_t>(chunk + 1));
      launch.queue = kCommQueue;
      launch.wait = false;
      launch.label = "announce chunk " + std::to_string(chunk);
      return launch;
    };
    // The owner's pull runs on a queue of its own, so its announcements of later chunks do not
    // wait behind it and the pulls of different owners overlap. Its arrival flags stay in its own
    // mailbox (a peer flag stride of 0: the word of its own rank, which nobody waits on); its
    // announcement on queue 1 is what the peers see.
    const int owned = static_cast<int>(owner_chunk(g, n));
    CollectiveLaunch own_pull = ring_launch(pull.layout, pull.spec, g, CollectiveOp::ReduceScatter,
                                            static_cast<std::uint32_t>(owned + 1));
    own_pull.peer_flag_stride = 0;
    own_pull.queue = kPullQueue;
    own_pull.wait = false;
    own_pull.label = "switch pull of chunk " + std::to_string(owned);
    Program program;
    program.commands = tracking.setup(config, gemm.outputs, g, out_element);
    program.commands.push_back(comm_queue_first(gemm));
    program.commands.push_back(
        {HostCommand::Kind::WriteRegister,
         gemm.dispatcher + dispatcher::queue_register(kPullQueue, dispatcher::kQueuePriority), 1,
         "pull queue first, as the communication queue"});
    program.commands.push_back(barrier(kStartBarrier, "start"));
    append_gemm(program, gemm);
    std::string previous;
    for (int chunk = 0; chunk < n; ++chunk) {
      program.commands.push_back(tracking.wait_for(config, g, chunk));
      if (!previous.empty()) {
        program.commands.push_back(wait_kernel(gemm.dispatcher, kCommQueue, previous));
      }
      const CollectiveLaunch launch = announce_of(chunk);
      append_collective(program, launch);
      previous = launch.label;
      if (chunk == owned) append_collective(program, own_pull);
    }
    program.commands.push_back(wait_kernel(gemm.dispatcher, kCommQueue, previous));
    program.commands.push_back(wait_kernel(gemm.dispatcher, kPullQueue, own_pull.label));
    program.commands.push_back(wait_kernel(gemm.dispatcher, 0, gemm.label));
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
