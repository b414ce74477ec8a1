// NVLS collectives on the SMs through the switch's multicast group (protocol/ring.h, NVLS;
// `t3sim collective --impl nvls`): the switch's ld_reduce and multicast store on one access,
// functional goldens of reduce-scatter, all-gather and all-reduce (two launches, and one that
// reduces and multicasts each slice at once) on 2, 4 and 8 GPUs, the link traffic they cause, the
// one-launch all-reduce's use of both link directions at once, and the refusals. Each case builds
// at most one design.
#define SC_INCLUDE_DYNAMIC_PROCESSES
#include <catch2/catch.hpp>

#include <algorithm>
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
#include "tlm_interconnect/nvlink.h"
#include "workloads/collective_program.h"

using namespace t3;
using Catch::Contains;

namespace {

using namespace t3::ring_testing;

const std::vector<std::string> kNvlsSwitch = {"topology.kind=switch",
                                              "topology.switch_reductions=true"};

// A one-shot initiator into GPU 0's router: sends `payload` from a thread at time 0.
struct Requester : sc_core::sc_module {
  tlm_utils::simple_initiator_socket<Requester> socket{"socket"};
  explicit Requester(sc_core::sc_module_name name) : sc_core::sc_module(name) {}
  sc_core::sc_time answered;
  void send(tlm::tlm_generic_payload& payload) {
    sc_core::sc_spawn([this, &payload] {
      sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
      socket->b_transport(payload, delay);
      answered = sc_core::sc_time_stamp() + delay;
    });
  }
};

}  // namespace

TEST_CASE("switch ld_reduce returns the sum of every member's copy, in one response",
          "[nvls][switch]") {
  const int n = 4;
  const SystemConfig config = group_config(n, true, kNvlsSwitch);
  TpGroup group("group", config);
  Requester requester("requester");
  requester.socket.bind(group.gpu(0).router.in);
  REQUIRE(group.switch_reducer() != nullptr);
  const std::uint16_t multicast = group.switch_reducer()->add_group({0, 1, 2, 3});
  sc_core::sc_start(sc_core::SC_ZERO_TIME);

  const std::uint64_t offset = 0x10000;
  const std::size_t elements = 64;
  for (int g = 0; g < n; ++g) {
    Bytes bytes(elements * 2);
    for (std::size_t i = 0; i < elements; ++i) {
      store_element(bytes.data(), i, ElementType::Bf16, static_cast<float>(g * 10 + i % 7));
    }
    debug_write(group.gpu(g).router, group.address_map().hbm_base(g) + offset, bytes);
  }
  PayloadPool pool;
  T3Extension extension;
  extension.op = Op::Read;
  extension.element = ElementType::Bf16;
  extension.traffic_class = TrafficClass::Communication;
  extension.cache_hint = CacheHint::Uncached;
  extension.multicast = multicast;
  // The multicast address: the offset through GPU 1's window (it leaves GPU 0 for the switch).
  tlm::tlm_generic_payload* payload =
      make_payload(pool, group.address_map().hbm_base(1) + offset, elements * 2, extension);
  requester.send(*payload);
  sc_core::sc_start();

  REQUIRE(payload->is_response_ok());
  for (std::size_t i = 0; i < elements; ++i) {
    INFO("element " << i);
    CHECK(load_element(payload->get_data_ptr(), i, ElementType::Bf16) ==
          static_cast<float>(0 + 10 + 20 + 30 + 4 * (i % 7)));
  }
  const MulticastStats& stats = group.switch_reducer()->stats();
  CHECK(stats.ld_reduces == 1);
  CHECK(stats.member_accesses == 4);
  CHECK(stats.reduced_bytes == elements * 2);
  // Every member's copy crossed its own link towards the switch; the sum crossed GPU 0's link
  // once towards GPU 0; the requests carry no data.
  for (int l = 0; l < group.links(); ++l) {
    const int gpu = group.link_ends(l).a;  // GPU g's link to the switch: side A is the GPU
    INFO("link of GPU " << gpu);
    CHECK(group.link(l).stats(0).payload_bytes == elements * 2);
    CHECK(group.link(l).stats(1).payload_bytes == (gpu == 0 ? elements * 2 : 0));
    // One request from GPU 0; one member read towards every GPU; one answer, to GPU 0 only.
    CHECK(group.link(l).stats(0, LinkChannel::Request).transactions == (gpu == 0 ? 1 : 0));
    CHECK(group.link(l).stats(1, LinkChannel::Request).transactions == 1);
    CHECK(group.link(l).stats(1, LinkChannel::Response).packets == (gpu == 0 ? 1 : 0));
  }
  // The members were read together: the answer comes after two round trips over a link (GPU 0 to
  // the switch, the switch to a member), not the five that reading them one by one would take.
  const double link_ns = config.link.latency_ns;
  INFO("answered at " << requester.answered.to_seconds() * 1e9 << " ns, link latency " << link_ns);
  CHECK(requester.answered.to_seconds() * 1e9 < 8 * link_ns);
  payload->release();
}

TEST_CASE("switch multicast store writes every member", "[nvls][switch]") {
  const int n = 2;
  const SystemConfig config = group_config(n, true, kNvlsSwitch);
  TpGroup group("group", config);
  Requester requester("requester");
  requester.socket.bind(group.gpu(0).router.in);
  const std::uint16_t multicast = group.switch_reducer()->add_group({0, 1});
  sc_core::sc_start(sc_core::SC_ZERO_TIME);
  PayloadPool pool;
  T3Extension extension;
  extension.op = Op::Write;
  extension.cache_hint = CacheHint::Uncached;
  extension.multicast = multicast;
  const std::uint64_t offset = 0x2000;
  tlm::tlm_generic_payload* payload =
      make_payload(pool, group.address_map().hbm_base(1) + offset, 256, extension);
  for (int i = 0; i < 256; ++i) payload->get_data_ptr()[i] = static_cast<unsigned char>(i ^ 0x5a);
  requester.send(*payload);
  sc_core::sc_start();
  REQUIRE(payload->is_response_ok());
  for (int g = 0; g < n; ++g) {
    const Bytes written =
        debug_read(group.gpu(g).router, group.address_map().hbm_base(g) + offset, 256);
    for (int i = 0; i < 256; ++i) {
      INFO("GPU " << g << " byte " << i);
      CHECK(written[static_cast<std::size_t>(i)] == static_cast<unsigned char>(i ^ 0x5a));
    }
  }
  CHECK(group.switch_reducer()->stats().stores == 1);
  CHECK(group.switch_reducer()->stats().member_accesses == 2);
  payload->release();
}

TEST_CASE("a multicast access through a switch that does not reduce is refused by the memory",
          "[nvls][switch]") {
  const SystemConfig config = group_config(2, true, {"topology.kind=switch"});
  TpGroup group("group", config);
  CHECK(group.switch_reducer() == nullptr);
  Requester requester("requester");
  requester.socket.bind(group.gpu(0).router.in);
  sc_core::sc_start(sc_core::SC_ZERO_TIME);
  PayloadPool pool;
  T3Extension extension;
  extension.op = Op::Read;
  extension.cache_hint = CacheHint::Uncached;
  extension.multicast = 1;
  tlm::tlm_generic_payload* payload =
      make_payload(pool, group.address_map().hbm_base(1) + 0x1000, 64, extension);
  requester.send(*payload);
  sc_core::sc_start();
  CHECK(payload->get_response_status() == tlm::TLM_COMMAND_ERROR_RESPONSE);
  payload->release();
}

namespace {

struct GoldenCase {
  int gpus = 4;
  Check check = Check::ReduceScatter;
  ElementType element = ElementType::Fp32;
  std::int64_t elements = 0;  // of the whole buffer; 0: chunks of 6000
  int channels = 3;
  // All-reduce in one launch (CollectiveOp::NvlsAllReduce) instead of reduce-scatter then
  // all-gather.
  bool one_launch = false;
};

// The launches of a case: the check's ops, or the one-launch all-reduce.
std::vector<CollectiveOp> launches(const GoldenCase& gc) {
  if (gc.one_launch) return {CollectiveOp::NvlsAllReduce};
  return ops_of(gc.check);
}

// Halves of the collective the launches do (the one-launch all-reduce does both).
std::uint64_t halves(const std::vector<CollectiveOp>& ops) {
  std::uint64_t count = 0;
  for (CollectiveOp op : ops) count += op == CollectiveOp::NvlsAllReduce ? 2 : 1;
  return count;
}

// Preloads every rank's buffer, runs the NVLS launches, compares every element and checks the
// link traffic: each owned chunk crossed every member's link once and the owner's once more, per
// half of the collective, and nothing else but the arrival flags (once per launch).
void golden(const GoldenCase& gc) {
  const int n = gc.gpus;
  const SystemConfig config = group_config(n, true, kNvlsSwitch);
  TpGroup group("group", config);
  const std::int64_t total = gc.elements > 0 ? gc.elements : n * 6000;
  CollectiveSpec spec;
  spec.ranks = n;
  spec.bytes = bytes_of(gc.element, total);
  spec.element = gc.element;
  spec.channels = gc.channels;
  spec.slice_bytes = 4096;  // several slices per channel
  spec.direct = true;
  spec.nvls = true;
  std::vector<int> members;
  for (int g = 0; g < n; ++g) members.push_back(g);
  spec.multicast = group.switch_reducer()->add_group(members);
  const auto plan = plan_collective(config.address_map, spec, 8192);
  const std::vector<CollectiveOp> ops = launches(gc);
  std::vector<std::uint64_t> buffers;
  for (const auto& rank : plan) buffers.push_back(rank.buffer);
  run_golden(group, ring_programs(plan, spec, ops), buffers, gc.check, gc.element, total,
             owner_chunk);

  std::uint64_t data_expected = 0;
  for (int g = 0; g < n; ++g) {
    check_elements(group, buffers, g, gc.check, gc.element, total, owner_chunk);
    data_expected +=
        halves(ops) * static_cast<std::uint64_t>(n + 1) * spec.chunk_bytes(owner_chunk(g, n));
  }
  // The arrival flags: 8 bytes per channel, peer and launch, over both links of the route.
  const std::uint64_t flags_expected = ops.size() * static_cast<std::uint64_t>(gc.channels) * 8 *
                                       2 * static_cast<std::uint64_t>(n * (n - 1));
  CHECK(link_payload(group) == data_expected + flags_expected);
  const MulticastStats& stats = group.switch_reducer()->stats();
  CHECK((stats.ld_reduces > 0) == (gc.check != Check::AllGather));
  CHECK((stats.stores > 0) == (gc.check != Check::ReduceScatter));
  for (int g = 0; g < n; ++g) {
    CHECK(group.gpu(g).dispatcher.launches().size() == ops.size());
  }
}

}  // namespace

TEST_CASE("nvls reduce-scatter is exact: 2 GPUs, fp32", "[nvls]") {
  golden({2, Check::ReduceScatter});
}
TEST_CASE("nvls reduce-scatter is exact: 4 GPUs, bf16", "[nvls]") {
  golden({4, Check::ReduceScatter, ElementType::Bf16});
}
TEST_CASE("nvls reduce-scatter is exact: 8 GPUs, fp16, uneven chunks", "[nvls]") {
  golden({8, Check::ReduceScatter, ElementType::Fp16, 8 * 1001 + 5});
}
TEST_CASE("nvls all-gather is exact: 2 GPUs, bf16", "[nvls]") {
  golden({2, Check::AllGather, ElementType::Bf16});
}
TEST_CASE("nvls all-gather is exact: 4 GPUs, fp16, uneven chunks", "[nvls]") {
  golden({4, Check::AllGather, ElementType::Fp16, 4 * 777 + 3});
}
TEST_CASE("nvls all-gather is exact: 8 GPUs, fp32", "[nvls]") {
  golden({8, Check::AllGather});
}
TEST_CASE("nvls all-reduce is exact: 2 GPUs, fp16", "[nvls]") {
  golden({2, Check::AllReduce, ElementType::Fp16});
}
TEST_CASE("nvls all-reduce is exact: 4 GPUs, fp32, uneven chunks and empty channels", "[nvls]") {
  golden({4, Check::AllReduce, ElementType::Fp32, 4 * 777 + 3});
}
TEST_CASE("nvls all-reduce is exact: 8 GPUs, bf16", "[nvls]") {
  golden({8, Check::AllReduce, ElementType::Bf16});
}
TEST_CASE("nvls all-reduce is exact with fewer elements than ranks", "[nvls]") {
  golden({8, Check::AllReduce, ElementType::Fp32, 5});
}

// The all-reduce in one launch: each slice reduced by the switch and multicast at once.
TEST_CASE("nvls one-launch all-reduce is exact: 2 GPUs, fp32, uneven chunks", "[nvls]") {
  golden({2, Check::AllReduce, ElementType::Fp32, 2 * 3001 + 1, 3, true});
}
TEST_CASE("nvls one-launch all-reduce is exact: 4 GPUs, fp16, uneven chunks", "[nvls]") {
  golden({4, Check::AllReduce, ElementType::Fp16, 4 * 777 + 3, 3, true});
}
TEST_CASE("nvls one-launch all-reduce is exact: 8 GPUs, bf16, uneven chunks", "[nvls]") {
  golden({8, Check::AllReduce, ElementType::Bf16, 8 * 1001 + 5, 3, true});
}
TEST_CASE("nvls one-launch all-reduce is exact: 8 GPUs, fp32, empty channels", "[nvls]") {
  golden({8, Check::AllReduce, ElementType::Fp32, 8 * 2 + 3, 4, true});
}
TEST_CASE("nvls one-launch all-reduce is exact with fewer elements than ranks", "[nvls]") {
  golden({8, Check::AllReduce, ElementType::Fp16, 5, 3, true});
}

// The one-launch all-reduce overlaps its halves on the link: each GPU's link carries the members'
// copies towards the switch and the multicast sums back at the same time. Run one after the
// other, the halves keep one direction busy at a time (the reduce-scatter sends every member's
// copy of every chunk up, the all-gather sends it down): the run would take at least 2 S / rate,
// S the buffer, and each direction, carrying S (n + 1) / n in all, would be busy at most
// (n + 1) / 2n of it (62.5% at 4 GPUs).
TEST_CASE("nvls one-launch all-reduce keeps both directions of every link busy at once",
          "[nvls][timing]") {
  const int n = 4;
  const SystemConfig config = group_config(n, false, kNvlsSwitch);
  TpGroup group("group", config);
  CollectiveSpec spec;
  spec.ranks = n;
  spec.bytes = 8 << 20;
  spec.channels = 8;
  spec.direct = true;
  spec.nvls = true;
  spec.multicast = group.switch_reducer()->add_group({0, 1, 2, 3});
  const auto plan = plan_collective(config.address_map, spec);
  run_to_completion(group, ring_programs(plan, spec, {CollectiveOp::NvlsAllReduce}));

  sc_core::sc_time first = sc_core::sc_max_time(), last = sc_core::SC_ZERO_TIME;
  for (int g = 0; g < n; ++g) {
    const auto& records = group.gpu(g).dispatcher.launches();
    REQUIRE(records.size() == 1);
    first = std::min(first, records[0].doorbell);
    last = std::max(last, records[0].end);
  }
  const double time_ns = (last - first).to_seconds() * 1e9;
  // Payload per ns one direction carries, behind its 16-byte packet headers.
  const double payload = static_cast<double>(max_payload_for(config.link, UnitKind::Sm));
  const double rate = config.link.bandwidth_GBps * payload / (payload + config.link.header_bytes);
  const auto bytes = static_cast<double>(spec.bytes);
  INFO("all-reduce of " << bytes << " bytes took " << time_ns << " ns; a direction carries " << rate
                        << " bytes/ns");
  CHECK(time_ns < 2 * bytes / rate);            // the halves overlap
  CHECK(time_ns > bytes * (n + 1) / n / rate);  // and no direction beats its rate
  for (int l = 0; l < group.links(); ++l) {
    for (int direction = 0; direction < 2; ++direction) {
      INFO("link of GPU " << group.link_ends(l).a << ", direction " << direction);
      CHECK(group.link(l).stats(direction).busy_ns > 0.7 * time_ns);
    }
  }
}

TEST_CASE("nvls launches carry their op and multicast group", "[nvls]") {
  const SystemConfig config = group_config(4, false, kNvlsSwitch);
  CollectiveSpec spec;
  spec.ranks = 4;
  spec.bytes = 4 * 4096;
  spec.channels = 2;
  spec.direct = true;
  spec.nvls = true;
  spec.multicast = 3;
  const auto plan = plan_collective(config.address_map, spec);
  const CollectiveLaunch launch = ring_launch(plan, spec, 1, CollectiveOp::ReduceScatter, 1);
  CHECK(launch.op == CollectiveOp::NvlsReduceScatter);
  CHECK(launch.multicast == 3);
  CHECK(launch.peer_stride == plan[1].buffer - plan[0].buffer);
  CHECK(ring_launch(plan, spec, 0, CollectiveOp::AllGather, 2).op == CollectiveOp::NvlsAllGather);
  const CollectiveLaunch fused = ring_launch(plan, spec, 2, CollectiveOp::NvlsAllReduce, 3);
  CHECK(fused.op == CollectiveOp::NvlsAllReduce);
  CHECK(fused.multicast == 3);
  spec.nvls = false;
  CHECK_THROWS_WITH(ring_launch(plan, spec, 0, CollectiveOp::NvlsAllReduce, 1),
                    Contains("nvls all-reduce needs spec.nvls"));
  spec.nvls = true;
  spec.direct = false;
  CHECK_THROWS_WITH(plan_collective(config.address_map, spec), Contains("nvls"));
}

TEST_CASE("topology.switch_reductions is refused without a switch, by name", "[nvls][config]") {
  CHECK_THROWS_WITH(group_config(4, false, {"topology.switch_reductions=true"}),
                    Contains("topology.switch_reductions") && Contains("switch"));
  CHECK_THROWS_WITH(
      group_config(4, false, {"topology.kind=fully-connected", "topology.switch_reductions=true"}),
      Contains("topology.switch_reductions"));
  CHECK(load_system("h100-8").topology.switch_reductions);
  CHECK_FALSE(load_system("a100-8").topology.switch_reductions);
}
