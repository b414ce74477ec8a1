// Turns by a fixed key for threads that reach a shared resource at one instant.
//
// Threads woken at one simulated time run in the order of the simulation kernel's queue of timed
// events. That queue holds every GPU's events and is a heap (equal times leave it in no fixed
// order), so GPUs running identical work would each meet their ties in an order of their own and
// drift apart. A thread that calls take_turn() waits one delta cycle, by which time every thread
// of its instant has called it too, and then goes in the order of its key; end_turn() lets the
// next one go. Between the two the thread must not wait.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <tuple>
#include <vector>

#include <systemc>

#include "tlm_interconnect/object_pool.h"

namespace t3 {

// Who asks: the requester (unit kind, GPU, unit) and what it asks for (an offset), compared in
// that order. Requests equal in all keep the order they asked in.
struct TurnKey {
  std::uint64_t requester = 0;
  std::uint64_t offset = 0;
  bool operator<(const TurnKey& other) const {
    return std::tie(requester, offset) < std::tie(other.requester, other.offset);
  }
};

class KeyTurns {
 public:
  // Returns in the calling thread once every thread that asked in this evaluation phase with a
  // smaller key has ended its turn.
  void take_turn(const TurnKey& key) {
    sc_core::sc_event& mine = events_.acquire();
    const std::uint64_t phase = sc_core::sc_delta_count();
    asking_.push_back({key, phase, asked_++, &mine});
    if (!gathering_ || *gathering_ != phase) {
      gathering_ = phase;
      gathered_.notify(sc_core::SC_ZERO_TIME);
    }
    sc_core::wait(gathered_);
    order(phase);
    while (queue_[head_].event != &mine) sc_core::wait(mine);
    events_.release(mine);
  }
  // The current turn is over: the next thread in key order goes (immediately, at this instant).
  void end_turn() {
    if (++head_ == queue_.size()) {
      queue_.clear();
      head_ = 0;
      return;
    }
    queue_[head_].event->notify();
  }

 private:
  struct Asker {
    TurnKey key;
    std::uint64_t phase;  // the evaluation phase it asked in (sc_delta_count)
    std::uint64_t order;  // the order it asked in: the last tie-break
    sc_core::sc_event* event;
    bool operator<(const Asker& other) const {
      if (key < other.key) return true;
      if (other.key < key) return false;
      return order < other.order;
    }
  };

  // The first of a phase's askers to wake queues them all in key order. Askers of the next phase
  // may already be waiting beside them (they asked while this phase's woke): they stay.
  void order(std::uint64_t phase) {
    const auto later = std::stable_partition(asking_.begin(), asking_.end(),
                                             [phase](const Asker& a) { return a.phase == phase; });
    if (later == asking_.begin()) return;
    std::sort(asking_.begin(), later);
    queue_.insert(queue_.end(), asking_.begin(), later);
    asking_.erase(asking_.begin(), later);
  }

  std::vector<Asker> asking_;  // asked, not yet ordered
  std::vector<Asker> queue_;   // ordered, taking turns from head_ on
  std::size_t head_ = 0;
  std::uint64_t asked_ = 0;
  std::optional<std::uint64_t> gathering_;  // the phase gathered_ was last notified for
  sc_core::sc_event gathered_;
  ObjectPool<sc_core::sc_event> events_;
};

}  // namespace t3
