// The sublayer GEMM run on every GPU of the group at once (each GPU computes its own partial
// sums): where each GPU's operands lie and the program its host runs. Plain data, no SystemC.
#pragma once

#include <cstdint>
#include <vector>

#include "config/system_config.h"
#include "protocol/gemm_layout.h"
#include "protocol/program.h"
#include "workloads/gemm_program.h"

namespace t3 {

struct GpuGemm {
  GemmBuffers buffers;  // A, B, C in this GPU's HBM
  GemmLaunch launch;
};

struct GroupGemmPlan {
  GemmShape shape;
  std::vector<GpuGemm> gpus;  // one per GPU
  std::vector<Program> programs() const;
  double flops_per_gpu() const { return 2.0 * shape.m * shape.n * shape.k; }
};

// Every GPU runs `shape` in fp16 with the configured tiles, in raster_order(), one output
// chunk stored (cached) to its own C. Addresses come from config.address_map.
GroupGemmPlan plan_group_gemm(const SystemConfig& config, const GemmShape& shape,
                              ElementType element = ElementType::Fp16,
                              ElementType out_element = ElementType::Fp16);

// The order a plain GEMM of `shape` is dispatched in under `tiles.raster`: RowMajor, or for
// GemmRaster::Cutlass the rule of CUTLASS's SM90 persistent tile scheduler
// (include/cutlass/gemm/kernel/tile_scheduler_params.h, get_rasterization_order with
// RasterOrderOptions::Heuristic): along M (ColumnMajor) when the grid has more tile columns than
// tile rows, along N (RowMajor) otherwise. Walking the shorter side first keeps the operand
// that every wave shares (a few tile columns of B, or rows of A) in the L2 while the other streams.
WgOrder raster_order(const GemmConfig& tiles, const GemmShape& shape);

// The output map that cuts C (at `c`, tile-contiguous) into `chunks` bands of tile rows, each
// stored where it lies in C; `op` and `flags` apply to every band.
std::vector<OutputChunk> chunk_outputs(std::uint64_t c, const GemmShape& shape,
                                       const GemmConfig& tiles, std::int64_t chunks,
                                       ElementType out_element, OutputOp op = OutputOp::Store,
                                       std::uint32_t flags = 0);

std::uint64_t hbm_base(const SystemConfig& config, int gpu);
std::uint64_t mmio_block(const SystemConfig& config, int gpu, std::uint64_t block_offset);

}  // namespace t3
