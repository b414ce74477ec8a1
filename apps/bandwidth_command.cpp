// The platform job: streams through one GPU's HBM (read, write, near-memory update) and across
// one link (remote write and read), and sets each measured rate beside the rate the
// configuration implies from first principles.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>

#include "apps/cli.h"
#include "config/config_io.h"
#include "models/system/tp_group.h"
#include "testbenches/traffic_generator.h"

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
      {"hbm update (NMC add), gpu0 local",
       pattern(local, 64 << 20, Op::Update, TrafficClass::Communication, 16),
       hbm / config.hbm.nmc_update_occupancy},
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

}  // namespace

int bandwidth_command(const std::vector<std::string>& args) {
  po::options_description options = system_options();
  options.add_options()("json", po::value<std::string>(), "write the results as JSON to this file");
  const auto values = parse(args, options);
  if (values.count("help")) {
    std::cout << "usage: t3sim bandwidth [OPTIONS]\n" << options;
    return 0;
  }
  const SystemConfig config = system_from(values);

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
