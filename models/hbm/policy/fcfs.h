// The fcfs arbitration policy.
#pragma once

#include "models/hbm/arbitration.h"

namespace t3 {

// Serves strictly in arrival order.
class FcfsPolicy : public ArbitrationPolicy {
 public:
  const char* name() const override { return "fcfs"; }
  std::optional<std::size_t> pick(QueueView queue, sc_core::sc_time now) override;
  Admissible admissible(QueueView, sc_core::sc_time) override { return {}; }
  bool admits_everything() const override { return true; }
};

}  // namespace t3
