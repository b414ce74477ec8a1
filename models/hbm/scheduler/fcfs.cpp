#include "models/hbm/scheduler/fcfs.h"

namespace t3 {

std::size_t Fcfs::choose(const RequestQueue& queue, const Admissible& allowed) {
  const int wanted = drain_.update(queue, allowed) ? 1 : 0;
  // [write?]; the scan stops at the wanted direction's.
  std::size_t oldest[2] = {kNoChoice, kNoChoice};
  for (std::size_t i = 0; i < queue.size(); ++i) {
    const QueueEntry& entry = queue[i];
    if (!allowed.allows(entry.traffic_class)) continue;
    const int w = entry.write ? 1 : 0;
    if (oldest[w] == kNoChoice) oldest[w] = i;
    if (w == wanted) break;
  }
  const int first = drain_.draining() || oldest[0] == kNoChoice ? 1 : 0;
  for (int w : {first, 1 - first}) {
    if (oldest[w] != kNoChoice) return oldest[w];
  }
  return kNoChoice;  // the policy admitted a class with nothing queued
}

}  // namespace t3
