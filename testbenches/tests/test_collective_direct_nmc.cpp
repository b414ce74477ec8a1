// The direct NMC reduce-scatter on the SMs (protocol/ring.h, Direct NMC; `t3sim collective --impl
// direct-sm-nmc`): functional goldens on 2, 4 and 8 GPUs of fully-connected and switch fabrics,
// fp16 and fp32, uneven chunks; the link traffic and the near-memory updates it causes; the
// refusals. Each case builds at most one design.
#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include <systemc>

#include "config/config_io.h"
#include "experiments/collective_run.h"
#include "models/system/simulation.h"
#include "models/system/tp_group.h"
#include "testbenches/tests/ring_testing.h"
#include "workloads/collective_program.h"
#include "workloads/model_zoo.h"
#include "workloads/scenario.h"
#include "workloads/sublayer.h"

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

CollectiveSpec nmc_spec(const GoldenCase& gc, std::int64_t total) {
  CollectiveSpec spec;
  spec.ranks = gc.gpus;
  spec.bytes = bytes_of(gc.element, total);
  spec.element = gc.element;
  spec.channels = gc.channels;
  spec.slice_bytes = 4096;  // several slices per channel
  spec.direct = true;
  spec.nmc = true;
  return spec;
}

// Preloads every rank's buffer, runs the launches, compares every element, and checks that the
// data crossed each route from a peer to the owner once per op (nothing else but flags: two words
// per channel and peer for the reduce-scatter, arrival and completion, one for the all-gather's
// arrival) and that the reduce-scatter's data arrived as near-memory updates.
void golden(const GoldenCase& gc) {
  const int n = gc.gpus;
  const SystemConfig config = group_config(n, true, {"topology.kind=" + gc.topology});
  TpGroup group("group", config);
  const std::int64_t total = gc.elements > 0 ? gc.elements : n * 6000;
  const CollectiveSpec spec = nmc_spec(gc, total);
  const auto plan = plan_collective(config.address_map, spec, 8192);
  const std::vector<CollectiveOp> ops = ops_of(gc.check);
  std::vector<std::uint64_t> buffers;
  for (const auto& rank : plan) buffers.push_back(rank.buffer);
  run_golden(group, ring_programs(plan, spec, ops), buffers, gc.check, gc.element, total,
             owner_chunk);

  std::uint64_t data_expected = 0, flags_expected = 0, updated_expected = 0;
  const std::uint64_t flag_words_per_peer = ops.size() == 2 ? 3 : 2;  // RS: 2, AG: 1
  for (int g = 0; g < n; ++g) {
    check_elements(group, buffers, g, gc.check, gc.element, total, owner_chunk);
    for (int peer = 0; peer < n; ++peer) {
      if (peer == g) continue;
      data_expected += ops.size() * static_cast<std::uint64_t>(group.topology().hops(peer, g)) *
                       spec.chunk_bytes(owner_chunk(g, n));
      flags_expected += flag_words_per_peer * static_cast<std::uint64_t>(gc.channels) * 8 *
                        static_cast<std::uint64_t>(group.topology().hops(g, peer));
      updated_expected += spec.chunk_bytes(owner_chunk(g, n));
    }
  }
  CHECK(link_payload(group) == data_expected + flags_expected);
  std::uint64_t updated = 0;
  for (int g = 0; g < n; ++g) {
    updated += group.gpu(g).memory.stats().bytes[static_cast<int>(Op::Update)]
                                                [static_cast<int>(TrafficClass::Communication)];
  }
  CHECK(updated == updated_expected);
}

}  // namespace

TEST_CASE("direct sm nmc reduce-scatter is exact: 2 GPUs fully connected, fp32",
          "[sm_direct_nmc]") {
  golden({2, "fully-connected", Check::ReduceScatter});
}
TEST_CASE("direct sm nmc reduce-scatter is exact: 4 GPUs behind a switch, fp16",
          "[sm_direct_nmc]") {
  golden({4, "switch", Check::ReduceScatter, ElementType::Fp16});
}
TEST_CASE("direct sm nmc reduce-scatter is exact: 8 GPUs fully connected, fp16",
          "[sm_direct_nmc]") {
  golden({8, "fully-connected", Check::ReduceScatter, ElementType::Fp16});
}
TEST_CASE("direct sm nmc reduce-scatter is exact: 8 GPUs behind a switch, fp32",
          "[sm_direct_nmc]") {
  golden({8, "switch", Check::ReduceScatter});
}
TEST_CASE("direct sm nmc reduce-scatter is exact with uneven chunks and empty channels",
          "[sm_direct_nmc]") {
  golden({4, "fully-connected", Check::ReduceScatter, ElementType::Fp16, 4 * 777 + 3});
}
TEST_CASE("direct sm nmc reduce-scatter is exact with fewer elements than ranks",
          "[sm_direct_nmc]") {
  golden({8, "switch", Check::ReduceScatter, ElementType::Fp32, 5});
}
TEST_CASE("direct sm nmc all-reduce (its all-gather the direct one) is exact: 8 GPUs, fp16",
          "[sm_direct_nmc]") {
  golden({8, "fully-connected", Check::AllReduce, ElementType::Fp16, 8 * 1001 + 5});
}

TEST_CASE("direct sm nmc launches: the reduce-scatter pushes, the all-gather stays direct",
          "[sm_direct_nmc]") {
  const SystemConfig config = group_config(4, false, {"topology.kind=switch"});
  CollectiveSpec spec;
  spec.ranks = 4;
  spec.bytes = 4 * 4096;
  spec.channels = 2;
  spec.direct = true;
  spec.nmc = true;
  const auto plan = plan_collective(config.address_map, spec);
  const CollectiveLaunch launch = ring_launch(plan, spec, 3, CollectiveOp::ReduceScatter, 1);
  CHECK(launch.op == CollectiveOp::DirectNmcReduceScatter);
  CHECK(launch.algorithm() == CollectiveAlgorithm::DirectNmc);
  CHECK(launch.peer_stride == plan[1].buffer - plan[0].buffer);
  CHECK(launch.peer_flag_stride == plan[1].flags - plan[0].flags);
  CHECK(ring_launch(plan, spec, 0, CollectiveOp::AllGather, 2).op == CollectiveOp::DirectAllGather);
}

TEST_CASE("direct sm nmc refusals name what is wrong", "[sm_direct_nmc]") {
  CollectiveSpec spec;
  spec.ranks = 4;
  spec.bytes = 4 * 4096;
  spec.nmc = true;  // without direct
  CHECK_THROWS_WITH(check_spec(spec), Contains("nmc") && Contains("direct"));
  // On a ring topology the scenario that runs it names topology.kind.
  SystemConfig ring = load_system("t3-paper");
  apply_override(ring, "workload.tokens=1024");
  apply_override(ring, "gemm.tile_m=128");
  validate(ring);
  const GemmShape shape = sublayer_gemm(model("mega-gpt-2"), Sublayer::OutputProjection, 8, 1024);
  CHECK_THROWS_WITH(plan_scenario(ring, shape, Scenario::IdealRsSmNmc),
                    Contains("topology.kind") && Contains("ideal-rs-sm-nmc"));
}
