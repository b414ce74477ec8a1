// The mca arbitration policy (communication-aware memory-controller arbitration).
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "models/hbm/arbitration.h"

namespace t3 {

// What an MCA policy has decided so far, for tests and statistics.
struct McaStats {
  // Threshold in force: queued compute requests at or above which communication is held back.
  // 0 while it is still being derived (first window not closed yet).
  std::int64_t threshold = 0;
  bool derived = false;  // the threshold came from the first window (hbm.mca.threshold = 0)
  double first_window_mean_occupancy = 0;  // compute requests queued, mean over its picks
  std::uint64_t first_window_picks = 0;
  std::uint64_t held_back = 0;  // picks at which communication was queued and the gate was shut
  // Picks at which a communication request deferred starvation_ns overrode rules 2 and 3: pick()
  // served it; admissible() opened a gate that would have been shut
  std::uint64_t starvation_overrides = 0;
  std::uint64_t urgent_releases = 0;  // picks at which only urgent communication kept the gate open
  std::uint64_t compute_served = 0;   // by pick(); the bank model's choice is not the policy's
  std::uint64_t communication_served = 0;
};

// Communication-aware memory-controller arbitration (T3, ASPLOS '24, section "MCA"): compute
// first while the memory is busy with it, communication only while the DRAM queue's compute
// occupancy is below a threshold derived from the first stage's memory intensity, and a
// starvation limit. The rule, applied at every pick() in this order:
//
//  1. Starvation. A communication request is deferred from the first pick at which no older
//     compute request is queued (arrival order would serve it next among the classes). If a
//     request has been deferred for starvation_ns, serve it (the longest deferred first). So MCA
//     delays each communication request by at most starvation_ns beyond arrival order (plus the
//     entry in service), whatever else is queued. For the bank model the starved request opens
//     the gate rather than jumping the queue: every class is admitted and FR-FCFS orders it as
//     it would without MCA (it is the oldest, so it goes after the row hits of the drain's
//     direction). Forcing it ahead of those cost compute an activation and a bus turnaround per
//     override, which at low bandwidth, where queues outlast the limit, made the GEMM slower than
//     under t3 (docs/t3.md, "MCA"). The limit bounds the delay MCA adds, not a
//     request's queueing (at low bandwidth a queue alone can take longer than the limit, and
//     counting that would give communication priority over compute), nor communication's
//     throughput (one request per limit while the gate stays shut would starve a ring).
//  2. Gate. Let q be the compute requests queued now and c the communication requests. If the
//     threshold is known, q >= it and c < it (c is not counted with hbm.mca.release_backlog =
//     false), communication is held back: serve the oldest compute request. The threshold is the
//     queue occupancy the GEMM keeps alone (its first stage); once as many communication requests
//     wait as that, communication is falling behind the GEMM rather than trickling beside it, and
//     holding it back longer only moves its work to the tail of the fused phase, where nothing
//     overlaps it (docs/t3.md, "The MCA study"). Nor is it held back while an urgent
//     communication request waits (QueuedRequest::urgent; not with hbm.mca.release_urgent =
//     false): its DMA engine's read-ahead buffer is filled past dma.urgent_fill, so the path
//     paces the reduce-scatter there, and holding its traffic back stalls the engine; where the
//     reduce-scatter is the longer half, that time comes straight onto the fused phase.
//  3. Otherwise every request may go: pick() serves the oldest (FCFS); the bank model's FR-FCFS
//     chooses among all of them (admissible()).
//
// With hbm.mca.row_hits_first (the default), a shut gate ranks communication below compute but
// keeps FR-FCFS's first-ready rule above that ranking for the bank model: in the direction (read
// or write) the admitted requests and the write drain choose (the drain counts only admitted
// writes, so held-back ones never turn the bus to writes), compute row hits, then communication
// row hits, then compute misses. A row hit needs no activation, so serving it
// while its row is open costs compute one burst, where holding it back costs an activation and
// precharge later; held-back hits never turn the bus around (measured in docs/t3.md, "The MCA
// study"). Without it the gate is strict.
//
// The policy is work-conserving: with only communication queued, q = 0 is below any threshold, so
// a channel never idles while requests wait (holding communication back while the channel is
// idle would only delay it, not speed compute).
//
// Threshold: hbm.mca.threshold if > 0. If 0 it is derived from the first stage: the first
// window is [t0, t0 + window_ns) with t0 the arrival of the first compute request seen at this
// queue; the threshold is max(1, ceil(m)) with m the mean of q over the picks in that window (the
// first stage's compute queue occupancy), fixed at the first pick at or after t0 + window_ns.
// Until then the gate is open. `now` must not decrease between calls; one instance serves one
// queue.
class McaPolicy : public ArbitrationPolicy {
 public:
  // Throws ConfigError naming hbm.mca.* for a negative threshold or starvation limit, or a
  // window that is not positive.
  explicit McaPolicy(const McaConfig& config);
  const char* name() const override { return "mca"; }
  std::optional<std::size_t> pick(QueueView queue, sc_core::sc_time now) override;
  Admissible admissible(QueueView queue, sc_core::sc_time now) override;

  const McaStats& stats() const { return stats_; }
  // report["mca"]: held-back picks, starvation overrides and urgent releases summed over the
  // queues, and the lowest and highest threshold in force (0 while not yet derived).
  void add_to_report(nlohmann::json& report) const override;

 private:
  // The decision shared by pick() and admissible(): oldest of each class and whether the gate
  // holds communication back.
  struct Decision {
    std::optional<std::size_t> compute;        // oldest compute request
    std::optional<std::size_t> communication;  // oldest communication request
    bool starved = false;                      // rule 1 applies to `communication`
    bool gate_shut = false;                    // rule 2 applies
  };
  using Age = std::pair<sc_core::sc_time, std::uint64_t>;  // (arrival, sequence)
  Decision decide(QueueView queue, sc_core::sc_time now);
  // Updates which communication requests are deferred (rule 1); returns the index of the one
  // deferred longest if that is starvation_ns or more.
  std::optional<std::size_t> track_deferral(QueueView queue,
                                            const std::optional<Age>& oldest_compute,
                                            sc_core::sc_time now);
  bool threshold_known() const { return stats_.threshold > 0; }

  sc_core::sc_time starvation_;
  sc_core::sc_time window_;
  bool row_hits_first_;
  bool release_backlog_;
  bool release_urgent_;
  std::optional<sc_core::sc_time> first_arrival_;  // t0 (derived mode)
  // Communication requests deferred (rule 1) as of the last pick: (sequence, since).
  std::vector<std::pair<std::uint64_t, sc_core::sc_time>> deferred_;
  std::vector<std::pair<std::uint64_t, sc_core::sc_time>> deferred_scratch_;  // reused per pick
  bool deferred_in_order_ = true;  // deferred_ by rising sequence (track_deferral's merge)
  double first_window_sum_ = 0;    // q summed over the first window's picks
  McaStats stats_;
};

}  // namespace t3
