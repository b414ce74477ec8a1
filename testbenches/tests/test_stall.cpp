// Stalls end with a diagnosis: a run that can never finish stops within a bounded simulated time
// and its error names the blocks holding work, for each way a TP group can get stuck: a tracker
// threshold never reached, a flag never set, a link whose receiver never drains (its credits never
// come back). Each case builds one design and simulates once.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <regex>
#include <string>
#include <vector>

#include <systemc>

#include "config/config_io.h"
#include "harness/debug_access.h"
#include "harness/traffic_generator.h"
#include "models/system/simulation.h"
#include "models/system/tp_group.h"
#include "protocol/hex.h"
#include "protocol/mmio_map.h"
#include "protocol/ring.h"
#include "protocol/tracker_registers.h"
#include "testbenches/at_start.h"
#include "workloads/collective_program.h"
#include "workloads/dma_collective.h"

using namespace t3;
using Catch::Contains;
using Catch::StartsWith;

namespace {

// Short enough for a quick test, far longer than any gap between completions of these runs.
constexpr double kTimeoutNs = 100'000;

SystemConfig two_gpus(const std::vector<std::string>& overrides = {}) {
  SystemConfig config = load_system("t3-paper");
  apply_override(config, "gpus=2");
  apply_override(config, "sim.stall_timeout_ns=" + std::to_string(kTimeoutNs));
  for (const std::string& set : overrides) apply_override(config, set);
  validate(config);
  return config;
}

// The StallError message of a run that must stall (empty, with a failure, if it finished).
std::string stall_of(TpGroup& group) {
  try {
    simulate(group);
  } catch (const StallError& error) {
    return error.what();
  }
  FAIL("the run finished; it should have stalled");
  return {};
}

double now_ns() {
  return sc_core::sc_time_stamp().to_seconds() * 1e9;
}

void write32(Router& router, std::uint64_t address, std::uint32_t value) {
  debug_write(router, address,
              Bytes(reinterpret_cast<unsigned char*>(&value),
                    reinterpret_cast<unsigned char*>(&value) + sizeof value));
}

}  // namespace

TEST_CASE("a tracker threshold never reached stops the run naming the tiles and their counts",
          "[stall]") {
  // The DMA + NMC ring reduce-scatter, its regions programmed to fire at twice what arrives: no
  // slice ever completes, nothing is forwarded, and every rank waits for the others.
  const SystemConfig config = two_gpus();
  TpGroup group("group", config);
  DmaCollectiveSpec spec;
  spec.ranks = 2;
  spec.element = ElementType::Fp32;
  spec.bytes = 2 * 4 * 4096;
  std::vector<Program> programs = dma_collective_programs(config, dma_ring_buffers(config), spec,
                                                          {CollectiveOp::ReduceScatter});
  int doubled = 0;
  for (Program& program : programs) {
    for (HostCommand& command : program.commands) {
      if (command.note.find("threshold: ") != std::string::npos) {
        command.value *= 2;
        ++doubled;
      }
    }
  }
  REQUIRE(doubled > 0);
  group.load(programs);
  const std::string error = stall_of(group);
  INFO(error);
  CHECK(now_ns() <= 2 * kTimeoutNs + 50'000);  // within twice the timeout of the last progress
  CHECK_THAT(error, Contains("tiles below their threshold"));
  // Each tile received its one slice: half of the doubled threshold.
  const std::regex entry(
      "group\\.gpu1\\.tracker holds \\d+ tiles below their threshold: "
      "region \\d+ tag \\d+ at (\\d+) of (\\d+) bytes");
  std::smatch match;
  REQUIRE(std::regex_search(error, match, entry));
  CHECK(2 * std::stoull(match[1]) == std::stoull(match[2]));
  CHECK_THAT(error, Contains("group.gpu0.tracker holds"));
  CHECK_THAT(error, Contains("group.host0 waits in command"));
}

TEST_CASE("a flag never set stops the polling channels within the timeout, naming each flag",
          "[stall]") {
  // A ring reduce-scatter on the SMs with rank 1 never launched: rank 0's channels poll READY
  // flags nobody writes. That is a livelock (the polls keep the kernel busy), so only the
  // watchdog can end it.
  const SystemConfig config = two_gpus();
  TpGroup group("group", config);
  CollectiveSpec spec;
  spec.ranks = 2;
  spec.bytes = 2 * 4 * 1024;
  spec.channels = 2;
  const auto plan = plan_collective(config.address_map, spec);
  std::vector<Program> programs = ring_programs(plan, spec, {CollectiveOp::ReduceScatter});
  programs.resize(1);  // rank 1 not launched
  group.load(programs);
  const std::string error = stall_of(group);
  INFO(error);
  CHECK(now_ns() <= 2 * kTimeoutNs + 10'000);
  CHECK(now_ns() >= kTimeoutNs);
  CHECK_THAT(error, StartsWith("stall: nothing completed from "));
  for (int channel = 0; channel < 2; ++channel) {
    const std::string flag = hex(ready_flag(plan[0].flags, channel));
    CHECK_THAT(error, Contains(" channel " + std::to_string(channel) + " waits for the flag at " +
                               flag + " to reach count 1 of sequence 1 (reads count 0"));
  }
  CHECK_THAT(error, Contains("group.gpu0.dispatcher is still running a kernel"));
  CHECK_THAT(error, Contains("group.host0 waits in command"));
  // Polls are not progress, but they did go on until the watchdog stopped the run.
  std::uint64_t polls = 0;
  for (int sm = 0; sm < group.gpu(0).sms(); ++sm) polls += group.gpu(0).sm(sm).stats().flag_polls;
  CHECK(polls > 2 * static_cast<std::uint64_t>(kTimeoutNs / 1000));
}

TEST_CASE(
    "a link whose receiver never drains stops the run naming the direction, channel and credits",
    "[stall]") {
  // GPU 1's tracker has one entry, held by a tile that never completes; GPU 0 sends near-memory
  // updates of a second tile to GPU 1. Its memory controller cannot admit them (table full), so
  // they never leave GPU 1's side of link 0-1: in hardware its receive buffer stays full and
  // the credits of those packets never return.
  const SystemConfig config = two_gpus({"tracker.entries=1"});
  TpGroup group("group", config);
  const std::uint64_t region = group.address_map().hbm_base(1);
  const std::uint64_t tracker_base = group.address_map().mmio_base(1) + mmio_map::kTracker;
  AtStart program_tracker("program_tracker", [&] {
    Router& router = group.gpu(1).router;
    const std::uint64_t r0 = tracker_base + tracker::kRegionBase;
    write32(router, r0 + tracker::kBaseLow, static_cast<std::uint32_t>(region));
    write32(router, r0 + tracker::kBaseHigh, static_cast<std::uint32_t>(region >> 32));
    write32(router, r0 + tracker::kSizeLow, 1u << 20);
    write32(router, r0 + tracker::kThreshold, 1u << 20);  // no tile gets that many bytes
    write32(router, r0 + tracker::kControl, tracker::kEnable);
  });
  TrafficGenerator generator("generator", Origin{0, 0});
  generator.socket.bind(group.gpu(0).router.in);
  for (std::uint32_t tag : {1u, 2u}) {
    TrafficPattern pattern;
    pattern.address = region + (tag - 1) * 65536;
    pattern.bytes = 16384;
    pattern.transaction_bytes = 1024;
    pattern.streams = 4;
    pattern.extension.op = Op::Update;
    pattern.extension.element = ElementType::Fp32;
    pattern.extension.traffic_class = TrafficClass::Communication;
    pattern.extension.tag = tag;
    generator.add(pattern);
  }
  const std::string error = stall_of(group);
  INFO(error);
  CHECK(now_ns() < kTimeoutNs);  // a deadlock: the kernel ran out of events at once
  CHECK_THAT(error, Contains("deadlock"));
  // 4 streams of 1 KiB updates: 4 transactions of 4 packets (256-byte payloads) each.
  const std::regex link(
      "group\\.link0_1 a_to_b request channel: (\\d+) transactions \\((\\d+) packets\\) "
      "delivered and not drained by the receiver, (\\d+) of (\\d+) request credits");
  std::smatch match;
  REQUIRE(std::regex_search(error, match, link));
  CHECK(std::stoull(match[1]) == 4);
  CHECK(std::stoull(match[2]) ==
        static_cast<std::uint64_t>(4 * 1024 / config.link.max_payload_bytes));
  CHECK(std::stoull(match[3]) ==
        std::min<std::uint64_t>(std::stoull(match[2]), config.link.credits));
  CHECK(std::stoull(match[4]) == static_cast<std::uint64_t>(config.link.credits));
  // The updates hold request credits only: nothing is pending in the response channel.
  CHECK_THAT(error, !Contains("response channel"));
  CHECK_THAT(error, Contains("group.gpu1.memory holds"));
  CHECK_THAT(error, Contains("group.gpu1.tracker holds 1 tiles below their threshold"));
}

TEST_CASE("a normal run is not stopped by the watchdog and ends where sc_start() ends", "[stall]") {
  // A reduce-scatter whose run is several timeouts long: the watchdog slices it and must neither
  // stop it nor move its end time.
  // One request in flight per SM: a posted store completes once the link has carried what was
  // booked on it before (its acknowledgement too), so at 1 GB/s each request in flight adds
  // 16 us to every store's latency, and a single access must stay shorter than the timeout.
  SystemConfig config = two_gpus({"link.bandwidth_GBps=1", "sm.max_inflight_bytes=16384"});
  TpGroup group("group", config);
  CollectiveSpec spec;
  spec.ranks = 2;
  spec.bytes = 2 * 4 * 131072;
  spec.channels = 2;
  group.load(ring_programs(plan_collective(config.address_map, spec), spec,
                           {CollectiveOp::ReduceScatter}));
  const RunSummary run = simulate(group);
  CHECK(run.simulated_ns > 3 * kTimeoutNs);
  // The run ends with the hosts' last command, not at a slice boundary of the watchdog.
  double last_ns = 0;
  for (int g = 0; g < 2; ++g) {
    last_ns = std::max(last_ns, group.host(g).finish_times().back().to_seconds() * 1e9);
  }
  CHECK(run.simulated_ns == last_ns);
}

TEST_CASE("a wait longer than the timeout with nothing else to do is not a stall", "[stall]") {
  // The kernel is idle until the host's timed wake-up: nothing runs, so nothing is stuck.
  TpGroup group("group", two_gpus());
  HostCommand delay;
  delay.kind = HostCommand::Kind::Delay;
  delay.value = static_cast<std::uint32_t>(5 * kTimeoutNs);
  delay.note = "a long wait";
  group.load({Program{{delay}}});
  const RunSummary run = simulate(group);
  CHECK(run.simulated_ns == 5 * kTimeoutNs);
}
