#include "models/tracker/tracker.h"

#include <algorithm>
#include <limits>
#include <string>

#include "protocol/hex.h"
#include "protocol/to_size.h"
#include "tlm_interconnect/address_map.h"

namespace t3 {

using namespace tracker;

namespace {

constexpr const char* kMsgType = "t3/tracker";

}  // namespace

Tracker::Tracker(sc_core::sc_module_name name, const TrackerConfig& config,
                 sc_core::sc_time mmio_latency, int gpu)
    : RegisterBlock(name, mmio_latency),
      watch_export("watch_export"),
      dma("dma"),
      gpu_(gpu),
      prefix_("gpu" + std::to_string(gpu) + " tracker: "),
      regions_(kRegions),
      errors_(kMsgType, kMaxErrorMessages) {
  if (config.entries < 1) throw ConfigError("tracker.entries: must be at least 1");
  watch_export.bind(*this);
  entries_.resize(to_size(config.entries));
  for (int i = static_cast<int>(entries_.size()) - 1; i >= 0; --i) free_.push_back(i);
  index_.reserve(entries_.size() * 2);

  auto ro = [this](std::uint64_t offset, const std::string& reg, const std::string& doc,
                   Reader read) { add_register(offset, reg, doc, std::move(read)); };
  ro(kEntries, "ENTRIES", "table capacity: tags tracked at once (tracker.entries)",
     [this] { return static_cast<std::uint32_t>(entries_.size()); });
  ro(kInUse, "IN_USE", "entries allocated and not fired", [this] { return in_use_; });
  ro(kFired, "FIRED", "tags fired since reset", [this] { return saturate(stats_.fired); });
  ro(kErrors, "ERRORS", "tagged writes/updates in no enabled region since reset",
     [this] { return saturate(stats_.errors); });
  add_register(
      kReset, "RESET",
      "write 1: free every entry, forget fired tags, zero the counters (regions are kept); reads 0",
      [] { return 0u; }, [this](std::uint32_t v) { reset(v); });
  ro(kRegionCount, "REGIONS", "number of region slots (64)",
     [] { return static_cast<std::uint32_t>(kRegions); });
  ro(kMaxInUse, "MAX_IN_USE", "peak of IN_USE since reset",
     [this] { return saturate(stats_.max_in_use); });
  ro(kRefused, "REFUSED", "admissions refused because the table was full (back-pressure)",
     [this] { return saturate(stats_.refused); });
  add_register(
      kTagGroup, "TAG_GROUP",
      "tile columns of a tile row that share one entry in regions with GRID_COLS != 0 (0 or 1: "
      "one tile per entry); program before enabling regions",
      [this] { return tag_group_; }, [this](std::uint32_t v) { tag_group_ = v; });
  ro(kOvercount, "OVERCOUNT",
     "conservation errors: bytes for a tag that already fired, or a count past its threshold",
     [this] { return saturate(stats_.overcount); });

  for (int r = 0; r < kRegions; ++r) {
    const std::string n = std::to_string(r);
    ro(kRegionDone + 4 * static_cast<std::uint64_t>(r), "REGION_DONE_" + n,
       "tags fired in region " + n + " since reset",
       [this, r] { return saturate(stats_.region_fired[to_size(r)]); });
  }
  for (int r = 0; r < kRegions; ++r) {
    Region& g = regions_[to_size(r)];
    const std::string reg = "REGION" + std::to_string(r) + "_";
    const std::string what = "region " + std::to_string(r) + ": ";
    auto rw64 = [&](std::uint64_t offset, const std::string& field, const std::string& doc,
                    std::uint64_t& f) {
      add_rw64(region_register(r, offset), reg + field, what + doc, f);
    };
    auto rw = [&](std::uint64_t offset, const std::string& field, const std::string& doc,
                  std::uint32_t& f) {
      add_rw(region_register(r, offset), reg + field, what + doc, f);
    };
    rw64(kBaseLow, "BASE", "base (global address)", g.base);
    rw64(kSizeLow, "SIZE", "size in bytes", g.size);
    rw(kThreshold, "THRESHOLD",
       "bytes per tag that complete a tile (e.g. 2 x tile bytes); see EDGE_THRESHOLD", g.threshold);
    rw64(kDmaDstLow, "DMA_DST", "destination base of fired tiles", g.dst);
    rw(kDmaOp, "DMA_OP", "on fire: 0 none (count only), 1 store, 2 update", g.op);
    rw(kElement, "ELEMENT", "element type of the DMA: 0 fp32, 1 fp16, 2 bf16", g.element);
    add_register(
        region_register(r, kControl), reg + "CONTROL",
        what +
            "bit 0 enable (refused, reads 0, if SIZE/THRESHOLD is 0, DMA_OP/ELEMENT "
            "invalid, or GRID_COLS set with EDGE_THRESHOLD 0)",
        [&g] { return g.control; }, [this, r](std::uint32_t v) { control(r, v); });
    rw(kGridCols, "GRID_COLS",
       "tile columns of the tag numbering; 0: every tag completes at THRESHOLD", g.grid_cols);
    rw(kEdgeThreshold, "EDGE_THRESHOLD",
       "bytes per tag that complete a tile of the last column (tag % GRID_COLS == GRID_COLS - 1)",
       g.edge_threshold);
  }
}

void Tracker::control(int region, std::uint32_t value) {
  Region& g = regions_[to_size(region)];
  const bool was_enabled = (g.control & kEnable) != 0;
  bool enable = (value & kEnable) != 0;
  if (enable &&
      (g.size == 0 || g.threshold == 0 || g.op > kOpUpdate || !is_element_code(g.element) ||
       (g.grid_cols != 0 && g.edge_threshold == 0) || g.base + g.size < g.base)) {
    enable = false;  // an invalid region is never enabled
  }
  g.control = enable ? std::uint32_t{kEnable} : 0u;
  if (enable && !was_enabled) g.fired_tags.clear();  // a new round of tiles
  enabled_.clear();
  for (int r = 0; r < kRegions; ++r) {
    if (regions_[to_size(r)].control & kEnable) enabled_.push_back(r);
  }
}

void Tracker::reset(std::uint32_t value) {
  if (value != 1) return;
  for (int i = 0; i < static_cast<int>(entries_.size()); ++i) {
    if (entries_[to_size(i)].used) release(i);
  }
  for (Region& g : regions_) g.fired_tags.clear();
  stats_ = TrackerStats{};
  space_event_.notify(sc_core::SC_ZERO_TIME);
}

int Tracker::find_region(std::uint64_t address, std::uint64_t bytes) const {
  for (int r : enabled_) {
    const Region& g = regions_[to_size(r)];
    if (address >= g.base && address - g.base < g.size && bytes <= g.size - (address - g.base)) {
      return r;
    }
  }
  return -1;
}

std::uint32_t Tracker::group_of(int region, std::uint32_t tag) const {
  const Region& g = regions_[to_size(region)];
  if (g.grid_cols == 0 || tag_group_ <= 1) return tag;
  return tag - (tag % g.grid_cols) % tag_group_;
}

std::uint64_t Tracker::threshold_of(int region, std::uint32_t group) const {
  const Region& g = regions_[to_size(region)];
  if (g.grid_cols == 0) return g.threshold;
  const std::uint32_t first_col = group % g.grid_cols;
  const std::uint32_t tiles = std::min(std::max(tag_group_, 1u), g.grid_cols - first_col);
  const bool edge = first_col + tiles == g.grid_cols;
  return static_cast<std::uint64_t>(tiles - (edge ? 1 : 0)) * g.threshold +
         (edge ? g.edge_threshold : 0);
}

int Tracker::allocate(int region, std::uint32_t tag) {
  if (free_.empty()) return -1;
  const int i = free_.back();
  free_.pop_back();
  Entry& e = entries_[to_size(i)];
  e.used = true;
  e.region = region;
  e.tag = tag;
  e.count = 0;
  e.low = std::numeric_limits<std::uint64_t>::max();
  e.high_end = 0;
  e.allocated = sc_core::sc_time_stamp();
  index_.emplace(key(region, tag), i);
  ++in_use_;
  stats_.max_in_use = std::max<std::uint64_t>(stats_.max_in_use, in_use_);
  return i;
}

void Tracker::release(int i) {
  Entry& e = entries_[to_size(i)];
  index_.erase(key(e.region, e.tag));
  e.used = false;
  free_.push_back(i);
  --in_use_;
  space_event_.notify(sc_core::SC_ZERO_TIME);
}

bool Tracker::admit(const AppliedAccess& access) {
  const int r = find_region(access.address, access.bytes);
  if (r < 0) return true;  // reported as an error when applied
  const std::uint32_t group = group_of(r, access.tag);
  if (index_.count(key(r, group)) != 0) return true;
  if (regions_[to_size(r)].fired_tags.count(group) != 0) {
    return true;  // a conservation error, reported when applied
  }
  if (allocate(r, group) >= 0) return true;  // reserved for this group
  ++stats_.refused;
  return false;
}

void Tracker::applied(const AppliedAccess& access) {
  const int r = find_region(access.address, access.bytes);
  if (r < 0) {
    ++stats_.errors;
    errors_.add(prefix_ + "tag " + std::to_string(access.tag) + " at address " +
                hex(access.address) + " is not in any programmed region (" +
                std::to_string(access.bytes) + " bytes, " + to_string(access.op) + " from gpu" +
                std::to_string(access.origin.gpu) + ")");
    return;
  }
  Region& g = regions_[to_size(r)];
  const std::uint32_t group = group_of(r, access.tag);
  int i;
  if (const auto found = index_.find(key(r, group)); found != index_.end()) {
    i = found->second;
  } else if (g.fired_tags.count(group) != 0) {
    ++stats_.overcount;
    errors_.add(prefix_ + "tag " + std::to_string(access.tag) + " at address " +
                hex(access.address) + ": " + std::to_string(access.bytes) +
                " bytes after the tag fired in region " + std::to_string(r) +
                " (each contribution must be applied once)");
    return;
  } else {
    i = allocate(r, group);  // applied without admit(): only if space is left
    if (i < 0) {
      ++stats_.errors;
      errors_.add(prefix_ + "tag " + std::to_string(access.tag) + " at address " +
                  hex(access.address) + " was applied without admission while the table was full");
      return;
    }
  }
  Entry& e = entries_[to_size(i)];
  e.count += access.bytes;
  stats_.counted_bytes += access.bytes;
  e.low = std::min(e.low, access.address);
  e.high_end = std::max(e.high_end, access.address + access.bytes);
  if (e.count >= threshold_of(r, group)) fire(i);
}

void Tracker::fire(int i) {
  const Entry& e = entries_[to_size(i)];
  Region& g = regions_[to_size(e.region)];
  const TrackerFire record{
      sc_core::sc_time_stamp(), e.tag,   e.region, e.low,      g.dst + (e.low - g.base),
      e.high_end - e.low,       e.count, g.op,     e.allocated};
  fires_.push_back(record);
  if (e.count > threshold_of(e.region, e.tag)) {
    ++stats_.overcount;
    errors_.add(prefix_ + "tag " + std::to_string(e.tag) + " in region " +
                std::to_string(e.region) + " counted " + std::to_string(e.count) +
                " bytes, past its threshold of " + std::to_string(threshold_of(e.region, e.tag)));
  }
  if (g.op != kOpNone) {
    if (dma.size() == 0) {
      ++stats_.errors;
      errors_.add(prefix_ + "region " + std::to_string(e.region) +
                  " has a DMA_OP but no DMA engine is bound; tag " + std::to_string(e.tag) +
                  " was not sent");
    } else {
      dma->trigger(DmaRequest{record.source, record.destination, record.bytes,
                              g.op == kOpStore ? Op::Write : Op::Update,
                              element_from_code(g.element), e.tag,
                              static_cast<std::uint32_t>(e.region)});
    }
  }
  g.fired_tags.insert(e.tag);
  ++stats_.region_fired[to_size(e.region)];
  ++stats_.fired;
  release(i);
}

std::string Tracker::describe_pending(std::size_t shown) const {
  if (in_use_ == 0) return {};
  std::vector<const Entry*> used;
  for (const Entry& entry : entries_) {
    if (entry.used) used.push_back(&entry);
  }
  // By region and tag, so the message does not depend on the order entries were allocated in.
  std::sort(used.begin(), used.end(), [](const Entry* a, const Entry* b) {
    return key(a->region, a->tag) < key(b->region, b->tag);
  });
  std::string what =
      std::string(name()) + " holds " + std::to_string(in_use_) + " tiles below their threshold:";
  for (std::size_t i = 0; i < used.size() && i < shown; ++i) {
    const Entry& e = *used[i];
    what += (i ? ", region " : " region ") + std::to_string(e.region) + " tag " +
            std::to_string(e.tag) + " at " + std::to_string(e.count) + " of " +
            std::to_string(threshold_of(e.region, e.tag)) + " bytes";
  }
  if (used.size() > shown) what += " and " + std::to_string(used.size() - shown) + " more";
  return what;
}

nlohmann::json Tracker::report() const {
  nlohmann::json j;
  j["entries"] = entries_.size();
  j["in_use"] = in_use_;
  j["max_in_use"] = stats_.max_in_use;
  j["fired"] = stats_.fired;
  j["errors"] = stats_.errors;
  j["overcount"] = stats_.overcount;
  j["refused"] = stats_.refused;
  j["counted_bytes"] = stats_.counted_bytes;
  j["pending"] = pending();
  j["tag_group"] = tag_group_;
  nlohmann::json regions = nlohmann::json::object();
  for (int r = 0; r < kRegions; ++r) {
    const Region& g = regions_[to_size(r)];
    const std::uint64_t fired = stats_.region_fired[to_size(r)];
    if (!(g.control & kEnable) && fired == 0) continue;
    regions[std::to_string(r)] = {{"base", g.base},
                                  {"size", g.size},
                                  {"threshold", g.threshold},
                                  {"grid_cols", g.grid_cols},
                                  {"edge_threshold", g.edge_threshold},
                                  {"op", g.op},
                                  {"enabled", (g.control & kEnable) != 0},
                                  {"fired", fired}};
  }
  j["regions"] = regions;
  return j;
}

}  // namespace t3
