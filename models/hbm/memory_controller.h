// Memory controller and HBM of one GPU: per-channel request queues served by a pluggable
// arbitration policy, a bandwidth/latency channel model, and near-memory compute for updates.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <vector>

#include <tlm_utils/simple_target_socket.h>
#include <nlohmann/json.hpp>
#include <systemc>
#include <tlm>

#include "config/system_config.h"
#include "models/hbm/arbitration.h"
#include "models/hbm/backing_store.h"
#include "models/hbm/dram_bank.h"
#include "tlm_interconnect/memory_events.h"
#include "tlm_interconnect/payload.h"

namespace t3 {

struct HbmStats {
  // Bytes and requests served, by op then traffic class (index with static_cast<int>).
  std::array<std::array<std::uint64_t, kTrafficClasses>, kOps> bytes{};
  std::array<std::array<std::uint64_t, kTrafficClasses>, kOps> requests{};
  std::vector<std::uint64_t> channel_bytes;  // per channel
  std::vector<double> channel_busy_ns;       // per channel, data-bus occupancy
  // Queue occupancy (entries waiting, not yet in service), per traffic class, over all channels.
  std::array<double, kTrafficClasses> occupancy_integral_ns{};  // sum of entries x time
  std::array<std::uint64_t, kTrafficClasses> max_occupancy{};   // of any one channel
  std::uint64_t rejected = 0;  // error responses (bad address, bad command)
  // Bank model: bank accesses that found their row open, and those that had to open it.
  std::uint64_t row_hits = 0;
  std::uint64_t row_misses = 0;
  // Bank model, for the energy estimate: column bursts served by op (an update's bursts are each
  // read once and written once), and, as of the last stats() call, the time summed over
  // pseudo-channels that at least one bank held a row open (active standby).
  std::array<std::uint64_t, kOps> column_bursts{};
  double bank_open_ns = 0;
  std::vector<std::uint64_t> channel_row_hits;    // per channel, of row_hits
  std::vector<std::uint64_t> channel_row_misses;  // per channel, of row_misses
};

class MemoryController : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<MemoryController> socket;
  // Watchers of tagged writes/updates (the tracker), any number. Just before a queued Write or
  // Update whose tag != kNoTag is served, every watcher is asked admit() (in bind order, stopping
  // at the first refusal); a refusal leaves that request queued and its channel idle (no
  // reordering past it) until some watcher's space_event() fires. After the data is applied
  // (service time), every watcher gets applied(). Both are called once per sub-request (one
  // channel's part of a transaction) with that part's global address and bytes. Untagged traffic
  // and reads never reach the watchers.
  sc_core::sc_port<MemoryWatchIf, 0, sc_core::SC_ZERO_OR_MORE_BOUND> watch;

  // Serves [window_base, window_base + capacity) of the global address space.
  MemoryController(sc_core::sc_module_name name, const HbmConfig& config, SimMode mode,
                   std::uint64_t window_base);
  ~MemoryController() override;

  const HbmStats& stats() const;
  nlohmann::json report() const;  // stats as JSON, plus mean occupancies over the elapsed time
  // Requests accepted but not answered yet; non-zero after a run means work was left pending.
  std::size_t pending() const;
  int channel_of(std::uint64_t offset) const;

  // Called on every change of a channel's queue occupancy (for traces and counters); any number
  // of observers, in the order they were added.
  using OccupancyObserver =
      std::function<void(sc_core::sc_time, int channel, int compute, int communication)>;
  void observe_occupancy(OccupancyObserver observer);
  // Bank model: appends every DRAM command of every pseudo-channel to `log` (nullptr: stop), in
  // service order (t3sim trace --commands sorts them by time). A debugging aid: the log grows by
  // a few commands per request. Throws ConfigError with the simple model (it has no commands).
  void log_commands(std::vector<DramCommand>* log);

 private:
  // b_transport may wait: the calling thread resumes when the last byte of its access is done.
  void b_transport(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay);
  unsigned transport_dbg(tlm::tlm_generic_payload& payload);
  // The controller's one process (SC_METHOD): admits arrivals and starts service on free channels.
  void activate();
  void end_of_elaboration() override;
  struct Impl;
  std::unique_ptr<Impl> impl_;
  HbmStats stats_;
  std::unique_ptr<sc_core::sc_event_finder> space_finder_;  // watch[i]->space_event(), for all i
};

}  // namespace t3
