// Memory-side L2 of one GPU: the point of coherence for its HBM. Every access to local HBM (from
// this GPU's SMs or from peers, through the router) passes here on its way to the memory
// controller. Sectored, set-associative, LRU, write-back/write-allocate, line-interleaved banks
// modelled as reservation calendars. An access's write-backs and fills go one after another
// (l2.miss_path = serial), or its misses are in flight together and its dirty victims drain
// through a bounded write-back buffer (concurrent). Uncached accesses and near-memory updates
// bypass it after the lines they overlap are written back and invalidated.
#pragma once

#include <array>
#include <cstdint>
#include <memory>

#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>
#include <nlohmann/json.hpp>
#include <systemc>
#include <tlm>

#include "config/system_config.h"
#include "tlm_interconnect/payload.h"

namespace t3 {

// Counters per traffic class of the requester (index with static_cast<int>(TrafficClass)).
// Memory traffic the L2 generates (fills, write-backs) is charged to the requester that caused it.
struct L2Stats {
  using PerClass = std::array<std::uint64_t, kTrafficClasses>;
  PerClass read_hit_sectors{};   // sectors a cached read found valid (also after waiting on a fill)
  PerClass read_miss_sectors{};  // sectors a cached read had to fetch
  PerClass write_hit_sectors{};  // sectors a cached write found valid
  PerClass write_miss_sectors{};  // sectors a cached write found invalid (fetched only if partial)
  PerClass bypass_bytes{};        // bytes of uncached accesses and updates forwarded to memory
  PerClass fill_bytes{};          // bytes read from memory into the L2
  PerClass writeback_bytes{};     // dirty bytes written to memory (evictions and bypass flushes)
  PerClass evictions{};           // valid lines replaced
  PerClass unallocated_bytes{};   // cached bytes served straight from/to memory: every way of the
                                  // set had a fill in flight, so nothing could be replaced
};

class L2Cache : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<L2Cache> in;
  tlm_utils::simple_initiator_socket<L2Cache> out;  // to the memory controller

  // Caches [window_base, window_base + window_size). Throws ConfigError naming the l2.* key if
  // the geometry is inconsistent.
  L2Cache(sc_core::sc_module_name name, const L2Config& config, SimMode mode,
          std::uint64_t window_base, std::uint64_t window_size);
  ~L2Cache() override;

  const L2Stats& stats() const { return stats_; }
  // Stats, plus hit_rate (sectors hit / sectors looked up) per class and overall.
  nlohmann::json report() const;
  // b_transport calls inside the L2 and posted write-backs not yet in memory, right now; 0 at
  // the end of a clean run.
  std::size_t pending() const;

  std::uint64_t sets() const;
  int bank_of(std::uint64_t address) const;

 private:
  // Loosely timed: the caller's thread waits while the L2's memory accesses for it are in the
  // memory controller (the first in its own thread, the others in the L2's lanes); the returned
  // delay is the time from sc_time_stamp() to completion.
  void b_transport(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay);
  // Reads merge valid L2 data over memory's; writes go to memory and update any L2 copy.
  unsigned transport_dbg(tlm::tlm_generic_payload& payload);
  struct Impl;
  std::unique_ptr<Impl> impl_;
  L2Stats stats_;
};

}  // namespace t3
