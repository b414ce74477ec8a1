// The platform job: streams through one GPU's HBM (read, write, near-memory update) and across
// one link (remote write and read), and sets each measured rate beside the rate the
// configuration implies from first principles. With --pattern, characterises GPU 0's HBM alone
// under one access pattern: achieved bandwidth, fraction of peak, row-hit rate, mean latency.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "apps/cli.h"
#include "config/config_io.h"
#include "config/suggestion.h"
#include "experiments/isolated.h"
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

// Data-bus bytes per update byte: the simple model's nmc_update_occupancy; on the bank model one
// (bank placement: only the operand crosses the bus, as a write's data) or two (base-die: the
// bank's data comes out and the sum goes back in).
double update_bus_factor(const HbmConfig& hbm) {
  if (hbm.model == HbmModel::Simple) return hbm.nmc_update_occupancy;
  return hbm.nmc.placement == NmcPlacement::Bank ? 1.0 : 2.0;
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
      {"hbm update (NMC add), gpu0 local",
       pattern(local, 64 << 20, Op::Update, TrafficClass::Communication, 16),
       hbm / update_bus_factor(config.hbm)},
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

// The streams that keep every queue of the HBM full, from the bandwidth-delay product: peak
// bandwidth x loaded latency / access size, the loaded latency being what an access that finds
// its queue full waits: the idle latency of a row miss (bank model: controller, tRP, tRCD, CL;
// simple model: hbm.latency_ns) plus the time the queue's hbm.queue_depth granules ahead of it
// take at the queue's share of the peak.
int saturating_streams(const HbmConfig& hbm, std::uint32_t access_bytes) {
  const bool banked = hbm.model == HbmModel::Bank;
  const DramTimingConfig& t = hbm.bank.timing;
  const double idle_ns =
      banked ? hbm.bank.controller_latency_ns + t.rp_ns + t.rcd_rd_ns + t.cl_ns : hbm.latency_ns;
  const double queues = static_cast<double>(hbm.channels * (banked ? hbm.bank.pseudo_channels : 1));
  const double queue_bytes = static_cast<double>(hbm.queue_depth * hbm.interleave_bytes);
  const double drain_ns = queue_bytes / (hbm.bandwidth_GBps / queues);  // GB/s = B/ns
  const double in_flight = hbm.bandwidth_GBps * (idle_ns + drain_ns);
  return std::max(1, static_cast<int>(std::ceil(in_flight / access_bytes)));
}

// The concurrencies --streams names: a comma-separated list of positive counts.
std::vector<int> stream_counts(const po::variables_map& values, int saturating) {
  if (!values.count("streams")) return {saturating};
  std::vector<int> counts;
  std::stringstream list(values["streams"].as<std::string>());
  std::string item;
  while (std::getline(list, item, ',')) {
    std::size_t used = 0;
    int count = 0;
    try {
      count = std::stoi(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != item.size() || count < 1) {
      throw UsageError("--streams: '" + item + "' is not a count of at least 1");
    }
    counts.push_back(count);
  }
  if (counts.empty()) throw UsageError("--streams: give at least one count");
  return counts;
}

// One characterisation run of `name` with `streams` initiators, as a result document.
struct Measured {
  nlohmann::json point;   // streams, rate, row hits, latency
  nlohmann::json memory;  // GPU 0's memory report
  TrafficResult result;
};

Measured measure(const std::string& name, const SystemConfig& config, int streams,
                 std::uint32_t access_bytes) {
  TpGroup group("group", config);
  TrafficGenerator generator("generator", Origin{0, 0});
  generator.socket.bind(group.gpu(0).router.in);
  generator.add(
      characterisation(name, config, group.address_map().hbm_base(0), streams, access_bytes));
  sc_core::sc_start();
  group.check_drained();
  Measured m{{}, group.gpu(0).memory.report(), generator.results().front()};
  if (!m.result.errors.empty()) throw std::runtime_error(m.result.errors.front());
  const double measured = m.result.bandwidth_GBps();
  const double peak = config.hbm.bandwidth_GBps;
  const double bus_GBps = name == "update" ? update_bus_factor(config.hbm) * measured : measured;
  m.point = {{"streams", streams},
             {"measured_GBps", measured},
             {"fraction_of_peak", measured / peak},
             {"bus_fraction_of_peak", bus_GBps / peak},
             {"row_hit_rate", m.memory.value("row_hit_rate", 0.0)},
             {"mean_latency_ns", m.result.mean_latency().to_seconds() * 1e9}};
  return m;
}

void print_header(const std::string& name, const SystemConfig& config, const std::string& model,
                  const std::string& streams, std::uint32_t access_bytes) {
  std::printf("t3sim bandwidth: system %s, hbm.model %s, pattern %s, %s streams of %u B\n",
              config.name.c_str(), model.c_str(), name.c_str(), streams.c_str(), access_bytes);
  if (name == "update" && config.hbm.model == HbmModel::Bank) {
    std::printf("hbm.nmc.placement %s\n",
                config.hbm.nmc.placement == NmcPlacement::Bank ? "bank" : "base-die");
  }
  std::printf("\n");
}

void print_row(const std::string& label, const nlohmann::json& point) {
  std::printf("%-10s %12.1f %9.1f%% %9.1f%% %9.1f%% %11.1f ns\n", label.c_str(),
              point["measured_GBps"].get<double>(), 100 * point["fraction_of_peak"].get<double>(),
              100 * point["bus_fraction_of_peak"].get<double>(),
              100 * point["row_hit_rate"].get<double>(), point["mean_latency_ns"].get<double>());
}

// --streams with several counts: one run per count, each in a process of its own (SystemC
// elaborates once per process), printed as a loaded-latency curve.
int sweep_streams(const po::variables_map& values, const SystemConfig& config,
                  const std::string& name, const std::vector<int>& counts,
                  std::uint32_t access_bytes, int saturating) {
  std::vector<IsolatedJob> jobs;
  for (int streams : counts) {
    jobs.push_back([=] { return measure(name, config, streams, access_bytes).point; });
  }
  const std::vector<nlohmann::json> points = run_isolated(jobs, default_jobs());
  for (const nlohmann::json& point : points) {
    if (point.contains("error")) throw std::runtime_error(point["error"].get<std::string>());
  }
  const std::string model = config.hbm.model == HbmModel::Bank ? "bank" : "simple";
  print_header(name, config, model, values["streams"].as<std::string>(), access_bytes);
  std::printf("%-10s %12s %10s %10s %10s %14s\n", "streams", "GB/s", "of peak", "bus", "row hits",
              "mean latency");
  for (const nlohmann::json& point : points) {
    print_row(std::to_string(point["streams"].get<int>()), point);
  }
  std::printf("\npeak %.1f GB/s; %d streams saturate by the bandwidth-delay product\n",
              config.hbm.bandwidth_GBps, saturating);
  if (values.count("json")) {
    write_json(values["json"].as<std::string>(), {{"job", "bandwidth"},
                                                  {"pattern", name},
                                                  {"access_bytes", access_bytes},
                                                  {"saturating_streams", saturating},
                                                  {"peak_GBps", config.hbm.bandwidth_GBps},
                                                  {"points", points},
                                                  {"config", to_json(config)}});
  }
  return 0;
}

int characterise(const po::variables_map& values, const SystemConfig& config) {
  const std::string name = values["pattern"].as<std::string>();
  const bool random = name == "random";
  const auto access_bytes = values.count("access-bytes")
                                ? values["access-bytes"].as<std::uint32_t>()
                                : static_cast<std::uint32_t>(random ? 4096 : 64 * 1024);
  if (access_bytes < 1) throw UsageError("--access-bytes: must be at least 1");
  characterisation(name, config, 0, 1, access_bytes);  // rejects an unknown pattern first
  const int saturating = saturating_streams(config.hbm, access_bytes);
  const std::vector<int> counts = stream_counts(values, saturating);
  if (counts.size() > 1) {
    return sweep_streams(values, config, name, counts, access_bytes, saturating);
  }
  const int streams = counts.front();

  const auto wall_start = std::chrono::steady_clock::now();
  const Measured m = measure(name, config, streams, access_bytes);
  const double wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  const double peak = config.hbm.bandwidth_GBps;
  print_header(name, config, m.memory["model"].get<std::string>(), std::to_string(streams),
               access_bytes);
  std::printf("%-10s %12s %10s %10s %10s %14s\n", "pattern", "GB/s", "of peak", "bus", "row hits",
              "mean latency");
  print_row(name, m.point);
  std::printf("\npeak %.1f GB/s; simulated %.3f us in %.2f s of wall time\n", peak,
              sc_core::sc_time_stamp().to_seconds() * 1e6, wall_s);
  if (values.count("json")) {
    nlohmann::json document = {{"job", "bandwidth"},
                               {"pattern", name},
                               {"access_bytes", access_bytes},
                               {"bytes", m.result.bytes},
                               {"time_ns", (m.result.end - m.result.start).to_seconds() * 1e9},
                               {"peak_GBps", peak},
                               {"hbm", m.memory},
                               {"wall_time_s", wall_s},
                               {"config", to_json(config)}};
    document.update(m.point);
    write_json(values["json"].as<std::string>(), document);
  }
  return 0;
}

}  // namespace

int bandwidth_command(const std::vector<std::string>& args) {
  po::options_description options = system_options();
  options.add_options()("json", po::value<std::string>(), "write the results as JSON to this file")(
      "pattern", po::value<std::string>(),
      "characterise GPU 0's HBM alone: read, write, copy, mix, random or update")(
      "streams", po::value<std::string>(),
      "with --pattern: accesses in flight, or a comma-separated list of counts for a "
      "loaded-latency curve (rate, row hits and mean latency at each); default: the count that "
      "saturates the HBM, peak bandwidth x loaded latency / access size, the loaded latency "
      "being a row miss's idle latency plus the time a full queue (hbm.queue_depth granules) "
      "takes at its share of the peak")(
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
