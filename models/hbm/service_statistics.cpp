#include "models/hbm/service_statistics.h"

#include "protocol/to_size.h"

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
  stats_.channel_bytes.assign(to_size(channels), 0);
  stats_.channel_busy_ns.assign(to_size(channels), 0.0);
  stats_.channel_row_hits.assign(to_size(channels), 0);
  stats_.channel_row_misses.assign(to_size(channels), 0);
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
