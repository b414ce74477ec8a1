// The ring collective protocol the SMs run (RCCL-style): the ring schedule, the memory layout every
// GPU follows and the flag protocol. Header-level plain C++, no SystemC: the SM model executes
// these rules and the workload layer plans programs by them (workloads/collective_program.h), so
// both agree by construction.
//
// Ring. n GPUs (ranks 0..n-1) in rank order; data flows r -> next(r) = (r + 1) mod n. The buffer
// of every rank holds n chunks of BYTES / n bytes; chunk i is [BUFFER + i * chunk, + chunk).
//
// Channels. A launch runs CHANNELS workgroups (NCCL's channels), one per SM slot. Channel c owns
// the same element range of every chunk, [c * E / CHANNELS, (c + 1) * E / CHANNELS) with E the
// elements of a chunk, and channel c of rank r talks only to channel c of its neighbours. A
// channel cuts its range into slices of SLICE_BYTES (the last one may be shorter) and, as NCCL's
// ring loop does, runs all ring steps on slice 0, then all of them on slice 1, and so on, so the
// steps of consecutive slices overlap on the link and the reductions hide behind the transfers.
//
// Reduce-scatter (n - 1 link steps per slice). Step s = 0..n-2: rank r sends its partial of chunk
// reduce_scatter_chunk(r, s) = (r - s) mod n to next: at s = 0 its own data, at s >= 1 the slice
// received from prev (prev's step s - 1 of the same chunk) plus its own data (add on the CU, in
// float, rounded to the element type). Step n - 1: r adds its own data to what prev sent at step
// n - 2 and stores the sum in its own buffer: rank r ends owning the fully reduced chunk
// owner_chunk(r) = (r + 1) mod n. Partial sums go into the receiver's FIFO, never into its data
// buffer, which the receiver still reads.
// All-gather (in place). Rank r starts with owner_chunk(r) final in its buffer; at step s =
// 0..n-2 it writes chunk all_gather_chunk(r, s) = owner_chunk(r - s) into the same position of
// next's buffer (at s >= 1 after it arrived from prev); at the end every rank holds every chunk.
// All-reduce = reduce-scatter then all-gather on the same buffers (two launches).
//
// Memory layout of each rank (plan_collective places it):
//   BUFFER                          n chunks, BYTES in all (the data, in and out)
//   receive_area(BUFFER, BYTES)     = BUFFER + BYTES rounded up to kFifoAlignment (4 KiB): the
//   receive FIFO,
//                                   CHANNELS x FIFO_DEPTH entries of SLICE_BYTES; channel c's
//                                   entry e at receive + (c * FIFO_DEPTH + e) * SLICE_BYTES.
//                                   Reduce-scatter only; all-gather leaves it untouched.
//   FLAGS                           flag area, 16 bytes per channel: channel c's READY word at
//                                   FLAGS + 16 c, its ACK word at FLAGS + 16 c + 8. By default in
//                                   the rank's dispatcher mailbox (MMIO, holds values in timing
//                                   mode); in HBM after the FIFO only in functional mode.
// Flags are 64-bit words read and written whole: bits 63:32 the launch SEQUENCE, bits 31:0 a
// count, compared as one unsigned number, so a flag left by an earlier launch (smaller sequence)
// never satisfies a wait of this one. Every slice send of a channel has an index
// g = slice * (n - 1) + step (in the order the channel sends). After the data of send g is written
// (each store acknowledged: the fence), the sender writes READY = (SEQUENCE, g + 1) into next's
// area. The receiver waits for READY >= (SEQUENCE, g + 1) before it reads send g, and after it has
// read it writes ACK = (SEQUENCE, g + 1) into prev's area. Reduce-scatter send g goes to FIFO
// entry g mod FIFO_DEPTH of next, so the sender first waits for ACK >= (SEQUENCE, g + 1 - depth)
// (the entry's previous use consumed). A channel ends only when its ACK shows that next consumed
// all its sends, so when a launch ends on every rank nothing is left in flight and the next
// launch (with a larger SEQUENCE) may reuse buffers, FIFO and flags. Flag words start at 0
// (mailbox reset; zero-filled HBM); SEQUENCE starts at 1 and must grow from launch to launch.
// Flag stores are posted (the channel does not wait for their acknowledgement); polls read the
// local word every POLL_NS until it is large enough.
//
// Traffic: every collective access has traffic class Communication. Local data reads (own chunk,
// FIFO, received all-gather chunks) and the reduce-scatter's final local store are Cached (they
// go through this GPU's memory-side L2). Stores into the next GPU's HBM and every flag access are
// Uncached: a remote store bypasses the L2 on its way (the receiver's L2 writes back and
// invalidates the lines it overlaps), and a polled flag must not be served from a stale line.
// Since the L2 is memory-side, both choices are coherent; Uncached keeps one-shot data from
// evicting the receiver's working set.
#pragma once

#include <cstdint>

namespace t3 {

// The dispatcher's COLL_OP register values.
enum class CollectiveOp : std::uint32_t { ReduceScatter = 0, AllGather = 1 };

const char* to_string(CollectiveOp op);

// ---- The ring schedule -------------------------------------------------------------------------

int next_rank(int rank, int ranks);  // (rank + 1) mod ranks
int prev_rank(int rank, int ranks);  // (rank - 1) mod ranks
// The chunk rank `rank` holds fully reduced after a reduce-scatter (and sends first in an
// all-gather): (rank + 1) mod ranks.
int owner_chunk(int rank, int ranks);
// The chunk whose partial `rank` sends at reduce-scatter step `step` (0..ranks-2): (rank - step)
// mod ranks. At step ranks - 1 it is owner_chunk(rank), the chunk the rank finishes locally.
int reduce_scatter_chunk(int rank, int step, int ranks);
// The chunk `rank` writes into next's buffer at all-gather step `step`: owner_chunk(rank - step).
int all_gather_chunk(int rank, int step, int ranks);

// ---- Channels and slices -----------------------------------------------------------------------

struct ElementRange {
  std::int64_t first = 0;  // elements from the start of a chunk
  std::int64_t end = 0;
  std::int64_t size() const { return end - first; }
};
// Channel c's elements of every chunk: [c * E / channels, (c + 1) * E / channels).
ElementRange channel_range(std::int64_t chunk_elements, int channels, int channel);
// Slices a channel's range is cut into: ceil(range / slice_elements) (at least 1).
std::int64_t slice_count(std::int64_t range_elements, std::int64_t slice_elements);

// ---- Flags -------------------------------------------------------------------------------------

inline constexpr std::uint64_t kFlagStride = 16;  // bytes of flag area per channel
inline constexpr std::uint64_t kReadyFlag = 0;    // offsets inside a channel's 16 bytes
inline constexpr std::uint64_t kAckFlag = 8;
std::uint64_t flag_area_bytes(int channels);
std::uint64_t ready_flag(std::uint64_t flags, int channel);
std::uint64_t ack_flag(std::uint64_t flags, int channel);
// (sequence << 32) | count.
std::uint64_t flag_value(std::uint32_t sequence, std::uint32_t count);

// ---- Layout ------------------------------------------------------------------------------------

inline constexpr std::uint64_t kFifoAlignment = 4096;

// The receive FIFO follows the buffer: buffer + bytes rounded up to kFifoAlignment.
std::uint64_t receive_area(std::uint64_t buffer, std::uint64_t bytes);
std::uint64_t receive_area_bytes(int channels, std::uint32_t fifo_depth, std::uint32_t slice_bytes);
// Channel c's FIFO entry e.
std::uint64_t fifo_entry(std::uint64_t receive, int channel, std::uint32_t fifo_depth,
                         std::uint32_t slice_bytes, std::uint32_t entry);

}  // namespace t3
