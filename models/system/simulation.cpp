#include "models/system/simulation.h"

#include <chrono>
#include <cmath>
#include <stdexcept>
#include <string>

namespace t3 {

RunSummary run_to_completion(TpGroup& group, const std::vector<Program>& programs) {
  group.load(programs);
  return simulate(group);
}

WatchedRun run_watched(const sc_core::sc_time& timeout,
                       const std::function<std::uint64_t()>& progress) {
  WatchedRun run;
  run.quiet_since = sc_core::sc_time_stamp();
  if (timeout == sc_core::SC_ZERO_TIME) {
    sc_core::sc_start();
    return run;
  }
  std::uint64_t seen = progress();
  sc_core::sc_time window = sc_core::sc_time_stamp();  // start of the next slice
  for (bool first = true;; first = false) {
    const sc_core::sc_time end = window + timeout;
    // A kernel idle until a timed event past this slice is waiting, not stuck (a long Delay):
    // the slice moves to that event without a check, and sc_start is not asked to run an empty
    // window (SystemC warns about that).
    if (!first && sc_core::sc_time_stamp() + sc_core::sc_time_to_pending_activity() > end) {
      window = sc_core::sc_time_stamp() + sc_core::sc_time_to_pending_activity();
      continue;
    }
    const sc_core::sc_time before = sc_core::sc_time_stamp();
    // Exit on starvation leaves the time at the last event, exactly where sc_start() ends.
    sc_core::sc_start(end - before, sc_core::SC_EXIT_ON_STARVATION);
    if (!sc_core::sc_pending_activity() || sc_core::sc_get_status() == sc_core::SC_STOPPED) {
      return run;
    }
    window = end;
    const std::uint64_t now = progress();
    // Stuck: time went on in this slice, more is due by the end of the next, and nothing
    // completed (a livelock). Activity followed by a long timed wait is not stuck.
    const sc_core::sc_time next = sc_core::sc_time_stamp() + sc_core::sc_time_to_pending_activity();
    if (now == seen && sc_core::sc_time_stamp() > before && next < end + timeout) {
      run.stalled = true;
      return run;
    }
    if (now != seen) run.quiet_since = end;
    seen = now;
  }
}

RunSummary simulate(TpGroup& group) {
  // Wall time is reported beside the results, never used to compute them.
  const auto start = std::chrono::steady_clock::now();
  const sc_core::sc_time timeout(group.config().sim.stall_timeout_ns, sc_core::SC_NS);
  const WatchedRun run = run_watched(timeout, [&group] { return group.progress(); });
  RunSummary summary;
  summary.wall_time_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  summary.simulated_ns = sc_core::sc_time_stamp().to_seconds() * 1e9;
  if (const std::string error = group.host_error(); !error.empty()) {
    throw std::runtime_error(error);
  }
  if (run.stalled) {
    const auto ns = [](const sc_core::sc_time& t) {
      return std::to_string(std::llround(t.to_seconds() * 1e9));
    };
    throw StallError("stall: nothing completed from " + ns(run.quiet_since) + " ns to " +
                     ns(sc_core::sc_time_stamp()) + " ns (sim.stall_timeout_ns = " + ns(timeout) +
                     "); still holding work: " + group.describe_pending());
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
