#include "models/hbm/request_queue.h"

#include <algorithm>

namespace t3 {

QueueOccupancy::QueueOccupancy(int channels)
    : channel_(static_cast<std::size_t>(channels)),
      resolution_ns_(sc_core::sc_get_time_resolution().to_seconds() * 1e9) {}

void QueueOccupancy::change(int channel, TrafficClass traffic_class, int delta,
                            sc_core::sc_time now) {
  const sc_core::sc_time::value_type elapsed = (now - since_).value();
  for (int c = 0; c < kTrafficClasses; ++c) {
    integral_units_[c] += static_cast<std::uint64_t>(total_[c]) * elapsed;
  }
  since_ = now;
  const int c = static_cast<int>(traffic_class);
  total_[c] += delta;
  auto& of_channel = channel_[static_cast<std::size_t>(channel)];
  of_channel[c] += delta;
  max_[c] = std::max<std::uint64_t>(max_[c], static_cast<std::uint64_t>(of_channel[c]));
  for (const auto& observer : observers_) observer(now, channel, of_channel[0], of_channel[1]);
}

double QueueOccupancy::integral_ns(int traffic_class) const {
  return static_cast<double>(integral_units_[traffic_class]) * resolution_ns_;
}

double QueueOccupancy::integral_ns(int traffic_class, sc_core::sc_time now) const {
  const auto since = static_cast<double>((now - since_).value());
  return (static_cast<double>(integral_units_[traffic_class]) + total_[traffic_class] * since) *
         resolution_ns_;
}

void QueueOccupancy::add_to_report(nlohmann::json& j, sc_core::sc_time now) const {
  const double elapsed_ns = now.to_seconds() * 1e9;
  for (TrafficClass c : {TrafficClass::Compute, TrafficClass::Communication}) {
    const int k = static_cast<int>(c);
    // The integral runs up to now, not just to the last change.
    const double integral = integral_ns(k, now);
    j["queue_occupancy_integral_ns"][to_string(c)] = integral;
    j["mean_queue_occupancy"][to_string(c)] = elapsed_ns > 0 ? integral / elapsed_ns : 0.0;
    j["max_queue_occupancy"][to_string(c)] = max_[k];
  }
}

void RequestQueue::push(const QueueEntry& entry, sc_core::sc_time now) {
  entries_.push_back(entry);
  count(entry, +1, now);
}

QueueEntry RequestQueue::take(std::size_t i, sc_core::sc_time now) {
  const QueueEntry entry = entries_[i];
  entries_.erase(i);
  count(entry, -1, now);
  return entry;
}

void RequestQueue::count(const QueueEntry& entry, int delta, sc_core::sc_time now) {
  const int c = static_cast<int>(entry.traffic_class);
  queued_[c] += delta;
  if (entry.write) writes_[c] += delta;
  occupancy_->change(channel_, entry.traffic_class, delta, now);
}

}  // namespace t3
