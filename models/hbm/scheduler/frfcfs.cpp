#include "models/hbm/scheduler/frfcfs.h"

#include <algorithm>

namespace t3 {

namespace {

constexpr std::size_t kNone = BankScheduler::kNoChoice;

// What the scan found in one direction (reads, or writes and updates): entry indices, kNone for
// none found.
struct Found {
  std::size_t oldest = kNone;    // the oldest admitted entry
  std::size_t hit = kNone;       // the oldest admitted row hit
  std::size_t held_hit = kNone;  // the oldest row hit of a held-back class
  // The admitted miss to serve if no row hit is: the oldest, unless a younger one could activate
  // at least tRRD_L before every older miss could (then the youngest such ahead of the rest). It
  // fills the older ones' wait for their banks and moves none of their activations, so no miss
  // starves. `earliest` is the earliest activation of the misses scanned so far.
  std::size_t ready = kNone;
  std::uint64_t earliest = PseudoChannelTimer::kNever;
};

// A direction's choice: its row hit, then a held-back class's, then the look-ahead's miss, then
// its oldest.
std::size_t first_of(const Found& found) {
  for (std::size_t index : {found.hit, found.held_hit, found.ready, found.oldest}) {
    if (index != kNone) return index;
  }
  return kNone;
}

// Whether `queue` holds a row hit of direction `write` of a class `allowed` admits.
bool admitted_row_hits(const RequestQueue& queue, bool write, const Admissible& allowed) {
  for (TrafficClass c : {TrafficClass::Compute, TrafficClass::Communication}) {
    if (allowed.allows(c) && queue.row_hits(write, c) > 0) return true;
  }
  return false;
}

}  // namespace

std::size_t FrFcfs::choose(const RequestQueue& queue, const Admissible& allowed) {
  const bool want_writes = drain_.update(queue, allowed);
  // An admitted row hit in the wanted direction is the choice, the oldest of them: found without
  // the look-ahead's bank readiness for the misses ahead of it.
  if (admitted_row_hits(queue, want_writes, allowed)) {
    for (std::size_t i = 0;; ++i) {
      const QueueEntry& entry = queue[i];
      if (entry.row_hit && entry.write == want_writes && allowed.allows(entry.traffic_class)) {
        return i;
      }
    }
  }
  // No admitted row hit in the wanted direction: the scan reads the whole queue. One Found per
  // direction, each its own variable and the entry's direction choosing which the scan updates
  // (not an array indexed by it), so they stay in registers: an indexed array made every entry
  // wait for the store of the entry before. The other direction is chosen from only when the
  // wanted one has no admitted entry, so while it has one the other's entries are passed over
  // (their misses need no look-ahead).
  Found reads, writes;
  const PseudoChannelTimer* const banks = banks_;
  const bool held_hits = allowed.held_row_hits;
  const bool both = drain_.admitted(want_writes) == 0;
  // Entry i in direction `found`.
  const auto visit = [&](Found& found, const QueueEntry& entry, std::size_t i) {
    if (allowed.allows(entry.traffic_class)) {
      if (found.oldest == kNone) found.oldest = i;
      if (entry.row_hit) {
        if (found.hit == kNone) found.hit = i;
        return;
      }
      if (banks != nullptr && !entry.watched) {
        const std::uint64_t at = banks->activate_ready(
            entry.span, static_cast<std::uint64_t>(entry.request.arrival.value()));
        if (banks->activates_ahead(at, found.earliest)) found.ready = i;
      }
    } else if (held_hits && found.held_hit == kNone && entry.row_hit) {
      found.held_hit = i;
    }
  };
  for (std::size_t i = 0; i < queue.size(); ++i) {
    const QueueEntry& entry = queue[i];
    if (entry.write != want_writes && !both) continue;
    if (entry.write) {
      visit(writes, entry, i);
    } else {
      visit(reads, entry, i);
    }
  }
  const bool writes_first = drain_.draining() || reads.oldest == kNone;
  const std::size_t first = first_of(writes_first ? writes : reads);
  if (first != kNone) return first;
  return first_of(writes_first ? reads : writes);  // kNone: the policy admitted nothing queued
}

}  // namespace t3
