#include "experiments/hbm_characterisation.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "config/dram_timing.h"
#include "harness/traffic_generator.h"
#include "models/system/tp_group.h"

namespace t3 {
namespace {

// splitmix64: a stateless, deterministic scramble of a transaction's index into a random place.
std::uint64_t scramble(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// The request's pattern on GPU 0's HBM at `base`: 64 MiB of traffic from `streams` initiators.
// Copy and mix alternate reads and writes transaction by transaction; random reads at scattered
// places in the first 8 GiB (seeded by sim.seed); update applies near-memory adds.
TrafficPattern traffic_of(const HbmPatternRequest& request, std::uint64_t base) {
  const std::string& name = request.pattern;
  TrafficPattern p;
  p.address = base;
  p.bytes = 64ull << 20;
  p.transaction_bytes = request.access_bytes;
  p.streams = request.streams;
  p.extension.op = Op::Read;
  p.extension.traffic_class = TrafficClass::Compute;
  p.extension.element = ElementType::Fp16;
  p.extension.cache_hint = CacheHint::Uncached;
  const std::uint64_t size = request.access_bytes;
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
    const auto span = std::min<std::uint64_t>(8ull << 30, request.config.hbm.capacity_bytes) / size;
    const auto seed = static_cast<std::uint64_t>(request.config.sim.seed);
    p.address_of = [=](std::uint64_t offset) {
      return base + scramble(offset / size ^ (seed << 32)) % span * size;
    };
  } else if (name != "read") {
    throw std::invalid_argument("HBM pattern '" + name + "' is not one of hbm_patterns()");
  }
  return p;
}

}  // namespace

const std::vector<std::string>& hbm_patterns() {
  static const std::vector<std::string> names = {"read", "write",  "copy",
                                                 "mix",  "random", "update"};
  return names;
}

HbmPatternRequest hbm_pattern_request(const SystemConfig& config, const std::string& pattern) {
  HbmPatternRequest request;
  request.config = config;
  request.pattern = pattern;
  if (pattern == "random") request.access_bytes = 4096;
  request.streams = hbm_saturating_streams(config.hbm, request.access_bytes);
  return request;
}

int hbm_saturating_streams(const HbmConfig& hbm, std::uint32_t access_bytes) {
  const bool banked = hbm.model == HbmModel::Bank;
  double idle_ns = hbm.latency_ns;
  if (banked) {
    const DramTimingNs t = dram_timing_ns(hbm);
    idle_ns = hbm.bank.controller_latency_ns + t.rp + t.rcd_rd + t.cl;
  }
  const double queues = static_cast<double>(hbm.channels * (banked ? hbm.bank.pseudo_channels : 1));
  const double queue_bytes = static_cast<double>(hbm.queue_depth * hbm.interleave_bytes);
  const double drain_ns = queue_bytes / (hbm.bandwidth_GBps / queues);  // GB/s = B/ns
  const double in_flight = hbm.bandwidth_GBps * (idle_ns + drain_ns);
  return std::max(1, static_cast<int>(std::ceil(in_flight / access_bytes)));
}

double hbm_update_bus_factor(const HbmConfig& hbm) {
  if (hbm.model == HbmModel::Simple) return hbm.nmc_update_occupancy;
  return hbm.nmc.placement == NmcPlacement::Bank ? 1.0 : 2.0;
}

HbmPatternResult characterise_hbm(const HbmPatternRequest& request) {
  const SystemConfig& config = request.config;
  TpGroup group("group", config);
  TrafficGenerator generator("generator", Origin{0, 0});
  generator.socket.bind(group.gpu(0).router.in);
  generator.add(traffic_of(request, group.address_map().hbm_base(0)));
  sc_core::sc_start();
  group.check_drained();
  const TrafficResult& traffic = generator.results().front();
  if (!traffic.errors.empty()) throw std::runtime_error(traffic.errors.front());

  HbmPatternResult result;
  result.hbm = group.gpu(0).memory.report();
  result.bytes = traffic.bytes;
  result.time_ns = (traffic.end - traffic.start).to_seconds() * 1e9;
  result.measured_GBps = traffic.bandwidth_GBps();
  result.peak_GBps = config.hbm.bandwidth_GBps;
  result.reachable_peak_GBps = result.peak_GBps;
  if (config.hbm.model == HbmModel::Bank) {
    const DramPeak reachable = dram_reachable_peak(config.hbm);
    result.reachable_peak_GBps = reachable.reachable_GBps;
    result.peak_limited_by = reachable.limited_by;
  }
  result.bus_GBps = request.pattern == "update"
                        ? hbm_update_bus_factor(config.hbm) * result.measured_GBps
                        : result.measured_GBps;
  result.row_hit_rate = result.hbm.value("row_hit_rate", 0.0);
  result.mean_latency_ns = traffic.mean_latency().to_seconds() * 1e9;
  result.simulated_ns = sc_core::sc_time_stamp().to_seconds() * 1e9;
  return result;
}

}  // namespace t3
