#include "models/l2/data_store.h"

#include <algorithm>
#include <cstring>

namespace t3::l2 {

DataStore::DataStore(const Geometry& geometry, std::uint64_t frames, bool functional)
    : line_bytes_(geometry.line_bytes),
      line_shift_(geometry.line_shift),
      sector_shift_(geometry.sector_shift) {
  // Without initialisation the OS commits the pages only as lines are used.
  if (functional) data_.reset(new unsigned char[frames * line_bytes_]);
}

void DataStore::copy(std::uint64_t frame, std::uint64_t line, std::uint64_t mask, std::uint64_t lo,
                     std::uint64_t hi, unsigned char* buffer, std::uint64_t buffer_begin,
                     bool into_frame) const {
  const std::uint64_t start = line << line_shift_;
  for_each_run(mask, [&](unsigned first, unsigned count) {
    const std::uint64_t b = std::max<std::uint64_t>(lo, std::uint64_t{first} << sector_shift_);
    const std::uint64_t e =
        std::min<std::uint64_t>(hi, std::uint64_t{first + count} << sector_shift_);
    if (b >= e) return;
    unsigned char* line_data = this->line(frame) + b;
    unsigned char* other = buffer + (start + b - buffer_begin);
    if (into_frame) {
      std::memcpy(line_data, other, e - b);
    } else {
      std::memcpy(other, line_data, e - b);
    }
  });
}

}  // namespace t3::l2
