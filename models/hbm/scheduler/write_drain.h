// The write drain of a bank scheduler: serving writes (and updates, which end in a write) in a run
// once enough are queued, so the data bus turns around once per run rather than per write.
#pragma once

#include "config/system_config.h"
#include "models/hbm/arbitration.h"
#include "models/hbm/request_queue.h"

namespace t3 {

// On from when the admitted classes' writes reach hbm.bank.write_high x the queue depth until
// they fall to write_low x the depth. Counting admitted writes only, held-back writes never turn
// the bus to writes.
class WriteDrain {
 public:
  // Throws ConfigError unless write_low < write_high.
  explicit WriteDrain(const HbmConfig& config);
  static void check(const HbmConfig& config);
  // Moves the drain by what `queue` holds of the classes `allowed` admits; returns whether the
  // scheduler wants writes: while draining, or when the admitted entries are all writes.
  bool update(const RequestQueue& queue, const Admissible& allowed) {
    int writes = 0, queued = 0;
    for (TrafficClass c : {TrafficClass::Compute, TrafficClass::Communication}) {
      if (!allowed.allows(c)) continue;
      writes += queue.writes(c);
      queued += queue.queued(c);
    }
    admitted_writes_ = writes;
    admitted_reads_ = queued - writes;
    if (draining_ && writes <= low_) draining_ = false;
    if (!draining_ && writes >= high_) draining_ = true;
    return draining_ || writes == queued;
  }
  bool draining() const { return draining_; }
  // The admitted entries of one direction (writes and updates, or reads) at the last update.
  int admitted(bool write) const { return write ? admitted_writes_ : admitted_reads_; }

 private:
  int high_;  // in queued writes
  int low_;
  bool draining_ = false;
  int admitted_writes_ = 0;
  int admitted_reads_ = 0;
};

}  // namespace t3
