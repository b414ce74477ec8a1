// Ring collectives on the SMs (RCCL-style): the schedule and layout helpers, the dispatcher's
// collective registers, functional goldens of reduce-scatter, all-gather and all-reduce for TP 2,
// 4 and 8 on a whole TP group, launch rejections, and the time of a large ring reduce-scatter
// against the first-principles ring formula. Each case builds one design and runs sc_start once.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>

#include "config/config_io.h"
#include "harness/debug_access.h"
#include "models/sm/dispatcher.h"
#include "models/system/simulation.h"
#include "models/system/tp_group.h"
#include "protocol/mmio_map.h"
#include "testbenches/at_start.h"
#include "testbenches/child_process.h"
#include "testbenches/tests/ring_testing.h"
#include "tlm_interconnect/element.h"
#include "workloads/collective_program.h"

using namespace t3;
namespace reg = t3::dispatcher;
using Catch::Contains;

namespace {

using namespace t3::ring_testing;

struct GoldenCase {
  int gpus = 4;
  Check check = Check::ReduceScatter;
  ElementType element = ElementType::Fp32;
  FlagPlacement flags = FlagPlacement::Mailbox;
  // Elements of the whole buffer; 0: chunks of 10243 (fp32) or 10246 elements (fp16, bf16), not
  // a multiple of channels, slices or pieces.
  std::int64_t elements = 0;
  // Several rings (protocol/ring.h) on a fully-connected group; {1}: the one ring, on a ring.
  std::vector<int> strides = {1};
};

// Sends of one launch of one rank: every channel's slices, n - 1 sends each.
std::int64_t sends_per_launch(const CollectiveSpec& spec) {
  const auto eb = static_cast<std::int64_t>(bytes_of(spec.element, 1));
  std::int64_t slices = 0;
  for (int c = 0; c < spec.channels; ++c) {
    slices += channel_slices(spec.elements(), spec.ranks, spec.channels, c, spec.slice_bytes / eb);
  }
  return slices * (spec.ranks - 1);
}

// Functional golden run: buffers preloaded through the routers, the programs run to completion,
// every GPU's buffer compared with the reference, and the traffic checked against the schedule.
void golden(const GoldenCase& gc) {
  const int n = gc.gpus;
  // Small requests and slices, a shallow FIFO: every slice takes several pieces, every channel
  // several slices (the last one short), and the FIFO wraps, so back-pressure is exercised.
  const bool mesh = gc.strides != std::vector<int>{1};
  TpGroup group("group",
                group_config(n, true,
                             {"sm.request_bytes=1024",
                              mesh ? "topology.kind=fully-connected" : "topology.kind=ring"}));
  CollectiveSpec spec;
  spec.ranks = n;
  spec.element = gc.element;
  spec.ring_strides = gc.strides;
  const std::int64_t eb = static_cast<std::int64_t>(bytes_of(gc.element, 1));
  const std::int64_t total = gc.elements > 0 ? gc.elements : n * (eb == 4 ? 10243 : 10246);
  spec.bytes = static_cast<std::uint64_t>(total * eb);
  // Several rings: more channels than rings, not a multiple of them (rings of unequal shares).
  spec.channels = mesh ? static_cast<int>(gc.strides.size()) + 2 : 4;
  spec.slice_bytes = 4096;
  spec.fifo_depth = 2;
  spec.flags = gc.flags;
  const auto plan = plan_collective(group.config().address_map, spec);
  const std::vector<CollectiveOp> ops = ops_of(gc.check);
  const auto programs = ring_programs(plan, spec, ops);
  std::vector<std::uint64_t> buffers;
  for (const auto& rank : plan) buffers.push_back(rank.buffer);
  run_golden(group, programs, buffers, gc.check, gc.element, total, owner_chunk);
  for (int g = 0; g < n; ++g) {
    check_elements(group, buffers, g, gc.check, gc.element, total, owner_chunk);
  }

  // Traffic, from the schedule, channel by channel (each on its ring). Per rank, a channel's
  // reduce-scatter reads its share of the chunk of its ring's step 0 once and of every other
  // chunk twice (its own data and the partial received) and writes its share of every chunk once
  // (n - 1 to next, its own at the end); an all-gather reads and writes its share of every chunk
  // but the one it would send at step n - 1. Each slice send costs one READY store to next and
  // one ACK store back, empty slices included; all of it is communication traffic.
  const auto sends = static_cast<std::uint64_t>(sends_per_launch(spec));
  const auto rings = static_cast<int>(spec.ring_strides.size());
  const auto stride_of = [&](int c) {
    return spec.ring_strides[static_cast<std::size_t>(ring_of_channel(c, rings))];
  };
  // Channel c's share of chunk `chunk`, and of the whole buffer, in bytes.
  const auto share = [&](int c, int chunk) {
    return bytes_of(spec.element,
                    channel_range(chunk_range(total, n, chunk).size(), spec.channels, c).size());
  };
  const auto whole_share = [&](int c) {
    std::uint64_t bytes = 0;
    for (int chunk = 0; chunk < n; ++chunk) bytes += share(c, chunk);
    return bytes;
  };
  const std::uint64_t launches = ops.size();
  std::uint64_t expected_link = 0;
  for (int g = 0; g < n; ++g) {
    INFO("GPU " << g);
    for (int stride : spec.ring_strides) CHECK(group.topology().hops(g, wrap(g + stride, n)) == 1);
    std::uint64_t read = 0, written = 0;
    for (CollectiveOp op : ops) {
      for (int c = 0; c < spec.channels; ++c) {
        const int s = stride_of(c);
        if (op == CollectiveOp::ReduceScatter) {
          read += 2 * whole_share(c) - share(c, reduce_scatter_chunk(g, 0, n, s));
          written += whole_share(c);
          expected_link += whole_share(c) - share(c, reduce_scatter_chunk(g, n - 1, n, s));
        } else {
          const std::uint64_t moved = whole_share(c) - share(c, all_gather_chunk(g, n - 1, n, s));
          read += moved;
          written += moved;
          expected_link += moved;
        }
      }
      expected_link += 16 * sends;
    }
    SmStats sum;
    for (int s = 0; s < group.gpu(g).sms(); ++s) {
      const SmStats& st = group.gpu(g).sm(s).stats();
      sum.wgs += st.wgs;
      sum.collective_bytes_read += st.collective_bytes_read;
      sum.collective_bytes_written += st.collective_bytes_written;
      sum.flag_writes += st.flag_writes;
      sum.flag_polls += st.flag_polls;
      sum.faults += st.faults;
    }
    CHECK(sum.wgs == launches * static_cast<std::uint64_t>(spec.channels));
    CHECK(sum.collective_bytes_read == read);
    CHECK(sum.collective_bytes_written == written);
    CHECK(sum.flag_writes == launches * 2 * sends);
    CHECK(sum.flag_polls >= launches * sends);  // a READY per received slice, at least
    CHECK(sum.faults == 0);
    const HbmStats& memory = group.gpu(g).memory.stats();
    for (int op = 0; op < kOps; ++op) {
      CHECK(memory.bytes[op][static_cast<int>(TrafficClass::Compute)] == 0);
    }
    CHECK(memory.bytes[static_cast<int>(Op::Update)][1] == 0);  // adds on the CU, not in memory
    const auto& records = group.gpu(g).dispatcher.launches();
    REQUIRE(records.size() == launches);
    for (const auto& record : records) {
      CHECK(record.status == reg::kDone);
      CHECK(record.workgroups == spec.channels);
    }
  }
  CHECK(link_payload(group) == expected_link);
}

}  // namespace

// ---- Plain logic -----------------------------------------------------------------------------

TEST_CASE("collective schedule: every partial visits every rank once and ends at its owner",
          "[collective]") {
  for (int n = 2; n <= 8; ++n) {
    INFO(n << " ranks");
    // owner_chunk is a permutation.
    std::set<int> owners;
    for (int r = 0; r < n; ++r) owners.insert(owner_chunk(r, n));
    CHECK(owners.size() == static_cast<std::size_t>(n));
    // Reduce-scatter: follow each rank's partial of each chunk. contributors[r][c] = ranks whose
    // data is in what r holds for chunk c (after the step r sent it).
    std::vector<std::vector<std::set<int>>> held(n, std::vector<std::set<int>>(n));
    for (int r = 0; r < n; ++r) {
      for (int c = 0; c < n; ++c) held[r][c] = {r};
    }
    for (int step = 0; step < n - 1; ++step) {
      auto next_held = held;
      for (int r = 0; r < n; ++r) {
        const int c = reduce_scatter_chunk(r, step, n);
        const int to = next_rank(r, n);
        // The receiver adds its own data to what arrived.
        if (step + 1 < n - 1) CHECK(reduce_scatter_chunk(to, step + 1, n) == c);
        for (int who : held[r][c]) next_held[to][c].insert(who);
      }
      held = next_held;
    }
    for (int r = 0; r < n; ++r) {
      CHECK(reduce_scatter_chunk(r, n - 1, n) == owner_chunk(r, n));
      CHECK(held[r][owner_chunk(r, n)].size() == static_cast<std::size_t>(n));
    }
    // All-gather: rank r forwards at step s what it received at step s - 1; every rank ends
    // with every chunk exactly once.
    for (int r = 0; r < n; ++r) {
      CHECK(all_gather_chunk(r, 0, n) == owner_chunk(r, n));
      std::set<int> have = {owner_chunk(r, n)};
      for (int step = 0; step < n - 1; ++step) {
        const int from = prev_rank(r, n);
        const int arrives = all_gather_chunk(from, step, n);
        if (step + 1 < n - 1) CHECK(all_gather_chunk(r, step + 1, n) == arrives);
        CHECK(have.insert(arrives).second);
      }
      CHECK(have.size() == static_cast<std::size_t>(n));
    }
  }
}

TEST_CASE("collective layout: buffers, FIFO and flags per GPU, channels and slices",
          "[collective]") {
  const SystemConfig config = group_config(4, false);
  const AddressMap map(config.address_map, 4, config.hbm.capacity_bytes);
  CollectiveSpec spec;
  spec.ranks = 4;
  spec.bytes = 4 * 40972;
  spec.channels = 4;
  spec.slice_bytes = 4096;
  spec.fifo_depth = 2;
  const auto plan = plan_collective(config.address_map, spec, 100);
  REQUIRE(plan.size() == 4);
  for (int g = 0; g < 4; ++g) {
    const auto& p = plan[g];
    CHECK(p.buffer == map.hbm_base(g) + 4096);  // offset 100 rounded up to 4 KiB
    CHECK(p.receive == receive_area(p.buffer, spec.bytes));
    CHECK(p.receive % 4096 == 0);
    CHECK(p.receive >= p.buffer + spec.bytes);
    CHECK(p.receive_bytes == 4 * 2 * 4096);
    CHECK(p.dispatcher == map.mmio_base(g) + Gpu::kDispatcherOffset);
    CHECK(p.flags == p.dispatcher + reg::kMailbox);
    CHECK(p.flag_bytes == 64);
    CHECK(map.decode(p.flags, p.flag_bytes)->window == Window::Mmio);
    CHECK(map.decode(p.buffer, p.end - p.buffer)->gpu == g);
  }
  CHECK(fifo_entry(plan[0].receive, 3, 2, 4096, 1) == plan[0].receive + 7 * 4096);
  CHECK(ready_flag(plan[1].flags, 2) == plan[1].flags + 32);
  CHECK(ack_flag(plan[1].flags, 2) == plan[1].flags + 40);
  CHECK(flag_value(3, 7) == 0x0000000300000007ull);

  spec.flags = FlagPlacement::Hbm;
  const auto hbm = plan_collective(config.address_map, spec);
  CHECK(hbm[2].flags == hbm[2].receive + hbm[2].receive_bytes);  // 4 KiB-aligned already
  CHECK(map.decode(hbm[2].flags, 64)->window == Window::Hbm);

  // Channels split a chunk's elements evenly and cover it; slices cover a channel's range.
  std::int64_t covered = 0;
  for (int c = 0; c < 4; ++c) {
    const ElementRange range = channel_range(10243, 4, c);
    CHECK(range.first == covered);
    CHECK((range.size() == 2560 || range.size() == 2561));
    covered = range.end;
  }
  CHECK(covered == 10243);
  CHECK(slice_count(2561, 1024) == 3);
  CHECK(slice_count(2048, 1024) == 2);
  CHECK(slice_count(0, 1024) == 1);  // an empty range still runs one slice, of flags only

  // Chunks of an uneven buffer differ by one element, the larger ones spread out, and cover it;
  // with fewer elements than ranks some are empty. An even buffer keeps chunks of E / n.
  std::vector<std::int64_t> sizes;
  for (int c = 0; c < 4; ++c) sizes.push_back(chunk_range(10, 4, c).size());
  CHECK(sizes == std::vector<std::int64_t>{2, 3, 2, 3});
  CHECK(chunk_range(10, 4, 3).first == 7);
  CHECK(chunk_range(10, 4, 3).end == 10);
  sizes.clear();
  for (int c = 0; c < 4; ++c) sizes.push_back(chunk_range(2, 4, c).size());
  CHECK(sizes == std::vector<std::int64_t>{0, 1, 0, 1});
  CHECK(chunk_range(40972, 4, 2).first == 2 * 10243);
  spec.bytes = 4 * 10;
  CHECK(spec.chunk_bytes(0) == 8);
  CHECK(spec.chunk_bytes(1) == 12);
  spec.bytes = 4 * 40972;
  // No overflow near the top of the range: the split point is exact.
  const std::int64_t huge = (std::int64_t{1} << 62) + 5;
  CHECK(split_range(huge, 7, 6).end == huge);
  CHECK(split_range(huge, 7, 3).first == huge / 7 * 3 + (huge % 7) * 3 / 7);
  // A channel runs the slices of its largest range over both chunk sizes, which need not be the
  // larger chunk's: with 5 channels, channel 2 has 1 element of a 2-element chunk, 0 of a 3.
  CHECK(channel_range(2, 5, 2).size() == 1);
  CHECK(channel_range(3, 5, 2).size() == 0);
  CHECK(channel_slices(4 * 2 + 1, 4, 5, 2, 1) == 1);
  CHECK(channel_slices(4 * 4096 + 3, 4, 1, 0, 1024) == 5);  // 4097 of the larger chunk
  CHECK(channel_slices(4 * 4096, 4, 1, 0, 1024) == 4);

  // The ring launch of rank 3 points at rank 0 (next) and rank 2 (prev).
  const CollectiveLaunch launch = ring_launch(plan, spec, 3, CollectiveOp::AllGather, 5);
  CHECK(launch.next_buffer == plan[0].buffer);
  CHECK(launch.next_flags == plan[0].flags);
  CHECK(launch.prev_flags == plan[2].flags);
  CHECK(launch.sequence == 5);
  const Program program = collective_program(launch);
  REQUIRE(program.commands.size() == 24);  // 10 one-word + 6 two-word registers, doorbell, wait
  CHECK(program.commands.front().address == plan[3].dispatcher + reg::kKernel);
  CHECK(program.commands.front().value == reg::kCollective);
  CHECK(program.commands.back().kind == HostCommand::Kind::WaitKernel);

  // nccl-tests conventions: busbw = algbw x (n-1)/n (RS, AG), x 2(n-1)/n (all-reduce).
  const auto rs = collective_bandwidth(CollectiveKind::ReduceScatter, 4, 4000000000ull, 1.0);
  CHECK(rs.algbw_GBps == Approx(4.0));
  CHECK(rs.busbw_GBps == Approx(3.0));
  CHECK(collective_bandwidth(CollectiveKind::AllReduce, 4, 4000000000ull, 1.0).busbw_GBps ==
        Approx(6.0));

  // Bad specs name the field.
  CollectiveSpec bad = spec;
  bad.bytes = 4 * 40972 + 2;
  CHECK_THROWS_WITH(
      check_spec(bad),
      Contains("bytes = 163890 must be a positive multiple of the 4-byte fp32 element"));
  bad.element = ElementType::Fp16;  // 81945 whole fp16 elements
  CHECK_NOTHROW(check_spec(bad));
  bad.bytes = 0;
  CHECK_THROWS_WITH(check_spec(bad), Contains("bytes = 0"));
  bad = spec;
  bad.ranks = 1;
  CHECK_THROWS_WITH(check_spec(bad), Contains("ranks = 1"));
  bad = spec;
  bad.channels = 65;
  CHECK_THROWS_WITH(check_spec(bad), Contains("channels = 65"));
  bad = spec;
  bad.slice_bytes = 6;
  CHECK_THROWS_WITH(check_spec(bad), Contains("slice_bytes"));
  CollectiveLaunch bad_launch = launch;
  bad_launch.sequence = 0;
  CHECK_THROWS_WITH(collective_program(bad_launch), Contains("sequence"));
}

TEST_CASE("collective registers: COLL_* and the mailbox sit at their documented offsets",
          "[collective][dispatch]") {
  const SystemConfig config = group_config(2, false);
  const AddressMap map(config.address_map, 2, config.hbm.capacity_bytes);
  Dispatcher d("dispatcher", config.sm, map, 0, sc_core::sc_time(10, sc_core::SC_NS));
  const auto regs = d.register_map();
  const std::vector<std::pair<std::uint64_t, const char*>> expected = {
      {reg::kCollOp, "COLL_OP"},
      {reg::kCollRanks, "COLL_RANKS"},
      {reg::kCollRank, "COLL_RANK"},
      {reg::kCollChannels, "COLL_CHANNELS"},
      {reg::kCollBufferLow, "COLL_BUFFER_LO"},
      {reg::kCollBufferHigh, "COLL_BUFFER_HI"},
      {reg::kCollNextBufferLow, "COLL_NEXT_BUFFER_LO"},
      {reg::kCollNextBufferHigh, "COLL_NEXT_BUFFER_HI"},
      {reg::kCollFlagsLow, "COLL_FLAGS_LO"},
      {reg::kCollFlagsHigh, "COLL_FLAGS_HI"},
      {reg::kCollNextFlagsLow, "COLL_NEXT_FLAGS_LO"},
      {reg::kCollNextFlagsHigh, "COLL_NEXT_FLAGS_HI"},
      {reg::kCollPrevFlagsLow, "COLL_PREV_FLAGS_LO"},
      {reg::kCollPrevFlagsHigh, "COLL_PREV_FLAGS_HI"},
      {reg::kCollBytesLow, "COLL_BYTES_LO"},
      {reg::kCollBytesHigh, "COLL_BYTES_HI"},
      {reg::kCollElement, "COLL_ELEMENT"},
      {reg::kCollSequence, "COLL_SEQUENCE"},
      {reg::kCollSliceBytes, "COLL_SLICE_BYTES"},
      {reg::kCollFifoDepth, "COLL_FIFO_DEPTH"},
      {reg::kCollPollNs, "COLL_POLL_NS"},
      {reg::kCollGateLow, "COLL_GATE_LO"},
      {reg::kCollGateHigh, "COLL_GATE_HI"},
      {reg::kCollPeerStrideLow, "COLL_PEER_STRIDE_LO"},
      {reg::kCollPeerStrideHigh, "COLL_PEER_STRIDE_HI"},
      {reg::kCollPeerFlagStrideLow, "COLL_PEER_FLAG_STRIDE_LO"},
      {reg::kCollPeerFlagStrideHigh, "COLL_PEER_FLAG_STRIDE_HI"},
      {reg::kCollRings, "COLL_RINGS"},
      {reg::kCollStride, "COLL_STRIDE"},
      {reg::kCollMulticast, "COLL_MULTICAST"}};
  // The ring table, after the hardware queues: rings 1.. of a launch on several rings.
  std::vector<std::pair<std::uint64_t, std::string>> table;
  for (int i = 1; i < static_cast<int>(reg::kMaxRings); ++i) {
    const std::string ring = "COLL_RING" + std::to_string(i) + "_";
    table.emplace_back(reg::ring_register(i, reg::kRingStride), ring + "STRIDE");
    for (const auto& [field, name] : {std::pair{reg::kRingNextBufferLow, "NEXT_BUFFER"},
                                      std::pair{reg::kRingNextFlagsLow, "NEXT_FLAGS"},
                                      std::pair{reg::kRingPrevFlagsLow, "PREV_FLAGS"}}) {
      table.emplace_back(reg::ring_register(i, field), ring + name + "_LO");
      table.emplace_back(reg::ring_register(i, field + 4), ring + name + "_HI");
    }
  }
  for (const auto& [offset, name] : table) {
    INFO(name);
    REQUIRE(regs.count(offset) == 1);
    CHECK(regs.at(offset).name == name);
    CHECK(regs.at(offset).writable);
    CHECK(offset >= reg::queue_register(reg::kQueues, 0));  // after the queues' registers
    CHECK(offset < mmio_map::kBlockSize);
  }
  for (const auto& [offset, name] : expected) {
    INFO(name);
    REQUIRE(regs.count(offset) == 1);
    CHECK(regs.at(offset).name == name);
    CHECK(regs.at(offset).writable);
    CHECK(offset >= 0x600);  // after the GEMM registers and the output map
  }
  for (int w = 0; w < reg::kMailboxWords; ++w) {
    const std::uint64_t offset = reg::kMailbox + 4 * static_cast<std::uint64_t>(w);
    REQUIRE(regs.count(offset) == 1);
    CHECK(regs.at(offset).name == "MAILBOX" + std::to_string(w));
    CHECK(regs.at(offset).writable);
  }
  // 27 GEMM/status/SM-range registers, the output map, the collective registers, the 14
  // streaming-kernel registers (test_sm checks them), the mailbox and nine control registers per
  // hardware queue, after the mailbox.
  CHECK(regs.size() == 27 + 4 * reg::kMaxChunks + expected.size() + table.size() + 14 +
                           reg::kMailboxWords + 9 * reg::kQueues);
  CHECK(reg::kMailbox + 4 * reg::kMailboxWords <= reg::kQueueBase);
  CHECK(reg::queue_register(reg::kQueues, 0) <= Gpu::kRegisterBlockSize);
  CHECK(flag_area_bytes(reg::kMaxChannels) <= 4 * reg::kMailboxWords);
}

// ---- Functional goldens ------------------------------------------------------------------------

TEST_CASE("collective reduce-scatter TP 2: each GPU's owned chunk is the exact sum",
          "[collective][golden]") {
  golden({2, Check::ReduceScatter});
}
TEST_CASE("collective reduce-scatter TP 4: each GPU's owned chunk is the exact sum",
          "[collective][golden]") {
  golden({4, Check::ReduceScatter});
}
TEST_CASE("collective reduce-scatter TP 8: each GPU's owned chunk is the exact sum",
          "[collective][golden]") {
  golden({8, Check::ReduceScatter});
}
TEST_CASE("collective reduce-scatter TP 4 in fp16 sums exactly", "[collective][golden]") {
  // Two element types would be two designs; fp16 here, bf16 in the all-reduce below.
  golden({4, Check::ReduceScatter, ElementType::Fp16});
}
TEST_CASE("collective all-gather TP 2: every GPU ends with every chunk", "[collective][golden]") {
  golden({2, Check::AllGather});
}
TEST_CASE("collective all-gather TP 4: every GPU ends with every chunk", "[collective][golden]") {
  golden({4, Check::AllGather});
}
TEST_CASE("collective all-gather TP 8: every GPU ends with every chunk", "[collective][golden]") {
  golden({8, Check::AllGather});
}
TEST_CASE("collective all-reduce (RS then AG) TP 2: every GPU holds the full sum",
          "[collective][golden]") {
  golden({2, Check::AllReduce});
}
TEST_CASE("collective all-reduce (RS then AG) TP 4: every GPU holds the full sum",
          "[collective][golden]") {
  golden({4, Check::AllReduce});
}
TEST_CASE("collective all-reduce (RS then AG) TP 8: every GPU holds the full sum",
          "[collective][golden]") {
  golden({8, Check::AllReduce});
}
TEST_CASE("collective all-reduce TP 4 in bf16 is exact", "[collective][golden]") {
  golden({4, Check::AllReduce, ElementType::Bf16});
}
TEST_CASE("collective all-reduce TP 4 with its flags in HBM (functional mode)",
          "[collective][golden]") {
  golden({4, Check::AllReduce, ElementType::Fp32, FlagPlacement::Hbm});
}

// Any size, as nccl-tests allows: chunks that differ by an element, a single element, fewer
// elements than ranks (empty chunks) and fewer than the 4 channels (empty channel ranges), whose
// slices move no data but still take part in the flag protocol.
namespace {
void any_size_golden(int n, Check check, std::int64_t elements,
                     ElementType element = ElementType::Fp32) {
  GoldenCase gc;
  gc.gpus = n;
  gc.check = check;
  gc.element = element;
  gc.elements = elements;
  golden(gc);
}
}  // namespace

TEST_CASE("collective all-reduce TP 2 of an uneven size is exact", "[collective][golden]") {
  any_size_golden(2, Check::AllReduce, 2 * 4999 + 1);
}
TEST_CASE("collective all-reduce TP 4 of an uneven size is exact", "[collective][golden]") {
  any_size_golden(4, Check::AllReduce, 4 * 2500 + 3);
}
TEST_CASE("collective all-reduce TP 8 of an uneven size is exact", "[collective][golden]") {
  any_size_golden(8, Check::AllReduce, 8 * 1250 + 5);
}
TEST_CASE("collective reduce-scatter TP 4 of an uneven size: each owned chunk is the exact sum",
          "[collective][golden]") {
  any_size_golden(4, Check::ReduceScatter, 4 * 2500 + 3);
}
TEST_CASE("collective all-gather TP 8 of an uneven size: every GPU ends with every chunk",
          "[collective][golden]") {
  any_size_golden(8, Check::AllGather, 8 * 1250 + 5);
}
TEST_CASE("collective all-reduce TP 4 of 2501 fp16 elements (5002 bytes) is exact",
          "[collective][golden]") {
  any_size_golden(4, Check::AllReduce, 2501, ElementType::Fp16);
}
TEST_CASE("collective all-reduce TP 2 of a single element is exact", "[collective][golden]") {
  any_size_golden(2, Check::AllReduce, 1);
}
TEST_CASE("collective all-reduce TP 4 of a single element is exact", "[collective][golden]") {
  any_size_golden(4, Check::AllReduce, 1);
}
TEST_CASE("collective all-reduce TP 8 of a single element is exact", "[collective][golden]") {
  any_size_golden(8, Check::AllReduce, 1);
}
TEST_CASE("collective reduce-scatter TP 4 of a single element", "[collective][golden]") {
  any_size_golden(4, Check::ReduceScatter, 1);
}
TEST_CASE("collective all-gather TP 4 of a single element", "[collective][golden]") {
  any_size_golden(4, Check::AllGather, 1);
}
TEST_CASE("collective all-reduce TP 4 of fewer elements than ranks (empty chunks) is exact",
          "[collective][golden]") {
  any_size_golden(4, Check::AllReduce, 3);
}
TEST_CASE("collective all-reduce TP 8 of fewer elements than ranks (empty chunks) is exact",
          "[collective][golden]") {
  any_size_golden(8, Check::AllReduce, 5);
}
TEST_CASE("collective all-reduce TP 2 of fewer elements per chunk than channels is exact",
          "[collective][golden]") {
  any_size_golden(2, Check::AllReduce, 2 * 3);
}
TEST_CASE("collective all-reduce TP 4 of fewer elements per chunk than channels is exact",
          "[collective][golden]") {
  any_size_golden(4, Check::AllReduce, 4 * 2 + 1);
}
TEST_CASE("collective all-reduce TP 8 of fewer elements per chunk than channels is exact",
          "[collective][golden]") {
  any_size_golden(8, Check::AllReduce, 8 * 3);
}

namespace {

// The schedule of one all-reduce, as numbers: per GPU and launch the doorbell, start and end
// times, per SM its flag polls and time spent polling (times in ps).
std::vector<std::int64_t> all_reduce_schedule(bool functional) {
  const int n = 4;
  TpGroup group("group", group_config(n, functional, {"sm.request_bytes=4096"}));
  CollectiveSpec spec;
  spec.ranks = n;
  spec.bytes = n * 96 * 1024;
  spec.channels = 8;
  spec.slice_bytes = 8192;
  spec.fifo_depth = 2;
  const auto plan = plan_collective(group.config().address_map, spec);
  run_to_completion(
      group, ring_programs(plan, spec, {CollectiveOp::ReduceScatter, CollectiveOp::AllGather}));
  std::vector<std::int64_t> values;
  for (int g = 0; g < n; ++g) {
    for (const LaunchRecord& launch : group.gpu(g).dispatcher.launches()) {
      for (const sc_core::sc_time& t : {launch.doorbell, launch.start, launch.end}) {
        values.push_back(static_cast<std::int64_t>(t.value()));
      }
    }
    for (int s = 0; s < group.gpu(g).sms(); ++s) {
      values.push_back(static_cast<std::int64_t>(group.gpu(g).sm(s).stats().flag_polls));
      values.push_back(static_cast<std::int64_t>(group.gpu(g).sm(s).stats().flag_wait.value()));
    }
  }
  return values;
}

}  // namespace

TEST_CASE("collective all-reduce takes the same time in timing and functional mode",
          "[collective][timing]") {
  // The flags live in the mailbox, which holds values in both modes, so every access happens at
  // the same time whether data moves or not. Each design runs alone in its own SystemC kernel
  // (the timing one in a child process): two designs in one kernel would share its event queue,
  // and the order of simultaneous events, hence of equal-time link reservations, would change.
  const std::string bytes = run_in_child([] {
    const std::vector<std::int64_t> values = all_reduce_schedule(false);
    return std::string(reinterpret_cast<const char*>(values.data()),
                       values.size() * sizeof(std::int64_t));
  });
  std::vector<std::int64_t> timing(bytes.size() / sizeof(std::int64_t));
  std::memcpy(timing.data(), bytes.data(), timing.size() * sizeof(std::int64_t));
  const std::vector<std::int64_t> functional = all_reduce_schedule(true);
  REQUIRE(timing.size() == functional.size());
  REQUIRE(timing.size() == 4 * (2 * 3 + 8 * 2));
  CHECK(timing == functional);
}

// ---- Rejections --------------------------------------------------------------------------------

TEST_CASE(
    "collective launches with bytes not a whole number of elements or an unmapped next buffer "
    "are rejected",
    "[collective]") {
  TpGroup group("group", group_config(2, false));
  CollectiveSpec spec;
  spec.ranks = 2;
  spec.bytes = 2 * 4096;
  spec.channels = 2;
  const auto plan = plan_collective(group.config().address_map, spec);
  auto programs = ring_programs(plan, spec, {CollectiveOp::ReduceScatter});
  for (auto& command : programs[0].commands) {  // GPU 0: 6 bytes too many, not whole fp32
    if (command.address == plan[0].dispatcher + reg::kCollBytesLow) command.value += 6;
  }
  for (auto& command : programs[1].commands) {  // GPU 1: next buffer where nobody answers
    if (command.address == plan[1].dispatcher + reg::kCollNextBufferHigh) command.value += 0x10000;
  }
  group.load(programs);
  sc_core::sc_start();
  CHECK_THAT(group.host(0).error(), Contains("bad collective (error 7)"));
  CHECK_THAT(group.host(1).error(), Contains("unmapped buffer (error 3)"));
  CHECK(group.gpu(0).dispatcher.error() == reg::kBadCollective);
  for (int g = 0; g < 2; ++g) {
    CHECK(group.gpu(g).dispatcher.dispatched().empty());
    CHECK(group.gpu(g).dispatcher.status() == reg::kFailed);
  }
}

TEST_CASE("collective flags in HBM in timing mode are an error naming the fix", "[collective]") {
  TpGroup group("group", group_config(2, false));
  CollectiveSpec spec;
  spec.ranks = 2;
  spec.bytes = 2 * 4096;
  spec.channels = 1;
  spec.flags = FlagPlacement::Hbm;
  group.load(ring_programs(plan_collective(group.config().address_map, spec), spec,
                           {CollectiveOp::AllGather}));
  CHECK_THROWS_WITH(sc_core::sc_start(), Contains("flags in HBM need functional mode"));
}

// ---- Timing ------------------------------------------------------------------------------------

TEST_CASE("collective ring reduce-scatter TP 4 of 64 MiB takes the first-principles ring time",
          "[collective][timing]") {
  // 8 SMs x 2 slots = 16 channels, two per SM. An SM keeps up to sm.max_inflight_bytes of
  // requests in flight and moves 64 B per clock on each port, so 16 channels could push far more
  // than the link: the link is the bottleneck (checked below: the link is busy nearly all the
  // time while the CUs' math pipes and HBM are mostly idle).
  // The bandwidth-pipe HBM, whose latency the formula uses; the bank model's row misses and
  // refreshes lengthen each step's round trip (about 6% on this ring).
  SystemConfig config = group_config(4, false);
  config.hbm.model = HbmModel::Simple;
  TpGroup group("group", config);
  const int n = 4;
  CollectiveSpec spec;
  spec.ranks = n;
  spec.bytes = 64ull << 20;
  spec.channels = static_cast<int>(config.sm.count * config.sm.occupancy);
  const auto plan = plan_collective(config.address_map, spec);
  run_to_completion(group, ring_programs(plan, spec, {CollectiveOp::ReduceScatter}));
  sc_core::sc_time doorbell = sc_core::sc_max_time(), end;
  for (int g = 0; g < n; ++g) {
    const LaunchRecord& run = group.gpu(g).dispatcher.launches().at(0);
    REQUIRE(run.status == reg::kDone);
    doorbell = std::min(doorbell, run.doorbell);
    end = std::max(end, run.end);
  }
  const double measured_ns = (end - doorbell).to_seconds() * 1e9;

  // The link model from first principles. A packet carries at most max_payload bytes behind a
  // header, so the wire delivers bandwidth x payload / (payload + header). A packet holds a
  // credit for its serialisation plus 2 x latency (out, credit back); with `credits` of them the
  // rate is also at most credits x payload per round trip.
  const LinkConfig& link = config.link;
  const double packet_ns = (link.max_payload_bytes + link.header_bytes) / link.bandwidth_GBps;
  const double wire_GBps =
      link.bandwidth_GBps * link.max_payload_bytes / (link.max_payload_bytes + link.header_bytes);
  const double credit_GBps =
      link.credits * link.max_payload_bytes / (packet_ns + 2 * link.latency_ns);
  const double rate_GBps = std::min(wire_GBps, credit_GBps);
  CHECK(credit_GBps > wire_GBps);  // 512 credits cover the 1 us round trip: not credit-limited
  const double chunk = static_cast<double>(spec.chunk_bytes(0));
  const double link_ns = (n - 1) * chunk / rate_GBps;  // (n-1) steps x chunk / delivered rate
  // Terms outside the link steps, each derived from the configuration:
  //  - the launch: launch latency, then the channels dispatched dispatch_ns apart;
  //  - fill: a channel's first piece is read locally (L2 miss: L2 lookup + HBM latency) before
  //    its store reaches the link;
  //  - drain: the last packet's flight (link latency) and the remote store's HBM write, the
  //    receiver's poll of READY (one mailbox read: router + MMIO latency, and up to a poll
  //    interval), its local reduction of the last slice (slice / request_bytes pieces, each two
  //    L2-missing reads and an L2 store), and the sender's final poll of ACK (another mailbox read
  //    and up to a poll interval). Flag stores are posted and, as every register write in this
  //    loosely-timed model, take effect when issued, so they add no latency of their own.
  //  Slices pipeline the ring steps, so there is no per-step synchronisation term: step s + 1 of
  //  slice j only waits for step s of slice j, which arrived a slice time earlier.
  // Left out: a channel keeps one store in flight, and while it reduces its last step of a slice
  // locally it has none. The 16 channels start in lockstep, so in the first slice rounds they do
  // that at the same moment and the link idles a few microseconds, until they drift apart; that
  // and the gaps between the channels' stores make the run about 2% slower than the formula.
  const double launch_ns =
      config.sm.launch_latency_ns + (spec.channels - 1) * config.sm.dispatch_ns;
  const double local_read_ns = config.l2.hit_latency_ns + config.hbm.latency_ns;
  const double poll_read_ns = 2 * config.router.latency_ns + config.mmio.latency_ns;
  const double pieces = static_cast<double>(spec.slice_bytes) / config.sm.request_bytes;
  const double final_slice_ns = pieces * (2 * local_read_ns + config.l2.hit_latency_ns);
  const double drain_ns =
      link.latency_ns + config.hbm.latency_ns + 2 * (poll_read_ns + spec.poll_ns) + final_slice_ns;
  const double expected_ns = launch_ns + local_read_ns + link_ns + drain_ns;
  INFO("measured " << measured_ns << " ns, formula " << expected_ns << " ns (link steps " << link_ns
                   << " ns at " << rate_GBps << " GB/s, launch " << launch_ns << ", drain "
                   << drain_ns << ")");
  CHECK(measured_ns == Approx(expected_ns).epsilon(0.05));
  CHECK(measured_ns >= link_ns + launch_ns);  // never faster than the wire

  // The bottleneck is the link: its forward direction busy nearly the whole transfer time, while
  // the CUs' math pipes and HBM are far from saturated.
  const double transfer_ns = measured_ns - launch_ns;
  for (int l = 0; l < group.links(); ++l) {
    const auto& ends = group.topology().links()[l];
    const int forward = next_rank(ends.a, n) == ends.b ? 0 : 1;  // a -> b carries a's data
    INFO("link " << ends.a << "-" << ends.b);
    CHECK(group.link(l).stats(forward).busy_ns / transfer_ns > 0.95);
    CHECK(group.link(l).stats(forward).payload_bytes >= (n - 1) * spec.chunk_bytes(0));
  }
  for (int g = 0; g < n; ++g) {
    double pipe_busy_ns = 0;
    for (int s = 0; s < group.gpu(g).sms(); ++s) {
      pipe_busy_ns += group.gpu(g).sm(s).stats().pipe_busy.to_seconds() * 1e9;
    }
    CHECK(pipe_busy_ns / group.gpu(g).sms() / transfer_ns < 0.05);
    const HbmStats& memory = group.gpu(g).memory.stats();
    std::uint64_t hbm_bytes = 0;
    for (int op = 0; op < kOps; ++op) hbm_bytes += memory.bytes[op][1];
    CHECK(hbm_bytes / transfer_ns / config.hbm.bandwidth_GBps < 0.3);
  }
  // nccl-tests figures of this run, for the record.
  const auto bw =
      collective_bandwidth(CollectiveKind::ReduceScatter, n, spec.bytes, measured_ns * 1e-9);
  INFO("algbw " << bw.algbw_GBps << " GB/s, busbw " << bw.busbw_GBps << " GB/s");
  CHECK(bw.busbw_GBps < rate_GBps);
  CHECK(bw.busbw_GBps > 0.95 * rate_GBps);
}

// ---- Several rings (fully-connected) -----------------------------------------------------------

TEST_CASE("collective rings of every coprime stride leave each chunk at the stride-1 owner",
          "[collective][rings]") {
  CHECK(mesh_ring_strides(8, 8) == std::vector<int>{1, 3, 5, 7});
  CHECK(mesh_ring_strides(4, 8) == std::vector<int>{1, 3});
  CHECK(mesh_ring_strides(6, 8) == std::vector<int>{1, 5});
  CHECK(mesh_ring_strides(2, 8) == std::vector<int>{1});
  CHECK(mesh_ring_strides(8, 2) == std::vector<int>{1, 3});
  SystemConfig mesh = group_config(8, false, {"topology.kind=fully-connected"});
  CHECK(ring_strides_for(mesh, 16) == std::vector<int>{1, 3, 5, 7});
  CHECK(ring_strides_for(mesh, 3) == std::vector<int>{1, 3, 5});
  CHECK(ring_strides_for(group_config(8, false), 16) == std::vector<int>{1});  // a ring
  CHECK(ring_strides_for(group_config(8, false, {"topology.kind=switch"}), 16) ==
        std::vector<int>{1});
  CHECK(ring_strides_for(group_config(2, false, {"topology.kind=fully-connected"}), 16) ==
        std::vector<int>{1});
  apply_override(mesh, "workload.sm_rings=one");
  CHECK(ring_strides_for(mesh, 16) == std::vector<int>{1});
  for (int n = 2; n <= 16; ++n) {
    for (int s : mesh_ring_strides(n, n)) {
      INFO(n << " ranks, stride " << s);
      // Reduce-scatter: what rank r sends at step t is what r - s sent at t - 1 (plus its own),
      // every partial visits every rank once, and rank r ends with chunk r + 1 fully reduced.
      std::vector<std::vector<std::set<int>>> held(n, std::vector<std::set<int>>(n));
      for (int r = 0; r < n; ++r) {
        for (int c = 0; c < n; ++c) held[r][c] = {r};
      }
      for (int step = 0; step < n - 1; ++step) {
        auto next_held = held;
        for (int r = 0; r < n; ++r) {
          const int c = reduce_scatter_chunk(r, step, n, s);
          const int to = wrap(r + s, n);
          CHECK(reduce_scatter_chunk(to, step + 1, n, s) == c);
          for (int who : held[r][c]) next_held[to][c].insert(who);
        }
        held = next_held;
      }
      for (int r = 0; r < n; ++r) {
        CHECK(reduce_scatter_chunk(r, n - 1, n, s) == owner_chunk(r, n));
        CHECK(held[r][owner_chunk(r, n)].size() == static_cast<std::size_t>(n));
      }
      // All-gather: rank r starts from its owned chunk, forwards what arrived, ends with all.
      for (int r = 0; r < n; ++r) {
        CHECK(all_gather_chunk(r, 0, n, s) == owner_chunk(r, n));
        std::set<int> have = {owner_chunk(r, n)};
        for (int step = 0; step < n - 1; ++step) {
          const int arrives = all_gather_chunk(wrap(r - s, n), step, n, s);
          if (step + 1 < n - 1) CHECK(all_gather_chunk(r, step + 1, n, s) == arrives);
          CHECK(have.insert(arrives).second);
        }
      }
    }
  }
  // A stride sharing a factor with n does not visit every rank.
  CHECK_FALSE(hamiltonian_stride(2, 8));
  CHECK_FALSE(hamiltonian_stride(0, 8));
  CHECK_FALSE(hamiltonian_stride(8, 8));
  CHECK(hamiltonian_stride(5, 8));
}

TEST_CASE("collective reduce-scatter on 4 rings of 8 fully-connected GPUs, fp32, uneven",
          "[collective][golden][rings]") {
  golden({8, Check::ReduceScatter, ElementType::Fp32, FlagPlacement::Mailbox, 0, {1, 3, 5, 7}});
}
TEST_CASE("collective reduce-scatter on 2 rings of 4 fully-connected GPUs, fp16, uneven",
          "[collective][golden][rings]") {
  golden({4, Check::ReduceScatter, ElementType::Fp16, FlagPlacement::Mailbox, 0, {1, 3}});
}
TEST_CASE("collective all-gather on 4 rings of 8 fully-connected GPUs, fp16, uneven",
          "[collective][golden][rings]") {
  golden({8, Check::AllGather, ElementType::Fp16, FlagPlacement::Mailbox, 0, {1, 3, 5, 7}});
}
TEST_CASE("collective all-gather on 2 rings of 4 fully-connected GPUs, fp32, uneven",
          "[collective][golden][rings]") {
  golden({4, Check::AllGather, ElementType::Fp32, FlagPlacement::Mailbox, 0, {1, 3}});
}
TEST_CASE("collective all-reduce on 4 rings of 8 fully-connected GPUs, 1001 fp32 elements",
          "[collective][golden][rings]") {
  golden({8, Check::AllReduce, ElementType::Fp32, FlagPlacement::Mailbox, 1001, {1, 3, 5, 7}});
}
TEST_CASE("collective all-reduce on the stride-3 ring alone of 8 fully-connected GPUs",
          "[collective][golden][rings]") {
  golden({8, Check::AllReduce, ElementType::Fp16, FlagPlacement::Mailbox, 0, {3}});
}

namespace {

// One ring reduce-scatter of 8 MiB + 12 bytes of fp32 on the mi300x-8 preset with the topology
// `kind`, its rings as ring_strides_for picks them, timed; then every direction of every link
// carries exactly what the schedule puts on it: from u to u + d, the data and READY flags of the
// channels on the ring of stride d and the ACKs of those on the ring of stride n - d.
void check_link_bytes(const char* kind, const std::vector<int>& expected_strides) {
  SystemConfig config = load_system("mi300x-8");
  apply_override(config, std::string("topology.kind=") + kind);
  validate(config);
  TpGroup group("group", config);
  const int n = static_cast<int>(config.gpus);
  CollectiveSpec spec;
  spec.ranks = n;
  spec.bytes = (8ull << 20) + 12;
  spec.channels = 16;
  spec.ring_strides = ring_strides_for(config, spec.channels);
  REQUIRE(spec.ring_strides == expected_strides);
  const auto plan = plan_collective(config.address_map, spec);
  run_to_completion(group, ring_programs(plan, spec, {CollectiveOp::ReduceScatter}));

  const auto rings = static_cast<int>(spec.ring_strides.size());
  const std::int64_t elements = spec.elements();
  std::vector<std::uint64_t> data(static_cast<std::size_t>(n * n), 0);  // [from * n + to]
  for (int c = 0; c < spec.channels; ++c) {
    const int s = spec.ring_strides[static_cast<std::size_t>(ring_of_channel(c, rings))];
    const auto sends = static_cast<std::uint64_t>(
        channel_slices(elements, n, spec.channels, c, spec.slice_bytes / 4) * (n - 1));
    for (int g = 0; g < n; ++g) {
      std::uint64_t bytes = 0;  // every chunk's share but the owned one
      for (int chunk = 0; chunk < n; ++chunk) {
        if (chunk == owner_chunk(g, n)) continue;
        bytes +=
            4 * static_cast<std::uint64_t>(
                    channel_range(chunk_range(elements, n, chunk).size(), spec.channels, c).size());
      }
      data[static_cast<std::size_t>(g * n + wrap(g + s, n))] += bytes + 8 * sends;  // + READY
      data[static_cast<std::size_t>(g * n + wrap(g - s, n))] += 8 * sends;          // ACK
    }
  }
  std::vector<int> used_links(static_cast<std::size_t>(n), 0);  // directions carrying data
  for (int l = 0; l < group.links(); ++l) {
    const LinkEnds& ends = group.topology().links()[l];
    for (int direction = 0; direction < 2; ++direction) {
      const int from = direction == 0 ? ends.a : ends.b;
      const int to = direction == 0 ? ends.b : ends.a;
      INFO("link " << from << " -> " << to);
      const std::uint64_t payload = group.link(l).stats(direction).payload_bytes;
      CHECK(payload == data[static_cast<std::size_t>(from * n + to)]);
      if (payload > spec.bytes / 64) ++used_links[static_cast<std::size_t>(from)];
    }
  }
  // Every GPU sends its data on one link per ring.
  for (int g = 0; g < n; ++g) CHECK(used_links[static_cast<std::size_t>(g)] == rings);
}

}  // namespace

TEST_CASE("collective ring-sm on mi300x-8 (mesh) moves its data on 4 links of every GPU",
          "[collective][rings]") {
  check_link_bytes("fully-connected", {1, 3, 5, 7});
}
TEST_CASE("collective ring-sm on mi300x-8 made a ring keeps one ring, bytes per link",
          "[collective][rings]") {
  check_link_bytes("ring", {1});
}

TEST_CASE(
    "collective rings: a stride that is not coprime, too many rings or a gated ring are "
    "refused, by the planner and by the dispatcher",
    "[collective][rings]") {
  CollectiveSpec spec;
  spec.ranks = 8;
  spec.bytes = 8 * 4096;
  spec.channels = 4;
  spec.ring_strides = {1, 2};
  CHECK_THROWS_WITH(check_spec(spec), Contains("ring stride 2 must be in [1, 8) and coprime"));
  spec.ring_strides = {1, 3, 5, 7, 1};
  CHECK_THROWS_WITH(check_spec(spec), Contains("ring_strides: 5 rings must be in [1, 4]"));
  spec.ring_strides = {};
  CHECK_THROWS_WITH(check_spec(spec), Contains("ring_strides: 0 rings"));
  spec.direct = true;  // a direct collective has no rings
  CHECK_NOTHROW(check_spec(spec));

  const SystemConfig config = group_config(8, false, {"topology.kind=fully-connected"});
  spec.direct = false;
  spec.ring_strides = {1, 3};
  const auto plan = plan_collective(config.address_map, spec);
  CollectiveLaunch gated = ring_launch(plan, spec, 0, CollectiveOp::ReduceScatter, 1);
  REQUIRE(gated.more_rings.size() == 1);
  CHECK(gated.more_rings[0].stride == 3);
  CHECK(gated.more_rings[0].next_buffer == plan[3].buffer);
  CHECK(gated.more_rings[0].next_flags == plan[3].flags);
  CHECK(gated.more_rings[0].prev_flags == plan[5].flags);
  gated.gate = plan[0].dispatcher + reg::kMailbox + 1016;
  CHECK_THROWS_WITH(collective_program(gated), Contains("a gated reduce-scatter runs on one ring"));

  // Registers written by hand: the dispatcher refuses stride 2 (ring 1 of the even GPUs) and more
  // rings than channels (the odd ones).
  TpGroup group("group", config);
  auto programs = ring_programs(plan, spec, {CollectiveOp::AllGather});
  for (int g = 0; g < 8; ++g) {
    const std::uint64_t field =
        g % 2 == 0 ? reg::ring_register(1, reg::kRingStride) : reg::kCollRings;
    for (auto& command : programs[static_cast<std::size_t>(g)].commands) {
      if (command.address == plan[static_cast<std::size_t>(g)].dispatcher + field &&
          command.value != 1) {
        command.value = g % 2 == 0 ? 2 : 5;
      }
    }
  }
  group.load(programs);
  sc_core::sc_start();
  for (int g = 0; g < 8; ++g) {
    INFO("GPU " << g);
    CHECK_THAT(group.host(g).error(), Contains("bad collective (error 7)"));
    CHECK(group.gpu(g).dispatcher.dispatched().empty());
  }
}
