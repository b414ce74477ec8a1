// Register map of the tracker (docs/registers.md). Plain constants, so the workload layer can
// program a tracker without linking the model.
#pragma once

#include <cstdint>

namespace t3 {

namespace tracker {

inline constexpr int kRegions = 64;

// Global registers.
inline constexpr std::uint64_t kEntries = 0x000;      // RO: table capacity (tracker.entries)
inline constexpr std::uint64_t kInUse = 0x004;        // RO: entries allocated, not fired
inline constexpr std::uint64_t kFired = 0x008;        // RO: tags fired since reset
inline constexpr std::uint64_t kErrors = 0x00c;       // RO: tagged accesses in no enabled region
inline constexpr std::uint64_t kReset = 0x010;        // WO (reads 0): write 1 to clear, see above
inline constexpr std::uint64_t kRegionCount = 0x014;  // RO: kRegions
inline constexpr std::uint64_t kMaxInUse = 0x018;     // RO: peak of IN_USE since reset
inline constexpr std::uint64_t kRefused = 0x01c;      // RO: admit() answered false (back-pressure)
inline constexpr std::uint64_t kOvercount = 0x020;    // RO: conservation errors
inline constexpr std::uint64_t kTagGroup = 0x024;     // RW: tile columns per entry (0, 1: one)
// REGION_DONE_r (RO): tags fired in region r, at kRegionDone + 4 r.
inline constexpr std::uint64_t kRegionDone = 0x100;
// Region r at kRegionBase + r * kRegionStride (the block spans 0x1000 bytes).
inline constexpr std::uint64_t kRegionBase = 0x400;
inline constexpr std::uint64_t kRegionStride = 0x30;
inline constexpr std::uint64_t kBaseLow = 0x00;        // RW: region base (global), bits 31:0
inline constexpr std::uint64_t kBaseHigh = 0x04;       // RW: bits 63:32
inline constexpr std::uint64_t kSizeLow = 0x08;        // RW: region size in bytes, bits 31:0
inline constexpr std::uint64_t kSizeHigh = 0x0c;       // RW: bits 63:32
inline constexpr std::uint64_t kThreshold = 0x10;      // RW: bytes per tag that complete a tile
inline constexpr std::uint64_t kDmaDstLow = 0x14;      // RW: destination base, bits 31:0
inline constexpr std::uint64_t kDmaDstHigh = 0x18;     // RW: bits 63:32
inline constexpr std::uint64_t kDmaOp = 0x1c;          // RW: DmaOp
inline constexpr std::uint64_t kElement = 0x20;        // RW: 0 fp32, 1 fp16, 2 bf16
inline constexpr std::uint64_t kControl = 0x24;        // RW: bit 0 enable (refused if invalid)
inline constexpr std::uint64_t kGridCols = 0x28;       // RW: tile columns of the tag numbering
inline constexpr std::uint64_t kEdgeThreshold = 0x2c;  // RW: THRESHOLD of the last tile column
inline constexpr std::uint64_t kBlockBytes = 0x1000;   // MMIO span of the register block

enum DmaOp : std::uint32_t { kOpNone = 0, kOpStore = 1, kOpUpdate = 2 };
enum Control : std::uint32_t { kEnable = 1u << 0 };

inline constexpr std::uint64_t region_register(int region, std::uint64_t reg) {
  return kRegionBase + static_cast<std::uint64_t>(region) * kRegionStride + reg;
}

}  // namespace tracker

}  // namespace t3
