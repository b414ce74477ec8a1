// Register map of the DMA engine (docs/registers.md). Plain constants, so the workload layer can
// program an engine without linking the model or SystemC.
#pragma once

#include <cstdint>

namespace t3 {

namespace dma {

inline constexpr int kDescriptors = 16;

// Global registers.
inline constexpr std::uint64_t kStatus = 0x000;     // RO: 0 idle, 1 busy (queued or running)
inline constexpr std::uint64_t kQueued = 0x004;     // RO: requests waiting to start
inline constexpr std::uint64_t kRunning = 0x008;    // RO: transfers in progress
inline constexpr std::uint64_t kCompleted = 0x00c;  // RO: transfers finished (failed included)
inline constexpr std::uint64_t kBytesLow = 0x010;   // RO: bytes written/updated, bits 31:0
inline constexpr std::uint64_t kBytesHigh = 0x014;  // RO: bits 63:32
inline constexpr std::uint64_t kErrors = 0x018;     // RO: pieces answered with an error response
inline constexpr std::uint64_t kRejected = 0x01c;   // RO: doorbells/triggers refused
inline constexpr std::uint64_t kInFlight = 0x020;   // RO: transfers run at once (dma.in_flight)
inline constexpr std::uint64_t kTriggered = 0x024;  // RO: requests received from the tracker
inline constexpr std::uint64_t kClear = 0x028;      // WO (reads 0): write 1 to zero the counters
// Descriptor d at kDescriptorBase + d * kDescriptorStride.
inline constexpr std::uint64_t kDescriptorBase = 0x100;
inline constexpr std::uint64_t kDescriptorStride = 0x40;
inline constexpr std::uint64_t kSrcLow = 0x00;    // RW: source (global address), bits 31:0
inline constexpr std::uint64_t kSrcHigh = 0x04;   // RW: bits 63:32
inline constexpr std::uint64_t kDstLow = 0x08;    // RW: destination (global address), bits 31:0
inline constexpr std::uint64_t kDstHigh = 0x0c;   // RW: bits 63:32
inline constexpr std::uint64_t kSizeLow = 0x10;   // RW: bytes, bits 31:0
inline constexpr std::uint64_t kSizeHigh = 0x14;  // RW: bits 63:32
inline constexpr std::uint64_t kOp = 0x18;        // RW: DescriptorOp
inline constexpr std::uint64_t kElement = 0x1c;   // RW: 0 fp32, 1 fp16, 2 bf16
inline constexpr std::uint64_t kTag = 0x20;       // RW: tag carried (0xffffffff untracked; reset)
inline constexpr std::uint64_t kDoorbell = 0x24;  // WO (reads 0): write 1 to queue the descriptor
inline constexpr std::uint64_t kState = 0x28;     // RO: DescriptorState
inline constexpr std::uint64_t kBlockBytes = 0x1000;  // MMIO span of the register block

enum DescriptorOp : std::uint32_t { kOpStore = 1, kOpUpdate = 2 };
enum DescriptorState : std::uint32_t {
  kStateIdle = 0,
  kStateQueued = 1,
  kStateRunning = 2,
  kStateDone = 3,
  kStateFailed = 4,  // refused doorbell (invalid fields) or a piece got an error response
};

inline constexpr std::uint64_t descriptor_register(int descriptor, std::uint64_t reg) {
  return kDescriptorBase + static_cast<std::uint64_t>(descriptor) * kDescriptorStride + reg;
}

}  // namespace dma

}  // namespace t3
