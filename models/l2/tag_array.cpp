#include "models/l2/tag_array.h"

namespace t3::l2 {

TagArray::TagArray(const Geometry& geometry, std::uint64_t window_bytes)
    : ways_(geometry.ways),
      sets_(geometry.sets),
      full_line_(geometry.full_line),
      // 16 ways are compared at once, fewer 4 at a time.
      tag_stride_(ways_ > 8 ? (ways_ + 15) & ~std::uint64_t{15} : (ways_ + 3) & ~std::uint64_t{3}),
      way_mask_(ways_ >= 64 ? ~0ull : (1ull << ways_) - 1),
      few_ways_(ways_ <= 64),
      // Tags are line / sets in 32 bits. When every line of the window has a tag below
      // kEmptyTag (any realistic geometry), a tag match is a hit; otherwise a match is
      // confirmed against the frame's line.
      exact_tags_(((window_bytes - 1) >> geometry.line_shift) / sets_ < kEmptyTag) {
  frames_.resize(sets_ * ways_);
  stamps_.assign(sets_ * ways_, 0);
  if (few_ways_) set_state_.resize(sets_);
  // Each set's tags start on a 64-byte boundary: 16 ways are one host cache line.
  tag_storage_.assign(sets_ * tag_stride_ + 16, kEmptyTag);
  const auto address = reinterpret_cast<std::uintptr_t>(tag_storage_.data());
  tags_ = tag_storage_.data() + ((64 - address % 64) % 64) / sizeof(std::uint32_t);
}

std::uint64_t TagArray::scan_way(const Cursor& c) const {
  const auto tag = static_cast<std::uint32_t>(c.tag);
  const std::uint32_t* row = tags_ + c.set * tag_stride_;
  const Frame* set = &frames_[c.set * ways_];
  for (std::uint64_t k = 0; k < ways_; ++k) {
    if (row[k] == tag && (exact_tags_ || set[k].line == c.line)) return k;
  }
  return ways_;
}

void TagArray::release(std::uint64_t set, Frame& frame) {
  const std::uint64_t way = way_of(set, frame);
  frame = Frame{};
  stamps_[index_of(frame)] = 0;
  if (few_ways_ && set_state_[set].newest == way) set_state_[set].newest = kNoWay;
  retag(frame, set, way, kNoLine, 0);
}

}  // namespace t3::l2
