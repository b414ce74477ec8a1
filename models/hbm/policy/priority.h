// The priority arbitration policy.
#pragma once

#include "models/hbm/arbitration.h"

namespace t3 {

// Serves the oldest request of the favoured traffic class, then the oldest of the other.
class PriorityPolicy : public ArbitrationPolicy {
 public:
  explicit PriorityPolicy(TrafficClass favoured) : favoured_(favoured) {}
  const char* name() const override { return "priority"; }
  std::optional<std::size_t> pick(QueueView queue, sc_core::sc_time now) override;
  // The favoured class while any of it is queued, else everything.
  Admissible admissible(QueueView queue, sc_core::sc_time now) override;

 private:
  TrafficClass favoured_;
};

}  // namespace t3
