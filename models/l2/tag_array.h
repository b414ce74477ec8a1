// Tag array of the L2 with LRU replacement: which block each way of each set holds, its valid,
// dirty and in-flight sectors, and which way to replace. Internal to models/l2.
#pragma once

#include <cstdint>
#include <vector>

#include "models/l2/geometry.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace t3::l2 {

// One way of one set. Its tag is also in the packed tag rows, its LRU stamp beside them.
struct Frame {
  std::uint64_t line = kNoLine;  // line index in the window (the tag)
  std::uint64_t valid = 0, dirty = 0;
  std::uint64_t pending = 0;  // sectors a fill is bringing in; pins the frame
};

class TagArray {
 public:
  // Caches a window of `window_bytes`.
  TagArray(const Geometry& geometry, std::uint64_t window_bytes);

  // The way of `c.set` holding `c.line` (the lowest, should there be several), or ways().
  T3_L2_INLINE std::uint64_t find_way(const Cursor& c) const;
  // The frame holding `c.line`, or nullptr.
  T3_L2_INLINE Frame* find(const Cursor& c) {
    const std::uint64_t way = find_way(c);
    return way < ways_ ? &frames_[c.set * ways_ + way] : nullptr;
  }
  Frame& frame(std::uint64_t set, std::uint64_t way) { return frames_[set * ways_ + way]; }
  // Position of `frame` among all frames: [set * ways + way].
  std::uint64_t index_of(const Frame& frame) const {
    return static_cast<std::uint64_t>(&frame - frames_.data());
  }
  std::uint64_t way_of(std::uint64_t set, const Frame& frame) const {
    return index_of(frame) - set * ways_;
  }
  std::uint64_t ways() const { return ways_; }
  std::uint64_t frames() const { return frames_.size(); }
  // Whether the way masks are kept (ways <= 64) and a tag match is a hit without checking the
  // frame's line: what plan_complete_hits needs.
  bool fast() const { return few_ways_ && exact_tags_; }
  // Whether way `way` of `set` has every sector valid; only when fast().
  bool complete(std::uint64_t set, std::uint64_t way) const {
    return (set_state_[set].complete >> way & 1) != 0;
  }

  // Gives way `way` of `set` a new LRU stamp, newer than any other.
  void touch(std::uint64_t set, std::uint64_t way) {
    const std::uint64_t stamp = ++clock_;
    if (few_ways_) {
      if (set_state_[set].newest == way) return;  // only the order of a set's stamps matters
      set_state_[set].newest = way;
    }
    stamps_[set * ways_ + way] = stamp;
  }
  // Brings the set's way masks up to date with `frame` after its pending or valid sectors changed.
  void sync(std::uint64_t set, const Frame& frame) {
    if (!few_ways_) return;
    SetState& state = set_state_[set];
    const std::uint64_t bit = 1ull << way_of(set, frame);
    state.pinned = (state.pinned & ~bit) | (frame.pending != 0 ? bit : 0);
    state.filled = (state.filled & ~bit) | (frame.valid != 0 ? bit : 0);
    state.complete = (state.complete & ~bit) | (frame.valid == full_line_ ? bit : 0);
  }
  // The way of `set` to replace: an empty one, else the least recently used one without a fill
  // in flight (the lowest of equals); ways() if every way has a fill in flight.
  std::uint64_t victim(std::uint64_t set) const;
  // Points way `way` of `c.set` at `c.line`, no sector valid.
  void reassign(const Cursor& c, std::uint64_t way) {
    Frame& f = frame(c.set, way);
    retag(f, c.set, way, c.line, c.tag);
    f.valid = f.dirty = 0;
  }
  // Empties `frame` of `set` (no sector valid or pending any more) and forgets its stamp.
  void release(std::uint64_t set, Frame& frame);

  // Walks the lines from `c` on, up to line `stop`, while their blocks have every sector valid,
  // touching each; returns how many it walked. `c` ends at the first line not walked. The common
  // case of timing reads, kept tight; only when fast().
  T3_L2_INLINE std::uint64_t touch_complete_run(Cursor& c, std::uint64_t stop);

 private:
  // Tag-array entry of an empty way (and of the padding after the last way of a set).
  static constexpr std::uint32_t kEmptyTag = ~0u;
  static constexpr std::uint64_t kNoWay = ~0ull;
  // Ways of one set (bit = way) with a fill in flight, with valid sectors, with all sectors
  // valid: replacement and read hits look at these instead of the frames. Kept when ways <= 64.
  struct SetState {
    std::uint64_t pinned = 0, filled = 0;
    std::uint64_t complete = 0;
    // The way stamped last, so holding the set's newest stamp (kNoWay: unknown).
    std::uint64_t newest = kNoWay;
  };

  static T3_L2_INLINE std::uint64_t row_matches(const std::uint32_t* row, std::uint64_t stride,
                                                std::uint32_t tag);
  // Ways of `set` whose packed tag is `tag` (bit = way); only when ways <= 64.
  T3_L2_INLINE std::uint64_t tag_matches(std::uint64_t set, std::uint32_t tag) const {
    return row_matches(tags_ + set * tag_stride_, tag_stride_, tag) & way_mask_;
  }
  std::uint64_t scan_way(const Cursor& c) const;  // find_way with more than 64 ways
  std::uint64_t oldest_of(std::uint64_t set, std::uint64_t candidates) const;
  // Points way `way` of set `set` at `line` (kNoLine: empty) in the frame and the tag row.
  void retag(Frame& frame, std::uint64_t set, std::uint64_t way, std::uint64_t line,
             std::uint64_t tag) {
    frame.line = line;
    tags_[set * tag_stride_ + way] = line == kNoLine ? kEmptyTag : static_cast<std::uint32_t>(tag);
  }

  const std::uint64_t ways_;
  const std::uint64_t sets_;
  const std::uint64_t full_line_;
  const std::uint64_t tag_stride_;     // tag-array entries per set: ways rounded up to 4 or 16
  const std::uint64_t way_mask_;       // a bit per way (all 64 if more)
  const bool few_ways_;                // ways <= 64: the per-set way masks are kept
  const bool exact_tags_;              // a tag match is a hit without checking the frame's line
  std::vector<Frame> frames_;          // [set * ways + way]
  std::vector<std::uint64_t> stamps_;  // [set * ways + way]: LRU stamp
  std::vector<SetState> set_state_;    // per set, when ways <= 64
  std::vector<std::uint32_t> tag_storage_;  // backs `tags_`
  std::uint32_t* tags_ = nullptr;           // [set * tag_stride + way]: line / sets, or kEmptyTag
  std::uint64_t clock_ = 0;                 // the last LRU stamp given
};

// Entries of a tag row of `stride` (<= 64) entries that hold `tag` (bit = entry; the padding
// after the last way included).
T3_L2_INLINE std::uint64_t TagArray::row_matches(const std::uint32_t* row, std::uint64_t stride,
                                                 std::uint32_t tag) {
  std::uint64_t matches = 0;
#if defined(__SSE2__)
  const __m128i key = _mm_set1_epi32(static_cast<int>(tag));
  const auto equal = [&](std::uint64_t k) {
    return _mm_cmpeq_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row + k)), key);
  };
  const auto sixteen = [&](std::uint64_t k) {  // entries k .. k + 15
    const __m128i lo = _mm_packs_epi32(equal(k), equal(k + 4));
    const __m128i hi = _mm_packs_epi32(equal(k + 8), equal(k + 12));
    return static_cast<std::uint64_t>(
        static_cast<unsigned>(_mm_movemask_epi8(_mm_packs_epi16(lo, hi))));
  };
  if (stride == 16) {
    matches = sixteen(0);
  } else if (stride % 16 == 0) {
    for (std::uint64_t k = 0; k < stride; k += 16) matches |= sixteen(k) << k;
  } else {
    for (std::uint64_t k = 0; k < stride; k += 4) {
      matches |= static_cast<std::uint64_t>(
                     static_cast<unsigned>(_mm_movemask_ps(_mm_castsi128_ps(equal(k)))))
                 << k;
    }
  }
#else
  for (std::uint64_t k = 0; k < stride; ++k) matches |= std::uint64_t{row[k] == tag} << k;
#endif
  return matches;
}

T3_L2_INLINE std::uint64_t TagArray::find_way(const Cursor& c) const {
  if (!few_ways_) return scan_way(c);
  std::uint64_t matches = tag_matches(c.set, static_cast<std::uint32_t>(c.tag));
  if (exact_tags_)
    return matches != 0 ? static_cast<std::uint64_t>(__builtin_ctzll(matches)) : ways_;
  const Frame* set = &frames_[c.set * ways_];
  for (; matches != 0; matches &= matches - 1) {
    const auto way = static_cast<std::uint64_t>(__builtin_ctzll(matches));
    if (set[way].line == c.line) return way;
  }
  return ways_;
}

inline std::uint64_t TagArray::victim(std::uint64_t set) const {
  if (few_ways_) {
    const SetState& state = set_state_[set];
    const std::uint64_t candidates = way_mask_ & ~state.pinned;
    if (candidates == 0) return ways_;
    if (const std::uint64_t empty = candidates & ~state.filled; empty != 0) {
      return static_cast<std::uint64_t>(__builtin_ctzll(empty));
    }
    return oldest_of(set, candidates);
  }
  const Frame* frames = &frames_[set * ways_];
  const std::uint64_t* stamps = &stamps_[set * ways_];
  std::uint64_t way = ways_;  // none
  for (std::uint64_t k = 0; k < ways_; ++k) {
    const Frame& frame = frames[k];
    if (frame.pending != 0) continue;
    if (frame.valid == 0) return k;
    if (way == ways_ || stamps[k] < stamps[way]) way = k;
  }
  return way;
}

// The first of the oldest stamps among `candidates` (bit = way, not empty) of `set`.
inline std::uint64_t TagArray::oldest_of(std::uint64_t set, std::uint64_t candidates) const {
  const std::uint64_t* stamps = &stamps_[set * ways_];
  if (candidates == way_mask_) {  // the usual case, a loop without bit tricks
    std::uint64_t way = 0;
    std::uint64_t oldest = stamps[0];
    for (std::uint64_t k = 1; k < ways_; ++k) {
      if (stamps[k] < oldest) {
        oldest = stamps[k];
        way = k;
      }
    }
    return way;
  }
  auto way = static_cast<std::uint64_t>(__builtin_ctzll(candidates));
  std::uint64_t oldest = stamps[way];
  for (std::uint64_t rest = candidates & (candidates - 1); rest != 0; rest &= rest - 1) {
    const auto k = static_cast<std::uint64_t>(__builtin_ctzll(rest));
    if (stamps[k] < oldest) {
      oldest = stamps[k];
      way = k;
    }
  }
  return way;
}

T3_L2_INLINE std::uint64_t TagArray::touch_complete_run(Cursor& c, std::uint64_t stop) {
  // Locals: the stores below would otherwise make the compiler reload every member.
  const std::uint64_t n_sets = sets_, n_ways = ways_, stride = tag_stride_, mask = way_mask_;
  const std::uint32_t* const tag_base = tags_;
  SetState* const states = set_state_.data();
  std::uint64_t* const stamps = stamps_.data();
  std::uint64_t line = c.line, set = c.set, tag = c.tag, next = clock_;
  const std::uint32_t* row = tag_base + set * stride;
  while (line < stop) {
    const std::uint64_t matches = row_matches(row, stride, static_cast<std::uint32_t>(tag)) & mask;
    if (matches == 0) break;
    const auto way = static_cast<std::uint64_t>(__builtin_ctzll(matches));
    if ((states[set].complete >> way & 1) == 0) break;
    ++next;
    if (states[set].newest != way) {
      stamps[set * n_ways + way] = next;
      states[set].newest = way;
    }
    ++line;
    row += stride;
    if (++set == n_sets) {
      set = 0;
      ++tag;
      row = tag_base;
    }
  }
  const std::uint64_t walked = line - c.line;
  c = {line, set, tag};
  clock_ = next;
  return walked;
}

}  // namespace t3::l2
