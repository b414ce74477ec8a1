#include "workloads/gemm_plan.h"

#include "protocol/mmio_map.h"

namespace t3 {

std::uint64_t hbm_base(const SystemConfig& config, int gpu) {
  return config.address_map.hbm_base +
         static_cast<std::uint64_t>(gpu) * config.address_map.hbm_stride;
}

std::uint64_t mmio_block(const SystemConfig& config, int gpu, std::uint64_t block_offset) {
  return config.address_map.mmio_base +
         static_cast<std::uint64_t>(gpu) * config.address_map.mmio_stride + block_offset;
}

WgOrder raster_order(const GemmConfig& tiles, const GemmShape& shape) {
  if (tiles.raster != GemmRaster::Cutlass) return WgOrder::RowMajor;
  const TiledLayout layout(shape.m, shape.n, tiles.tile_m, tiles.tile_n);
  return layout.grid_cols() > layout.grid_rows() ? WgOrder::ColumnMajor : WgOrder::RowMajor;
}

std::vector<OutputChunk> chunk_outputs(std::uint64_t c, const GemmShape& shape,
                                       const GemmConfig& tiles, std::int64_t chunks,
                                       ElementType out_element, OutputOp op, std::uint32_t flags) {
  const TiledLayout layout(shape.m, shape.n, tiles.tile_m, tiles.tile_n);
  const ChunkSplit split(layout.grid_rows(), chunks);
  std::vector<OutputChunk> outputs;
  for (std::int64_t chunk = 0; chunk < chunks; ++chunk) {
    // A band of whole tile rows is contiguous in the tile-contiguous layout.
    const std::int64_t first = layout.tile_offset(split.first_tile_row(chunk), 0);
    outputs.push_back({c + bytes_of(out_element, first), op, flags});
  }
  return outputs;
}

GroupGemmPlan plan_group_gemm(const SystemConfig& config, const GemmShape& shape,
                              ElementType element, ElementType out_element) {
  GroupGemmPlan plan;
  plan.shape = shape;
  for (int g = 0; g < config.gpus; ++g) {
    GpuGemm gpu;
    gpu.buffers =
        plan_buffers(hbm_base(config, g), shape, bytes_of(element, 1), bytes_of(out_element, 1));
    gpu.launch.shape = shape;
    gpu.launch.tiles = config.gemm;
    gpu.launch.order = raster_order(config.gemm, shape);
    gpu.launch.element = element;
    gpu.launch.out_element = out_element;
    gpu.launch.dispatcher = mmio_block(config, g, mmio_map::kDispatcher);
    gpu.launch.a = gpu.buffers.a;
    gpu.launch.b = gpu.buffers.b;
    gpu.launch.outputs = single_output(gpu.buffers.c);
    gpu.launch.label = "gemm";
    plan.gpus.push_back(gpu);
  }
  return plan;
}

std::vector<Program> GroupGemmPlan::programs() const {
  std::vector<Program> list;
  for (const auto& gpu : gpus) list.push_back(gemm_program(gpu.launch));
  return list;
}

}  // namespace t3
