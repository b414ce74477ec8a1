#include "models/gpu/device_info.h"

#include "t3sim_version.h"

namespace t3 {

DeviceInfo::DeviceInfo(sc_core::sc_module_name name, sc_core::sc_time latency, int gpu, int gpus,
                       std::uint64_t hbm_base)
    : RegisterBlock(name, latency) {
  const auto constant = [](std::uint32_t value) { return [value] { return value; }; };
  add_register(kId, "ID", "constant 0x54335349 (\"T3SI\")", constant(kMagic));
  add_register(kVersion, "VERSION", "model version: major << 16 | minor << 8 | patch",
               constant(kT3simVersion));
  add_register(kGpuIndex, "GPU_INDEX", "this GPU's index in the group",
               constant(static_cast<std::uint32_t>(gpu)));
  add_register(kGpuCount, "GPU_COUNT", "GPUs in the group",
               constant(static_cast<std::uint32_t>(gpus)));
  add_register(kHbmBaseLow, "HBM_BASE_LO", "bits 31:0 of this GPU's HBM window base",
               constant(static_cast<std::uint32_t>(hbm_base)));
  add_register(kHbmBaseHigh, "HBM_BASE_HI", "bits 63:32 of this GPU's HBM window base",
               constant(static_cast<std::uint32_t>(hbm_base >> 32)));
  add_register(
      kScratch, "SCRATCH", "read/write, no effect; resets to 0", [this] { return scratch_; },
      [this](std::uint32_t value) { scratch_ = value; });
}

}  // namespace t3
