// T3's fused GEMM + reduce-scatter on the whole group: the tracker, the DMA engine and
// near-memory updates reduce the output while the GEMM runs. Golden against the reference.
#include <catch2/catch.hpp>

#include <cstring>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "config/config_io.h"
#include "harness/debug_access.h"
#include "harness/reference_gemm.h"
#include "models/system/simulation.h"
#include "protocol/mmio_map.h"
#include "protocol/tracker_registers.h"
#include "testbenches/small_system.h"
#include "workloads/gemm_plan.h"
#include "workloads/model_zoo.h"
#include "workloads/sublayer.h"
#include "workloads/t3_plan.h"

using namespace t3;

namespace {

// Adds the fp32 values of `band` into `sum`.
void accumulate(Bytes& sum, const Bytes& band) {
  for (std::size_t i = 0; i < sum.size(); i += 4) {
    float a, b;
    std::memcpy(&a, sum.data() + i, 4);
    std::memcpy(&b, band.data() + i, 4);
    a += b;
    std::memcpy(sum.data() + i, &a, 4);
  }
}

// Runs T3's fused GEMM-RS of `shape` on `gpus` GPUs of small_system (tiles 32 x 16 x 8) and checks
// every owned chunk against the reference sums, the tracker's fires and the DMA transfers. On a
// `topology` other than the ring the direct form runs (chunks straight to their owners).
void check_fused_reduce_scatter(int gpus, const GemmShape& shape, int tracker_entries = 256,
                                const char* ring = "descending", const char* topology = "ring") {
  SystemConfig config = small_system(gpus);
  apply_override(config, "tracker.entries=" + std::to_string(tracker_entries));
  apply_override(config, std::string("workload.ring=") + ring);
  apply_override(config, std::string("topology.kind=") + topology);
  validate(config);
  const bool direct = direct_collective(config);
  const T3GemmRsPlan plan =
      plan_t3_gemm_rs(config, shape, ElementType::Fp32, ElementType::Fp32, direct);
  REQUIRE(plan.direct == (std::string(topology) != "ring"));
  const TiledLayout layout(shape.m, shape.n, config.gemm.tile_m, config.gemm.tile_n);
  const std::int64_t band_rows = layout.grid_rows() / gpus;
  REQUIRE(plan.tiles_per_chunk == band_rows * layout.grid_cols());
  const std::int64_t group_cols = plan.tag_group;
  REQUIRE(plan.groups_per_chunk ==
          band_rows * ((layout.grid_cols() + group_cols - 1) / group_cols));
  // The bytes of the tile group whose first tag is `tag`: its tiles' widths, the last one narrower.
  const auto group_bytes = [&](std::uint32_t tag) {
    const std::int64_t first = tag % layout.grid_cols();
    std::int64_t width = 0;
    for (std::int64_t c = first; c < std::min(first + group_cols, layout.grid_cols()); ++c) {
      width += layout.tile_width(c);
    }
    return static_cast<std::uint64_t>(4 * config.gemm.tile_m * width);
  };
  const std::int64_t tile_m = config.gemm.tile_m;
  REQUIRE(plan.chunk_bytes == static_cast<std::uint64_t>(4 * band_rows * tile_m * shape.n));
  TpGroup group("group", config);
  group.load(plan.programs());
  sc_core::sc_start(sc_core::SC_ZERO_TIME);

  std::mt19937_64 random(11);
  std::vector<Bytes> partial;  // each GPU's own GEMM output, tile-contiguous
  for (int g = 0; g < gpus; ++g) {
    const Bytes a = integer_fp32(static_cast<std::size_t>(shape.m * shape.k), random);
    const Bytes b = integer_fp32(static_cast<std::size_t>(shape.k * shape.n), random);
    debug_write(group.gpu(g).router, plan.gemm.gpus[g].buffers.a, a);
    debug_write(group.gpu(g).router, plan.gemm.gpus[g].buffers.b, b);
    partial.push_back(
        reference_gemm(shape, config.gemm, ElementType::Fp32, ElementType::Fp32, a, b));
  }
  sc_core::sc_start();
  REQUIRE(group.host_error().empty());
  REQUIRE(group.hosts_done());
  group.check_drained();

  for (int g = 0; g < gpus; ++g) {
    // The owned chunk is a band of C at the same offset in every GPU's buffer.
    const std::int64_t owned = plan.ring.owned_chunk(g);
    const std::uint64_t offset = plan.chunk_bytes * static_cast<std::uint64_t>(owned);
    Bytes expected(plan.chunk_bytes, 0);
    for (int source = 0; source < gpus; ++source) {
      accumulate(expected, Bytes(partial[source].begin() + static_cast<std::ptrdiff_t>(offset),
                                 partial[source].begin() +
                                     static_cast<std::ptrdiff_t>(offset + plan.chunk_bytes)));
    }
    INFO("gpu " << g << " owns chunk " << owned);
    CHECK(debug_read(group.gpu(g).router, plan.gemm.gpus[g].buffers.c + offset, plan.chunk_bytes) ==
          expected);

    // Every tile of every chunk this GPU receives fired once (direct: of the owned chunk only);
    // on the ring every chunk but the owned one went on to the next GPU, and nothing was counted
    // outside a region.
    const Tracker& tracker = group.gpu(g).tracker;
    const std::int64_t counted_chunks = direct ? 1 : gpus - 1;
    CHECK(tracker.stats().fired ==
          static_cast<std::uint64_t>(counted_chunks * plan.groups_per_chunk));
    CHECK(tracker.stats().max_in_use <= static_cast<std::uint64_t>(tracker_entries));
    CHECK(tracker.stats().refused == 0);  // the plan sized its groups for the table
    CHECK(tracker.stats().errors == 0);
    CHECK(tracker.stats().overcount == 0);
    CHECK(tracker.pending() == 0);
    // Each fire counted exactly the local and the incoming update(s) of its tile group (direct:
    // one from every GPU), whose last tile is narrower in the last tile column.
    for (const TrackerFire& fire : tracker.fires()) {
      INFO("tag " << fire.tag);
      CHECK(fire.tag % layout.grid_cols() % group_cols == 0);  // a group's first tag
      CHECK(fire.bytes == group_bytes(fire.tag));
      CHECK(fire.counted == static_cast<std::uint64_t>(direct ? gpus : 2) * fire.bytes);
    }
    const auto& transfers = group.gpu(g).dma.transfers();
    CHECK(transfers.size() ==
          static_cast<std::size_t>(direct ? 0 : (gpus - 2) * plan.groups_per_chunk));
    const int next = plan.ring.next(g);
    for (const auto& transfer : transfers) {
      CHECK(group.address_map().decode(transfer.destination)->gpu == next);
      CHECK(transfer.bytes == group_bytes(transfer.tag));
    }
  }
}

}  // namespace

// 2 tile rows per chunk, 2 tile columns.
TEST_CASE("T3 fused GEMM-RS reduces exactly on 2 GPUs") {
  check_fused_reduce_scatter(2, {128, 32, 24});
}
TEST_CASE("T3 fused GEMM-RS reduces exactly on 4 GPUs") {
  check_fused_reduce_scatter(4, {256, 32, 24});
}
TEST_CASE("T3 fused GEMM-RS reduces exactly on 8 GPUs") {
  check_fused_reduce_scatter(8, {512, 32, 24});
}
// N = 40 is not a multiple of tile_n = 16: the last tile column is 8 wide (T-NLG's H = 4256 with
// 128-wide tiles is the same case), so its tiles complete at the tracker's EDGE_THRESHOLD.
TEST_CASE("T3 fused GEMM-RS reduces exactly on 2 GPUs with ragged edge tiles") {
  check_fused_reduce_scatter(2, {128, 40, 24});
}
TEST_CASE("T3 fused GEMM-RS reduces exactly on 4 GPUs with ragged edge tiles") {
  check_fused_reduce_scatter(4, {256, 40, 24});
}

TEST_CASE("T3 chunks travel the paper's ring GPU0 to GPU3 to GPU2 to GPU1") {
  // REFERENCES.md: with 4 GPUs, GPU0 stores stage 1 directly into GPU3, and so on round the ring.
  CHECK(t3_next_gpu(0, 4) == 3);
  CHECK(t3_next_gpu(3, 4) == 2);
  CHECK(t3_next_gpu(2, 4) == 1);
  CHECK(t3_next_gpu(1, 4) == 0);
  const SystemConfig config = small_system(4);
  const T3GemmRsPlan plan = plan_t3_gemm_rs(config, {256, 32, 24});
  const AddressMap map(config.address_map, 4, config.hbm.capacity_bytes);
  for (int g = 0; g < 4; ++g) {
    const GemmLaunch& launch = plan.gemm.gpus[g].launch;
    // Stage 1 is stored remotely into the next GPU, every other chunk locally.
    for (std::int64_t c = 0; c < 4; ++c) {
      const int owner = map.decode(launch.outputs[static_cast<std::size_t>(c)].base)->gpu;
      CHECK(owner == (c == launch.first_chunk ? t3_next_gpu(g, 4) : g));
      CHECK(launch.outputs[static_cast<std::size_t>(c)].op == OutputOp::Update);
    }
    // GPU g+1 computes its stage 1 on the chunk GPU g computes at stage 2, so the incoming
    // update and the local one meet at GPU g.
    CHECK(t3_first_chunk((g + 1) % 4, 4) == (launch.first_chunk + 1) % 4);
    CHECK(t3_owned_chunk(g, 4) == (launch.first_chunk + 3) % 4);
  }
}

// Direct (T3 section 7.1): every chunk straight to its owner, the tracker only counting.
TEST_CASE("T3 direct fused GEMM-RS reduces exactly on 4 GPUs fully connected") {
  check_fused_reduce_scatter(4, {256, 40, 24}, 256, "descending", "fully-connected");
}
TEST_CASE("T3 direct fused GEMM-RS reduces exactly on 8 GPUs behind a switch") {
  check_fused_reduce_scatter(8, {512, 32, 24}, 256, "ascending", "switch");
}
TEST_CASE("T3 direct sends every chunk but its own to the chunk's owner") {
  SystemConfig config = small_system(4);
  apply_override(config, "topology.kind=switch");
  const T3GemmRsPlan plan =
      plan_t3_gemm_rs(config, {256, 32, 24}, ElementType::Fp32, ElementType::Fp32, true);
  const AddressMap map(config.address_map, 4, config.hbm.capacity_bytes);
  for (int g = 0; g < 4; ++g) {
    const GemmLaunch& launch = plan.gemm.gpus[g].launch;
    for (std::int64_t c = 0; c < 4; ++c) {
      const int owner = map.decode(launch.outputs[static_cast<std::size_t>(c)].base)->gpu;
      CHECK(plan.ring.owned_chunk(owner) == c);
      CHECK(launch.outputs[static_cast<std::size_t>(c)].op == OutputOp::Update);
    }
    CHECK(launch.first_chunk == plan.ring.first_chunk(g));  // the owned chunk is computed last
  }
  // A ring topology cannot carry it.
  SystemConfig ring = small_system(4);
  apply_override(ring, "workload.collective=direct");
  CHECK_THROWS_WITH(validate(ring), Catch::Contains("workload.collective: direct needs"));
}

TEST_CASE("T3 on the ascending ring reduces exactly on 4 GPUs") {
  // GPU0 -> GPU1 -> GPU2 -> GPU3: the same schedule in ring ranks (rank = -g mod n).
  check_fused_reduce_scatter(4, {256, 40, 24}, 256, "ascending");
}

TEST_CASE("T3 ring ranks: descending is the paper's ring and ascending runs the other way") {
  const T3Ring paper{4, RingDirection::Descending};
  const T3Ring ascending{4, RingDirection::Ascending};
  for (int g = 0; g < 4; ++g) {
    INFO("gpu " << g);
    CHECK(paper.next(g) == (g + 3) % 4);
    CHECK(ascending.next(g) == (g + 1) % 4);
    for (const T3Ring& ring : {paper, ascending}) {
      CHECK(ring.gpu(ring.rank(g)) == g);
      // The GPU sending to this one computes, one stage earlier, the chunk this GPU computes at
      // stage 2, and this GPU owns the chunk it computes last.
      const int upstream = ring.gpu(ring.rank(g) + 1);
      CHECK(ring.next(upstream) == g);
      CHECK(ring.first_chunk(upstream) == (ring.first_chunk(g) + 1) % 4);
      CHECK(ring.owned_chunk(g) == (ring.first_chunk(g) + 3) % 4);
    }
  }
}

TEST_CASE("T3 shares tracker entries among a row's tiles when the table is small") {
  // 4 GPUs receive 3 chunks of 2 tile rows: 6 rows of 3 tiles (the last 8 wide). 12 entries hold
  // 2 groups per row, so pairs of tiles share an entry and the edge tile has one of its own.
  const T3GemmRsPlan plan = [] {
    SystemConfig config = small_system(4);
    apply_override(config, "tracker.entries=12");
    return plan_t3_gemm_rs(config, {256, 40, 24});
  }();
  CHECK(plan.tag_group == 2);
  CHECK(plan.groups_per_chunk == 2 * 2);
  check_fused_reduce_scatter(4, {256, 40, 24}, 12);
}

TEST_CASE("T3 plan rejects a tracker too small for one entry per received tile row") {
  SystemConfig config = small_system(4);
  apply_override(config, "tracker.entries=5");
  CHECK_THROWS_WITH(plan_t3_gemm_rs(config, {256, 40, 24}),
                    Catch::Contains("tracker.entries = 5 cannot hold the 6 tile rows"));
}

TEST_CASE("T3 plan rejects ragged M and unequal chunks but accepts a ragged N") {
  const SystemConfig config = small_system(4);
  CHECK_THROWS_WITH(plan_t3_gemm_rs(config, {250, 32, 24}),
                    Catch::Contains("M (250) must be a multiple of the tile height (32)"));
  CHECK_THROWS_WITH(plan_t3_gemm_rs(config, {96, 32, 24}), Catch::Contains("equal chunks"));
  // A ragged N programs each region's tile geometry: 3 tile columns, the last 8 wide.
  const T3GemmRsPlan plan = plan_t3_gemm_rs(config, {256, 40, 24});
  const std::uint64_t tracker_block = mmio_block(config, 0, mmio_map::kTracker);
  std::map<std::uint64_t, std::uint32_t> written;
  for (const HostCommand& command : plan.tracker_setup[0]) written[command.address] = command.value;
  const int region = static_cast<int>(t3_owned_chunk(0, 4));
  const auto reg = [&](std::uint64_t r) {
    return written.at(tracker_block + tracker::region_register(region, r));
  };
  CHECK(reg(tracker::kThreshold) == 2 * 32 * 16 * 2);  // fp16 by default
  CHECK(reg(tracker::kGridCols) == 3);
  CHECK(reg(tracker::kEdgeThreshold) == 2 * 32 * 8 * 2);
  CHECK(plan.tiles_per_chunk == 2 * 3);
  CHECK(plan.chunk_bytes == 2 * 32 * 40 * 2);
}

TEST_CASE("T3 plans every paper model at each of its TP degrees and every sublayer") {
  const std::vector<std::pair<std::string, std::vector<int>>> cases = {{"mega-gpt-2", {8, 16}},
                                                                       {"t-nlg", {8, 16}},
                                                                       {"gpt-3", {32}},
                                                                       {"palm", {32}},
                                                                       {"mt-nlg", {32}}};
  int planned = 0;
  for (const auto& [name, tps] : cases) {
    const ModelSpec spec = model(name);
    CHECK(spec.paper_tp == tps);  // the zoo agrees with the paper's TP degrees
    for (const int tp : tps) {
      SystemConfig config = load_system("t3-paper");
      apply_override(config, "gpus=" + std::to_string(tp));
      validate(config);
      for (const Sublayer sublayer : all_sublayers()) {
        const GemmShape shape = sublayer_gemm(spec, sublayer, tp, config.workload.tokens);
        INFO(name << " " << to_string(sublayer) << " tp " << tp << ": " << shape.m << " x "
                  << shape.n << " x " << shape.k);
        T3GemmRsPlan plan;
        REQUIRE_NOTHROW(plan = plan_t3_gemm_rs(config, shape));
        const TiledLayout layout(shape.m, shape.n, config.gemm.tile_m, config.gemm.tile_n);
        CHECK(plan.tiles_per_chunk * tp == layout.grid_rows() * layout.grid_cols());
        // Every group a GPU may have pending has an entry, with the finest grouping that does.
        const auto pending = [&](std::int64_t group) {
          return (tp - 1) * (layout.grid_rows() / tp) * ((layout.grid_cols() + group - 1) / group);
        };
        CHECK(pending(plan.tag_group) <= config.tracker.entries);
        if (plan.tag_group > 1) CHECK(pending(plan.tag_group - 1) > config.tracker.entries);
        CHECK(plan.chunk_bytes * static_cast<std::uint64_t>(tp) ==
              bytes_of(ElementType::Fp16, layout.elements()));
        ++planned;
      }
    }
  }
  CHECK(planned == 7 * 4);
}
