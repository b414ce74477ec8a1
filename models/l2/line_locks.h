// Sector locks of the L2: every memory access it has in flight (a Transit) locks the sectors it
// covers, so that memory sees every sector's accesses in a coherent order. Internal to
// models/l2.
#pragma once

#include <algorithm>
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

// Inline: every access and every memory access it makes passes here.

inline void LineLocks::unlock(Transit& transit) {
  const std::uint64_t last = geometry_.last_line(transit.end);
  for (Cursor c = geometry_.cursor(geometry_.first_line(transit.begin)); c.line <= last;
       geometry_.advance(c)) {
    for (std::uint32_t n = lists_[c.set].head; n != kNil;) {
      Node& node = nodes_[n];
      if (node.lock.transit != &transit || node.lock.line != c.line) {
        n = node.next;
        continue;
      }
      const std::uint32_t tail = lists_[c.set].tail;
      if (n != tail) node.lock = nodes_[tail].lock;  // then look at this position again
      pop(c.set);
      if (n == tail) break;
    }
  }
}

inline void LineLocks::pop(std::uint64_t set) {
  List& list = lists_[set];
  const std::uint32_t n = list.tail;
  list.tail = nodes_[n].prev;
  if (list.tail == kNil) {
    list.head = kNil;
    locked_sets_[set / 64] &= ~(1ull << (set % 64));
  } else {
    nodes_[list.tail].next = kNil;
  }
  nodes_[n].next = free_node_;
  free_node_ = n;
}

inline Transit* LineLocks::first_conflict(std::uint64_t begin, std::uint64_t end,
                                          bool bypass) const {
  const std::uint64_t last = geometry_.last_line(end);
  std::uint64_t line = geometry_.first_line(begin);
  std::uint64_t set = line % geometry_.sets;
  for (;;) {
    const std::uint64_t skip = distance_to_locked(set, last - line + 1);
    if (skip > last - line) return nullptr;
    line += skip;
    set += skip;  // skip < sets: a locked set is found within one lap
    if (set >= geometry_.sets) set -= geometry_.sets;
    const std::uint64_t mask =
        bypass ? geometry_.line_mask_of(line, begin, end) : geometry_.mask_of(line, begin, end);
    if (Transit* blocking = conflict_in(set, line, mask, bypass)) return blocking;
    if (line == last) return nullptr;
    ++line;
    if (++set == geometry_.sets) set = 0;
  }
}

// Sets to step from `set` (wrapping) to the next set with locks; `limit` or more if there is
// none within `limit` steps.
inline std::uint64_t LineLocks::distance_to_locked(std::uint64_t set, std::uint64_t limit) const {
  const std::uint64_t sets = geometry_.sets;
  std::uint64_t distance = 0;
  for (;;) {
    const std::uint64_t bits = locked_sets_[set / 64] >> (set % 64);  // no bits past `sets`
    if (bits != 0) return distance + static_cast<std::uint64_t>(__builtin_ctzll(bits));
    const std::uint64_t step = std::min(64 - set % 64, sets - set);
    distance += step;
    if (distance >= limit) return distance;
    set += step;
    if (set == sets) set = 0;
  }
}

// The transit of the first lock of `set` on `line` that overlaps `mask`.
inline Transit* LineLocks::conflict_in(std::uint64_t set, std::uint64_t line, std::uint64_t mask,
                                       bool bypass) const {
  for (std::uint32_t n = lists_[set].head; n != kNil; n = nodes_[n].next) {
    const Lock& lock = nodes_[n].lock;
    if (lock.line == line && (lock.mask & mask) != 0 &&
        !(bypass && lock.transit->kind == Transit::Kind::Bypass)) {
      return lock.transit;
    }
  }
  return nullptr;
}

}  // namespace t3::l2
