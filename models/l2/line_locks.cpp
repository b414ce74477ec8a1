#include "models/l2/line_locks.h"

#include <algorithm>

namespace t3::l2 {

LineLocks::LineLocks(const Geometry& geometry)
    : geometry_(geometry), lists_(geometry.sets), locked_sets_((geometry.sets + 63) / 64, 0) {}

void LineLocks::unlock(Transit& transit) {
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

void LineLocks::pop(std::uint64_t set) {
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

Transit* LineLocks::first_conflict(std::uint64_t begin, std::uint64_t end, bool bypass) const {
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
std::uint64_t LineLocks::distance_to_locked(std::uint64_t set, std::uint64_t limit) const {
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
Transit* LineLocks::conflict_in(std::uint64_t set, std::uint64_t line, std::uint64_t mask,
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
