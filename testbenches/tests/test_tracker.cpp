// Tracker and trigger/DMA engine: register maps through MMIO, the two-contribution fire with an
// NMC update carried to the next GPU, seeded perturbation (never early, exactly once), untracked
// tags, table-full back-pressure at the memory controller, and DMA doorbells, pacing and in-flight
// limit. Each case builds its own design and runs sc_start once (ctest runs every case in its own
// process).
#define SC_INCLUDE_DYNAMIC_PROCESSES
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include <tlm_utils/simple_initiator_socket.h>
#include <systemc>
#include <tlm>

#include "models/dma/dma_engine.h"
#include "models/hbm/memory_controller.h"
#include "models/tracker/tracker.h"
#include "protocol/hex.h"
#include "tlm_interconnect/address_map.h"
#include "tlm_interconnect/memory_events.h"
#include "tlm_interconnect/mmio_bus.h"
#include "tlm_interconnect/nvlink.h"
#include "tlm_interconnect/router.h"

using namespace t3;
using sc_core::SC_NS;
using sc_core::sc_time;
using sc_core::sc_time_stamp;
using sc_core::SC_ZERO_TIME;

namespace {

constexpr std::uint64_t kTrackerOffset = 0x2000;  // in each GPU's MMIO window
constexpr std::uint64_t kDmaOffset = 0x3000;

sc_time ns(double value) {
  return sc_time(value, SC_NS);
}

struct Setup {
  HbmConfig hbm;
  TrackerConfig tracker;
  DmaConfig dma;
  LinkConfig link;
  int gpus = 1;
  double router_ns = 2;
  double mmio_ns = 10;
};

Setup small_setup() {
  Setup s;
  s.hbm.model = HbmModel::Simple;  // DMA pacing is checked against this model's formula
  s.hbm.capacity_bytes = 1ull << 30;
  s.hbm.channels = 8;
  s.hbm.bandwidth_GBps = 400;
  s.hbm.latency_ns = 50;
  s.hbm.interleave_bytes = 256;
  s.dma.outstanding_bytes = 64 * 1024;  // 16 pieces of 4 KiB
  s.dma.in_flight = 2;
  s.dma.chunk_bytes = 4096;
  return s;
}

// A second watcher on the memory controller (bound before the tracker): records every tagged
// part as it is applied, so tests can compare fire times with applied times.
struct Recorder : sc_core::sc_module, MemoryWatchIf {
  struct Record {
    sc_time time;
    AppliedAccess access;
  };
  std::vector<Record> records;
  std::uint64_t admits = 0;
  sc_core::sc_event never;
  explicit Recorder(sc_core::sc_module_name name) : sc_module(name) {}
  bool admit(const AppliedAccess&) override {
    ++admits;
    return true;
  }
  void applied(const AppliedAccess& access) override {
    records.push_back({sc_time_stamp(), access});
  }
  const sc_core::sc_event& space_event() const override { return never; }
};

// A test initiator on a GPU's router: tagged accesses, MMIO registers, debug access.
struct Host : sc_core::sc_module {
  tlm_utils::simple_initiator_socket<Host> socket;
  int gpu;
  Host(sc_core::sc_module_name name, int g) : sc_module(name), socket("socket"), gpu(g) {}

  tlm::tlm_response_status access(Op op, std::uint64_t address, unsigned char* data, unsigned bytes,
                                  std::uint32_t tag = kNoTag, std::uint16_t origin = 0,
                                  sc_time delay = SC_ZERO_TIME) {
    T3Extension extension;
    extension.op = op;
    extension.traffic_class = TrafficClass::Compute;
    extension.origin = Origin{origin, 0};
    extension.unit_kind = UnitKind::TrafficGenerator;
    extension.tag = tag;
    extension.cache_hint = CacheHint::Uncached;
    tlm::tlm_generic_payload payload;
    payload.set_address(address);
    payload.set_data_ptr(data);
    payload.set_data_length(bytes);
    payload.set_streaming_width(bytes);
    payload.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    T3Extension::set(payload, extension);
    socket->b_transport(payload, delay);
    if (delay > SC_ZERO_TIME) wait(delay);
    return payload.get_response_status();
  }

  // A plain TLM register access of 4 or 8 bytes (no extension, as a CPU model would issue).
  tlm::tlm_response_status mmio(bool write, std::uint64_t address, std::uint64_t& value,
                                unsigned bytes = 4) {
    unsigned char data[8] = {};
    if (write) std::memcpy(data, &value, bytes);
    tlm::tlm_generic_payload payload;
    payload.set_command(write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
    payload.set_address(address);
    payload.set_data_ptr(data);
    payload.set_data_length(bytes);
    payload.set_streaming_width(bytes);
    payload.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    sc_time delay = SC_ZERO_TIME;
    socket->b_transport(payload, delay);
    if (delay > SC_ZERO_TIME) wait(delay);
    if (!write) {
      value = 0;
      std::memcpy(&value, data, bytes);
    }
    return payload.get_response_status();
  }
  void write32(std::uint64_t address, std::uint32_t value) {
    std::uint64_t v = value;
    REQUIRE(mmio(true, address, v) == tlm::TLM_OK_RESPONSE);
  }
  void write64(std::uint64_t address, std::uint64_t value) {
    REQUIRE(mmio(true, address, value, 8) == tlm::TLM_OK_RESPONSE);
  }
  std::uint32_t read32(std::uint64_t address) {
    std::uint64_t v = 0;
    REQUIRE(mmio(false, address, v) == tlm::TLM_OK_RESPONSE);
    return static_cast<std::uint32_t>(v);
  }
  std::uint64_t read64(std::uint64_t address) {
    std::uint64_t v = 0;
    REQUIRE(mmio(false, address, v, 8) == tlm::TLM_OK_RESPONSE);
    return v;
  }

  void debug(bool write, std::uint64_t address, void* data, std::size_t bytes) {
    tlm::tlm_generic_payload payload;
    payload.set_command(write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
    payload.set_address(address);
    payload.set_data_ptr(static_cast<unsigned char*>(data));
    payload.set_data_length(static_cast<unsigned>(bytes));
    payload.set_streaming_width(static_cast<unsigned>(bytes));
    REQUIRE(socket->transport_dbg(payload) == bytes);
  }
  std::vector<float> read_floats(std::uint64_t address, std::size_t count) {
    std::vector<float> v(count);
    debug(false, address, v.data(), count * 4);
    return v;
  }
};

// One GPU's worth: router (port 0 memory, 1 MMIO, 2 link), memory controller watched by a recorder
// and the tracker, the DMA engine on the router, MMIO bus with tracker and DMA registers, a host.
struct Node : sc_core::sc_module {
  Router router;
  MmioBus mmio;
  MemoryController mc;
  Recorder recorder;
  Tracker tracker;
  DmaEngine dma;
  Host host;
  int gpu;
  std::uint64_t mmio_base;

  Node(sc_core::sc_module_name name, const Setup& s, const AddressMap& map, int g)
      : sc_module(name),
        router("router", map, ns(s.router_ns)),
        mmio("mmio", map.mmio_base(g), map.mmio_size()),
        mc("mc", s.hbm, SimMode::Functional, map.hbm_base(g)),
        recorder("recorder"),
        tracker("tracker", s.tracker, ns(s.mmio_ns), g),
        dma("dma", s.dma, ns(s.mmio_ns), g),
        host("host", g),
        gpu(g),
        mmio_base(map.mmio_base(g)) {
    router.out.bind(mc.socket);
    router.out.bind(mmio.in);
    router.set_route(g, Window::Hbm, 0);
    router.set_route(g, Window::Mmio, 1);
    mmio.add_region("tracker", kTrackerOffset, tracker::kBlockBytes);
    mmio.out.bind(tracker.socket);
    mmio.add_region("dma", kDmaOffset, dma::kBlockBytes);
    mmio.out.bind(dma.socket);
    mc.watch.bind(recorder);  // first: it has seen a part before the tracker counts it
    mc.watch.bind(tracker.watch_export);
    tracker.dma.bind(dma.trigger_export);
    dma.out.bind(router.in);
    host.socket.bind(router.in);
  }

  std::uint64_t tracker_reg(std::uint64_t offset) const {
    return mmio_base + kTrackerOffset + offset;
  }
  std::uint64_t region_reg(int r, std::uint64_t offset) const {
    return tracker_reg(tracker::region_register(r, offset));
  }
  std::uint64_t dma_reg(std::uint64_t offset) const { return mmio_base + kDmaOffset + offset; }
  std::uint64_t desc_reg(int d, std::uint64_t offset) const {
    return dma_reg(dma::descriptor_register(d, offset));
  }

  // Host-side programming of tracker region r; checks that the enable took. GRID_COLS 0: every
  // tag completes at `threshold`.
  void program_region(int r, std::uint64_t base, std::uint64_t size, std::uint32_t threshold,
                      std::uint64_t destination, std::uint32_t op, std::uint32_t element = 0,
                      std::uint32_t grid_cols = 0, std::uint32_t edge_threshold = 0) {
    host.write64(region_reg(r, tracker::kBaseLow), base);
    host.write64(region_reg(r, tracker::kSizeLow), size);
    host.write32(region_reg(r, tracker::kThreshold), threshold);
    host.write32(region_reg(r, tracker::kGridCols), grid_cols);
    host.write32(region_reg(r, tracker::kEdgeThreshold), edge_threshold);
    host.write64(region_reg(r, tracker::kDmaDstLow), destination);
    host.write32(region_reg(r, tracker::kDmaOp), op);
    host.write32(region_reg(r, tracker::kElement), element);
    host.write32(region_reg(r, tracker::kControl), tracker::kEnable);
    REQUIRE(host.read32(region_reg(r, tracker::kControl)) == tracker::kEnable);
  }

  // Host-side doorbell of DMA descriptor d.
  void ring(int d, std::uint64_t source, std::uint64_t destination, std::uint64_t bytes,
            std::uint32_t op, std::uint32_t tag = kNoTag) {
    host.write64(desc_reg(d, dma::kSrcLow), source);
    host.write64(desc_reg(d, dma::kDstLow), destination);
    host.write64(desc_reg(d, dma::kSizeLow), bytes);
    host.write32(desc_reg(d, dma::kOp), op);
    host.write32(desc_reg(d, dma::kElement), 0);
    host.write32(desc_reg(d, dma::kTag), tag);
    host.write32(desc_reg(d, dma::kDoorbell), 1);
  }
};

struct Bench {
  Setup setup;
  AddressMap map;
  std::vector<std::unique_ptr<Node>> nodes;
  std::unique_ptr<NvLink> link;

  explicit Bench(const Setup& s) : setup(s), map(AddressMapConfig{}, s.gpus, s.hbm.capacity_bytes) {
    for (int g = 0; g < s.gpus; ++g) {
      nodes.push_back(std::make_unique<Node>(("gpu" + std::to_string(g)).c_str(), s, map, g));
    }
    if (s.gpus == 2) {
      link = std::make_unique<NvLink>("link", s.link);
      Node& a = *nodes[0];
      Node& b = *nodes[1];
      a.router.out.bind(link->from_a);
      link->to_a.bind(a.router.in);
      b.router.out.bind(link->from_b);
      link->to_b.bind(b.router.in);
      for (Window w : {Window::Hbm, Window::Mmio}) {
        a.router.set_route(1, w, 2);
        b.router.set_route(0, w, 2);
      }
    }
  }
  Node& gpu(int g) { return *nodes[static_cast<std::size_t>(g)]; }
  std::uint64_t hbm(int g, std::uint64_t offset) const { return map.hbm_base(g) + offset; }
};

void spawn(std::function<void()> body) {
  sc_core::sc_spawn(std::move(body));
}

std::vector<unsigned char> bytes_of(const std::vector<float>& values) {
  std::vector<unsigned char> data(values.size() * 4);
  std::memcpy(data.data(), values.data(), data.size());
  return data;
}

// Most transfers (or entries) alive at once, from [start, end) intervals; equal times close first.
template <typename Intervals>
int max_overlap(const Intervals& intervals) {
  std::vector<std::pair<sc_time, int>> edges;
  for (const auto& [start, end] : intervals) {
    edges.emplace_back(start, +1);
    edges.emplace_back(end, -1);
  }
  std::sort(edges.begin(), edges.end());  // at equal times -1 sorts before +1
  int now = 0, peak = 0;
  for (const auto& edge : edges) peak = std::max(peak, now += edge.second);
  return peak;
}

// The documented register maps (docs/registers.md), written out independently of the headers.
std::map<std::uint64_t, RegisterInfo> documented_tracker_map() {
  std::map<std::uint64_t, RegisterInfo> m;
  auto add = [&m](std::uint64_t offset, const std::string& name, bool writable) {
    m[offset] = RegisterInfo{name, "", writable};
  };
  add(0x000, "ENTRIES", false);
  add(0x004, "IN_USE", false);
  add(0x008, "FIRED", false);
  add(0x00c, "ERRORS", false);
  add(0x010, "RESET", true);
  add(0x014, "REGIONS", false);
  add(0x018, "MAX_IN_USE", false);
  add(0x01c, "REFUSED", false);
  add(0x020, "OVERCOUNT", false);
  add(0x024, "TAG_GROUP", true);
  for (int r = 0; r < 64; ++r) add(0x100 + 4 * r, "REGION_DONE_" + std::to_string(r), false);
  const char* fields[] = {"BASE_LO",   "BASE_HI",    "SIZE_LO",    "SIZE_HI",
                          "THRESHOLD", "DMA_DST_LO", "DMA_DST_HI", "DMA_OP",
                          "ELEMENT",   "CONTROL",    "GRID_COLS",  "EDGE_THRESHOLD"};
  for (int r = 0; r < 64; ++r) {
    for (int f = 0; f < 12; ++f) {
      add(0x400 + 0x30 * r + 4 * f, "REGION" + std::to_string(r) + "_" + fields[f], true);
    }
  }
  return m;
}

std::map<std::uint64_t, RegisterInfo> documented_dma_map() {
  std::map<std::uint64_t, RegisterInfo> m;
  auto add = [&m](std::uint64_t offset, const std::string& name, bool writable) {
    m[offset] = RegisterInfo{name, "", writable};
  };
  const char* globals[] = {"STATUS",   "QUEUED", "RUNNING",  "COMPLETED", "BYTES_LO",
                           "BYTES_HI", "ERRORS", "REJECTED", "IN_FLIGHT", "TRIGGERED"};
  for (int i = 0; i < 10; ++i) add(4 * i, globals[i], false);
  add(0x028, "CLEAR", true);
  const char* fields[] = {"SRC_LO",  "SRC_HI", "DST_LO",  "DST_HI", "SIZE_LO",
                          "SIZE_HI", "OP",     "ELEMENT", "TAG",    "DOORBELL"};
  for (int d = 0; d < 16; ++d) {
    for (int f = 0; f < 10; ++f) {
      add(0x100 + 0x40 * d + 4 * f, "DESC" + std::to_string(d) + "_" + fields[f], true);
    }
    add(0x100 + 0x40 * d + 0x28, "DESC" + std::to_string(d) + "_STATE", false);
  }
  return m;
}

void check_map(const std::map<std::uint64_t, RegisterInfo>& actual,
               const std::map<std::uint64_t, RegisterInfo>& documented) {
  CHECK(actual.size() == documented.size());
  for (const auto& [offset, info] : documented) {
    INFO("offset " << hex(offset) << " " << info.name);
    const auto found = actual.find(offset);
    REQUIRE(found != actual.end());
    CHECK(found->second.name == info.name);
    CHECK(found->second.writable == info.writable);
    CHECK(!found->second.doc.empty());
  }
}

// Registers with side effects on write, exercised separately from plain storage.
bool special(const std::string& name) {
  for (const char* s : {"RESET", "CONTROL", "DOORBELL", "CLEAR"}) {
    if (name.size() >= std::strlen(s) &&
        name.compare(name.size() - std::strlen(s), std::string::npos, s) == 0) {
      return true;
    }
  }
  return false;
}

// Every register of a block through the socket: reads answer OK; read-only ones refuse writes and
// keep their value; plain read/write ones read back what was written.
void exercise_registers(Host& host, std::uint64_t block,
                        const std::map<std::uint64_t, RegisterInfo>& map) {
  std::uint32_t pattern = 0x13572468u;
  for (const auto& [offset, info] : map) {
    INFO(info.name);
    std::uint64_t before = 0;
    REQUIRE(host.mmio(false, block + offset, before) == tlm::TLM_OK_RESPONSE);
    if (!info.writable) {
      std::uint64_t value = ~before & 0xffffffffu;
      CHECK(host.mmio(true, block + offset, value) == tlm::TLM_COMMAND_ERROR_RESPONSE);
      std::uint64_t after = 0;
      REQUIRE(host.mmio(false, block + offset, after) == tlm::TLM_OK_RESPONSE);
      CHECK(after == before);
    } else if (!special(info.name)) {
      pattern = pattern * 1103515245u + 12345u;
      std::uint64_t value = pattern;
      REQUIRE(host.mmio(true, block + offset, value) == tlm::TLM_OK_RESPONSE);
      std::uint64_t after = 0;
      REQUIRE(host.mmio(false, block + offset, after) == tlm::TLM_OK_RESPONSE);
      CHECK(after == pattern);
    }
  }
}

}  // namespace

TEST_CASE("tracker and DMA registers read and write through MMIO as documented",
          "[tracker][dma][registers]") {
  Setup s = small_setup();
  s.tracker.entries = 24;
  s.dma.in_flight = 3;
  Bench bench(s);
  Node& g = bench.gpu(0);
  check_map(g.tracker.register_map(), documented_tracker_map());
  check_map(g.dma.register_map(), documented_dma_map());
  bool finished = false;
  spawn([&] {
    Host& h = g.host;
    // Reset values and capacities.
    CHECK(h.read32(g.tracker_reg(0x000)) == 24);     // ENTRIES
    CHECK(h.read32(g.tracker_reg(0x014)) == 64);     // REGIONS
    CHECK(h.read32(g.dma_reg(0x020)) == 3);          // IN_FLIGHT
    CHECK(h.read32(g.desc_reg(5, 0x20)) == kNoTag);  // TAG resets to untracked
    CHECK(h.read32(g.dma_reg(0x000)) == 0);          // STATUS idle
    CHECK(h.read32(g.region_reg(7, 0x28)) == 0);     // GRID_COLS: every tag at THRESHOLD
    CHECK(h.read32(g.region_reg(7, 0x2c)) == 0);     // EDGE_THRESHOLD
    CHECK(h.read32(g.tracker_reg(0x024)) == 0);      // TAG_GROUP: one tile per entry
    exercise_registers(h, g.mmio_base + kTrackerOffset, g.tracker.register_map());
    exercise_registers(h, g.mmio_base + kDmaOffset, g.dma.register_map());

    // 64-bit accesses cover a _LO/_HI pair.
    h.write64(g.region_reg(3, 0x00), 0x0123456789abcdefull);
    CHECK(h.read64(g.region_reg(3, 0x00)) == 0x0123456789abcdefull);
    CHECK(h.read32(g.region_reg(3, 0x04)) == 0x01234567u);
    // Unmapped offsets and odd sizes are refused.
    std::uint64_t v = 0;
    CHECK(h.mmio(false, g.tracker_reg(0x3fc), v) == tlm::TLM_ADDRESS_ERROR_RESPONSE);
    CHECK(h.mmio(false, g.dma_reg(0x02c), v) == tlm::TLM_ADDRESS_ERROR_RESPONSE);
    CHECK(h.mmio(false, g.tracker_reg(0x000), v, 2) == tlm::TLM_BURST_ERROR_RESPONSE);

    // CONTROL: a valid region enables; an invalid one (THRESHOLD 0, or DMA_OP 3) stays off.
    g.program_region(0, bench.hbm(0, 0x10000), 0x4000, 0x2000, bench.hbm(0, 0x80000),
                     tracker::kOpUpdate);
    h.write64(g.region_reg(1, 0x00), bench.hbm(0, 0x20000));
    h.write64(g.region_reg(1, 0x08), 0x1000);
    h.write32(g.region_reg(1, 0x10), 0);
    h.write32(g.region_reg(1, 0x1c), 0);
    h.write32(g.region_reg(1, 0x20), 0);
    h.write32(g.region_reg(1, 0x24), 1);
    CHECK(h.read32(g.region_reg(1, 0x24)) == 0);
    h.write32(g.region_reg(1, 0x10), 0x1000);
    h.write32(g.region_reg(1, 0x1c), 3);
    h.write32(g.region_reg(1, 0x24), 1);
    CHECK(h.read32(g.region_reg(1, 0x24)) == 0);
    h.write32(g.region_reg(1, 0x1c), 0);
    h.write32(g.region_reg(1, 0x28), 5);  // GRID_COLS set, EDGE_THRESHOLD 0: refused
    h.write32(g.region_reg(1, 0x2c), 0);
    h.write32(g.region_reg(1, 0x24), 1);
    CHECK(h.read32(g.region_reg(1, 0x24)) == 0);
    h.write32(g.region_reg(1, 0x2c), 0x800);
    h.write32(g.region_reg(1, 0x24), 1);
    CHECK(h.read32(g.region_reg(1, 0x24)) == 1);
    CHECK(h.read32(g.region_reg(1, 0x28)) == 5);
    CHECK(h.read32(g.region_reg(1, 0x2c)) == 0x800);
    h.write32(g.region_reg(1, 0x24), 0);  // disable
    h.write32(g.region_reg(1, 0x28), 0);  // GRID_COLS 0 ignores EDGE_THRESHOLD, even 0
    h.write32(g.region_reg(1, 0x2c), 0);
    h.write32(g.region_reg(1, 0x24), 1);
    CHECK(h.read32(g.region_reg(1, 0x24)) == 1);
    h.write32(g.region_reg(1, 0x24), 0);  // disable
    CHECK(h.read32(g.region_reg(1, 0x24)) == 0);
    CHECK(h.read32(g.tracker_reg(0x010)) == 0);  // RESET reads 0
    h.write32(g.tracker_reg(0x010), 1);
    CHECK(h.read32(g.region_reg(0, 0x24)) == 1);  // reset keeps programming

    // DOORBELL on an invalid descriptor (SIZE 0): refused, STATE failed, REJECTED counts it.
    h.write64(g.desc_reg(2, 0x10), 0);
    h.write32(g.desc_reg(2, 0x18), 1);
    h.write32(g.desc_reg(2, 0x1c), 0);
    h.write32(g.desc_reg(2, 0x24), 1);
    CHECK(h.read32(g.desc_reg(2, 0x24)) == 0);  // DOORBELL reads 0
    CHECK(h.read32(g.desc_reg(2, 0x28)) == dma::kStateFailed);
    CHECK(h.read32(g.dma_reg(0x01c)) == 1);  // REJECTED
    CHECK(h.read32(g.dma_reg(0x000)) == 0);  // nothing queued
    h.write32(g.dma_reg(0x028), 1);          // CLEAR
    CHECK(h.read32(g.dma_reg(0x01c)) == 0);
    CHECK(h.read32(g.dma_reg(0x028)) == 0);
    finished = true;
  });
  sc_core::sc_start();
  CHECK(finished);
  CHECK(g.dma.pending() == 0);
}

TEST_CASE(
    "tracker fires a tile once after the local and the incoming update and the DMA carries "
    "the sum to the next GPU",
    "[tracker][dma]") {
  Setup s = small_setup();
  s.gpus = 2;
  Bench bench(s);
  Node& g0 = bench.gpu(0);
  Node& g1 = bench.gpu(1);
  const std::uint32_t tile = 4096;  // 1024 fp32
  const std::size_t n = tile / 4;
  const std::uint32_t tag = 42;
  const std::uint64_t region = bench.hbm(0, 0x10000);       // GPU0's output chunk, 4 tiles
  const std::uint64_t destination = bench.hbm(1, 0x40000);  // GPU1's buffer for the chunk
  const std::uint64_t tile_at = region + 2 * tile;          // the tile both contribute to
  std::vector<float> a(n), b(n), d(n);
  for (std::size_t i = 0; i < n; ++i) {
    a[i] = static_cast<float>(i % 5 + 1);
    b[i] = static_cast<float>(2 * (i % 3)) - 1;
    d[i] = static_cast<float>(i % 7);
  }
  bool programmed = false;
  sc_core::sc_event ready;
  sc_time local_done, incoming_done;
  spawn([&] {
    // GPU0: fire after 2 x tile bytes, update GPU1's buffer. GPU1: count the incoming tile.
    g0.program_region(0, region, 4 * tile, 2 * tile, destination, tracker::kOpUpdate);
    g1.program_region(0, destination, 4 * tile, tile, 0, tracker::kOpNone);
    g1.host.debug(true, destination + 2 * tile, d.data(), tile);
    programmed = true;
    ready.notify();
    auto data = bytes_of(a);  // GPU0's own partial sum, a local tagged update
    REQUIRE(g0.host.access(Op::Update, tile_at, data.data(), tile, tag, 0) == tlm::TLM_OK_RESPONSE);
    local_done = sc_time_stamp();
  });
  spawn([&] {
    if (!programmed) wait(ready);
    wait(ns(100));
    auto data = bytes_of(b);  // GPU1's partial sum, arriving over the link as an update
    REQUIRE(g1.host.access(Op::Update, tile_at, data.data(), tile, tag, 1) == tlm::TLM_OK_RESPONSE);
    incoming_done = sc_time_stamp();
  });
  sc_core::sc_start();

  // GPU0 fired once, after both contributions were applied.
  REQUIRE(g0.tracker.fires().size() == 1);
  const TrackerFire& fire = g0.tracker.fires()[0];
  CHECK(fire.tag == tag);
  CHECK(fire.region == 0);
  CHECK(fire.source == tile_at);
  CHECK(fire.bytes == tile);
  CHECK(fire.counted == 2 * tile);
  CHECK(fire.destination == destination + 2 * tile);
  sc_time last_local, last_incoming;
  std::uint64_t local_bytes = 0, incoming_bytes = 0;
  for (const auto& r : g0.recorder.records) {
    REQUIRE(r.access.tag == tag);
    (r.access.origin.gpu == 0 ? last_local : last_incoming) =
        std::max(r.access.origin.gpu == 0 ? last_local : last_incoming, r.time);
    (r.access.origin.gpu == 0 ? local_bytes : incoming_bytes) += r.access.bytes;
  }
  CHECK(local_bytes == tile);
  CHECK(incoming_bytes == tile);
  CHECK(last_incoming > last_local);  // the incoming update crossed the link, so came later
  CHECK(fire.time >= last_local);
  CHECK(fire.time >= last_incoming);
  CHECK(g0.tracker.stats().region_fired[0] == 1);
  CHECK(g0.tracker.pending() == 0);
  CHECK(g0.tracker.errors().empty());

  // The DMA moved the reduced tile to GPU1 as an update carrying the tag.
  REQUIRE(g0.dma.transfers().size() == 1);
  const DmaTransfer& t = g0.dma.transfers()[0];
  CHECK(t.op == Op::Update);
  CHECK(t.tag == tag);
  CHECK(t.source == tile_at);
  CHECK(t.destination == destination + 2 * tile);
  CHECK(t.bytes == tile);
  CHECK(!t.doorbell);
  CHECK(t.start >= fire.time);
  CHECK(!t.error);
  CHECK(g0.dma.stats().bytes_updated == tile);
  // GPU1 saw the update as Communication traffic from GPU0's DMA and its tracker counted it.
  REQUIRE(!g1.recorder.records.empty());
  for (const auto& r : g1.recorder.records) {
    CHECK(r.access.unit_kind == UnitKind::Dma);
    CHECK(r.access.traffic_class == TrafficClass::Communication);
    CHECK(r.access.origin.gpu == 0);
    CHECK(r.access.op == Op::Update);
    CHECK(r.time >= t.start);
  }
  REQUIRE(g1.tracker.fires().size() == 1);
  CHECK(g1.tracker.fires()[0].tag == tag);
  CHECK(g1.tracker.fires()[0].counted == tile);
  CHECK(g1.mc.stats().bytes[static_cast<int>(Op::Update)][1] == tile);  // communication

  // Values: GPU0 holds a + b; GPU1 holds d + (a + b).
  const std::vector<float> sum = g0.host.read_floats(tile_at, n);
  const std::vector<float> out = g1.host.read_floats(destination + 2 * tile, n);
  int wrong = 0;
  for (std::size_t i = 0; i < n; ++i) {
    wrong += sum[i] != a[i] + b[i];
    wrong += out[i] != d[i] + a[i] + b[i];
  }
  CHECK(wrong == 0);
  CHECK(g0.mc.pending() == 0);
  CHECK(g1.mc.pending() == 0);
  CHECK(g0.dma.pending() == 0);
  CHECK(g1.tracker.pending() == 0);
}

TEST_CASE("tracker never fires early under seeded perturbation and every tag fires exactly once",
          "[tracker][dma]") {
  Setup s = small_setup();
  Bench bench(s);
  Node& g = bench.gpu(0);
  constexpr int kTiles = 50, kThreads = 5;
  const std::uint32_t tile = 1024;  // 256 fp32
  const std::size_t n = tile / 4;
  const std::uint32_t threshold = 2 * tile;
  const std::uint64_t region = bench.hbm(0, 0x100000);
  const std::uint64_t destination = bench.hbm(0, 0x200000);
  auto tag_of = [](int t) { return static_cast<std::uint32_t>(1000 + t); };
  auto value = [](int t, int k, std::size_t i) {
    return static_cast<float>(static_cast<int>((t * 3 + i + k * 7) % 11) - 5);
  };

  // Each contribution (tile t, k = 0 local / 1 incoming) cut into 1-3 parts at random elements;
  // parts shuffled over the threads, each after a random pause and a random annotated delay.
  struct Part {
    int tile, k;
    std::size_t first, count;  // elements
    sc_time pause, delay;
  };
  std::mt19937_64 rng(0x7e3u);
  std::vector<Part> parts;
  for (int t = 0; t < kTiles; ++t) {
    for (int k = 0; k < 2; ++k) {
      const int pieces = std::uniform_int_distribution<int>(1, 3)(rng);
      std::set<std::size_t> cuts;
      while (static_cast<int>(cuts.size()) < pieces - 1) {
        cuts.insert(std::uniform_int_distribution<std::size_t>(1, n - 1)(rng));
      }
      std::size_t first = 0;
      cuts.insert(n);
      for (std::size_t cut : cuts) {
        parts.push_back({t, k, first, cut - first, SC_ZERO_TIME, SC_ZERO_TIME});
        first = cut;
      }
    }
  }
  std::shuffle(parts.begin(), parts.end(), rng);
  for (Part& p : parts) {
    p.pause = ns(std::uniform_int_distribution<int>(0, 300)(rng));
    p.delay = ns(std::uniform_int_distribution<int>(0, 40)(rng));
  }

  int programmed_threads = 0;
  sc_core::sc_event ready;
  bool programmed = false;
  spawn([&] {
    g.program_region(0, region, kTiles * tile, threshold, destination, tracker::kOpStore);
    // The DMA's stores carry the tag: a second region counts each arriving tile once.
    g.program_region(1, destination, kTiles * tile, tile, 0, tracker::kOpNone);
    programmed = true;
    ready.notify();
  });
  for (int th = 0; th < kThreads; ++th) {
    spawn([&, th] {
      if (!programmed) wait(ready);
      for (std::size_t i = static_cast<std::size_t>(th); i < parts.size(); i += kThreads) {
        const Part& p = parts[i];
        wait(p.pause);
        std::vector<float> v(p.count);
        for (std::size_t e = 0; e < p.count; ++e) v[e] = value(p.tile, p.k, p.first + e);
        auto data = bytes_of(v);
        REQUIRE(g.host.access(Op::Update,
                              region + static_cast<std::uint64_t>(p.tile) * tile + p.first * 4,
                              data.data(), static_cast<unsigned>(p.count * 4), tag_of(p.tile),
                              static_cast<std::uint16_t>(p.k), p.delay) == tlm::TLM_OK_RESPONSE);
      }
      ++programmed_threads;
    });
  }
  sc_core::sc_start();
  REQUIRE(programmed_threads == kThreads);

  // Applied bytes and last applied time per tag, in the chunk region, from the recorder.
  std::map<std::uint32_t, std::uint64_t> applied_bytes;
  std::map<std::uint32_t, sc_time> last_applied;
  for (const auto& r : g.recorder.records) {
    if (r.access.address >= destination) continue;  // the DMA's stores, region 1
    applied_bytes[r.access.tag] += r.access.bytes;
    last_applied[r.access.tag] = std::max(last_applied[r.access.tag], r.time);
  }
  std::map<std::uint32_t, int> fired0, fired1;
  int early = 0, miscounted = 0;
  for (const TrackerFire& f : g.tracker.fires()) {
    if (f.region == 0) {
      ++fired0[f.tag];
      early += f.time < last_applied[f.tag];
      miscounted += f.counted != threshold;
      CHECK(f.source == region + (f.tag - 1000) * std::uint64_t{tile});
      CHECK(f.bytes == tile);
    } else {
      ++fired1[f.tag];
      miscounted += f.counted != tile;
    }
  }
  CHECK(early == 0);
  CHECK(miscounted == 0);
  REQUIRE(fired0.size() == static_cast<std::size_t>(kTiles));
  REQUIRE(fired1.size() == static_cast<std::size_t>(kTiles));
  for (int t = 0; t < kTiles; ++t) {
    INFO("tile " << t);
    CHECK(fired0[tag_of(t)] == 1);
    CHECK(fired1[tag_of(t)] == 1);
    CHECK(applied_bytes[tag_of(t)] == threshold);  // conservation: exactly two tiles' worth
  }
  CHECK(g.tracker.stats().region_fired[0] == kTiles);
  CHECK(g.tracker.stats().region_fired[1] == kTiles);
  CHECK(g.tracker.stats().overcount == 0);
  CHECK(g.tracker.stats().errors == 0);
  CHECK(g.tracker.stats().max_in_use <= static_cast<std::uint64_t>(2 * kTiles));
  CHECK(g.tracker.pending() == 0);
  CHECK(g.dma.transfers().size() == static_cast<std::size_t>(kTiles));
  CHECK(g.dma.pending() == 0);
  CHECK(g.mc.pending() == 0);

  // The DMA read each tile after both contributions were in memory: the copies hold the sums.
  int wrong = 0;
  for (int t = 0; t < kTiles; ++t) {
    const std::vector<float> out =
        g.host.read_floats(destination + static_cast<std::uint64_t>(t) * tile, n);
    for (std::size_t i = 0; i < n; ++i) wrong += out[i] != value(t, 0, i) + value(t, 1, i);
  }
  CHECK(wrong == 0);
  INFO(g.tracker.report().dump());
  CHECK(g.tracker.report()["fired"] == 2 * kTiles);
}

TEST_CASE("tracker completes last-column tiles at EDGE_THRESHOLD and the others at THRESHOLD",
          "[tracker]") {
  Setup s = small_setup();
  Bench bench(s);
  Node& g = bench.gpu(0);
  // An output of 4 x 3 tiles, 16 fp32 high: two 16 wide (1024 bytes), the last 8 wide (512
  // bytes), tile-contiguous. Each tile completes with two contributions (local + incoming).
  constexpr std::uint32_t kCols = 3, kTile = 1024, kEdge = 512, kRow = 2 * kTile + kEdge;
  const std::uint64_t region = bench.hbm(0, 0x10000);
  auto at = [&](std::uint32_t tag) { return region + tag / kCols * kRow + tag % kCols * kTile; };
  std::vector<unsigned char> data(2 * kTile, 0);
  std::vector<std::uint32_t> fired_after;  // FIRED after each step
  bool finished = false;
  spawn([&] {
    Host& h = g.host;
    auto step = [&](std::uint32_t tag, std::uint64_t offset, unsigned bytes) {
      REQUIRE(h.access(Op::Update, at(tag) + offset, data.data(), bytes, tag) ==
              tlm::TLM_OK_RESPONSE);
      wait(ns(2000));  // applied and counted by now
      fired_after.push_back(h.read32(g.tracker_reg(tracker::kFired)));
    };
    // GRID_COLS without EDGE_THRESHOLD is refused.
    h.write64(g.region_reg(0, tracker::kBaseLow), region);
    h.write64(g.region_reg(0, tracker::kSizeLow), 4 * kRow);
    h.write32(g.region_reg(0, tracker::kThreshold), 2 * kTile);
    h.write32(g.region_reg(0, tracker::kGridCols), kCols);
    h.write32(g.region_reg(0, tracker::kControl), tracker::kEnable);
    CHECK(h.read32(g.region_reg(0, tracker::kControl)) == 0);
    g.program_region(0, region, 4 * kRow, 2 * kTile, 0, tracker::kOpNone, 0, kCols, 2 * kEdge);

    step(5, 0, kEdge);      // edge tag (5 % 3 == 2): half its threshold
    step(5, 0, kEdge);      // fires at 2 x 512
    step(4, 0, kEdge);      // interior tag: 512
    step(4, kEdge, kEdge);  // 1024, the edge threshold: must not fire yet
    step(4, 0, kTile);      // 2048: fires
    step(3, 0, kTile);      // interior tag in column 0: 1024, no fire
    // Edge tag 8 jumps past its threshold in one part (the controller splits accesses at its
    // 256-byte interleave, so each step below is at most one part): 512, 768, 896, then 1152.
    step(8, 0, kEdge);
    step(8, 0, 256);
    step(8, 0, 128);
    step(8, 0, 256);  // fires, overcounted against EDGE_THRESHOLD
    finished = true;
  });
  sc_core::sc_start();
  REQUIRE(finished);
  CHECK(fired_after == std::vector<std::uint32_t>{0, 1, 1, 1, 2, 2, 2, 2, 2, 3});
  std::map<std::uint32_t, std::uint64_t> counted;
  for (const TrackerFire& f : g.tracker.fires()) counted[f.tag] = f.counted;
  CHECK(counted == std::map<std::uint32_t, std::uint64_t>{
                       {5, 2 * kEdge}, {4, 2 * kTile}, {8, 2 * kEdge + 128}});
  CHECK(g.tracker.stats().overcount == 1);  // tag 8, against its edge threshold
  REQUIRE(g.tracker.errors().size() == 1);
  CHECK(g.tracker.errors()[0].find("past its threshold of 1024") != std::string::npos);
  CHECK(g.tracker.stats().errors == 0);
  CHECK(g.tracker.pending() == 1);  // tag 3 still waits for its second contribution
  CHECK(g.tracker.report()["regions"]["0"]["edge_threshold"] == 2 * kEdge);
}

TEST_CASE("tracker reports a tagged access in no programmed region by address and tag",
          "[tracker]") {
  Setup s = small_setup();
  Bench bench(s);
  Node& g = bench.gpu(0);
  const std::uint64_t region = bench.hbm(0, 0x10000);
  const std::uint64_t disabled = bench.hbm(0, 0x20000);
  const std::uint64_t nowhere = bench.hbm(0, 0x123400);
  std::uint32_t errors_register = 0, overcount_register = 0;
  std::vector<float> values(128, 3.0f);
  auto data = bytes_of(values);
  spawn([&] {
    g.program_region(0, region, 0x1000, 256, 0, tracker::kOpNone);
    g.program_region(1, disabled, 0x1000, 256, 0, tracker::kOpNone);
    g.host.write32(g.region_reg(1, tracker::kControl), 0);
    // Untagged traffic anywhere is not the tracker's business.
    REQUIRE(g.host.access(Op::Write, nowhere, data.data(), 64) == tlm::TLM_OK_RESPONSE);
    // Tagged, in no region: memory still applies it, the tracker counts an error.
    REQUIRE(g.host.access(Op::Update, nowhere, data.data(), 64, 7) == tlm::TLM_OK_RESPONSE);
    // Tagged, in a disabled region.
    REQUIRE(g.host.access(Op::Write, disabled + 0x40, data.data(), 64, 8) == tlm::TLM_OK_RESPONSE);
    // Tagged, crossing the end of region 0 (two parts: one inside, one beyond).
    REQUIRE(g.host.access(Op::Write, region + 0x1000 - 256, data.data(), 512, 9) ==
            tlm::TLM_OK_RESPONSE);
    // Conservation: tag 10 fires with 256 bytes; 64 more bytes for it are an overcount.
    REQUIRE(g.host.access(Op::Write, region, data.data(), 256, 10) == tlm::TLM_OK_RESPONSE);
    REQUIRE(g.host.access(Op::Update, region, data.data(), 64, 10) == tlm::TLM_OK_RESPONSE);
    errors_register = g.host.read32(g.tracker_reg(tracker::kErrors));
    overcount_register = g.host.read32(g.tracker_reg(tracker::kOvercount));
  });
  sc_core::sc_start();
  // Errors are counted per memory part: 1 (tag 7) + 1 (tag 8) + 1 (tag 9's part past the end;
  // the part inside region 0 is counted normally).
  CHECK(errors_register == 3);
  CHECK(g.tracker.stats().errors == 3);
  CHECK(overcount_register == 1);
  const auto& errors = g.tracker.errors();
  REQUIRE(errors.size() == 4);
  CHECK(errors[0] == "gpu0 tracker: tag 7 at address " + hex(nowhere) +
                         " is not in any programmed region (64 bytes, update from gpu0)");
  CHECK(errors[1].find("tag 8 at address " + hex(disabled + 0x40) +
                       " is not in any programmed region") != std::string::npos);
  CHECK(errors[2].find("tag 9 at address " + hex(region + 0x1000) +
                       " is not in any programmed region") != std::string::npos);
  CHECK(errors[3].find("tag 10") != std::string::npos);
  CHECK(errors[3].find("after the tag fired") != std::string::npos);
  // Memory applied the data anyway: 3 + 3 at `nowhere` (untagged write then tagged update).
  const std::vector<float> v = g.host.read_floats(nowhere, 1);
  CHECK(v[0] == 6.0f);
  // Tag 10 fired once, tag 9's inside part (256 bytes) filled its threshold: it fired too.
  CHECK(g.tracker.stats().fired == 2);
  CHECK(g.tracker.pending() == 0);
}

TEST_CASE("tracker table full back-pressures the memory controller until an entry frees",
          "[tracker]") {
  Setup s = small_setup();
  s.tracker.entries = 2;
  Bench bench(s);
  Node& g = bench.gpu(0);
  constexpr int kTiles = 6;
  const std::uint32_t tile = 4096;
  const std::size_t n = tile / 4;
  const std::uint64_t region = bench.hbm(0, 0x100000);
  const std::uint64_t background = bench.hbm(0, 0x800000);
  auto value = [](int t, int k, std::size_t i) {
    return static_cast<float>(static_cast<int>((t + 2 * k + i) % 9) - 4);
  };
  int done = 0;
  sc_core::sc_event ready;
  bool programmed = false;
  sc_time programmed_at;
  spawn([&] {
    g.program_region(0, region, kTiles * tile, 2 * tile, 0, tracker::kOpNone);
    programmed = true;
    programmed_at = sc_time_stamp();
    ready.notify();
  });
  // Untagged writes that all land on the last channel delay it, so the other channels run ahead
  // into tile 2 while tiles 0 and 1 still wait for their parts on that channel.
  const int slow_channel = static_cast<int>(s.hbm.channels) - 1;
  for (int j = 0; j < 16; ++j) {
    spawn([&, j] {
      if (!programmed) wait(ready);
      std::vector<unsigned char> data(256);
      const std::uint64_t at = background + static_cast<std::uint64_t>(slow_channel) * 256 +
                               static_cast<std::uint64_t>(j) * s.hbm.channels * 256;
      REQUIRE(g.mc.channel_of(at - bench.hbm(0, 0)) == slow_channel);
      REQUIRE(g.host.access(Op::Write, at, data.data(), 256) == tlm::TLM_OK_RESPONSE);
    });
  }
  // Six tiles in flight at once; each tile's two contributions arrive next to each other.
  for (int t = 0; t < kTiles; ++t) {
    for (int k = 0; k < 2; ++k) {
      spawn([&, t, k] {
        if (!programmed) wait(ready);
        wait(ns(1 + 2 * t + k));
        std::vector<float> v(n);
        for (std::size_t i = 0; i < n; ++i) v[i] = value(t, k, i);
        auto data = bytes_of(v);
        REQUIRE(g.host.access(Op::Update, region + static_cast<std::uint64_t>(t) * tile,
                              data.data(), tile, static_cast<std::uint32_t>(t),
                              0) == tlm::TLM_OK_RESPONSE);
        ++done;
      });
    }
  }
  sc_core::sc_start();
  REQUIRE(done == 2 * kTiles);  // everything completed, nothing dropped

  const TrackerStats& st = g.tracker.stats();
  CHECK(st.fired == kTiles);
  CHECK(st.max_in_use <= 2);
  CHECK(st.refused > 0);
  CHECK(g.mc.report()["watch_refusals"] == st.refused);
  CHECK(g.tracker.pending() == 0);
  CHECK(g.mc.pending() == 0);

  // Entry lifetimes: first part admitted (= first applied) to fire; never more than 2 at once.
  std::map<std::uint32_t, sc_time> first_applied, fired_at;
  std::map<std::uint32_t, std::uint64_t> bytes;
  for (const auto& r : g.recorder.records) {
    if (!first_applied.count(r.access.tag)) first_applied[r.access.tag] = r.time;
    bytes[r.access.tag] += r.access.bytes;
  }
  for (const TrackerFire& f : g.tracker.fires()) fired_at[f.tag] = f.time;
  std::vector<std::pair<sc_time, sc_time>> lifetimes;
  for (int t = 0; t < kTiles; ++t) {
    const auto tag = static_cast<std::uint32_t>(t);
    REQUIRE(fired_at.count(tag) == 1);
    CHECK(bytes[tag] == 2 * tile);
    lifetimes.emplace_back(first_applied[tag], fired_at[tag]);
  }
  CHECK(max_overlap(lifetimes) <= 2);
  // The third tag waited for an entry: its first part was applied only once a tag had fired.
  const sc_time first_fire = std::min(fired_at[0], fired_at[1]);
  CHECK(first_applied[2] >= first_fire);
  // Unheld, channel 0 would have reached tag 2 after its eight parts of tags 0 and 1 (2 ns of
  // router, then 8 x 10.24 ns of update service); it waited longer than that.
  const double part_ns = 256.0 / (s.hbm.bandwidth_GBps / static_cast<double>(s.hbm.channels)) *
                         s.hbm.nmc_update_occupancy;
  CHECK(first_applied[2] > programmed_at + ns(1 + 2 * 2 + s.router_ns + 8 * part_ns));

  int wrong = 0;
  for (int t = 0; t < kTiles; ++t) {
    const auto out = g.host.read_floats(region + static_cast<std::uint64_t>(t) * tile, n);
    for (std::size_t i = 0; i < n; ++i) wrong += out[i] != value(t, 0, i) + value(t, 1, i);
  }
  CHECK(wrong == 0);
}

TEST_CASE("DMA doorbell descriptors move data as stores and updates", "[dma]") {
  Setup s = small_setup();
  Bench bench(s);
  Node& g = bench.gpu(0);
  const std::uint32_t bytes = 64 * 1024;
  const std::size_t n = bytes / 4;
  const std::uint64_t src = bench.hbm(0, 0x100000), store_dst = bench.hbm(0, 0x300000);
  const std::uint64_t src2 = bench.hbm(0, 0x200000), update_dst = bench.hbm(0, 0x400000);
  std::vector<float> a(n), b(n), c(n);
  for (std::size_t i = 0; i < n; ++i) {
    a[i] = static_cast<float>(i % 13);
    b[i] = static_cast<float>(static_cast<int>(i % 5) - 2);
    c[i] = static_cast<float>(i % 3);
  }
  std::uint32_t completed = 0, state0 = 0, state1 = 0;
  std::uint64_t moved = 0;
  bool finished = false;
  spawn([&] {
    Host& h = g.host;
    h.debug(true, src, a.data(), bytes);
    h.debug(true, src2, b.data(), bytes);
    h.debug(true, update_dst, c.data(), bytes);
    g.ring(0, src, store_dst, bytes, dma::kOpStore);
    g.ring(1, src2, update_dst, bytes, dma::kOpUpdate);
    // Ringing a queued/running descriptor again is refused.
    h.write32(g.desc_reg(0, dma::kDoorbell), 1);
    CHECK(h.read32(g.dma_reg(dma::kRejected)) == 1);
    CHECK(h.read32(g.dma_reg(dma::kStatus)) == 1);
    while (h.read32(g.dma_reg(dma::kStatus)) != 0) wait(ns(200));  // the host polls
    completed = h.read32(g.dma_reg(dma::kCompleted));
    moved = h.read64(g.dma_reg(dma::kBytesLow));
    state0 = h.read32(g.desc_reg(0, dma::kState));
    state1 = h.read32(g.desc_reg(1, dma::kState));
    finished = true;
  });
  sc_core::sc_start();
  REQUIRE(finished);
  CHECK(completed == 2);
  CHECK(moved == 2ull * bytes);
  CHECK(state0 == dma::kStateDone);
  CHECK(state1 == dma::kStateDone);
  const auto stored = g.host.read_floats(store_dst, n);
  const auto updated = g.host.read_floats(update_dst, n);
  int wrong = 0;
  for (std::size_t i = 0; i < n; ++i) {
    wrong += stored[i] != a[i];
    wrong += updated[i] != c[i] + b[i];
  }
  CHECK(wrong == 0);
  // All of it was communication traffic: reads, writes and NMC updates.
  const HbmStats& st = g.mc.stats();
  CHECK(st.bytes[static_cast<int>(Op::Read)][1] == 2ull * bytes);
  CHECK(st.bytes[static_cast<int>(Op::Write)][1] == bytes);
  CHECK(st.bytes[static_cast<int>(Op::Update)][1] == bytes);
  CHECK(st.bytes[static_cast<int>(Op::Read)][0] == 0);
  CHECK(g.dma.stats().bytes_written == bytes);
  CHECK(g.dma.stats().bytes_updated == bytes);
  CHECK(g.dma.stats().errors == 0);
  REQUIRE(g.dma.transfers().size() == 2);
  CHECK(g.dma.transfers()[0].doorbell);
  CHECK(g.dma.transfers()[1].descriptor == 1);
}

// A local copy reads and writes every byte through the same HBM: at most half its bandwidth.
double copy_bound_GBps(const Setup& s) {
  return s.hbm.bandwidth_GBps / 2;
}

TEST_CASE(
    "DMA reads ahead as far as its buffer allows and keeps at most in_flight transfers running",
    "[dma]") {
  Setup s = small_setup();  // 64 KiB buffer, 2 in flight, 4 KiB pieces; HBM 400 GB/s, 50 ns
  Bench bench(s);
  Node& g = bench.gpu(0);
  const std::uint64_t large = 4ull << 20;
  const std::uint64_t small = 256 * 1024;
  constexpr int kSmall = 8;
  const std::uint64_t src = bench.hbm(0, 0x1000000), dst = bench.hbm(0, 0x2000000);
  std::vector<float> pattern(large / 4);
  for (std::size_t i = 0; i < pattern.size(); ++i) pattern[i] = static_cast<float>(i % 1000);
  sc_time small_begin, small_end;
  bool finished = false;
  spawn([&] {
    Host& h = g.host;
    h.debug(true, src, pattern.data(), large);
    g.ring(0, src, dst, large, dma::kOpStore);
    while (g.dma.pending() != 0) wait(g.dma.idle_event());
    small_begin = sc_time_stamp();
    for (int d = 1; d <= kSmall; ++d) {
      g.ring(d, src + (d - 1) * small, dst + large + (d - 1) * small, small, dma::kOpStore);
    }
    while (h.read32(g.dma_reg(dma::kStatus)) != 0) wait(g.dma.idle_event());
    small_end = sc_time_stamp();
    finished = true;
  });
  sc_core::sc_start();
  REQUIRE(finished);
  const auto& transfers = g.dma.transfers();
  REQUIRE(transfers.size() == 1 + kSmall);
  INFO(g.dma.report().dump());

  // No pacing rate: the reads run ahead until the buffer is full, so the buffer fills, and a lone
  // transfer moves far faster than one piece at a time (a read then a write, each at least the
  // HBM's latency) while never beating the memory it copies through.
  CHECK(g.dma.stats().max_buffer_bytes == static_cast<std::uint64_t>(s.dma.outstanding_bytes));
  CHECK(g.dma.stats().max_pieces_in_flight ==
        static_cast<std::uint64_t>(s.dma.outstanding_bytes / s.dma.chunk_bytes));
  const DmaTransfer& big = transfers[0];
  const double big_ns = (big.end - big.start).to_seconds() * 1e9;
  const double pieces = static_cast<double>(large / s.dma.chunk_bytes);
  CHECK(big_ns < pieces * 2 * s.hbm.latency_ns / 4);
  const double rate = static_cast<double>(large) / big_ns;
  INFO("large transfer " << rate << " GB/s");
  CHECK(rate <= copy_bound_GBps(s));
  CHECK(rate > 0.5 * copy_bound_GBps(s));

  // Eight transfers queued at once: never more than in_flight run together, and the limit is
  // reached; together they are bound by the same memory.
  std::vector<std::pair<sc_time, sc_time>> spans;
  for (int i = 1; i <= kSmall; ++i) spans.emplace_back(transfers[i].start, transfers[i].end);
  CHECK(max_overlap(spans) == s.dma.in_flight);
  CHECK(g.dma.stats().max_running == static_cast<std::uint64_t>(s.dma.in_flight));
  const double aggregate =
      static_cast<double>(kSmall * small) / ((small_end - small_begin).to_seconds() * 1e9);
  INFO("aggregate " << aggregate << " GB/s");
  CHECK(aggregate <= copy_bound_GBps(s));
  CHECK(aggregate > 0.5 * copy_bound_GBps(s));
  // Data arrived.
  const auto out = g.host.read_floats(dst, large / 4);
  const auto out2 = g.host.read_floats(dst + large, kSmall * small / 4);
  int wrong = 0;
  for (std::size_t i = 0; i < out.size(); ++i) wrong += out[i] != pattern[i];
  for (std::size_t i = 0; i < out2.size(); ++i) wrong += out2[i] != pattern[i];
  CHECK(wrong == 0);
  CHECK(g.dma.pending() == 0);
  CHECK(g.mc.pending() == 0);
}

TEST_CASE("DMA with a buffer of one piece moves one piece at a time", "[dma]") {
  Setup s = small_setup();
  s.dma.outstanding_bytes = s.dma.chunk_bytes;
  Bench bench(s);
  Node& g = bench.gpu(0);
  const std::uint64_t bytes = 256 * 1024;
  const std::uint64_t src = bench.hbm(0, 0x1000000), dst = bench.hbm(0, 0x2000000);
  bool finished = false;
  spawn([&] {
    g.ring(0, src, dst, bytes, dma::kOpStore);
    while (g.dma.pending() != 0) wait(g.dma.idle_event());
    finished = true;
  });
  sc_core::sc_start();
  REQUIRE(finished);
  INFO(g.dma.report().dump());
  CHECK(g.dma.stats().max_buffer_bytes == static_cast<std::uint64_t>(s.dma.chunk_bytes));
  CHECK(g.dma.stats().max_pieces_in_flight == 1);
  // Each piece waits for the previous one's write: a read then a write, each at least the HBM's
  // latency.
  const DmaTransfer& transfer = g.dma.transfers().at(0);
  const double pieces = static_cast<double>(bytes / s.dma.chunk_bytes);
  CHECK((transfer.end - transfer.start).to_seconds() * 1e9 >= pieces * 2 * s.hbm.latency_ns);
}

namespace {

// Moves `bytes` with a read-ahead buffer of four 4 KiB pieces and dma.urgent_fill = `fill`.
DmaStats move_with_urgent_fill(double fill, std::uint64_t bytes) {
  Setup s = small_setup();
  s.dma.outstanding_bytes = 4 * s.dma.chunk_bytes;
  s.dma.urgent_fill = fill;
  Bench bench(s);
  Node& g = bench.gpu(0);
  spawn([&] { g.ring(0, bench.hbm(0, 0x1000000), bench.hbm(0, 0x2000000), bytes, dma::kOpStore); });
  sc_core::sc_start();
  REQUIRE(g.dma.pending() == 0);
  INFO(g.dma.report().dump());
  REQUIRE(g.dma.stats().pieces == bytes / 4096);
  return g.dma.stats();
}

}  // namespace

TEST_CASE("DMA marks every request urgent while the path keeps its buffer full", "[dma]") {
  // 64 pieces through a buffer of four: the engine reserves four pieces at once and each freed
  // piece at once, so every read and every write goes out with the buffer full.
  const DmaStats stats = move_with_urgent_fill(0.5, 256 * 1024);
  CHECK(stats.max_buffer_bytes == 4 * 4096);
  CHECK(stats.urgent_reads == 64);
  CHECK(stats.urgent_writes == 64);
}

TEST_CASE("DMA marks a request urgent only above dma.urgent_fill of its buffer", "[dma]") {
  // Two pieces hold half the buffer: not more than 0.5 of it.
  const DmaStats stats = move_with_urgent_fill(0.5, 2 * 4096);
  CHECK(stats.max_buffer_bytes == 2 * 4096);
  CHECK(stats.urgent_reads == 0);
  CHECK(stats.urgent_writes == 0);
}

TEST_CASE("DMA marks a request urgent above a lower dma.urgent_fill", "[dma]") {
  // The same two pieces hold more than a quarter of it.
  const DmaStats stats = move_with_urgent_fill(0.25, 2 * 4096);
  CHECK(stats.urgent_reads == 2);
  CHECK(stats.urgent_writes == 2);
}

TEST_CASE("DMA with dma.urgent_fill = 1 never marks a request urgent", "[dma]") {
  const DmaStats stats = move_with_urgent_fill(1.0, 256 * 1024);
  CHECK(stats.urgent_reads == 0);
  CHECK(stats.urgent_writes == 0);
}
