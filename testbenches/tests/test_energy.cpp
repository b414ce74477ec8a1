// The first-order energy estimate (experiments/energy.h): its components add up, an idle group
// spends only background energy, a read stream's DRAM energy agrees with DRAMPower's formulas
// worked here from the same command counts, energy grows with traffic, and T3 spends less than
// sequential where it moves less through DRAM.
#include <catch2/catch.hpp>

#include <string>

#include "config/config_io.h"
#include "experiments/energy.h"
#include "experiments/isolated.h"
#include "experiments/scenario_run.h"
#include "harness/traffic_generator.h"
#include "models/system/tp_group.h"
#include "testbenches/small_system.h"

using namespace t3;

namespace {

constexpr int kRead = static_cast<int>(Op::Read);

// tCK of a DDR pin: two beats a clock at the pins' rate (hbm.bandwidth_GBps over every pin).
double clock_ns(const SystemConfig& config) {
  const double pins = static_cast<double>(config.hbm.channels * config.hbm.bank.pseudo_channels *
                                          config.hbm.bank.bus_bits);
  return 2.0 / (config.hbm.bandwidth_GBps * 8.0 / pins);
}

// Every leaf of an energy object but "unit" and "total", summed.
double sum_of_components(const nlohmann::json& energy) {
  double sum = 0;
  for (const auto& [key, value] : energy.items()) {
    if (key == "unit" || key == "total") continue;
    if (value.is_object()) {
      for (const auto& [name, part] : value.items()) sum += part.get<double>();
    } else {
      sum += value.get<double>();
    }
  }
  return sum;
}

// What GPU 0 of `config` reading `bytes` (or idling `idle_ns` if 0) left in the counters:
// {"energy", "activations", "read_bursts", "elapsed_ns"}.
nlohmann::json read_stream(const SystemConfig& config, std::uint64_t bytes, double idle_ns = 0) {
  TpGroup group("group", config);
  TrafficGenerator generator("generator", Origin{0, 0});
  generator.socket.bind(group.gpu(0).router.in);
  if (bytes > 0) {
    TrafficPattern pattern;
    pattern.address = group.address_map().hbm_base(0);
    pattern.bytes = bytes;
    pattern.transaction_bytes = 64 * 1024;
    pattern.streams = 16;
    generator.add(pattern);
    sc_core::sc_start();
  } else {
    sc_core::sc_start(idle_ns, sc_core::SC_NS);
  }
  const HbmStats& stats = group.gpu(0).memory.stats();
  const double elapsed_ns = sc_core::sc_time_stamp().to_seconds() * 1e9;
  return {{"energy", energy_estimate(config, energy_activity(group), elapsed_ns, 0)},
          {"activations", stats.row_misses},
          {"read_bursts", stats.column_bursts[kRead]},
          {"elapsed_ns", elapsed_ns}};
}

// One scenario's result on `config`, for run_isolated.
nlohmann::json scenario_result(const SystemConfig& config, const GemmShape& shape,
                               Scenario scenario) {
  ScenarioRun run(config, plan_scenario(config, shape, scenario));
  run.run();
  return run.result();
}

SystemConfig one_gpu() {
  return small_system(1, SimMode::Timing);
}

double pseudo_channels(const SystemConfig& config) {
  return static_cast<double>(config.gpus * config.hbm.channels * config.hbm.bank.pseudo_channels);
}

// The share of the memspec's bus one pseudo-channel is: its currents are that share.
double share(const SystemConfig& config) {
  return static_cast<double>(config.hbm.bank.bus_bits) /
         static_cast<double>(config.energy.hbm.spec_bus_bits);
}

}  // namespace

TEST_CASE("an idle group spends background energy only: precharged standby and refresh",
          "[energy]") {
  const SystemConfig config = one_gpu();
  const nlohmann::json run = read_stream(config, 0, 20000);
  const nlohmann::json& e = run["energy"];
  for (const char* part : {"activate", "read", "write"}) CHECK(e["dram"][part] == 0.0);
  CHECK(e["nmc"]["column"] == 0.0);
  CHECK(e["nmc"]["alu"] == 0.0);
  CHECK(e["link"] == 0.0);
  CHECK(e["sm"] == 0.0);
  CHECK(e["l2"] == 0.0);
  // No bank ever opened: every pseudo-channel sat in precharged standby (IDD2N) all along, and
  // refreshed every tREFI ((IDD5 - IDD3N) tRFC each).
  const HbmEnergyConfig& c = config.energy.hbm;
  const double pc_ns = 20000.0 * pseudo_channels(config);
  const double standby_J = pc_ns * c.idd2n_mA * c.vdd_V * share(config) * 1e-12;
  const double tck = clock_ns(config);
  const double refresh_J = pc_ns / (config.hbm.bank.timing.refi * tck) * (c.idd5_mA - c.idd3n_mA) *
                           (config.hbm.bank.timing.rfc * tck) * c.vdd_V * share(config) * 1e-12;
  CHECK(e["dram"]["background"].get<double>() == Approx(standby_J).epsilon(1e-9));
  CHECK(e["dram"]["refresh"].get<double>() == Approx(refresh_J).epsilon(1e-9));
  CHECK(e["total"].get<double>() == Approx(standby_J + refresh_J).epsilon(1e-9));
}

TEST_CASE("a read stream's DRAM energy is within 10% of DRAMPower's formulas on its commands",
          "[energy]") {
  const SystemConfig config = one_gpu();
  const nlohmann::json run = read_stream(config, 8ull << 20);
  const auto acts = run["activations"].get<std::uint64_t>();
  const auto reads = run["read_bursts"].get<std::uint64_t>();
  REQUIRE(acts > 0);
  REQUIRE(reads * 32 == (8ull << 20));  // 32-byte bursts of a 64-bit BL4 pseudo-channel

  // DRAMPower (MemoryPowerModel.cc): ACT (IDD0 - IDD3N) tRAS, PRE (IDD0 - IDD2N) (tRC - tRAS),
  // RD (IDD4R - IDD3N) x burst cycles, REF (IDD5 - IDD3N) tRFC, active standby IDD3N, all x VDD.
  // One PRE per ACT; the stream keeps a row open in every pseudo-channel for the whole run.
  const HbmEnergyConfig& c = config.energy.hbm;
  const DramTimingConfig& clocks = config.hbm.bank.timing;
  const double tck = clock_ns(config);
  const double ras_ns = clocks.ras * tck, rc_ns = clocks.rc * tck;
  const double refi_ns = clocks.refi * tck, rfc_ns = clocks.rfc * tck;
  const double burst_ns = static_cast<double>(config.hbm.bank.burst_length) / 2.0 * tck;
  const double v = c.vdd_V * share(config);
  const double pc_ns = run["elapsed_ns"].get<double>() * pseudo_channels(config);
  const double drampower_pJ =
      static_cast<double>(acts) * (c.idd0_mA - c.idd3n_mA) * ras_ns * v +
      static_cast<double>(acts) * (c.idd0_mA - c.idd2n_mA) * (rc_ns - ras_ns) * v +
      static_cast<double>(reads) * (c.idd4r_mA - c.idd3n_mA) * burst_ns * v +
      pc_ns / refi_ns * (c.idd5_mA - c.idd3n_mA) * rfc_ns * v + pc_ns * c.idd3n_mA * v;
  double dram_J = 0;
  for (const auto& [part, joules] : run["energy"]["dram"].items()) dram_J += joules.get<double>();
  CHECK(dram_J == Approx(drampower_pJ * 1e-12).epsilon(0.10));
  // The stream's reads are the largest part, not the background: the check weighs them.
  CHECK(run["energy"]["dram"]["read"].get<double>() >
        run["energy"]["dram"]["background"].get<double>());
}

TEST_CASE("energy grows with traffic", "[energy]") {
  const SystemConfig config = one_gpu();
  // One elaboration per process: each stream in a child of its own.
  const auto runs = run_isolated({[&] { return read_stream(config, 1ull << 20); },
                                  [&] { return read_stream(config, 4ull << 20); }},
                                 1);
  REQUIRE(!runs.at(0).contains("error"));
  REQUIRE(!runs.at(1).contains("error"));
  const nlohmann::json& small = runs[0]["energy"];
  const nlohmann::json& large = runs[1]["energy"];
  CHECK(large["dram"]["read"].get<double>() == Approx(4 * small["dram"]["read"].get<double>()));
  CHECK(large["dram"]["activate"].get<double>() > small["dram"]["activate"].get<double>());
  CHECK(large["dram"]["background"].get<double>() > small["dram"]["background"].get<double>());
  CHECK(large["total"].get<double>() > small["total"].get<double>());
}

TEST_CASE("a scenario's energy components add up to its total", "[energy]") {
  const SystemConfig config = small_system(4, SimMode::Timing);
  const nlohmann::json energy = scenario_result(config, {256, 64, 64}, Scenario::T3)["energy"];
  CHECK(energy["unit"] == "J");
  for (const char* part : {"sm", "l2", "link"}) CHECK(energy[part].get<double>() > 0);
  CHECK(energy["nmc"]["alu"].get<double>() > 0);  // T3 adds in memory
  CHECK(energy["total"].get<double>() == Approx(sum_of_components(energy)).epsilon(1e-12));
  // The SMs' part is the GEMM's FLOPs at energy.sm.pJ_per_flop.
  CHECK(energy["sm"].get<double>() ==
        Approx(4 * 2.0 * 256 * 64 * 64 * config.energy.sm_pJ_per_flop * 1e-12));
}

TEST_CASE("T3 spends less energy than sequential where it moves less through DRAM", "[energy]") {
  const SystemConfig config = small_system(4, SimMode::Timing);
  const GemmShape shape{1024, 256, 128};
  const auto results =
      run_isolated({[&] { return scenario_result(config, shape, Scenario::Sequential); },
                    [&] { return scenario_result(config, shape, Scenario::T3); }},
                   1);
  REQUIRE(!results.at(0).contains("error"));
  REQUIRE(!results.at(1).contains("error"));
  const nlohmann::json& sequential = results[0];
  const nlohmann::json& t3 = results[1];
  REQUIRE(t3["dram_bytes"]["total"].get<double>() <
          sequential["dram_bytes"]["total"].get<double>());
  CHECK(t3["energy"]["total"].get<double>() < sequential["energy"]["total"].get<double>());
  // The DRAM's command energy (activate, read, write, near-memory columns) drops with the bytes.
  const auto traffic_J = [](const nlohmann::json& e) {
    return e["dram"]["activate"].get<double>() + e["dram"]["read"].get<double>() +
           e["dram"]["write"].get<double>() + e["nmc"]["column"].get<double>();
  };
  CHECK(traffic_J(t3["energy"]) < traffic_J(sequential["energy"]));
}
