// The bank-level HBM model (hbm.model = bank) behind the memory controller's socket: address
// decoding, idle latencies from the timing parameters, row hits and conflicts, FR-FCFS and write
// drain order, near-memory updates as read + write, refresh, and the efficiency of streams.
// Each case builds its own design and runs sc_start once (ctest runs every case in its process).
#define SC_INCLUDE_DYNAMIC_PROCESSES
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <tlm_utils/simple_initiator_socket.h>
#include <systemc>
#include <tlm>

#include "config/config_io.h"
#include "config/dram_timing.h"
#include "models/hbm/dram_bank.h"
#include "models/hbm/memory_controller.h"

using namespace t3;
using Catch::Matchers::Contains;
using sc_core::SC_NS;
using sc_core::sc_time;
using sc_core::sc_time_stamp;
using sc_core::SC_ZERO_TIME;

namespace {

struct Bench : sc_core::sc_module {
  tlm_utils::simple_initiator_socket<Bench> socket;
  MemoryController mc;

  Bench(sc_core::sc_module_name name, const HbmConfig& config, SimMode mode = SimMode::Timing)
      : sc_core::sc_module(name), socket("socket"), mc("mc", config, mode, 0) {
    socket.bind(mc.socket);
  }

  static void thread(std::function<void()> body) { sc_core::sc_spawn(std::move(body)); }

  tlm::tlm_response_status access(Op op, std::uint64_t offset, unsigned bytes,
                                  sc_time delay = SC_ZERO_TIME, unsigned char* data = nullptr,
                                  TrafficClass traffic_class = TrafficClass::Compute) {
    T3Extension extension;
    extension.op = op;
    extension.traffic_class = traffic_class;
    extension.element = ElementType::Fp32;
    tlm::tlm_generic_payload payload;
    payload.set_address(offset);
    payload.set_data_ptr(data);
    payload.set_data_length(bytes);
    payload.set_streaming_width(bytes);
    payload.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    T3Extension::set(payload, extension);
    socket->b_transport(payload, delay);
    return payload.get_response_status();
  }
};

sc_time ns(double value) {
  return sc_time(value, SC_NS);
}

// One pseudo-channel, so every access meets the same banks: 1 channel x 1 pseudo-channel x 64
// bit at 16 GB/s = 2 Gb/s per pin, a 32 B burst on the bus for 2 ns.
HbmConfig one_pseudo_channel() {
  HbmConfig config;
  config.channels = 1;
  config.bank.pseudo_channels = 1;
  config.bandwidth_GBps = 16;
  config.bank.timing.refi = 0;                    // no refresh unless a case asks for it
  config.bank.address_hash = AddressHash::Plain;  // offsets name banks and rows as below
  return config;
}

// Bytes of one row of one bank seen through the address map: with one channel and pseudo-channel
// the granule (256 B) is followed by the column (page 1 KiB x 4 bank groups / 256 B = 16), then the
// bank (4), then the row. So offsets 0..4 KiB are one row in the 4 banks of index 0.
constexpr std::uint64_t kRowSpan = 4096;
constexpr std::uint64_t kBankSpan = 4 * kRowSpan;  // next row of the same bank: 4 banks later

struct Stream {
  double GBps = 0;
  nlohmann::json report;
};

// One stream: `threads` initiators each issue `per_thread` accesses of `bytes`, at offsets given
// by `offset`(thread, index) and ops by `op_of`.
struct StreamSpec {
  HbmConfig config;
  int threads;
  int per_thread;
  unsigned bytes;
  std::function<std::uint64_t(int, int)> offset;
  std::function<Op(int, int)> op_of;
};

// Runs every stream at once, each on its own controller (independent designs in one simulation,
// since a process elaborates only once), and returns each one's bandwidth over its own run.
std::vector<Stream> run_streams(const std::vector<StreamSpec>& specs) {
  std::vector<std::unique_ptr<Bench>> benches;
  std::vector<sc_time> finished(specs.size(), SC_ZERO_TIME);
  for (std::size_t k = 0; k < specs.size(); ++k) {
    benches.push_back(
        std::make_unique<Bench>(("bench" + std::to_string(k)).c_str(), specs[k].config));
    for (int t = 0; t < specs[k].threads; ++t) {
      Bench::thread([&, k, t] {
        const StreamSpec& spec = specs[k];
        for (int i = 0; i < spec.per_thread; ++i) {
          REQUIRE(benches[k]->access(spec.op_of(t, i), spec.offset(t, i), spec.bytes) ==
                  tlm::TLM_OK_RESPONSE);
        }
        finished[k] = std::max(finished[k], sc_time_stamp());
      });
    }
  }
  sc_core::sc_start();
  std::vector<Stream> streams;
  for (std::size_t k = 0; k < specs.size(); ++k) {
    REQUIRE(benches[k]->mc.pending() == 0);
    const double total =
        static_cast<double>(specs[k].threads) * specs[k].per_thread * specs[k].bytes;
    streams.push_back({total / (finished[k].to_seconds() * 1e9), benches[k]->mc.report()});
  }
  return streams;
}

// The default geometry (t3-paper, 1000 GB/s over 32 channels x 2 pseudo-channels), with 16
// initiators each keeping one 64 KiB access in flight (1 MiB, several rows ahead on every
// pseudo-channel, as a GPU's many SMs keep), or 256 initiators with a 4 KiB access each.
constexpr int kThreads = 16;
constexpr int kPerThread = 32;
constexpr unsigned kBytes = 64 * 1024;
constexpr int kSmallThreads = 256;
constexpr unsigned kSmallBytes = 4096;
constexpr int kSmallPerThread = kPerThread * kBytes / kSmallBytes / (kSmallThreads / kThreads);

std::uint64_t sequential(int t, int i) {
  return (static_cast<std::uint64_t>(i) * kThreads + static_cast<std::uint64_t>(t)) * kBytes;
}

}  // namespace

TEST_CASE("Bank address map decodes channel, pseudo-channel, bank, row and column", "[bank][map]") {
  HbmConfig config;  // 32 channels x 2 pseudo-channels, 4 x 4 banks, 1 KiB pages, 256 B granules
  config.bank.address_hash = AddressHash::Plain;  // the digits as sliced (test_address_hash)
  const DramAddressMap map(config);
  CHECK(map.burst_bytes() == 32);
  // Granule g: channel g % 32, pseudo-channel (g / 32) % 2, column (g / 64) % 16, bank
  // (g / 1024) % 4, row g / 4096.
  const auto at = [&](std::uint64_t granule, std::uint64_t inside = 0, std::uint32_t bytes = 256) {
    return map.locate(granule * 256 + inside, bytes);
  };
  CHECK(at(0).channel == 0);
  CHECK(at(31).channel == 31);
  CHECK(at(32).channel == 0);
  CHECK(at(32).pseudo_channel == 1);
  CHECK(at(64).pseudo_channel == 0);
  CHECK(at(64).row == 0);
  CHECK(at(64).bank == 0);  // a column further in the same row
  CHECK(at(1024).bank == 1);
  CHECK(at(4096).bank == 0);
  CHECK(at(4096).row == 1);
  CHECK(at(0).bursts == 8);
  CHECK(at(0, 64, 64).first_burst == 2);
  CHECK(at(0, 64, 64).bursts == 2);
  CHECK(at(0, 60, 8).bursts == 2);  // straddles a burst boundary

  // Another order: the row right above the granule, the channel on top.
  config.bank.address_map = "channel,pseudochannel,bank,column,row";
  const DramAddressMap rows_low(config);
  CHECK(rows_low.locate(256, 256).row == 1);
  CHECK(rows_low.locate(256, 256).channel == 0);
}

TEST_CASE("Bank address map decodes non-power-of-two radices digit by digit", "[bank][map]") {
  HbmConfig config;
  config.channels = 24;  // 24 channels x 2 pseudo-channels x 16 columns x 4 banks, then the row
  config.bank.address_hash = AddressHash::Plain;
  const DramAddressMap map(config);
  const std::uint64_t per_row = 24 * 2 * 16 * 4;
  for (std::uint64_t granule :
       {std::uint64_t{0}, std::uint64_t{23}, std::uint64_t{24}, std::uint64_t{47},
        std::uint64_t{48 * 16 - 1}, per_row - 1, per_row, 5 * per_row + 1000}) {
    const DramLocation where = map.locate(granule * 256, 256);
    INFO("granule " << granule);
    CHECK(where.channel == static_cast<int>(granule % 24));
    CHECK(where.pseudo_channel == static_cast<int>(granule / 24 % 2));
    CHECK(where.bank == static_cast<int>(granule / (24 * 2 * 16) % 4));
    CHECK(where.row == granule / per_row);
  }
}

TEST_CASE("Bank channel statistics follow the address map's channel digit", "[bank][map]") {
  // The channel on top: a stream from offset 0 stays in channel 0 (its pseudo-channels, banks and
  // rows change first), where granule-modulo interleaving would spread it over every channel.
  HbmConfig config;
  config.bank.address_map = "channel,pseudochannel,bank,column,row";
  config.bank.timing.refi = 0;
  Bench bench("bench", config);
  const DramAddressMap map(config);
  for (std::uint64_t offset : {std::uint64_t{0}, std::uint64_t{256}, std::uint64_t{1} << 20,
                               config.capacity_bytes - 256}) {
    CHECK(bench.mc.channel_of(offset) == map.locate(offset, 1).channel);
  }
  CHECK(bench.mc.channel_of(256) == 0);
  CHECK(bench.mc.channel_of(config.capacity_bytes - 1) == config.channels - 1);
  Bench::thread([&] { CHECK(bench.access(Op::Write, 0, 64 * 1024) == tlm::TLM_OK_RESPONSE); });
  sc_core::sc_start();
  const auto& bytes = bench.mc.stats().channel_bytes;
  CHECK(bytes[0] == 64 * 1024);
  CHECK(std::accumulate(bytes.begin(), bytes.end(), std::uint64_t{0}) == 64 * 1024);
}

TEST_CASE("Bank geometry errors name the parameter", "[bank][map]") {
  HbmConfig config;
  config.bank.address_map = "row,bank,column,channel";
  CHECK_THROWS_WITH(DramAddressMap(config), Contains("hbm.bank.address_map"));
  config.bank.address_map = "row,bank,column,pseudochannel,channel,bank";
  CHECK_THROWS_WITH(DramAddressMap(config), Contains("given twice"));
  config.bank.address_map = "row,bank,col,pseudochannel,channel";
  CHECK_THROWS_WITH(DramAddressMap(config), Contains("unknown field 'col'"));
  config = HbmConfig{};
  config.interleave_bytes = 64;  // less than one 32 B burst in each of 4 bank groups
  CHECK_THROWS_WITH(DramAddressMap(config), Contains("hbm.interleave_bytes"));
  config = HbmConfig{};
  config.bank.page_bytes = 32;
  CHECK_THROWS_WITH(DramAddressMap(config), Contains("hbm.bank.page_bytes"));
  config = HbmConfig{};
  config.bank.write_low = 0.9;
  CHECK_THROWS_WITH(MemoryController("mc", config, SimMode::Timing, 0),
                    Contains("hbm.bank.write_low"));
  // The timer keeps per-group scratch for at most kMaxBankGroups groups.
  config = HbmConfig{};
  const DramTiming timing(config, 1000.0);
  config.bank.bank_groups = kMaxBankGroups + 1;
  CHECK_THROWS_WITH(PseudoChannelTimer(config, timing, 0), Contains("hbm.bank.bank_groups: 65"));
  config.bank.bank_groups = kMaxBankGroups;
  CHECK_NOTHROW(PseudoChannelTimer(config, timing, 0));
}

TEST_CASE("Bank idle latencies follow the timing parameters", "[bank][latency]") {
  const HbmConfig config = one_pseudo_channel();
  const DramTimingNs t = dram_timing_ns(config);
  const double burst = 2.0;  // 4 beats at 2 Gb/s
  const double controller = config.bank.controller_latency_ns;
  Bench bench("bench", config);
  sc_time closed, hit, conflict, write_closed;
  Bench::thread([&] {
    sc_time start = sc_time_stamp();
    bench.access(Op::Read, 0, 32);  // closed bank: ACT, tRCD, RD, CL, burst
    closed = sc_time_stamp() - start;
    bench.access(Op::Read, 32, 32);  // the next bank group's bank: another miss
    start = sc_time_stamp();
    bench.access(Op::Read, 0, 32);  // the first burst again: a row hit
    hit = sc_time_stamp() - start;
    start = sc_time_stamp();
    bench.access(Op::Read, kBankSpan, 32);  // same bank, another row: PRE, tRP, ACT, tRCD
    conflict = sc_time_stamp() - start;
    start = sc_time_stamp();
    bench.access(Op::Write, kRowSpan, 32);  // bank 1, closed: ACT, tRCD(wr), WR, CWL, burst
    write_closed = sc_time_stamp() - start;
  });
  sc_core::sc_start();
  CHECK(closed == ns(t.rcd_rd + t.cl + burst + controller));
  CHECK(hit == ns(t.cl + burst + controller));
  // The conflict's precharge waited for nothing (tRAS and tRTP long past), so it costs tRP + tRCD.
  CHECK(conflict == ns(t.rp + t.rcd_rd + t.cl + burst + controller));
  CHECK(write_closed == ns(t.rcd_wr + t.cwl + burst + controller));
  const auto report = bench.mc.report();
  CHECK(report["row_hits"] == 1);
  CHECK(report["row_misses"] == 4);
}

TEST_CASE("Bank row-command bus: a command takes the first free stretch from its time",
          "[bank][timing]") {
  RowCommandBus bus;
  CHECK(bus.book(10, 2) == 10);  // an ACT: [10, 12)
  CHECK(bus.book(11, 1) == 12);  // a PRE meeting it goes after it: [12, 13)
  CHECK(bus.book(5, 2) == 5);    // earlier and free: [5, 7)
  CHECK(bus.book(6, 2) == 7);    // [7, 9)
  CHECK(bus.book(8, 2) == 13);   // [9, 10) is one clock, too short for an ACT
  CHECK(bus.book(9, 1) == 9);    // but takes a PRE
}

// The bus as a sorted list that keeps its 64 latest-starting bookings, written plainly: the
// ring must book every command where this does, across wrap-arounds and late bookings.
std::uint64_t book_in_sorted_list(std::vector<std::pair<std::uint64_t, std::uint64_t>>& busy,
                                  std::uint64_t at, std::uint64_t length) {
  auto next = std::upper_bound(busy.begin(), busy.end(), at,
                               [](std::uint64_t t, const auto& b) { return t < b.first; });
  if (next != busy.begin() && std::prev(next)->second > at) at = std::prev(next)->second;
  for (; next != busy.end() && next->first < at + length; ++next) at = std::max(at, next->second);
  busy.insert(next, {at, at + length});
  if (busy.size() > 64) busy.erase(busy.begin());
  return at;
}

TEST_CASE("Bank row-command bus: the ring books as a sorted list of the latest 64 does",
          "[bank][timing]") {
  RowCommandBus bus;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> list;
  std::uint64_t state = 12345, time = 0;
  int moved = 0;
  for (int i = 0; i < 5000; ++i) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    time += (state >> 33) % 4;                      // mostly rising, ...
    const std::uint64_t back = (state >> 40) % 60;  // ... some commands go back up to 60 clocks
    const std::uint64_t at = time > back ? time - back : 0;
    const std::uint64_t length = 1 + (state >> 50) % 2;  // a PRE or an ACT
    const std::uint64_t expected = book_in_sorted_list(list, at, length);
    if (expected != at) ++moved;
    REQUIRE(bus.book(at, length) == expected);
  }
  CHECK(moved > 1000);  // the sequence does meet busy stretches
}

TEST_CASE("Bank row-command bus: an early precharge takes the bus when it is ready",
          "[bank][timing]") {
  // A bank's PRE, proposed once a queued entry needs another row there, is ready at tRAS after its
  // ACT. The other pseudo-channel's ACT, ready half a clock later, is decided first: the bus still
  // grants the PRE first (at tRAS) and the ACT after it, not the ACT at its time and the PRE in the
  // next free clock after it, where booking in decision order put them.
  const HbmConfig config = one_pseudo_channel();
  const DramTiming timing(config, 1000.0);  // 1 ps units
  RowCommandBus bus;
  PseudoChannelTimer timer(config, timing, 0, &bus);
  std::vector<DramCommand> log;
  timer.log_commands(&log, 0, 0);
  const DramAddressMap map(config);
  const DramLocation first = map.locate(0, 32);
  const DramLocation other_row = map.locate(kBankSpan, 32);  // bank 0 of group 0, row 1
  REQUIRE(first.bank == other_row.bank);
  REQUIRE(first.first_group == other_row.first_group);
  REQUIRE(first.row != other_row.row);
  timer.serve(first, PseudoChannelTimer::Kind::Read, 0, 0, 0);
  timer.precharge_early(first);
  REQUIRE(timing.ras > timing.rcd_rd + timing.rtp);  // the PRE is ready at tRAS
  const std::uint64_t half_clock = timing.pre_command / 2;
  CHECK(bus.book(timing.ras + half_clock, timing.act_command) == timing.ras + timing.pre_command);
  // The next entry's ACT follows the granted PRE by tRP.
  timer.serve(other_row, PseudoChannelTimer::Kind::Read, 0, timing.ras, 0);
  std::vector<std::pair<DramCommand::Kind, std::uint64_t>> commands;
  for (const DramCommand& c : log) commands.emplace_back(c.kind, c.time);
  using Kind = DramCommand::Kind;
  const std::vector<std::pair<Kind, std::uint64_t>> expected = {
      {Kind::Activate, 0},
      {Kind::Read, timing.rcd_rd},
      {Kind::Precharge, timing.ras},
      {Kind::Activate, timing.ras + timing.rp},
      {Kind::Read, timing.ras + timing.rp + timing.rcd_rd}};
  CHECK(commands == expected);
}

TEST_CASE("Bank row-command bus: an expected activation holds its stretch until its timer serves",
          "[bank][timing]") {
  const HbmConfig config = one_pseudo_channel();
  const DramTiming timing(config, 1000.0);  // 1 ps units
  RowCommandBus bus;
  PseudoChannelTimer other(config, timing, 0, &bus);
  const std::uint64_t act = timing.act_command;
  const std::uint64_t at = 10 * act;
  bus.expect(at, &other);
  // A command ready one unit later goes after the expected activation's stretch ...
  CHECK(bus.book(at + 1, act) == at + act);
  // ... which the timer frees when it serves: its own activation, or any command, may take it.
  bus.release(&other);
  CHECK(bus.book(at, act) == at);
  // An expectation dropped (none next: a row hit is queued) holds nothing.
  bus.expect(20 * act, &other);
  bus.expect(RowCommandBus::kNoActivation, &other);
  CHECK(bus.book(20 * act + 1, act) == 20 * act + 1);
}

TEST_CASE(
    "Bank row-command bus: an activation decided first but ready later goes after the other "
    "pseudo-channel's earlier-ready one",
    "[bank][timing]") {
  // One channel of two pseudo-channels on one row-command bus, one bank group (a granule's eight
  // bursts in one bank: one ACT and 16 ns on the data bus). Pseudo-channel 1 serves a granule from
  // 0 and decides its next entry, D, after the granule's last column; pseudo-channel 0 serves a
  // burst and decides its next, C, at that burst's column (tRCD), well before. D arrives at 10 ns
  // and C one clock later, to idle banks: D's ACT is ready first. Booked in decision order, C's ACT
  // took [11, 13) ns and D's went after it; in ready order, D's ACT issues at 10 ns and C's after
  // it.
  HbmConfig config = one_pseudo_channel();
  config.bank.pseudo_channels = 2;
  config.bandwidth_GBps = 32;  // 16 GB/s per pseudo-channel: tCK 1 ns, as one_pseudo_channel()
  config.bank.bank_groups = 1;
  config.bank.early_precharge = true;
  const DramTimingNs t = dram_timing_ns(config);
  const DramAddressMap map(config);
  // Granules: channel, pseudo-channel, column (4 per 1 KiB row), bank, row, least significant
  // first.
  const auto offset = [](int pseudo_channel, int bank) {
    return static_cast<std::uint64_t>((bank * 4 * 2 + pseudo_channel) * 256);
  };
  for (int pc : {0, 1}) {
    for (int bank : {0, 1}) {
      const DramLocation where = map.locate(offset(pc, bank), 32);
      REQUIRE(where.pseudo_channel == pc);
      REQUIRE(where.bank == bank);
      REQUIRE(where.row == 0);
    }
  }
  REQUIRE(t.tck == Approx(1.0));
  REQUIRE(t.rrd_l <= 10 - 2 * t.tck);  // D's bank is ready by its arrival (after the granule's ACT)
  REQUIRE(t.rcd_rd > 11);              // C is queued when pseudo-channel 0 decides again
  Bench bench("bench", config);
  std::vector<DramCommand> log;
  bench.mc.log_commands(&log);
  const double d_arrival = 10;
  const double c_arrival = d_arrival + t.tck;
  Bench::thread([&] { bench.access(Op::Read, offset(0, 0), 32); });
  Bench::thread([&] { bench.access(Op::Read, offset(1, 0), 256); });
  Bench::thread([&] { bench.access(Op::Read, offset(1, 1), 32, ns(d_arrival)); });
  Bench::thread([&] { bench.access(Op::Read, offset(0, 1), 32, ns(c_arrival)); });
  sc_core::sc_start();
  std::vector<const DramCommand*> c_act, d_act;  // in the order the entries were decided
  for (const DramCommand& c : log) {
    if (c.kind != DramCommand::Kind::Activate || c.bank != 1) continue;
    (c.pseudo_channel == 0 ? c_act : d_act).push_back(&c);
  }
  REQUIRE(c_act.size() == 1);
  REQUIRE(d_act.size() == 1);
  REQUIRE(c_act[0] < d_act[0]);  // C was decided (and logged) first
  CHECK(sc_time::from_value(d_act[0]->time) == ns(d_arrival));
  CHECK(sc_time::from_value(c_act[0]->time) == ns(d_arrival + 2 * t.tck));
}

TEST_CASE("Bank conflict right after an activate waits for tRAS", "[bank][latency]") {
  const HbmConfig config = one_pseudo_channel();
  const DramTimingNs t = dram_timing_ns(config);
  Bench bench("bench", config);
  sc_time second_done;
  // Two reads to different rows of bank 0, both arriving at 0: the second's PRE must wait tRAS
  // from the first's ACT (34 ns, more than tRCD + tRTP), then tRP and tRCD.
  Bench::thread([&] { bench.access(Op::Read, 0, 32); });
  Bench::thread([&] {
    bench.access(Op::Read, kBankSpan, 32);
    second_done = sc_time_stamp();
  });
  sc_core::sc_start();
  CHECK(second_done ==
        ns(t.ras + t.rp + t.rcd_rd + t.cl + 2.0 + config.bank.controller_latency_ns));
}

// The command log (t3sim trace --commands) shows the conflict above command by command: the
// second read's PRE waits tRAS from the first's ACT, its ACT tRP after the PRE, each RD tRCD after
// its ACT.
TEST_CASE("Bank command log: a conflict's ACT, RD, PRE, ACT, RD at their issue times",
          "[bank][timing]") {
  const HbmConfig config = one_pseudo_channel();
  const DramTimingNs t = dram_timing_ns(config);
  Bench bench("bench", config);
  std::vector<DramCommand> log;
  bench.mc.log_commands(&log);
  Bench::thread([&] { bench.access(Op::Read, 0, 32); });
  Bench::thread([&] { bench.access(Op::Read, kBankSpan, 32); });
  sc_core::sc_start();
  REQUIRE(log.size() == 5);
  using Kind = DramCommand::Kind;
  const Kind kinds[] = {Kind::Activate, Kind::Read, Kind::Precharge, Kind::Activate, Kind::Read};
  const double at_ns[] = {0, t.rcd_rd, t.ras, t.ras + t.rp, t.ras + t.rp + t.rcd_rd};
  const std::int64_t rows[] = {0, 0, 0, 1, 1};
  for (std::size_t i = 0; i < log.size(); ++i) {
    INFO("command " << i << ": " << command_name(log[i].kind));
    CHECK(log[i].kind == kinds[i]);
    CHECK(sc_time::from_value(log[i].time) == ns(at_ns[i]));
    CHECK(log[i].row == rows[i]);
    CHECK(log[i].group == 0);
    CHECK(log[i].bank == 0);
    CHECK(log[i].pseudo_channel == 0);
  }
}

TEST_CASE("Bank command log: the simple model has none and says so", "[bank][timing]") {
  HbmConfig config = one_pseudo_channel();
  config.model = HbmModel::Simple;
  Bench bench("bench", config);
  std::vector<DramCommand> log;
  CHECK_THROWS_WITH(bench.mc.log_commands(&log), Contains("hbm.model"));
}

namespace {

// One read per entry: where, when and for which traffic class.
struct TimedRead {
  std::uint64_t offset;
  double at_ns;
  TrafficClass traffic_class;
};

// The order in which `reads` complete (indices into it); the first reads 256 bytes, so the others
// queue while it is served.
std::vector<int> completion_order(const HbmConfig& config, const std::vector<TimedRead>& reads) {
  Bench bench("bench", config);
  std::vector<int> order;
  for (int k = 0; k < static_cast<int>(reads.size()); ++k) {
    Bench::thread([&, k] {
      const TimedRead& r = reads[static_cast<std::size_t>(k)];
      bench.access(Op::Read, r.offset, k == 0 ? 256 : 32, ns(r.at_ns), nullptr, r.traffic_class);
      order.push_back(k);
    });
  }
  sc_core::sc_start();
  return order;
}

// Completion order of: a read opening row 0 of bank 0 (t=0), a conflict in that bank (t=1) and a
// hit to row 0 (t=2, granule 4: a later column of row 0, bank 0).
std::vector<int> hit_order(const std::string& scheduler) {
  HbmConfig config = one_pseudo_channel();
  config.bank.scheduler = scheduler;
  return completion_order(config, {{0, 0, TrafficClass::Compute},
                                   {kBankSpan, 1, TrafficClass::Compute},
                                   {256 * 4, 2, TrafficClass::Compute}});
}

}  // namespace

TEST_CASE("Bank FR-FCFS serves a younger row hit before an older conflict", "[bank][scheduler]") {
  CHECK(hit_order("frfcfs") == std::vector<int>{0, 2, 1});
}

TEST_CASE("Bank FCFS scheduler serves the older conflict first", "[bank][scheduler]") {
  CHECK(hit_order("fcfs") == std::vector<int>{0, 1, 2});
}

TEST_CASE("Bank FR-FCFS look-ahead: a miss to an idle bank goes while an older conflict waits",
          "[bank][scheduler]") {
  // A read opening row 0 of bank 0 (t = 0, 256 B: every bank group's bank 0), a conflict in bank
  // 0 (t = 1: its precharge waits for tRAS from that activation, then tRP and tRCD) and a read of
  // closed bank 1 (t = 2). The younger read's ACT and RD issue while the conflict's bank waits;
  // serving the conflict first would put them after its activation, and its read after the
  // conflict's.
  const HbmConfig config = one_pseudo_channel();
  const DramTimingNs t = dram_timing_ns(config);
  const double tail = t.cl + t.burst + config.bank.controller_latency_ns;  // RD to response
  Bench bench("bench", config);
  std::vector<int> order;
  sc_time conflict_done, idle_done;
  const std::vector<std::uint64_t> offsets = {0, kBankSpan, kRowSpan};
  for (int k = 0; k < 3; ++k) {
    Bench::thread([&, k] {
      bench.access(Op::Read, offsets[static_cast<std::size_t>(k)], k == 0 ? 256 : 32, ns(k));
      order.push_back(k);
      (k == 1 ? conflict_done : idle_done) = sc_time_stamp();
    });
  }
  sc_core::sc_start();
  CHECK(order == std::vector<int>{0, 2, 1});
  // The conflict loses nothing: PRE at tRAS, ACT tRP later, RD tRCD after that.
  CHECK(conflict_done == ns(t.ras + t.rp + t.rcd_rd + tail));
  // Its read command issues before the conflict's activation (tRP after the PRE at tRAS).
  CHECK(idle_done < ns(t.ras + t.rp + tail));
}

namespace {

// Completion order under MCA (threshold 2, no starvation in reach) of: a compute read opening row
// 0 of bank 0 (t=0), a communication hit to row 0 (t=1), a compute hit to row 0 (t=2), a compute
// conflict in that bank (t=3) and a compute read of another bank (t=4); the others wait while the
// first is served, with the gate shut while two compute requests are queued (one communication
// request stays below the threshold).
std::vector<int> mca_order(bool row_hits_first) {
  HbmConfig config = one_pseudo_channel();
  config.arbitration = Arbitration::Mca;
  config.mca.threshold = 2;
  config.mca.starvation_ns = 1e6;
  config.mca.row_hits_first = row_hits_first;
  return completion_order(config, {{0, 0, TrafficClass::Compute},
                                   {256 * 4, 1, TrafficClass::Communication},
                                   {256 * 8, 2, TrafficClass::Compute},
                                   {kBankSpan, 3, TrafficClass::Compute},
                                   {2 * kBankSpan + kRowSpan, 4, TrafficClass::Compute}});
}

// Completion order of: a compute read opening row 0 of bank 0 (t=0), a communication conflict in
// that bank (t=1) and two compute hits to row 0 (t=2, t=3). Under MCA (threshold 2, limit 1 ns)
// the first pick after the opening read has the gate shut and serves a hit; by the next the
// communication request, older than every compute request queued, has been deferred past the
// limit.
std::vector<int> starved_order(Arbitration arbitration) {
  HbmConfig config = one_pseudo_channel();
  config.arbitration = arbitration;
  config.mca.threshold = 2;
  config.mca.starvation_ns = 1;
  return completion_order(config, {{0, 0, TrafficClass::Compute},
                                   {kBankSpan, 1, TrafficClass::Communication},
                                   {256 * 4, 2, TrafficClass::Compute},
                                   {256 * 8, 3, TrafficClass::Compute}});
}

}  // namespace

TEST_CASE("Bank MCA serves a held-back row hit after compute's hits, before compute's conflict",
          "[bank][scheduler][mca]") {
  // The read of another bank (4) goes before the compute conflict (3), whose bank waits for tRAS.
  CHECK(mca_order(true) == std::vector<int>{0, 2, 1, 4, 3});
}

TEST_CASE("Bank MCA without row_hits_first holds every communication request back",
          "[bank][scheduler][mca]") {
  // The read of another bank (4) goes before the compute conflict (3), whose bank waits for tRAS;
  // then one compute request is left, below the threshold: the gate opens.
  CHECK(mca_order(false) == std::vector<int>{0, 2, 4, 1, 3});
}

TEST_CASE("Bank MCA: a starved request opens the gate, FR-FCFS still orders it after row hits",
          "[bank][scheduler][mca]") {
  // Forced ahead of everything (the earlier starvation rule) it would go before the second hit:
  // {0, 2, 1, 3}, an activation and a precharge in compute's way.
  CHECK(starved_order(Arbitration::Mca) == std::vector<int>{0, 2, 3, 1});
}

TEST_CASE("Bank FR-FCFS alone orders the starved request's case the same way",
          "[bank][scheduler][mca]") {
  CHECK(starved_order(Arbitration::Fcfs) == std::vector<int>{0, 2, 3, 1});
}

TEST_CASE("Bank write drain holds writes back until the high watermark", "[bank][scheduler]") {
  HbmConfig config = one_pseudo_channel();
  config.queue_depth = 8;
  config.bank.write_high = 0.5;  // drain from 4 queued writes
  config.bank.write_low = 0.25;  // down to 2
  Bench bench("bench", config);
  std::vector<std::pair<Op, int>> order;
  // t=0: a read occupies the channel. t=1: 3 writes and 3 reads arrive (writes first, all to
  // open-or-closed rows alike: different banks' first granule). Below the watermark the reads go
  // first although younger; then the writes.
  Bench::thread([&] { bench.access(Op::Read, 0, 256); });
  for (int i = 0; i < 3; ++i) {
    Bench::thread([&, i] {
      bench.access(Op::Write, kRowSpan * static_cast<std::uint64_t>(1 + i), 32, ns(1));
      order.emplace_back(Op::Write, i);
    });
  }
  for (int i = 0; i < 3; ++i) {
    Bench::thread([&, i] {
      bench.access(Op::Read, 2 * kBankSpan + kRowSpan * static_cast<std::uint64_t>(i), 32, ns(1.5));
      order.emplace_back(Op::Read, i);
    });
  }
  sc_core::sc_start();
  REQUIRE(order.size() == 6);
  for (int k = 0; k < 3; ++k) CHECK(order[static_cast<std::size_t>(k)].first == Op::Read);
  for (int k = 3; k < 6; ++k) CHECK(order[static_cast<std::size_t>(k)].first == Op::Write);
}

TEST_CASE("Bank write drain serves writes first at the high watermark", "[bank][scheduler]") {
  HbmConfig config = one_pseudo_channel();
  config.queue_depth = 8;
  config.bank.write_high = 0.5;  // 4 writes queued start the drain
  config.bank.write_low = 0.125;
  Bench bench("bench", config);
  std::vector<Op> order;
  Bench::thread([&] { bench.access(Op::Read, 0, 256); });
  for (int i = 0; i < 4; ++i) {
    Bench::thread([&, i] {
      bench.access(Op::Write, kRowSpan * static_cast<std::uint64_t>(1 + i % 3), 32, ns(1));
      order.push_back(Op::Write);
    });
  }
  Bench::thread([&] {
    bench.access(Op::Read, 2 * kBankSpan, 32, ns(1.5));
    order.push_back(Op::Read);
  });
  sc_core::sc_start();
  REQUIRE(order.size() == 5);
  // Writes drain down to the low watermark (1 write) before the read: three writes go first.
  CHECK(order[0] == Op::Write);
  CHECK(order[1] == Op::Write);
  CHECK(order[2] == Op::Write);
  CHECK(order[3] == Op::Read);
}

TEST_CASE("Bank MCA: held-back writes do not start the write drain", "[bank][scheduler][mca]") {
  HbmConfig config = one_pseudo_channel();
  config.queue_depth = 16;
  config.bank.write_high = 0.25;  // 4 queued writes would start the drain
  config.bank.write_low = 0.125;
  config.arbitration = Arbitration::Mca;
  config.mca.threshold = 5;  // above the 4 communication writes, so the gate stays shut
  config.mca.starvation_ns = 1e6;
  Bench bench("bench", config);
  std::vector<TrafficClass> order;
  // t=0: a compute read opens row 0 of the banks of index 0. t=1: 4 communication writes that
  // hit that row. t=1.5: 5 compute reads to closed rows, which shut the gate. Counted, the held
  // writes would reach the watermark, turn the bus to writes and go first as held-back row hits.
  Bench::thread([&] { bench.access(Op::Read, 0, 256); });
  for (int i = 0; i < 4; ++i) {
    Bench::thread([&, i] {
      bench.access(Op::Write, 256 * static_cast<std::uint64_t>(1 + i), 32, ns(1), nullptr,
                   TrafficClass::Communication);
      order.push_back(TrafficClass::Communication);
    });
  }
  for (int i = 0; i < 5; ++i) {
    Bench::thread([&, i] {
      bench.access(Op::Read, 2 * kBankSpan + kRowSpan * static_cast<std::uint64_t>(i % 4), 32,
                   ns(1.5));
      order.push_back(TrafficClass::Compute);
    });
  }
  sc_core::sc_start();
  REQUIRE(order.size() == 9);
  CHECK(order[0] == TrafficClass::Compute);  // the one pick made with the gate shut
}

// Writes base, updates it with add, reads it back (functional mode, one burst, row open, the
// turnarounds long past); returns the update's and the rewrite's times, checks the sums.
struct UpdateTimes {
  sc_time update, write;
};
UpdateTimes update_then_write(const HbmConfig& config) {
  Bench bench("bench", config, SimMode::Functional);
  std::vector<float> base(8, 1.5f), add(8, 2.0f), out(8, 0.0f);
  UpdateTimes times;
  Bench::thread([&] {
    bench.access(Op::Write, 0, 32, SC_ZERO_TIME, reinterpret_cast<unsigned char*>(base.data()));
    sc_time start = sc_time_stamp();
    bench.access(Op::Update, 0, 32, SC_ZERO_TIME, reinterpret_cast<unsigned char*>(add.data()));
    times.update = sc_time_stamp() - start;
    bench.access(Op::Read, 0, 32, SC_ZERO_TIME, reinterpret_cast<unsigned char*>(out.data()));
    start = sc_time_stamp();
    bench.access(Op::Write, 0, 32, SC_ZERO_TIME, reinterpret_cast<unsigned char*>(base.data()));
    times.write = sc_time_stamp() - start;
  });
  sc_core::sc_start();
  for (float v : out) CHECK(v == 3.5f);  // the add is the backing store's, whatever the timing
  return times;
}

TEST_CASE("Bank update on the base die is a read out, the ALU and a write back", "[bank][nmc]") {
  HbmConfig config = one_pseudo_channel();
  config.nmc.placement = NmcPlacement::BaseDie;
  const DramTimingNs t = dram_timing_ns(config);
  const UpdateTimes times = update_then_write(config);
  // RD, CL, burst, ALU, then the WR whose data starts as the sum is ready, burst.
  CHECK(times.update == ns(t.cl + t.burst + config.nmc_alu_latency_ns + t.burst +
                           config.bank.controller_latency_ns));
  CHECK(times.write == ns(t.cwl + t.burst + config.bank.controller_latency_ns));
}

TEST_CASE("Bank update beside the banks: the operand as a write, the sum written in the bank",
          "[bank][nmc]") {
  const HbmConfig config = one_pseudo_channel();
  REQUIRE(config.nmc.placement == NmcPlacement::Bank);
  const DramTimingNs t = dram_timing_ns(config);
  const UpdateTimes times = update_then_write(config);
  // The column command reads the bank while the operand crosses the bus (CWL, burst); the sum is
  // ready an ALU after both the old value (tCCD_L) and the operand, then written (a burst).
  const double operand_in = t.cwl + t.burst;
  CHECK(times.update == ns(std::max(t.ccd_l, operand_in) + config.nmc_alu_latency_ns + t.burst +
                           config.bank.controller_latency_ns));
  CHECK(times.write == ns(t.cwl + t.burst + config.bank.controller_latency_ns));
}

namespace {

// One burst in bank group 0 of bank 0, in `row`.
DramLocation one_burst(std::uint64_t row = 0) {
  DramLocation where;
  where.row = row;
  where.bursts = 1;
  return where;
}

}  // namespace

TEST_CASE("Bank update beside the banks: a write's bus time, a read and a write column of the bank",
          "[bank][nmc]") {
  const HbmConfig config = one_pseudo_channel();
  const DramTiming timing(config, 1000.0);  // 1 ps units
  const std::uint64_t alu = 4000;
  using Kind = PseudoChannelTimer::Kind;
  // A read opens row 0; two entries of one burst each follow in the same bank group, back to
  // back; then a read of another row of the same bank, which must precharge after the second.
  struct Run {
    DramService first, second, conflict;
  };
  const auto run = [&](Kind kind) {
    PseudoChannelTimer timer(config, timing, 0);
    Run r;
    timer.serve(one_burst(), Kind::Read, 0, 0, alu);
    r.first = timer.serve(one_burst(), kind, 0, 0, alu);
    r.second = timer.serve(one_burst(), kind, 0, 0, alu);
    r.conflict = timer.serve(one_burst(1), Kind::Read, 0, 0, alu);
    return r;
  };
  const Run update = run(Kind::Update);
  const Run write = run(Kind::Write);
  // The data bus carries the operand once: a write's bursts at a write's times.
  CHECK(update.first.bus_busy == write.first.bus_busy);
  CHECK(update.first.last_column == write.first.last_column);
  // The bank group takes the update's read column and its write column, tCCD_L each: the next
  // update there follows by 2 x tCCD_L, a write by tCCD_L.
  CHECK(update.second.last_column - update.first.last_column == 2 * timing.ccd_l);
  CHECK(write.second.last_column - write.first.last_column == timing.ccd_l);
  // The bank precharges tWR after the sum's write (ALU after both the old value and the operand),
  // not after the operand's burst.
  const std::uint64_t column = update.second.last_column;
  const std::uint64_t operand_end = column + timing.cwl + timing.burst;
  const std::uint64_t sum_end = std::max(column + timing.ccd_l, operand_end) + alu + timing.burst;
  CHECK(update.second.data_end == sum_end);
  const std::uint64_t write_end = write.second.last_column + timing.cwl + timing.burst;
  CHECK(update.conflict.data_end - write.conflict.data_end == sum_end - write_end);
  CHECK(update.conflict.row_misses == 1);
}

TEST_CASE("Bank row-hit test: a row activated in one bank group counts as open in the others",
          "[bank][scheduler]") {
  const HbmConfig config = one_pseudo_channel();
  const DramTiming timing(config, 1000.0);
  PseudoChannelTimer timer(config, timing, 0);
  // Bank index 0's row 0 is opened in bank group 0 only (one burst).
  const DramService opened = timer.serve(one_burst(), PseudoChannelTimer::Kind::Read, 0, 0, 0);
  REQUIRE(opened.row_misses == 1);
  const auto span = [](std::uint64_t row, int bank, int group) {
    return DramRowSpan{row, bank, static_cast<std::uint8_t>(group), 1};
  };
  // The scheduler may interleave the other groups' bursts of that row with group 0's ...
  CHECK(timer.row_open(span(0, 0, 1)));
  CHECK(timer.row_open(span(0, 0, 3)));
  // ... but not another row of that bank index, nor the same row number at another bank index.
  CHECK_FALSE(timer.row_open(span(1, 0, 1)));
  CHECK_FALSE(timer.row_open(span(0, 1, 0)));
  // Serving group 1's burst still pays its own ACT: the bank's row was not open.
  DramLocation group1 = one_burst();
  group1.first_group = 1;
  group1.first_burst = 1;
  const DramService second = timer.serve(group1, PseudoChannelTimer::Kind::Read, 0, 0, 0);
  CHECK(second.row_misses == 1);
  CHECK(second.row_hits == 0);
}

TEST_CASE("Bank update on the base die holds the bus for a read and a write", "[bank][nmc]") {
  HbmConfig config = one_pseudo_channel();
  config.nmc.placement = NmcPlacement::BaseDie;
  const DramTiming timing(config, 1000.0);
  PseudoChannelTimer timer(config, timing, 0), writes(config, timing, 0);
  const std::uint64_t alu = 4000;
  const DramService update = timer.serve(one_burst(), PseudoChannelTimer::Kind::Update, 0, 0, alu);
  const DramService write = writes.serve(one_burst(), PseudoChannelTimer::Kind::Write, 0, 0, alu);
  CHECK(update.bus_busy == 2 * write.bus_busy);
  // ACT at 0, RD tRCD later, its data back (CL, burst), ALU, then the sum's write data, burst.
  CHECK(update.data_end == timing.rcd_rd + timing.cl + timing.burst + alu + timing.burst);
}

TEST_CASE("Bank stream efficiencies: sequential reads near peak, mixes and random below",
          "[bank][stream]") {
  const HbmConfig config;  // t3-paper geometry, 1000 GB/s peak
  const auto all = [](Op op) { return [op](int, int) { return op; }; };
  std::mt19937_64 random(7);
  std::vector<std::uint64_t> offsets(kSmallThreads * kSmallPerThread);
  for (auto& o : offsets) o = (random() % ((8ull << 30) / kSmallBytes)) * kSmallBytes;
  const auto streams = run_streams({
      {config, kThreads, kPerThread, kBytes, sequential, all(Op::Read)},
      {config, kThreads, kPerThread, kBytes, sequential, all(Op::Write)},
      // 50/50: every other access of the one sequential stream is a write.
      {config, kThreads, kPerThread, kBytes, sequential,
       [](int t, int i) { return (t + i) % 2 ? Op::Write : Op::Read; }},
      // Random 4 KiB reads, the same bytes in flight.
      {config, kSmallThreads, kSmallPerThread, kSmallBytes,
       [&](int t, int i) { return offsets[static_cast<std::size_t>(t * kSmallPerThread + i)]; },
       all(Op::Read)},
  });
  const Stream& reads = streams[0];
  const Stream& writes = streams[1];
  const Stream& mix = streams[2];
  const Stream& scattered = streams[3];
  INFO("reads " << reads.GBps << ", writes " << writes.GBps << ", mix " << mix.GBps << ", random "
                << scattered.GBps << " GB/s");
  CHECK(reads.GBps >= 0.85 * config.bandwidth_GBps);
  CHECK(reads.GBps <= config.bandwidth_GBps);
  CHECK(writes.GBps >= 0.85 * config.bandwidth_GBps);
  // The mix pays turnarounds amortised over write-drain batches; random reads a row miss each.
  CHECK(mix.GBps < 0.99 * reads.GBps);
  CHECK(mix.GBps > 0.8 * config.bandwidth_GBps);
  CHECK(scattered.GBps < 0.75 * reads.GBps);
  CHECK(reads.report["row_hit_rate"].get<double>() > 0.9);
  CHECK(scattered.report["row_hit_rate"].get<double>() < 0.5);
}

TEST_CASE("Bank refresh takes tRFC out of every tREFI", "[bank][refresh]") {
  HbmConfig config = one_pseudo_channel();
  config.bank.timing.refi = 3900;
  // One pseudo-channel streaming row hits for 40 us: about 10 refreshes, each closing the banks.
  const int per_thread = 320;
  const Stream with =
      run_streams({{config, 8, per_thread, 256,
                    [](int t, int i) {
                      return (static_cast<std::uint64_t>(i * 8 + t) * 256) % (16 * 4096);
                    },
                    [](int, int) { return Op::Read; }}})
          .front();
  const double elapsed_us = 8.0 * per_thread * 256 / with.GBps / 1e3;
  const auto refreshes = with.report["refreshes"].get<double>();
  CHECK(refreshes >= std::floor(elapsed_us * 1e3 / 3900) - 1);
  CHECK(refreshes <= std::ceil(elapsed_us * 1e3 / 3900) + 1);
  const DramTimingNs t = dram_timing_ns(config);
  CHECK(with.GBps <= config.bandwidth_GBps * (1 - t.rfc / t.refi));
}

TEST_CASE("Bank timer: the four-group path times every entry as the any-count path does",
          "[bank][latency]") {
  // serve() takes serve_as<4> for four bank groups; serve_as<0> is the same arithmetic with the
  // count a variable. A random mix of reads, writes and updates over a few rows of a few banks
  // (hits, conflicts, turnarounds, refreshes, entries of 1 to 8 bursts from any first burst)
  // must give both the same service, entry by entry.
  HbmConfig config = one_pseudo_channel();
  config.bank.timing.refi = 3900;
  config.nmc.placement = GENERATE(NmcPlacement::Bank, NmcPlacement::BaseDie);
  REQUIRE(config.bank.bank_groups == 4);
  const DramTiming timing(config, 1000.0);  // 1 ps units
  PseudoChannelTimer fixed(config, timing, 0), any(config, timing, 0);
  std::mt19937_64 random(7);
  std::uint64_t now = 0;
  const PseudoChannelTimer::Kind kinds[] = {PseudoChannelTimer::Kind::Read,
                                            PseudoChannelTimer::Kind::Write,
                                            PseudoChannelTimer::Kind::Update};
  int misses = 0;
  for (int entry = 0; entry < 20000; ++entry) {
    DramLocation where;
    where.bank = static_cast<int>(random() % 4);
    where.row = random() % 3;
    where.first_burst = static_cast<int>(random() % 8);
    where.first_group = where.first_burst % 4;
    where.bursts =
        1 + static_cast<int>(random() % static_cast<std::uint64_t>(8 - where.first_burst));
    const PseudoChannelTimer::Kind kind = kinds[random() % 3];
    const std::uint64_t arrival = now - std::min<std::uint64_t>(now, random() % 50000);
    const DramService a = fixed.serve_as<4>(where, kind, arrival, now, 4000);
    const DramService b = any.serve_as<0>(where, kind, arrival, now, 4000);
    INFO("entry " << entry);
    REQUIRE(a.data_end == b.data_end);
    REQUIRE(a.last_column == b.last_column);
    REQUIRE(a.bus_busy == b.bus_busy);
    REQUIRE(a.row_hits == b.row_hits);
    REQUIRE(a.row_misses == b.row_misses);
    misses += a.row_misses;
    now = std::max(now, a.last_column) + random() % 3000;
  }
  CHECK(fixed.refreshes() == any.refreshes());
  CHECK(fixed.refreshes() > 0);
  CHECK(misses > 1000);  // conflicts were exercised, not only hits
}

TEST_CASE("Bank timing: clocks become ns at the preset's tCK, exactly", "[bank][timing]") {
  // t3-paper: 1000 GB/s over 32 x 2 x 64 pins is 1.953125 Gb/s per pin, two beats a clock, so
  // tCK = 1.024 ns and every count of Ramulator2's HBM2 table is 1.024 ns a clock; in the
  // model's 1 ps units each is a whole number of ps.
  const HbmConfig config = load_system("t3-paper").hbm;
  CHECK(dram_clock_ns(config) == Approx(1.024).epsilon(1e-15));
  const DramTiming t(config, 1000.0);  // 1 ps units
  CHECK(t.cl == 14336u);               // 14 clocks
  CHECK(t.cwl == 5120u);               // 5
  CHECK(t.rcd_rd == 14336u);           // 14
  CHECK(t.rcd_wr == 12288u);           // 12
  CHECK(t.rp == 14336u);               // 14
  CHECK(t.ras == 34816u);              // 34
  CHECK(t.rc == 49152u);               // 48
  CHECK(t.ccd_s == 2048u);             // 2
  CHECK(t.ccd_l == 4096u);             // 4
  CHECK(t.rrd_s == 4096u);             // 4
  CHECK(t.rrd_l == 4096u);             // 4
  CHECK(t.faw == 15360u);              // 15
  CHECK(t.wtr_s == 6144u);             // 6
  CHECK(t.wtr_l == 8192u);             // 8
  CHECK(t.rtw_gap == 2048u);           // rtw 13 + cwl 5 - cl 14 - one burst of 2
  CHECK(t.wr == 16384u);               // 16
  CHECK(t.rtp == 5120u);               // 5
  CHECK(t.refi == 3993600u);           // 3900
  CHECK(t.rfc == 358400u);             // 350
  CHECK(t.burst == 2048u);             // 4 beats, 2 clocks
  // Twice the pins' rate is the same part clocked twice as fast: every timing halves.
  HbmConfig faster = config;
  faster.bandwidth_GBps = 2000;
  const DramTiming f(faster, 1000.0);
  CHECK(f.cl * 2 == t.cl);
  CHECK(f.rc * 2 == t.rc);
  CHECK(f.ccd_s * 2 == t.ccd_s);
  CHECK(f.burst * 2 == t.burst);
}

TEST_CASE("Bank timing: the reachable peak names the key that caps it", "[bank][timing]") {
  HbmConfig config = load_system("t3-paper").hbm;
  for (const double GBps : {250.0, 1000.0, 2000.0}) {
    config.bandwidth_GBps = GBps;
    const DramPeak peak = dram_reachable_peak(config);
    CHECK(peak.reachable_GBps == GBps);
    CHECK(peak.limited_by.empty());
    CHECK(dram_peak_warning(config).empty());
  }
  config.bandwidth_GBps = 1000;
  // tCCD_S of 3 clocks between bursts of 2: two thirds of the pins' rate.
  config.bank.timing.ccd_s = 3;
  DramPeak peak = dram_reachable_peak(config);
  CHECK(peak.limited_by == "hbm.bank.timing.ccd_s");
  CHECK(peak.reachable_GBps == Approx(1000.0 * 2 / 3));
  CHECK_THAT(dram_peak_warning(config),
             Contains("hbm.bank.timing.ccd_s") && Contains("666.7 GB/s"));
  // tCCD_L of 12 clocks over the 4 bank groups a granule alternates between: 3 clocks a burst.
  config.bank.timing.ccd_s = 2;
  config.bank.timing.ccd_l = 12;
  peak = dram_reachable_peak(config);
  CHECK(peak.limited_by == "hbm.bank.timing.ccd_l");
  CHECK(peak.reachable_GBps == Approx(1000.0 * 2 / 3));
  // tFAW of 512 clocks: 128 clocks an activate, one 1 KiB page each, on 64 pseudo-channels:
  // 64 x 1024 B / 131.072 ns = 500 GB/s.
  config.bank.timing.ccd_l = 4;
  config.bank.timing.faw = 512;
  peak = dram_reachable_peak(config);
  CHECK(peak.limited_by == "hbm.bank.timing.faw");
  CHECK(peak.reachable_GBps == Approx(500.0));
  // The simple model has no bank timing to warn about.
  config.model = HbmModel::Simple;
  CHECK(dram_peak_warning(config).empty());
}

TEST_CASE("Bank open time runs from an activation of closed banks to the next refresh",
          "[bank][energy]") {
  const HbmConfig config;  // tREFI 3900 clocks of 1.024 ns, refresh phase 0: first due at 3993.6 ns
  const DramTiming timing(config, 1000.0);  // units of 1 ps
  PseudoChannelTimer timer(config, timing, 0);
  DramLocation where;
  where.bursts = 1;
  constexpr std::uint64_t us = 1000000;  // 1 us in units
  CHECK(timer.open_time(5 * us) == 0);   // nothing opened yet: precharged standby
  timer.serve(where, PseudoChannelTimer::Kind::Read, 1 * us, 1 * us, 0);  // ACT at 1 us
  CHECK(timer.open_time(2 * us) == 1 * us);
  // The refresh due at 3.9936 us closes the bank (its tRAS and tRTP long past): open 1 to 3.9936
  // us.
  // The next access reopens it at its arrival, 5 us, and the count resumes from there.
  timer.serve(where, PseudoChannelTimer::Kind::Read, 5 * us, 5 * us, 0);
  CHECK(timer.refreshes() == 1);
  CHECK(timer.open_time(5 * us) == 2993600);
  CHECK(timer.open_time(6 * us) == 2993600 + 1 * us);
}
