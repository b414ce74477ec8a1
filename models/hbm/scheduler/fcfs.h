// FCFS bank scheduler: first come, first served, whatever rows are open.
#pragma once

#include "models/hbm/scheduler/bank_scheduler.h"
#include "models/hbm/scheduler/write_drain.h"

namespace t3 {

// In the direction the write drain chooses (writes while it is on or when only writes are
// admitted, else reads), the oldest admitted entry; then the oldest in the other direction.
class Fcfs : public BankScheduler {
 public:
  explicit Fcfs(const HbmConfig& config) : drain_(config) {}
  const char* name() const override { return "fcfs"; }
  std::size_t choose(const RequestQueue& queue, const Admissible& allowed) override;

 private:
  WriteDrain drain_;
};

}  // namespace t3
