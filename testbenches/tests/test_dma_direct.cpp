// Direct collectives on the DMA engines with near-memory updates (workloads/dma_collective.h,
// DmaPattern::Direct): the send schedule, functional goldens of reduce-scatter, all-gather and
// all-reduce on 4 and 8 GPUs of fully-connected and switch fabrics, and the refusals. Each case
// builds at most one design.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include <systemc>

#include "config/config_io.h"
#include "harness/debug_access.h"
#include "models/dma/dma_engine.h"
#include "models/system/simulation.h"
#include "models/system/tp_group.h"
#include "testbenches/tests/ring_testing.h"
#include "tlm_interconnect/element.h"
#include "workloads/dma_collective.h"
#include "workloads/t3_plan.h"

using namespace t3;
using Catch::Contains;

namespace {

using namespace t3::ring_testing;

DmaCollectiveSpec direct_spec(int ranks, std::uint64_t bytes,
                              ElementType element = ElementType::Fp32) {
  DmaCollectiveSpec spec;
  spec.pattern = DmaPattern::Direct;
  spec.ranks = ranks;
  spec.bytes = bytes;
  spec.element = element;
  return spec;
}

struct GoldenCase {
  int gpus = 4;
  std::string topology = "fully-connected";
  Check check = Check::ReduceScatter;
  ElementType element = ElementType::Fp32;
  std::int64_t elements = 0;  // of the whole buffer; 0: chunks of 6000
};

// Preloads every rank's buffer, runs the programs, compares every element and checks that the
// engines sent exactly the schedule: no forwarding, every update applied at its owner, every
// byte on the links once per hop of its route.
void golden(const GoldenCase& gc) {
  const int n = gc.gpus;
  const SystemConfig config =
      group_config(n, true, {"topology.kind=" + gc.topology, "dma.chunk_bytes=1024"});
  TpGroup group("group", config);
  const std::int64_t total = gc.elements > 0 ? gc.elements : n * 6000;
  const std::int64_t eb = static_cast<std::int64_t>(bytes_of(gc.element, 1));
  const DmaCollectiveSpec spec = direct_spec(n, static_cast<std::uint64_t>(total * eb), gc.element);
  const std::vector<std::uint64_t> buffers = dma_ring_buffers(config, 8192);
  const std::vector<CollectiveOp> ops = ops_of(gc.check);
  run_golden(group, dma_collective_programs(config, buffers, spec, ops), buffers, gc.check,
             gc.element, total, t3_owned_chunk);

  std::uint64_t link_payload_expected = 0;
  for (int g = 0; g < n; ++g) {
    INFO("GPU " << g << " of " << n << " (" << gc.topology << ")");
    check_elements(group, buffers, g, gc.check, gc.element, total, t3_owned_chunk);

    // The engine rang every slice of every send once and forwarded nothing.
    std::uint64_t doorbells = 0, updated = 0, written = 0;
    for (CollectiveOp op : ops) {
      for (const DmaSend& send : dma_sends(spec, op, g)) {
        const DmaChunk chunk = dma_chunk(spec, send.position);
        doorbells += static_cast<std::uint64_t>(chunk.slices);
        (op == CollectiveOp::ReduceScatter ? updated : written) += chunk.bytes;
        link_payload_expected +=
            static_cast<std::uint64_t>(group.topology().hops(g, send.to)) * chunk.bytes;
      }
    }
    const DmaStats& dma = group.gpu(g).dma.stats();
    CHECK(dma.doorbells == doorbells);
    CHECK(dma.triggered == 0);
    CHECK(dma.errors == 0);
    CHECK(dma.bytes_updated == updated);
    CHECK(dma.bytes_written == written);
    // The owner's tracker counted every peer's contribution and nothing more.
    const Tracker& tracker = group.gpu(g).tracker;
    CHECK(tracker.stats().errors == 0);
    CHECK(tracker.stats().overcount == 0);
    CHECK(tracker.pending() == 0);
    // Near-memory updates here: the owned chunk from each of the n - 1 peers.
    const HbmStats& memory = group.gpu(g).memory.stats();
    const int comm = static_cast<int>(TrafficClass::Communication);
    const auto rs =
        static_cast<std::uint64_t>(std::count(ops.begin(), ops.end(), CollectiveOp::ReduceScatter));
    CHECK(memory.bytes[static_cast<int>(Op::Update)][comm] ==
          rs * static_cast<std::uint64_t>(n - 1) *
              spec.chunk_bytes(static_cast<int>(t3_owned_chunk(g, n))));
  }
  CHECK(link_payload(group) == link_payload_expected);
}

}  // namespace

TEST_CASE("direct dma schedule: every chunk reaches its owner once, every step a new peer",
          "[dma_direct]") {
  for (int n = 2; n <= kMaxDirectDmaRanks; ++n) {
    INFO(n << " ranks");
    const DmaCollectiveSpec spec = direct_spec(n, static_cast<std::uint64_t>(n) * 4096);
    // Reduce-scatter: rank g sends every chunk but its own, each to the chunk's owner.
    std::vector<std::multiset<int>> senders(static_cast<std::size_t>(n));
    for (int g = 0; g < n; ++g) {
      const auto sends = dma_sends(spec, CollectiveOp::ReduceScatter, g);
      REQUIRE(sends.size() == static_cast<std::size_t>(n - 1));
      std::set<int> positions;
      for (const DmaSend& send : sends) {
        CHECK(send.to != g);
        CHECK(t3_owned_chunk(send.to, n) == send.position);
        positions.insert(send.position);
        senders[static_cast<std::size_t>(send.position)].insert(g);
      }
      CHECK(positions.size() == static_cast<std::size_t>(n - 1));
      CHECK(positions.count(static_cast<int>(t3_owned_chunk(g, n))) == 0);
      CHECK(dma_received_chunks(CollectiveOp::ReduceScatter, g, n, DmaPattern::Direct) ==
            std::vector<int>{static_cast<int>(t3_owned_chunk(g, n))});
    }
    for (const auto& from : senders) CHECK(from.size() == static_cast<std::size_t>(n - 1));
    // At every step the ranks target n different peers (no owner hears from two at once).
    for (int k = 0; k < n - 1; ++k) {
      for (CollectiveOp op : {CollectiveOp::ReduceScatter, CollectiveOp::AllGather}) {
        std::set<int> targets;
        for (int g = 0; g < n; ++g) {
          targets.insert(dma_sends(spec, op, g)[static_cast<std::size_t>(k)].to);
        }
        CHECK(targets.size() == static_cast<std::size_t>(n));
      }
    }
    // All-gather: the owned chunk to every peer; each rank receives every other chunk once, in
    // the order the senders reach it.
    for (int g = 0; g < n; ++g) {
      const auto received = dma_received_chunks(CollectiveOp::AllGather, g, n, DmaPattern::Direct);
      REQUIRE(received.size() == static_cast<std::size_t>(n - 1));
      for (int k = 0; k < n - 1; ++k) {
        const int from = wrap(g - 1 - k, n);
        const DmaSend send = dma_sends(spec, CollectiveOp::AllGather, from)[k];
        CHECK(send.to == g);
        CHECK(send.position == received[static_cast<std::size_t>(k)]);
      }
    }
  }
}

TEST_CASE("direct dma slices share the 16 descriptors among the n - 1 sends", "[dma_direct]") {
  CHECK(dma_max_slices(direct_spec(2, 1 << 20)) == 16);
  CHECK(dma_max_slices(direct_spec(4, 1 << 20)) == 5);
  CHECK(dma_max_slices(direct_spec(8, 1 << 20)) == 2);
  CHECK(dma_max_slices(direct_spec(17, 17 << 20)) == 1);
  CHECK(dma_slices(direct_spec(4, 4 * 4 * 1000)) == 5);  // 1000 elements per chunk
  CHECK(dma_slices(direct_spec(4, 4 * 4 * 1001)) == 1);  // 7 x 11 x 13: nothing in [2, 5]
  DmaCollectiveSpec ring = direct_spec(8, 1 << 20);
  ring.pattern = DmaPattern::Ring;
  CHECK(dma_max_slices(ring) == 16);
}

TEST_CASE("direct dma refusals name what is wrong", "[dma_direct]") {
  DmaCollectiveSpec spec = direct_spec(18, 18 * 4096);
  CHECK_THROWS_WITH(check_dma_spec(spec), Contains("ranks = 18") && Contains("[2, 17]"));
  spec = direct_spec(8, 8 * 4096);
  spec.slices = 3;
  CHECK_THROWS_WITH(check_dma_spec(spec), Contains("slices = 3") && Contains("[0, 2]"));
  // A direct reduce-scatter counts n - 1 slices per tag: the 32-bit threshold binds sooner.
  spec = direct_spec(8, 8ull * 1200 * 1024 * 1024);
  spec.slices = 2;
  CHECK_THROWS_WITH(check_dma_spec(spec), Contains("threshold"));
  // On a ring a direct send would cross other GPUs' links.
  const SystemConfig config = group_config(4, false);
  spec = direct_spec(4, 4 * 4096);
  CHECK_THROWS_WITH(dma_collective_programs(config, dma_ring_buffers(config), spec,
                                            {CollectiveOp::ReduceScatter}),
                    Contains("topology.kind"));
}

TEST_CASE("direct dma reduce-scatter is exact: 4 GPUs fully connected, fp32", "[dma_direct]") {
  golden({4, "fully-connected", Check::ReduceScatter});
}
TEST_CASE("direct dma reduce-scatter is exact: 8 GPUs fully connected, fp16", "[dma_direct]") {
  golden({8, "fully-connected", Check::ReduceScatter, ElementType::Fp16});
}
TEST_CASE("direct dma reduce-scatter is exact: 4 GPUs behind a switch, bf16", "[dma_direct]") {
  golden({4, "switch", Check::ReduceScatter, ElementType::Bf16});
}
TEST_CASE("direct dma reduce-scatter is exact: 8 GPUs behind a switch, fp32", "[dma_direct]") {
  golden({8, "switch", Check::ReduceScatter});
}
TEST_CASE("direct dma all-gather is exact: 4 GPUs fully connected", "[dma_direct]") {
  golden({4, "fully-connected", Check::AllGather});
}
TEST_CASE("direct dma all-gather is exact: 8 GPUs behind a switch, fp16", "[dma_direct]") {
  golden({8, "switch", Check::AllGather, ElementType::Fp16});
}
TEST_CASE("direct dma all-reduce is exact: 8 GPUs fully connected", "[dma_direct]") {
  golden({8, "fully-connected", Check::AllReduce});
}
TEST_CASE("direct dma all-reduce is exact: 4 GPUs behind a switch", "[dma_direct]") {
  golden({4, "switch", Check::AllReduce});
}
TEST_CASE("direct dma all-reduce is exact with uneven chunks", "[dma_direct]") {
  golden({4, "fully-connected", Check::AllReduce, ElementType::Fp32, 4 * 777 + 3});
}
TEST_CASE("direct dma all-reduce is exact with fewer elements than ranks", "[dma_direct]") {
  golden({8, "switch", Check::AllReduce, ElementType::Fp32, 5});
}
