// Runs programs on a group to completion and gathers what every result needs.
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

#include "models/system/tp_group.h"
#include "protocol/program.h"

namespace t3 {

struct RunSummary {
  double simulated_ns = 0;
  double wall_time_s = 0;
};

// Loads one program per GPU, simulates until nothing is left to do, and throws std::runtime_error
// naming the first host error, or every block still holding work (a deadlock).
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
