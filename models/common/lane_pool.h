// Request threads spawned on demand and reused, as the SM's and the DMA engine's MSHR-like lanes:
// each request in flight is carried by a thread of its own from issue to completion, an idle
// thread takes the next request, so a pool holds as many threads as it ever had requests in
// flight at once. Header-only; the blocks that use it own it.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <systemc>
// sc_spawn, whether or not the includer defined SC_INCLUDE_DYNAMIC_PROCESSES.
#include <sysc/kernel/sc_dynamic_processes.h>

namespace t3 {

// `Lane` is the owner's per-request state (addresses, payload, what to notify when done); the pool
// adds the thread, its wake-up event and its busy flag. `serve` runs in the lane's thread once per
// request and calls release() when the lane may take another one.
template <typename Lane>
class LanePool {
 public:
  using Serve = std::function<void(Lane&)>;

  // Threads are named `prefix` + "_lane" + their index, spawned where acquire() is called.
  LanePool(std::string prefix, Serve serve)
      : prefix_(std::move(prefix)), serve_(std::move(serve)) {}

  // The most recently released idle lane, or a new one with its own thread.
  Lane& acquire() {
    if (!idle_.empty()) {
      Entry* entry = idle_.back();
      idle_.pop_back();
      return *entry;
    }
    entries_.push_back(std::make_unique<Entry>());
    Entry* entry = entries_.back().get();
    sc_core::sc_spawn([this, entry] { run(*entry); },
                      (prefix_ + "_lane" + std::to_string(entries_.size() - 1)).c_str());
    return *entry;
  }
  // Hands the request filled into `lane` to its thread.
  void start(Lane& lane) {
    Entry& entry = static_cast<Entry&>(lane);
    entry.busy = true;
    entry.wake.notify();
  }
  // From `serve`: the lane is idle again.
  void release(Lane& lane) {
    Entry& entry = static_cast<Entry&>(lane);
    entry.busy = false;
    idle_.push_back(&entry);
  }
  // Threads spawned so far: the most requests that were in flight at once.
  std::size_t size() const { return entries_.size(); }

 private:
  struct Entry : Lane {
    sc_core::sc_event wake;
    bool busy = false;
  };
  void run(Entry& entry) {
    for (;;) {
      while (!entry.busy) sc_core::wait(entry.wake);
      serve_(entry);
    }
  }

  std::string prefix_;
  Serve serve_;
  std::vector<std::unique_ptr<Entry>> entries_;
  std::vector<Entry*> idle_;
};

}  // namespace t3
