// One GPU's netlist: router, memory controller with HBM, and the MMIO window with its register
// blocks. Link ports are the router's out ports from kFirstLinkPort on, bound by the system.
// Initiators (host, SMs, DMA engine, traffic generators) bind to router.in.
#pragma once

#include <cstdint>

#include <systemc>

#include "config/system_config.h"
#include "models/gpu/device_info.h"
#include "models/hbm/memory_controller.h"
#include "tlm_interconnect/address_map.h"
#include "tlm_interconnect/mmio_bus.h"
#include "tlm_interconnect/router.h"

namespace t3 {

class Gpu : public sc_core::sc_module {
 public:
  static constexpr int kMemoryPort = 0;
  static constexpr int kMmioPort = 1;
  static constexpr int kFirstLinkPort = 2;

  // Offsets of the register blocks inside the MMIO window (docs/registers.md).
  static constexpr std::uint64_t kDeviceInfoOffset = 0x0000;
  static constexpr std::uint64_t kRegisterBlockSize = 0x1000;

  Gpu(sc_core::sc_module_name name, int index, const SystemConfig& config, const AddressMap& map);

  int index() const { return index_; }

  Router router;
  MemoryController memory;
  MmioBus mmio;
  DeviceInfo device_info;

 private:
  int index_;
};

}  // namespace t3
