// Bank schedulers: which entry of a pseudo-channel's queue the bank model serves next, among those
// the arbitration policy admits. One instance per queue (a scheduler may keep per-queue state, as
// the write drain does), made by name (hbm.bank.scheduler) from a registry that tests and users
// may add to.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "config/system_config.h"
#include "models/hbm/arbitration.h"
#include "models/hbm/request_queue.h"

namespace t3 {

class BankScheduler {
 public:
  virtual ~BankScheduler() = default;
  virtual const char* name() const = 0;
  // choose()'s answer when nothing queued is admitted. An index, not a std::optional: GCC builds
  // an optional's flag with a byte store and copies it with a wider load, which waits for the
  // store (a store-forwarding stall per decision, in the scheduler and again in its caller).
  static constexpr std::size_t kNoChoice = ~std::size_t{0};
  // Index into `queue` (arrival order, never empty) of the entry to serve now, one of a class
  // `allowed` admits (its row hits, with Admissible::held_row_hits, also of a held-back class);
  // kNoChoice if nothing queued is admitted. Called once per decision: a scheduler scans the queue
  // itself, so the model pays one virtual call per entry served, not per entry scanned.
  virtual std::size_t choose(const RequestQueue& queue, const Admissible& allowed) = 0;
  // The queue's pseudo-channel, whose banks' readiness a scheduler may read (FR-FCFS's
  // look-ahead); the controller sets it before the first choose(). Without it (nullptr, a
  // scheduler tested on a queue alone) a scheduler sees the queue only.
  void look_at(const PseudoChannelTimer* banks) { banks_ = banks; }

 protected:
  const PseudoChannelTimer* banks_ = nullptr;
};

// Makes one queue's scheduler; throws ConfigError naming hbm.bank.* for a bad configuration.
using BankSchedulerFactory = std::function<std::unique_ptr<BankScheduler>(const HbmConfig&)>;

// Adds a scheduler that hbm.bank.scheduler may then name (a name already taken is replaced). The
// built-in ones (kBankSchedulers) are there from the start.
void register_bank_scheduler(const std::string& name, BankSchedulerFactory factory);
// Names registered, in the order they were added (the built-in ones first).
std::vector<std::string> bank_scheduler_names();
// The scheduler config.bank.scheduler names; throws ConfigError naming hbm.bank.scheduler if none
// is registered under it.
std::unique_ptr<BankScheduler> make_bank_scheduler(const HbmConfig& config);

}  // namespace t3
