// Line data of the L2 in functional mode: a line's bytes per frame of the tag array. In timing
// mode it holds nothing. Internal to models/l2.
#pragma once

#include <cstdint>
#include <memory>

#include "models/l2/geometry.h"

namespace t3::l2 {

class DataStore {
 public:
  // Room for `frames` lines if `functional`.
  DataStore(const Geometry& geometry, std::uint64_t frames, bool functional);

  // The bytes of the line in frame `frame` (an index into the tag array's frames).
  unsigned char* line(std::uint64_t frame) const { return data_.get() + frame * line_bytes_; }
  // Copies the bytes of sector runs `mask` that fall in [lo, hi) of `line`, held in frame
  // `frame`, between the frame and `buffer`, which holds window bytes from `buffer_begin` on.
  void copy(std::uint64_t frame, std::uint64_t line, std::uint64_t mask, std::uint64_t lo,
            std::uint64_t hi, unsigned char* buffer, std::uint64_t buffer_begin,
            bool into_frame) const;

 private:
  const std::uint64_t line_bytes_;
  const unsigned line_shift_;
  const unsigned sector_shift_;
  std::unique_ptr<unsigned char[]> data_;
};

}  // namespace t3::l2
