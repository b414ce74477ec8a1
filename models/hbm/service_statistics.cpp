#include "models/hbm/service_statistics.h"

namespace t3 {

namespace {

int index(Op op) {
  return static_cast<int>(op);
}
int index(TrafficClass traffic_class) {
  return static_cast<int>(traffic_class);
}

}  // namespace

ServiceStatistics::ServiceStatistics(HbmStats& stats, int channels, double queues_per_channel)
    : stats_(stats),
      resolution_ns_(sc_core::sc_get_time_resolution().to_seconds() * 1e9),
      queues_per_channel_(queues_per_channel) {
  stats_.channel_bytes.assign(static_cast<std::size_t>(channels), 0);
  stats_.channel_busy_ns.assign(static_cast<std::size_t>(channels), 0.0);
}

void ServiceStatistics::served(Op op, TrafficClass traffic_class, int channel, std::uint32_t bytes,
                               std::uint64_t arrival, const EntryService& service) {
  stats_.row_hits += static_cast<std::uint64_t>(service.row_hits);
  stats_.row_misses += static_cast<std::uint64_t>(service.row_misses);
  latency_sum_ns_[index(op)] += static_cast<double>(service.done - arrival) * resolution_ns_;
  ++served_entries_[index(op)];
  stats_.bytes[index(op)][index(traffic_class)] += bytes;
  stats_.channel_bytes[static_cast<std::size_t>(channel)] += bytes;
  // A channel's busy time is the mean over its queues' (pseudo-channels') data buses.
  stats_.channel_busy_ns[static_cast<std::size_t>(channel)] +=
      static_cast<double>(service.bus) * resolution_ns_ / queues_per_channel_;
}

void ServiceStatistics::completed(Op op, TrafficClass traffic_class) {
  ++stats_.requests[index(op)][index(traffic_class)];
}

void ServiceStatistics::add_to_report(nlohmann::json& j, double elapsed_ns, bool banked) const {
  if (banked) {
    const std::uint64_t opened = stats_.row_hits + stats_.row_misses;
    j["row_hits"] = stats_.row_hits;
    j["row_misses"] = stats_.row_misses;
    j["row_hit_rate"] = opened > 0 ? static_cast<double>(stats_.row_hits) / opened : 0.0;
  }
  for (Op op : {Op::Read, Op::Write, Op::Update}) {
    const auto n = served_entries_[index(op)];
    j["mean_entry_latency_ns"][to_string(op)] = n > 0 ? latency_sum_ns_[index(op)] / n : 0.0;
    for (TrafficClass c : {TrafficClass::Compute, TrafficClass::Communication}) {
      j["bytes"][to_string(op)][to_string(c)] = stats_.bytes[index(op)][index(c)];
      j["requests"][to_string(op)][to_string(c)] = stats_.requests[index(op)][index(c)];
    }
  }
  j["channel_bytes"] = stats_.channel_bytes;
  j["channel_busy_ns"] = stats_.channel_busy_ns;
  double busy_ns = 0;
  for (double b : stats_.channel_busy_ns) busy_ns += b;
  const auto channels = static_cast<double>(stats_.channel_busy_ns.size());
  j["utilisation"] = elapsed_ns > 0 ? busy_ns / (elapsed_ns * channels) : 0.0;
  j["rejected"] = stats_.rejected;
}

}  // namespace t3
