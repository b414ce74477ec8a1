// The platform job: streams through one GPU's HBM (read, write, near-memory update) and across
// one link (remote write and read), and sets each measured rate beside the rate the
// configuration implies from first principles. With --pattern, characterises GPU 0's HBM alone
// under one access pattern: achieved bandwidth, fraction of peak, row-hit rate, mean latency.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>

#include "apps/cli.h"
#include "config/config_io.h"
#include "config/dram_timing.h"
#include "config/suggestion.h"
#include "harness/traffic_generator.h"
#include "models/system/tp_group.h"

namespace t3::cli {
namespace {

struct Phase {
  std::string name;
  TrafficPattern pattern;
  double expected_GBps;
};

// Payload rate of a link direction: header overhead, then the credit loop if it is tighter.
double link_expected_GBps(const LinkConfig& link) {
  const double payload = static_cast<double>(link.max_payload_bytes);
  const double wire = payload + static_cast<double>(link.header_bytes);
  const double line = link.bandwidth_GBps * payload / wire;
  const double serialise_ns = wire / link.bandwidth_GBps;
  const double credit_loop = static_cast<double>(link.credits) * payload /
                             (serialise_ns + 2 * link.latency_ns);  // bytes per ns = GB/s
  return std::min(line, credit_loop);
}

std::vector<Phase> phases(const SystemConfig& config, const AddressMap& map) {
  const std::uint64_t local = map.hbm_base(0);
  const double hbm = config.hbm.bandwidth_GBps;
  auto pattern = [](std::uint64_t address, std::uint64_t bytes, Op op, TrafficClass traffic_class,
                    int streams) {
    TrafficPattern p;
    p.address = address;
    p.bytes = bytes;
    p.transaction_bytes = 64 * 1024;
    p.extension.op = op;
    p.extension.traffic_class = traffic_class;
    p.extension.element = ElementType::Fp16;
    p.extension.cache_hint = CacheHint::Uncached;  // measure HBM and links, not the L2
    p.streams = streams;
    return p;
  };
  std::vector<Phase> list = {
      {"hbm read, gpu0 local", pattern(local, 64 << 20, Op::Read, TrafficClass::Compute, 16), hbm},
      {"hbm write, gpu0 local", pattern(local, 64 << 20, Op::Write, TrafficClass::Compute, 16),
       hbm},
      // An update moves its bytes twice: the simple model by nmc_update_occupancy, the bank
      // model by a read and a write of the bank.
      {"hbm update (NMC add), gpu0 local",
       pattern(local, 64 << 20, Op::Update, TrafficClass::Communication, 16),
       hbm / (config.hbm.model == HbmModel::Simple ? config.hbm.nmc_update_occupancy : 2.0)},
  };
  if (config.gpus > 1) {
    const std::uint64_t remote = map.hbm_base(1);
    const double link = link_expected_GBps(config.link);
    list.push_back({"link write, gpu0 -> gpu1 HBM",
                    pattern(remote, 16 << 20, Op::Write, TrafficClass::Communication, 16), link});
    list.push_back({"link read, gpu0 <- gpu1 HBM",
                    pattern(remote, 16 << 20, Op::Read, TrafficClass::Communication, 16), link});
  }
  return list;
}

// splitmix64: a stateless, deterministic scramble of a transaction's index into a random place.
std::uint64_t scramble(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// One characterisation pattern on GPU 0's HBM: 64 MiB of traffic from `streams` initiators
// (16 x 64 KiB in flight by default, several rows ahead on every pseudo-channel), or 4 KiB
// accesses from 16 times as many for random. Copy and mix alternate reads and writes
// transaction by transaction (copy reads one buffer and writes another, mix reads and writes one
// sequential stream); random reads 4 KiB at scattered places in the first 8 GiB (seeded by
// sim.seed); update applies near-memory adds.
TrafficPattern characterisation(const std::string& name, const SystemConfig& config,
                                std::uint64_t base, int streams, std::uint32_t access_bytes) {
  TrafficPattern p;
  p.address = base;
  p.bytes = 64ull << 20;
  p.transaction_bytes = access_bytes;
  p.streams = streams;
  p.extension.op = Op::Read;
  p.extension.traffic_class = TrafficClass::Compute;
  p.extension.element = ElementType::Fp16;
  p.extension.cache_hint = CacheHint::Uncached;
  const std::uint64_t size = access_bytes;
  if (name == "write") {
    p.extension.op = Op::Write;
  } else if (name == "update") {
    p.extension.op = Op::Update;
    p.extension.traffic_class = TrafficClass::Communication;
  } else if (name == "mix") {
    p.op_of = [size](std::uint64_t offset) { return (offset / size) % 2 ? Op::Write : Op::Read; };
  } else if (name == "copy") {
    const std::uint64_t destination = base + (1ull << 30);
    p.op_of = [size](std::uint64_t offset) { return (offset / size) % 2 ? Op::Write : Op::Read; };
    p.address_of = [=](std::uint64_t offset) {
      const std::uint64_t k = offset / size;
      return (k % 2 ? destination : base) + k / 2 * size;
    };
  } else if (name == "random") {
    const auto span = std::min<std::uint64_t>(8ull << 30, config.hbm.capacity_bytes) / size;
    const auto seed = static_cast<std::uint64_t>(config.sim.seed);
    p.address_of = [=](std::uint64_t offset) {
      return base + scramble(offset / size ^ (seed << 32)) % span * size;
    };
  } else if (name != "read") {
    throw UsageError("--pattern: '" + name +
                     "' is not one of read, write, copy, mix, random, update" +
                     did_you_mean(name, {"read", "write", "copy", "mix", "random", "update"}));
  }
  return p;
}

int characterise(const po::variables_map& values, const SystemConfig& config) {
  const std::string name = values["pattern"].as<std::string>();
  const bool random = name == "random";
  const int streams = values.count("streams") ? values["streams"].as<int>() : random ? 256 : 16;
  const auto access_bytes = values.count("access-bytes")
                                ? values["access-bytes"].as<std::uint32_t>()
                                : static_cast<std::uint32_t>(random ? 4096 : 64 * 1024);
  if (streams < 1) throw UsageError("--streams: must be at least 1");
  if (access_bytes < 1) throw UsageError("--access-bytes: must be at least 1");

  TpGroup group("group", config);
  TrafficGenerator generator("generator", Origin{0, 0});
  generator.socket.bind(group.gpu(0).router.in);
  generator.add(
      characterisation(name, config, group.address_map().hbm_base(0), streams, access_bytes));
  const auto wall_start = std::chrono::steady_clock::now();
  sc_core::sc_start();
  const double wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  group.check_drained();
  const TrafficResult& result = generator.results().front();
  if (!result.errors.empty()) throw std::runtime_error(result.errors.front());

  const nlohmann::json memory = group.gpu(0).memory.report();
  const double measured = result.bandwidth_GBps();
  const double peak = config.hbm.bandwidth_GBps;
  // An update moves its bytes over the DRAM bus twice (read, then write of the sums).
  const double bus_GBps = name == "update" ? 2 * measured : measured;
  const double row_hit_rate = memory.value("row_hit_rate", 0.0);
  const double latency_ns = result.mean_latency().to_seconds() * 1e9;
  std::printf("t3sim bandwidth: system %s, hbm.model %s, pattern %s, %d streams of %u B\n\n",
              config.name.c_str(), memory["model"].get<std::string>().c_str(), name.c_str(),
              streams, access_bytes);
  std::printf("%-10s %12s %10s %10s %10s %14s\n", "pattern", "GB/s", "of peak", "bus", "row hits",
              "mean latency");
  std::printf("%-10s %12.1f %9.1f%% %9.1f%% %9.1f%% %11.1f ns\n", name.c_str(), measured,
              100 * measured / peak, 100 * bus_GBps / peak, 100 * row_hit_rate, latency_ns);
  std::printf("\npeak %.1f GB/s; simulated %.3f us in %.2f s of wall time\n", peak,
              sc_core::sc_time_stamp().to_seconds() * 1e6, wall_s);
  // The bank model's timing may not let any stream reach the pins' rate: say so beside it.
  const DramPeak reachable = dram_reachable_peak(config.hbm);
  const bool bank = config.hbm.model == HbmModel::Bank;
  if (bank) {
    std::printf("reachable peak %.1f GB/s (%s), tCK %.4f ns\n", reachable.reachable_GBps,
                reachable.limited_by.empty() ? "the pins' rate"
                                             : ("capped by " + reachable.limited_by).c_str(),
                dram_clock_ns(config.hbm));
  }
  if (values.count("json")) {
    write_json(values["json"].as<std::string>(),
               {{"job", "bandwidth"},
                {"pattern", name},
                {"streams", streams},
                {"access_bytes", access_bytes},
                {"bytes", result.bytes},
                {"time_ns", (result.end - result.start).to_seconds() * 1e9},
                {"measured_GBps", measured},
                {"peak_GBps", peak},
                {"reachable_peak_GBps", bank ? reachable.reachable_GBps : peak},
                {"peak_limited_by", bank ? reachable.limited_by : std::string()},
                {"fraction_of_peak", measured / peak},
                {"bus_fraction_of_peak", bus_GBps / peak},
                {"row_hit_rate", row_hit_rate},
                {"mean_latency_ns", latency_ns},
                {"hbm", memory},
                {"wall_time_s", wall_s},
                {"config", to_json(config)}});
  }
  return 0;
}

}  // namespace

int bandwidth_command(const std::vector<std::string>& args) {
  po::options_description options = system_options();
  options.add_options()("json", po::value<std::string>(), "write the results as JSON to this file")(
      "pattern", po::value<std::string>(),
      "characterise GPU 0's HBM alone: read, write, copy, mix, random or update")(
      "streams", po::value<int>(), "with --pattern: accesses in flight (default 16, random 256)")(
      "access-bytes", po::value<std::uint32_t>(),
      "with --pattern: bytes per access (default 65536, random 4096)");
  const auto values = parse(args, options);
  if (print_help_if_asked(
          values, options,
          "usage: t3sim bandwidth [OPTIONS]\nStreams traffic through GPU 0's HBM and (with 2 GPUs "
          "or more) to GPU 1's HBM across\nthe link, and sets each measured rate beside "
          "the configured one; with --pattern,\ncharacterises GPU 0's HBM alone.\n")) {
    return 0;
  }
  const SystemConfig config = system_from(values);
  if (values.count("pattern")) return characterise(values, config);

  TpGroup group("group", config);
  TrafficGenerator generator("generator", Origin{0, 0});
  generator.socket.bind(group.gpu(0).router.in);
  const auto list = phases(config, group.address_map());
  for (const auto& phase : list) generator.add(phase.pattern);

  const auto wall_start = std::chrono::steady_clock::now();
  sc_core::sc_start();
  const double wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  group.check_drained();
  if (!generator.done()) throw std::runtime_error("the traffic generator did not finish");

  nlohmann::json results = nlohmann::json::array();
  std::printf("t3sim bandwidth: system %s, %lld GPUs, %s topology\n\n", config.name.c_str(),
              static_cast<long long>(config.gpus),
              to_json(config)["topology"]["kind"].get<std::string>().c_str());
  std::printf("%-36s %12s %12s %8s\n", "traffic", "measured", "expected", "ratio");
  std::printf("%-36s %12s %12s %8s\n", "", "GB/s", "GB/s", "");
  for (std::size_t i = 0; i < list.size(); ++i) {
    const TrafficResult& result = generator.results()[i];
    if (!result.errors.empty()) throw std::runtime_error(result.errors.front());
    const double measured = result.bandwidth_GBps();
    std::printf("%-36s %12.1f %12.1f %8.3f\n", list[i].name.c_str(), measured,
                list[i].expected_GBps, measured / list[i].expected_GBps);
    results.push_back({{"traffic", list[i].name},
                       {"bytes", result.bytes},
                       {"time_ns", (result.end - result.start).to_seconds() * 1e9},
                       {"measured_GBps", measured},
                       {"expected_GBps", list[i].expected_GBps},
                       {"mean_latency_ns", result.mean_latency().to_seconds() * 1e9}});
  }
  std::printf("\nsimulated %.3f us in %.2f s of wall time (%llu transactions)\n",
              sc_core::sc_time_stamp().to_seconds() * 1e6, wall_s,
              static_cast<unsigned long long>(generator.transactions()));

  if (values.count("json")) {
    write_json(values["json"].as<std::string>(),
               {{"job", "bandwidth"},
                {"results", results},
                {"stats", group.report()},
                {"simulated_ns", sc_core::sc_time_stamp().to_seconds() * 1e9},
                {"wall_time_s", wall_s},
                {"transactions", generator.transactions()},
                {"config", to_json(config)}});
  }
  return 0;
}

}  // namespace t3::cli
