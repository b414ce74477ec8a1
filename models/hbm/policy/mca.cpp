#include "models/hbm/policy/mca.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <utility>

namespace t3 {

McaPolicy::McaPolicy(const McaConfig& config)
    : starvation_(config.starvation_ns, sc_core::SC_NS),
      window_(config.window_ns, sc_core::SC_NS),
      row_hits_first_(config.row_hits_first),
      release_backlog_(config.release_backlog),
      release_urgent_(config.release_urgent) {
  if (config.threshold < 0) throw ConfigError("hbm.mca.threshold: must not be negative");
  if (!(config.starvation_ns >= 0)) {
    throw ConfigError("hbm.mca.starvation_ns: must not be negative");
  }
  if (!(window_ > sc_core::SC_ZERO_TIME)) throw ConfigError("hbm.mca.window_ns: must be positive");
  stats_.threshold = config.threshold;  // 0: derived once the first window closes
  stats_.derived = config.threshold == 0;
}

McaPolicy::Decision McaPolicy::decide(QueueView queue, sc_core::sc_time now) {
  Decision d;
  std::int64_t queued_compute = 0, queued_communication = 0;
  bool urgent = false;  // urgent communication queued
  const bool deriving = stats_.derived && !threshold_known();
  // The oldest of each class: its index (kNone: none yet) and its (arrival, sequence) in plain
  // locals, not optional keys, which cost the scan a flag store and reload per entry.
  constexpr std::size_t kNone = ~std::size_t{0};
  struct Oldest {
    std::size_t index = kNone;
    sc_core::sc_time::value_type arrival = 0;
    std::uint64_t sequence = 0;
    void offer(const QueuedRequest& request, std::size_t i) {
      const auto at = request.arrival.value();
      if (index == kNone || at < arrival || (at == arrival && request.sequence < sequence)) {
        index = i;
        arrival = at;
        sequence = request.sequence;
      }
    }
  };
  Oldest compute, communication;
  for (std::size_t i = 0; i < queue.size(); ++i) {
    const QueuedRequest& request = queue[i];
    if (request.traffic_class == TrafficClass::Compute) {
      ++queued_compute;
      if (deriving && (!first_arrival_ || request.arrival < *first_arrival_)) {
        first_arrival_ = request.arrival;
      }
      compute.offer(request, i);
    } else {
      ++queued_communication;
      urgent = urgent || request.urgent;
      communication.offer(request, i);
    }
  }
  std::optional<Age> compute_key;
  if (compute.index != kNone) {
    d.compute = compute.index;
    compute_key = Age{sc_core::sc_time::from_value(compute.arrival), compute.sequence};
  }
  if (communication.index != kNone) d.communication = communication.index;
  // The first stage's compute occupancy, sampled at its picks; fixed when the window closes.
  if (stats_.derived && !threshold_known() && first_arrival_) {
    if (now < *first_arrival_ + window_) {
      first_window_sum_ += static_cast<double>(queued_compute);
      ++stats_.first_window_picks;
    } else {
      const double mean = stats_.first_window_picks > 0
                              ? first_window_sum_ / static_cast<double>(stats_.first_window_picks)
                              : 0.0;
      stats_.first_window_mean_occupancy = mean;
      stats_.threshold = std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(mean)));
    }
  }
  const bool full = threshold_known() && queued_compute >= stats_.threshold;
  const bool backlog = release_backlog_ && queued_communication >= stats_.threshold;
  d.gate_shut = full && !backlog && !(release_urgent_ && urgent);
  if (full && !backlog && !d.gate_shut && d.compute) ++stats_.urgent_releases;
  const std::optional<std::size_t> starved = track_deferral(queue, compute_key, now);
  if (starved && d.compute) {
    d.starved = true;
    d.communication = starved;
  } else if (d.communication && d.gate_shut && d.compute) {
    ++stats_.held_back;
  }
  return d;
}

// A communication request is deferred from the first pick at which no older compute request is
// queued: from then on arrival order would serve it before every compute request still queued,
// so each compute request served ahead of it is MCA's doing. Bounding that time (not the time
// since arrival, which includes queueing any order would cost, nor the time the gate has been
// shut, which would let one request through per limit whatever arrives) bounds the delay MCA
// adds to each request without capping communication's throughput.
std::optional<std::size_t> McaPolicy::track_deferral(QueueView queue,
                                                     const std::optional<Age>& oldest_compute,
                                                     sc_core::sc_time now) {
  std::vector<std::pair<std::uint64_t, sc_core::sc_time>>& still = deferred_scratch_;
  still.clear();
  std::optional<std::size_t> starved;
  std::optional<sc_core::sc_time> starved_since;
  // The controller's queues hold their requests in sequence order, so deferred_ (built in queue
  // order) is too, and a merge finds each request's record in one pass: not a search of deferred_
  // per request. A queue out of sequence order (a test's) falls back to the search.
  bool in_order = deferred_in_order_;
  std::size_t record = 0;  // the merge's position in deferred_
  for (std::size_t i = 0; i < queue.size(); ++i) {
    const QueuedRequest& request = queue[i];
    if (request.traffic_class == TrafficClass::Compute) continue;
    if (oldest_compute && !(Age{request.arrival, request.sequence} < *oldest_compute)) continue;
    if (!still.empty() && still.back().first >= request.sequence) in_order = false;
    sc_core::sc_time since = now;
    if (in_order) {
      while (record < deferred_.size() && deferred_[record].first < request.sequence) ++record;
      if (record < deferred_.size() && deferred_[record].first == request.sequence) {
        since = deferred_[record].second;
      }
    } else {
      for (const auto& [sequence, at] : deferred_) {
        if (sequence == request.sequence) since = at;
      }
    }
    still.emplace_back(request.sequence, since);
    if (now - since >= starvation_ && (!starved_since || since < *starved_since)) {
      starved = i;
      starved_since = since;
    }
  }
  deferred_.swap(still);
  deferred_in_order_ = in_order;
  return starved;
}

std::optional<std::size_t> McaPolicy::pick(QueueView queue, sc_core::sc_time now) {
  if (queue.empty()) return std::nullopt;  // not called so by the controller
  const Decision d = decide(queue, now);
  std::optional<std::size_t> chosen;
  if (d.starved) {  // rule 1
    ++stats_.starvation_overrides;
    chosen = d.communication;
  } else if (d.gate_shut || !d.communication) {  // rule 2 (or nothing else queued)
    chosen = d.compute;
  } else if (!d.compute) {
    chosen = d.communication;
  } else {  // rule 3: the oldest of the two
    const QueuedRequest& a = queue[*d.compute];
    const QueuedRequest& b = queue[*d.communication];
    const bool compute_older =
        a.arrival != b.arrival ? a.arrival < b.arrival : a.sequence < b.sequence;
    chosen = compute_older ? d.compute : d.communication;
  }
  ++(queue[*chosen].traffic_class == TrafficClass::Compute ? stats_.compute_served
                                                           : stats_.communication_served);
  return chosen;
}

Admissible McaPolicy::admissible(QueueView queue, sc_core::sc_time now) {
  Admissible allowed;
  if (queue.empty()) return allowed;
  const Decision d = decide(queue, now);
  if (d.starved) {
    // The gate opens and FR-FCFS orders the starved request among everything, as without MCA:
    // forcing it ahead of the queued row hits and the write drain would cost compute an
    // activation and a turnaround per override, more than arrival order ever would.
    if (d.gate_shut) ++stats_.starvation_overrides;
  } else if (d.gate_shut) {
    allowed.communication = false;
    allowed.held_row_hits = row_hits_first_;
  }
  return allowed;
}

void McaPolicy::add_to_report(nlohmann::json& report) const {
  nlohmann::json& mca = report["mca"];
  const auto add = [&mca](const char* key, std::uint64_t value) {
    mca[key] = (mca.contains(key) ? mca[key].get<std::uint64_t>() : 0) + value;
  };
  add("held_back", stats_.held_back);
  add("starvation_overrides", stats_.starvation_overrides);
  add("urgent_releases", stats_.urgent_releases);
  // A lowest of 0 so far counts as none yet (a threshold still being derived is 0).
  const std::int64_t lowest =
      mca.contains("threshold_min") ? mca["threshold_min"].get<std::int64_t>() : 0;
  const std::int64_t highest =
      mca.contains("threshold_max") ? mca["threshold_max"].get<std::int64_t>() : 0;
  mca["threshold_min"] = lowest == 0 ? stats_.threshold : std::min(lowest, stats_.threshold);
  mca["threshold_max"] = std::max(highest, stats_.threshold);
}

}  // namespace t3
