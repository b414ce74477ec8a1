#include "models/hbm/service_timing.h"

#include <algorithm>
#include <cmath>

namespace t3 {

namespace {

std::uint64_t ticks(double ns) {
  return sc_core::sc_time(ns, sc_core::SC_NS).value();
}

PseudoChannelTimer::Kind kind_of(Op op) {
  switch (op) {
    case Op::Read:
      return PseudoChannelTimer::Kind::Read;
    case Op::Write:
      return PseudoChannelTimer::Kind::Write;
    case Op::Update:
      break;
  }
  return PseudoChannelTimer::Kind::Update;
}

}  // namespace

PipeTiming::PipeTiming(const HbmConfig& config)
    : units_per_byte_(static_cast<double>(config.channels) / (config.bandwidth_GBps * 1e9) /
                      sc_core::sc_get_time_resolution().to_seconds()),
      update_occupancy_(config.nmc_update_occupancy),
      latency_(ticks(config.latency_ns)),
      alu_latency_(ticks(config.nmc_alu_latency_ns)) {}

// Every pseudo-channel refreshes at the same instants (refresh phase 0): an access spans many of
// them (a 16 KiB request touches 64), so staggered refreshes would hold nearly every wide access
// behind one; aligned ones cost each access at most one.
BankTiming::BankTiming(const HbmConfig& config, const DramTiming& timing, RowCommandBus* row_bus)
    : timer_(config, timing, 0, row_bus),
      controller_latency_(ticks(config.bank.controller_latency_ns)),
      alu_latency_(ticks(config.nmc_alu_latency_ns)),
      early_precharge_(config.bank.early_precharge) {}

EntryService BankTiming::serve(const DramLocation& where, Op op, std::uint64_t arrival,
                               std::uint64_t at, RequestQueue& queue) {
  if (early_precharge_) timer_.release_expectation();
  const std::uint64_t refreshes = timer_.refreshes();
  const DramService dram = timer_.serve(where, kind_of(op), arrival, at, alu_latency_);
  // Rows opened (in this entry's banks) or closed (refresh): those entries' hits may change.
  const bool refreshed = timer_.refreshes() != refreshes;
  if (dram.row_misses > 0 || refreshed) {
    // Whether the row it opened has more entries queued, and whether another row of its banks has.
    bool same_row = false;
    bool other_row = false;
    for (std::size_t i = 0; i < queue.size(); ++i) {
      const QueueEntry& queued = queue[i];
      if (refreshed || queued.span.bank == where.bank) queue.set_row_hit(i, row_open(queued.span));
      if (queued.span.bank == where.bank) {
        if (queued.span.row == where.row) {
          same_row = true;
        } else {
          other_row = true;
        }
      }
    }
    // A bank machine precharges for its next request once no queued one needs the open row.
    if (early_precharge_ && other_row && !same_row) timer_.precharge_early(where);
  }
  EntryService service;
  service.bus = dram.bus_busy;
  service.next = std::max<std::uint64_t>(dram.last_column, at + 1);  // at least one unit: progress
  service.done = dram.data_end + controller_latency_;
  service.row_hits = dram.row_hits;
  service.row_misses = dram.row_misses;
  service.bursts = where.bursts;
  return service;
}

void BankTiming::expect_activation(const RequestQueue& queue) {
  if (!early_precharge_) return;
  // FR-FCFS's miss (scheduler/frfcfs.cpp): the oldest, unless a younger one could activate at
  // least tRRD_L before every older one could. Directions, the policy's admission and other
  // schedulers are not told apart: an estimate, held only until this queue decides.
  std::uint64_t earliest = PseudoChannelTimer::kNever;
  std::uint64_t chosen = RowCommandBus::kNoActivation;
  for (std::size_t i = 0; i < queue.size(); ++i) {
    const QueueEntry& entry = queue[i];
    if (entry.row_hit) {  // a row hit goes first: no activation next
      chosen = RowCommandBus::kNoActivation;
      break;
    }
    if (entry.watched) continue;
    const std::uint64_t at = timer_.activate_ready(
        entry.span, static_cast<std::uint64_t>(entry.request.arrival.value()));
    if (timer_.activates_ahead(at, earliest)) chosen = at;
  }
  timer_.expect_activation(chosen);  // kNoActivation drops an earlier expectation
}

}  // namespace t3
