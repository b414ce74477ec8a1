// One HBM characterisation: GPU 0's HBM alone under one access pattern, run and measured
// (achieved bandwidth, fraction of the stated and of the reachable peak, row-hit rate, mean
// latency). `t3sim bandwidth --pattern` parses options into an HbmPatternRequest and prints what
// characterise_hbm returns.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/system_config.h"

namespace t3 {

// The patterns: read, write, copy (read one buffer, write another), mix (reads and writes of
// one sequential stream), random (4 KiB reads at scattered places), update (near-memory adds).
const std::vector<std::string>& hbm_patterns();

// What to run, checked by the caller: `pattern` one of hbm_patterns(), streams and access_bytes
// at least 1 (hbm_pattern_request gives the defaults).
struct HbmPatternRequest {
  SystemConfig config;
  std::string pattern = "read";
  int streams = 16;
  std::uint32_t access_bytes = 64 * 1024;
};
// 16 streams of 64 KiB (several rows ahead on every pseudo-channel), or for random 256 of 4 KiB.
HbmPatternRequest hbm_pattern_request(const SystemConfig& config, const std::string& pattern);

struct HbmPatternResult {
  std::uint64_t bytes = 0;
  double time_ns = 0;
  double measured_GBps = 0;
  double peak_GBps = 0;            // hbm.bandwidth_GBps
  double reachable_peak_GBps = 0;  // what the bank model's timing allows (config/dram_timing.h)
  std::string peak_limited_by;     // the timing key that caps it, "" if none
  double bus_GBps = 0;             // an update moves its bytes over the bus twice
  double row_hit_rate = 0;
  double mean_latency_ns = 0;
  double simulated_ns = 0;
  nlohmann::json hbm;  // the memory controller's report
};

// Builds the group, streams 64 MiB through GPU 0's HBM and measures it. Throws
// std::runtime_error if an access failed or the group did not drain.
HbmPatternResult characterise_hbm(const HbmPatternRequest& request);

}  // namespace t3
