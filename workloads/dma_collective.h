// Collectives run by the DMA engines with near-memory updates (the paper's "Ideal-RS+NMC"
// baseline, `t3sim collective --impl ring-dma-nmc`, and its direct form `--impl direct-dma-nmc`):
// no SM kernel, only host programs that arm each GPU's tracker, ring DMA doorbell descriptors and
// poll. Plain C++, no SystemC.
//
// Ring. T3's direction (t3_plan.h): rank g sends to t3_next_gpu(g, n) = g - 1 mod n. The buffer
// of every rank holds E = BYTES / element bytes elements (any E >= 1) in n chunks at the same
// positions p, chunk p holding elements chunk_range(E, n, p) = [p E / n, (p + 1) E / n) as in
// protocol/ring.h (chunks differ by at most one element; some are empty when E < n). Every
// transfer goes to the same position of the next rank's buffer.
//
// Slices and tags. Every non-empty chunk is cut into the same number S of slices of whole
// elements (S = spec.slices, or the largest S <= 16 dividing q = floor(E / n), the smaller chunk's
// elements, 1 if q = 0; 16 = dma::kDescriptors, one descriptor per slice of the chunk a rank
// starts): S - 1 slices of floor(m / S) elements and a last one with the rest (up to S - 1
// elements more) for a chunk of m elements (dma_chunk). When every chunk splits evenly, its
// region counts every slice at THRESHOLD; otherwise it uses the tracker's edge threshold
// (GRID_COLS = S, EDGE_THRESHOLD = the last slice) and the programs set TAG_GROUP = 1 after the
// RESET (which keeps it), so no earlier user's grouping merges slices. Why the rest goes last,
// not spread: the tracker has one THRESHOLD and one edge threshold per region. Slice j of position
// p carries TAG = p S + j (dma_slice_tag), unique in the buffer, and keeps it on every hop: the
// DMA engine sends a fired range with the tag it fired under. Slices pipeline the ring: a slice
// moves on as soon as it has arrived, not when its whole chunk has. An empty chunk has no slices:
// no doorbell sends it, no region is armed for it and no rank waits for it.
//
// Reduce-scatter (n - 1 hops per chunk). Rank g starts chunk t3_first_chunk(g, n) = g + 2: S
// doorbell descriptors, OP update, from its own position g + 2 to the same position of rank g - 1,
// where near-memory compute adds them into g - 1's own partial. For every other position it arms
// tracker region p (dma_reduce_scatter_region) over its own chunk p: THRESHOLD = slice bytes (one
// incoming update completes a slice), DMA_OP update to the same position of g - 1, except the
// owned chunk t3_owned_chunk(g, n) = g + 1, which is count-only (DMA_OP none). When the tracker
// has counted a slice's incoming update, that update has been applied in memory, so the range it
// forwards (own data + everything upstream) is final for this hop. Chunk c thus travels c - 2 ->
// c - 3 -> ... -> c - 1, each hop adding one rank's data, and rank g ends owning chunk g + 1, the
// same owner as owner_chunk() in protocol/ring.h (an SM all-gather can follow).
// Rank g receives, in step order k = 0..n-2, chunk g + 3 + k; the last one is its owned chunk.
//
// All-gather (in place, the same mechanism with stores). Rank g stores its owned chunk g + 1 into
// g - 1 (S doorbells, OP store). Region n + p (dma_all_gather_region) over position p forwards
// stores to g - 1, until the chunk reaches the rank just before its owner in the ring, rank c for
// chunk c, where it is count-only. Rank g receives, in step order, chunk g + 2 + k; the last one
// (k = n - 2) is position g, its count-only region. It receives every chunk but its own.
//
// All-reduce = reduce-scatter then all-gather on the same buffer. The reduce-scatter regions are
// disabled and the all-gather ones, which cover the same addresses, armed in their place (an
// enabled reduce-scatter region would otherwise claim the all-gather's stores: the lowest region
// number wins). Any `ops` sequence works; a repeated op reuses its regions, disabled and enabled
// again, which starts a new round of tags.
//
// Each rank's program:
//   1. tracker RESET: no entries, no remembered tags, REGION_DONE = 0, so the counts polled below
//      are this program's (nothing can arrive yet: no rank rings a doorbell before step 3).
//   2. per op k: disable the previous op's regions; program and enable this op's regions
//      (GRID_COLS = 0 too: RESET keeps an earlier user's region programming).
//   3. Barrier(barrier_base + k). Why: a tagged access into no enabled region is counted nowhere
//      (a tracker error; the slice would never fire), so rank g + 1 may send only once rank g has
//      armed op k; and for k > 0, every rank passed its step 5 of op k - 1 (all its regions done,
//      its DMA engine idle: every one of its updates/stores acknowledged, hence applied), so no
//      traffic of op k - 1 is still in flight anywhere when op k's regions replace its own, and
//      no engine still reads a position op k overwrites (an all-gather store into rank g - 1's
//      position g + 1, the chunk g - 1 started its reduce-scatter from).
//   4. per slice j: descriptor j's SRC, DST, SIZE, OP, ELEMENT, TAG, then its DOORBELL (writing a
//      descriptor and ringing it at once lets slice 0 start while the others are programmed).
//   5. poll REGION_DONE of every region of op k in step order until it counts S more slices (the
//      last poll, the owned chunk (reduce-scatter) or the last chunk received (all-gather), is the
//      rank's completion); then poll the DMA engine's STATUS until 0 (idle). A region done means
//      every one of its slices fired (so no tracker entry is left) and every forward was queued
//      before the DMA poll began, so after it the engine holds nothing either.
//   6. after the last op: disable its regions, so the tracker watches nothing the collective left.
//
// Direct (DmaPattern::Direct, for fully-connected and switch fabrics, T3 section 7.1): no
// forwarding. Chunk ownership is the ring's (rank g owns g + 1), so either all-gather can follow.
//   Reduce-scatter: rank g sends every chunk p but its own, for k = 0..n-2 position p = g + 2 + k,
//   as updates straight to p's owner p - 1 = g + 1 + k (at step k every rank targets a different
//   owner). The owner's region over its own chunk is count-only with THRESHOLD = (n - 1) x slice
//   bytes: a slice is done when every peer's update of it has been applied onto the owner's own
//   partial, which was in place from the start.
//   All-gather: rank g stores its owned chunk g + 1 into every peer, h = g + 1 + k at step k; each
//   rank counts every other position with a count-only region of one slice's bytes.
//   Descriptors: (n - 1) x S doorbells at once (descriptor k S + j), so S <= 16 / (n - 1) and at
//   most 17 ranks; the automatic S is the largest such count dividing the smaller chunk.
//   Programs, barriers and completion as for the ring (steps 1-6 below).
//
// Resources: regions 0..n-1 (reduce-scatter) and n..2n-1 (all-gather): at most 32 ranks with
// tracker::kRegions = 64. Descriptors 0..S-1. Tracker entries: a rank's incoming slices are
// in progress at most dma.in_flight at a time (its one upstream engine runs that many transfers),
// so the table never fills. Timing-mode safe: the tracker counts bytes, never values.
// Traffic: all of it is DMA traffic, class Communication, uncached; nothing goes through the SMs.
// The programs own each GPU's tracker and DMA engine while they run: no other tagged traffic and
// no other descriptors on those GPUs meanwhile (the RESET would drop another user's counts).
#pragma once

#include <cstdint>
#include <vector>

#include "config/system_config.h"
#include "protocol/program.h"
#include "workloads/collective_program.h"
#include "workloads/gemm_program.h"

namespace t3 {

inline constexpr int kMaxDmaSlices = 16;  // dma::kDescriptors
inline constexpr int kMaxDmaRanks = 32;   // two sets of tracker::kRegions / 2 regions

// Ring: chunks travel rank to rank, each hop adding (or storing) one rank's data. Direct: every
// rank sends straight to each chunk's owner (fully-connected and switch fabrics).
enum class DmaPattern { Ring, Direct };
const char* to_string(DmaPattern pattern);                    // "ring", "direct"
inline constexpr int kMaxDirectDmaRanks = kMaxDmaSlices + 1;  // (n - 1) doorbells of one slice

struct DmaCollectiveSpec {
  DmaPattern pattern = DmaPattern::Ring;
  int ranks = 0;
  std::uint64_t bytes = 0;  // whole buffer per rank: `ranks` chunks, any whole number of elements
  ElementType element = ElementType::Fp32;
  // Per non-empty chunk, 1..16 (direct: 1..16 / (ranks - 1)) and at most the smaller chunk's
  // elements; 0 = the largest such count dividing the smaller chunk's elements.
  int slices = 0;
  // Ids of the programs' Barrier commands: barrier_base + k before op k.
  std::uint32_t barrier_base = 0x100;
  std::int64_t elements() const;
  // Bytes of chunk `chunk` (chunk_range: chunks may differ by one element, or be empty).
  std::uint64_t chunk_bytes(int chunk) const;
};

// Throws std::invalid_argument naming the field if the spec cannot run: ranks outside
// [2, kMaxDmaRanks] (direct: [2, kMaxDirectDmaRanks]), bytes 0 or not a
// whole number of elements, slices outside [0, 16] (direct: (ranks - 1) x slices above 16) or
// more than the smaller chunk's elements (1 when that is 0), a tracker threshold over 2^32 - 1
// bytes (a slice; direct reduce-scatter: ranks - 1 slices).
void check_dma_spec(const DmaCollectiveSpec& spec);

// The most slices a chunk may have: 16, or for the direct pattern 16 / (ranks - 1), since a rank
// rings (ranks - 1) chunks' descriptors at once.
int dma_max_slices(const DmaCollectiveSpec& spec);
// The slices per non-empty chunk the programs use (spec.slices, or the automatic choice when it
// is 0).
int dma_slices(const DmaCollectiveSpec& spec);
// How chunk position `position` is cut: `slices` slices (0 for an empty chunk), slices - 1 of
// `slice` bytes and the last of `last` bytes (equal to `slice` when the chunk splits evenly).
struct DmaChunk {
  std::uint64_t offset = 0, bytes = 0;  // in the buffer
  int slices = 0;
  std::uint64_t slice = 0, last = 0;
  bool even() const { return last == slice; }
  std::uint64_t slice_offset(int j) const { return offset + static_cast<std::uint64_t>(j) * slice; }
  std::uint64_t slice_bytes(int j) const { return j == slices - 1 ? last : slice; }
};
DmaChunk dma_chunk(const DmaCollectiveSpec& spec, int position);
// Slice `slice` of chunk position `position`: position x slices + slice.
std::uint32_t dma_slice_tag(int position, int slice, int slices);
int dma_reduce_scatter_region(int position);         // position
int dma_all_gather_region(int position, int ranks);  // ranks + position
// Positions rank `rank` receives in an op, in step order (the last is its completion).
std::vector<int> dma_received_chunks(CollectiveOp op, int rank, int ranks,
                                     DmaPattern pattern = DmaPattern::Ring);

// What rank `rank` sends by doorbell in one op, in step order: a chunk position and the rank it
// goes to. Ring: its first chunk to the next rank (the trackers forward the rest). Direct: every
// chunk it sends, each to its owner (reduce-scatter) or its owned chunk to each peer (all-gather).
struct DmaSend {
  int position = 0;
  int to = 0;
};
std::vector<DmaSend> dma_sends(const DmaCollectiveSpec& spec, CollectiveOp op, int rank);

// Rank g's buffer at GPU g's HBM window base + hbm_offset rounded up to 4 KiB, for every GPU of
// `config`.
std::vector<std::uint64_t> dma_ring_buffers(const SystemConfig& config,
                                            std::uint64_t hbm_offset = 0);

// One program per rank; buffers[g] is rank g's buffer (global address in GPU g's HBM). `ops` run
// one after the other on the same buffers (all-reduce: {ReduceScatter, AllGather}). Throws
// std::invalid_argument for what check_dma_spec rejects, ranks != config.gpus, a buffer count
// other than ranks, a buffer not inside its GPU's HBM window, an empty `ops`, or the direct
// pattern on a ring topology (where a direct send would cross other GPUs' links).
std::vector<Program> dma_collective_programs(const SystemConfig& config,
                                             const std::vector<std::uint64_t>& buffers,
                                             const DmaCollectiveSpec& spec,
                                             const std::vector<CollectiveOp>& ops);

}  // namespace t3
