// Register map of the dispatcher (command processor): a kernel descriptor, a doorbell, status,
// the output map that sends each chunk of a GEMM's output to its own buffer (local or remote,
// store or update), the descriptor of a ring collective (reduce-scatter / all-gather run by the
// SMs, RCCL-style), and a mailbox of plain read/write words that collectives use as their
// synchronisation flags. Offsets are within the dispatcher's MMIO block. See docs/registers.md.
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
// The SMs a launch may use, [SM_FIRST, SM_FIRST + SM_COUNT) (SM_COUNT 0: through the last SM),
// as a queue's CU mask confines a kernel on AMD GPUs: two kernels on two queues can then share
// the GPU without sharing an SM. Both reset to 0 (every SM) and are kept across launches.
inline constexpr std::uint64_t kSmFirst = 0x064;  // RW: first SM of the launch's range
inline constexpr std::uint64_t kSmCount = 0x068;  // RW: SMs in the range (0: to the last SM)

// Output map: entry c (c < kMaxChunks) at kOutMap + c * kOutMapStride.
inline constexpr std::uint64_t kOutMap = 0x100;
inline constexpr std::uint64_t kOutMapStride = 0x10;
inline constexpr std::uint64_t kOutBaseLow = 0x0;   // RW: chunk c's buffer, bits 31:0
inline constexpr std::uint64_t kOutBaseHigh = 0x4;  // RW: bits 63:32
inline constexpr std::uint64_t kOutOp = 0x8;        // RW: 0 store, 1 update (add)
inline constexpr std::uint64_t kOutFlags = 0xc;     // RW: OutFlags
inline constexpr int kMaxChunks = 64;

// Ring collective descriptor (KERNEL = kCollective). The memory layout, the ring schedule and the
// flag protocol are documented in protocol/ring.h. 64-bit values are two registers, bits 31:0 at
// the lower offset.
inline constexpr std::uint64_t kCollOp = 0x600;             // RW: CollOp
inline constexpr std::uint64_t kCollRanks = 0x604;          // RW: ring size n (2..kMaxRanks)
inline constexpr std::uint64_t kCollRank = 0x608;           // RW: this GPU's ring position r < n
inline constexpr std::uint64_t kCollChannels = 0x60c;       // RW: workgroups (1..kMaxChannels)
inline constexpr std::uint64_t kCollBufferLow = 0x610;      // RW: local buffer (n chunks) base
inline constexpr std::uint64_t kCollBufferHigh = 0x614;     // RW
inline constexpr std::uint64_t kCollNextBufferLow = 0x618;  // RW: next ring GPU's buffer base
inline constexpr std::uint64_t kCollNextBufferHigh = 0x61c;
inline constexpr std::uint64_t kCollFlagsLow = 0x620;  // RW: local flag area base
inline constexpr std::uint64_t kCollFlagsHigh = 0x624;
inline constexpr std::uint64_t kCollNextFlagsLow = 0x628;  // RW: next GPU's flag area base
inline constexpr std::uint64_t kCollNextFlagsHigh = 0x62c;
inline constexpr std::uint64_t kCollPrevFlagsLow = 0x630;  // RW: previous GPU's flag area base
inline constexpr std::uint64_t kCollPrevFlagsHigh = 0x634;
inline constexpr std::uint64_t kCollBytesLow = 0x638;  // RW: buffer bytes (n chunks)
inline constexpr std::uint64_t kCollBytesHigh = 0x63c;
inline constexpr std::uint64_t kCollElement = 0x640;     // RW: ElementType (0 fp32, 1 fp16, 2 bf16)
inline constexpr std::uint64_t kCollSequence = 0x644;    // RW: launch sequence number (>= 1)
inline constexpr std::uint64_t kCollSliceBytes = 0x648;  // RW: bytes per flag (per channel)
inline constexpr std::uint64_t kCollFifoDepth = 0x64c;   // RW: receive FIFO slices per channel
inline constexpr std::uint64_t kCollPollNs = 0x650;      // RW: ns between flag polls (>= 1)
// RW: an 8-byte gate word (0: none). Reduce-scatter step k (of every slice) first waits until the
// gate reads at least flag_value(COLL_SEQUENCE, k + 1): the producer of the local data (the host,
// after each slice of a GEMM) opens it chunk by chunk, so the ring can start before all of its
// input exists (CommFuse-style software overlap).
inline constexpr std::uint64_t kCollGateLow = 0x654;
inline constexpr std::uint64_t kCollGateHigh = 0x658;
// RW, direct ops only (protocol/ring.h, Direct): the distance from rank p's buffer (flag area) to
// rank p + 1's, two's complement; rank p's is COLL_BUFFER + (p - COLL_RANK) x COLL_PEER_STRIDE.
inline constexpr std::uint64_t kCollPeerStrideLow = 0x65c;
inline constexpr std::uint64_t kCollPeerStrideHigh = 0x660;
inline constexpr std::uint64_t kCollPeerFlagStrideLow = 0x664;
inline constexpr std::uint64_t kCollPeerFlagStrideHigh = 0x668;
// RW, ring ops only (protocol/ring.h, Several rings): the rings the channels are spread over
// (1..kMaxRings, at most COLL_CHANNELS; resets to 1), channel c on ring c mod COLL_RINGS. Ring 0
// is the descriptor's own: stride COLL_STRIDE (resets to 1), neighbours COLL_NEXT_BUFFER,
// COLL_NEXT_FLAGS and COLL_PREV_FLAGS; ring i >= 1 is entry i of the ring table below. Every
// stride must be coprime with COLL_RANKS (the ring visits every rank). A gated reduce-scatter
// (COLL_GATE) runs on one ring.
inline constexpr std::uint64_t kCollRings = 0x66c;
inline constexpr std::uint64_t kCollStride = 0x670;
// RW, NVLS ops only (protocol/ring.h, NVLS): the switch's multicast group of the ranks (from 1).
inline constexpr std::uint64_t kCollMulticast = 0x674;
inline constexpr std::uint32_t kMaxRings = 8;
// Ring table: ring i (1 <= i < kMaxRings) at kCollRing + (i - 1) * kCollRingStride, the same
// fields as ring 0's (64-bit values as two registers, bits 31:0 at the lower offset).
inline constexpr std::uint64_t kCollRing = 0xd00;
inline constexpr std::uint64_t kCollRingStride = 0x20;
inline constexpr std::uint64_t kRingStride = 0x00;          // RW: data flows rank r -> r + stride
inline constexpr std::uint64_t kRingNextBufferLow = 0x08;   // RW: rank r + stride's buffer base
inline constexpr std::uint64_t kRingNextBufferHigh = 0x0c;  // RW
inline constexpr std::uint64_t kRingNextFlagsLow = 0x10;    // RW: rank r + stride's flag area
inline constexpr std::uint64_t kRingNextFlagsHigh = 0x14;   // RW
inline constexpr std::uint64_t kRingPrevFlagsLow = 0x18;    // RW: rank r - stride's flag area
inline constexpr std::uint64_t kRingPrevFlagsHigh = 0x1c;   // RW
inline constexpr std::uint64_t ring_register(int ring, std::uint64_t field) {
  return kCollRing + static_cast<std::uint64_t>(ring - 1) * kCollRingStride + field;
}

// Streaming kernel descriptor (KERNEL = kStream): a memory-bound element-wise or normalisation
// kernel. STREAM_WORKGROUPS workgroups each read an equal, element-aligned share of the input
// range and write an equal share of the output range, in steps, at the SMs' issue rate; the only
// compute is STREAM_OPS vector-ALU operations per element read and STREAM_FLOPS matrix FLOPs
// spread over the input (a fused attention kernel). ELEMENT gives the element type of both.
inline constexpr std::uint64_t kStreamSrcLow = 0x700;          // RW: input base, bits 31:0
inline constexpr std::uint64_t kStreamSrcHigh = 0x704;         // RW: bits 63:32
inline constexpr std::uint64_t kStreamReadBytesLow = 0x708;    // RW: input bytes
inline constexpr std::uint64_t kStreamReadBytesHigh = 0x70c;   // RW
inline constexpr std::uint64_t kStreamDstLow = 0x710;          // RW: output base
inline constexpr std::uint64_t kStreamDstHigh = 0x714;         // RW
inline constexpr std::uint64_t kStreamWriteBytesLow = 0x718;   // RW: output bytes
inline constexpr std::uint64_t kStreamWriteBytesHigh = 0x71c;  // RW
inline constexpr std::uint64_t kStreamWorkgroups = 0x720;      // RW: 1..kMaxStreamWorkgroups
inline constexpr std::uint64_t kStreamOps = 0x724;        // RW: vector ops per element (resets 1)
inline constexpr std::uint64_t kStreamFlopsLow = 0x728;   // RW: matrix FLOPs (resets 0)
inline constexpr std::uint64_t kStreamFlopsHigh = 0x72c;  // RW
inline constexpr std::uint64_t kStreamOutFlags = 0x730;   // RW: OutFlags of the output (bit 0)
// RW: input bytes a workgroup reads per step, whole elements (0: its SM slot's part of
// sm.max_inflight_bytes); for one launch: each doorbell on an idle queue resets it to 0 once read
inline constexpr std::uint64_t kStreamStepBytes = 0x734;
inline constexpr std::uint32_t kMaxStreamWorkgroups = 1u << 20;
inline constexpr std::uint32_t kDefaultStreamOps = 1;

enum CollOp : std::uint32_t {
  kReduceScatter = 0,
  kAllGather = 1,
  kDirectReduceScatter = 2,
  kDirectAllGather = 3,
  kAdd = 4,                // BUFFER += NEXT_BUFFER (protocol/ring.h, CollectiveOp::Add)
  kNvlsReduceScatter = 5,  // through the switch's multicast group (protocol/ring.h, NVLS)
  kNvlsAllGather = 6,
  kNvlsAllReduce = 7,           // one launch: ld_reduce and multicast store slice by slice
  kDirectNmcReduceScatter = 8,  // pushed as near-memory updates (protocol/ring.h, Direct NMC)
};
inline constexpr std::uint32_t kMaxRanks = 256;
inline constexpr std::uint32_t kMaxChannels = 64;
// Reset values of the tunables (kept across launches until written).
inline constexpr std::uint32_t kDefaultSliceBytes = 128 * 1024;
inline constexpr std::uint32_t kDefaultFifoDepth = 8;
inline constexpr std::uint32_t kDefaultPollNs = 100;

// Mailbox: kMailboxWords read/write 32-bit words at kMailbox + 4 i, reset to 0, with no side
// effect. They hold their values in timing mode too (HBM stores data only in functional mode),
// so a collective's flag areas live here by default; any GPU reaches them through its MMIO
// window. Like every register, a word changes when the access reaches the block in simulated
// time of the caller (loosely timed), and an aligned 8-byte access moves two words at once.
inline constexpr std::uint64_t kMailbox = 0x800;
inline constexpr int kMailboxWords = 256;  // 0x800..0xbff: kMaxChannels flag areas

// Hardware queues: kernels on different queues run at once and share the SM slots. The
// descriptor above is a staging area shared by every queue: writing 1 to queue q's DOORBELL
// validates it and launches a copy on queue q, so the host may program the next launch at once.
// Queue q's control registers are at queue_register(q, field); queue 0's are also at the offsets
// above (STATUS, ERROR, DOORBELL, IRQ_ACK, COMPLETED_WGS, DISPATCHED_WGS, FAULT_LO/HI), so a
// single-queue host never looks here. Each queue has its own interrupt line.
inline constexpr int kQueues = 4;
inline constexpr std::uint64_t kQueueBase = 0xc00;
inline constexpr std::uint64_t kQueueStride = 0x40;
inline constexpr std::uint64_t kQueueStatus = 0x00;         // RO: Status of its last launch
inline constexpr std::uint64_t kQueueError = 0x04;          // RO: LaunchError of its last launch
inline constexpr std::uint64_t kQueueDoorbell = 0x08;       // WO: launch the descriptor here
inline constexpr std::uint64_t kQueueIrqAck = 0x0c;         // WO: drop its interrupt line
inline constexpr std::uint64_t kQueueCompletedWgs = 0x10;   // RO: this launch
inline constexpr std::uint64_t kQueueDispatchedWgs = 0x14;  // RO: this launch
inline constexpr std::uint64_t kQueuePriority = 0x18;   // RW: higher is dispatched first (reset 0)
inline constexpr std::uint64_t kQueueFaultLow = 0x1c;   // RO: first faulting address, bits 31:0
inline constexpr std::uint64_t kQueueFaultHigh = 0x20;  // RO: bits 63:32
inline constexpr std::uint64_t queue_register(int queue, std::uint64_t field) {
  return kQueueBase + static_cast<std::uint64_t>(queue) * kQueueStride + field;
}

// The doorbell that launches the descriptor on `queue` (queue 0's at its first offset).
inline constexpr std::uint64_t doorbell_register(int queue) {
  return queue == 0 ? kDoorbell : queue_register(queue, kQueueDoorbell);
}

enum Status : std::uint32_t { kIdle = 0, kRunning = 1, kDone = 2, kFailed = 3 };
enum KernelKind : std::uint32_t { kNone = 0, kGemm = 1, kCollective = 2, kStream = 3 };
enum LaunchError : std::uint32_t {
  kNoError = 0,
  kZeroSize = 1,   // M, N, K or a tile size is 0
  kBadChunks = 2,  // chunks 0, above kMaxChunks, above the output's tile rows, or first >= chunks
  kUnmappedBuffer = 3,  // A, B or an output chunk's range is not inside one GPU's HBM window
  kBadKernel = 4,       // unknown kernel kind, element type, WG order or OUT_OP
  kBusy = 5,            // doorbell while a kernel runs on the same queue
  kMemoryFault = 6,     // a workgroup's access got an error response (address in kFault*)
  kBadCollective = 7,   // collective: ranks, rank, channels, bytes, slice, FIFO depth, sequence,
                        // poll interval, rings or a ring's stride out of range (see validate in
                        // dispatcher.cpp)
  kBadSmRange = 8,      // SM_FIRST is not an SM, or SM_FIRST + SM_COUNT passes the last SM
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
    case kBadCollective:
      return "bad collective";
    case kBadSmRange:
      return "bad SM range";
    default:
      return "unknown";
  }
}

enum OutFlags : std::uint32_t { kUncached = 1u << 0, kTagged = 1u << 1 };

}  // namespace t3::dispatcher
