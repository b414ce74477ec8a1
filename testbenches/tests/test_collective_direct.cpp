// Direct collectives on the SMs (protocol/ring.h, Direct; `t3sim collective --impl direct-sm`):
// functional goldens of reduce-scatter, all-gather and all-reduce on 4 and 8 GPUs of
// fully-connected and switch fabrics, the link traffic they cause, and the refusals. Each case
// builds at most one design.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include <systemc>

#include "config/config_io.h"
#include "harness/debug_access.h"
#include "models/system/simulation.h"
#include "models/system/tp_group.h"
#include "testbenches/tests/ring_testing.h"
#include "tlm_interconnect/element.h"
#include "workloads/collective_program.h"

using namespace t3;
using Catch::Contains;

namespace {

using namespace t3::ring_testing;

struct GoldenCase {
  int gpus = 4;
  std::string topology = "fully-connected";
  Check check = Check::ReduceScatter;
  ElementType element = ElementType::Fp32;
  std::int64_t elements = 0;  // of the whole buffer; 0: chunks of 6000
  int channels = 3;
};

CollectiveSpec direct_spec(const GoldenCase& gc, std::int64_t total) {
  CollectiveSpec spec;
  spec.ranks = gc.gpus;
  spec.bytes = bytes_of(gc.element, total);
  spec.element = gc.element;
  spec.channels = gc.channels;
  spec.slice_bytes = 4096;  // several slices per channel
  spec.direct = true;
  return spec;
}

// Preloads every rank's buffer, runs the direct launches, compares every element and checks the
// link traffic: each owned chunk crossed every route from a peer once per op, and nothing else
// but flags.
void golden(const GoldenCase& gc) {
  const int n = gc.gpus;
  const SystemConfig config = group_config(n, true, {"topology.kind=" + gc.topology});
  TpGroup group("group", config);
  const std::int64_t total = gc.elements > 0 ? gc.elements : n * 6000;
  const CollectiveSpec spec = direct_spec(gc, total);
  const auto plan = plan_collective(config.address_map, spec, 8192);
  const std::vector<CollectiveOp> ops = ops_of(gc.check);
  std::vector<std::uint64_t> buffers;
  for (const auto& rank : plan) buffers.push_back(rank.buffer);
  run_golden(group, ring_programs(plan, spec, ops), buffers, gc.check, gc.element, total,
             owner_chunk);

  // Link payload: each owned chunk once per op over every link of its route, plus the 8-byte
  // arrival flags (one per channel, peer and op, over every link of the route).
  std::uint64_t data_expected = 0, flags_expected = 0;
  for (int g = 0; g < n; ++g) {
    check_elements(group, buffers, g, gc.check, gc.element, total, owner_chunk);
    for (int peer = 0; peer < n; ++peer) {
      if (peer == g) continue;
      data_expected += ops.size() * static_cast<std::uint64_t>(group.topology().hops(peer, g)) *
                       spec.chunk_bytes(owner_chunk(g, n));
      flags_expected += ops.size() * static_cast<std::uint64_t>(gc.channels) * 8 *
                        static_cast<std::uint64_t>(group.topology().hops(g, peer));
    }
  }
  CHECK(link_payload(group) == data_expected + flags_expected);
}

}  // namespace

TEST_CASE("direct sm reduce-scatter is exact: 4 GPUs fully connected, fp32", "[sm_direct]") {
  golden({4, "fully-connected", Check::ReduceScatter});
}
TEST_CASE("direct sm reduce-scatter is exact: 8 GPUs fully connected, fp16", "[sm_direct]") {
  golden({8, "fully-connected", Check::ReduceScatter, ElementType::Fp16});
}
TEST_CASE("direct sm reduce-scatter is exact: 4 GPUs behind a switch, bf16", "[sm_direct]") {
  golden({4, "switch", Check::ReduceScatter, ElementType::Bf16});
}
TEST_CASE("direct sm reduce-scatter is exact: 8 GPUs behind a switch, fp32", "[sm_direct]") {
  golden({8, "switch", Check::ReduceScatter});
}
TEST_CASE("direct sm all-gather is exact: 4 GPUs behind a switch", "[sm_direct]") {
  golden({4, "switch", Check::AllGather});
}
TEST_CASE("direct sm all-gather is exact: 8 GPUs fully connected, fp16", "[sm_direct]") {
  golden({8, "fully-connected", Check::AllGather, ElementType::Fp16});
}
TEST_CASE("direct sm all-reduce is exact: 4 GPUs fully connected", "[sm_direct]") {
  golden({4, "fully-connected", Check::AllReduce});
}
TEST_CASE("direct sm all-reduce is exact: 8 GPUs behind a switch", "[sm_direct]") {
  golden({8, "switch", Check::AllReduce});
}
TEST_CASE("direct sm all-reduce is exact with uneven chunks and empty channels", "[sm_direct]") {
  golden({4, "switch", Check::AllReduce, ElementType::Fp32, 4 * 777 + 3});
}
TEST_CASE("direct sm all-reduce is exact with fewer elements than ranks", "[sm_direct]") {
  golden({8, "fully-connected", Check::AllReduce, ElementType::Fp32, 5});
}

TEST_CASE("direct sm launches carry the op and the peer strides", "[sm_direct]") {
  const SystemConfig config = group_config(4, false, {"topology.kind=switch"});
  CollectiveSpec spec;
  spec.ranks = 4;
  spec.bytes = 4 * 4096;
  spec.channels = 2;
  spec.direct = true;
  const auto plan = plan_collective(config.address_map, spec);
  const CollectiveLaunch launch = ring_launch(plan, spec, 3, CollectiveOp::ReduceScatter, 1);
  CHECK(launch.op == CollectiveOp::DirectReduceScatter);
  CHECK(launch.peer_stride == plan[1].buffer - plan[0].buffer);
  CHECK(launch.peer_flag_stride == plan[1].flags - plan[0].flags);
  CHECK(plan[0].receive_bytes == 0);  // no FIFO
  CHECK(ring_launch(plan, spec, 0, CollectiveOp::AllGather, 2).op == CollectiveOp::DirectAllGather);
}

TEST_CASE("direct sm refusals name what is wrong", "[sm_direct]") {
  const SystemConfig config = group_config(8, false, {"topology.kind=switch"});
  CollectiveSpec spec;
  spec.ranks = 8;
  spec.bytes = 8 * 4096;
  spec.direct = true;
  // 8 bytes of flags per channel and rank: 17 channels of 8 ranks overflow the 1 KiB mailbox.
  spec.channels = direct_mailbox_channels(8) + 1;
  CHECK(direct_mailbox_channels(8) == 16);
  CHECK_THROWS_WITH(plan_collective(config.address_map, spec),
                    Contains("17 channels") && Contains("mailbox") && Contains("direct"));
}
