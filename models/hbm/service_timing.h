// How long serving one queue entry takes, for each HBM model: the simple model's bandwidth pipe,
// and the bank model's pseudo-channel (its banks, buses and refresh, PseudoChannelTimer), which
// also keeps its queue's row-hit flags true as rows open and close.
#pragma once

#include <cmath>
#include <cstdint>

#include <systemc>

#include "config/system_config.h"
#include "models/hbm/dram_bank.h"
#include "models/hbm/request_queue.h"
#include "tlm_interconnect/payload.h"

namespace t3 {

// One entry's service, in time-resolution units.
struct EntryService {
  std::uint64_t bus = 0;   // data-bus occupancy
  std::uint64_t next = 0;  // when its queue may decide again
  std::uint64_t done = 0;  // its data is back (read) or applied (write, update)
  int row_hits = 0;        // bank model: banks found with the row open
  int row_misses = 0;      // and banks that had to open it
  int bursts = 0;          // bank model: column bursts in each direction it moves data
};

// A read or write of b bytes holds the channel for b / (bandwidth / channels), an update for
// nmc_update_occupancy times that; the entry is done latency_ns (+ the ALU for an update) after.
class PipeTiming {
 public:
  explicit PipeTiming(const HbmConfig& config);
  EntryService serve(Op op, std::uint32_t bytes, std::uint64_t at) const;

 private:
  double units_per_byte_;  // time-resolution units of data-bus time per byte, one channel
  double update_occupancy_;
  std::uint64_t latency_;
  std::uint64_t alu_latency_;
};

// One pseudo-channel of the bank model. `timing` must outlive it.
class BankTiming {
 public:
  // `row_bus`: the channel's row-command bus, shared with its other pseudo-channels.
  BankTiming(const HbmConfig& config, const DramTiming& timing, RowCommandBus* row_bus);
  DramRowSpan span(const DramLocation& where) const { return timer_.span(where); }
  bool row_open(const DramRowSpan& span) const { return timer_.row_open(span); }
  // Serves the entry at `where` decided at `at`; then the entries of `queue` in the banks it
  // opened rows in (all of them after a refresh) learn whether they hit now.
  EntryService serve(const DramLocation& where, Op op, std::uint64_t arrival, std::uint64_t at,
                     RequestQueue& queue);
  // With the early precharge, before another pseudo-channel of the channel serves: proposes on
  // the shared row-command bus the first activation this one would issue for the entry FR-FCFS
  // would take from `queue` next (none if a row hit is queued), so the row commands of both take
  // the bus in the order they are ready, not in the order their queues decide.
  void expect_activation(const RequestQueue& queue);
  std::uint64_t refreshes() const { return timer_.refreshes(); }
  // The banks' state, for a scheduler that looks at their readiness.
  const PseudoChannelTimer& banks() const { return timer_; }
  std::uint64_t open_time(std::uint64_t now) const { return timer_.open_time(now); }
  void log_commands(std::vector<DramCommand>* log, int channel, int pseudo_channel) {
    timer_.log_commands(log, channel, pseudo_channel);
  }

 private:
  PseudoChannelTimer timer_;
  std::uint64_t controller_latency_;
  std::uint64_t alu_latency_;
  bool early_precharge_;  // hbm.bank.early_precharge
};

inline EntryService PipeTiming::serve(Op op, std::uint32_t bytes, std::uint64_t at) const {
  const bool update = op == Op::Update;
  const double factor = update ? update_occupancy_ : 1.0;
  EntryService service;
  service.bus = static_cast<std::uint64_t>(std::llround(bytes * units_per_byte_ * factor));
  service.next = at + service.bus;
  service.done = at + latency_ + service.bus + (update ? alu_latency_ : 0);
  return service;
}

}  // namespace t3
