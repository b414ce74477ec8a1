// Read-only identification registers of a GPU, plus one scratch register for bring-up tests.
#pragma once

#include <cstdint>

#include "tlm_interconnect/register_block.h"

namespace t3 {

class DeviceInfo : public RegisterBlock {
 public:
  // Register offsets, one line a register (alike in shape with every register map's).
  static constexpr std::uint32_t kMagic = 0x54335349;  // "T3SI"
  static constexpr std::uint64_t kId = 0x00;
  static constexpr std::uint64_t kVersion = 0x04;
  static constexpr std::uint64_t kGpuIndex = 0x08;
  static constexpr std::uint64_t kGpuCount = 0x0c;
  static constexpr std::uint64_t kHbmBaseLow = 0x10;
  static constexpr std::uint64_t kHbmBaseHigh = 0x14;
  static constexpr std::uint64_t kScratch = 0x18;

  DeviceInfo(sc_core::sc_module_name name, sc_core::sc_time latency, int gpu, int gpus,
             std::uint64_t hbm_base);

 private:
  std::uint32_t scratch_ = 0;
};

}  // namespace t3
