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
  int streams = 16;  // hbm_pattern_request sets the saturating count
  std::uint32_t access_bytes = 64 * 1024;
};
// Accesses of 64 KiB (4 KiB for random), as many streams of them as saturate the HBM
// (hbm_saturating_streams).
HbmPatternRequest hbm_pattern_request(const SystemConfig& config, const std::string& pattern);

// The streams that keep every queue of the HBM full, from the bandwidth-delay product: peak
// bandwidth x loaded latency / access size, the loaded latency being what an access that finds
// its queue full waits: the idle latency of a row miss (bank model: controller, tRP, tRCD, CL;
// simple model: hbm.latency_ns) plus the time the queue's hbm.queue_depth granules ahead of it
// take at the queue's share of the peak.
int hbm_saturating_streams(const HbmConfig& hbm, std::uint32_t access_bytes);

// Data-bus bytes per update byte: the simple model's nmc_update_occupancy; on the bank model one
// (bank placement: only the operand crosses the bus, as a write's data) or two (base-die: the
// bank's data comes out and the sum goes back in).
double hbm_update_bus_factor(const HbmConfig& hbm);

struct HbmPatternResult {
  std::uint64_t bytes = 0;
  double time_ns = 0;
  double measured_GBps = 0;
  double peak_GBps = 0;            // hbm.bandwidth_GBps
  double reachable_peak_GBps = 0;  // what the bank model's timing allows (config/dram_timing.h)
  std::string peak_limited_by;     // the timing key that caps it, "" if none
  double bus_GBps = 0;             // data-bus rate: updates x hbm_update_bus_factor
  double row_hit_rate = 0;
  double mean_latency_ns = 0;
  double simulated_ns = 0;
  nlohmann::json hbm;  // the memory controller's report
};

// Builds the group, streams 64 MiB through GPU 0's HBM and measures it. Throws
// std::runtime_error if an access failed or the group did not drain.
HbmPatternResult characterise_hbm(const HbmPatternRequest& request);

}  // namespace t3
