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
      l2("l2", config.l2, config.sim.mode, map.hbm_base(index), map.hbm_size(),
         static_cast<std::uint16_t>(index)),
      memory_tap("memory_tap", index, map.hbm_base(index)),
      memory("memory", config.hbm, config.sim.mode, map.hbm_base(index)),
      mmio("mmio", map.mmio_base(index), map.mmio_size()),
      device_info("device_info", ns(config.mmio.latency_ns), index, static_cast<int>(config.gpus),
                  map.hbm_base(index)),
      dispatcher("dispatcher", config.sm, map, index, ns(config.mmio.latency_ns)),
      tracker("tracker", config.tracker, ns(config.mmio.latency_ns), index),
      dma("dma", config.dma, ns(config.mmio.latency_ns), index),
      interrupt("interrupt", dispatcher::kQueues),
      index_(index) {
  // Port order is the contract of kMemoryPort / kMmioPort: bind these before any link. The L2 is
  // memory-side: every access to this HBM, local or from another GPU, passes it, so it is the
  // point of coherence and needs no protocol with other GPUs.
  router.out.bind(l2.in);
  l2.out.bind(memory_tap.in);  // the tap observes, in zero time, what the controller receives
  memory_tap.out.bind(memory.socket);
  router.out.bind(mmio.in);
  router.set_route(index, Window::Hbm, kMemoryPort);
  router.set_route(index, Window::Mmio, kMmioPort);
  mmio.add_region("device_info", kDeviceInfoOffset, kRegisterBlockSize);
  mmio.out.bind(device_info.socket);
  mmio.add_region("dispatcher", kDispatcherOffset, kRegisterBlockSize);
  mmio.out.bind(dispatcher.socket);
  mmio.add_region("tracker", mmio_map::kTracker, kRegisterBlockSize);
  mmio.out.bind(tracker.socket);
  mmio.add_region("dma", mmio_map::kDma, kRegisterBlockSize);
  mmio.out.bind(dma.socket);
  // The tracker sees every tagged write/update as the controller applies it, and fires the DMA
  // engine, which reaches any GPU's HBM through the router like any other initiator.
  memory.watch.bind(tracker.watch_export);
  tracker.dma.bind(dma.trigger_export);
  dma.out.bind(router.in);
  dispatcher.irq.bind(interrupt);
  for (int i = 0; i < config.sm.count; ++i) {
    sms_.push_back(std::make_unique<Sm>(("sm" + std::to_string(i)).c_str(), config.sm,
                                        config.sim.mode, index, i));
    sms_.back()->socket.bind(router.in);
    dispatcher.connect(*sms_.back());
  }
}

nlohmann::json Gpu::report() const {
  nlohmann::json sms = nlohmann::json::array();
  for (const auto& sm : sms_) sms.push_back(sm->report());
  return {{"gpu", index_},
          {"memory", memory.report()},
          {"l2", l2.report()},
          {"router", router.report()},
          {"tracker", tracker.report()},
          {"dma", dma.report()},
          {"sms", sms}};
}

std::string Gpu::pending_work() const {
  std::string stuck;
  const auto add = [&stuck](const std::string& what) {
    stuck += (stuck.empty() ? "" : "; ") + what;
  };
  if (const auto pending = memory.pending()) {
    add(std::string(memory.name()) + " holds " + std::to_string(pending) + " unfinished requests");
  }
  if (const auto pending = l2.pending()) {
    add(std::string(l2.name()) + " holds " + std::to_string(pending) + " unfinished accesses");
  }
  if (tracker.pending() != 0) add(tracker.describe_pending());
  if (const auto pending = dma.pending()) {
    add(std::string(dma.name()) + " holds " + std::to_string(pending) + " unfinished transfers");
  }
  if (dispatcher.status() == dispatcher::kRunning) {
    add(std::string(dispatcher.name()) + " is still running a kernel");
  }
  // Every busy slot of every SM can be hundreds of entries: the first few name the pattern.
  constexpr std::size_t kShownSlots = 4;
  std::size_t slots = 0;
  for (const auto& sm : sms_) {
    for (std::string& slot : sm->describe_pending()) {
      if (slots++ < kShownSlots) add(slot);
    }
  }
  if (slots > kShownSlots) {
    add("and " + std::to_string(slots - kShownSlots) + " more busy SM slots");
  }
  return stuck;
}

std::uint64_t Gpu::progress() const {
  std::uint64_t progress = 0;
  for (const auto& sm : sms_) progress += sm->progress();
  const DmaStats& moved = dma.stats();
  const TrackerStats& counted = tracker.stats();
  return progress + moved.pieces + moved.transfers + counted.counted_bytes + counted.fired;
}

}  // namespace t3
