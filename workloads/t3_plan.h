// T3's fused GEMM + reduce-scatter on every GPU of the group (REFERENCES.md section 1): the
// producer GEMM's output is cut into one chunk per GPU, and the ring reduce-scatter happens
// inside the GEMM's own stores, through the tracker, the DMA engine and near-memory updates.
// Plain data, no SystemC.
//
// Ring, written in ring ranks r (T3Ring below: r = g on the paper's descending ring GPU0 -> GPU3
// -> GPU2 -> GPU1, r = -g mod n on the ascending one GPU0 -> GPU1 -> ...): chunk data flows from
// rank r to rank r-1. Chunk positions are the output's bands of tile rows. Rank r computes its
// chunks in the order (r + 2), (r + 3), ... (mod n):
//   - stage 1, position (r + 2): its stores go straight to rank r-1's output as remote updates
//     (the paper's remote_map);
//   - stages 2 .. n-1: local updates; the tracker counts the local update and the incoming one
//     from rank r+1 per tile and, when both are applied, the DMA engine sends the tile's sum to
//     rank r-1 as an update (the paper's dma_map);
//   - stage n, position (r + 1): rank r's fully reduced chunk; it stays local.
// So rank r ends owning chunk (r + 1) mod n, the same owner as rank r of the ring all-gather
// (collective_program.h, owner_chunk) starts from. Every output store is an uncached update
// tagged with its tile id, into an output buffer that starts zeroed. Each tracker region counts
// 2 x tile bytes per tag (local + incoming update); with a ragged N the last tile column's
// narrower tiles count 2 x their own bytes. Neighbouring tiles of a row share one tracker entry
// (TAG_GROUP) when the table could not otherwise hold every tile a GPU may have pending, so the
// fused reduce-scatter never waits on a full table (a full table could deadlock the ring: each
// GPU's entries waiting on contributions that wait for entries on the next).
#pragma once

#include <cstdint>
#include <vector>

#include "config/system_config.h"
#include "protocol/program.h"
#include "protocol/ring.h"
#include "workloads/gemm_plan.h"

namespace t3 {

// Where each GPU stands in T3's ring (workload.ring). A GPU's rank is its position on the ring:
// its GPU index when descending (the paper's ring), -index mod n when ascending; chunk data flows
// from rank r to rank r - 1 either way, so the schedule below is written once, in ranks.
struct T3Ring {
  int gpus = 0;
  RingDirection direction = RingDirection::Descending;
  int rank(int gpu) const;  // its own inverse: gpu(rank) == rank(rank)
  int gpu(int rank) const { return this->rank(rank); }
  int next(int gpu) const { return this->gpu(rank(gpu) - 1); }  // where GPU g's chunk data goes
  std::int64_t first_chunk(int gpu) const;                      // stage 1 position: rank + 2
  std::int64_t owned_chunk(int gpu) const;  // fully reduced there at the end: rank + 1
  int owner(std::int64_t chunk) const { return gpu(wrap(static_cast<int>(chunk) - 1, gpus)); }
};

// The paper's ring (descending).
int t3_next_gpu(int gpu, int gpus);
std::int64_t t3_first_chunk(int gpu, int gpus);
std::int64_t t3_owned_chunk(int gpu, int gpus);

struct T3GemmRsPlan {
  GroupGemmPlan gemm;  // buffers and launches, with T3's output map
  T3Ring ring;
  bool direct = false;  // chunks straight to their owners (see above), not along the ring
  std::vector<std::vector<HostCommand>> tracker_setup;  // per GPU, before the launch
  // Each chunk is a band of tile rows: tiles = band tile rows x tile columns; bytes = band tile
  // rows x tile_m x N x element bytes (edge tiles are unpadded).
  std::int64_t tiles_per_chunk = 0;
  // Tile columns that share a tracker entry (TAG_GROUP), chosen so the n - 1 chunks a GPU
  // receives never need more entries than tracker.entries, and the groups of one chunk.
  std::int64_t tag_group = 1;
  std::int64_t groups_per_chunk = 0;
  std::uint64_t chunk_bytes = 0;
  std::vector<Program> programs() const;  // setup, GEMM, then wait for the owned chunk
};

// Throws std::invalid_argument if the output does not split into equal chunks of whole tile rows
// (M a multiple of tile_m, tile rows divisible by the GPU count): the all-gather that follows
// uses equal chunks. N need not be a multiple of tile_n: the narrower tiles of the last column
// are counted at their own threshold (the tracker's GRID_COLS and EDGE_THRESHOLD). Also throws if
// tracker.entries is smaller than the tile rows a GPU receives. `direct` chooses the direct form
// (the caller checks the topology allows it: direct_collective in config_io.h).
T3GemmRsPlan plan_t3_gemm_rs(const SystemConfig& config, const GemmShape& shape,
                             ElementType element = ElementType::Fp16,
                             ElementType out_element = ElementType::Fp16, bool direct = false);

}  // namespace t3
