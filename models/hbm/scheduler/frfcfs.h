// FR-FCFS: first ready (row hits) first, then first come.
#pragma once

#include "models/hbm/scheduler/bank_scheduler.h"
#include "models/hbm/scheduler/write_drain.h"

namespace t3 {

// In the direction the write drain chooses (writes while it is on or when only writes are
// admitted, else reads), the oldest row hit of the admitted classes, then (with
// Admissible::held_row_hits) the oldest row hit of a held-back class, then the admitted row miss
// whose bank could activate first (the oldest of those equally ready; the oldest admitted entry
// when the scheduler sees no banks); then the same in the other direction. The look-ahead is
// DRAMSys's FR-FCFS with its command multiplexer taking the oldest *ready* command: a miss to a
// bank still held by tRAS, tRP or tRC waits while misses to ready banks activate and read. A
// younger miss goes ahead only if it could activate at least tRRD_L before every older miss (it
// moves none of their activations, so none starves), and never a watched write or update: a
// watcher refusing it would idle the queue behind an entry the tracker admits only in its turn.
// Held-back row hits never choose the direction: a bus turnaround for them would cost the admitted
// traffic tWTR or the read-to-write gap, where a hit in the current direction costs one burst.
class FrFcfs : public BankScheduler {
 public:
  explicit FrFcfs(const HbmConfig& config) : drain_(config) {}
  const char* name() const override { return "frfcfs"; }
  std::size_t choose(const RequestQueue& queue, const Admissible& allowed) override;

 private:
  WriteDrain drain_;
};

}  // namespace t3
