// Memory controller and HBM behind its TLM socket: bandwidth, latency, interleaving, near-memory
// updates, arbitration, queue statistics, error responses, back-pressure and storage modes.
// Each case builds its own design and runs sc_start once (ctest runs every case in its process).
#define SC_INCLUDE_DYNAMIC_PROCESSES
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <vector>

#include <tlm_utils/simple_initiator_socket.h>
#include <systemc>
#include <tlm>

#include "models/hbm/memory_controller.h"
#include "models/hbm/policy/fcfs.h"
#include "models/hbm/policy/priority.h"
#include "models/hbm/request_queue.h"
#include "models/hbm/service_calendar.h"
#include "tlm_interconnect/element.h"

using namespace t3;
using sc_core::SC_NS;
using sc_core::sc_time;
using sc_core::sc_time_stamp;
using sc_core::SC_ZERO_TIME;

namespace {

// An initiator with a socket bound to one memory controller; test threads issue through it.
struct Bench : sc_core::sc_module {
  tlm_utils::simple_initiator_socket<Bench> socket;
  MemoryController mc;
  std::uint64_t base;

  Bench(sc_core::sc_module_name name, const HbmConfig& config, SimMode mode,
        std::uint64_t window_base = 0)
      : sc_core::sc_module(name),
        socket("socket"),
        mc("mc", config, mode, window_base),
        base(window_base) {
    socket.bind(mc.socket);
  }

  // A concurrent initiator thread; call before sc_start.
  static void thread(std::function<void()> body) { sc_core::sc_spawn(std::move(body)); }

  // One blocking access at window offset `offset`; `data` is used as the payload's buffer
  // (nullptr allowed in timing mode). Returns the response; `delay` is updated as by b_transport.
  tlm::tlm_response_status access(Op op, TrafficClass traffic_class, std::uint64_t offset,
                                  unsigned bytes, unsigned char* data = nullptr,
                                  ElementType element = ElementType::Fp32,
                                  sc_time* delay_out = nullptr, sc_time delay = SC_ZERO_TIME) {
    T3Extension extension;
    extension.op = op;
    extension.traffic_class = traffic_class;
    extension.element = element;
    tlm::tlm_generic_payload payload;  // owns (and deletes) the extension set on it
    prepare(payload, base + offset, bytes, data, extension);
    socket->b_transport(payload, delay);
    if (delay_out) *delay_out = delay;
    return payload.get_response_status();
  }

  static void prepare(tlm::tlm_generic_payload& payload, std::uint64_t address, unsigned bytes,
                      unsigned char* data, const T3Extension& extension) {
    payload.set_address(address);
    payload.set_data_ptr(data);
    payload.set_data_length(bytes);
    payload.set_streaming_width(bytes);
    payload.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    T3Extension::set(payload, extension);
  }

  unsigned debug(bool write, std::uint64_t offset, unsigned char* data, unsigned bytes) {
    tlm::tlm_generic_payload payload;
    payload.set_command(write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
    payload.set_address(base + offset);
    payload.set_data_ptr(data);
    payload.set_data_length(bytes);
    payload.set_streaming_width(bytes);
    return socket->transport_dbg(payload);
  }
};

// The bandwidth-pipe model, whose timing these cases derive by formula; the bank model has its
// own suite (test_bank.cpp).
HbmConfig simple_hbm() {
  HbmConfig config;
  config.model = HbmModel::Simple;
  return config;
}

// Data-bus time of `bytes` on one channel, from the configured aggregate bandwidth.
double transfer_ns(const HbmConfig& config, double bytes) {
  const double channel_bytes_per_ns = config.bandwidth_GBps / static_cast<double>(config.channels);
  return bytes / channel_bytes_per_ns;
}

sc_time ns(double value) {
  return sc_time(value, SC_NS);
}

// `threads` initiators stream `total` bytes in `bytes`-sized transactions: transaction i of the
// one sequential stream goes to thread i % threads. Returns the achieved bandwidth in GB/s.
double stream(Op op, const HbmConfig& config, int threads, unsigned bytes, std::uint64_t total,
              nlohmann::json* report = nullptr) {
  Bench bench("bench", config, SimMode::Timing);
  const std::uint64_t transactions = total / bytes;
  sc_time finished = SC_ZERO_TIME;
  int done = 0;
  for (int t = 0; t < threads; ++t) {
    Bench::thread([&, t] {
      for (std::uint64_t i = static_cast<std::uint64_t>(t); i < transactions;
           i += static_cast<std::uint64_t>(threads)) {
        REQUIRE(bench.access(op, TrafficClass::Compute, i * bytes, bytes) == tlm::TLM_OK_RESPONSE);
      }
      finished = std::max(finished, sc_time_stamp());
      ++done;
    });
  }
  sc_core::sc_start();
  REQUIRE(done == threads);
  REQUIRE(bench.mc.pending() == 0);
  CHECK(bench.mc.stats().bytes[static_cast<int>(op)][0] == transactions * bytes);
  if (report) *report = bench.mc.report();
  return static_cast<double>(transactions * bytes) / (finished.to_seconds() * 1e9);
}

// Threads needed to keep every channel busy (Little's law: bandwidth x round-trip time over the
// bytes one thread has in flight), doubled so queues never run dry.
int threads_for(const HbmConfig& config, unsigned bytes) {
  const double round_trip_ns = config.latency_ns + transfer_ns(config, config.interleave_bytes);
  return static_cast<int>(std::ceil(2 * config.bandwidth_GBps * round_trip_ns / bytes));
}

}  // namespace

TEST_CASE("HBM streaming reads reach the configured bandwidth", "[hbm]") {
  const HbmConfig config = simple_hbm();  // 32 channels, 1000 GB/s, 100 ns
  const int threads = threads_for(config, 4096);
  nlohmann::json report;
  const double achieved = stream(Op::Read, config, threads, 4096, 32ull << 20, &report);
  INFO("threads " << threads << ", achieved " << achieved << " GB/s");
  CHECK(achieved == Approx(config.bandwidth_GBps).epsilon(0.02));
  CHECK(achieved <= config.bandwidth_GBps * (1 + 1e-9));  // never faster than the channels
  CHECK(report["utilisation"].get<double>() == Approx(1.0).epsilon(0.02));
}

TEST_CASE("HBM streaming writes reach the configured bandwidth", "[hbm]") {
  HbmConfig config = simple_hbm();
  config.channels = 16;
  config.bandwidth_GBps = 400;
  config.latency_ns = 60;
  const int threads = threads_for(config, 4096);
  const double achieved = stream(Op::Write, config, threads, 4096, 16ull << 20);
  INFO("threads " << threads << ", achieved " << achieved << " GB/s");
  CHECK(achieved == Approx(config.bandwidth_GBps).epsilon(0.02));
  CHECK(achieved <= config.bandwidth_GBps * (1 + 1e-9));
}

TEST_CASE("HBM stream with too few threads is latency bound", "[hbm]") {
  // One thread with one 4 KiB read in flight moves 4096 B per (latency + one granule's transfer):
  // the model must not hide latency it has no concurrency for.
  const HbmConfig config = simple_hbm();
  const double achieved = stream(Op::Read, config, 1, 4096, 1 << 20);
  const double expected = 4096 / (config.latency_ns + transfer_ns(config, 256));
  CHECK(achieved == Approx(expected).epsilon(1e-6));
}

TEST_CASE("HBM unloaded read latency is latency plus transfer time", "[hbm]") {
  const HbmConfig config = simple_hbm();  // 1000 GB/s over 32 channels = 31.25 B/ns per channel
  Bench bench("bench", config, SimMode::Timing);
  sc_time small_done, annotated_done, spanning_done, returned_delay;
  Bench::thread([&] {
    bench.access(Op::Read, TrafficClass::Compute, 0, 64, nullptr, ElementType::Fp32,
                 &returned_delay);
    small_done = sc_time_stamp();
    // Arrives 10 ns later than issued: the annotated delay is when it reaches the controller.
    const sc_time start = sc_time_stamp();
    bench.access(Op::Read, TrafficClass::Compute, 1024, 64, nullptr, ElementType::Fp32, nullptr,
                 ns(10));
    annotated_done = sc_time_stamp() - start;
    // Two granules on two channels move in parallel: one granule's transfer time.
    const sc_time start2 = sc_time_stamp();
    bench.access(Op::Read, TrafficClass::Compute, 4096, 512);
    spanning_done = sc_time_stamp() - start2;
  });
  sc_core::sc_start();
  // 64 B / 31.25 B/ns = 2.048 ns exactly; 256 B -> 8.192 ns.
  CHECK(small_done == ns(100) + ns(2.048));
  CHECK(small_done == ns(config.latency_ns + transfer_ns(config, 64)));
  CHECK(returned_delay == SC_ZERO_TIME);
  CHECK(annotated_done == ns(10) + ns(100) + ns(2.048));
  CHECK(spanning_done == ns(100) + ns(8.192));
}

TEST_CASE("HBM interleaving spreads a sequential stream evenly over channels", "[hbm]") {
  const HbmConfig config = simple_hbm();
  Bench bench("bench", config, SimMode::Timing);
  // An unaligned sequential stream of odd-sized transactions.
  const std::uint64_t start = 100, chunk = 1000, count = 300;
  Bench::thread([&] {
    for (std::uint64_t i = 0; i < count; ++i) {
      bench.access(Op::Write, TrafficClass::Compute, start + i * chunk,
                   static_cast<unsigned>(chunk));
    }
  });
  sc_core::sc_start();

  // Expected bytes per channel, from the definition: byte o lives on (o / 256) % 32.
  std::vector<std::uint64_t> expected(32, 0);
  for (std::uint64_t o = start; o < start + count * chunk;) {
    const std::uint64_t granule_end = (o / 256 + 1) * 256;
    const std::uint64_t end = std::min(granule_end, start + count * chunk);
    expected[(o / 256) % 32] += end - o;
    o = end;
  }
  const auto& channel_bytes = bench.mc.stats().channel_bytes;
  CHECK(channel_bytes == expected);
  const auto [lo, hi] = std::minmax_element(channel_bytes.begin(), channel_bytes.end());
  CHECK(*hi - *lo <= 256);
  CHECK(bench.mc.report()["channel_bytes"].get<std::vector<std::uint64_t>>() == expected);
  CHECK(bench.mc.channel_of(0) == 0);
  CHECK(bench.mc.channel_of(255) == 0);
  CHECK(bench.mc.channel_of(256) == 1);
  CHECK(bench.mc.channel_of(31 * 256) == 31);
  CHECK(bench.mc.channel_of(32 * 256) == 0);
}

TEST_CASE("NMC update-add gives exact values for fp32, fp16 and bf16", "[hbm][nmc]") {
  const std::uint64_t base = 1ull << 40;  // a window that does not start at 0
  Bench bench("bench", simple_hbm(), SimMode::Functional, base);

  struct Case {
    ElementType type;
    std::uint64_t offset;  // spans a granule and a page boundary
    std::vector<float> memory, operand, sum;
  };
  // Sums chosen to be exact, or rounded by first principles:
  // fp16 spacing is 2 in [2048, 4096): 2048 + 1 ties to 2048 (even), 2048 + 3 ties to 2052.
  // bf16 spacing is 2 in [256, 512): 256 + 1 ties to 256, 256 + 3 ties to 260.
  std::vector<Case> cases = {
      {ElementType::Fp32, 4096 - 128, {}, {}, {}},
      {ElementType::Fp16, 3 * 4096 - 64, {}, {}, {}},
      {ElementType::Bf16, 5 * 4096 - 32, {}, {}, {}},
  };
  for (auto& c : cases) {
    const std::size_t n = 256 / element_bytes(c.type);
    for (std::size_t i = 0; i < n; ++i) {
      const float a = static_cast<float>(i) - 20.0f;  // small integers: exact in every type
      const float b = 0.5f * static_cast<float>(i % 7);
      c.memory.push_back(a);
      c.operand.push_back(b);
      c.sum.push_back(a + b);  // |a + b| <= 128 with halves: exact in fp16 and bf16
    }
  }
  cases[1].memory[3] = 2048, cases[1].operand[3] = 1, cases[1].sum[3] = 2048;
  cases[1].memory[4] = 2048, cases[1].operand[4] = 3, cases[1].sum[4] = 2052;
  cases[2].memory[3] = 256, cases[2].operand[3] = 1, cases[2].sum[3] = 256;
  cases[2].memory[4] = 256, cases[2].operand[4] = 3, cases[2].sum[4] = 260;

  std::vector<std::vector<unsigned char>> operands(cases.size()), before(cases.size()),
      after(cases.size());
  std::vector<tlm::tlm_response_status> status(cases.size());
  Bench::thread([&] {
    for (std::size_t k = 0; k < cases.size(); ++k) {
      const auto& c = cases[k];
      std::vector<unsigned char> memory(256);
      operands[k].resize(256);
      for (std::size_t i = 0; i < c.memory.size(); ++i) {
        store_element(memory.data(), i, c.type, c.memory[i]);
        store_element(operands[k].data(), i, c.type, c.operand[i]);
      }
      REQUIRE(bench.debug(true, c.offset, memory.data(), 256) == 256);
      before[k] = operands[k];
      status[k] = bench.access(Op::Update, TrafficClass::Communication, c.offset, 256,
                               operands[k].data(), c.type);
      after[k].resize(256);
      REQUIRE(bench.debug(false, c.offset, after[k].data(), 256) == 256);
    }
  });
  sc_core::sc_start();

  for (std::size_t k = 0; k < cases.size(); ++k) {
    const auto& c = cases[k];
    INFO("type " << to_string(c.type));
    CHECK(status[k] == tlm::TLM_OK_RESPONSE);
    CHECK(operands[k] == before[k]);  // an update returns nothing: the operand is untouched
    for (std::size_t i = 0; i < c.sum.size(); ++i) {
      INFO("element " << i);
      CHECK(load_element(after[k].data(), i, c.type) == c.sum[i]);
    }
  }
  const HbmStats& stats = bench.mc.stats();
  for (int cls = 0; cls < kTrafficClasses; ++cls) {
    CHECK(stats.bytes[static_cast<int>(Op::Read)][cls] == 0);
    CHECK(stats.bytes[static_cast<int>(Op::Write)][cls] == 0);
  }
  CHECK(stats.bytes[static_cast<int>(Op::Update)][static_cast<int>(TrafficClass::Communication)] ==
        3 * 256);
  CHECK(
      stats.requests[static_cast<int>(Op::Update)][static_cast<int>(TrafficClass::Communication)] ==
      3);
}

TEST_CASE("NMC update completion time includes its occupancy and the ALU", "[hbm][nmc]") {
  const HbmConfig config = simple_hbm();  // occupancy 2x a write, ALU 4 ns
  Bench bench("bench", config, SimMode::Timing);
  sc_time update_done, write_done;
  Bench::thread([&] {
    bench.access(Op::Update, TrafficClass::Communication, 0, 64);
    update_done = sc_time_stamp();
    const sc_time start = sc_time_stamp();
    bench.access(Op::Write, TrafficClass::Communication, 0, 64);
    write_done = sc_time_stamp() - start;
  });
  sc_core::sc_start();
  // 100 ns latency + 2 x 2.048 ns of bank time + 4 ns of adder.
  CHECK(update_done == ns(100) + ns(2 * 2.048) + ns(4));
  CHECK(update_done ==
        ns(config.latency_ns + config.nmc_update_occupancy * transfer_ns(config, 64) +
           config.nmc_alu_latency_ns));
  CHECK(write_done == ns(100) + ns(2.048));
  CHECK(bench.mc.stats().channel_busy_ns[0] == Approx(3 * 2.048));
}

namespace {

// One channel at 1 B/ns: a 1000 B communication read occupies it from 0 to 1000 ns while 16
// requests of 100 B arrive at 1, 2, ... 16 ns, alternating compute (even ids) and communication.
// Returns the ids in completion order and checks the completion times.
std::vector<int> arbitration_order(Arbitration arbitration, PriorityClass favoured) {
  HbmConfig config = simple_hbm();
  config.channels = 1;
  config.bandwidth_GBps = 1;
  config.latency_ns = 10;
  config.arbitration = arbitration;
  config.priority_class = favoured;
  Bench bench("bench", config, SimMode::Timing);
  std::vector<std::pair<sc_time, int>> completions;
  Bench::thread([&] { bench.access(Op::Read, TrafficClass::Communication, 0, 1000); });
  for (int id = 0; id < 16; ++id) {
    Bench::thread([&, id] {
      const TrafficClass cls = id % 2 == 0 ? TrafficClass::Compute : TrafficClass::Communication;
      bench.access(Op::Read, cls, 4096 + 128 * static_cast<std::uint64_t>(id), 100, nullptr,
                   ElementType::Fp32, nullptr, ns(1 + id));
      completions.emplace_back(sc_time_stamp(), id);
    });
  }
  sc_core::sc_start();
  REQUIRE(completions.size() == 16);
  std::sort(completions.begin(), completions.end());
  std::vector<int> order;
  for (std::size_t k = 0; k < completions.size(); ++k) {
    // The k-th served starts when the bus frees at 1000 + 100 k and is done 10 + 100 ns later.
    CHECK(completions[k].first == ns(1000 + 100.0 * static_cast<double>(k) + 110));
    order.push_back(completions[k].second);
  }
  CHECK(bench.mc.report()["policy"] == (arbitration == Arbitration::Fcfs ? "fcfs" : "priority"));
  return order;
}

}  // namespace

TEST_CASE("HBM FCFS serves queued requests in arrival order", "[hbm][arbitration]") {
  const std::vector<int> order = arbitration_order(Arbitration::Fcfs, PriorityClass::Compute);
  std::vector<int> expected(16);
  for (int i = 0; i < 16; ++i) expected[static_cast<std::size_t>(i)] = i;
  CHECK(order == expected);
}

TEST_CASE("HBM priority policy serves all compute before communication", "[hbm][arbitration]") {
  const std::vector<int> order = arbitration_order(Arbitration::Priority, PriorityClass::Compute);
  // Compute ids (even) oldest first, then communication ids (odd) oldest first.
  const std::vector<int> expected = {0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15};
  CHECK(order == expected);
}

TEST_CASE("HBM priority policy can favour communication", "[hbm][arbitration]") {
  const std::vector<int> order =
      arbitration_order(Arbitration::Priority, PriorityClass::Communication);
  const std::vector<int> expected = {1, 3, 5, 7, 9, 11, 13, 15, 0, 2, 4, 6, 8, 10, 12, 14};
  CHECK(order == expected);
}

TEST_CASE("HBM policies pick by their definition", "[hbm][arbitration]") {
  auto request = [](std::uint64_t sequence, TrafficClass cls) {
    return QueuedRequest{sequence, SC_ZERO_TIME, Op::Read, cls, 64};
  };
  const std::vector<QueuedRequest> queue = {request(3, TrafficClass::Communication),
                                            request(4, TrafficClass::Compute),
                                            request(5, TrafficClass::Compute)};
  FcfsPolicy fcfs;
  CHECK(fcfs.pick(queue, SC_ZERO_TIME) == std::optional<std::size_t>(0));
  PriorityPolicy compute_first(TrafficClass::Compute);
  CHECK(compute_first.pick(queue, SC_ZERO_TIME) == std::optional<std::size_t>(1));
  const std::vector<QueuedRequest> only_communication = {request(1, TrafficClass::Communication),
                                                         request(2, TrafficClass::Communication)};
  CHECK(compute_first.pick(only_communication, SC_ZERO_TIME) == std::optional<std::size_t>(0));

  HbmConfig config = simple_hbm();
  config.arbitration = Arbitration::Priority;
  config.priority_class = PriorityClass::Communication;
  const auto policy = make_policy(config);
  CHECK(std::string(policy->name()) == "priority");
  CHECK(policy->pick(queue, SC_ZERO_TIME) == std::optional<std::size_t>(0));
  config.arbitration = Arbitration::Mca;
  CHECK(std::string(make_policy(config)->name()) == "mca");
}

// The controller keeps each request beside its own bookkeeping in a ring: a view that strides
// over those entries and wraps must read the requests in arrival order, as a vector of them does.
TEST_CASE("HBM policies see a wrapped ring of entries as its requests in order",
          "[hbm][arbitration]") {
  struct Entry {
    QueuedRequest request;
    std::uint64_t controller_state;
  };
  auto request = [](std::uint64_t sequence, TrafficClass cls) {
    return QueuedRequest{sequence, SC_ZERO_TIME, Op::Read, cls, 64};
  };
  const std::vector<QueuedRequest> in_order = {request(7, TrafficClass::Communication),
                                               request(8, TrafficClass::Communication),
                                               request(9, TrafficClass::Compute)};
  // Four slots, the oldest in the last: the requests sit at slots 3, 0, 1.
  std::array<Entry, 4> slots{};
  for (std::size_t i = 0; i < in_order.size(); ++i) slots[(3 + i) & 3] = {in_order[i], ~i};
  const QueueView ring(&slots[0].request, sizeof(Entry), 3, 3, in_order.size());
  REQUIRE(ring.size() == 3);
  for (std::size_t i = 0; i < in_order.size(); ++i) CHECK(ring[i].sequence == 7 + i);

  PriorityPolicy compute_first(TrafficClass::Compute);
  CHECK(compute_first.pick(ring, SC_ZERO_TIME) == std::optional<std::size_t>(2));
  const Admissible allowed = compute_first.admissible(ring, SC_ZERO_TIME);
  CHECK(allowed.compute);
  CHECK_FALSE(allowed.communication);
}

TEST_CASE("HBM request queue counts its row hits by direction and class as flags change", "[hbm]") {
  QueueOccupancy occupancy(1);
  RequestQueue queue(8, 0, occupancy);
  const auto entry = [](bool write, TrafficClass c, bool hit) {
    QueueEntry e;
    e.write = write;
    e.traffic_class = c;
    e.row_hit = hit;
    return e;
  };
  const auto hits = [&](bool write, TrafficClass c) { return queue.row_hits(write, c); };
  queue.push(entry(false, TrafficClass::Compute, true), SC_ZERO_TIME);
  queue.push(entry(true, TrafficClass::Compute, false), SC_ZERO_TIME);
  queue.push(entry(true, TrafficClass::Communication, true), SC_ZERO_TIME);
  queue.push(entry(false, TrafficClass::Compute, false), SC_ZERO_TIME);
  CHECK(hits(false, TrafficClass::Compute) == 1);
  CHECK(hits(true, TrafficClass::Compute) == 0);
  CHECK(hits(true, TrafficClass::Communication) == 1);
  CHECK(hits(false, TrafficClass::Communication) == 0);
  queue.set_row_hit(1, true);   // a row opened
  queue.set_row_hit(1, true);   // no change: counted once
  queue.set_row_hit(0, false);  // a row closed
  CHECK(queue[1].row_hit);
  CHECK_FALSE(queue[0].row_hit);
  CHECK(hits(true, TrafficClass::Compute) == 1);
  CHECK(hits(false, TrafficClass::Compute) == 0);
  queue.take(2, SC_ZERO_TIME);  // the communication write's hit leaves with it
  CHECK(hits(true, TrafficClass::Communication) == 0);
  CHECK(hits(true, TrafficClass::Compute) == 1);
}

TEST_CASE("HBM calendar wakes the queues booked by now, in queue order, once each", "[hbm]") {
  ServiceCalendar calendar(8);
  const auto ps = [](std::uint64_t t) { return sc_core::sc_time::from_value(t); };
  // Bookings out of time order, several at one time, one queue booked twice at one time and again
  // later (a retry rebooked: the earlier booking still wakes it).
  calendar.book(300, 5);
  calendar.book(100, 6);
  calendar.book(200, 1);
  calendar.book(100, 2);
  calendar.book(200, 6);
  calendar.book(100, 6);
  calendar.book(400, 2);
  CHECK(calendar.next() == std::optional<ServiceCalendar::Ticks>(100));
  const auto woken = [&](std::uint64_t now) {
    std::vector<int> served;
    calendar.take_wakeups(ps(now));
    calendar.serve_due([&](int k) { served.push_back(k); });
    return served;
  };
  CHECK(woken(99).empty());
  CHECK(woken(100) == std::vector<int>{2, 6});
  CHECK(calendar.next() == std::optional<ServiceCalendar::Ticks>(200));
  CHECK(woken(350) == std::vector<int>{1, 5, 6});  // the times 200 and 300 both passed
  calendar.book(400, 0);
  CHECK(calendar.next() == std::optional<ServiceCalendar::Ticks>(400));
  CHECK(woken(400) == std::vector<int>{0, 2});
  CHECK_FALSE(calendar.next());
}

TEST_CASE("HBM queue occupancy statistics match a hand-computed case", "[hbm]") {
  // One channel at 1 B/ns, 10 ns latency, FCFS.
  //   A compute 100 B arrives at 0 and is served at once (bus 0-100, done 110);
  //   B communication 100 B arrives at 20, C compute 100 B at 30, D communication 50 B at 40;
  //   B is served 100-200 (done 210), C 200-300 (done 310), D 300-350 (done 360).
  // Waiting entries: compute C 30..200 = 170 ns; communication B 20..100 + D 40..300 = 340 ns.
  // Most waiting at once on the channel: compute 1, communication 2 (B and D in 40..100).
  HbmConfig config = simple_hbm();
  config.channels = 1;
  config.bandwidth_GBps = 1;
  config.latency_ns = 10;
  Bench bench("bench", config, SimMode::Timing);
  struct Observed {
    sc_time at;
    int channel, compute, communication;
  };
  std::vector<Observed> observed;
  bench.mc.observe_occupancy([&](sc_time at, int channel, int compute, int communication) {
    observed.push_back({at, channel, compute, communication});
  });
  sc_time done[4];
  const TrafficClass cls[4] = {TrafficClass::Compute, TrafficClass::Communication,
                               TrafficClass::Compute, TrafficClass::Communication};
  const unsigned bytes[4] = {100, 100, 100, 50};
  const double arrival[4] = {0, 20, 30, 40};
  for (int k = 0; k < 4; ++k) {
    Bench::thread([&, k] {
      bench.access(Op::Read, cls[k], 1024 * static_cast<std::uint64_t>(k), bytes[k], nullptr,
                   ElementType::Fp32, nullptr, ns(arrival[k]));
      done[k] = sc_time_stamp();
    });
  }
  sc_core::sc_start();
  CHECK(done[0] == ns(110));
  CHECK(done[1] == ns(210));
  CHECK(done[2] == ns(310));
  CHECK(done[3] == ns(360));
  REQUIRE(sc_time_stamp() == ns(360));

  const HbmStats& stats = bench.mc.stats();
  CHECK(stats.occupancy_integral_ns[0] == Approx(170.0).margin(1e-9));
  CHECK(stats.occupancy_integral_ns[1] == Approx(340.0).margin(1e-9));
  CHECK(stats.max_occupancy[0] == 1);
  CHECK(stats.max_occupancy[1] == 2);
  const nlohmann::json report = bench.mc.report();
  CHECK(report["mean_queue_occupancy"]["compute"].get<double>() == Approx(170.0 / 360.0));
  CHECK(report["mean_queue_occupancy"]["communication"].get<double>() == Approx(340.0 / 360.0));
  CHECK(report["max_queue_occupancy"]["communication"] == 2);
  // Busy 350 of 360 ns.
  CHECK(report["utilisation"].get<double>() == Approx(350.0 / 360.0));

  // The observer saw every change: each request entered once and left once.
  REQUIRE(observed.size() == 8);
  for (const auto& o : observed) CHECK(o.channel == 0);
  CHECK(observed.back().at == ns(300));
  CHECK(observed.back().compute == 0);
  CHECK(observed.back().communication == 0);
  // Replaying the observed counts reproduces the integral.
  double integral[2] = {0, 0};
  for (std::size_t i = 0; i + 1 < observed.size(); ++i) {
    const double span = (observed[i + 1].at - observed[i].at).to_seconds() * 1e9;
    integral[0] += observed[i].compute * span;
    integral[1] += observed[i].communication * span;
  }
  CHECK(integral[0] == Approx(170.0));
  CHECK(integral[1] == Approx(340.0));
}

TEST_CASE("HBM answers bad accesses with error responses", "[hbm]") {
  HbmConfig config = simple_hbm();
  config.capacity_bytes = 1 << 20;
  const std::uint64_t base = 1ull << 32;
  Bench bench("bench", config, SimMode::Functional, base);
  std::vector<tlm::tlm_response_status> status;
  sc_time finished;
  Bench::thread([&] {
    std::vector<unsigned char> data(64, 1);
    // Sends one 64-byte access after `tweak` has had its way with the payload.
    auto send = [&](std::uint64_t address, Op op,
                    const std::function<void(tlm::tlm_generic_payload&)>& tweak) {
      tlm::tlm_generic_payload payload;
      T3Extension extension;
      extension.op = op;
      Bench::prepare(payload, address, 64, data.data(), extension);
      tweak(payload);
      sc_time delay = SC_ZERO_TIME;
      bench.socket->b_transport(payload, delay);
      status.push_back(payload.get_response_status());
    };
    auto as_is = [](tlm::tlm_generic_payload&) {};
    unsigned char enables[64] = {};
    send(base - 64, Op::Read, as_is);                         // below the window
    send(base + (1 << 20), Op::Read, as_is);                  // just past the end
    send(base + (1 << 20) - 32, Op::Write, as_is);            // straddles the end
    send(base, Op::Update, [](tlm::tlm_generic_payload& p) {  // update carried by a read
      p.set_command(tlm::TLM_READ_COMMAND);
    });
    send(base, Op::Write, [&](tlm::tlm_generic_payload& p) {
      p.set_byte_enable_ptr(enables);
      p.set_byte_enable_length(64);
    });
    send(base, Op::Read, [](tlm::tlm_generic_payload& p) { p.set_streaming_width(16); });
    send(base + 2, Op::Update, as_is);  // fp32 update not on an element boundary
    finished = sc_time_stamp();
  });
  sc_core::sc_start();
  const std::vector<tlm::tlm_response_status> expected = {
      tlm::TLM_ADDRESS_ERROR_RESPONSE,     tlm::TLM_ADDRESS_ERROR_RESPONSE,
      tlm::TLM_ADDRESS_ERROR_RESPONSE,     tlm::TLM_COMMAND_ERROR_RESPONSE,
      tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE, tlm::TLM_BURST_ERROR_RESPONSE,
      tlm::TLM_ADDRESS_ERROR_RESPONSE};
  CHECK(status == expected);
  CHECK(bench.mc.stats().rejected == expected.size());
  CHECK(finished == SC_ZERO_TIME);  // rejected at once, nothing queued
  CHECK(bench.mc.pending() == 0);
  const nlohmann::json report = bench.mc.report();
  CHECK(report["rejected"] == expected.size());
  CHECK(report["pages"] == 0);  // nothing reached memory
  for (const auto& by_class : bench.mc.stats().bytes) {
    CHECK(by_class[0] == 0);
    CHECK(by_class[1] == 0);
  }
}

TEST_CASE("HBM back-pressure with queue depth 1 completes everything", "[hbm]") {
  HbmConfig config = simple_hbm();
  config.channels = 2;
  config.bandwidth_GBps = 64;  // 32 B/ns per channel: 256 B in 8 ns
  config.queue_depth = 1;
  Bench bench("bench", config, SimMode::Functional);
  const int threads = 8, per_thread = 20;
  const unsigned bytes = 1024;  // four granules, two per channel
  int finished = 0, mismatches = 0;
  for (int t = 0; t < threads; ++t) {
    Bench::thread([&, t] {
      std::vector<unsigned char> out(bytes), in(bytes);
      for (int i = 0; i < per_thread; ++i) {
        const std::uint64_t offset = (static_cast<std::uint64_t>(t) * per_thread + i) * bytes;
        for (unsigned b = 0; b < bytes; ++b) {
          out[b] = static_cast<unsigned char>(t * 31 + i * 7 + b);
        }
        REQUIRE(bench.access(Op::Write, TrafficClass::Compute, offset, bytes, out.data()) ==
                tlm::TLM_OK_RESPONSE);
        REQUIRE(bench.access(Op::Read, TrafficClass::Communication, offset, bytes, in.data()) ==
                tlm::TLM_OK_RESPONSE);
        if (in != out) ++mismatches;
      }
      ++finished;
    });
  }
  sc_core::sc_start();
  CHECK(finished == threads);
  CHECK(mismatches == 0);
  CHECK(bench.mc.pending() == 0);
  const nlohmann::json report = bench.mc.report();
  CHECK(report["backpressured"].get<std::uint64_t>() > 0);  // the queues really were full
  CHECK(report["max_queue_occupancy"]["compute"].get<int>() <= 1);
  CHECK(report["max_queue_occupancy"]["communication"].get<int>() <= 1);
  const std::uint64_t total = 2ull * threads * per_thread * bytes;
  CHECK(bench.mc.stats().channel_bytes[0] + bench.mc.stats().channel_bytes[1] == total);
  // Physics: the channels cannot move data faster than their bandwidth.
  CHECK(sc_time_stamp().to_seconds() * 1e9 >= static_cast<double>(total) / config.bandwidth_GBps);
}

TEST_CASE("HBM timing mode allocates no storage and functional mode stores sparsely", "[hbm]") {
  HbmConfig config = simple_hbm();
  Bench timing("timing", config, SimMode::Timing);
  Bench functional("functional", config, SimMode::Functional);
  std::vector<unsigned char> pattern(10000), readback(10000, 0xff), untouched(4096, 0xff);
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    pattern[i] = static_cast<unsigned char>(i * 13 + 5);
  }
  unsigned timing_dbg = 1;
  std::size_t pages_after_untouched_read = 1;
  Bench::thread([&] {
    // Timing mode ignores data pointers, even null ones.
    timing.access(Op::Write, TrafficClass::Compute, 4000, 10000, nullptr);
    timing.access(Op::Update, TrafficClass::Communication, 65536, 4096, nullptr);
    timing.access(Op::Read, TrafficClass::Compute, 4000, 10000, nullptr);
    timing_dbg = timing.debug(false, 4000, readback.data(), 16);

    // Untouched memory reads as zero without allocating a page.
    functional.access(Op::Read, TrafficClass::Compute, 1 << 20, 4096, untouched.data());
    pages_after_untouched_read = functional.mc.report()["pages"].get<std::size_t>();
    // [4000, 14000) spans pages 0..3, several channels and granules, unaligned at both ends.
    functional.access(Op::Write, TrafficClass::Compute, 4000, 10000, pattern.data());
    functional.access(Op::Read, TrafficClass::Compute, 4000, 10000, readback.data());
  });
  sc_core::sc_start();
  CHECK(timing.mc.report()["pages"] == 0);
  CHECK(timing_dbg == 0);
  CHECK(timing.mc.stats().bytes[static_cast<int>(Op::Write)][0] == 10000);

  CHECK(pages_after_untouched_read == 0);
  CHECK(std::all_of(untouched.begin(), untouched.end(), [](unsigned char b) { return b == 0; }));
  CHECK(readback == pattern);
  CHECK(functional.mc.report()["pages"] == 4);
  std::vector<unsigned char> dbg(10000);
  CHECK(functional.debug(false, 4000, dbg.data(), 10000) == 10000);
  CHECK(dbg == pattern);
}

TEST_CASE("HBM serves memory in service order, not issue order", "[hbm]") {
  // One channel busy with a long read; a communication write then a compute read of the same
  // address queue behind it. Priority (compute first) serves the read before the write, so the
  // read must see the old value even though the write was issued first.
  HbmConfig config = simple_hbm();
  config.channels = 1;
  config.bandwidth_GBps = 1;
  config.latency_ns = 10;
  config.arbitration = Arbitration::Priority;
  Bench bench("bench", config, SimMode::Functional);
  std::vector<unsigned char> old_value(8, 0x11), new_value(8, 0x22), seen(8, 0), bulk(1000);
  Bench::thread([&] {
    REQUIRE(bench.debug(true, 8192, old_value.data(), 8) == 8);
    bench.access(Op::Read, TrafficClass::Communication, 0, 1000, bulk.data());
  });
  Bench::thread([&] {
    bench.access(Op::Write, TrafficClass::Communication, 8192, 8, new_value.data(),
                 ElementType::Fp32, nullptr, ns(1));
  });
  Bench::thread([&] {
    bench.access(Op::Read, TrafficClass::Compute, 8192, 8, seen.data(), ElementType::Fp32, nullptr,
                 ns(2));
  });
  sc_core::sc_start();
  CHECK(seen == old_value);
  std::vector<unsigned char> final_value(8);
  CHECK(bench.debug(false, 8192, final_value.data(), 8) == 8);
  CHECK(final_value == new_value);
}
