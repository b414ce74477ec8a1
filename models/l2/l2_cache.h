// Memory-side L2 of one GPU: the point of coherence for its HBM. Every access to local HBM (from
// this GPU's SMs or from peers, through the router) passes here on its way to the memory
// controller. Sectored, set-associative, LRU, write-back/write-allocate, line-interleaved banks
// modelled as reservation calendars. An access's write-backs and fills go one after another
// (l2.miss_path = serial), or its misses are in flight together and its dirty victims drain
// through a bounded write-back buffer (concurrent). Uncached accesses and near-memory updates
// bypass it after the lines they overlap are written back and invalidated.
//
// With l2.partitions = 2 the L2 is two such caches over one memory, as in the A100 and H100: each
// partition serves half the SMs and is the home (point of coherence) of half the addresses. An
// SM's read goes to its own partition, which fills a line homed in the other from that one over
// the fabric, so a line read from both sides holds a line in each; a read of another requester
// (DMA engine, peer, host) enters at the home of its first byte. A far copy costs the fabric both
// ways and the home's banks on top of the near lookup, not a second hit latency. Stores and
// uncached accesses go to the home partition of each granule they touch, all pieces at once; a
// store invalidates the other partition's copy, which is therefore always clean.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>
#include <nlohmann/json.hpp>
#include <systemc>
#include <tlm>

#include "config/system_config.h"
#include "tlm_interconnect/payload.h"

namespace t3 {

template <typename Lane>
class LanePool;

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

  // Caches [window_base, window_base + window_size) of GPU `gpu` (whose own SMs reach their
  // partition directly). Throws ConfigError naming the l2.* key if the geometry is inconsistent.
  L2Cache(sc_core::sc_module_name name, const L2Config& config, SimMode mode,
          std::uint64_t window_base, std::uint64_t window_size, std::uint16_t gpu = 0);
  ~L2Cache() override;

  // Over all partitions: a read an SM's partition fills from the other is counted as a lookup in
  // both, and its fill only where it comes from memory.
  const L2Stats& stats() const;
  // Stats, plus hit_rate (sectors hit / sectors looked up) per class and overall.
  nlohmann::json report() const;
  // b_transport calls inside the L2 and posted write-backs not yet in memory, right now; 0 at
  // the end of a clean run.
  std::size_t pending() const;

  std::uint64_t sets() const;  // per partition
  int bank_of(std::uint64_t address) const;
  int partitions() const { return static_cast<int>(parts_.size()); }
  // The partition that is the home of `address` (0 with one partition).
  int home_of(std::uint64_t address) const;

 private:
  // Loosely timed: the caller's thread waits while the L2's memory accesses for it are in the
  // memory controller (the first in its own thread, the others in the L2's lanes); the returned
  // delay is the time from sc_time_stamp() to completion.
  void b_transport(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay);
  // Reads merge valid L2 data over memory's; writes go to memory and update any L2 copy.
  unsigned transport_dbg(tlm::tlm_generic_payload& payload);
  struct Impl;
  // The partition a cached read enters: an SM of this GPU's own side's, every other requester's
  // (through the hub) the home of `address`.
  int partition_of(const T3Extension& extension, std::uint64_t address) const;
  // With two partitions: an access to the home partitions of its pieces, all at once.
  void to_homes(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay);
  // Window offsets [begin, end) of an access, all homed in partition `home`.
  struct Span {
    std::uint64_t begin = 0, end = 0;
    int home = 0;
  };
  struct Piece;
  struct PieceJoin;
  void shape_piece(tlm::tlm_generic_payload& piece, const tlm::tlm_generic_payload& whole,
                   const Span& span) const;
  sc_core::sc_time serve_at_home(tlm::tlm_generic_payload& piece, const Span& span,
                                 sc_core::sc_time arrival);
  void serve_piece(Piece& piece);
  nlohmann::json partitions_report() const;
  std::vector<std::unique_ptr<Impl>> parts_;
  std::unique_ptr<LanePool<Piece>> pieces_;  // with two partitions: pieces beside the first
  std::uint16_t gpu_;
  std::int64_t sm_group_;
  unsigned granule_shift_;
  std::vector<L2Stats> part_stats_;  // with two partitions, each one's
  mutable L2Stats stats_;            // with one partition, its own; else their sum
};

}  // namespace t3
