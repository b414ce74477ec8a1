// T3's fused GEMM + reduce-scatter on every GPU of the group (REFERENCES.md section 1): the
// producer GEMM's output is cut into one chunk per GPU, and the ring reduce-scatter happens
// inside the GEMM's own stores, through the tracker, the DMA engine and near-memory updates.
// Plain data, no SystemC.
//
// Ring: chunk data flows from GPU g to GPU g-1 (the paper's GPU0 -> GPU3 -> GPU2 -> GPU1).
// Chunk positions are the output's bands of tile rows. GPU g computes its chunks in the order
// (g + 2), (g + 3), ... (mod n):
//   - stage 1, position (g + 2): its stores go straight to GPU g-1's output as remote updates
//     (the paper's remote_map);
//   - stages 2 .. n-1: local updates; the tracker counts the local update and the incoming one
//     from GPU g+1 per tile and, when both are applied, the DMA engine sends the tile's sum to
//     GPU g-1 as an update (the paper's dma_map);
//   - stage n, position (g + 1): GPU g's fully reduced chunk; it stays local.
// So GPU g ends owning chunk (g + 1) mod n, the same owner the ring all-gather
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
#include "workloads/gemm_plan.h"
#include "workloads/program.h"

namespace t3 {

int t3_next_gpu(int gpu, int gpus);              // where GPU g's chunk data goes
std::int64_t t3_first_chunk(int gpu, int gpus);  // stage 1 position
std::int64_t t3_owned_chunk(int gpu, int gpus);  // fully reduced there at the end

struct T3GemmRsPlan {
  GroupGemmPlan gemm;  // buffers and launches, with T3's output map
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
// tracker.entries is smaller than the tile rows a GPU receives.
T3GemmRsPlan plan_t3_gemm_rs(const SystemConfig& config, const GemmShape& shape,
                             ElementCode element = kElementFp16,
                             ElementCode out_element = kElementFp16);

}  // namespace t3
