// Runs programs on a group to completion and gathers what every result needs.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include <nlohmann/json.hpp>
#include <systemc>

#include "models/system/stall_error.h"
#include "models/system/tp_group.h"
#include "protocol/program.h"

namespace t3 {

struct RunSummary {
  double simulated_ns = 0;
  double wall_time_s = 0;
};

// How run_watched ended.
struct WatchedRun {
  bool stalled = false;          // stopped because `progress` did not change for a whole timeout
  sc_core::sc_time quiet_since;  // when the watchdog last saw `progress` change
};

// Runs the kernel until nothing is left to simulate, as sc_start() does, but in slices of
// `timeout` of simulated time, reading `progress` (a count that rises whenever useful work
// completes) after each: a slice in which the kernel was busy and the count did not move stops
// the run, so a livelock stops within 2 x timeout of the last progress. A slice in which nothing
// happened at all (every process waits for a later timed event) is a wait, not a stall. Slicing
// at a time boundary changes nothing simulated: the kernel resumes with the same events in the
// same order, and ends at the same time. A zero timeout runs sc_start().
WatchedRun run_watched(const sc_core::sc_time& timeout,
                       const std::function<std::uint64_t()>& progress);

// Loads one program per GPU, simulates until nothing is left to do, and throws std::runtime_error
// naming the first host error, or StallError naming every block still holding work (a deadlock,
// or no progress for the configured sim.stall_timeout_ns).
RunSummary run_to_completion(TpGroup& group, const std::vector<Program>& programs);
// The same, for a group whose programs are already loaded.
RunSummary simulate(TpGroup& group);

// DRAM bytes moved by each GPU's memory controller for compute traffic (reads, writes and
// near-memory updates), summed over the group.
struct ComputeTraffic {
  std::uint64_t read_bytes = 0;
  std::uint64_t write_bytes = 0;
  double l2_hit_rate = 0;  // sectors hit / sectors looked up, compute class, whole group
};
ComputeTraffic compute_traffic(const TpGroup& group);

}  // namespace t3
