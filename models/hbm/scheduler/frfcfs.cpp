#include "models/hbm/scheduler/frfcfs.h"

namespace t3 {

std::optional<std::size_t> FrFcfs::choose(const RequestQueue& queue, const Admissible& allowed) {
  const int wanted = drain_.update(queue, allowed) ? 1 : 0;
  // Indices by direction ([write?]), kNone for none found (plain integers keep the scan's state in
  // registers). The scan stops at the first admitted row hit of the wanted direction: nothing
  // later can be chosen over it.
  constexpr std::size_t kNone = ~std::size_t{0};
  std::size_t oldest[2] = {kNone, kNone}, hit[2] = {kNone, kNone}, held_hit[2] = {kNone, kNone};
  const bool held_hits = allowed.held_row_hits;
  for (std::size_t i = 0; i < queue.size(); ++i) {
    const QueueEntry& entry = queue[i];
    const int w = entry.write ? 1 : 0;
    if (allowed.allows(entry.traffic_class)) {
      if (oldest[w] == kNone) oldest[w] = i;
      if (hit[w] == kNone && entry.row_hit) hit[w] = i;
      if (w == wanted && hit[w] != kNone) break;
    } else if (held_hits && held_hit[w] == kNone && entry.row_hit) {
      held_hit[w] = i;
    }
  }
  const int first = drain_.draining() || oldest[0] == kNone ? 1 : 0;
  for (int w : {first, 1 - first}) {
    for (std::size_t found : {hit[w], held_hit[w], oldest[w]}) {
      if (found != kNone) return found;
    }
  }
  return std::nullopt;  // the policy admitted a class with nothing queued
}

}  // namespace t3
