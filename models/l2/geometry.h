// Geometry of the L2, shared by its parts: how window offsets map to blocks, sets, tags, sectors
// and banks, and the sector-mask arithmetic on top of it. Internal to models/l2.
//
// In the L2's parts a "line" is a block of l2.block_lines hardware lines: the tag array,
// replacement and locks work on blocks (with block_lines = 1 a block is the hardware line).
// Banks are reserved per hardware line, and an uncached access invalidates only the hardware
// lines it overlaps, so a block is a bookkeeping unit, not a longer line.
#pragma once

#include <algorithm>
#include <cstdint>

#include "config/system_config.h"

#if defined(__GNUC__)
#define T3_L2_INLINE __attribute__((always_inline)) inline
#else
#define T3_L2_INLINE inline
#endif

namespace t3::l2 {

inline constexpr std::uint64_t kNoLine = ~0ull;

// Sectors first..last (inclusive) as a mask.
inline std::uint64_t sector_range(unsigned first, unsigned last) {
  const unsigned count = last - first + 1;
  const std::uint64_t ones = count >= 64 ? ~0ull : (1ull << count) - 1;
  return ones << first;
}

// Calls fn(first, count) for every run of set bits of `mask`, lowest first.
template <typename Fn>
void for_each_run(std::uint64_t mask, Fn&& fn) {
  while (mask != 0) {
    const auto first = static_cast<unsigned>(__builtin_ctzll(mask));
    const std::uint64_t shifted = ~(mask >> first);
    const unsigned count =
        shifted == 0 ? 64 - first : static_cast<unsigned>(__builtin_ctzll(shifted));
    fn(first, count);
    mask &= ~sector_range(first, first + count - 1);
  }
}

// Set bits of `mask`. SWAR: without -mpopcnt, __builtin_popcountll is a call into libgcc.
inline unsigned popcount(std::uint64_t mask) {
  mask = mask - ((mask >> 1) & 0x5555555555555555ull);
  mask = (mask & 0x3333333333333333ull) + ((mask >> 2) & 0x3333333333333333ull);
  mask = (mask + (mask >> 4)) & 0x0f0f0f0f0f0f0f0full;
  return static_cast<unsigned>((mask * 0x0101010101010101ull) >> 56);
}

// Throws ConfigError naming the l2.* key if the geometry is inconsistent.
void validate(const L2Config& config);

// The configuration of one of config.partitions partitions: its share of the capacity, banks and
// write-back buffer (`config` validated).
L2Config partition_config(const L2Config& config);

// A line with its set and tag (line / sets); consecutive lines walk consecutive sets, so
// stepping needs no division.
struct Cursor {
  std::uint64_t line, set, tag;
};

struct Geometry {
  explicit Geometry(const L2Config& config);  // `config` validated

  Cursor cursor(std::uint64_t line) const { return {line, line % sets, line / sets}; }
  void advance(Cursor& c) const {
    ++c.line;
    if (++c.set == sets) {
      c.set = 0;
      ++c.tag;
    }
  }
  std::uint64_t first_line(std::uint64_t begin) const { return begin >> line_shift; }
  std::uint64_t last_line(std::uint64_t end) const { return (end - 1) >> line_shift; }
  // Sectors of `line` that overlap [begin, end) (window offsets).
  std::uint64_t mask_of(std::uint64_t line, std::uint64_t begin, std::uint64_t end) const {
    const std::uint64_t start = line << line_shift;
    if (begin <= start && end - start >= line_bytes) return full_line;
    const std::uint64_t lo = std::max(begin, start) - start;
    const std::uint64_t hi = std::min(end, start + line_bytes) - start;
    return sector_range(static_cast<unsigned>(lo >> sector_shift),
                        static_cast<unsigned>((hi - 1) >> sector_shift));
  }
  // Sectors of block `line` in the hardware lines that [begin, end) overlaps: what an uncached
  // access invalidates.
  std::uint64_t line_mask_of(std::uint64_t line, std::uint64_t begin, std::uint64_t end) const {
    const std::uint64_t round = bank_line_bytes - 1;
    return mask_of(line, begin & ~round, (end + round) & ~round);
  }
  // Hardware lines of a block with a sector in `mask`.
  unsigned lines_holding(std::uint64_t mask) const {
    const std::uint64_t per_line = sectors_per_line / bank_lines;  // shifts below stay < 64
    const std::uint64_t line_sectors = sector_range(0, static_cast<unsigned>(per_line) - 1);
    unsigned lines = 0;
    for (std::uint64_t k = 0; k < bank_lines; ++k) {
      lines += (mask >> (k * per_line) & line_sectors) != 0 ? 1 : 0;
    }
    return lines;
  }

  std::uint64_t line_bytes;  // a block
  std::uint64_t sector_bytes;
  unsigned line_shift;    // log2(line_bytes)
  unsigned sector_shift;  // log2(sector_bytes)
  unsigned sectors_per_line;
  std::uint64_t full_line;        // every sector of a block
  std::uint64_t bank_line_bytes;  // the hardware line: the unit of bank interleaving
  unsigned bank_line_shift;
  std::uint64_t bank_lines;  // hardware lines per block (l2.block_lines)
  std::uint64_t ways;
  std::uint64_t sets;
  std::uint64_t banks;
};

}  // namespace t3::l2
