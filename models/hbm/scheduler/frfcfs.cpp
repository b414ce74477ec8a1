#include "models/hbm/scheduler/frfcfs.h"

#include <limits>

namespace t3 {

std::optional<std::size_t> FrFcfs::choose(const RequestQueue& queue, const Admissible& allowed) {
  const int wanted = drain_.update(queue, allowed) ? 1 : 0;
  // Indices by direction ([write?]), kNone for none found (plain integers keep the scan's state in
  // registers). The scan stops at the first admitted row hit of the wanted direction: nothing
  // later can be chosen over it.
  constexpr std::size_t kNone = ~std::size_t{0};
  std::size_t oldest[2] = {kNone, kNone}, hit[2] = {kNone, kNone}, held_hit[2] = {kNone, kNone};
  // The admitted miss whose bank could activate first (the oldest of a tie), and when.
  std::size_t ready[2] = {kNone, kNone};
  constexpr std::uint64_t kNever = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t ready_at[2] = {kNever, kNever};
  const bool held_hits = allowed.held_row_hits;
  const PseudoChannelTimer* const banks = banks_;
  for (std::size_t i = 0; i < queue.size(); ++i) {
    const QueueEntry& entry = queue[i];
    const int w = entry.write ? 1 : 0;
    if (allowed.allows(entry.traffic_class)) {
      if (oldest[w] == kNone) oldest[w] = i;
      if (entry.row_hit) {
        if (hit[w] == kNone) hit[w] = i;
        if (w == wanted) break;
      } else if (banks != nullptr) {
        const std::uint64_t at = banks->activate_ready(
            entry.span, static_cast<std::uint64_t>(entry.request.arrival.value()));
        if (at < ready_at[w]) {
          ready_at[w] = at;
          ready[w] = i;
        }
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
  return std::nullopt;  // the policy admitted a class with nothing queued
}

}  // namespace t3
