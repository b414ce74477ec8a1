#include "workloads/gemm_plan.h"

#include "models/gpu/mmio_map.h"

namespace t3 {

std::uint64_t hbm_base(const SystemConfig& config, int gpu) {
  return config.address_map.hbm_base +
         static_cast<std::uint64_t>(gpu) * config.address_map.hbm_stride;
}

std::uint64_t mmio_block(const SystemConfig& config, int gpu, std::uint64_t block_offset) {
  return config.address_map.mmio_base +
         static_cast<std::uint64_t>(gpu) * config.address_map.mmio_stride + block_offset;
}

GroupGemmPlan plan_group_gemm(const SystemConfig& config, const GemmShape& shape,
                              ElementCode element, ElementCode out_element) {
  GroupGemmPlan plan;
  plan.shape = shape;
  for (int g = 0; g < config.gpus; ++g) {
    GpuGemm gpu;
    gpu.buffers =
        plan_buffers(hbm_base(config, g), shape, bytes_of(element, 1), bytes_of(out_element, 1));
    gpu.launch.shape = shape;
    gpu.launch.tiles = config.gemm;
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
