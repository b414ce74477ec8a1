#include "models/hbm/arbitration.h"

namespace t3 {

std::optional<std::size_t> FcfsPolicy::pick(const std::deque<QueuedRequest>& /*queue*/,
                                            sc_core::sc_time /*now*/) {
  return 0;  // the queue is kept in arrival order
}

std::optional<std::size_t> PriorityPolicy::pick(const std::deque<QueuedRequest>& queue,
                                                sc_core::sc_time /*now*/) {
  for (std::size_t i = 0; i < queue.size(); ++i) {
    if (queue[i].traffic_class == favoured_) return i;
  }
  return 0;
}

std::unique_ptr<ArbitrationPolicy> make_policy(const HbmConfig& config) {
  switch (config.arbitration) {
    case Arbitration::Fcfs:
      return std::make_unique<FcfsPolicy>();
    case Arbitration::Priority:
      return std::make_unique<PriorityPolicy>(config.priority_class == PriorityClass::Compute
                                                  ? TrafficClass::Compute
                                                  : TrafficClass::Communication);
    case Arbitration::Mca:
      throw ConfigError("hbm.arbitration: 'mca' is not available yet");
  }
  throw ConfigError("hbm.arbitration: unknown policy");
}

}  // namespace t3
