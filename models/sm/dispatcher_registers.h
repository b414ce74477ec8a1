// Register map of the dispatcher (command processor): a kernel descriptor, a doorbell, status,
// and the output map that sends each chunk of a GEMM's output to its own buffer (local or remote,
// store or update). Offsets are within the dispatcher's MMIO block. See docs/registers.md.
#pragma once

#include <cstdint>

namespace t3::dispatcher {

inline constexpr std::uint64_t kStatus = 0x000;         // RO: Status
inline constexpr std::uint64_t kError = 0x004;          // RO: LaunchError of the last launch
inline constexpr std::uint64_t kDoorbell = 0x008;       // WO: write 1 to launch the descriptor
inline constexpr std::uint64_t kIrqAck = 0x00c;         // WO: write 1 to drop the interrupt line
inline constexpr std::uint64_t kKernel = 0x010;         // RW: KernelKind
inline constexpr std::uint64_t kM = 0x014;              // RW
inline constexpr std::uint64_t kN = 0x018;              // RW
inline constexpr std::uint64_t kK = 0x01c;              // RW
inline constexpr std::uint64_t kTileM = 0x020;          // RW
inline constexpr std::uint64_t kTileN = 0x024;          // RW
inline constexpr std::uint64_t kTileK = 0x028;          // RW
inline constexpr std::uint64_t kElement = 0x02c;        // RW: ElementType of A and B
inline constexpr std::uint64_t kOutElement = 0x030;     // RW: ElementType of the output
inline constexpr std::uint64_t kWgOrder = 0x034;        // RW: WgOrder
inline constexpr std::uint64_t kChunks = 0x038;         // RW: output chunks (1..kMaxChunks)
inline constexpr std::uint64_t kFirstChunk = 0x03c;     // RW: chunk dispatched first (staggered)
inline constexpr std::uint64_t kALow = 0x040;           // RW: A base, bits 31:0
inline constexpr std::uint64_t kAHigh = 0x044;          // RW: A base, bits 63:32
inline constexpr std::uint64_t kBLow = 0x048;           // RW
inline constexpr std::uint64_t kBHigh = 0x04c;          // RW
inline constexpr std::uint64_t kCompletedWgs = 0x050;   // RO: workgroups finished, this launch
inline constexpr std::uint64_t kLaunches = 0x054;       // RO: kernels completed since reset
inline constexpr std::uint64_t kDispatchedWgs = 0x058;  // RO: workgroups dispatched, this launch
inline constexpr std::uint64_t kFaultLow = 0x05c;       // RO: first faulting address, bits 31:0
inline constexpr std::uint64_t kFaultHigh = 0x060;      // RO: bits 63:32 (valid if kMemoryFault)

// Output map: entry c (c < kMaxChunks) at kOutMap + c * kOutMapStride.
inline constexpr std::uint64_t kOutMap = 0x100;
inline constexpr std::uint64_t kOutMapStride = 0x10;
inline constexpr std::uint64_t kOutBaseLow = 0x0;   // RW: chunk c's buffer, bits 31:0
inline constexpr std::uint64_t kOutBaseHigh = 0x4;  // RW: bits 63:32
inline constexpr std::uint64_t kOutOp = 0x8;        // RW: 0 store, 1 update (add)
inline constexpr std::uint64_t kOutFlags = 0xc;     // RW: OutFlags
inline constexpr int kMaxChunks = 64;

enum Status : std::uint32_t { kIdle = 0, kRunning = 1, kDone = 2, kFailed = 3 };
enum KernelKind : std::uint32_t { kNone = 0, kGemm = 1 };
enum LaunchError : std::uint32_t {
  kNoError = 0,
  kZeroSize = 1,   // M, N, K or a tile size is 0
  kBadChunks = 2,  // chunks 0, above kMaxChunks, above the output's tile rows, or first >= chunks
  kUnmappedBuffer = 3,  // A, B or an output chunk's range is not inside one GPU's HBM window
  kBadKernel = 4,       // unknown kernel kind, element type, WG order or OUT_OP
  kBusy = 5,            // doorbell while a kernel runs
  kMemoryFault = 6,     // a workgroup's access got an error response (address in kFault*)
};

// The name of a LaunchError, as hosts print it ("unmapped buffer"); "unknown" otherwise.
inline const char* launch_error_name(std::uint32_t error) {
  switch (error) {
    case kNoError:
      return "no error";
    case kZeroSize:
      return "zero size";
    case kBadChunks:
      return "bad chunks";
    case kUnmappedBuffer:
      return "unmapped buffer";
    case kBadKernel:
      return "bad kernel";
    case kBusy:
      return "busy";
    case kMemoryFault:
      return "memory fault";
    default:
      return "unknown";
  }
}

enum OutFlags : std::uint32_t { kUncached = 1u << 0, kTagged = 1u << 1 };

}  // namespace t3::dispatcher
