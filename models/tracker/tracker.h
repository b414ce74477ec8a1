// The T3 tracker of one GPU: a table at the memory controller that counts, per output tile
// (tracking tag), the bytes of tagged stores and updates applied to programmed regions, and fires a
// DMA transfer when a tile's count reaches its region's threshold.
//
// Programming model (host, through MMIO; offsets in t3::tracker below, docs/registers.md):
// - The host programs up to kRegions REGIONS. Region r is {BASE (global address), SIZE (bytes),
//   THRESHOLD (bytes per tag that complete a tile, e.g. 2 x tile bytes = one local update plus one
//   incoming update), DMA_DST (destination base for the region's fired tiles), DMA_OP (0 none:
//   only count and mark complete, 1 store, 2 update), ELEMENT (0 fp32, 1 fp16, 2 bf16), CONTROL
//   (bit 0 enable), GRID_COLS, EDGE_THRESHOLD}. Program a region while it is disabled, then write
//   CONTROL = 1. An enable with SIZE 0, THRESHOLD 0, DMA_OP > 2, ELEMENT > 2, GRID_COLS != 0 with
//   EDGE_THRESHOLD 0 or a region that wraps past 2^64 is refused: CONTROL reads back 0.
//   Overlapping regions: the lowest-numbered enabled region wins.
// - Tile geometry: an output whose width is not a multiple of the tile width has a last tile
//   column of narrower tiles (the layout has no padding), so those tiles carry fewer bytes. With
//   GRID_COLS != 0 (the tile columns of the tag numbering, tag = tile_row * GRID_COLS + tile_col)
//   a tag with tag % GRID_COLS == GRID_COLS - 1 completes at EDGE_THRESHOLD bytes, every other
//   tag at THRESHOLD; GRID_COLS 0 (the reset value) uses THRESHOLD for every tag. A ragged last
//   tile row is contiguous in the layout, so it can take a region of its own with its sizes.
// - Tile groups: TAG_GROUP = G > 1 (a global register) makes G neighbouring tiles of a tile row
//   share one entry in every region with GRID_COLS != 0: tag t counts into the group of its first
//   tile, t - (t % GRID_COLS) % G, which completes at the sum of its tiles' thresholds (the last
//   group of a row may hold fewer tiles, and the edge tile). A group's tiles are contiguous in
//   the layout, so it fires one DMA transfer, carrying the group's first tag, which the next GPU's
//   tracker (same G) counts into the same group. Coarser groups need fewer entries: software
//   picks G so that every tile that can be pending at once has an entry (no back-pressure).
//   Program TAG_GROUP before enabling regions.
// - Per-tag ENTRIES (config.entries of them) are allocated dynamically: the first tagged write or
//   update that falls in an enabled region allocates an entry for (region, tag). Each applied part
//   adds its bytes, and the entry keeps the lowest address and highest end it saw (tiles are
//   contiguous in our layout). When the count reaches the tag's threshold the entry FIRES: with
//   DMA_OP != 0 it triggers the DMA engine with DmaRequest{source = lowest, destination = DMA_DST +
//   (lowest - BASE), bytes = highest end - lowest, op, element, tag (the same tag, so the next
//   GPU's tracker counts it), descriptor = region index}; REGION_DONE[r] and FIRED count it; the
//   entry is freed.
// - Errors (counted, recorded in errors(), reported with SC_REPORT_INFO; the data itself is still
//   applied by memory):
//   * ERRORS: a tagged write/update that is not wholly inside an enabled region ("gpuN tracker: tag
//     T at address 0x... is not in any programmed region").
//   * OVERCOUNT: conservation. Each contribution must be applied exactly once, so bytes for a tag
//     that already fired in its region, or a count that jumps past the tag's threshold, is an
//     error. Fired tags are remembered per region until RESET or until the region is disabled
//     and enabled again (a new round of tiles).
// - Back-pressure: the memory controller asks admit() just before applying a tagged access. It is
//   true if the access is in no enabled region (it is reported as an error when applied), if its
//   (region, tag) already has an entry, or if a free entry exists (which is then reserved for it);
//   false when the table is full. The controller then keeps the request queued, its channel idle,
//   until space_event() (an entry was freed). A table smaller than the tags whose contributions
//   interleave at one channel can deadlock (a refused request at the head of a channel stalls the
//   parts of tags that hold entries): size tracker.entries for the tiles in flight at once.
// - RESET (write 1) frees every entry, forgets fired tags and zeroes FIRED, ERRORS, OVERCOUNT,
//   REFUSED, MAX_IN_USE and REGION_DONE (and the statistics); region programming is kept.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <nlohmann/json.hpp>
#include <systemc>

#include "config/system_config.h"
#include "protocol/tracker_registers.h"
#include "tlm_interconnect/error_log.h"
#include "tlm_interconnect/memory_events.h"
#include "tlm_interconnect/register_block.h"

namespace t3 {

// One fired tile, for tests and traces.
struct TrackerFire {
  sc_core::sc_time time;
  std::uint32_t tag;
  int region;
  std::uint64_t source;       // lowest address seen for the tag
  std::uint64_t destination;  // DMA destination (DMA_DST + source - BASE)
  std::uint64_t bytes;        // highest end - lowest address
  std::uint64_t counted;      // bytes counted for the tag (== its threshold unless overcounted)
  std::uint32_t op;           // tracker::DmaOp
  sc_core::sc_time first;     // when the entry was allocated
};

struct TrackerStats {
  std::uint64_t fired = 0;
  std::uint64_t errors = 0;     // accesses in no enabled region
  std::uint64_t overcount = 0;  // conservation errors
  std::uint64_t refused = 0;    // admit() answered false
  std::uint64_t max_in_use = 0;
  std::uint64_t counted_bytes = 0;  // bytes counted into entries
  std::vector<std::uint64_t> region_fired = std::vector<std::uint64_t>(tracker::kRegions, 0);
};

class Tracker : public RegisterBlock, public MemoryWatchIf {
 public:
  sc_core::sc_export<MemoryWatchIf> watch_export;  // bind MemoryController::watch here
  sc_core::sc_port<DmaTriggerIf, 1, sc_core::SC_ZERO_OR_MORE_BOUND> dma;

  Tracker(sc_core::sc_module_name name, const TrackerConfig& config, sc_core::sc_time mmio_latency,
          int gpu);

  // MemoryWatchIf
  bool admit(const AppliedAccess& access) override;
  void applied(const AppliedAccess& access) override;
  const sc_core::sc_event& space_event() const override { return space_event_; }

  const TrackerStats& stats() const { return stats_; }
  // Entries allocated and not fired (a non-zero value after a run: tiles never completed).
  std::size_t pending() const { return in_use_; }
  // The entries below their threshold, e.g. "group.gpu1.tracker holds 3 tiles below their
  // threshold: region 0 tag 5 at 4096 of 8192 bytes, ..." (the first `shown` by region and tag,
  // then how many more); empty if none.
  std::string describe_pending(std::size_t shown = 4) const;
  std::size_t capacity() const { return entries_.size(); }
  int gpu() const { return gpu_; }
  const std::vector<TrackerFire>& fires() const { return fires_; }
  // Error messages, the first kMaxErrorMessages of them (all are counted).
  const std::vector<std::string>& errors() const { return errors_.messages(); }
  nlohmann::json report() const;

  static constexpr std::size_t kMaxErrorMessages = 64;

 private:
  struct Region {
    std::uint64_t base = 0, size = 0, dst = 0;
    std::uint32_t threshold = 0, op = tracker::kOpNone, element = 0, control = 0;
    std::uint32_t grid_cols = 0, edge_threshold = 0;  // edge tiles: see the header comment
    std::unordered_set<std::uint32_t> fired_tags;     // conservation: a tag fires once per region
  };
  struct Entry {
    bool used = false;
    int region = -1;
    std::uint32_t tag = kNoTag;
    std::uint64_t count = 0;
    std::uint64_t low = 0, high_end = 0;
    sc_core::sc_time allocated;
  };

  // Enabled region wholly holding [address, address + bytes), or -1.
  int find_region(std::uint64_t address, std::uint64_t bytes) const;
  static std::uint64_t key(int region, std::uint32_t tag) {
    return (static_cast<std::uint64_t>(region) << 32) | tag;
  }
  // The entry tag `tag` counts into in region `region`: the first tag of its tile group.
  std::uint32_t group_of(int region, std::uint32_t tag) const;
  // Bytes that complete the group whose first tag is `group`: each tile's THRESHOLD, or
  // EDGE_THRESHOLD for a tile of the last column.
  std::uint64_t threshold_of(int region, std::uint32_t group) const;
  int allocate(int region, std::uint32_t tag);
  void release(int index);
  void fire(int index);
  void control(int region, std::uint32_t value);
  void reset(std::uint32_t value);

  int gpu_;
  std::string prefix_;  // "gpuN tracker: "
  std::vector<Region> regions_;
  std::vector<int> enabled_;  // enabled region indices, ascending
  std::vector<Entry> entries_;
  std::vector<int> free_;                         // free entry indices (a stack)
  std::unordered_map<std::uint64_t, int> index_;  // (region, tag) -> entry
  std::uint32_t in_use_ = 0;
  std::uint32_t tag_group_ = 0;  // TAG_GROUP
  TrackerStats stats_;
  std::vector<TrackerFire> fires_;
  ErrorLog errors_;
  sc_core::sc_event space_event_;
};

}  // namespace t3
