#include "models/hbm/arbitration.h"

#include <algorithm>
#include <iterator>
#include <utility>

namespace t3 {

std::optional<std::size_t> FcfsPolicy::pick(const std::deque<QueuedRequest>& /*queue*/,
                                            sc_core::sc_time /*now*/) {
  return 0;  // the queue is kept in arrival order
}

std::optional<std::size_t> PriorityPolicy::pick(const std::deque<QueuedRequest>& queue,
                                                sc_core::sc_time /*now*/) {
  for (std::size_t i = 0; i < queue.size(); ++i) {
    if (queue[i].traffic_class == favoured_) return i;
  }
  return 0;
}

Admissible PriorityPolicy::admissible(const std::deque<QueuedRequest>& queue,
                                      sc_core::sc_time /*now*/) {
  Admissible allowed;
  for (const QueuedRequest& request : queue) {
    if (request.traffic_class == favoured_) {
      allowed.compute = favoured_ == TrafficClass::Compute;
      allowed.communication = !allowed.compute;
      break;
    }
  }
  return allowed;
}

McaPolicy::McaPolicy(const McaConfig& config)
    : starvation_(config.starvation_ns, sc_core::SC_NS), window_(config.window_ns, sc_core::SC_NS) {
  if (config.threshold < 0) throw ConfigError("hbm.mca.threshold: must not be negative");
  if (!(config.starvation_ns >= 0)) {
    throw ConfigError("hbm.mca.starvation_ns: must not be negative");
  }
  if (!(window_ > sc_core::SC_ZERO_TIME)) throw ConfigError("hbm.mca.window_ns: must be positive");
  stats_.threshold = config.threshold;  // 0: derived once the first window closes
  stats_.derived = config.threshold == 0;
}

// Records the compute arrivals among requests not seen at the previous pick(), slides the window
// to end at `now`, and closes the first window when its time has come.
void McaPolicy::observe(const std::deque<QueuedRequest>& queue, sc_core::sc_time now) {
  // Compute arrivals at or before this instant have left the window (now - window_, now].
  const bool window_started = now >= window_;
  const sc_core::sc_time window_start = window_started ? now - window_ : sc_core::SC_ZERO_TIME;
  const auto in_window = [&](sc_core::sc_time arrival) {
    return !window_started || arrival > window_start;
  };

  // Requests enter a channel's queue in sequence order (an arrival, or the oldest back-pressured
  // request when an entry frees), so the ones not seen at an earlier pick are the queue's suffix
  // past the highest sequence seen so far.
  auto first_new = queue.end();
  while (first_new != queue.begin() &&
         (!last_seen_ || std::prev(first_new)->sequence > *last_seen_)) {
    --first_new;
  }
  for (auto it = first_new; it != queue.end(); ++it) {
    const QueuedRequest& request = *it;
    // Arrivals seen in sequence order never went back in time so far: see pick().
    if (newest_arrival_ && request.arrival < *newest_arrival_) arrivals_ordered_ = false;
    newest_arrival_ = request.arrival;
    if (request.traffic_class != TrafficClass::Compute) continue;
    // A new compute arrival. Arrivals are nearly always seen in time order; insert in order.
    if (in_window(request.arrival)) {
      if (recent_.empty() || !(request.arrival < recent_.back())) {
        recent_.push_back(request.arrival);
      } else {
        recent_.insert(std::upper_bound(recent_.begin(), recent_.end(), request.arrival),
                       request.arrival);
      }
    }
    if (stats_.derived && !threshold_known()) {
      first_.push_back(request.arrival);
      if (!first_arrival_ || request.arrival < *first_arrival_) first_arrival_ = request.arrival;
    }
  }
  if (!queue.empty()) last_seen_ = std::max(last_seen_.value_or(0), queue.back().sequence);

  while (!recent_.empty() && !in_window(recent_.front())) recent_.pop_front();

  // The first stage's memory intensity: compute arrivals in [t0, t0 + window).
  if (stats_.derived && !threshold_known() && first_arrival_ && now >= *first_arrival_ + window_) {
    const sc_core::sc_time end = *first_arrival_ + window_;
    const auto n = static_cast<std::uint64_t>(
        std::count_if(first_.begin(), first_.end(), [&](sc_core::sc_time a) { return a < end; }));
    stats_.first_window_compute_arrivals = n;
    stats_.threshold = std::max<std::int64_t>(1, static_cast<std::int64_t>((n + 1) / 2));
    first_.clear();
    first_.shrink_to_fit();
  }
}

std::optional<std::size_t> McaPolicy::pick(const std::deque<QueuedRequest>& queue,
                                           sc_core::sc_time now) {
  observe(queue, now);
  retry_ = sc_core::SC_ZERO_TIME;
  if (queue.empty()) return std::nullopt;  // not called so by the controller

  std::optional<std::size_t> compute;        // oldest compute request
  std::optional<std::size_t> communication;  // oldest communication request
  std::size_t i = 0;
  if (arrivals_ordered_) {
    // The queue is in sequence order, and so far in arrival order too (the controller admits
    // arrivals in time order): the first request of a class is its oldest.
    for (auto it = queue.begin(); it != queue.end() && !(compute && communication); ++it, ++i) {
      auto& oldest = it->traffic_class == TrafficClass::Compute ? compute : communication;
      if (!oldest) oldest = i;
    }
  } else {
    std::optional<std::pair<sc_core::sc_time, std::uint64_t>> compute_key, communication_key;
    for (auto it = queue.begin(); it != queue.end(); ++it, ++i) {
      const bool is_compute = it->traffic_class == TrafficClass::Compute;
      auto& key = is_compute ? compute_key : communication_key;
      const std::pair<sc_core::sc_time, std::uint64_t> age{it->arrival, it->sequence};
      if (!key || age < *key) {
        key = age;
        (is_compute ? compute : communication) = i;
      }
    }
  }

  // The gate of rule 3: may communication go when no compute is queued?
  const bool gate_open =
      !threshold_known() || static_cast<std::int64_t>(recent_.size()) < stats_.threshold;

  if (communication) {
    const sc_core::sc_time arrival = queue[*communication].arrival;
    const sc_core::sc_time waited = now > arrival ? now - arrival : sc_core::SC_ZERO_TIME;
    if (waited >= starvation_) {  // rule 1
      if (compute || !gate_open) ++stats_.starvation_overrides;
      ++stats_.communication_served;
      return communication;
    }
  }
  if (compute) {  // rule 2
    ++stats_.compute_served;
    return compute;
  }
  if (gate_open) {  // rule 3, communication goes (queue is never empty: communication is set)
    ++stats_.communication_served;
    return communication;
  }
  // Rule 3, declined. Both candidate times lie strictly after now: c is not starved, and every
  // entry of recent_ arrived after now - window_.
  ++stats_.declines;
  const std::size_t must_age =
      recent_.size() - static_cast<std::size_t>(stats_.threshold) + 1;  // >= 1
  const sc_core::sc_time gate_opens = recent_[must_age - 1] + window_;
  const sc_core::sc_time starves = queue[*communication].arrival + starvation_;
  retry_ = std::min(gate_opens, starves) - now;
  return std::nullopt;
}

Admissible McaPolicy::admissible(const std::deque<QueuedRequest>& queue, sc_core::sc_time now) {
  const std::optional<std::size_t> chosen = pick(queue, now);
  Admissible allowed;
  allowed.compute = allowed.communication = false;
  if (!chosen) return allowed;
  const bool compute_queued = std::any_of(
      queue.begin(), queue.end(),
      [](const QueuedRequest& request) { return request.traffic_class == TrafficClass::Compute; });
  if (queue[*chosen].traffic_class == TrafficClass::Compute) {
    allowed.compute = true;
  } else if (compute_queued) {
    allowed.forced = chosen;  // starved: this one request, past the compute
  } else {
    allowed.communication = true;
  }
  return allowed;
}

std::unique_ptr<ArbitrationPolicy> make_policy(const HbmConfig& config) {
  switch (config.arbitration) {
    case Arbitration::Fcfs:
      return std::make_unique<FcfsPolicy>();
    case Arbitration::Priority:
      return std::make_unique<PriorityPolicy>(config.priority_class == PriorityClass::Compute
                                                  ? TrafficClass::Compute
                                                  : TrafficClass::Communication);
    case Arbitration::Mca:
      return std::make_unique<McaPolicy>(config.mca);
  }
  throw ConfigError("hbm.arbitration: unknown policy");
}

}  // namespace t3
