// Ring collectives on the DMA engines with near-memory updates (workloads/dma_collective.h): the
// schedule and program helpers, functional goldens of reduce-scatter, all-gather and all-reduce
// for TP 2, 4 and 8 on a whole TP group, bad specs, and the time of a large reduce-scatter
// against the first-principles ring formula. Each case builds at most one design.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <systemc>

#include "config/config_io.h"
#include "harness/debug_access.h"
#include "models/dma/dma_engine.h"
#include "models/system/simulation.h"
#include "models/system/tp_group.h"
#include "protocol/mmio_map.h"
#include "protocol/tracker_registers.h"
#include "testbenches/tests/ring_testing.h"
#include "tlm_interconnect/element.h"
#include "workloads/dma_collective.h"
#include "workloads/gemm_plan.h"
#include "workloads/t3_plan.h"

using namespace t3;
using Catch::Contains;

namespace {

using namespace t3::ring_testing;

struct GoldenCase {
  int gpus = 4;
  Check check = Check::ReduceScatter;
  ElementType element = ElementType::Fp32;
  int slices = 0;
  std::int64_t elements = 0;  // of the whole buffer; 0: chunks of 12000
};

// The data every rank must hold at the end, element i of the whole buffer: chunk `chunk`'s
// element `offset`.
float expected_value(const GoldenCase& gc, int g, std::int64_t i, int chunk, std::int64_t offset) {
  const int n = gc.gpus;
  float sum = 0;
  for (int h = 0; h < n; ++h) sum += input(h, i);
  switch (gc.check) {
    case Check::ReduceScatter: {
      // The partial of the ranks chunk c passed through, from its first rank c - 2 down to g, each
      // added once (the owned chunk c = g + 1: all n of them).
      float partial = 0;
      for (int h = (chunk - 2 + 2 * n) % n;; h = t3_next_gpu(h, n)) {
        partial += input(h, i);
        if (h == g) break;
      }
      return partial;
    }
    case Check::AllGather:
      return gathered(chunk, offset);
    case Check::AllReduce:
      break;
  }
  return sum;
}

// Functional golden run: buffers preloaded through the routers, the programs run to completion,
// every rank's buffer compared with the reference, and the tracker, DMA and link traffic checked
// against the schedule: every slice forwarded exactly once.
void golden(const GoldenCase& gc) {
  const int n = gc.gpus;
  // 1 KiB DMA pieces: every slice of the automatic 16 is several pieces (3000 bytes in fp32, 1500
  // in fp16), so the tracker adds up pieces to fire.
  const SystemConfig config = group_config(n, true, {"dma.chunk_bytes=1024"});
  TpGroup group("group", config);
  DmaCollectiveSpec spec;
  spec.ranks = n;
  spec.element = gc.element;
  spec.slices = gc.slices;
  const std::int64_t total = gc.elements > 0 ? gc.elements : n * 12000;
  const std::int64_t eb = static_cast<std::int64_t>(bytes_of(gc.element, 1));
  spec.bytes = static_cast<std::uint64_t>(total * eb);
  const std::vector<std::uint64_t> buffers = dma_ring_buffers(config, 8192);
  const std::vector<CollectiveOp> ops = ops_of(gc.check);
  const int slices = dma_slices(spec);
  group.load(dma_collective_programs(config, buffers, spec, ops));
  sc_core::sc_start(sc_core::SC_ZERO_TIME);  // sockets bound: preload through the routers

  const auto type = gc.element;
  // Element i's chunk and its place in it (chunks may differ by an element, or be empty).
  std::vector<int> chunk_of(static_cast<std::size_t>(total));
  for (int c = 0; c < n; ++c) {
    const ElementRange range = chunk_range(total, n, c);
    for (std::int64_t i = range.first; i < range.end; ++i)
      chunk_of[static_cast<std::size_t>(i)] = c;
  }
  const auto chunk_at = [&](std::int64_t i) { return chunk_of[static_cast<std::size_t>(i)]; };
  const auto in_chunk = [&](std::int64_t i) {
    return i - chunk_range(total, n, chunk_at(i)).first;
  };
  for (int g = 0; g < n; ++g) {
    Bytes bytes(static_cast<std::size_t>(total * eb));
    for (std::int64_t i = 0; i < total; ++i) {
      float value = input(g, i);
      if (gc.check == Check::AllGather) {
        const int chunk = chunk_at(i);
        value = chunk == owner_chunk(g, n) ? gathered(chunk, in_chunk(i)) : kUntouched;
      }
      store_element(bytes.data(), static_cast<std::size_t>(i), type, value);
    }
    debug_write(group.gpu(g).router, buffers[g], bytes);
  }
  sc_core::sc_start();
  REQUIRE(group.host_error().empty());
  REQUIRE(group.hosts_done());
  group.check_drained();

  for (int g = 0; g < n; ++g) {
    INFO("GPU " << g << " of " << n);
    const Bytes bytes =
        debug_read(group.gpu(g).router, buffers[g], static_cast<std::size_t>(total * eb));
    std::int64_t wrong = 0, first_wrong = -1;
    for (std::int64_t i = 0; i < total; ++i) {
      const float expected = expected_value(gc, g, i, chunk_at(i), in_chunk(i));
      if (load_element(bytes.data(), static_cast<std::size_t>(i), type) != expected) {
        if (wrong++ == 0) first_wrong = i;
      }
    }
    INFO("first wrong element " << first_wrong);
    CHECK(wrong == 0);
  }

  // Every slice fired once per op in each region of each rank, with exactly its bytes; forwards
  // went to the next rank, count-only fires stayed; nothing outside a region, no overcount.
  // Empty chunks have no slices: nothing sends, forwards or counts them.
  const auto slices_of = [&](int position) {
    return static_cast<std::uint64_t>(dma_chunk(spec, position).slices);
  };
  const auto count = [&](CollectiveOp op) {
    return static_cast<std::uint64_t>(std::count(ops.begin(), ops.end(), op));
  };
  std::uint64_t link_payload_expected = 0;
  for (int g = 0; g < n; ++g) {
    INFO("GPU " << g);
    // Per op: the slices of the chunks it receives, of those it forwards (all but the last), of
    // the one it starts by doorbell; the bytes it sends (every chunk but the one that ends here,
    // the owned one in a reduce-scatter) and receives as updates (every chunk but its first).
    std::uint64_t received = 0, forwarded = 0, started = 0;
    for (CollectiveOp op : ops) {
      const auto positions = dma_received_chunks(op, g, n);
      for (std::size_t k = 0; k < positions.size(); ++k) {
        received += slices_of(positions[k]);
        if (k + 1 < positions.size()) forwarded += slices_of(positions[k]);
      }
      const int first = op == CollectiveOp::ReduceScatter ? static_cast<int>(t3_first_chunk(g, n))
                                                          : static_cast<int>(t3_owned_chunk(g, n));
      started += slices_of(first);
    }
    const std::uint64_t rs_sent =
        spec.bytes - spec.chunk_bytes(static_cast<int>(t3_owned_chunk(g, n)));
    const std::uint64_t ag_sent = spec.bytes - spec.chunk_bytes(g);
    const std::uint64_t rs_received =
        spec.bytes - spec.chunk_bytes(static_cast<int>(t3_first_chunk(g, n)));
    const Tracker& tracker = group.gpu(g).tracker;
    CHECK(tracker.stats().errors == 0);
    CHECK(tracker.stats().overcount == 0);
    CHECK(tracker.errors().empty());
    CHECK(tracker.pending() == 0);
    CHECK(tracker.stats().fired == received);
    std::map<std::pair<int, std::uint32_t>, int> fired;
    for (const TrackerFire& fire : tracker.fires()) {
      ++fired[{fire.region, fire.tag}];
      const int position = fire.region % n;
      const DmaChunk chunk = dma_chunk(spec, position);
      const std::uint32_t first_tag = dma_slice_tag(position, 0, slices);
      CHECK(fire.tag >= first_tag);
      CHECK(fire.tag < first_tag + static_cast<std::uint32_t>(slices));
      const int j = static_cast<int>(fire.tag - first_tag);
      CHECK(fire.counted == chunk.slice_bytes(j));
      CHECK(fire.bytes == chunk.slice_bytes(j));
      CHECK(fire.source == buffers[g] + chunk.slice_offset(j));
      const bool reduce = fire.region < n;
      const int last = reduce ? static_cast<int>(t3_owned_chunk(g, n)) : g;
      const std::uint32_t forward = reduce ? tracker::kOpUpdate : tracker::kOpStore;
      CHECK(fire.op == (position == last ? tracker::kOpNone : forward));
    }
    CHECK(fired.size() == received);
    for (const auto& entry : fired) CHECK(entry.second == 1);

    const DmaEngine& dma = group.gpu(g).dma;
    const DmaStats& stats = dma.stats();
    CHECK(stats.doorbells == started);
    CHECK(stats.triggered == forwarded);
    CHECK(stats.transfers == stats.doorbells + stats.triggered);
    CHECK(stats.errors == 0);
    CHECK(stats.rejected == 0);
    CHECK(dma.errors().empty());
    CHECK(stats.bytes_updated == count(CollectiveOp::ReduceScatter) * rs_sent);
    CHECK(stats.bytes_written == count(CollectiveOp::AllGather) * ag_sent);
    const int next = t3_next_gpu(g, n);
    for (const DmaTransfer& transfer : dma.transfers()) {
      CHECK(group.address_map().decode(transfer.destination)->gpu == next);
      const int position =
          static_cast<int>(transfer.tag) / slices;  // tag = position x slices + slice
      CHECK(transfer.bytes ==
            dma_chunk(spec, position).slice_bytes(static_cast<int>(transfer.tag) % slices));
      CHECK(!transfer.error);
    }
    // Near-memory updates: the reduce-scatter's n - 1 incoming chunks, applied in this HBM.
    const HbmStats& memory = group.gpu(g).memory.stats();
    const int comm = static_cast<int>(TrafficClass::Communication);
    CHECK(memory.bytes[static_cast<int>(Op::Update)][comm] ==
          count(CollectiveOp::ReduceScatter) * rs_received);
    link_payload_expected +=
        count(CollectiveOp::ReduceScatter) * rs_sent + count(CollectiveOp::AllGather) * ag_sent;
  }
  // The links carried the ring data and nothing else (no flags): n ranks x (n - 1) chunks per op.
  std::uint64_t link_payload = 0;
  for (int l = 0; l < group.links(); ++l) {
    link_payload += group.link(l).stats(0).payload_bytes + group.link(l).stats(1).payload_bytes;
  }
  CHECK(link_payload == link_payload_expected);
}

}  // namespace

// ---- Plain logic -------------------------------------------------------------------------------

TEST_CASE("dma collective schedule: chunks travel T3's ring and end at owner_chunk's owner",
          "[dma_collective]") {
  for (int n = 2; n <= 8; ++n) {
    INFO(n << " ranks");
    // Reduce-scatter: chunk c starts at the rank whose first chunk it is and is received by every
    // other rank, each once, along g -> g - 1; the last receiver is its owner.
    for (int c = 0; c < n; ++c) {
      int at = -1;
      for (int g = 0; g < n; ++g) {
        if (t3_first_chunk(g, n) == c) at = g;
      }
      REQUIRE(at >= 0);
      std::set<int> visited = {at};
      for (int hop = 0; hop < n - 1; ++hop) {
        const int to = t3_next_gpu(at, n);
        const auto received = dma_received_chunks(CollectiveOp::ReduceScatter, to, n);
        CHECK(received[static_cast<std::size_t>(hop)] == c);  // in step order
        visited.insert(to);
        at = to;
      }
      CHECK(visited.size() == static_cast<std::size_t>(n));
      CHECK(owner_chunk(at, n) == c);
      CHECK(t3_owned_chunk(at, n) == c);
    }
    for (int g = 0; g < n; ++g) {
      const auto rs = dma_received_chunks(CollectiveOp::ReduceScatter, g, n);
      CHECK(rs.back() == owner_chunk(g, n));
      CHECK(std::count(rs.begin(), rs.end(), t3_first_chunk(g, n)) == 0);
      // All-gather: every chunk but the owned one, ending with position g, just before its owner
      // g - 1 in the ring.
      const auto ag = dma_received_chunks(CollectiveOp::AllGather, g, n);
      CHECK(ag.size() == static_cast<std::size_t>(n - 1));
      CHECK(std::set<int>(ag.begin(), ag.end()).size() == ag.size());
      CHECK(std::count(ag.begin(), ag.end(), owner_chunk(g, n)) == 0);
      CHECK(ag.back() == g);
      CHECK(owner_chunk(t3_next_gpu(g, n), n) == g);
      // What g receives at step k + 1 is what its sender received at step k.
      const auto upstream = dma_received_chunks(CollectiveOp::AllGather, (g + 1) % n, n);
      for (int k = 0; k + 1 < n - 1; ++k) CHECK(ag[k + 1] == upstream[k]);
      CHECK(ag[0] == owner_chunk((g + 1) % n, n));
    }
  }
}

TEST_CASE("dma collective slices, tags and regions", "[dma_collective]") {
  DmaCollectiveSpec spec;
  spec.ranks = 4;
  spec.bytes = 4 * 4 * 12000;  // fp32 chunks of 12000 elements: 16 divides them
  CHECK(dma_slices(spec) == 16);
  CHECK(dma_chunk(spec, 0).slice == 3000);
  CHECK(dma_chunk(spec, 0).even());
  spec.bytes = 4 * 4 * 10243;  // a prime number of elements: one slice
  CHECK(dma_slices(spec) == 1);
  spec.bytes = 4 * 4 * 3 * 5 * 7;  // 105 elements: 15 slices of 7
  CHECK(dma_slices(spec) == 15);
  spec.slices = 5;
  CHECK(dma_slices(spec) == 5);
  CHECK(dma_chunk(spec, 0).slice == 84);
  spec.bytes = 4 * 2 * 24;  // fp16: 24 elements per chunk, 12 slices of 2
  spec.slices = 0;
  spec.element = ElementType::Fp16;
  CHECK(dma_slices(spec) == 12);
  CHECK(dma_chunk(spec, 0).slice == 4);
  // Uneven chunks (4099 fp32 elements: 1024, 1025, 1025, 1025): S divides the smaller chunk, and
  // a larger chunk's last slice takes the extra element.
  spec.element = ElementType::Fp32;
  spec.bytes = 4 * 4099;
  CHECK(dma_slices(spec) == 16);
  const DmaChunk small = dma_chunk(spec, 0), large = dma_chunk(spec, 3);
  CHECK(small.offset == 0);
  CHECK(small.bytes == 4096);
  CHECK(small.even());
  CHECK(large.offset == 4 * 3074);
  CHECK(large.bytes == 4100);
  CHECK(large.slices == 16);
  CHECK(large.slice == 256);
  CHECK(large.last == 260);
  CHECK(large.slice_offset(15) == 4 * 3074 + 15 * 256);
  CHECK(large.slice_bytes(15) == 260);
  CHECK(large.slice_bytes(14) == 256);
  spec.slices = 3;  // 341, 341, 342 elements of a 1024-element chunk
  CHECK(dma_chunk(spec, 0).slice == 4 * 341);
  CHECK(dma_chunk(spec, 0).last == 4 * 342);
  // Fewer elements than ranks: empty chunks have no slices; the others one element each.
  spec.slices = 0;
  spec.bytes = 4 * 2;
  CHECK(dma_slices(spec) == 1);
  CHECK(dma_chunk(spec, 0).slices == 0);
  CHECK(dma_chunk(spec, 0).bytes == 0);
  CHECK(dma_chunk(spec, 1).slices == 1);
  CHECK(dma_chunk(spec, 1).slice == 4);
  CHECK(dma_slice_tag(3, 5, 16) == 53);
  CHECK(dma_reduce_scatter_region(3) == 3);
  CHECK(dma_all_gather_region(3, 8) == 11);
  CHECK(kMaxDmaSlices == dma::kDescriptors);
  CHECK(2 * kMaxDmaRanks == tracker::kRegions);
}

TEST_CASE("dma collective programs address the model's tracker and DMA registers",
          "[dma_collective]") {
  const SystemConfig config = group_config(4, false);
  DmaCollectiveSpec spec;
  spec.ranks = 4;
  spec.bytes = 4 * 4 * 1024;
  spec.slices = 4;
  spec.barrier_base = 0x200;
  const auto buffers = dma_ring_buffers(config);
  const auto programs = dma_collective_programs(
      config, buffers, spec, {CollectiveOp::ReduceScatter, CollectiveOp::AllGather});
  REQUIRE(programs.size() == 4);
  const Program& p = programs[1];
  const std::uint64_t tracker_block = mmio_block(config, 1, mmio_map::kTracker);
  const std::uint64_t dma_block = mmio_block(config, 1, mmio_map::kDma);
  using Kind = HostCommand::Kind;
  // The tracker RESET comes first.
  CHECK(p.commands.front().kind == Kind::WriteRegister);
  CHECK(p.commands.front().address == tracker_block + tracker::kReset);
  // One barrier per op, with the ids from barrier_base.
  std::vector<std::uint32_t> barriers;
  std::map<std::uint64_t, std::uint32_t> last_write;
  std::vector<std::pair<std::uint64_t, std::uint32_t>> polls;
  int doorbells = 0;
  for (const HostCommand& c : p.commands) {
    if (c.kind == Kind::Barrier) barriers.push_back(c.value);
    if (c.kind == Kind::PollRegister) polls.emplace_back(c.address, c.value);
    if (c.kind != Kind::WriteRegister) continue;
    last_write[c.address] = c.value;
    if (c.address >= dma_block + dma::descriptor_register(0, dma::kDoorbell) &&
        c.address < dma_block + dma::kBlockBytes &&
        (c.address - dma_block - dma::kDescriptorBase) % dma::kDescriptorStride == dma::kDoorbell) {
      ++doorbells;
      CHECK(c.value == 1);
    }
  }
  CHECK(barriers == std::vector<std::uint32_t>{0x200, 0x201});
  CHECK(doorbells == 2 * 4);
  // The last op (all-gather) programmed descriptor 3: chunk owned_chunk(1) = 2, slice 3, a store.
  const std::uint64_t slice = 1024;
  const std::uint64_t offset = 2 * 4 * 1024 + 3 * slice;
  const auto desc = [&](std::uint64_t reg) { return dma_block + dma::descriptor_register(3, reg); };
  CHECK(last_write[desc(dma::kSrcLow)] == static_cast<std::uint32_t>(buffers[1] + offset));
  CHECK(last_write[desc(dma::kSrcHigh)] == static_cast<std::uint32_t>((buffers[1] + offset) >> 32));
  CHECK(last_write[desc(dma::kDstLow)] == static_cast<std::uint32_t>(buffers[0] + offset));
  CHECK(last_write[desc(dma::kDstHigh)] == static_cast<std::uint32_t>((buffers[0] + offset) >> 32));
  CHECK(last_write[desc(dma::kSizeLow)] == slice);
  CHECK(last_write[desc(dma::kOp)] == dma::kOpStore);
  CHECK(last_write[desc(dma::kElement)] == element_code(ElementType::Fp32));
  CHECK(last_write[desc(dma::kTag)] == dma_slice_tag(2, 3, 4));
  // Every region the program enabled it disabled again; the all-gather's count-only region is
  // position 1 (region 5).
  for (int r = 0; r < tracker::kRegions; ++r) {
    const auto control = tracker_block + tracker::region_register(r, tracker::kControl);
    if (last_write.count(control)) CHECK(last_write[control] == 0);
  }
  CHECK(last_write[tracker_block + tracker::region_register(5, tracker::kDmaOp)] ==
        tracker::kOpNone);
  CHECK(last_write[tracker_block + tracker::region_register(4, tracker::kDmaOp)] ==
        tracker::kOpStore);
  CHECK(last_write.count(tracker_block + tracker::region_register(6, tracker::kControl)) == 0);
  // Polls: per op the three regions in step order (S fires each), then the DMA STATUS.
  const std::vector<std::pair<std::uint64_t, std::uint32_t>> expected = {
      {tracker_block + tracker::kRegionDone + 4 * 0, 4},
      {tracker_block + tracker::kRegionDone + 4 * 1, 4},
      {tracker_block + tracker::kRegionDone + 4 * 2, 4},
      {dma_block + dma::kStatus, 0},
      {tracker_block + tracker::kRegionDone + 4 * 7, 4},
      {tracker_block + tracker::kRegionDone + 4 * 4, 4},
      {tracker_block + tracker::kRegionDone + 4 * 5, 4},
      {dma_block + dma::kStatus, 0}};
  CHECK(polls == expected);
}

TEST_CASE("dma collective programs of uneven chunks use the edge threshold and skip empty chunks",
          "[dma_collective]") {
  const SystemConfig config = group_config(4, false);
  const auto buffers = dma_ring_buffers(config);
  const std::uint64_t tracker_block = mmio_block(config, 1, mmio_map::kTracker);
  const std::uint64_t dma_block = mmio_block(config, 1, mmio_map::kDma);
  const auto region = [&](int r, std::uint64_t reg) {
    return tracker_block + tracker::region_register(r, reg);
  };
  // Writes of rank 1's program, last value per address, and whether TAG_GROUP was written.
  const auto writes_of = [&](const DmaCollectiveSpec& spec) {
    const auto programs =
        dma_collective_programs(config, buffers, spec, {CollectiveOp::ReduceScatter});
    std::map<std::uint64_t, std::uint32_t> last;
    std::vector<std::uint64_t> polls;
    for (const HostCommand& c : programs[1].commands) {
      if (c.kind == HostCommand::Kind::WriteRegister) last[c.address] = c.value;
      if (c.kind == HostCommand::Kind::PollRegister) polls.push_back(c.address);
    }
    return std::make_pair(last, polls);
  };
  // Even chunks: the programming of every earlier run, GRID_COLS 0 and no TAG_GROUP write.
  DmaCollectiveSpec spec;
  spec.ranks = 4;
  spec.bytes = 4 * 4096;
  auto [even, even_polls] = writes_of(spec);
  CHECK(even.count(tracker_block + tracker::kTagGroup) == 0);
  CHECK(even.count(region(0, tracker::kEdgeThreshold)) == 0);
  CHECK(even.at(region(0, tracker::kGridCols)) == 0);
  // 4099 elements: chunks 1024 (position 0) and 1025 (1..3), 16 slices of 64 elements, the larger
  // chunks' last one 65. Rank 1 receives positions 0, 1, 2 (its owned chunk) in a reduce-scatter.
  spec.bytes = 4 * 4099;
  auto [uneven, uneven_polls] = writes_of(spec);
  CHECK(uneven.at(tracker_block + tracker::kTagGroup) == 1);
  CHECK(uneven.at(region(0, tracker::kGridCols)) == 0);  // position 0 splits evenly
  CHECK(uneven.at(region(0, tracker::kThreshold)) == 256);
  for (int p : {1, 2}) {
    INFO("position " << p);
    CHECK(uneven.at(region(p, tracker::kGridCols)) == 16);
    CHECK(uneven.at(region(p, tracker::kThreshold)) == 256);
    CHECK(uneven.at(region(p, tracker::kEdgeThreshold)) == 260);
    CHECK(uneven.at(region(p, tracker::kSizeLow)) == 4100);
  }
  // Its first chunk is position 3 (= 1 + 2): slice 15 starts 15 x 256 bytes into it and holds 260.
  const auto desc = [&](int j, std::uint64_t reg) {
    return dma_block + dma::descriptor_register(j, reg);
  };
  CHECK(uneven.at(desc(15, dma::kSrcLow)) ==
        static_cast<std::uint32_t>(buffers[1] + 4 * 3074 + 15 * 256));
  CHECK(uneven.at(desc(15, dma::kSizeLow)) == 260);
  CHECK(uneven.at(desc(14, dma::kSizeLow)) == 256);
  CHECK(uneven_polls == even_polls);
  // 2 elements: positions 1 and 3 hold one each, 0 and 2 are empty. Rank 1 starts position 3 (one
  // doorbell) and receives 0, 1, 2, of which only 1 is armed and waited for.
  spec.bytes = 4 * 2;
  auto [tiny, tiny_polls] = writes_of(spec);
  CHECK(tiny.count(region(0, tracker::kControl)) == 0);
  CHECK(tiny.count(region(2, tracker::kControl)) == 0);
  CHECK(tiny.at(region(1, tracker::kThreshold)) == 4);
  CHECK(tiny.at(region(1, tracker::kGridCols)) == 0);
  CHECK(tiny.at(desc(0, dma::kSizeLow)) == 4);
  CHECK(tiny.count(desc(1, dma::kSizeLow)) == 0);
  CHECK(tiny_polls == std::vector<std::uint64_t>{tracker_block + tracker::kRegionDone + 4 * 1,
                                                 dma_block + dma::kStatus});
}

TEST_CASE("dma collective bad specs throw naming the field", "[dma_collective]") {
  const SystemConfig config = group_config(4, false);
  DmaCollectiveSpec good;
  good.ranks = 4;
  good.bytes = 4 * 4 * 1024;
  CHECK_NOTHROW(check_dma_spec(good));
  const auto buffers = dma_ring_buffers(config);
  const std::vector<CollectiveOp> rs = {CollectiveOp::ReduceScatter};
  CHECK_NOTHROW(dma_collective_programs(config, buffers, good, rs));

  DmaCollectiveSpec bad = good;
  bad.ranks = 1;
  CHECK_THROWS_WITH(check_dma_spec(bad), Contains("ranks = 1"));
  bad.ranks = 33;
  CHECK_THROWS_WITH(check_dma_spec(bad), Contains("ranks = 33"));
  bad = good;
  bad.bytes = 0;
  CHECK_THROWS_WITH(check_dma_spec(bad), Contains("bytes = 0"));
  bad.bytes = 4 * 4 * 1024 + 2;
  CHECK_THROWS_WITH(check_dma_spec(bad),
                    Contains("bytes = 16386 must be a positive multiple of the 4-byte fp32"));
  bad.bytes = 4 * 4 * 1024 + 4;  // uneven chunks of whole elements are fine
  CHECK_NOTHROW(check_dma_spec(bad));
  bad.element = ElementType::Fp16;
  bad.bytes = 2 * 3;  // three fp16 elements: one chunk empty
  CHECK_NOTHROW(check_dma_spec(bad));
  bad = good;
  bad.slices = 17;
  CHECK_THROWS_WITH(check_dma_spec(bad), Contains("slices = 17"));
  bad.slices = -1;
  CHECK_THROWS_WITH(check_dma_spec(bad), Contains("slices = -1"));
  bad.slices = 3;  // 341, 341 and 342 elements of the 1024
  CHECK_NOTHROW(check_dma_spec(bad));
  bad.bytes = 4 * (4 * 2 + 1);  // chunks of 2, 2, 2 and 3 elements
  CHECK_THROWS_WITH(check_dma_spec(bad),
                    Contains("slices = 3 is more than the 2 elements of the smallest non-empty"));
  bad.bytes = 4 * 3;  // chunks of 0, 1, 1 and 1 element: one slice at most
  bad.slices = 2;
  CHECK_THROWS_WITH(check_dma_spec(bad), Contains("slices = 2 is more than the 1 elements"));
  bad.slices = 1;
  CHECK_NOTHROW(check_dma_spec(bad));
  bad = good;
  bad.ranks = 2;
  bad.bytes = 2ull * 16 * 5000000000ull;  // 16 slices of 5 GB per chunk: over 2^32 bytes each
  CHECK_THROWS_WITH(check_dma_spec(bad), Contains("THRESHOLD"));

  // What only the program builder can check.
  bad = good;
  bad.ranks = 2;
  CHECK_THROWS_WITH(dma_collective_programs(config, buffers, bad, rs), Contains("4 GPUs"));
  CHECK_THROWS_WITH(dma_collective_programs(config, {buffers[0]}, good, rs), Contains("buffers"));
  std::vector<std::uint64_t> swapped = buffers;
  std::swap(swapped[0], swapped[1]);
  CHECK_THROWS_WITH(dma_collective_programs(config, swapped, good, rs), Contains("buffers[0]"));
  CHECK_THROWS_WITH(dma_collective_programs(config, buffers, good, {}), Contains("ops"));
  bad = good;
  bad.barrier_base = 0xffffffffu;  // room for one barrier id, not for two
  CHECK_NOTHROW(dma_collective_programs(config, buffers, bad, rs));
  CHECK_THROWS_WITH(dma_collective_programs(config, buffers, bad,
                                            {CollectiveOp::ReduceScatter, CollectiveOp::AllGather}),
                    Contains("barrier_base"));
}

// ---- Functional goldens ------------------------------------------------------------------------

TEST_CASE("dma reduce-scatter TP 2: each rank's owned chunk is the exact sum",
          "[dma_collective][golden]") {
  golden({2, Check::ReduceScatter});
}
TEST_CASE("dma reduce-scatter TP 4: each rank's owned chunk is the exact sum",
          "[dma_collective][golden]") {
  golden({4, Check::ReduceScatter});
}
TEST_CASE("dma reduce-scatter TP 8: each rank's owned chunk is the exact sum",
          "[dma_collective][golden]") {
  golden({8, Check::ReduceScatter});
}
TEST_CASE("dma reduce-scatter TP 4 in fp16 sums exactly", "[dma_collective][golden]") {
  golden({4, Check::ReduceScatter, ElementType::Fp16});
}
TEST_CASE("dma all-gather TP 2: every rank ends with every chunk", "[dma_collective][golden]") {
  golden({2, Check::AllGather});
}
TEST_CASE("dma all-gather TP 4: every rank ends with every chunk", "[dma_collective][golden]") {
  golden({4, Check::AllGather});
}
TEST_CASE("dma all-gather TP 8: every rank ends with every chunk", "[dma_collective][golden]") {
  golden({8, Check::AllGather});
}
TEST_CASE("dma all-reduce (RS then AG) TP 2: every rank holds the full sum",
          "[dma_collective][golden]") {
  golden({2, Check::AllReduce});
}
TEST_CASE("dma all-reduce (RS then AG) TP 4: every rank holds the full sum",
          "[dma_collective][golden]") {
  golden({4, Check::AllReduce});
}
TEST_CASE("dma all-reduce (RS then AG) TP 8: every rank holds the full sum",
          "[dma_collective][golden]") {
  golden({8, Check::AllReduce});
}
TEST_CASE("dma all-reduce TP 4 in bf16 with 3 slices per chunk is exact",
          "[dma_collective][golden]") {
  golden({4, Check::AllReduce, ElementType::Bf16, 3});
}

// Any size, as nccl-tests allows: chunks that differ by an element (the larger ones' last slice
// longer, counted at the tracker's edge threshold), a single element and fewer elements than
// ranks (empty chunks that nothing sends or waits for).
namespace {
void any_size_golden(int n, Check check, std::int64_t elements, int slices = 0,
                     ElementType element = ElementType::Fp32) {
  GoldenCase gc;
  gc.gpus = n;
  gc.check = check;
  gc.element = element;
  gc.slices = slices;
  gc.elements = elements;
  golden(gc);
}
}  // namespace

TEST_CASE("dma all-reduce TP 2 of an uneven size is exact", "[dma_collective][golden]") {
  any_size_golden(2, Check::AllReduce, 2 * 4800 + 1);
}
TEST_CASE("dma all-reduce TP 4 of an uneven size is exact", "[dma_collective][golden]") {
  any_size_golden(4, Check::AllReduce, 4 * 4800 + 3);
}
TEST_CASE("dma all-reduce TP 8 of an uneven size is exact", "[dma_collective][golden]") {
  any_size_golden(8, Check::AllReduce, 8 * 1200 + 5);
}
TEST_CASE("dma reduce-scatter TP 4 of an uneven size: each owned chunk is the exact sum",
          "[dma_collective][golden]") {
  any_size_golden(4, Check::ReduceScatter, 4 * 4800 + 3);
}
TEST_CASE("dma all-gather TP 8 of an uneven size: every rank ends with every chunk",
          "[dma_collective][golden]") {
  any_size_golden(8, Check::AllGather, 8 * 1200 + 5);
}
TEST_CASE("dma all-reduce TP 4 of 4003 fp16 elements in 3 slices is exact",
          "[dma_collective][golden]") {
  any_size_golden(4, Check::AllReduce, 4003, 3, ElementType::Fp16);
}
TEST_CASE("dma all-reduce TP 2 of a single element is exact", "[dma_collective][golden]") {
  any_size_golden(2, Check::AllReduce, 1);
}
TEST_CASE("dma all-reduce TP 4 of a single element is exact", "[dma_collective][golden]") {
  any_size_golden(4, Check::AllReduce, 1);
}
TEST_CASE("dma all-reduce TP 8 of a single element is exact", "[dma_collective][golden]") {
  any_size_golden(8, Check::AllReduce, 1);
}
TEST_CASE("dma all-reduce TP 8 of fewer elements than ranks (empty chunks) is exact",
          "[dma_collective][golden]") {
  any_size_golden(8, Check::AllReduce, 5);
}
TEST_CASE("dma reduce-scatter TP 4 of fewer elements than ranks", "[dma_collective][golden]") {
  any_size_golden(4, Check::ReduceScatter, 3);
}
TEST_CASE("dma all-gather TP 4 of fewer elements than ranks", "[dma_collective][golden]") {
  any_size_golden(4, Check::AllGather, 3);
}

// ---- Timing ------------------------------------------------------------------------------------

TEST_CASE("dma ring reduce-scatter TP 4 of 64 MiB takes the first-principles ring time",
          "[dma_collective][timing]") {
  const int n = 4;
  const SystemConfig config = group_config(n, false);
  TpGroup group("group", config);
  DmaCollectiveSpec spec;
  spec.ranks = n;
  spec.bytes = 64ull << 20;
  const auto programs = dma_collective_programs(config, dma_ring_buffers(config), spec,
                                                {CollectiveOp::ReduceScatter});
  run_to_completion(group, programs);
  // The collective starts with every host's first MMIO write at time 0 and ends when the last
  // program finished.
  sc_core::sc_time end = sc_core::SC_ZERO_TIME;
  for (int g = 0; g < n; ++g) end = std::max(end, group.host(g).finish_times().back());
  const double measured_ns = end.to_seconds() * 1e9;

  // The link from first principles: a packet carries max_payload bytes behind a header, so a
  // direction delivers bandwidth x payload / (payload + header) (512 credits cover the round
  // trip: not credit-limited). Every rank sends n - 1 chunks over its one link to rank g - 1.
  const LinkConfig& link = config.link;
  const double rate_GBps =
      link.bandwidth_GBps * link.max_payload_bytes / (link.max_payload_bytes + link.header_bytes);
  const double chunk = static_cast<double>(spec.chunk_bytes(0));
  const double link_ns = (n - 1) * chunk / rate_GBps;
  // Neither the DMA engine nor near-memory compute is the bottleneck: the engine's read-ahead
  // buffer covers the link's bandwidth-delay product (a piece holds its bytes from its read to
  // its update's acknowledgement: HBM read, link there and back, the update), and HBM applies
  // updates at bandwidth / nmc_update_occupancy = 500 GB/s, beside the forwards' reads at the
  // link rate.
  const double round_trip_ns = 2 * config.hbm.latency_ns + 2 * link.latency_ns;
  REQUIRE(static_cast<double>(config.dma.outstanding_bytes) > rate_GBps * round_trip_ns);
  REQUIRE(config.hbm.bandwidth_GBps / config.hbm.nmc_update_occupancy > 2 * rate_GBps);
  // Terms outside the link steps, from the configuration and the program:
  //  - setup: MMIO writes before the first doorbell takes effect, each a round trip through the
  //    GPU's router to its register block (router + MMIO latency): the tracker RESET, 11 per region
  //    (n - 1 regions), and the 9 fields of descriptor 0 before its doorbell.
  //  - fill: none. The rank's own chunk keeps its link busy for a whole step
  //    (16 slices) while the first forwarded slices arrive from upstream; from then on its DMA
  //    queue always holds an arrived slice (step k's slice j arrived a step earlier than it is
  //    due), so the link never idles and the pipeline fill of one slice per hop is hidden.
  //  - drain: the last piece's local read (HBM latency), its flight (link latency; its
  //    serialisation is in the link steps) and its near-memory update (HBM latency + ALU); then
  //    the owner's host sees REGION_DONE within one poll interval plus a read; the sender's engine
  //    is idle once that update's acknowledgement came back (another link latency), which the
  //    STATUS poll reads; last, the n - 1 region disables.
  const double mmio_ns = config.router.latency_ns + config.mmio.latency_ns;
  const double setup_ns = (1 + 11 * (n - 1) + 9) * mmio_ns;
  const double poll_ns = HostCommand{}.interval_ns;
  const double drain_ns = config.hbm.latency_ns + link.latency_ns + config.hbm.latency_ns +
                          config.hbm.nmc_alu_latency_ns + poll_ns + mmio_ns + link.latency_ns +
                          mmio_ns + (n - 1) * mmio_ns;
  const double expected_ns = setup_ns + link_ns + drain_ns;
  // The setup term as the hosts saw it: each write one MMIO round trip, the barrier released as
  // soon as every rank armed its regions (they all write as much).
  const auto& times = group.host(0).finish_times();
  CHECK(times.at(0).to_seconds() * 1e9 == Approx(mmio_ns));
  const std::size_t barrier = 1 + 11 * (n - 1);
  REQUIRE(programs[0].commands.at(barrier).kind == HostCommand::Kind::Barrier);
  CHECK(times.at(barrier).to_seconds() * 1e9 == Approx(barrier * mmio_ns));
  INFO("measured " << measured_ns << " ns, formula " << expected_ns << " ns (link steps " << link_ns
                   << " ns at " << rate_GBps << " GB/s, setup " << setup_ns << ", drain "
                   << drain_ns << ")");
  CHECK(measured_ns == Approx(expected_ns).epsilon(0.05));
  CHECK(measured_ns >= link_ns + setup_ns);  // never faster than the wire

  // The bottleneck is the link: its forward direction (g -> g - 1) busy nearly all the transfer.
  const double transfer_ns = measured_ns - setup_ns;
  for (int l = 0; l < group.links(); ++l) {
    const auto& ends = group.topology().links()[l];
    const int forward = t3_next_gpu(ends.a, n) == ends.b ? 0 : 1;  // a -> b carries a's data
    INFO("link " << ends.a << "-" << ends.b);
    CHECK(group.link(l).stats(forward).busy_ns / transfer_ns > 0.95);
    CHECK(group.link(l).stats(forward).payload_bytes == (n - 1) * spec.chunk_bytes(0));
    CHECK(group.link(l).stats(1 - forward).payload_bytes == 0);
  }
  for (int g = 0; g < n; ++g) {
    CHECK(group.gpu(g).dma.stats().max_buffer_bytes <=
          static_cast<std::uint64_t>(config.dma.outstanding_bytes));
    // Incoming slices in progress at once: at most the upstream engine's transfers.
    CHECK(group.gpu(g).tracker.stats().max_in_use <=
          static_cast<std::uint64_t>(config.dma.in_flight));
  }
  const auto bw =
      collective_bandwidth(CollectiveKind::ReduceScatter, n, spec.bytes, measured_ns * 1e-9);
  INFO("algbw " << bw.algbw_GBps << " GB/s, busbw " << bw.busbw_GBps << " GB/s");
  CHECK(bw.busbw_GBps < rate_GBps);
  CHECK(bw.busbw_GBps > 0.9 * rate_GBps);
}
