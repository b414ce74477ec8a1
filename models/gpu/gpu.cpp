#include "models/gpu/gpu.h"

namespace t3 {

namespace {
sc_core::sc_time ns(double value) {
  return sc_core::sc_time(value, sc_core::SC_NS);
}
}  // namespace

Gpu::Gpu(sc_core::sc_module_name name, int index, const SystemConfig& config, const AddressMap& map)
    : sc_module(name),
      router("router", map, ns(config.router.latency_ns)),
      memory("memory", config.hbm, config.sim.mode, map.hbm_base(index)),
      mmio("mmio", map.mmio_base(index), map.mmio_size()),
      device_info("device_info", ns(config.mmio.latency_ns), index, static_cast<int>(config.gpus),
                  map.hbm_base(index)),
      index_(index) {
  // Port order is the contract of kMemoryPort / kMmioPort: bind these before any link.
  router.out.bind(memory.socket);
  router.out.bind(mmio.socket);
  router.set_route(index, Window::Hbm, kMemoryPort);
  router.set_route(index, Window::Mmio, kMmioPort);
  mmio.add_region("device_info", kDeviceInfoOffset, kRegisterBlockSize);
  mmio.out.bind(device_info.socket);
}

}  // namespace t3
