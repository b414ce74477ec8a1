// When the memory controller has work: accesses due to arrive, and queues due to be served. Its
// one process asks at each activation which queues are due (so an activation costs what it
// serves, not the queue count) and when to wake next.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <utility>
#include <vector>

#include <systemc>

#include "models/hbm/transaction.h"
#include "protocol/to_size.h"

namespace t3 {

class ServiceCalendar {
 public:
  using Ticks = sc_core::sc_time::value_type;

  explicit ServiceCalendar(std::size_t queues) : is_due_(queues, 0) {}

  // An access arriving at its arrival time; equal times keep the order they were added in.
  void add_arrival(HbmTransaction& transaction) {
    arrivals_.push_back({transaction.arrival, issue_order_++, &transaction});
    std::push_heap(arrivals_.begin(), arrivals_.end(), std::greater<>());
  }
  // The next access arrived by `now`, removed; nullptr if none.
  HbmTransaction* next_arrival(sc_core::sc_time now) {
    if (arrivals_.empty() || arrivals_.front().at > now) return nullptr;
    std::pop_heap(arrivals_.begin(), arrivals_.end(), std::greater<>());
    HbmTransaction* transaction = arrivals_.back().transaction;
    arrivals_.pop_back();
    return transaction;
  }
  // Queue k to be served at `at` (a later activation); the caller books one time per queue.
  void book(Ticks at, int k) {
    // Bookings are near the earliest (a queue's bus frees within an entry's service): searched
    // from there.
    std::size_t i = wakeups_.size();
    while (i > 0 && wakeups_[i - 1].at < at) --i;
    if (i == 0 || wakeups_[i - 1].at != at) {
      wakeups_.insert(wakeups_.begin() + static_cast<std::ptrdiff_t>(i), Wakeups{at, spare()});
    } else {
      --i;
    }
    wakeups_[i].queues.push_back(k);
  }
  // Queue k to be served at this activation.
  void mark_due(int k) {
    if (is_due_[to_size(k)]) return;
    is_due_[to_size(k)] = 1;
    due_.push_back(k);
  }
  // Queue k refused by a watcher: asked again at the next activation (a watcher's space_event is
  // one of the process's triggers).
  void hold(int k) { held_.push_back(k); }
  // Marks due the queues whose booked time has come, and the held ones.
  void take_wakeups(sc_core::sc_time now) {
    while (!wakeups_.empty() && wakeups_.back().at <= now.value()) {
      std::vector<int>& queues = wakeups_.back().queues;
      for (int k : queues) mark_due(k);
      queues.clear();
      spare_.push_back(std::move(queues));
      wakeups_.pop_back();
    }
    for (int k : held_) mark_due(k);
    held_.clear();
  }
  // Calls serve(k) for every due queue in queue order (deterministic, and independent of how a
  // queue became due), then clears the marks.
  template <class Serve>
  void serve_due(Serve&& serve) {
    if (due_.size() * 8 > is_due_.size()) {  // many due (a wide access): walk the flags in order
      for (std::size_t k = 0; k < is_due_.size(); ++k) {
        if (is_due_[k]) serve(static_cast<int>(k));
      }
    } else {
      std::sort(due_.begin(), due_.end());
      for (int k : due_) serve(k);
    }
    for (int k : due_) is_due_[to_size(k)] = 0;
    due_.clear();
  }
  // The earliest booked wake-up or arrival, if any.
  std::optional<Ticks> next() const {
    std::optional<Ticks> next;
    if (!wakeups_.empty()) next = wakeups_.back().at;
    if (!arrivals_.empty() && (!next || arrivals_.front().at.value() < *next)) {
      next = arrivals_.front().at.value();
    }
    return next;
  }

 private:
  struct Arrival {
    sc_core::sc_time at;
    std::uint64_t order;  // issue order breaks ties, so equal arrival times stay FIFO
    HbmTransaction* transaction;
    bool operator>(const Arrival& other) const {
      return at != other.at ? at > other.at : order > other.order;
    }
  };

  // The queues booked for one time. Many wake at once (command times fall on the DRAM clock): a
  // booking is one push to its time's list, where a heap of (time, queue) cost a sift per booking
  // and per wake-up.
  struct Wakeups {
    Ticks at;
    std::vector<int> queues;
  };
  // An empty list, reusing the capacity of one already taken.
  std::vector<int> spare() {
    if (spare_.empty()) return {};
    std::vector<int> list = std::move(spare_.back());
    spare_.pop_back();
    return list;
  }

  std::vector<Arrival> arrivals_;        // min-heap by arrival time
  std::vector<Wakeups> wakeups_;         // by time, the latest first (the earliest at the back)
  std::vector<std::vector<int>> spare_;  // emptied lists, for reuse
  std::vector<int> due_;                 // queues to serve at this activation
  std::vector<char> is_due_;             // per queue: already in due_
  std::vector<int> held_;                // queues whose next request a watcher refused
  std::uint64_t issue_order_ = 0;
};

}  // namespace t3
