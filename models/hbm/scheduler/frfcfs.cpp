#include "models/hbm/scheduler/frfcfs.h"

#include <algorithm>

namespace t3 {

std::size_t FrFcfs::choose(const RequestQueue& queue, const Admissible& allowed) {
  const int wanted = drain_.update(queue, allowed) ? 1 : 0;
  // Indices by direction ([write?]), kNone for none found (plain integers keep the scan's state in
  // registers). The scan stops at the first admitted row hit of the wanted direction: nothing
  // later can be chosen over it.
  constexpr std::size_t kNone = ~std::size_t{0};
  std::size_t oldest[2] = {kNone, kNone}, hit[2] = {kNone, kNone}, held_hit[2] = {kNone, kNone};
  // The admitted miss to serve if no row hit is: the oldest, unless a younger one could activate
  // at least tRRD_L before every older miss could (then the youngest such ahead of the rest). It
  // fills the older ones' wait for their banks and moves none of their activations, so no miss
  // starves. `earliest` is the earliest activation of the misses scanned so far.
  const PseudoChannelTimer* const banks = banks_;
  std::size_t ready[2] = {kNone, kNone};
  constexpr std::uint64_t kNever = PseudoChannelTimer::kNever;
  std::uint64_t earliest[2] = {kNever, kNever};
  const bool held_hits = allowed.held_row_hits;
  for (std::size_t i = 0; i < queue.size(); ++i) {
    const QueueEntry& entry = queue[i];
    const int w = entry.write ? 1 : 0;
    if (allowed.allows(entry.traffic_class)) {
      if (oldest[w] == kNone) oldest[w] = i;
      if (entry.row_hit) {
        if (hit[w] == kNone) hit[w] = i;
        if (w == wanted) break;
      } else if (banks != nullptr && !entry.watched) {
        const std::uint64_t at = banks->activate_ready(
            entry.span, static_cast<std::uint64_t>(entry.request.arrival.value()));
        if (banks->activates_ahead(at, earliest[w])) ready[w] = i;
      }
    } else if (held_hits && held_hit[w] == kNone && entry.row_hit) {
      held_hit[w] = i;
    }
  }
  const int first = drain_.draining() || oldest[0] == kNone ? 1 : 0;
  for (int w : {first, 1 - first}) {
    for (std::size_t found : {hit[w], held_hit[w], ready[w], oldest[w]}) {
      if (found != kNone) return found;
    }
  }
  return kNoChoice;  // the policy admitted a class with nothing queued
}

}  // namespace t3
