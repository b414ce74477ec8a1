// The ring collective protocol the SMs run (RCCL-style): the ring schedule, the memory layout every
// GPU follows and the flag protocol. Header-level plain C++, no SystemC: the SM model executes
// these rules and the workload layer plans programs by them (workloads/collective_program.h), so
// both agree by construction.
//
// Ring. n GPUs (ranks 0..n-1) in rank order; data flows r -> next(r) = (r + 1) mod n. The buffer
// of every rank holds E = BYTES / element bytes elements (any E >= 1) in n chunks; chunk i holds
// the elements [i * E / n, (i + 1) * E / n) (chunk_range). When n divides E every chunk has E / n
// elements; otherwise chunks differ by at most one element, and when E < n some are empty. Why
// this split rather than NCCL's (chunks of ceil(E / n), the last ones short or empty): it is the
// one the channels already use, it keeps every chunk within one element of the others, so no
// rank's link carries more than its share, and for an even split it is the old layout exactly.
//
// Channels. A launch runs CHANNELS workgroups (NCCL's channels), one per SM slot. Channel c owns
// the same share of every chunk: [c * m / CHANNELS, (c + 1) * m / CHANNELS) of a chunk of m
// elements (channel_range; empty when m < CHANNELS for some c), and channel c of rank r talks only
// to channel c of its neighbours. A channel cuts its range of a chunk into slices of SLICE_BYTES
// (the last one may be shorter) and, as NCCL's ring loop does, runs all ring steps on slice 0,
// then all of them on slice 1, and so on, so the steps of consecutive slices overlap on the link
// and the reductions hide behind the transfers. Every step of a slice works on another chunk, and
// chunks may differ by one element, so a channel runs channel_slices() slices: the most any chunk
// needs. A slice past the end of a chunk's range (or of an empty range) moves no data but takes
// its full part in the flag protocol below (it is waited for, sent and acknowledged like any
// other), so sender and receiver count the same sends without knowing each other's data. Why not
// drop the empty channels instead: which channels are empty differs from chunk to chunk, and
// keeping every send in the count keeps the protocol the same for every size.
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
// Several rings (a fully-connected fabric, where rank r has a link to every other rank). A launch
// may spread its channels over R rings (COLL_RINGS); channel c runs on ring c mod R, so every
// chunk's elements are split between the rings by whole channel ranges, exactly. Ring i has a
// stride s_i coprime with n: data flows r -> r + s_i, so the ring visits every rank (a
// Hamiltonian cycle) and uses the links r -> r + s_i alone; rings of different strides use
// pairwise distinct link directions (a link is full duplex: stride s and n - s use its two
// directions). On the ring of stride s, ring position q is rank q s mod n, and the stride-1
// schedule above, written in positions, would leave position chunk q + 1 on position q. Every ring
// must leave buffer chunk r + 1 on rank r, as the stride-1 ring does (so the all-gather and the
// next layer find each chunk where they expect it, whatever the ring), so position chunk p is
// relabelled to buffer chunk (p - 1) s + 1: position q's chunk q + 1 becomes q s + 1 = r + 1.
// Written in ranks (no inverse of s needed): at reduce-scatter step t rank r sends the partial of
// chunk r + 1 - (t + 1) s (stride 1: r - t), and at all-gather step t it sends
// owner_chunk(r - t s) = r + 1 - t s. Both are what the stride-s predecessor r - s handled one step
// earlier, so the receive side needs no other change. Each ring has its own next and previous
// rank (r + s_i, r - s_i) for its channels' data, READY and ACK; channel c's flag words and FIFO
// entries are its own whatever its ring, so rings never share a word or an entry.
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
#include <vector>

namespace t3 {

// The dispatcher's COLL_OP register values.
enum class CollectiveOp : std::uint32_t {
  ReduceScatter = 0,
  AllGather = 1,
  DirectReduceScatter = 2,  // direct ops: see "Direct" below
  DirectAllGather = 3,
  // Not a collective: BUFFER[i] += NEXT_BUFFER[i] for the BYTES at both, on the SMs, each channel
  // its channel_range of the whole buffer in slices; no flags (the adds of a collective whose
  // sends another engine moves).
  Add = 4,
  NvlsReduceScatter = 5,  // NVLS ops: see "NVLS" below
  NvlsAllGather = 6,
  NvlsAllReduce = 7,  // one launch: each slice reduced by the switch and multicast at once
  DirectNmcReduceScatter = 8,  // direct layout, pushed as near-memory updates: see "Direct NMC"
};

const char* to_string(CollectiveOp op);
bool is_direct(CollectiveOp op);
// ReduceScatter, DirectReduceScatter, NvlsReduceScatter, DirectNmcReduceScatter
bool is_reduce_scatter(CollectiveOp op);
bool is_nvls(CollectiveOp op);  // NvlsReduceScatter, NvlsAllGather, NvlsAllReduce

// ---- Direct (fully-connected and switch fabrics) -----------------------------------------------
//
// The direct ops keep the ring's buffer, chunks, channels, slices and chunk ownership (rank r ends
// owning owner_chunk(r) = r + 1, so either all-gather can follow either reduce-scatter), but every
// chunk moves straight between the rank that holds it and the rank that needs it, over the pair's
// own route, as a CUDA-IPC kernel does (TensorRT-LLM's two-shot all-reduce): every rank maps its
// peers' buffers, at BUFFER + (p - r) x PEER_STRIDE for rank p, and loads from them.
//   Arrival. Channel c of rank r first stores flag_value(SEQUENCE, 1) into word (c, r) of every
//   peer's direct flag area (at FLAGS + (p - r) x PEER_FLAG_STRIDE), then waits until its own
//   words (c, p) of every peer p reach that value. A peer's channel arrives only once its program
//   has reached this launch, so its data (the reduce-scatter's input, the all-gather's owned
//   chunk) is final and its earlier launches are over.
//   Direct reduce-scatter. For each slice of its range of the owned chunk the channel loads its
//   own partial (local) and every peer's (remote loads, peers in order r + 1, r + 2, ...), adds
//   them in float, rounds once to the element type and stores the sum in place.
//   Direct all-gather. For each slice and each peer p in order r + 1, r + 2, ... the channel loads
//   p's owned chunk owner_chunk(p) from p's buffer and stores it at the same position of its own.
//   A rank writes only its own buffer, and only positions no peer loads during the same launch
//   (its owned chunk in a reduce-scatter, the peers' owned chunks in an all-gather), so no ACK is
//   needed: the next launch's arrival orders it after this one everywhere.
// Direct flag area: CHANNELS x RANKS words of 8 bytes, word (c, p) at FLAGS + 8 (c RANKS + p).
// Traffic: remote loads are Communication, Uncached (they bypass this GPU's L2 and are served by
// the peer's memory-side L2); local loads and the final stores are Cached, as in the ring.
//
// ---- Direct NMC (fully-connected and switch fabrics) -------------------------------------------
//
// The direct NMC reduce-scatter keeps the direct ops' buffer, chunks, channels, slices, chunk
// ownership, peer strides, flag area and arrival, but pushes instead of pulling: for each slice of
// its range and each peer p, channel c taking them in order r + 1 + (c + i) mod (n - 1) for
// i = 0 .. n - 2 (so the channels push over every link at once), the channel loads its own partial
// of p's owned chunk owner_chunk(p) and stores it into p's buffer at the same position as
// near-memory updates (Op::Update, add of the element type at p's memory), as T3's producer stores
// its partial sums. Rank r never touches its own owned chunk: its peers' updates add into it in
// place. Then completion: after a fence (every update acknowledged, i.e. applied) the channel
// stores flag_value(SEQUENCE, 2) into its word (c, r) of every peer's direct flag area and waits
// until its own words (c, p) of every peer reach that value; then its owned chunk holds every
// contribution of its channel range. Updates are Communication, Uncached; local loads Cached.
// The all-gather that follows it is the direct one (or the ring's: the ownership is the same).
//
// ---- NVLS (a switch that reduces: topology.switch_reductions) ---------------------------------
//
// The NVLS ops keep the direct ops' buffer, chunks, channels, slices, chunk ownership, peer
// strides and arrival, but move the data through the switch's multicast group COLL_MULTICAST
// (docs/protocol.md, "Switch reductions"), as NCCL's NVLS algorithm does with multimem
// instructions. A multicast access names the buffer's position through the next rank's window,
// COLL_BUFFER + COLL_PEER_STRIDE + offset (so it leaves the GPU for the switch); the switch takes
// its offset in every member's window.
//   NVLS reduce-scatter. For each slice of its range of the owned chunk the channel issues
//   ld_reduce reads (the switch returns the sum of every rank's copy, added in float and rounded
//   once, in member order) and stores the sum in place.
//   NVLS all-gather. For each slice of its range of the owned chunk the channel loads it locally
//   and stores it through the multicast group: the switch writes it at the same position of every
//   rank's buffer (its own included).
//   NVLS all-reduce (one launch, as NCCL's NVLS all-reduce kernel runs it). For each slice of its
//   range of the owned chunk the channel issues ld_reduce reads and, piece by piece as each sum
//   comes back, stores it through the multicast group at the same position: every rank's buffer
//   (its own included) ends with the sum. The reads of later pieces run ahead of the stores of
//   earlier ones, so a GPU's link carries the members' copies towards the switch and the sums
//   back at the same time, where the reduce-scatter then the all-gather would use one direction
//   after the other. Only the owner reads or writes its chunk, and it stores a piece after its sum
//   is back, so no flag beyond the arrival is needed.
std::uint64_t direct_flag_area_bytes(int channels, int ranks);
std::uint64_t arrival_flag(std::uint64_t flags, int channel, int ranks, int peer);

// ---- The ring schedule -------------------------------------------------------------------------

// n mod ranks in [0, ranks): a rank or chunk index moved around the ring.
int wrap(std::int64_t n, int ranks);
int next_rank(int rank, int ranks);  // (rank + 1) mod ranks
int prev_rank(int rank, int ranks);  // (rank - 1) mod ranks
// The chunk rank `rank` holds fully reduced after a reduce-scatter (and sends first in an
// all-gather): (rank + 1) mod ranks.
int owner_chunk(int rank, int ranks);
// The chunk whose partial `rank` sends at reduce-scatter step `step` (0..ranks-2) on the ring of
// `stride`: (rank + 1 - (step + 1) stride) mod ranks, (rank - step) on the stride-1 ring. At step
// ranks - 1 it is owner_chunk(rank), the chunk the rank finishes locally, whatever the stride.
int reduce_scatter_chunk(int rank, int step, int ranks, int stride = 1);
// The chunk `rank` writes into next's buffer at all-gather step `step` on the ring of `stride`:
// owner_chunk(rank - step stride).
int all_gather_chunk(int rank, int step, int ranks, int stride = 1);
// A ring of `stride` over `ranks` visits every rank (stride in [1, ranks), coprime with ranks).
bool hamiltonian_stride(int stride, int ranks);
// The strides of the rings a collective on `ranks` fully-connected ranks spreads over: every
// stride in [1, ranks) coprime with ranks, in increasing order, at most `most` of them (the first
// ones). Each uses its own direction of each link it crosses (stride s and ranks - s the two
// directions of the same links), so the rings share no link direction; n = 8 gives 1, 3, 5, 7.
std::vector<int> mesh_ring_strides(int ranks, int most);

// One ring of a launch (protocol above, Several rings): its stride and the areas of its
// neighbours, rank r + stride (data and READY) and rank r - stride (ACK).
struct RingRoute {
  int stride = 1;
  std::uint64_t next_buffer = 0;
  std::uint64_t next_flags = 0;
  std::uint64_t prev_flags = 0;
};
// The ring channel `channel` runs on among `rings`: channel mod rings.
inline int ring_of_channel(int channel, int rings) {
  return channel % rings;
}

// ---- Channels and slices -----------------------------------------------------------------------

struct ElementRange {
  std::int64_t first = 0;
  std::int64_t end = 0;
  std::int64_t size() const { return end - first; }
};
// Part `part` of `total` elements cut into `parts`: [part * total / parts, (part + 1) * total /
// parts), computed without overflow. Parts differ by at most one element; some are empty when
// total < parts.
ElementRange split_range(std::int64_t total, int parts, int part);
// Chunk `chunk` of a buffer of `elements` elements, in elements from the buffer's start.
ElementRange chunk_range(std::int64_t elements, int ranks, int chunk);
// Channel c's elements of a chunk of `chunk_elements`, from the chunk's start.
ElementRange channel_range(std::int64_t chunk_elements, int channels, int channel);
// Slices a range is cut into: ceil(range / slice_elements) (at least 1: an empty range still
// runs one slice, of flags only).
std::int64_t slice_count(std::int64_t range_elements, std::int64_t slice_elements);
// Slices channel `channel` runs over a buffer of `elements` elements: the most any chunk's range
// of the channel needs (chunks have two sizes at most, and a channel's range is not monotonic
// in the chunk size, so both are asked).
std::int64_t channel_slices(std::int64_t elements, int ranks, int channels, int channel,
                            std::int64_t slice_elements);

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
