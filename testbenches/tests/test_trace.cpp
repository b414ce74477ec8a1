// Memory traces: the STL reader's grammar and refusals, playing a trace with exact timing on the
// simple HBM model, the recorder's round trip, and the player's golden check of read data.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#include "config/config_io.h"
#include "harness/debug_access.h"
#include "harness/stl_trace.h"
#include "harness/trace_player.h"
#include "harness/trace_recorder.h"
#include "models/system/tp_group.h"
#include "testbenches/child_process.h"
#include "testbenches/small_system.h"

using namespace t3;

namespace {

std::vector<StlRecord> parse(const std::string& text, const StlLimits& limits = {}) {
  std::istringstream in(text);
  return read_stl(in, "t.stl", limits);
}

// The message parse() throws for `text`.
std::string refusal(const std::string& text, const StlLimits& limits = {}) {
  try {
    parse(text, limits);
  } catch (const std::runtime_error& error) {
    return error.what();
  }
  return "(accepted)";
}

// One GPU of the t3-paper preset with a single channel and the simple model: 32 GB/s, 100 ns.
SystemConfig simple_hbm(SimMode mode) {
  SystemConfig config = small_system(1, mode);
  for (const char* assignment : {"hbm.model=simple", "hbm.channels=1", "hbm.bandwidth_GBps=32",
                                 "hbm.latency_ns=100", "hbm.capacity_bytes=1073741824"}) {
    apply_override(config, assignment);
  }
  validate(config);
  return config;
}

TracePlayerOptions below_l2(const TpGroup& group, SimMode mode) {
  TracePlayerOptions options;
  options.base = group.address_map().hbm_base(0);
  options.cache_hint = CacheHint::Uncached;
  options.check_data = mode == SimMode::Functional;
  return options;
}

std::string data_hex(unsigned char byte, int bytes) {
  static const char* kHex = "0123456789abcdef";
  std::string text = "0x";
  for (int i = 0; i < bytes; ++i) text += std::string{kHex[byte >> 4], kHex[byte & 15]};
  return text;
}

// Overwrites one byte of memory with 0 at 500 ns, through debug transport (behind the player).
struct Corrupter : sc_core::sc_module {
  Corrupter(sc_core::sc_module_name name, Router& router, std::uint64_t address)
      : sc_module(name), router(router), address(address) {
    SC_HAS_PROCESS(Corrupter);
    SC_THREAD(run);
  }
  void run() {
    wait(500, sc_core::SC_NS);
    debug_write(router, address, Bytes{0x00});
  }
  Router& router;
  std::uint64_t address;
};

}  // namespace

TEST_CASE("an STL trace reads as DRAMSys reads it, with comments and blank lines skipped",
          "[trace]") {
  const auto records = parse(
      "# a comment\n"
      "\n"
      "0:\tread\t0x0\n"
      "   \n"
      "3:\t(64)\twrite\t0x40\n"
      "3:\twrite\t0x80\t" +
      data_hex(0xab, 4) +
      "\r\n"
      "7:\tupdate\t0x100\n");
  REQUIRE(records.size() == 4);
  CHECK(records[0].time == 0);
  CHECK(records[0].command == StlCommand::Read);
  CHECK(records[0].length == 32);  // the default: one BL4 burst of a 64-bit pseudo-channel
  CHECK(records[0].line == 3);
  CHECK(records[1].length == 64);
  CHECK(records[1].address == 0x40);
  CHECK(records[2].data == std::vector<unsigned char>(4, 0xab));
  CHECK(records[2].length == 4);  // a data field without a length token sets the length
  CHECK(records[3].command == StlCommand::Update);
  CHECK(records[3].line == 7);
  // Written lines read back as they were.
  CHECK(stl_line(records[2], false) == "3:\twrite\t0x80\t0xabababab\n");
  CHECK(parse(stl_line(records[1], true)).front().length == 64);
}

TEST_CASE("a bad STL line is refused with its line number", "[trace]") {
  CHECK(refusal("0:\tread\t0x0\n1:\tfetch\t0x40\n") ==
        "t.stl:2: command 'fetch' is not read, write or update");
  CHECK(refusal("\n# c\nx:\tread\t0x0\n") ==
        "t.stl:3: timestamp 'x:' is not a cycle count followed by ':'");
  CHECK(refusal("5\tread\t0x0\n").rfind("t.stl:1: timestamp '5'", 0) == 0);
  CHECK(refusal("0:\tread\t40\n") == "t.stl:1: address '40' is not 0x followed by hex digits");
  CHECK(refusal("0:\twrite\t0x0\t0xabc\n").rfind("t.stl:1: data", 0) == 0);
  CHECK(refusal("0:\t(64)\twrite\t0x0\t0xabab\n") == "t.stl:1: data holds 2 bytes, the request 64");
  CHECK(refusal("0:\tread\t0x0\t0xab\tmore\n") == "t.stl:1: unexpected 'more' after the data");
}

TEST_CASE("an STL request beyond the memory's capacity is refused", "[trace]") {
  StlLimits limits;
  limits.capacity = 0x1000;
  CHECK(parse("0:\tread\t0xfe0\n", limits).size() == 1);  // ends exactly at the capacity
  CHECK(refusal("0:\tread\t0xfe0\n1:\tread\t0xff0\n", limits) ==
        "t.stl:2: request of 32 bytes at 0xff0 ends beyond the memory's capacity of 0x1000 bytes");
  CHECK(refusal("0:\tread\t0xffffffffffffffff\n", limits).rfind("t.stl:1: request", 0) == 0);
}

TEST_CASE("an STL timestamp going backwards is refused", "[trace]") {
  CHECK(parse("4:\tread\t0x0\n4:\tread\t0x20\n").size() == 2);  // equal times are fine
  CHECK(refusal("4:\tread\t0x0\n\n3:\tread\t0x20\n") ==
        "t.stl:3: timestamp 3 goes back from 4 (line 1)");
}

// 100 reads of 32 B, one per ns, into a 32 GB/s channel of 100 ns latency, with slots for all of
// them: each holds the bus for 1 ns and is done 101 ns after it arrives, so the last (at 99 ns)
// ends at 200 ns: 3200 B / 200 ns = 16 GB/s, every latency 101 ns.
TEST_CASE("a timed trace plays on the simple HBM model at exactly the expected bandwidth",
          "[trace]") {
  const SystemConfig config = simple_hbm(SimMode::Timing);
  std::string text;
  for (int i = 0; i < 100; ++i)
    text += std::to_string(i) + ":\tread\t0x" + std::to_string(i) + "00\n";
  TpGroup group("group", config);
  TracePlayerOptions options = below_l2(group, SimMode::Timing);
  options.outstanding = 128;
  TracePlayer player("player", parse(text), options);
  player.socket.bind(group.gpu(0).memory_tap.inject);
  sc_core::sc_start();
  REQUIRE(player.done());
  const TracePlayResult& result = player.result();
  CHECK(result.errors.empty());
  CHECK(result.requests == 100);
  CHECK(result.bytes == 3200);
  CHECK(result.start == sc_core::SC_ZERO_TIME);
  CHECK(result.end == sc_core::sc_time(200, sc_core::SC_NS));
  CHECK(result.bandwidth_GBps() == Approx(16.0).epsilon(1e-12));
  for (const double latency : result.latency_ns) CHECK(latency == Approx(101.0).epsilon(1e-12));
}

// --saturate: 64 slots and 128 requests at time 0. Requests 0..63 issue at once and are served one
// per ns, done at 101..164 ns; as slot i frees (101 + i ns) it issues request 64 + i, which finds
// the channel idle and is done 101 ns later: the last at 265 ns.
TEST_CASE("a saturating player keeps its slots full", "[trace]") {
  const SystemConfig config = simple_hbm(SimMode::Timing);
  std::string text;
  for (int i = 0; i < 128; ++i) text += "0:\twrite\t0x" + std::to_string(i) + "00\n";
  TpGroup group("group", config);
  TracePlayerOptions options = below_l2(group, SimMode::Timing);
  options.saturate = true;
  options.outstanding = 64;
  TracePlayer player("player", parse(text), options);
  player.socket.bind(group.gpu(0).memory_tap.inject);
  sc_core::sc_start();
  CHECK(player.result().end == sc_core::sc_time(265, sc_core::SC_NS));
  for (std::size_t i = 0; i < 128; ++i) {
    INFO("request " << i);
    CHECK(player.result().latency_ns[i] == Approx(i < 64 ? 101.0 + static_cast<double>(i) : 101.0));
  }
}

// A mixed trace (reads, writes, updates over several channels and banks) played into GPU 0 while
// the recorder watches its controller; the recording played again (in a second simulation, also
// recorded) must decode to the same per-bank read and write bursts as the original.
TEST_CASE("recording a played trace and playing the recording gives the same bank activity",
          "[trace]") {
  const std::string original = "trace-roundtrip-original.stl";
  const std::string first = "trace-roundtrip-first.stl";
  const std::string second = "trace-roundtrip-second.stl";
  {
    std::ofstream out(original);
    for (int i = 0; i < 400; ++i) {
      const char* command = i % 5 == 0 ? "update" : i % 3 == 0 ? "write" : "read";
      // A stride of 4160 B walks channels, banks and rows and lands mid-granule.
      out << i * 3 << ":\t" << command << "\t0x" << std::hex << i * 4160 + (i % 4) * 32 << std::dec
          << "\n";
    }
  }
  const auto play_recorded = [](const std::string& in, const std::string& out) {
    return run_in_child([&] {
      const SystemConfig config = small_system(2, SimMode::Timing);
      TraceRecorder recorder(out, 0, config);
      TpGroup group("group", config);
      TracePlayer player("player", read_stl_file(in), below_l2(group, SimMode::Timing));
      player.socket.bind(group.gpu(0).memory_tap.inject);
      sc_core::sc_start();
      recorder.close();
      return std::to_string(recorder.lines());
    });
  };
  const std::string lines = play_recorded(original, first);
  CHECK(play_recorded(first, second) == lines);
  const SystemConfig config = small_system(2, SimMode::Timing);
  const BankActivity expected = bank_activity(read_stl_file(original), config.hbm);
  const BankActivity recorded = bank_activity(read_stl_file(first), config.hbm);
  const BankActivity replayed = bank_activity(read_stl_file(second), config.hbm);
  CHECK(expected.banks.size() > 16);  // the trace touches many banks
  CHECK(recorded.banks == expected.banks);
  CHECK(replayed.banks == expected.banks);
  // Nothing is recorded of a GPU the trace does not reach.
  CHECK(read_stl_file(first).size() == std::stoul(lines));
}

namespace {

// Functional mode: a write, then a read of the same bytes 1 us later; with `corrupt`, a debug write
// between them zeroes one byte behind the player's back.
TracePlayResult write_then_read(bool corrupt) {
  const SystemConfig config = simple_hbm(SimMode::Functional);
  TpGroup group("group", config);
  const std::string text = "0:\twrite\t0x1000\t" + data_hex(0x5a, 32) + "\n1000:\tread\t0x1000\n";
  TracePlayer player("player", parse(text), below_l2(group, SimMode::Functional));
  player.socket.bind(group.gpu(0).memory_tap.inject);
  std::unique_ptr<Corrupter> corrupter;
  if (corrupt) {
    corrupter = std::make_unique<Corrupter>("corrupter", group.gpu(0).router,
                                            group.address_map().hbm_base(0) + 0x1007);
  }
  sc_core::sc_start();
  return player.result();
}

}  // namespace

TEST_CASE("the golden check passes a read of what was written", "[trace]") {
  const TracePlayResult result = write_then_read(false);
  CHECK(result.checked_reads == 1);
  CHECK(result.mismatches.empty());
}

TEST_CASE("the golden check catches a corrupted read and names its address", "[trace]") {
  const TracePlayResult result = write_then_read(true);
  REQUIRE(result.mismatches.size() == 1);
  CHECK(result.mismatches.front() == "line 2: read at 0x1007 returned 0, expected 90");
}

TEST_CASE("a read line's own data is its expected value", "[trace]") {
  const SystemConfig config = simple_hbm(SimMode::Functional);
  TpGroup group("group", config);
  const std::string text =
      "0:\twrite\t0x0\t" + data_hex(0x11, 32) + "\n500:\tread\t0x0\t" + data_hex(0x11, 31) + "12\n";
  TracePlayer player("player", parse(text), below_l2(group, SimMode::Functional));
  player.socket.bind(group.gpu(0).memory_tap.inject);
  sc_core::sc_start();
  REQUIRE(player.result().mismatches.size() == 1);
  CHECK(player.result().mismatches.front() == "line 2: read at 0x1f returned 17, expected 18");
}
