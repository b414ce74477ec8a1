// Sparse byte storage of one GPU's HBM for functional mode: pages appear on first touch and
// read as zero until written.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <unordered_map>

#include "tlm_interconnect/payload.h"

namespace t3 {

class BackingStore {
 public:
  static constexpr std::uint64_t kPageBytes = 4096;

  void read(std::uint64_t offset, unsigned char* data, std::size_t bytes) const;
  void write(std::uint64_t offset, const unsigned char* data, std::size_t bytes);
  // memory[offset..] += operand, element-wise in `type`, rounded to `type`.
  void update_add(std::uint64_t offset, const unsigned char* operand, std::size_t bytes,
                  ElementType type);
  // Serves one access: reads into `data`, writes it, or adds it (an update of `type` elements).
  void apply(Op op, std::uint64_t offset, unsigned char* data, std::size_t bytes, ElementType type);
  std::size_t pages() const { return pages_.size(); }

 private:
  using Page = std::array<unsigned char, kPageBytes>;
  Page& page(std::uint64_t index);
  // Lookup only: iteration order of the map never reaches a result.
  std::unordered_map<std::uint64_t, std::unique_ptr<Page>> pages_;
};

}  // namespace t3
