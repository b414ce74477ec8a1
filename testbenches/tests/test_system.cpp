// The whole group: netlists for every topology, routing across GPUs, MMIO decode, errors and
// the end-of-run check for pending work.
#include <catch2/catch.hpp>

#include <cstring>

#include "config/config_io.h"
#include "harness/traffic_generator.h"
#include "models/system/tp_group.h"
#include "protocol/hex.h"

using namespace t3;
using Catch::Contains;

namespace {

SystemConfig system_with(std::int64_t gpus, const char* topology, bool functional) {
  SystemConfig config = load_system("t3-paper");
  apply_override(config, "gpus=" + std::to_string(gpus));
  apply_override(config, std::string("topology.kind=") + topology);
  if (functional) apply_override(config, "sim.mode=functional");
  validate(config);
  return config;
}

// Debug read through a router, so the access crosses the same routes as timed traffic.
std::uint32_t debug_read32(Router& router, std::uint64_t address) {
  tlm::tlm_generic_payload payload;
  std::uint32_t value = 0;
  payload.set_command(tlm::TLM_READ_COMMAND);
  payload.set_address(address);
  payload.set_data_ptr(reinterpret_cast<unsigned char*>(&value));
  payload.set_data_length(4);
  payload.set_streaming_width(4);
  REQUIRE(router.in.get_base_export()->transport_dbg(payload) == 4);
  return value;
}

TrafficPattern write_of(std::uint64_t address, std::uint64_t bytes, std::uint32_t value) {
  TrafficPattern pattern;
  pattern.address = address;
  pattern.bytes = bytes;
  pattern.transaction_bytes = 1024;
  pattern.extension.op = Op::Write;
  pattern.fill = [value](std::uint64_t, unsigned char* data, std::size_t n) {
    for (std::size_t i = 0; i + 4 <= n; i += 4) std::memcpy(data + i, &value, 4);
  };
  return pattern;
}

// Each source writes its own 4 KiB slot in every GPU (itself included), with a value naming both.
void check_all_pairs(const char* topology) {
  const int gpus = 5;
  TpGroup group("group", system_with(gpus, topology, true));
  std::vector<std::unique_ptr<TrafficGenerator>> generators;
  for (int source = 0; source < gpus; ++source) {
    generators.push_back(std::make_unique<TrafficGenerator>(
        ("gen" + std::to_string(source)).c_str(), Origin{static_cast<std::uint16_t>(source), 0}));
    generators.back()->socket.bind(group.gpu(source).router.in);
    for (int target = 0; target < gpus; ++target) {
      const std::uint64_t slot = group.address_map().hbm_base(target) + 4096 * source;
      generators.back()->add(write_of(slot, 4096, 1000 * source + target));
    }
  }
  sc_core::sc_start();
  group.check_drained();
  for (int source = 0; source < gpus; ++source) {
    REQUIRE(generators[source]->done());
    for (const auto& result : generators[source]->results()) CHECK(result.errors.empty());
    for (int target = 0; target < gpus; ++target) {
      const std::uint64_t slot = group.address_map().hbm_base(target) + 4096 * source;
      // Read back from a third GPU's router, so the debug path crosses the network too.
      Router& reader = group.gpu((source + 1) % gpus).router;
      CHECK(debug_read32(reader, slot) == static_cast<std::uint32_t>(1000 * source + target));
      CHECK(debug_read32(reader, slot + 4092) ==
            static_cast<std::uint32_t>(1000 * source + target));
    }
  }
  // Link traffic exists exactly where the topology puts it.
  std::uint64_t link_bytes = 0;
  for (int l = 0; l < group.links(); ++l) {
    link_bytes += group.link(l).stats(0).payload_bytes + group.link(l).stats(1).payload_bytes;
  }
  std::uint64_t expected_link_bytes = 0;
  for (int s = 0; s < gpus; ++s) {
    for (int t = 0; t < gpus; ++t) expected_link_bytes += 4096 * group.topology().hops(s, t);
  }
  CHECK(link_bytes == expected_link_bytes);
}

}  // namespace

// One case per topology: each case runs in its own process with a fresh SystemC kernel.
TEST_CASE("every GPU reaches every other GPU's HBM on a ring") {
  check_all_pairs("ring");
}
TEST_CASE("every GPU reaches every other GPU's HBM fully connected") {
  check_all_pairs("fully-connected");
}
TEST_CASE("every GPU reaches every other GPU's HBM through a switch") {
  check_all_pairs("switch");
}

TEST_CASE("MMIO decode reaches any GPU's device registers") {
  TpGroup group("group", system_with(4, "ring", false));
  TrafficGenerator generator("generator", Origin{0, 0});
  generator.socket.bind(group.gpu(0).router.in);
  const std::uint64_t gpu2 = group.address_map().mmio_base(2) + Gpu::kDeviceInfoOffset;

  TrafficPattern scratch = write_of(gpu2 + DeviceInfo::kScratch, 4, 0xabcd1234);
  scratch.transaction_bytes = 4;
  generator.add(scratch);
  TrafficPattern read_only = write_of(gpu2 + DeviceInfo::kId, 4, 1);
  read_only.transaction_bytes = 4;
  generator.add(read_only);
  TrafficPattern unmapped = write_of(gpu2 + 0x8000, 4, 1);  // no block there
  unmapped.transaction_bytes = 4;
  generator.add(unmapped);
  sc_core::sc_start();
  REQUIRE(generator.done());
  // Sockets are bound at the end of elaboration, so debug reads come after sc_start.
  CHECK(debug_read32(group.gpu(0).router, gpu2 + DeviceInfo::kId) == DeviceInfo::kMagic);
  CHECK(debug_read32(group.gpu(0).router, gpu2 + DeviceInfo::kGpuIndex) == 2u);
  CHECK(debug_read32(group.gpu(0).router, gpu2 + DeviceInfo::kGpuCount) == 4u);
  CHECK(debug_read32(group.gpu(0).router, gpu2 + DeviceInfo::kHbmBaseHigh) ==
        static_cast<std::uint32_t>(group.address_map().hbm_base(2) >> 32));
  CHECK(generator.results()[0].errors.empty());
  CHECK(debug_read32(group.gpu(3).router, gpu2 + DeviceInfo::kScratch) == 0xabcd1234u);
  REQUIRE(generator.results()[1].errors.size() == 1);
  CHECK_THAT(generator.results()[1].errors[0], Contains("TLM_COMMAND_ERROR_RESPONSE"));
  REQUIRE(generator.results()[2].errors.size() == 1);
  CHECK_THAT(generator.results()[2].errors[0], Contains("TLM_ADDRESS_ERROR_RESPONSE"));
  // A remote MMIO write crossed a link and took the configured register latency.
  CHECK(generator.results()[0].max_latency >=
        sc_core::sc_time(group.config().mmio.latency_ns + 2 * group.config().link.latency_ns,
                         sc_core::SC_NS));
}

TEST_CASE("an address nobody owns is answered with an error naming it") {
  TpGroup group("group", system_with(2, "ring", false));
  TrafficGenerator generator("generator", Origin{0, 0});
  generator.socket.bind(group.gpu(0).router.in);
  const std::uint64_t nowhere = group.address_map().hbm_base(2);  // GPU 2 does not exist
  generator.add(write_of(nowhere, 64, 0));
  sc_core::sc_start();
  REQUIRE(generator.results()[0].errors.size() == 1);
  CHECK_THAT(generator.results()[0].errors[0], Contains(hex(nowhere)));
  CHECK_THAT(generator.results()[0].errors[0], Contains("TLM_ADDRESS_ERROR_RESPONSE"));
  REQUIRE(group.gpu(0).router.address_errors().size() == 1);
  CHECK_THAT(group.gpu(0).router.address_errors()[0], Contains(hex(nowhere)));
}

TEST_CASE("a switch gives one GPU its whole link bandwidth toward any single peer") {
  // Fully connected splits the same per-GPU bandwidth over n-1 point-to-point links; a switch
  // lets a single pair use all of it (REFERENCES: NVSwitch machines).
  const int gpus = 4;
  const double per_gpu_GBps = 300.0;
  SystemConfig config = system_with(gpus, "switch", false);
  config.link.bandwidth_GBps = per_gpu_GBps;
  config.link.credits = 4096;  // cover the round trip, so the line rate is what limits
  TpGroup group("group", config);
  TrafficGenerator generator("generator", Origin{0, 0});
  generator.socket.bind(group.gpu(0).router.in);
  TrafficPattern pattern = write_of(group.address_map().hbm_base(1), 64 << 20, 0);
  pattern.transaction_bytes = 64 * 1024;
  pattern.streams = 32;
  generator.add(pattern);
  sc_core::sc_start();
  const double measured = generator.results()[0].bandwidth_GBps();
  const double efficiency = 256.0 / (256.0 + 16.0);
  CHECK(measured == Approx(per_gpu_GBps * efficiency).epsilon(0.02));
  CHECK(measured > 2.5 * per_gpu_GBps / (gpus - 1));  // far above a fully connected pair's share
}

TEST_CASE("work still pending when the simulation stops is reported as a deadlock") {
  TpGroup group("group", system_with(2, "ring", false));
  TrafficGenerator generator("generator", Origin{0, 0});
  generator.socket.bind(group.gpu(0).router.in);
  TrafficPattern pattern = write_of(group.address_map().hbm_base(0), 1 << 20, 0);
  pattern.extension.cache_hint = CacheHint::Uncached;  // straight into the controller's queues
  pattern.streams = 8;
  generator.add(pattern);
  sc_core::sc_start(200, sc_core::SC_NS);  // stop while requests are queued
  try {
    group.check_drained();
    FAIL("check_drained() accepted a run with queued requests");
  } catch (const std::runtime_error& error) {
    CHECK_THAT(error.what(), Contains("group.gpu0.memory holds"));
    CHECK_THAT(error.what(), Contains("deadlock"));
  }
}
