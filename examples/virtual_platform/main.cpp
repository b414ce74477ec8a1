// A virtual platform in miniature (docs/integration.md walks through it). The integrator's own
// CPU model drives t3sim blocks through plain TLM-2.0 sockets and the register maps of
// docs/registers.md: a memory controller in functional mode watched by a tracker that triggers a
// DMA engine, a second memory controller standing for the next GPU's HBM, t3sim's router as the
// platform bus and an MMIO bus in front of the two register blocks. The CPU programs a tracker
// region and a DMA doorbell descriptor, stores tagged tiles as the "producer", waits for the DMA
// engine to drain and checks what arrived. Exit status 0 and a PASS line on success.
#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

#include <tlm_utils/simple_initiator_socket.h>
#include <systemc>
#include <tlm>

#include "config/config_io.h"
#include "models/dma/dma_engine.h"
#include "protocol/mmio_map.h"
#include "models/hbm/memory_controller.h"
#include "models/tracker/tracker.h"
#include "tlm_interconnect/address_map.h"
#include "tlm_interconnect/mmio_bus.h"
#include "tlm_interconnect/payload.h"
#include "tlm_interconnect/router.h"

using sc_core::SC_NS;
using sc_core::sc_time;

// The integrator's CPU: a loosely-timed initiator with one simple_initiator_socket.
class Cpu : public sc_core::sc_module {
 public:
  tlm_utils::simple_initiator_socket<Cpu> socket{"socket"};
  bool passed = false;

  SC_HAS_PROCESS(Cpu);
  Cpu(sc_core::sc_module_name name, const t3::AddressMap& map) : sc_module(name), map_(map) {
    SC_THREAD(run);
  }

 private:
  static constexpr int kTiles = 4;
  static constexpr std::uint32_t kTileFloats = 256;  // 1 KiB tiles
  static constexpr std::uint32_t kTileBytes = kTileFloats * 4;
  static constexpr std::uint32_t kVectorFloats = 64;  // the doorbell's update-add operand

  // One blocking access. Routers and register blocks add their latency to `delay` and return;
  // the memory controller waits inside b_transport and hands back a zero delay. Either way the
  // CPU is in sync again once it has waited the delay it got back.
  bool transport(tlm::tlm_generic_payload& payload) {
    sc_time delay = sc_core::SC_ZERO_TIME;
    socket->b_transport(payload, delay);
    wait(delay);
    if (payload.is_response_ok()) return true;
    std::cout << "cpu: " << payload.get_response_string() << " at 0x" << std::hex
              << payload.get_address() << std::dec << "\n";
    return false;
  }

  // Plain TLM payloads, no t3 extension: targets treat them as compute reads and writes.
  bool access(tlm::tlm_command command, std::uint64_t address, void* data, unsigned bytes) {
    tlm::tlm_generic_payload payload;
    payload.set_command(command);
    payload.set_address(address);
    payload.set_data_ptr(static_cast<unsigned char*>(data));
    payload.set_data_length(bytes);
    payload.set_streaming_width(bytes);
    return transport(payload);
  }
  bool write32(std::uint64_t address, std::uint32_t value) {
    return access(tlm::TLM_WRITE_COMMAND, address, &value, 4);
  }
  bool write64(std::uint64_t address, std::uint64_t value) {  // one access, two registers
    return access(tlm::TLM_WRITE_COMMAND, address, &value, 8);
  }
  std::uint32_t read32(std::uint64_t address) {
    std::uint32_t value = 0;
    access(tlm::TLM_READ_COMMAND, address, &value, 4);
    return value;
  }
  std::vector<float> load(std::uint64_t address, std::uint32_t floats) {
    std::vector<float> values(floats);
    access(tlm::TLM_READ_COMMAND, address, values.data(), floats * 4);
    return values;
  }

  // A producer's output store: the t3 extension carries the tracking tag the tracker counts.
  bool store(std::uint64_t address, std::vector<float> values, std::uint32_t tag) {
    t3::T3Extension extension;
    extension.op = t3::Op::Write;
    extension.tag = tag;
    extension.cache_hint = t3::CacheHint::Uncached;
    tlm::tlm_generic_payload payload;
    payload.set_address(address);
    payload.set_data_ptr(reinterpret_cast<unsigned char*>(values.data()));
    payload.set_data_length(static_cast<unsigned>(values.size() * 4));
    payload.set_streaming_width(static_cast<unsigned>(values.size() * 4));
    t3::T3Extension::set(payload, extension);  // attaches a copy, sets TLM_WRITE_COMMAND
    return transport(payload);                 // the payload deletes its copy when destroyed
  }

  static std::vector<float> tile(int t) {
    std::vector<float> values(kTileFloats);
    for (std::uint32_t i = 0; i < kTileFloats; ++i) values[i] = 1000.0f * t + i;
    return values;
  }

  void run() {
    namespace tr = t3::tracker;
    namespace dma = t3::dma;
    const std::uint64_t trk = map_.mmio_base(0) + t3::mmio_map::kTracker;
    const std::uint64_t dmr = map_.mmio_base(0) + t3::mmio_map::kDma;
    const std::uint64_t output = map_.hbm_base(0) + 0x100000;     // the producer's tiles
    const std::uint64_t forwarded = map_.hbm_base(1) + 0x100000;  // where fired tiles go
    const std::uint64_t operand = map_.hbm_base(0);               // doorbell source
    const std::uint64_t sum = map_.hbm_base(1);                   // doorbell destination
    bool ok = true;

    // 1. Tracker region 0 covers the output; a tag (tile) completes after one tile's bytes, and
    //    the DMA engine then stores the tile at `forwarded` + its offset in the region.
    ok &= write64(trk + tr::region_register(0, tr::kBaseLow), output);
    ok &= write64(trk + tr::region_register(0, tr::kSizeLow), kTiles * kTileBytes);
    ok &= write32(trk + tr::region_register(0, tr::kThreshold), kTileBytes);
    ok &= write64(trk + tr::region_register(0, tr::kDmaDstLow), forwarded);
    ok &= write32(trk + tr::region_register(0, tr::kDmaOp), tr::kOpStore);
    ok &= write32(trk + tr::region_register(0, tr::kElement), 0);  // fp32
    ok &= write32(trk + tr::region_register(0, tr::kControl), tr::kEnable);
    ok &= read32(trk + tr::region_register(0, tr::kControl)) == tr::kEnable;  // 0: refused

    // 2. DMA descriptor 0: update-add 64 floats of `operand` onto `sum` (near-memory compute).
    std::vector<float> ones(kVectorFloats, 1.0f), base(kVectorFloats, 41.0f);
    ok &= access(tlm::TLM_WRITE_COMMAND, operand, ones.data(), kVectorFloats * 4);
    ok &= access(tlm::TLM_WRITE_COMMAND, sum, base.data(), kVectorFloats * 4);
    ok &= write64(dmr + dma::descriptor_register(0, dma::kSrcLow), operand);
    ok &= write64(dmr + dma::descriptor_register(0, dma::kDstLow), sum);
    ok &= write64(dmr + dma::descriptor_register(0, dma::kSizeLow), kVectorFloats * 4);
    ok &= write32(dmr + dma::descriptor_register(0, dma::kOp), dma::kOpUpdate);
    ok &= write32(dmr + dma::descriptor_register(0, dma::kElement), 0);  // fp32
    ok &= write32(dmr + dma::descriptor_register(0, dma::kDoorbell), 1);

    // 3. The producer stores its tiles, each tagged with its tile number; each one fires.
    for (int t = 0; t < kTiles; ++t) ok &= store(output + t * kTileBytes, tile(t), t);

    // 4. Wait for the engine: idle, with the doorbell and the four tiles done.
    for (int poll = 0; poll < 1000; ++poll) {
      if (read32(dmr + dma::kStatus) == 0 && read32(dmr + dma::kCompleted) == kTiles + 1) break;
      wait(100, SC_NS);
    }

    // 5. Check what arrived, through the same bus.
    const std::uint32_t fired = read32(trk + tr::kFired);
    const std::uint32_t state = read32(dmr + dma::descriptor_register(0, dma::kState));
    const std::uint32_t errors = read32(trk + tr::kErrors) + read32(dmr + dma::kErrors);
    bool data_ok = load(sum, kVectorFloats) == std::vector<float>(kVectorFloats, 42.0f);
    for (int t = 0; t < kTiles; ++t)
      data_ok &= load(forwarded + t * kTileBytes, kTileFloats) == tile(t);

    // A target that cannot honour an op says so: a register block asked to Update.
    t3::T3Extension update;
    update.op = t3::Op::Update;
    std::uint32_t word = 0;
    tlm::tlm_generic_payload payload;
    payload.set_address(trk + tr::kEntries);
    payload.set_data_ptr(reinterpret_cast<unsigned char*>(&word));
    payload.set_data_length(4);
    payload.set_streaming_width(4);
    t3::T3Extension::set(payload, update);
    sc_time delay = sc_core::SC_ZERO_TIME;
    socket->b_transport(payload, delay);
    wait(delay);
    const bool refused = payload.get_response_status() == tlm::TLM_COMMAND_ERROR_RESPONSE;

    passed = ok && fired == kTiles && state == dma::kStateDone && errors == 0 && data_ok && refused;
    std::cout << "virtual_platform: tracker fired " << fired << " of " << kTiles
              << " tiles, doorbell state " << state << ", errors " << errors << ", data "
              << (data_ok ? "matches" : "differs") << ", update to a register "
              << (refused ? "refused" : "accepted") << ", done at "
              << sc_core::sc_time_stamp().to_seconds() * 1e9 << " ns\n"
              << "virtual_platform: " << (passed ? "PASS" : "FAIL") << "\n";
  }

  const t3::AddressMap& map_;
};

// The platform: t3sim blocks bound the way models/gpu/gpu.cpp binds them, minus the rest of a GPU.
struct Platform : sc_core::sc_module {
  Cpu cpu;
  t3::Router bus;             // address decode over the global map
  t3::MemoryController hbm0;  // GPU 0's HBM, watched by the tracker
  t3::MemoryController hbm1;  // GPU 1's HBM: where the DMA engine sends data
  t3::MmioBus mmio;           // GPU 0's MMIO window
  t3::Tracker tracker;
  t3::DmaEngine dma;

  Platform(sc_core::sc_module_name name, const t3::SystemConfig& config, const t3::AddressMap& map)
      : sc_module(name),
        cpu("cpu", map),
        bus("bus", map, sc_time(config.router.latency_ns, SC_NS)),
        hbm0("hbm0", config.hbm, config.sim.mode, map.hbm_base(0)),
        hbm1("hbm1", config.hbm, config.sim.mode, map.hbm_base(1)),
        mmio("mmio", map.mmio_base(0), map.mmio_size()),
        tracker("tracker", config.tracker, sc_time(config.mmio.latency_ns, SC_NS), 0),
        dma("dma", config.dma, sc_time(config.mmio.latency_ns, SC_NS), 0) {
    cpu.socket.bind(bus.in);
    dma.out.bind(bus.in);
    bus.out.bind(hbm0.socket);  // port 0
    bus.out.bind(mmio.in);      // port 1
    bus.out.bind(hbm1.socket);  // port 2
    bus.set_route(0, t3::Window::Hbm, 0);
    bus.set_route(0, t3::Window::Mmio, 1);
    bus.set_route(1, t3::Window::Hbm, 2);
    mmio.add_region("tracker", t3::mmio_map::kTracker, t3::mmio_map::kBlockSize);
    mmio.out.bind(tracker.socket);
    mmio.add_region("dma", t3::mmio_map::kDma, t3::mmio_map::kBlockSize);
    mmio.out.bind(dma.socket);
    hbm0.watch.bind(tracker.watch_export);  // the tracker sees tagged stores as they are applied
    tracker.dma.bind(dma.trigger_export);   // and fires the DMA engine
  }
};

int sc_main(int, char*[]) {
  t3::SystemConfig config = t3::load_system("t3-paper");  // figures for HBM, tracker, DMA, MMIO
  config.sim.mode = t3::SimMode::Functional;              // memory keeps real data
  const t3::AddressMap map(config.address_map, 2, config.hbm.capacity_bytes);
  Platform platform("platform", config, map);
  sc_core::sc_start();
  return platform.cpu.passed ? 0 : 1;
}
