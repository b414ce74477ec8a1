#include "models/hbm/request_queue.h"

#include <algorithm>

namespace t3 {

QueueOccupancy::QueueOccupancy(int channels)
    : channel_(static_cast<std::size_t>(channels)),
      resolution_ns_(sc_core::sc_get_time_resolution().to_seconds() * 1e9) {}

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

}  // namespace t3
