// What a memory controller served, counted as it serves: bytes and requests by op and traffic
// class, each channel's bytes, bus time, row hits and misses, entry latency; and the part of
// its report these make.
#pragma once

#include <array>
#include <cstdint>

#include <nlohmann/json.hpp>

#include "models/hbm/memory_controller.h"
#include "models/hbm/service_timing.h"
#include "protocol/to_size.h"

namespace t3 {

class ServiceStatistics {
 public:
  // Counts into `stats`; `queues_per_channel` queues share each channel (its pseudo-channels).
  ServiceStatistics(HbmStats& stats, int channels, double queues_per_channel);
  // One entry served: `bytes` of `op` and `traffic_class` on `channel`, arrived at `arrival`.
  void served(Op op, TrafficClass traffic_class, int channel, std::uint32_t bytes,
              std::uint64_t arrival, const EntryService& service);
  // A whole request answered (its last entry served).
  void completed(Op op, TrafficClass traffic_class);
  // bytes, requests, channel_bytes, channel_busy_ns, utilisation, mean_entry_latency_ns,
  // rejected, and with the bank model row_hits, row_misses and row_hit_rate.
  void add_to_report(nlohmann::json& report, double elapsed_ns, bool banked) const;

 private:
  HbmStats& stats_;
  double resolution_ns_;
  double queues_per_channel_;
  std::array<double, kOps> latency_sum_ns_{};  // arrival to completion of served entries, by op
  std::array<std::uint64_t, kOps> served_entries_{};
};

// Inline: called for every entry served.
inline void ServiceStatistics::served(Op op, TrafficClass traffic_class, int channel,
                                      std::uint32_t bytes, std::uint64_t arrival,
                                      const EntryService& service) {
  stats_.row_hits += static_cast<std::uint64_t>(service.row_hits);
  stats_.row_misses += static_cast<std::uint64_t>(service.row_misses);
  stats_.column_bursts[static_cast<int>(op)] += static_cast<std::uint64_t>(service.bursts);
  stats_.channel_row_hits[to_size(channel)] += static_cast<std::uint64_t>(service.row_hits);
  stats_.channel_row_misses[to_size(channel)] += static_cast<std::uint64_t>(service.row_misses);
  latency_sum_ns_[static_cast<int>(op)] +=
      static_cast<double>(service.done - arrival) * resolution_ns_;
  ++served_entries_[static_cast<int>(op)];
  stats_.bytes[static_cast<int>(op)][static_cast<int>(traffic_class)] += bytes;
  stats_.channel_bytes[to_size(channel)] += bytes;
  // A channel's busy time is the mean over its queues' (pseudo-channels') data buses.
  stats_.channel_busy_ns[to_size(channel)] +=
      static_cast<double>(service.bus) * resolution_ns_ / queues_per_channel_;
}

inline void ServiceStatistics::completed(Op op, TrafficClass traffic_class) {
  ++stats_.requests[static_cast<int>(op)][static_cast<int>(traffic_class)];
}

}  // namespace t3
