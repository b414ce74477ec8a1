#include "models/hbm/policy/priority.h"

namespace t3 {

std::optional<std::size_t> PriorityPolicy::pick(QueueView queue, sc_core::sc_time /*now*/) {
  for (std::size_t i = 0; i < queue.size(); ++i) {
    if (queue[i].traffic_class == favoured_) return i;
  }
  return 0;
}

Admissible PriorityPolicy::admissible(QueueView queue, sc_core::sc_time /*now*/) {
  Admissible allowed;
  for (std::size_t i = 0; i < queue.size(); ++i) {
    if (queue[i].traffic_class == favoured_) {
      allowed.compute = favoured_ == TrafficClass::Compute;
      allowed.communication = !allowed.compute;
      break;
    }
  }
  return allowed;
}

}  // namespace t3
