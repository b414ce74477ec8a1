#include "models/system/simulation.h"

#include <chrono>
#include <stdexcept>

namespace t3 {

RunSummary run_to_completion(TpGroup& group, const std::vector<Program>& programs) {
  group.load(programs);
  return simulate(group);
}

RunSummary simulate(TpGroup& group) {
  // Wall time is reported beside the results, never used to compute them.
  const auto start = std::chrono::steady_clock::now();
  sc_core::sc_start();
  RunSummary summary;
  summary.wall_time_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  summary.simulated_ns = sc_core::sc_time_stamp().to_seconds() * 1e9;
  if (const std::string error = group.host_error(); !error.empty()) {
    throw std::runtime_error(error);
  }
  group.check_drained();
  return summary;
}

ComputeTraffic compute_traffic(const TpGroup& group) {
  ComputeTraffic traffic;
  const int compute = static_cast<int>(TrafficClass::Compute);
  std::uint64_t hits = 0;
  std::uint64_t lookups = 0;
  for (int g = 0; g < group.gpus(); ++g) {
    const HbmStats& memory = group.gpu(g).memory.stats();
    traffic.read_bytes += memory.bytes[static_cast<int>(Op::Read)][compute];
    traffic.write_bytes += memory.bytes[static_cast<int>(Op::Write)][compute] +
                           memory.bytes[static_cast<int>(Op::Update)][compute];
    const L2Stats& l2 = group.gpu(g).l2.stats();
    hits += l2.read_hit_sectors[compute] + l2.write_hit_sectors[compute];
    lookups += l2.read_hit_sectors[compute] + l2.write_hit_sectors[compute] +
               l2.read_miss_sectors[compute] + l2.write_miss_sectors[compute];
  }
  traffic.l2_hit_rate = lookups ? static_cast<double>(hits) / static_cast<double>(lookups) : 0.0;
  return traffic;
}

}  // namespace t3
