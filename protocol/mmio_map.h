// Where each register block sits in a GPU's MMIO window. Header-only plain constants, so the
// workload layer can address blocks without linking the model.
#pragma once

#include <cstdint>

namespace t3::mmio_map {

inline constexpr std::uint64_t kDeviceInfo = 0x0000;
inline constexpr std::uint64_t kDispatcher = 0x1000;
inline constexpr std::uint64_t kTracker = 0x2000;
inline constexpr std::uint64_t kDma = 0x3000;
inline constexpr std::uint64_t kBlockSize = 0x1000;

}  // namespace t3::mmio_map
