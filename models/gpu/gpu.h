// One GPU's netlist: SMs and their dispatcher, router, memory-side L2, memory controller with
// HBM, the tracker watching the controller and the DMA engine it triggers, and the MMIO window
// with their register blocks. Link ports are the router's out ports from
// kFirstLinkPort on, bound by the system. Initiators outside the GPU (the host, traffic
// generators) bind to router.in; the dispatcher's interrupts are the `interrupt` signals.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <nlohmann/json.hpp>
#include <systemc>

#include "config/system_config.h"
#include "models/dma/dma_engine.h"
#include "models/gpu/device_info.h"
#include "models/hbm/memory_controller.h"
#include "models/l2/l2_cache.h"
#include "models/sm/dispatcher.h"
#include "models/sm/sm.h"
#include "models/tracker/tracker.h"
#include "protocol/mmio_map.h"
#include "protocol/to_size.h"
#include "tlm_interconnect/address_map.h"
#include "tlm_interconnect/memory_tap.h"
#include "tlm_interconnect/mmio_bus.h"
#include "tlm_interconnect/router.h"

namespace t3 {

class Gpu : public sc_core::sc_module {
 public:
  static constexpr int kMemoryPort = 0;
  static constexpr int kMmioPort = 1;
  static constexpr int kFirstLinkPort = 2;

  // Offsets of the register blocks inside the MMIO window (docs/registers.md).
  static constexpr std::uint64_t kDeviceInfoOffset = mmio_map::kDeviceInfo;
  static constexpr std::uint64_t kDispatcherOffset = mmio_map::kDispatcher;
  static constexpr std::uint64_t kRegisterBlockSize = mmio_map::kBlockSize;

  Gpu(sc_core::sc_module_name name, int index, const SystemConfig& config, const AddressMap& map);

  int index() const { return index_; }
  Sm& sm(int i) { return *sms_.at(to_size(i)); }
  const Sm& sm(int i) const { return *sms_.at(to_size(i)); }
  int sms() const { return static_cast<int>(sms_.size()); }

  // Statistics of every block of this GPU.
  nlohmann::json report() const;
  // What this GPU still holds at the end of a run (empty if nothing): a deadlock if not empty.
  std::string pending_work() const;
  // Rises whenever useful work completes in this GPU (TpGroup::progress).
  std::uint64_t progress() const;

  Router router;
  L2Cache l2;
  MemoryTap memory_tap;  // l2 -> memory_tap.in, memory_tap.out -> memory
  MemoryController memory;
  MmioBus mmio;
  DeviceInfo device_info;
  Dispatcher dispatcher;
  Tracker tracker;
  DmaEngine dma;
  sc_core::sc_vector<sc_core::sc_signal<bool>> interrupt;  // dispatcher -> host, one per queue

 private:
  int index_;
  std::vector<std::unique_ptr<Sm>> sms_;
};

}  // namespace t3
