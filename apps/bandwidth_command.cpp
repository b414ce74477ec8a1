// The platform job: streams through one GPU's HBM (read, write, near-memory update) and across
// one link (remote write and read), and sets each measured rate beside the rate the
// configuration implies from first principles. With --pattern, characterises GPU 0's HBM alone
// under one access pattern: achieved bandwidth, fraction of peak, row-hit rate, mean latency.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "apps/cli.h"
#include "config/config_io.h"
#include "config/dram_timing.h"
#include "config/suggestion.h"
#include "experiments/hbm_characterisation.h"
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
       hbm / hbm_update_bus_factor(config.hbm)},
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

// One point of a characterisation: streams, rate, fractions of peak, row hits, latency.
nlohmann::json point_of(const HbmPatternRequest& request, const HbmPatternResult& r) {
  return {{"streams", request.streams},
          {"measured_GBps", r.measured_GBps},
          {"fraction_of_peak", r.measured_GBps / r.peak_GBps},
          {"bus_fraction_of_peak", r.bus_GBps / r.peak_GBps},
          {"row_hit_rate", r.row_hit_rate},
          {"mean_latency_ns", r.mean_latency_ns}};
}

void print_header(const HbmPatternRequest& request, const std::string& streams) {
  const SystemConfig& config = request.config;
  std::printf("t3sim bandwidth: system %s, hbm.model %s, pattern %s, %s streams of %u B\n",
              config.name.c_str(), config.hbm.model == HbmModel::Bank ? "bank" : "simple",
              request.pattern.c_str(), streams.c_str(), request.access_bytes);
  if (request.pattern == "update" && config.hbm.model == HbmModel::Bank) {
    std::printf("hbm.nmc.placement %s\n",
                config.hbm.nmc.placement == NmcPlacement::Bank ? "bank" : "base-die");
  }
  std::printf("\n%-10s %12s %10s %10s %10s %14s\n",
              streams.find(',') == std::string::npos ? "pattern" : "streams", "GB/s", "of peak",
              "bus", "row hits", "mean latency");
}

void print_row(const std::string& label, const nlohmann::json& point) {
  std::printf("%-10s %12.1f %9.1f%% %9.1f%% %9.1f%% %11.1f ns\n", label.c_str(),
              point["measured_GBps"].get<double>(), 100 * point["fraction_of_peak"].get<double>(),
              100 * point["bus_fraction_of_peak"].get<double>(),
              100 * point["row_hit_rate"].get<double>(), point["mean_latency_ns"].get<double>());
}

// The bank model's timing may not let any stream reach the pins' rate: say so beside it.
void print_reachable_peak(const SystemConfig& config, const HbmPatternResult& r) {
  if (config.hbm.model != HbmModel::Bank) return;
  std::printf(
      "reachable peak %.1f GB/s (%s), tCK %.4f ns\n", r.reachable_peak_GBps,
      r.peak_limited_by.empty() ? "the pins' rate" : ("capped by " + r.peak_limited_by).c_str(),
      dram_clock_ns(config.hbm));
}

// --streams with several counts: one run per count, each in a process of its own (SystemC
// elaborates once per process), printed as a loaded-latency curve.
int sweep_streams(const po::variables_map& values, const HbmPatternRequest& base,
                  const std::vector<int>& counts, int saturating) {
  std::vector<IsolatedJob> jobs;
  for (int streams : counts) {
    HbmPatternRequest request = base;
    request.streams = streams;
    jobs.push_back([request] { return point_of(request, characterise_hbm(request)); });
  }
  const std::vector<nlohmann::json> points = run_isolated(jobs, default_jobs());
  for (const nlohmann::json& point : points) {
    if (point.contains("error")) throw std::runtime_error(point["error"].get<std::string>());
  }
  print_header(base, values["streams"].as<std::string>());
  for (const nlohmann::json& point : points) {
    print_row(std::to_string(point["streams"].get<int>()), point);
  }
  std::printf("\npeak %.1f GB/s; %d streams saturate by the bandwidth-delay product\n",
              base.config.hbm.bandwidth_GBps, saturating);
  if (values.count("json")) {
    write_json(values["json"].as<std::string>(), {{"job", "bandwidth"},
                                                  {"pattern", base.pattern},
                                                  {"access_bytes", base.access_bytes},
                                                  {"saturating_streams", saturating},
                                                  {"peak_GBps", base.config.hbm.bandwidth_GBps},
                                                  {"points", points},
                                                  {"config", to_json(base.config)}});
  }
  return 0;
}

int characterise(const po::variables_map& values, const SystemConfig& config) {
  const std::string name = values["pattern"].as<std::string>();
  const auto& names = hbm_patterns();
  if (std::find(names.begin(), names.end(), name) == names.end()) {
    throw UsageError("--pattern: '" + name +
                     "' is not one of read, write, copy, mix, random, update" +
                     did_you_mean(name, names));
  }
  HbmPatternRequest request = hbm_pattern_request(config, name);
  if (values.count("access-bytes")) {
    request.access_bytes = values["access-bytes"].as<std::uint32_t>();
    request.streams = hbm_saturating_streams(config.hbm, request.access_bytes);
  }
  if (request.access_bytes < 1) throw UsageError("--access-bytes: must be at least 1");
  const int saturating = request.streams;
  const std::vector<int> counts = stream_counts(values, saturating);
  if (counts.size() > 1) return sweep_streams(values, request, counts, saturating);
  request.streams = counts.front();

  const auto wall_start = std::chrono::steady_clock::now();
  const HbmPatternResult r = characterise_hbm(request);
  const double wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  const nlohmann::json point = point_of(request, r);
  print_header(request, std::to_string(request.streams));
  print_row(name, point);
  std::printf("\npeak %.1f GB/s; simulated %.3f us in %.2f s of wall time\n", r.peak_GBps,
              r.simulated_ns / 1e3, wall_s);
  print_reachable_peak(config, r);
  if (values.count("json")) {
    nlohmann::json document = {{"job", "bandwidth"},
                               {"pattern", name},
                               {"access_bytes", request.access_bytes},
                               {"bytes", r.bytes},
                               {"time_ns", r.time_ns},
                               {"peak_GBps", r.peak_GBps},
                               {"reachable_peak_GBps", r.reachable_peak_GBps},
                               {"peak_limited_by", r.peak_limited_by},
                               {"hbm", r.hbm},
                               {"wall_time_s", wall_s},
                               {"config", to_json(config)}};
    document.update(point);
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
