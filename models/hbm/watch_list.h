// The blocks that watch a memory controller's tagged writes and updates (MemoryController::watch:
// the tracker), cached once elaboration has bound them.
#pragma once

#include <cstdint>
#include <vector>

#include "tlm_interconnect/memory_events.h"

namespace t3 {

class WatchList {
 public:
  void assign(std::vector<MemoryWatchIf*> watchers) { watchers_ = std::move(watchers); }
  bool empty() const { return watchers_.empty(); }
  // Asks every watcher, in bind order up to the first refusal, whether `access` may go now.
  bool admit(const AppliedAccess& access) {
    for (MemoryWatchIf* watcher : watchers_) {
      if (!watcher->admit(access)) {
        ++refusals_;
        return false;
      }
    }
    return true;
  }
  void applied(const AppliedAccess& access) {
    for (MemoryWatchIf* watcher : watchers_) watcher->applied(access);
  }
  std::uint64_t refusals() const { return refusals_; }  // admit() calls answered false

 private:
  std::vector<MemoryWatchIf*> watchers_;
  std::uint64_t refusals_ = 0;
};

}  // namespace t3
