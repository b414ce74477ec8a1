// Sector locks of the L2: every memory access it has in flight (a Transit) locks the sectors it
// covers, so that memory sees every sector's accesses in a coherent order. Internal to
// models/l2.
#pragma once

#include <cstdint>
#include <vector>

#include "models/l2/geometry.h"
#include "models/l2/transit.h"

namespace t3::l2 {

struct Lock {
  std::uint64_t line;
  std::uint64_t mask;  // sectors
  Transit* transit;
};

// Lock lists are per set, in registration order; a removal moves the last lock into the hole
// (as erasing from a vector by swapping with the back would). They are doubly linked through a
// pool of nodes: few locks are held at once, so the pool stays in the host's caches.
class LineLocks {
 public:
  explicit LineLocks(const Geometry& geometry);

  // Locks the sectors of every line [transit.begin, transit.end) overlaps.
  void lock(Transit& transit) {
    const std::uint64_t last = geometry_.last_line(transit.end);
    for (Cursor c = geometry_.cursor(geometry_.first_line(transit.begin)); c.line <= last;
         geometry_.advance(c)) {
      push(c.set, {c.line, geometry_.mask_of(c.line, transit.begin, transit.end), &transit});
    }
  }
  void unlock(Transit& transit);
  // The transit holding the first lock, in line order and in list order within a line's set,
  // that overlaps a sector of [begin, end) -- whole hardware lines if `bypass`, since a bypass
  // invalidates them; nullptr if none does. Bypasses do not conflict among themselves: they
  // meet at memory, like two initiators' stores.
  Transit* first_conflict(std::uint64_t begin, std::uint64_t end, bool bypass) const;
  // Calls fn(lock) for each lock of `set`, in list order.
  template <typename Fn>
  void for_each(std::uint64_t set, Fn&& fn) const {
    for (std::uint32_t n = lists_[set].head; n != kNil; n = nodes_[n].next) fn(nodes_[n].lock);
  }

 private:
  static constexpr std::uint32_t kNil = ~0u;
  struct Node {
    Lock lock;
    std::uint32_t prev, next;
  };
  struct List {
    std::uint32_t head = kNil, tail = kNil;
  };

  // `locked_sets_` has a bit per set whose lock list is not empty, so a lookup skips the
  // unlocked sets of its range a word at a time.
  void push(std::uint64_t set, const Lock& lock) {
    std::uint32_t n;
    if (free_node_ != kNil) {
      n = free_node_;
      free_node_ = nodes_[n].next;
    } else {
      n = static_cast<std::uint32_t>(nodes_.size());
      nodes_.emplace_back();
    }
    List& list = lists_[set];
    nodes_[n] = {lock, list.tail, kNil};
    if (list.tail == kNil) {
      list.head = n;
      locked_sets_[set / 64] |= 1ull << (set % 64);
    } else {
      nodes_[list.tail].next = n;
    }
    list.tail = n;
  }
  void pop(std::uint64_t set);  // removes the last lock of `set`
  std::uint64_t distance_to_locked(std::uint64_t set, std::uint64_t limit) const;
  Transit* conflict_in(std::uint64_t set, std::uint64_t line, std::uint64_t mask,
                       bool bypass) const;

  const Geometry geometry_;
  std::vector<List> lists_;                 // per set
  std::vector<Node> nodes_;                 // pool
  std::uint32_t free_node_ = kNil;          // free nodes, linked through `next`
  std::vector<std::uint64_t> locked_sets_;  // bit per set: its lock list is not empty
};

}  // namespace t3::l2
