// Arbitration policies: which queued request a free channel serves next.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <vector>

#include <systemc>

#include "config/system_config.h"
#include "tlm_interconnect/payload.h"

namespace t3 {

// What a policy may look at of one queued request.
struct QueuedRequest {
  std::uint64_t sequence;  // arrival order at this controller, unique
  sc_core::sc_time arrival;
  Op op;
  TrafficClass traffic_class;
  std::uint32_t bytes;
};

// What a policy lets the bank scheduler (FR-FCFS beneath every policy) choose from: one forced
// entry, or the entries of the allowed traffic classes; nothing allowed declines, like a nullopt
// pick().
struct Admissible {
  std::optional<std::size_t> forced;
  bool compute = true;
  bool communication = true;
  bool allows(TrafficClass traffic_class) const {
    return traffic_class == TrafficClass::Compute ? compute : communication;
  }
  bool none() const { return !forced && !compute && !communication; }
};

class ArbitrationPolicy {
 public:
  virtual ~ArbitrationPolicy() = default;
  virtual const char* name() const = 0;
  // The bank model's question (the simple model asks pick()): which queued requests may go now.
  // Same contract on `queue`, `now` and retry_after() as pick().
  virtual Admissible admissible(const std::deque<QueuedRequest>& queue, sc_core::sc_time now) = 0;
  // Index into `queue` (arrival order, never empty) of the request to serve now; nullopt leaves
  // the channel idle until the next arrival or until retry_after() has passed.
  virtual std::optional<std::size_t> pick(const std::deque<QueuedRequest>& queue,
                                          sc_core::sc_time now) = 0;
  // How long to wait before asking again after pick() declined; SC_ZERO_TIME means "only on the
  // next arrival".
  virtual sc_core::sc_time retry_after() const { return sc_core::SC_ZERO_TIME; }
};

// Serves strictly in arrival order.
class FcfsPolicy : public ArbitrationPolicy {
 public:
  const char* name() const override { return "fcfs"; }
  std::optional<std::size_t> pick(const std::deque<QueuedRequest>& queue,
                                  sc_core::sc_time now) override;
  Admissible admissible(const std::deque<QueuedRequest>&, sc_core::sc_time) override { return {}; }
};

// Serves the oldest request of the favoured traffic class, then the oldest of the other.
class PriorityPolicy : public ArbitrationPolicy {
 public:
  explicit PriorityPolicy(TrafficClass favoured) : favoured_(favoured) {}
  const char* name() const override { return "priority"; }
  std::optional<std::size_t> pick(const std::deque<QueuedRequest>& queue,
                                  sc_core::sc_time now) override;
  // The favoured class while any of it is queued, else everything.
  Admissible admissible(const std::deque<QueuedRequest>& queue, sc_core::sc_time now) override;

 private:
  TrafficClass favoured_;
};

// What an MCA policy has decided so far, for tests and statistics.
struct McaStats {
  // Threshold in force: compute arrivals in the last window at or above which communication is
  // held back. 0 while it is still being derived (first window not closed yet).
  std::int64_t threshold = 0;
  bool derived = false;  // the threshold came from the first window (hbm.mca.threshold = 0)
  std::uint64_t first_window_compute_arrivals = 0;  // the first stage's count (derived only)
  std::uint64_t declines = 0;              // pick() returned nullopt: only communication queued,
                                           // none starved, compute intensity at/above threshold
  std::uint64_t starvation_overrides = 0;  // a starved communication request was served when the
                                           // rule without starvation would not have served it
  std::uint64_t compute_served = 0;
  std::uint64_t communication_served = 0;
};

// Communication-aware memory-controller arbitration (T3, ASPLOS '24, section "MCA"): compute
// first, communication only while the running kernel's memory intensity is low, and a starvation
// limit on how long communication waits. The rule, applied at every pick() in this order:
//
//  1. Starvation. Let c be the oldest queued communication request (smallest arrival time, ties
//     by sequence). If now - c.arrival >= starvation_ns, serve c, whatever else is queued.
//  2. Compute priority. Otherwise, if any compute request is queued, serve the oldest one.
//  3. Communication gate. Otherwise (only communication queued, none starved):
//     - threshold not known yet (derived mode, first window still open, or no compute seen yet):
//       serve c (the priority policy's behaviour);
//     - else serve c iff the number of compute requests that arrived at this channel in
//       (now - window_ns, now] is below the threshold; if not, decline, with retry_after() the
//       exact time until the decision can change without a new arrival: the earlier of c
//       reaching the starvation limit and enough of the window's compute arrivals ageing out
//       for the count to drop below the threshold. (A new arrival makes the controller ask again
//       anyway, so no polling is needed.)
//
// Threshold: hbm.mca.threshold if > 0. If 0 it is derived from the first stage: the first
// window is [t0, t0 + window_ns) with t0 the arrival of the first compute request seen at this
// channel; with n the compute arrivals in it, threshold = max(1, ceil(n / 2)), fixed at the first
// pick() at or after t0 + window_ns. So communication goes when compute pressure has fallen below
// half the first stage's.
//
// The policy sees arrivals only through the queues it is shown. Requests enter a queue in
// sequence order, so a request with a sequence above every one seen before is new and, if
// compute, its arrival time (not the time it is seen) is recorded. Every request the controller
// serves was in a queue shown to pick(), so the count is exact, except for requests held back by a
// full queue (back-pressure), which are counted only once they enter it (and missed by the first
// window if they enter it after the window closed). `now` must not decrease between calls; one
// instance serves one channel.
class McaPolicy : public ArbitrationPolicy {
 public:
  // Throws ConfigError naming hbm.mca.* for a negative threshold or starvation limit, or a
  // window that is not positive.
  explicit McaPolicy(const McaConfig& config);
  const char* name() const override { return "mca"; }
  std::optional<std::size_t> pick(const std::deque<QueuedRequest>& queue,
                                  sc_core::sc_time now) override;
  // The rule of pick() as classes: a starved communication request is forced; otherwise compute
  // while any is queued; otherwise communication if the gate is open; otherwise nothing.
  Admissible admissible(const std::deque<QueuedRequest>& queue, sc_core::sc_time now) override;
  sc_core::sc_time retry_after() const override { return retry_; }

  const McaStats& stats() const { return stats_; }
  // Compute arrivals recorded in (now - window_ns, now], as of the last pick().
  std::size_t window_compute_arrivals() const { return recent_.size(); }

 private:
  void observe(const std::deque<QueuedRequest>& queue, sc_core::sc_time now);
  bool threshold_known() const { return stats_.threshold > 0; }

  sc_core::sc_time starvation_;
  sc_core::sc_time window_;
  std::optional<std::uint64_t> last_seen_;          // highest sequence seen in a queue so far
  std::optional<sc_core::sc_time> newest_arrival_;  // arrival of that request
  bool arrivals_ordered_ = true;  // every request seen arrived no earlier than the one before
  std::deque<sc_core::sc_time> recent_;  // compute arrivals in the sliding window, ascending
  std::vector<sc_core::sc_time> first_;  // compute arrivals while the first window is open
  std::optional<sc_core::sc_time> first_arrival_;  // t0 (derived mode)
  sc_core::sc_time retry_ = sc_core::SC_ZERO_TIME;
  McaStats stats_;
};

// One policy instance per channel (policies may keep per-channel state). Throws ConfigError naming
// hbm.mca.* for an invalid MCA configuration.
std::unique_ptr<ArbitrationPolicy> make_policy(const HbmConfig& config);

}  // namespace t3
