// SMs, dispatcher and host: a GPU's compute side driven by a host program through MMIO, with a
// memory controller behind a router. Functional GEMMs against a reference computed here, the
// output map, first-principles timing, dispatch orders, launch rejections and host barriers.
// Each case builds its design(s) and runs sc_start once (ctest runs every case in its process).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>
#include <systemc>
#include <tlm>
#include <tuple>

#include "models/hbm/memory_controller.h"
#include "models/host/barrier.h"
#include "models/host/host.h"
#include "models/sm/dispatcher.h"
#include "models/sm/sm.h"
#include "protocol/hex.h"
#include "tlm_interconnect/address_map.h"
#include "tlm_interconnect/element.h"
#include "tlm_interconnect/mmio_bus.h"
#include "tlm_interconnect/router.h"

using namespace t3;
namespace reg = t3::dispatcher;
using sc_core::SC_NS;
using sc_core::sc_time;

namespace {

constexpr std::uint64_t kDispatcherOffset = 0x1000;

struct Setup {
  SmConfig sm;
  HbmConfig hbm;
  SimMode mode = SimMode::Functional;
  double router_ns = 2;
  double mmio_ns = 200;
  int gpus = 1;  // GPUs in the address map; the bench builds GPU 0 only
};

// A small GPU: 4 SMs x 2 slots, small requests so tiles take several transactions.
Setup small_setup(SimMode mode = SimMode::Functional) {
  Setup setup;
  setup.mode = mode;
  setup.sm.count = 4;
  setup.sm.occupancy = 2;
  setup.sm.request_bytes = 1024;
  setup.sm.launch_latency_ns = 500;
  setup.sm.dispatch_ns = 5;
  setup.hbm.capacity_bytes = 1ull << 30;
  setup.hbm.channels = 8;
  setup.hbm.bandwidth_GBps = 400;
  setup.hbm.latency_ns = 50;
  return setup;
}

// A record of every transaction that reaches memory.
struct Access {
  std::uint64_t address;
  unsigned bytes;
  T3Extension extension;
};

// Passes transactions between router and memory, recording their extensions.
struct Probe : sc_core::sc_module {
  tlm_utils::simple_target_socket<Probe> in{"in"};
  tlm_utils::simple_initiator_socket<Probe> out{"out"};
  std::vector<Access> accesses;
  explicit Probe(sc_core::sc_module_name name) : sc_module(name) {
    in.register_b_transport(this, &Probe::b_transport);
    in.register_transport_dbg(this, &Probe::transport_dbg);
  }
  void b_transport(tlm::tlm_generic_payload& payload, sc_time& delay) {
    accesses.push_back(
        {payload.get_address(), payload.get_data_length(), T3Extension::get(payload)});
    out->b_transport(payload, delay);
  }
  unsigned transport_dbg(tlm::tlm_generic_payload& payload) { return out->transport_dbg(payload); }
};

// GPU 0's compute side: host, dispatcher (MMIO offset 0x1000), SMs, router, memory.
struct Bench : sc_core::sc_module {
  Setup setup;
  AddressMap map;
  Router router;
  MmioBus mmio;
  Probe probe;
  MemoryController memory;
  Dispatcher dispatcher;
  std::vector<std::unique_ptr<Sm>> sms;
  Host host;
  sc_core::sc_vector<sc_core::sc_signal<bool>> irq;  // one line per dispatcher queue
  tlm_utils::simple_initiator_socket<Bench> socket{"socket"};
  std::function<void(Bench&)> at_start;  // runs at start of simulation (write inputs here)

  Bench(sc_core::sc_module_name name, const Setup& s, int host_gpu = 0)
      : sc_module(name),
        setup(s),
        map(AddressMapConfig{}, s.gpus, s.hbm.capacity_bytes),
        router("router", map, sc_time(s.router_ns, SC_NS)),
        mmio("mmio", map.mmio_base(0), map.mmio_size()),
        probe("probe"),
        memory("memory", s.hbm, s.mode, map.hbm_base(0)),
        dispatcher("dispatcher", s.sm, map, 0, sc_time(s.mmio_ns, SC_NS)),
        host("host", host_gpu),
        irq("irq", dispatcher::kQueues) {
    router.out.bind(probe.in);
    probe.out.bind(memory.socket);
    router.out.bind(mmio.in);
    router.set_route(0, Window::Hbm, 0);
    router.set_route(0, Window::Mmio, 1);
    mmio.add_region("dispatcher", kDispatcherOffset, 0x1000);
    mmio.out.bind(dispatcher.socket);
    for (int i = 0; i < s.sm.count; ++i) {
      sms.push_back(std::make_unique<Sm>(("sm" + std::to_string(i)).c_str(), s.sm, s.mode, 0, i));
      sms.back()->socket.bind(router.in);
      dispatcher.connect(*sms.back());
    }
    host.socket.bind(router.in);
    socket.bind(router.in);
    dispatcher.irq(irq);
    host.irq(irq);
  }

  void start_of_simulation() override {
    if (at_start) at_start(*this);
  }

  std::uint64_t dispatcher_base() const { return map.mmio_base(0) + kDispatcherOffset; }
  std::uint64_t hbm(std::uint64_t offset) const { return map.hbm_base(0) + offset; }

  void debug_access(bool write, std::uint64_t address, unsigned char* data, std::size_t bytes) {
    tlm::tlm_generic_payload payload;
    payload.set_command(write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
    payload.set_address(address);
    payload.set_data_ptr(data);
    payload.set_data_length(static_cast<unsigned>(bytes));
    payload.set_streaming_width(static_cast<unsigned>(bytes));
    REQUIRE(socket->transport_dbg(payload) == bytes);
  }

  SmStats total() const {
    SmStats sum;
    for (const auto& sm : sms) {
      sum.wgs += sm->stats().wgs;
      sum.bytes_read += sm->stats().bytes_read;
      sum.bytes_written += sm->stats().bytes_written;
      sum.faults += sm->stats().faults;
    }
    return sum;
  }
};

// ---- The tile-contiguous layout, from its definition in gemm_layout.h ----------------------

// Element (r, c) of a rows x cols matrix in tiles th x tw:
// r0 * cols + h * c0 + (r - r0) * w + (c - c0).
std::int64_t tiled(std::int64_t r, std::int64_t c, std::int64_t rows, std::int64_t cols,
                   std::int64_t th, std::int64_t tw) {
  const std::int64_t r0 = r / th * th, c0 = c / tw * tw;
  const std::int64_t h = std::min(th, rows - r0), w = std::min(tw, cols - c0);
  return r0 * cols + h * c0 + (r - r0) * w + (c - c0);
}

std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

// First tile row of chunk c when R tile rows are split into n chunks: floor(c * R / n).
std::int64_t band_start(std::int64_t c, std::int64_t rows, std::int64_t n) {
  return c * rows / n;
}

// A row-major matrix of small integers (exact in fp32, fp16 and bf16, and so are their sums).
struct Matrix {
  std::int64_t rows, cols;
  std::vector<float> v;
  float at(std::int64_t r, std::int64_t c) const {
    return v[static_cast<std::size_t>(r * cols + c)];
  }
};

Matrix make_matrix(std::int64_t rows, std::int64_t cols, int seed) {
  Matrix m{rows, cols, {}};
  for (std::int64_t i = 0; i < rows * cols; ++i) {
    m.v.push_back(static_cast<float>((i * 7 + seed * 13 + (i / cols) * 3) % 9 - 4));
  }
  return m;
}

Matrix reference(const Matrix& a, const Matrix& b) {
  Matrix c{a.rows, b.cols, std::vector<float>(static_cast<std::size_t>(a.rows * b.cols))};
  for (std::int64_t i = 0; i < a.rows; ++i) {
    for (std::int64_t j = 0; j < b.cols; ++j) {
      double sum = 0;
      for (std::int64_t k = 0; k < a.cols; ++k) sum += double{a.at(i, k)} * b.at(k, j);
      c.v[static_cast<std::size_t>(i * c.cols + j)] = static_cast<float>(sum);
    }
  }
  return c;
}

// Writes rows [row0, row0 + rows) of `m` as a tile-contiguous (rows x cols) matrix at `address`.
void put(Bench& bench, std::uint64_t address, const Matrix& m, std::int64_t th, std::int64_t tw,
         ElementType type, std::int64_t row0 = 0, std::int64_t rows = -1) {
  if (rows < 0) rows = m.rows;
  std::vector<unsigned char> bytes(static_cast<std::size_t>(rows * m.cols) * element_bytes(type));
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t c = 0; c < m.cols; ++c) {
      store_element(bytes.data(), static_cast<std::size_t>(tiled(r, c, rows, m.cols, th, tw)), type,
                    m.at(row0 + r, c));
    }
  }
  bench.debug_access(true, address, bytes.data(), bytes.size());
}

// Reads a tile-contiguous (rows x cols) matrix at `address` back as row-major.
Matrix get(Bench& bench, std::uint64_t address, std::int64_t rows, std::int64_t cols,
           std::int64_t th, std::int64_t tw, ElementType type) {
  std::vector<unsigned char> bytes(static_cast<std::size_t>(rows * cols) * element_bytes(type));
  bench.debug_access(false, address, bytes.data(), bytes.size());
  Matrix m{rows, cols, {}};
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t c = 0; c < cols; ++c) {
      m.v.push_back(load_element(bytes.data(),
                                 static_cast<std::size_t>(tiled(r, c, rows, cols, th, tw)), type));
    }
  }
  return m;
}

// ---- Host programs, written with the register offsets ---------------------------------------

struct Out {
  std::uint64_t base;
  std::uint32_t op = 0;  // 0 store, 1 update
  std::uint32_t flags = 0;
};

struct Launch {
  std::uint32_t kernel = reg::kGemm;
  std::uint32_t m, n, k, tile_m, tile_n, tile_k;
  ElementType element = ElementType::Fp32, out_element = ElementType::Fp32;
  WgOrder order = WgOrder::RowMajor;
  std::uint32_t chunks = 1, first_chunk = 0;
  std::uint64_t a, b;
  std::vector<Out> outs;
  std::string note = "gemm";
};

void write(Program& p, std::uint64_t address, std::uint32_t value, const std::string& note) {
  p.commands.push_back({HostCommand::Kind::WriteRegister, address, value, note});
}
void expect(Program& p, std::uint64_t address, std::uint32_t value, const std::string& note) {
  p.commands.push_back({HostCommand::Kind::ExpectRegister, address, value, note});
}

// Descriptor registers, doorbell, then WaitKernel.
void append_launch(Program& p, std::uint64_t base, const Launch& l) {
  const std::string& n = l.note;
  write(p, base + reg::kKernel, l.kernel, n + ": kernel");
  write(p, base + reg::kM, l.m, n + ": M");
  write(p, base + reg::kN, l.n, n + ": N");
  write(p, base + reg::kK, l.k, n + ": K");
  write(p, base + reg::kTileM, l.tile_m, n + ": tile M");
  write(p, base + reg::kTileN, l.tile_n, n + ": tile N");
  write(p, base + reg::kTileK, l.tile_k, n + ": tile K");
  write(p, base + reg::kElement, element_code(l.element), n + ": element");
  write(p, base + reg::kOutElement, element_code(l.out_element), n + ": out el");
  write(p, base + reg::kWgOrder, static_cast<std::uint32_t>(l.order), n + ": order");
  write(p, base + reg::kChunks, l.chunks, n + ": chunks");
  write(p, base + reg::kFirstChunk, l.first_chunk, n + ": first chunk");
  write(p, base + reg::kALow, static_cast<std::uint32_t>(l.a), n + ": A low");
  write(p, base + reg::kAHigh, static_cast<std::uint32_t>(l.a >> 32), n + ": A high");
  write(p, base + reg::kBLow, static_cast<std::uint32_t>(l.b), n + ": B low");
  write(p, base + reg::kBHigh, static_cast<std::uint32_t>(l.b >> 32), n + ": B high");
  for (std::size_t c = 0; c < l.outs.size(); ++c) {
    const std::uint64_t e = base + reg::kOutMap + c * reg::kOutMapStride;
    write(p, e + reg::kOutBaseLow, static_cast<std::uint32_t>(l.outs[c].base), n + ": out lo");
    write(p, e + reg::kOutBaseHigh, static_cast<std::uint32_t>(l.outs[c].base >> 32),
          n + ": out hi");
    write(p, e + reg::kOutOp, l.outs[c].op, n + ": out op");
    write(p, e + reg::kOutFlags, l.outs[c].flags, n + ": out flags");
  }
  write(p, base + reg::kDoorbell, 1, n + ": doorbell");
  p.commands.push_back({HostCommand::Kind::WaitKernel, base, 0, n});
}

// Loads one fp16 GEMM of m x n x k on tm x tn x tk tiles into a bench's host: A at 0, B at 16 MiB
// and the output at 32 MiB of its HBM.
void load_gemm(Bench& bench, std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t tm,
               std::int64_t tn, std::int64_t tk) {
  Launch l{};
  l.m = m, l.n = n, l.k = k, l.tile_m = tm, l.tile_n = tn, l.tile_k = tk;
  l.element = ElementType::Fp16, l.out_element = ElementType::Fp16;
  l.a = bench.hbm(0), l.b = bench.hbm(16 << 20);
  l.outs = {{bench.hbm(32 << 20)}};
  Program program;
  append_launch(program, bench.dispatcher_base(), l);
  bench.host.load(program);
}

// The dispatch order the test expects, from the definitions of the orders.
std::vector<std::int64_t> expected_order(std::int64_t rows, std::int64_t cols, WgOrder order,
                                         std::int64_t chunks, std::int64_t first) {
  std::vector<std::int64_t> ids;
  if (order == WgOrder::ColumnMajor) {
    for (std::int64_t c = 0; c < cols; ++c) {
      for (std::int64_t r = 0; r < rows; ++r) ids.push_back(r * cols + c);
    }
    return ids;
  }
  if (order == WgOrder::RowMajor) chunks = 1, first = 0;
  for (std::int64_t i = 0; i < chunks; ++i) {
    const std::int64_t chunk = (first + i) % chunks;
    for (std::int64_t r = band_start(chunk, rows, chunks); r < band_start(chunk + 1, rows, chunks);
         ++r) {
      for (std::int64_t c = 0; c < cols; ++c) ids.push_back(r * cols + c);
    }
  }
  return ids;
}

std::vector<std::int64_t> tiles_of_launch(const Dispatcher& d, std::uint64_t launch) {
  std::vector<std::int64_t> ids;
  for (const auto& r : d.dispatched()) {
    if (r.launch == launch) ids.push_back(r.tile);
  }
  return ids;
}

// ---- Functional GEMM for every WG order -------------------------------------------------------

struct Shape {
  std::int64_t m, n, k, tm, tn, tk;
  ElementType element = ElementType::Fp32;
  ElementType out_element = ElementType::Fp32;
};

// One launch per WG order, each into its own C; C must equal the reference every time.
void functional_gemm(const Shape& s, std::int64_t gemm_stages = 2) {
  Setup setup = small_setup();
  setup.sm.gemm_stages = gemm_stages;
  Bench bench("gpu0", setup);
  const Matrix a = make_matrix(s.m, s.k, 1), b = make_matrix(s.k, s.n, 2);
  const Matrix expected = reference(a, b);
  const std::uint64_t eb = element_bytes(s.element), ob = element_bytes(s.out_element);
  const std::uint64_t a_addr = bench.hbm(0x10000);
  const std::uint64_t b_addr = a_addr + ((s.m * s.k * eb + 4095) / 4096 + 1) * 4096;
  const std::uint64_t c_addr = b_addr + ((s.k * s.n * eb + 4095) / 4096 + 1) * 4096;
  const std::uint64_t c_stride = ((s.m * s.n * ob + 4095) / 4096 + 1) * 4096;
  bench.at_start = [&](Bench& self) {
    put(self, a_addr, a, s.tm, s.tk, s.element);
    put(self, b_addr, b, s.tk, s.tn, s.element);
  };
  const std::int64_t grid_rows = ceil_div(s.m, s.tm), grid_cols = ceil_div(s.n, s.tn);
  const std::vector<WgOrder> orders = {WgOrder::RowMajor, WgOrder::ColumnMajor,
                                       WgOrder::ChunkStaggered};
  // The staggered launch splits C into 2 chunks (when it has 2 tile rows) whose buffers lie one
  // after the other, which is C's own tile-contiguous layout; chunk 1 goes first.
  const std::int64_t chunks = std::min<std::int64_t>(2, grid_rows);
  Program program;
  for (std::size_t i = 0; i < orders.size(); ++i) {
    Launch l{};
    l.m = static_cast<std::uint32_t>(s.m), l.n = static_cast<std::uint32_t>(s.n);
    l.k = static_cast<std::uint32_t>(s.k);
    l.tile_m = static_cast<std::uint32_t>(s.tm), l.tile_n = static_cast<std::uint32_t>(s.tn);
    l.tile_k = static_cast<std::uint32_t>(s.tk);
    l.element = s.element, l.out_element = s.out_element;
    l.order = orders[i];
    l.a = a_addr, l.b = b_addr;
    const std::uint64_t c = c_addr + i * c_stride;
    if (orders[i] == WgOrder::ChunkStaggered) {
      l.chunks = static_cast<std::uint32_t>(chunks);
      l.first_chunk = static_cast<std::uint32_t>(chunks - 1);
      for (std::int64_t ch = 0; ch < chunks; ++ch) {
        const std::int64_t row0 = std::min(s.m, band_start(ch, grid_rows, chunks) * s.tm);
        l.outs.push_back({c + static_cast<std::uint64_t>(row0 * s.n) * ob});
      }
    } else {
      l.outs.push_back({c});
    }
    l.note = "gemm order " + std::to_string(i);
    append_launch(program, bench.dispatcher_base(), l);
  }
  expect(program, bench.dispatcher_base() + reg::kLaunches, 3, "three launches");
  expect(program, bench.dispatcher_base() + reg::kStatus, reg::kDone, "status done");
  expect(program, bench.dispatcher_base() + reg::kCompletedWgs,
         static_cast<std::uint32_t>(grid_rows * grid_cols), "WGs of the last launch");
  bench.host.load(program);
  sc_core::sc_start();

  INFO("shape " << s.m << "x" << s.n << "x" << s.k << ", tiles " << s.tm << "x" << s.tn << "x"
                << s.tk);
  REQUIRE(bench.host.error() == "");
  REQUIRE(bench.host.done());
  for (std::size_t i = 0; i < orders.size(); ++i) {
    INFO("order " << i);
    const Matrix c = get(bench, c_addr + i * c_stride, s.m, s.n, s.tm, s.tn, s.out_element);
    CHECK(c.v == expected.v);
    CHECK(tiles_of_launch(bench.dispatcher, i) ==
          expected_order(grid_rows, grid_cols, orders[i], chunks, chunks - 1));
  }
  // Every byte an SM read or wrote, from the tiling: each tile reads its A block-row and B
  // block-column once, and writes itself once.
  const SmStats total = bench.total();
  CHECK(total.wgs == static_cast<std::uint64_t>(3 * grid_rows * grid_cols));
  CHECK(total.bytes_read ==
        3 * static_cast<std::uint64_t>(s.m * s.k * grid_cols + s.k * s.n * grid_rows) * eb);
  CHECK(total.bytes_written == 3 * static_cast<std::uint64_t>(s.m * s.n) * ob);
  CHECK(total.faults == 0);
  CHECK(bench.memory.pending() == 0);
  CHECK(bench.irq[0].read() == false);
}

}  // namespace

TEST_CASE("SM GEMM functional, square, exact for every WG order", "[sm][gemm]") {
  functional_gemm({128, 128, 128, 32, 32, 16});
}

TEST_CASE("SM GEMM functional, skinny, exact for every WG order", "[sm][gemm]") {
  functional_gemm({256, 32, 64, 32, 32, 16});
}

TEST_CASE("SM GEMM functional, K smaller than a K step, exact for every WG order", "[sm][gemm]") {
  functional_gemm({96, 96, 8, 32, 32, 16});
}

TEST_CASE("SM GEMM functional, sizes not multiples of the tiles, fp16 in, exact for every WG order",
          "[sm][gemm]") {
  functional_gemm({100, 70, 45, 32, 32, 16, ElementType::Fp16, ElementType::Fp32});
}

TEST_CASE("SM GEMM functional, bf16 in and fp16 out, exact", "[sm][gemm]") {
  functional_gemm({64, 48, 40, 32, 16, 16, ElementType::Bf16, ElementType::Fp16});
}

TEST_CASE("SM GEMM functional with a four-stage pipeline, exact", "[sm][gemm]") {
  // Three K-steps in flight at once, each into its own stage buffer: a step read into the wrong
  // buffer, or computed before its reads are back, changes C.
  functional_gemm({96, 64, 200, 32, 32, 16, ElementType::Fp16, ElementType::Fp32}, 4);
}

TEST_CASE("SM GEMM functional with more stages than K-steps, exact", "[sm][gemm]") {
  functional_gemm({64, 64, 24, 32, 32, 16}, 4);
}

TEST_CASE("SM GEMM pipeline stages hide memory latency", "[sm][gemm][timing]") {
  // Memory far slower to answer than a K-step takes to compute, with bandwidth to spare: a
  // workgroup with s stages has s - 1 steps in flight, so each step's wait for its operands is
  // about the latency over s - 1.
  // One design per stage count, both elaborated before the one sc_start.
  const auto setup_with = [](std::int64_t stages) {
    Setup setup = small_setup(SimMode::Timing);
    setup.sm.request_bytes = 16384;
    setup.sm.max_inflight_bytes = 1 << 20;
    setup.sm.gemm_stages = stages;
    setup.hbm.model = HbmModel::Simple;  // a fixed latency per access
    setup.hbm.channels = 32;
    setup.hbm.bandwidth_GBps = 100000;
    setup.hbm.latency_ns = 4000;
    return setup;
  };
  Bench two("two", setup_with(2));
  Bench four("four", setup_with(4));
  for (Bench* bench : {&two, &four}) load_gemm(*bench, 256, 256, 1024, 64, 64, 32);
  sc_core::sc_start();
  REQUIRE(two.host.error() == "");
  REQUIRE(four.host.error() == "");
  const auto busy_ns = [](const Bench& bench) {
    const LaunchRecord& launch = bench.dispatcher.launches().at(0);
    return (launch.end - launch.start).to_seconds() * 1e9;
  };
  const double double_buffered = busy_ns(two);
  const double four_stages = busy_ns(four);
  INFO("2 stages " << double_buffered << " ns, 4 stages " << four_stages << " ns");
  // 32 steps per tile, two tiles per slot: about 64 latencies with 2 stages, about 23 with 4
  // (each tile's first three steps wait one latency together, then a step per third of one).
  CHECK(double_buffered > 60 * 4000.0);
  CHECK(four_stages < 0.45 * double_buffered);
  CHECK(four_stages > 0.3 * double_buffered);
}

TEST_CASE("SM GEMM output map: one chunk stored, one updated onto existing data", "[sm][gemm]") {
  const Setup setup = small_setup();
  Bench bench("gpu0", setup);
  const std::int64_t m = 128, n = 64, k = 32, tm = 32, tn = 32, tk = 16;
  const std::int64_t grid_rows = m / tm, grid_cols = n / tn, chunks = 2;
  const Matrix a = make_matrix(m, k, 3), b = make_matrix(k, n, 4);
  const Matrix c = reference(a, b);
  const std::uint64_t a_addr = bench.hbm(0x100000), b_addr = bench.hbm(0x200000);
  const std::uint64_t x = bench.hbm(0x300000), y = bench.hbm(0x400000);
  // Chunk bands: tile rows [band_start(ch), band_start(ch + 1)).
  const std::int64_t split = band_start(1, grid_rows, chunks) * tm;  // first row of chunk 1
  const std::int64_t y_rows = m - split;
  const Matrix prefill = make_matrix(y_rows, n, 5);
  bench.at_start = [&](Bench& self) {
    put(self, a_addr, a, tm, tk, ElementType::Fp32);
    put(self, b_addr, b, tk, tn, ElementType::Fp32);
    put(self, y, prefill, tm, tn, ElementType::Fp32);
  };
  Launch l{};
  l.m = m, l.n = n, l.k = k, l.tile_m = tm, l.tile_n = tn, l.tile_k = tk;
  l.order = WgOrder::ChunkStaggered, l.chunks = chunks, l.first_chunk = 0;
  l.a = a_addr, l.b = b_addr;
  l.outs = {{x, 0, reg::kUncached | reg::kTagged}, {y, 1, 0}};
  l.note = "gemm with output map";
  Program program;
  append_launch(program, bench.dispatcher_base(), l);
  bench.host.load(program);
  sc_core::sc_start();
  REQUIRE(bench.host.error() == "");

  // X holds chunk 0's rows as a (split x n) tile-contiguous matrix; Y = prefill + chunk 1's rows.
  const Matrix got_x = get(bench, x, split, n, tm, tn, ElementType::Fp32);
  const Matrix got_y = get(bench, y, y_rows, n, tm, tn, ElementType::Fp32);
  for (std::int64_t r = 0; r < split; ++r) {
    for (std::int64_t col = 0; col < n; ++col) REQUIRE(got_x.at(r, col) == c.at(r, col));
  }
  for (std::int64_t r = 0; r < y_rows; ++r) {
    for (std::int64_t col = 0; col < n; ++col) {
      REQUIRE(got_y.at(r, col) == prefill.at(r, col) + c.at(split + r, col));
    }
  }

  // What memory saw: reads cached and untagged; chunk 0 stored uncached with the tile id as tag,
  // covering each of its tiles exactly; chunk 1 updated (add, fp32), cached, untagged.
  std::map<std::uint32_t, std::uint64_t> tagged_bytes;
  std::uint64_t updated = 0;
  const std::uint64_t x_bytes = static_cast<std::uint64_t>(split * n) * 4;
  const std::uint64_t y_bytes = static_cast<std::uint64_t>(y_rows * n) * 4;
  for (const Access& acc : bench.probe.accesses) {
    const T3Extension& e = acc.extension;
    CHECK(e.traffic_class == TrafficClass::Compute);
    CHECK(e.unit_kind == UnitKind::Sm);
    CHECK(acc.bytes <= setup.sm.request_bytes);
    if (e.op == Op::Read) {
      CHECK(e.cache_hint == CacheHint::Cached);
      CHECK(e.tag == kNoTag);
    } else if (acc.address >= x && acc.address < x + x_bytes) {
      CHECK(e.op == Op::Write);
      CHECK(e.cache_hint == CacheHint::Uncached);
      REQUIRE(e.tag != kNoTag);
      const std::int64_t tile_row = e.tag / grid_cols, tile_col = e.tag % grid_cols;
      CHECK(tile_row < band_start(1, grid_rows, chunks));
      // The piece lies inside its tile's range of X.
      const std::uint64_t tile_begin =
          x + static_cast<std::uint64_t>(tiled(tile_row * tm, tile_col * tn, split, n, tm, tn)) * 4;
      CHECK(acc.address >= tile_begin);
      CHECK(acc.address + acc.bytes <= tile_begin + tm * tn * 4);
      tagged_bytes[e.tag] += acc.bytes;
    } else {
      REQUIRE(acc.address >= y);
      REQUIRE(acc.address + acc.bytes <= y + y_bytes);
      CHECK(e.op == Op::Update);
      CHECK(e.element == ElementType::Fp32);
      CHECK(e.cache_hint == CacheHint::Cached);
      CHECK(e.tag == kNoTag);
      updated += acc.bytes;
    }
  }
  CHECK(tagged_bytes.size() ==
        static_cast<std::size_t>(band_start(1, grid_rows, chunks) * grid_cols));
  for (const auto& [tag, bytes] : tagged_bytes)
    CHECK(bytes == static_cast<std::uint64_t>(tm * tn * 4));
  CHECK(updated == y_bytes);
  const auto& hbm = bench.memory.stats();
  CHECK(hbm.bytes[static_cast<int>(Op::Update)][0] == y_bytes);
  CHECK(hbm.bytes[static_cast<int>(Op::Write)][0] == x_bytes);
}

// Memory far faster than the math, so a GEMM's time is its launch and its tiles' math.
Setup compute_bound_setup() {
  Setup setup = small_setup(SimMode::Timing);
  setup.sm.request_bytes = 16384;
  setup.sm.launch_latency_ns = 2000;
  setup.hbm.channels = 32;
  setup.hbm.bandwidth_GBps = 100000;
  setup.hbm.latency_ns = 20;
  return setup;
}

TEST_CASE("SM GEMM compute-bound run takes the first-principles time, the same in both modes",
          "[sm][gemm][timing]") {
  // Memory far faster than the math: the run is launch latency plus waves of tiles, each SM's
  // pipe shared by its `occupancy` resident tiles.
  Setup setup = compute_bound_setup();
  Setup functional_setup = setup;
  functional_setup.mode = SimMode::Functional;
  Bench timing("timing", setup);
  Bench functional("functional", functional_setup);

  const std::int64_t m = 512, n = 256, k = 1024, tm = 64, tn = 64, tk = 32;
  const std::int64_t tiles = (m / tm) * (n / tn);
  const std::int64_t slots = setup.sm.count * setup.sm.occupancy;
  REQUIRE(tiles % slots == 0);  // whole waves
  const std::int64_t waves = tiles / slots;
  const double rate = setup.sm.flops_per_clock * setup.sm.clock_GHz * 1e9 * setup.sm.efficiency;
  const double tile_s = 2.0 * tm * tn * k / rate;  // one tile alone on an SM
  const double expected_ns = setup.sm.launch_latency_ns + waves * setup.sm.occupancy * tile_s * 1e9;

  for (Bench* bench : {&timing, &functional}) load_gemm(*bench, m, n, k, tm, tn, tk);
  sc_core::sc_start();
  REQUIRE(timing.host.error() == "");
  REQUIRE(functional.host.error() == "");

  const LaunchRecord& run = timing.dispatcher.launches().at(0);
  const double measured_ns = (run.end - run.doorbell).to_seconds() * 1e9;
  INFO("expected " << expected_ns << " ns, measured " << measured_ns << " ns");
  CHECK(measured_ns == Approx(expected_ns).epsilon(0.05));
  CHECK(measured_ns >= expected_ns);
  CHECK((run.start - run.doorbell) == sc_time(setup.sm.launch_latency_ns, SC_NS));
  // Same timing in both modes.
  const LaunchRecord& frun = functional.dispatcher.launches().at(0);
  CHECK(frun.end == run.end);
  CHECK(frun.doorbell == run.doorbell);
  // Each SM ran its share of tiles, its pipe busy for exactly their compute.
  for (const auto& sm : timing.sms) {
    CHECK(sm->stats().wgs == static_cast<std::uint64_t>(tiles / setup.sm.count));
    CHECK(sm->stats().pipe_busy.to_seconds() ==
          Approx(tiles / setup.sm.count * tile_s).margin(tiles * k / tk * 1e-12));  // ps rounding
  }
}

TEST_CASE("SM GEMM edge tiles: full-tile math costs whole tiles, extent only the inside",
          "[sm][gemm][timing]") {
  // Compute-bound, one workgroup per SM: 4 x 5 tiles of 64 x 64 on 4 SMs, the last tile column
  // 16 wide and the last of each tile's 32 K-steps 8 deep. With full-tile math (tensor cores'
  // fixed-shape MMAs on the zero-filled overhang) every tile costs a whole tile's 32 steps, so
  // the run is 5 whole tiles per SM; with extent the edge tiles cost their inside only.
  Setup setup = compute_bound_setup();
  setup.sm.occupancy = 1;
  Setup full_setup = setup;
  full_setup.sm.gemm_edge_math = GemmEdgeMath::FullTile;
  Bench extent("extent", setup);
  Bench full("full", full_setup);

  const std::int64_t m = 256, n = 4 * 64 + 16, k = 1000, tm = 64, tn = 64, tk = 32;
  const std::int64_t tiles = 4 * 5, steps = 32;
  for (Bench* bench : {&extent, &full}) load_gemm(*bench, m, n, k, tm, tn, tk);
  sc_core::sc_start();
  REQUIRE(extent.host.error() == "");
  REQUIRE(full.host.error() == "");

  const double rate = setup.sm.flops_per_clock * setup.sm.clock_GHz * 1e9 * setup.sm.efficiency;
  const double step_s = 2.0 * tm * tn * tk / rate;
  const auto pipe_busy_s = [](const Bench& bench) {
    double busy = 0;
    for (const auto& sm : bench.sms) busy += sm->stats().pipe_busy.to_seconds();
    return busy;
  };
  const double rounding = tiles * steps * 1e-12;  // ps per step
  CHECK(pipe_busy_s(full) == Approx(tiles * steps * step_s).margin(rounding));
  CHECK(pipe_busy_s(extent) == Approx(2.0 * m * n * k / rate).margin(rounding));
  // The unit the SM charges: a whole step for any overhang under full-tile math.
  GemmKernel gemm;
  gemm.tile_m = tm, gemm.tile_n = tn, gemm.tile_k = tk;
  CHECK(full.sms[0]->gemm_step_seconds(gemm, tm, 16, 8) == Approx(step_s));
  CHECK(extent.sms[0]->gemm_step_seconds(gemm, tm, 16, 8) == Approx(step_s * 16 / tn * 8 / tk));

  const auto run_ns = [](const Bench& bench) {
    const LaunchRecord& run = bench.dispatcher.launches().at(0);
    return (run.end - run.doorbell).to_seconds() * 1e9;
  };
  const double whole_tiles_ns = setup.sm.launch_latency_ns + 5 * steps * step_s * 1e9;
  INFO("full-tile " << run_ns(full) << " ns, extent " << run_ns(extent) << " ns, 5 whole tiles "
                    << whole_tiles_ns << " ns");
  CHECK(run_ns(full) >= whole_tiles_ns);
  CHECK(run_ns(full) == Approx(whole_tiles_ns).epsilon(0.05));
  CHECK(run_ns(extent) < 0.95 * run_ns(full));
}

TEST_CASE("GEMM residency: shared memory over the stages' A and B sub-tiles, within occupancy",
          "[sm][dispatch]") {
  // h100-8's figures: 228 KiB of shared memory, 256 x 128 tiles, K-steps of 64, fp16. A stage
  // holds (256 + 128) x 64 x 2 B = 48 KiB.
  SmConfig sm;
  sm.occupancy = 2;
  sm.max_inflight_bytes = 233472;
  GemmKernel gemm;
  gemm.tile_m = 256, gemm.tile_n = 128, gemm.tile_k = 64;
  gemm.element = ElementType::Fp16;
  sm.gemm_stages = 4;
  sm.gemm_smem_residency = false;  // no bound: occupancy
  CHECK(gemm_residency(sm, gemm) == 2);
  CHECK(gemm_slots(sm, gemm) == 1);
  sm.gemm_smem_residency = true;
  sm.gemm_stages = 4;  // 192 KiB: one fits
  CHECK(gemm_residency(sm, gemm) == 1);
  CHECK(gemm_slots(sm, gemm) == 2);
  sm.gemm_stages = 2;  // 96 KiB: two fit
  CHECK(gemm_residency(sm, gemm) == 2);
  CHECK(gemm_slots(sm, gemm) == 1);
  gemm.element = ElementType::Fp32;  // 192 KiB at 4 B an element: one fits
  CHECK(gemm_residency(sm, gemm) == 1);
  gemm.element = ElementType::Fp16;
  sm.max_inflight_bytes = 1024;  // not even one stage fits: still one (the launch runs)
  CHECK(gemm_residency(sm, gemm) == 1);
  sm.max_inflight_bytes = 233472;
  sm.occupancy = 4;  // two fit, of four slots: each takes two
  CHECK(gemm_residency(sm, gemm) == 2);
  CHECK(gemm_slots(sm, gemm) == 2);
  sm.occupancy = 3;  // two fit, of three slots: each takes two, so one runs at a time
  CHECK(gemm_slots(sm, gemm) == 2);
  sm.gemm_stages = 1;  // 48 KiB: four fit, capped at the three slots
  CHECK(gemm_residency(sm, gemm) == 3);
}

TEST_CASE("SM GEMM with one resident workgroup per SM: never two at once, same compute time",
          "[sm][gemm][timing]") {
  // Two benches of 4 SMs x 2 slots, memory far faster than the math. In `bounded` a workgroup's
  // two stages of 64 x 32 + 32 x 64 fp16 (16 KiB) leave no room for a second in 24 KiB of shared
  // memory; `unbounded` has none, so two share each SM's pipe.
  Setup setup = compute_bound_setup();
  setup.sm.max_inflight_bytes = 24576;
  Setup bounded_setup = setup;
  bounded_setup.sm.gemm_smem_residency = true;
  Bench bounded("bounded", bounded_setup);
  Bench unbounded("unbounded", setup);

  const std::int64_t m = 512, n = 256, k = 1024, tm = 64, tn = 64, tk = 32;
  const std::int64_t tiles = (m / tm) * (n / tn);
  for (Bench* bench : {&bounded, &unbounded}) load_gemm(*bench, m, n, k, tm, tn, tk);
  sc_core::sc_start();
  REQUIRE(bounded.host.error() == "");
  REQUIRE(unbounded.host.error() == "");

  // Most workgroups one SM ran at once.
  const auto most_at_once = [](const Bench& bench) {
    int most = 0;
    for (const auto& a : bench.dispatcher.dispatched()) {
      int at_once = 0;
      for (const auto& b : bench.dispatcher.dispatched()) {
        if (b.sm == a.sm && b.time <= a.time && a.time < b.end) ++at_once;
      }
      most = std::max(most, at_once);
    }
    return most;
  };
  CHECK(bounded.dispatcher.dispatched().size() == static_cast<std::size_t>(tiles));
  CHECK(most_at_once(bounded) == 1);
  CHECK(most_at_once(unbounded) == 2);
  // Compute-bound either way: each SM's pipe does its share of the tiles one after another.
  const double rate = setup.sm.flops_per_clock * setup.sm.clock_GHz * 1e9 * setup.sm.efficiency;
  const double tile_s = 2.0 * tm * tn * k / rate;
  const double expected_ns =
      setup.sm.launch_latency_ns + static_cast<double>(tiles / setup.sm.count) * tile_s * 1e9;
  for (const Bench* bench : {&bounded, &unbounded}) {
    const LaunchRecord& run = bench->dispatcher.launches().at(0);
    const double measured_ns = (run.end - run.doorbell).to_seconds() * 1e9;
    INFO(bench->name() << ": expected " << expected_ns << " ns, measured " << measured_ns);
    CHECK(measured_ns == Approx(expected_ns).epsilon(0.05));
    CHECK(measured_ns >= expected_ns);
  }
}

TEST_CASE("SM keeps requests in flight up to its capacity, at its port's rate", "[sm][timing]") {
  // Memory far faster than the SM's port and the math negligible: a GEMM is bound by how the SMs
  // issue. With room for one request at a time every request pays a memory round trip; with room
  // for many the load port stays busy.
  Setup setup = small_setup(SimMode::Timing);
  setup.sm.flops_per_clock = 1e7;
  setup.sm.issue_bytes_per_clock = 16;  // 22.4 GB/s per port at 1.4 GHz
  setup.hbm.channels = 32;
  setup.hbm.bandwidth_GBps = 100000;
  // The bandwidth-pipe HBM, whose every access takes latency_ns (the bound below).
  setup.hbm.model = HbmModel::Simple;
  setup.hbm.latency_ns = 200;
  Setup narrow_setup = setup;
  narrow_setup.sm.max_inflight_bytes = setup.sm.request_bytes;
  Setup wide_setup = setup;
  wide_setup.sm.max_inflight_bytes = 64 * setup.sm.request_bytes;
  Bench narrow("narrow", narrow_setup);
  Bench wide("wide", wide_setup);
  for (Bench* bench : {&narrow, &wide}) load_gemm(*bench, 256, 256, 1024, 64, 64, 64);
  sc_core::sc_start();
  REQUIRE(narrow.host.error() == "");
  REQUIRE(wide.host.error() == "");
  const double port_GBps = setup.sm.issue_bytes_per_clock * setup.sm.clock_GHz;
  // Bytes an SM read per ns of the kernel's run (from its first workgroup to its end).
  const auto read_rate = [](const Bench& bench, const Sm& sm) {
    const LaunchRecord& run = bench.dispatcher.launches().at(0);
    return static_cast<double>(sm.stats().bytes_read) / ((run.end - run.start).to_seconds() * 1e9);
  };
  for (const auto& sm : narrow.sms) {
    INFO(sm->report().dump());
    CHECK(sm->stats().max_inflight_bytes == static_cast<std::uint64_t>(setup.sm.request_bytes));
    // One request at a time, each at least the memory's latency.
    CHECK(read_rate(narrow, *sm) <= setup.sm.request_bytes / setup.hbm.latency_ns);
  }
  for (const auto& sm : wide.sms) {
    INFO(sm->report().dump());
    CHECK(sm->stats().max_inflight_bytes <=
          static_cast<std::uint64_t>(wide_setup.sm.max_inflight_bytes));
    CHECK(sm->stats().max_inflight_bytes >= 8 * static_cast<std::uint64_t>(setup.sm.request_bytes));
    CHECK(read_rate(wide, *sm) <= port_GBps);
    CHECK(read_rate(wide, *sm) > 0.7 * port_GBps);
  }
  const auto duration = [](const Bench& bench) {
    const LaunchRecord& run = bench.dispatcher.launches().at(0);
    return (run.end - run.start).to_seconds();
  };
  CHECK(duration(narrow) > 3 * duration(wide));
}

TEST_CASE(
    "Dispatcher chunk-staggered order dispatches chunk first_chunk first for 2, 4 and 8 chunks",
    "[sm][dispatch]") {
  const Setup setup = small_setup(SimMode::Timing);
  const std::int64_t m = 512, n = 128, k = 32, tm = 32, tn = 32, tk = 32;
  const std::int64_t grid_rows = m / tm, grid_cols = n / tn;
  struct Case {
    std::int64_t chunks, first;
    std::unique_ptr<Bench> bench;
  };
  std::vector<Case> cases;
  for (std::int64_t chunks : {2, 4, 8}) {
    Case c{chunks, chunks - 1,
           std::make_unique<Bench>(("gpu_" + std::to_string(chunks)).c_str(), setup)};
    Launch l{};
    l.m = m, l.n = n, l.k = k, l.tile_m = tm, l.tile_n = tn, l.tile_k = tk;
    l.order = WgOrder::ChunkStaggered;
    l.chunks = static_cast<std::uint32_t>(chunks);
    l.first_chunk = static_cast<std::uint32_t>(c.first);
    l.a = c.bench->hbm(0), l.b = c.bench->hbm(1 << 20);
    for (std::int64_t ch = 0; ch < chunks; ++ch) {
      l.outs.push_back({c.bench->hbm((2 << 20) + static_cast<std::uint64_t>(ch) * (1 << 20))});
    }
    Program program;
    append_launch(program, c.bench->dispatcher_base(), l);
    c.bench->host.load(program);
    cases.push_back(std::move(c));
  }
  sc_core::sc_start();

  const std::int64_t slots = setup.sm.count * setup.sm.occupancy;
  for (const Case& c : cases) {
    INFO(c.chunks << " chunks, first " << c.first);
    REQUIRE(c.bench->host.error() == "");
    const auto& records = c.bench->dispatcher.dispatched();
    REQUIRE(records.size() == static_cast<std::size_t>(grid_rows * grid_cols));
    const std::int64_t first_row = band_start(c.first, grid_rows, c.chunks);
    const std::int64_t end_row = band_start(c.first + 1, grid_rows, c.chunks);
    const std::int64_t in_first = (end_row - first_row) * grid_cols;
    for (std::int64_t i = 0; i < std::min(slots, in_first); ++i) {
      const std::int64_t row = records[static_cast<std::size_t>(i)].tile / grid_cols;
      CHECK(row >= first_row);
      CHECK(row < end_row);
    }
    CHECK(tiles_of_launch(c.bench->dispatcher, 0) ==
          expected_order(grid_rows, grid_cols, WgOrder::ChunkStaggered, c.chunks, c.first));
    // The first wave: one workgroup per slot, breadth-first over SMs, dispatch_ns apart from the
    // end of the launch latency.
    const LaunchRecord& run = c.bench->dispatcher.launches().at(0);
    for (std::int64_t i = 0; i < slots; ++i) {
      const DispatchRecord& r = records[static_cast<std::size_t>(i)];
      CHECK(r.sm == i % setup.sm.count);
      CHECK(r.time == run.doorbell + sc_time(setup.sm.launch_latency_ns, SC_NS) +
                          sc_time(static_cast<double>(i) * setup.sm.dispatch_ns, SC_NS));
    }
    // Later workgroups only go out when a slot frees: never more than `slots` in flight (and a
    // tile cannot finish before its own compute time has passed).
    const sc_time tile_compute(c.bench->sms[0]->step_seconds(tm, tn, k), sc_core::SC_SEC);
    CHECK(records[static_cast<std::size_t>(slots)].time - run.start >= tile_compute);
  }
}

TEST_CASE("Host launches a kernel through MMIO and observes its completion", "[host][sm]") {
  const Setup setup = small_setup(SimMode::Timing);
  Bench bench("gpu0", setup);
  Launch l{};
  l.m = 64, l.n = 64, l.k = 64, l.tile_m = 32, l.tile_n = 32, l.tile_k = 32;
  l.a = bench.hbm(0), l.b = bench.hbm(1 << 20);
  l.outs = {{bench.hbm(2 << 20)}};
  l.note = "gemm fc1";
  Program program;
  const std::uint64_t base = bench.dispatcher_base();
  expect(program, base + reg::kLaunches, 0, "no launch yet");
  append_launch(program, base, l);
  const std::size_t wait_index = program.commands.size() - 1;
  expect(program, base + reg::kLaunches, 1, "one launch");
  expect(program, base + reg::kStatus, reg::kDone, "status done");
  expect(program, base + reg::kError, reg::kNoError, "no error");
  expect(program, base + reg::kCompletedWgs, 4, "4 WGs completed");
  expect(program, base + reg::kDispatchedWgs, 4, "4 WGs dispatched");
  program.commands.push_back({HostCommand::Kind::Delay, 0, 1000, "idle"});
  bench.host.load(program);
  bool finished_event = false;
  sc_core::sc_spawn([&] {
    sc_core::wait(bench.host.finished);
    finished_event = true;
  });
  sc_core::sc_start();
  REQUIRE(bench.host.error() == "");
  CHECK(bench.host.done());
  CHECK(finished_event);
  const auto& times = bench.host.finish_times();
  REQUIRE(times.size() == program.commands.size());
  const LaunchRecord& run = bench.dispatcher.launches().at(0);
  CHECK(run.status == reg::kDone);
  CHECK(times[wait_index] >= run.end);
  CHECK(times[wait_index - 1] == run.doorbell + sc_time(setup.mmio_ns + setup.router_ns, SC_NS));
  CHECK(times.back() - times[times.size() - 2] == sc_time(1000, SC_NS));
  CHECK(bench.irq[0].read() == false);
  CHECK(bench.dispatcher.dispatched().size() == 4);
}

TEST_CASE("Host: launches with M = 0 or an unmapped A are rejected and nothing runs",
          "[host][sm]") {
  const Setup setup = small_setup(SimMode::Timing);
  Bench zero("zero", setup, 0);
  Bench unmapped("unmapped", setup, 1);
  std::size_t commands = 0;
  for (Bench* bench : {&zero, &unmapped}) {
    Launch l{};
    l.m = bench == &zero ? 0 : 64;
    l.n = 64, l.k = 64, l.tile_m = 32, l.tile_n = 32, l.tile_k = 32;
    // GPU 1's window: the map has one GPU, so nobody owns it.
    l.a = bench == &zero ? bench->hbm(0) : bench->map.hbm_base(0) + (1ull << 40);
    l.b = bench->hbm(1 << 20);
    l.outs = {{bench->hbm(2 << 20)}};
    l.note = bench == &zero ? "gemm empty" : "gemm fc2";
    Program program;
    append_launch(program, bench->dispatcher_base(), l);
    expect(program, bench->dispatcher_base() + reg::kLaunches, 0, "never reached");
    commands = program.commands.size();
    bench->host.load(program);
  }
  REQUIRE_FALSE(unmapped.map.decode(unmapped.map.hbm_base(0) + (1ull << 40)).has_value());
  sc_core::sc_start();

  const std::string at = " [dispatcher at " + hex(zero.dispatcher_base()) + "]";
  CHECK(zero.host.error() ==
        "gpu0: launch 'gemm empty': dispatcher rejected the kernel: zero size (error 1)" + at);
  CHECK(unmapped.host.error() ==
        "gpu1: launch 'gemm fc2': dispatcher rejected the kernel: unmapped buffer (error 3)" + at);
  for (Bench* bench : {&zero, &unmapped}) {
    CHECK_FALSE(bench->host.done());
    CHECK(bench->dispatcher.dispatched().empty());
    CHECK(bench->dispatcher.status() == reg::kFailed);
    CHECK(bench->total().bytes_read == 0);
    CHECK(bench->memory.stats().requests[0][0] == 0);
    // Everything up to the doorbell ran; the WaitKernel failed and the expect after it never ran.
    CHECK(bench->host.finish_times().size() == commands - 2);
  }
  CHECK(zero.dispatcher.error() == reg::kZeroSize);
  CHECK(unmapped.dispatcher.error() == reg::kUnmappedBuffer);
}

TEST_CASE("Host stops at an MMIO error, an expectation mismatch, or a busy doorbell",
          "[host][sm]") {
  const Setup setup = small_setup(SimMode::Timing);
  Bench bad_write("bad_write", setup, 0);
  Bench mismatch("mismatch", setup, 1);
  Bench busy("busy", setup, 2);
  const std::uint64_t unmapped_register = bad_write.dispatcher_base() + 0x0f00;
  {
    Program p;
    write(p, bad_write.dispatcher_base() + reg::kM, 64, "set M");
    write(p, unmapped_register, 1, "poke nothing");
    write(p, bad_write.dispatcher_base() + reg::kN, 64, "set N");
    bad_write.host.load(p);
  }
  {
    Program p;
    expect(p, mismatch.dispatcher_base() + reg::kLaunches, 5, "five launches");
    mismatch.host.load(p);
  }
  {
    // Long enough (128 K steps per tile) to be running when the second doorbell rings.
    Launch l{};
    l.m = 64, l.n = 64, l.k = 4096, l.tile_m = 32, l.tile_n = 32, l.tile_k = 32;
    l.a = busy.hbm(0), l.b = busy.hbm(4 << 20);
    l.outs = {{busy.hbm(8 << 20)}};
    l.note = "first";
    Program p;
    append_launch(p, busy.dispatcher_base(), l);
    p.commands.pop_back();  // ring again without waiting
    write(p, busy.dispatcher_base() + reg::kDoorbell, 1, "second doorbell");
    p.commands.push_back({HostCommand::Kind::WaitKernel, busy.dispatcher_base(), 0, "second"});
    busy.host.load(p);
  }
  sc_core::sc_start();
  CHECK(bad_write.host.error() == "gpu0: write 'poke nothing': MMIO write of 0x1 at " +
                                      hex(unmapped_register) +
                                      " failed: TLM_ADDRESS_ERROR_RESPONSE");
  CHECK(bad_write.host.finish_times().size() == 1);
  CHECK(mismatch.host.error() == "gpu1: expect 'five launches': register at " +
                                     hex(mismatch.dispatcher_base() + reg::kLaunches) +
                                     " reads 0 (0x0), expected 5 (0x5)");
  CHECK(busy.host.error() ==
        "gpu2: launch 'second': dispatcher rejected the kernel: busy (error "
        "5) [dispatcher at " +
            hex(busy.dispatcher_base()) + "]");
  // The running kernel was not disturbed: it ran to the end.
  const auto& launches = busy.dispatcher.launches();
  REQUIRE(launches.size() == 2);
  CHECK(launches[0].status == reg::kDone);
  CHECK(launches[1].error == reg::kBusy);
  CHECK(busy.dispatcher.dispatched().size() == 4);
  CHECK(busy.total().wgs == 4);
}

TEST_CASE("SM: a store nobody answers fails the kernel with a memory fault", "[host][sm]") {
  Setup setup = small_setup(SimMode::Timing);
  setup.gpus = 2;  // GPU 1's window exists in the map, but this bench has no route to it
  Bench bench("gpu0", setup);
  Launch l{};
  l.m = 64, l.n = 64, l.k = 64, l.tile_m = 32, l.tile_n = 32, l.tile_k = 32;
  l.a = bench.hbm(0), l.b = bench.hbm(1 << 20);
  const std::uint64_t remote = bench.map.hbm_base(1);
  l.outs = {{remote}};
  l.note = "gemm remote";
  Program p;
  append_launch(p, bench.dispatcher_base(), l);
  bench.host.load(p);
  sc_core::sc_start();
  const std::string error = bench.host.error();
  CHECK(error.rfind("gpu0: launch 'gemm remote': the kernel failed: memory fault (error 6) at 0x",
                    0) == 0);
  CHECK(bench.dispatcher.error() == reg::kMemoryFault);
  // Stores are posted: every request of a tile's store is in flight before the first fault comes
  // back, so each of the 4 tiles (32 x 32 fp32 = 4 KiB) faults in all its request_bytes pieces.
  const std::uint64_t pieces_per_tile = 32 * 32 * 4 / setup.sm.request_bytes;
  REQUIRE(pieces_per_tile == 4);
  CHECK(bench.router.address_error_count() == 4 * pieces_per_tile);
  CHECK(bench.dispatcher.launches().at(0).status == reg::kFailed);
}

TEST_CASE("Host barrier releases both hosts only when both arrived", "[host]") {
  const Setup setup = small_setup(SimMode::Timing);
  Bench gpu0("gpu0", setup, 0);
  Bench gpu1("gpu1", setup, 1);
  HostBarrier barrier("barrier", 2);
  gpu0.host.barrier(barrier);
  gpu1.host.barrier(barrier);
  using Kind = HostCommand::Kind;
  std::size_t first_barrier[2], second_barrier[2];
  for (int g = 0; g < 2; ++g) {
    Bench& bench = g == 0 ? gpu0 : gpu1;
    Launch l{};
    l.m = 64, l.n = 64, l.k = 64 * (g + 1), l.tile_m = 32, l.tile_n = 32, l.tile_k = 32;
    l.a = bench.hbm(0), l.b = bench.hbm(1 << 20);
    l.outs = {{bench.hbm(2 << 20)}};
    Program p;
    append_launch(p, bench.dispatcher_base(), l);
    // GPU 0 arrives late at barrier 1, GPU 1 late at barrier 2.
    if (g == 0) p.commands.push_back({Kind::Delay, 0, 5000, "late"});
    first_barrier[g] = p.commands.size();
    p.commands.push_back({Kind::Barrier, 0, 1, "after the GEMM"});
    if (g == 1) p.commands.push_back({Kind::Delay, 0, 700, "late"});
    second_barrier[g] = p.commands.size();
    p.commands.push_back({Kind::Barrier, 0, 2, "second"});
    bench.host.load(p);
  }
  sc_core::sc_start();
  REQUIRE(gpu0.host.error() == "");
  REQUIRE(gpu1.host.error() == "");
  const auto& t0 = gpu0.host.finish_times();
  const auto& t1 = gpu1.host.finish_times();
  const sc_time arrive0 = t0[first_barrier[0] - 1], arrive1 = t1[first_barrier[1] - 1];
  CHECK(arrive1 < arrive0);
  CHECK(t0[first_barrier[0]] == arrive0);  // the later arrival releases both
  CHECK(t1[first_barrier[1]] == arrive0);
  const sc_time again0 = t0[second_barrier[0] - 1], again1 = t1[second_barrier[1] - 1];
  CHECK(again1 == arrive0 + sc_time(700, SC_NS));
  CHECK(again0 < again1);
  CHECK(t0[second_barrier[0]] == again1);
  CHECK(t1[second_barrier[1]] == again1);
  CHECK(barrier.releases(1) == 1);
  CHECK(barrier.releases(2) == 1);
  CHECK(barrier.waiting(1) == 0);
}

TEST_CASE("Dispatcher register map matches dispatcher_registers.h", "[sm][dispatch]") {
  const Setup setup = small_setup(SimMode::Timing);
  const AddressMap map(AddressMapConfig{}, 1, setup.hbm.capacity_bytes);
  Dispatcher d("dispatcher", setup.sm, map, 0, sc_time(10, SC_NS));
  const auto regs = d.register_map();
  const std::vector<std::tuple<std::uint64_t, const char*, bool>> expected = {
      {reg::kStatus, "STATUS", false},
      {reg::kError, "ERROR", false},
      {reg::kDoorbell, "DOORBELL", true},
      {reg::kIrqAck, "IRQ_ACK", true},
      {reg::kKernel, "KERNEL", true},
      {reg::kM, "M", true},
      {reg::kN, "N", true},
      {reg::kK, "K", true},
      {reg::kTileM, "TILE_M", true},
      {reg::kTileN, "TILE_N", true},
      {reg::kTileK, "TILE_K", true},
      {reg::kElement, "ELEMENT", true},
      {reg::kOutElement, "OUT_ELEMENT", true},
      {reg::kWgOrder, "WG_ORDER", true},
      {reg::kChunks, "CHUNKS", true},
      {reg::kFirstChunk, "FIRST_CHUNK", true},
      {reg::kALow, "A_LO", true},
      {reg::kAHigh, "A_HI", true},
      {reg::kBLow, "B_LO", true},
      {reg::kBHigh, "B_HI", true},
      {reg::kCompletedWgs, "COMPLETED_WGS", false},
      {reg::kLaunches, "LAUNCHES", false},
      {reg::kDispatchedWgs, "DISPATCHED_WGS", false},
      {reg::kFaultLow, "FAULT_LO", false},
      {reg::kFaultHigh, "FAULT_HI", false},
      {reg::kSmFirst, "SM_FIRST", true},
      {reg::kSmCount, "SM_COUNT", true}};
  for (const auto& [offset, name, writable] : expected) {
    INFO(name);
    REQUIRE(regs.count(offset) == 1);
    CHECK(regs.at(offset).name == name);
    CHECK(regs.at(offset).writable == writable);
  }
  for (int c = 0; c < reg::kMaxChunks; ++c) {
    const std::uint64_t e = reg::kOutMap + static_cast<std::uint64_t>(c) * reg::kOutMapStride;
    const std::string prefix = "OUT" + std::to_string(c);
    CHECK(regs.at(e + reg::kOutBaseLow).name == prefix + "_BASE_LO");
    CHECK(regs.at(e + reg::kOutBaseHigh).name == prefix + "_BASE_HI");
    CHECK(regs.at(e + reg::kOutOp).name == prefix + "_OP");
    CHECK(regs.at(e + reg::kOutFlags).name == prefix + "_FLAGS");
  }
  // Nine control registers per hardware queue.
  for (int q = 0; q < reg::kQueues; ++q) {
    const std::string prefix = "Q" + std::to_string(q) + "_";
    CHECK(regs.at(reg::queue_register(q, reg::kQueueStatus)).name == prefix + "STATUS");
    CHECK(regs.at(reg::queue_register(q, reg::kQueueDoorbell)).name == prefix + "DOORBELL");
    CHECK(regs.at(reg::queue_register(q, reg::kQueuePriority)).writable);
    CHECK(regs.at(reg::queue_register(q, reg::kQueueFaultHigh)).name == prefix + "FAULT_HI");
  }
  // The streaming kernel's descriptor.
  const std::vector<std::pair<std::uint64_t, const char*>> stream = {
      {reg::kStreamSrcLow, "STREAM_SRC_LO"},
      {reg::kStreamSrcHigh, "STREAM_SRC_HI"},
      {reg::kStreamReadBytesLow, "STREAM_READ_BYTES_LO"},
      {reg::kStreamReadBytesHigh, "STREAM_READ_BYTES_HI"},
      {reg::kStreamDstLow, "STREAM_DST_LO"},
      {reg::kStreamDstHigh, "STREAM_DST_HI"},
      {reg::kStreamWriteBytesLow, "STREAM_WRITE_BYTES_LO"},
      {reg::kStreamWriteBytesHigh, "STREAM_WRITE_BYTES_HI"},
      {reg::kStreamWorkgroups, "STREAM_WORKGROUPS"},
      {reg::kStreamOps, "STREAM_OPS"},
      {reg::kStreamFlopsLow, "STREAM_FLOPS_LO"},
      {reg::kStreamFlopsHigh, "STREAM_FLOPS_HI"},
      {reg::kStreamOutFlags, "STREAM_OUT_FLAGS"},
      {reg::kStreamStepBytes, "STREAM_STEP_BYTES"}};
  for (const auto& [offset, name] : stream) {
    INFO(name);
    REQUIRE(regs.count(offset) == 1);
    CHECK(regs.at(offset).name == name);
    CHECK(regs.at(offset).writable);
  }
  // COLL_*: 27 of one ring, COLL_RINGS and COLL_STRIDE, COLL_MULTICAST (NVLS ops), and 7 per entry
  // of the ring table.
  const std::size_t collective = 27 + 2 + 1 + 7 * (reg::kMaxRings - 1);
  CHECK(regs.size() == expected.size() + 4 * reg::kMaxChunks + collective + stream.size() +
                           reg::kMailboxWords + 9 * reg::kQueues);
}

namespace {

// A streaming kernel's descriptor (dispatcher_registers.h), doorbell, then WaitKernel.
void append_stream(Program& p, std::uint64_t base, std::uint64_t src, std::uint64_t read,
                   std::uint64_t dst, std::uint64_t written, std::uint32_t workgroups,
                   std::uint32_t element, const std::string& n) {
  const auto write64 = [&](std::uint64_t offset, std::uint64_t value, const std::string& what) {
    write(p, base + offset, static_cast<std::uint32_t>(value), n + ": " + what + " low");
    write(p, base + offset + 4, static_cast<std::uint32_t>(value >> 32), n + ": " + what + " high");
  };
  write(p, base + reg::kKernel, reg::kStream, n + ": kernel");
  write(p, base + reg::kElement, element, n + ": element");
  write64(reg::kStreamSrcLow, src, "src");
  write64(reg::kStreamReadBytesLow, read, "read bytes");
  write64(reg::kStreamDstLow, dst, "dst");
  write64(reg::kStreamWriteBytesLow, written, "write bytes");
  write(p, base + reg::kStreamWorkgroups, workgroups, n + ": workgroups");
  write(p, base + reg::kStreamOutFlags, reg::kUncached, n + ": uncached output");
  write(p, base + reg::kDoorbell, 1, n + ": doorbell");
  p.commands.push_back({HostCommand::Kind::WaitKernel, base, 0, n});
}

}  // namespace

TEST_CASE("SM streaming kernel: each workgroup moves its share, in functional mode a copy",
          "[sm][stream]") {
  const Setup setup = small_setup(SimMode::Functional);
  Bench bench("gpu0", setup);
  // 100003 fp16 elements over 11 workgroups: uneven shares, several steps each.
  const std::uint64_t bytes = 2 * 100003;
  std::vector<unsigned char> input(bytes);
  for (std::size_t i = 0; i < bytes; ++i) input[i] = static_cast<unsigned char>(i * 7 + i / 251);
  bench.at_start = [&](Bench& b) { b.debug_access(true, b.hbm(0), input.data(), bytes); };
  Program program;
  append_stream(program, bench.dispatcher_base(), bench.hbm(0), bytes, bench.hbm(1 << 20), bytes,
                11, 1, "copy");
  bench.host.load(program);
  sc_core::sc_start();
  REQUIRE(bench.host.error() == "");
  CHECK(bench.dispatcher.dispatched().size() == 11);
  CHECK(bench.total().bytes_read == bytes);
  CHECK(bench.total().bytes_written == bytes);
  std::vector<unsigned char> output(bytes);
  bench.debug_access(false, bench.hbm(1 << 20), output.data(), bytes);
  CHECK(output == input);
}

TEST_CASE("SM streaming kernel: a bad descriptor is rejected and nothing runs", "[sm][stream]") {
  const Setup setup = small_setup(SimMode::Timing);
  Bench empty("empty", setup, 0);
  Bench odd("odd", setup, 1);
  Bench unmapped("unmapped", setup, 2);
  const auto load = [](Bench& b, std::uint64_t read, std::uint64_t dst, std::uint32_t workgroups,
                       const std::string& n) {
    Program program;
    append_stream(program, b.dispatcher_base(), b.hbm(0), read, dst, 4096, workgroups, 1, n);
    b.host.load(program);
  };
  load(empty, 4096, empty.hbm(1 << 20), 0, "empty");  // no workgroups
  load(odd, 4095, odd.hbm(1 << 20), 4, "odd");        // not whole fp16 elements
  load(unmapped, 4096, unmapped.map.hbm_base(0) + (1ull << 40), 4, "unmapped");
  sc_core::sc_start();
  CHECK(empty.dispatcher.error() == reg::kZeroSize);
  CHECK(odd.dispatcher.error() == reg::kBadKernel);
  CHECK(unmapped.dispatcher.error() == reg::kUnmappedBuffer);
  for (Bench* bench : {&empty, &odd, &unmapped}) {
    CHECK(bench->dispatcher.dispatched().empty());
    CHECK(bench->total().bytes_read == 0);
  }
}

TEST_CASE("SM streaming kernel: STREAM_STEP_BYTES is a workgroup's reads in flight, for one launch",
          "[sm][stream]") {
  const Setup setup = small_setup(SimMode::Timing);
  Bench stepped("stepped", setup, 0);    // one launch of 2 KiB steps
  Bench fair("fair", setup, 1);          // one launch of the slot's share
  Bench again("again", setup, 2);        // 2 KiB steps, then a launch that does not say
  Bench odd_step("odd_step", setup, 3);  // a step that is not whole fp16 elements
  const std::uint64_t read = 64 << 10;   // no output: only reads are in flight
  const auto launch = [&](Program& p, Bench& b, std::uint32_t step, const std::string& n) {
    if (step > 0) write(p, b.dispatcher_base() + reg::kStreamStepBytes, step, n + ": step");
    append_stream(p, b.dispatcher_base(), b.hbm(0), read, b.hbm(1 << 20), 0, 1, 1, n);
  };
  const auto most_in_flight = [](const Bench& b) {
    std::uint64_t most = 0;
    for (const auto& sm : b.sms) most = std::max(most, sm->stats().max_inflight_bytes);
    return most;
  };
  Program p_stepped, p_fair, p_again, p_odd;
  launch(p_stepped, stepped, 2048, "stepped");
  launch(p_fair, fair, 0, "fair");
  launch(p_again, again, 2048, "again 1");
  launch(p_again, again, 0, "again 2");
  launch(p_odd, odd_step, 2047, "odd");
  stepped.host.load(p_stepped);
  fair.host.load(p_fair);
  again.host.load(p_again);
  odd_step.host.load(p_odd);
  sc_core::sc_start();
  CHECK(stepped.total().bytes_read == read);
  CHECK(most_in_flight(stepped) == 2048);
  CHECK(most_in_flight(fair) > 2048);
  CHECK(most_in_flight(again) == most_in_flight(fair));  // the second launch: the default again
  CHECK(odd_step.dispatcher.error() == reg::kBadKernel);
  CHECK(odd_step.dispatcher.dispatched().empty());
}
