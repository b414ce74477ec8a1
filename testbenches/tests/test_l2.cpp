// Memory-side L2 in front of a memory controller: hits and misses, LRU replacement, bypass of
// uncached accesses and updates, write-back, functional exactness under concurrency, latency,
// bank bandwidth, geometry checks and error responses.
// Each case builds its own design and runs sc_start once (ctest runs every case in its process).
#define SC_INCLUDE_DYNAMIC_PROCESSES
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <tlm_utils/simple_initiator_socket.h>
#include <systemc>
#include <tlm>

#include "models/hbm/memory_controller.h"
#include "models/l2/l2_cache.h"
#include "models/l2/tag_array.h"
#include "tlm_interconnect/element.h"

using namespace t3;
using sc_core::SC_NS;
using sc_core::sc_time;
using sc_core::sc_time_stamp;
using sc_core::SC_ZERO_TIME;

namespace {

constexpr int kCompute = static_cast<int>(TrafficClass::Compute);
constexpr int kCommunication = static_cast<int>(TrafficClass::Communication);

// 8 KiB, 4 ways, 128 B lines of four 32 B sectors, tagged line by line: 16 sets. 4 banks of
// 32 B/ns: a line in 4 ns.
L2Config small_l2() {
  L2Config c;
  c.size_bytes = 8192;
  c.ways = 4;
  c.line_bytes = 128;
  c.sector_bytes = 32;
  c.block_lines = 1;
  c.banks = 4;
  c.bank_bytes_per_clock = 32;
  c.clock_GHz = 1.0;
  c.hit_latency_ns = 20;
  return c;
}

// 4 channels of 32 B/ns, 50 ns latency.
HbmConfig small_hbm() {
  HbmConfig c;
  c.model = HbmModel::Simple;  // the L2's latencies are checked against this model's formula
  c.capacity_bytes = 1 << 20;
  c.channels = 4;
  c.bandwidth_GBps = 128;
  c.interleave_bytes = 256;
  c.latency_ns = 50;
  return c;
}

sc_time ns(double value) {
  return sc_time(value, SC_NS);
}

double bank_ns(const L2Config& c, double bytes) {
  return bytes / (c.bank_bytes_per_clock * c.clock_GHz);
}

double channel_ns(const HbmConfig& c, double bytes) {
  return bytes / (c.bandwidth_GBps / static_cast<double>(c.channels));
}

std::uint64_t sectors(const L2Config& c, std::uint64_t bytes) {
  return bytes / static_cast<std::uint64_t>(c.sector_bytes);
}

// Initiator -> L2 -> memory controller. Test threads issue through `socket`.
struct Bench : sc_core::sc_module {
  tlm_utils::simple_initiator_socket<Bench> socket;
  MemoryController mc;
  L2Cache l2;
  std::uint64_t base;

  Bench(sc_core::sc_module_name name, const L2Config& l2_config, const HbmConfig& hbm_config,
        SimMode mode, std::uint64_t window_base = 0, std::uint64_t l2_window = 0)
      : sc_core::sc_module(name),
        socket("socket"),
        mc("mc", hbm_config, mode, window_base),
        l2("l2", l2_config, mode, window_base,
           l2_window != 0 ? l2_window : hbm_config.capacity_bytes),
        base(window_base) {
    socket.bind(l2.in);
    l2.out.bind(mc.socket);
  }

  static void thread(std::function<void()> body) { sc_core::sc_spawn(std::move(body)); }

  struct Access {
    Op op = Op::Read;
    TrafficClass traffic_class = TrafficClass::Compute;
    CacheHint hint = CacheHint::Cached;
    ElementType element = ElementType::Fp32;
    UnitKind unit_kind = UnitKind::TrafficGenerator;
    std::uint16_t unit = 0;  // with unit_kind Sm: the SM (of GPU 0) that issues it
  };
  // `a` issued by SM `sm` of GPU 0.
  static Access by_sm(Access a, int sm) {
    a.unit_kind = UnitKind::Sm;
    a.unit = static_cast<std::uint16_t>(sm);
    return a;
  }
  static Access read(TrafficClass c = TrafficClass::Compute) { return {Op::Read, c}; }
  static Access write(TrafficClass c = TrafficClass::Compute) { return {Op::Write, c}; }
  static Access uncached(Op op, TrafficClass c = TrafficClass::Compute) {
    return {op, c, CacheHint::Uncached};
  }
  static Access update(TrafficClass c = TrafficClass::Communication) {
    return {Op::Update, c, CacheHint::Uncached};
  }

  // One b_transport at window offset `offset`; `delay` in: annotation, out: as returned.
  tlm::tlm_response_status issue(const Access& a, std::uint64_t offset, unsigned bytes,
                                 unsigned char* data, sc_time& delay) {
    tlm::tlm_generic_payload payload;
    T3Extension extension;
    extension.op = a.op;
    extension.traffic_class = a.traffic_class;
    extension.cache_hint = a.hint;
    extension.element = a.element;
    extension.unit_kind = a.unit_kind;
    extension.origin.unit = a.unit;
    payload.set_address(base + offset);
    payload.set_data_ptr(data);
    payload.set_data_length(bytes);
    payload.set_streaming_width(bytes);
    payload.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    T3Extension::set(payload, extension);
    socket->b_transport(payload, delay);
    return payload.get_response_status();
  }

  // Issues and then waits out the returned delay: the thread continues at the completion time.
  tlm::tlm_response_status run(const Access& a, std::uint64_t offset, unsigned bytes,
                               unsigned char* data = nullptr) {
    sc_time delay = SC_ZERO_TIME;
    const tlm::tlm_response_status status = issue(a, offset, bytes, data, delay);
    if (delay > SC_ZERO_TIME) sc_core::wait(delay);
    return status;
  }

  // A plain TLM read without the t3 extension (a virtual platform's initiator).
  tlm::tlm_response_status plain_read(std::uint64_t offset, unsigned bytes, unsigned char* data) {
    tlm::tlm_generic_payload payload;
    payload.set_command(tlm::TLM_READ_COMMAND);
    payload.set_address(base + offset);
    payload.set_data_ptr(data);
    payload.set_data_length(bytes);
    payload.set_streaming_width(bytes);
    payload.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    sc_time delay = SC_ZERO_TIME;
    socket->b_transport(payload, delay);
    if (delay > SC_ZERO_TIME) sc_core::wait(delay);
    return payload.get_response_status();
  }

  static unsigned debug_on(tlm::tlm_fw_transport_if<>* target, bool write, std::uint64_t address,
                           unsigned char* data, unsigned bytes) {
    tlm::tlm_generic_payload payload;
    payload.set_command(write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
    payload.set_address(address);
    payload.set_data_ptr(data);
    payload.set_data_length(bytes);
    payload.set_streaming_width(bytes);
    return target->transport_dbg(payload);
  }
  // Debug access through the L2.
  unsigned debug(bool write, std::uint64_t offset, unsigned char* data, unsigned bytes) {
    return debug_on(socket.operator->(), write, base + offset, data, bytes);
  }
  // Debug access to memory directly, behind the L2.
  unsigned memory(bool write, std::uint64_t offset, unsigned char* data, unsigned bytes) {
    return debug_on(l2.out.operator->(), write, base + offset, data, bytes);
  }
};

std::uint64_t total(const L2Stats::PerClass& counter) {
  return counter[0] + counter[1];
}

std::vector<unsigned char> pattern(std::size_t bytes, unsigned seed) {
  std::vector<unsigned char> v(bytes);
  for (std::size_t i = 0; i < bytes; ++i) v[i] = static_cast<unsigned char>(seed * 37 + i * 11 + 1);
  return v;
}

}  // namespace

TEST_CASE("L2 re-read of a working set that fits hits on the second pass", "[l2]") {
  const L2Config config = small_l2();
  Bench bench("bench", config, small_hbm(), SimMode::Timing);
  const unsigned chunk = 256;
  const std::uint64_t working_set = config.size_bytes;  // exactly fills every way of every set
  L2Stats after_first{};
  int failures = 0;
  Bench::thread([&] {
    for (std::uint64_t at = 0; at < working_set; at += chunk) {  // timing mode: no data
      failures += bench.run(Bench::read(), at, chunk) != tlm::TLM_OK_RESPONSE;
    }
    after_first = bench.l2.stats();
    // Second pass with plain TLM payloads: they are cached compute reads.
    for (std::uint64_t at = 0; at < working_set; at += chunk) {
      failures += bench.plain_read(at, chunk, nullptr) != tlm::TLM_OK_RESPONSE;
    }
  });
  sc_core::sc_start();
  CHECK(failures == 0);
  const L2Stats& s = bench.l2.stats();
  const std::uint64_t ws_sectors = sectors(config, working_set);
  CHECK(after_first.read_miss_sectors[kCompute] == ws_sectors);
  CHECK(after_first.read_hit_sectors[kCompute] == 0);
  CHECK(after_first.fill_bytes[kCompute] == working_set);
  CHECK(s.read_hit_sectors[kCompute] - after_first.read_hit_sectors[kCompute] == ws_sectors);
  CHECK(s.read_miss_sectors[kCompute] == after_first.read_miss_sectors[kCompute]);
  CHECK(s.fill_bytes[kCompute] == working_set);  // no new fills
  CHECK(total(s.evictions) == 0);
  CHECK(total(s.writeback_bytes) == 0);
  CHECK(bench.mc.stats().bytes[static_cast<int>(Op::Read)][kCompute] == working_set);
  // Each access's missing sectors are contiguous (two lines): one memory read per access.
  CHECK(bench.mc.stats().requests[static_cast<int>(Op::Read)][kCompute] == working_set / chunk);
  const nlohmann::json report = bench.l2.report();
  CHECK(report["hit_rate"].get<double>() == Approx(0.5));
  CHECK(report["classes"]["compute"]["hit_rate"].get<double>() == Approx(0.5));
  CHECK(report["classes"]["communication"]["hit_rate"].get<double>() == 0.0);
  CHECK(report["sets"] == config.size_bytes / (config.line_bytes * config.ways));
  CHECK(bench.l2.pending() == 0);
  CHECK(bench.mc.pending() == 0);
}

TEST_CASE("L2 streaming twice its size twice thrashes LRU", "[l2]") {
  const L2Config config = small_l2();
  Bench bench("bench", config, small_hbm(), SimMode::Timing);
  const unsigned chunk = 256;
  const std::uint64_t working_set = 2 * config.size_bytes;
  L2Stats after_first{};
  Bench::thread([&] {
    for (int pass = 0; pass < 2; ++pass) {
      for (std::uint64_t at = 0; at < working_set; at += chunk) {
        bench.run(Bench::read(TrafficClass::Communication), at, chunk);
      }
      if (pass == 0) after_first = bench.l2.stats();
    }
  });
  sc_core::sc_start();
  const L2Stats& s = bench.l2.stats();
  const std::uint64_t lines = config.size_bytes / static_cast<std::uint64_t>(config.line_bytes);
  // A cyclic pattern over 2x the capacity: every line was replaced before it came round again.
  CHECK(after_first.read_hit_sectors[kCommunication] == 0);
  CHECK(s.read_hit_sectors[kCommunication] == 0);
  CHECK(s.read_miss_sectors[kCommunication] == 2 * sectors(config, working_set));
  CHECK(s.fill_bytes[kCommunication] == 2 * working_set);
  // 4x capacity lines allocated; the first `lines` found empty ways.
  CHECK(s.evictions[kCommunication] == 3 * lines);
  CHECK(total(s.writeback_bytes) == 0);  // clean lines leave silently
  CHECK(s.read_miss_sectors[kCompute] == 0);
  CHECK(s.fill_bytes[kCompute] == 0);
  CHECK(bench.l2.report()["classes"]["communication"]["hit_rate"].get<double>() == 0.0);
  CHECK(bench.l2.pending() == 0);
  CHECK(bench.mc.pending() == 0);
}

TEST_CASE("L2 fetches each contiguous run of missing sectors with one memory read", "[l2]") {
  const L2Config config = small_l2();
  Bench bench("bench", config, small_hbm(), SimMode::Timing);
  const auto line = static_cast<std::uint64_t>(config.line_bytes);
  const auto sector = static_cast<std::uint64_t>(config.sector_bytes);
  std::vector<std::uint64_t> requests;  // memory reads after each step
  auto reads = [&] { return bench.mc.stats().requests[static_cast<int>(Op::Read)][kCompute]; };
  Bench::thread([&] {
    bench.run(Bench::read(), sector, static_cast<unsigned>(sector));  // sector 1 of line 0
    requests.push_back(reads());
    // Lines 0-2: line 0 misses sectors 0 and 2-3, lines 1-2 miss everything: runs [0, 1 sector)
    // and [2 sectors, 3 lines).
    bench.run(Bench::read(), 0, static_cast<unsigned>(3 * line));
    requests.push_back(reads());
    // A write partial at both ends of line 3: its first and last sectors are fetched, apart.
    bench.run(Bench::write(), 3 * line + 16, static_cast<unsigned>(3 * sector));
    requests.push_back(reads());
    // A write partial in two adjacent sectors of line 4: one fetch of both.
    bench.run(Bench::write(), 4 * line + sector + 8, static_cast<unsigned>(sector));
    requests.push_back(reads());
  });
  sc_core::sc_start();
  CHECK(requests == std::vector<std::uint64_t>{1, 3, 5, 6});
  const L2Stats& s = bench.l2.stats();
  CHECK(s.fill_bytes[kCompute] == 3 * line + 2 * sector + 2 * sector);
  CHECK(bench.mc.stats().bytes[static_cast<int>(Op::Read)][kCompute] == s.fill_bytes[kCompute]);
  CHECK(s.read_hit_sectors[kCompute] == 1);
  CHECK(s.write_miss_sectors[kCompute] == 4 + 2);
  CHECK(bench.l2.pending() == 0);
}

TEST_CASE("L2 bypass stores and updates never allocate", "[l2]") {
  const L2Config config = small_l2();
  Bench bench("bench", config, small_hbm(), SimMode::Functional);
  const std::uint64_t x = 0, y = 4096, z = 8192 + 512;
  const std::vector<unsigned char> stored = pattern(256, 1), written = pattern(64, 2);
  std::vector<unsigned char> operand(256), z_operand(64);
  for (std::size_t i = 0; i < 64; ++i) store_element(operand.data(), i, ElementType::Fp32, i);
  for (std::size_t i = 0; i < 16; ++i) store_element(z_operand.data(), i, ElementType::Fp32, 3);
  std::vector<unsigned char> read_x(256), read_y(256), read_z(64), uncached_x(32), expected_z;
  L2Stats after_bypass{}, after_reads{};
  std::vector<tlm::tlm_response_status> status;
  Bench::thread([&] {
    std::vector<unsigned char> s = stored, o = operand, w = written, zo = z_operand;
    status.push_back(bench.run(Bench::uncached(Op::Write), x, 256, s.data()));
    status.push_back(bench.run(Bench::update(), y, 256, o.data()));
    after_bypass = bench.l2.stats();
    status.push_back(bench.run(Bench::read(), x, 256, read_x.data()));
    status.push_back(bench.run(Bench::read(), y, 256, read_y.data()));
    after_reads = bench.l2.stats();
    // A dirty line under an update: written back first, invalidated, then the add is applied.
    status.push_back(bench.run(Bench::write(), z, 64, w.data()));
    status.push_back(bench.run(Bench::update(), z, 64, zo.data()));
    status.push_back(bench.run(Bench::read(), z, 64, read_z.data()));
    // A dirty sector under an uncached read: the read sees the L2's data.
    std::vector<unsigned char> fresh = pattern(32, 3);
    status.push_back(bench.run(Bench::write(), x, 32, fresh.data()));
    status.push_back(bench.run(Bench::uncached(Op::Read), x, 32, uncached_x.data()));
  });
  sc_core::sc_start();
  for (auto st : status) CHECK(st == tlm::TLM_OK_RESPONSE);
  const L2Stats& s = bench.l2.stats();
  CHECK(after_bypass.bypass_bytes[kCompute] == 256);
  CHECK(after_bypass.bypass_bytes[kCommunication] == 256);
  CHECK(total(after_bypass.fill_bytes) == 0);
  // The cached reads after the bypasses miss every sector: nothing was allocated.
  CHECK(after_reads.read_miss_sectors[kCompute] == sectors(config, 512));
  CHECK(after_reads.read_hit_sectors[kCompute] == 0);
  CHECK(read_x == stored);
  CHECK(read_y == operand);  // memory was zero: 0 + operand
  // z: the 64 B write made two dirty sectors; the update wrote them back and invalidated them.
  CHECK(s.writeback_bytes[kCommunication] == 64);
  CHECK(s.bypass_bytes[kCommunication] == 256 + 64);
  CHECK(s.write_miss_sectors[kCompute] == sectors(config, 64));
  CHECK(s.write_hit_sectors[kCompute] == 1);  // x's first sector was cached by the read
  CHECK(s.read_miss_sectors[kCompute] == sectors(config, 512 + 64));  // the z read missed too
  expected_z = written;
  add_elements(expected_z.data(), z_operand.data(), 64, ElementType::Fp32);
  CHECK(read_z == expected_z);
  CHECK(uncached_x == pattern(32, 3));
  CHECK(s.writeback_bytes[kCompute] == 32);  // the uncached read flushed x's dirty sector
  CHECK(s.bypass_bytes[kCompute] == 256 + 32);
  CHECK(total(s.read_hit_sectors) == 0);
  CHECK(bench.l2.pending() == 0);
  CHECK(bench.mc.pending() == 0);
}

namespace {

// Threads own bytes exclusively, so each thread's view is program order, yet they share sectors
// and lines: granule g (16 B) of the shared area belongs to thread g % threads. Each thread also
// has a private area for multi-line accesses. Every read is checked when it returns; at the end
// the whole region is read back through the L2 (b_transport and transport_dbg) and compared
// with a byte-array model. Returns the L2's statistics.
// With `as_sms`, thread t issues as SM t (so, with two partitions, from both sides).
L2Stats random_mix(const L2Config& config, int threads, int operations, std::uint64_t private_bytes,
                   bool as_sms = false) {
  Bench bench("bench", config, small_hbm(), SimMode::Functional);
  const std::uint64_t granule = 16, shared = 16384;
  const std::uint64_t region = shared + static_cast<std::uint64_t>(threads) * private_bytes;
  REQUIRE(region >= 3 * config.size_bytes);
  std::vector<unsigned char> model(region, 0);
  int finished = 0, mismatched_reads = 0, errors = 0;
  sc_core::sc_event all_done;
  for (int t = 0; t < threads; ++t) {
    Bench::thread([&, t] {
      std::mt19937_64 rng(0x5eed + static_cast<std::uint64_t>(t));
      auto uniform = [&](std::uint64_t lo, std::uint64_t hi) {  // [lo, hi]
        return std::uniform_int_distribution<std::uint64_t>(lo, hi)(rng);
      };
      const TrafficClass cls = t < 2 ? TrafficClass::Compute : TrafficClass::Communication;
      std::vector<unsigned char> buffer(512), seen(512);
      const auto as = [&](Bench::Access a) { return as_sms ? Bench::by_sm(a, t) : a; };
      for (int i = 0; i < operations; ++i) {
        const unsigned kind = static_cast<unsigned>(uniform(0, 99));
        const bool is_update = kind >= 82;
        std::uint64_t offset, bytes;
        if (uniform(0, 1) == 0) {  // inside one of my granules of the shared area
          const std::uint64_t g = uniform(0, shared / granule / threads - 1) * threads + t;
          const std::uint64_t within = is_update ? 4 * uniform(0, 3) : uniform(0, granule - 1);
          offset = g * granule + within;
          bytes = is_update ? 4 * uniform(1, (granule - within) / 4) : uniform(1, granule - within);
        } else {  // my private area
          const std::uint64_t start = shared + static_cast<std::uint64_t>(t) * private_bytes;
          offset = start + (is_update ? 4 * uniform(0, private_bytes / 4 - 1)
                                      : uniform(0, private_bytes - 1));
          const std::uint64_t room = start + private_bytes - offset;
          bytes = is_update ? 4 * uniform(1, std::min<std::uint64_t>(room, 512) / 4)
                            : uniform(1, std::min<std::uint64_t>(room, 512));
        }
        const auto n = static_cast<unsigned>(bytes);
        tlm::tlm_response_status st;
        if (kind < 35 || (kind >= 75 && kind < 82)) {  // cached or uncached read
          std::fill(seen.begin(), seen.end(), 0xee);
          st = bench.run(as(kind < 35 ? Bench::read(cls) : Bench::uncached(Op::Read, cls)), offset,
                         n, seen.data());
          if (!std::equal(seen.begin(), seen.begin() + n, model.begin() + offset)) {
            ++mismatched_reads;
          }
        } else if (!is_update) {  // cached or uncached write
          for (unsigned b = 0; b < n; ++b) buffer[b] = static_cast<unsigned char>(rng());
          std::copy(buffer.begin(), buffer.begin() + n, model.begin() + offset);
          st = bench.run(as(kind < 65 ? Bench::write(cls) : Bench::uncached(Op::Write, cls)),
                         offset, n, buffer.data());
        } else {  // fp32 near-memory add of small integers
          for (unsigned e = 0; e < n / 4; ++e) {
            store_element(buffer.data(), e, ElementType::Fp32, static_cast<float>(uniform(0, 7)));
          }
          add_elements(model.data() + offset, buffer.data(), n, ElementType::Fp32);
          st = bench.run(as(Bench::update(cls)), offset, n, buffer.data());
        }
        errors += st != tlm::TLM_OK_RESPONSE;
        sc_core::wait(ns(static_cast<double>(uniform(0, 20))));
      }
      if (++finished == threads) all_done.notify();
    });
  }
  std::vector<unsigned char> debug_before(region), readback(region), debug_after(region);
  std::vector<unsigned char> readback_by_sms(region);
  std::vector<unsigned char> model_after_workers;
  std::vector<unsigned char> debug_written = pattern(1000, 9), after_debug_write(1000);
  unsigned debug_bytes = 0;
  Bench::thread([&] {
    sc_core::wait(all_done);
    model_after_workers = model;
    debug_bytes = bench.debug(false, 0, debug_before.data(), static_cast<unsigned>(region));
    for (std::uint64_t at = 0; at < region; at += 512) {
      errors += bench.run(Bench::read(), at, 512, readback.data() + at) != tlm::TLM_OK_RESPONSE;
    }
    bench.debug(false, 0, debug_after.data(), static_cast<unsigned>(region));
    for (std::uint64_t at = 0; at < region; at += 512) {  // from every thread's SM in turn
      const int sm = static_cast<int>(at / 512) % threads;
      errors += bench.run(Bench::by_sm(Bench::read(), sm), at, 512, readback_by_sms.data() + at) !=
                tlm::TLM_OK_RESPONSE;
    }
    // A debug write reaches memory and the L2's copy alike (the region was just read: cached).
    std::copy(debug_written.begin(), debug_written.end(), model.begin() + (region - 1100));
    bench.debug(true, region - 1100, debug_written.data(), 1000);
    bench.run(Bench::read(), region - 1100, 1000, after_debug_write.data());
  });
  sc_core::sc_start();
  REQUIRE(finished == threads);
  CHECK(errors == 0);
  CHECK(mismatched_reads == 0);
  CHECK(debug_bytes == region);
  CHECK(debug_before == model_after_workers);
  CHECK(readback == model_after_workers);
  CHECK(debug_after == model_after_workers);
  CHECK(readback_by_sms == model_after_workers);
  CHECK(after_debug_write == debug_written);
  std::vector<unsigned char> final_view(region);
  CHECK(bench.debug(false, 0, final_view.data(), static_cast<unsigned>(region)) == region);
  CHECK(final_view == model);
  INFO(bench.l2.report().dump(1));
  CHECK(bench.l2.pending() == 0);
  CHECK(bench.mc.pending() == 0);
  if (bench.l2.partitions() > 1) {
    // Copies were made over the fabric and stores invalidated some of them.
    std::uint64_t fabric = 0, dropped = 0;
    const nlohmann::json report = bench.l2.report();
    for (const auto& part : report["partitions"]) {
      fabric += part["fabric_fill_bytes"].get<std::uint64_t>();
      dropped += part["dropped_copy_sectors"].get<std::uint64_t>();
    }
    CHECK(fabric > 0);
    CHECK(dropped > 0);
  }
  return bench.l2.stats();
}

}  // namespace

TEST_CASE("L2 functional random mix from several threads matches a byte-array model", "[l2]") {
  const L2Config config = small_l2();
  const L2Stats s = random_mix(config, 4, 1500, 4096);  // 32 KiB: 4x the L2
  // The mix really exercised the machinery.
  CHECK(total(s.evictions) > 0);
  CHECK(total(s.writeback_bytes) > 0);
  CHECK(total(s.read_hit_sectors) > 0);
  CHECK(total(s.write_hit_sectors) > 0);
  CHECK(total(s.bypass_bytes) > 0);
  CHECK(s.fill_bytes[kCompute] > 0);
  CHECK(s.fill_bytes[kCommunication] > 0);
}

TEST_CASE("L2 functional random mix on a direct-mapped L2 with more threads stays exact", "[l2]") {
  // One way per set and eight threads: ways are often all busy with fills, so some accesses
  // are served without allocating.
  L2Config config = small_l2();
  config.size_bytes = 4096;
  config.ways = 1;
  config.line_bytes = 256;
  config.sector_bytes = 32;
  config.banks = 2;
  const L2Stats s = random_mix(config, 8, 800, 1024);
  CHECK(total(s.evictions) > 0);
  CHECK(total(s.writeback_bytes) > 0);
  CHECK(total(s.unallocated_bytes) > 0);
}

TEST_CASE("L2 dirty write-back on a conflict eviction reaches memory", "[l2]") {
  const L2Config config = small_l2();
  Bench bench("bench", config, small_hbm(), SimMode::Functional);
  const auto line = static_cast<std::uint64_t>(config.line_bytes);
  const std::uint64_t sets = config.size_bytes / (line * static_cast<std::uint64_t>(config.ways));
  const std::uint64_t a = 3 * line;       // set 3
  const std::uint64_t b = 5 * line + 40;  // set 5, inside sector 1
  const std::vector<unsigned char> old_memory = pattern(line, 4), a_data = pattern(line, 5),
                                   b_data = pattern(8, 6);
  std::vector<unsigned char> mem_a_before(line), mem_a_after(line), mem_b_after(line);
  L2Stats before_eviction{}, after_a{};
  Bench::thread([&] {
    std::vector<unsigned char> m = old_memory, w = a_data, v = b_data, scratch(line);
    bench.memory(true, a, m.data(), static_cast<unsigned>(line));
    bench.memory(true, 5 * line, m.data(), static_cast<unsigned>(line));
    bench.run(Bench::write(), a, static_cast<unsigned>(line), w.data());  // whole line: no fetch
    bench.run(Bench::write(), b, 8, v.data());  // partial sector: fetched, then merged
    bench.memory(false, a, mem_a_before.data(), static_cast<unsigned>(line));
    before_eviction = bench.l2.stats();
    // ways more lines of set 3 make a (the least recently used) the victim.
    for (std::int64_t k = 1; k <= config.ways; ++k) {
      bench.run(Bench::read(), a + static_cast<std::uint64_t>(k) * sets * line,
                static_cast<unsigned>(line), scratch.data());
    }
    after_a = bench.l2.stats();
    bench.memory(false, a, mem_a_after.data(), static_cast<unsigned>(line));
    for (std::int64_t k = 1; k <= config.ways; ++k) {
      bench.run(Bench::read(), 5 * line + static_cast<std::uint64_t>(k) * sets * line,
                static_cast<unsigned>(line), scratch.data());
    }
    bench.memory(false, 5 * line, mem_b_after.data(), static_cast<unsigned>(line));
  });
  sc_core::sc_start();
  CHECK(before_eviction.fill_bytes[kCompute] == static_cast<std::uint64_t>(config.sector_bytes));
  CHECK(before_eviction.write_miss_sectors[kCompute] == sectors(config, line) + 1);
  CHECK(total(before_eviction.writeback_bytes) == 0);
  CHECK(mem_a_before == old_memory);  // write-back: memory not touched yet
  CHECK(after_a.writeback_bytes[kCompute] == line);
  CHECK(after_a.evictions[kCompute] == 1);
  CHECK(mem_a_after == a_data);
  // Only b's dirty sector went back: the 8 new bytes merged into the old sector.
  const L2Stats& s = bench.l2.stats();
  CHECK(s.writeback_bytes[kCompute] == line + static_cast<std::uint64_t>(config.sector_bytes));
  CHECK(s.evictions[kCompute] == 2);
  std::vector<unsigned char> expected_b = old_memory;
  std::copy(b_data.begin(), b_data.end(), expected_b.begin() + 40);
  CHECK(mem_b_after == expected_b);
  CHECK(bench.l2.pending() == 0);
  CHECK(bench.mc.pending() == 0);
}

TEST_CASE("L2 debug accesses see and update data that is in flight", "[l2]") {
  // Line a is written (dirty) and then evicted: while its write-back is in flight it is in
  // neither the L2 nor memory, yet debug reads must see it. Lines b (evicted dirty) and c (read,
  // so filled) are rewritten through transport_dbg every 5 ns while their write-back / fill is
  // in flight: a stale in-flight copy must not win. A monitor reads all three every nanosecond.
  const L2Config config = small_l2();
  Bench bench("bench", config, small_hbm(), SimMode::Functional);
  const auto line = static_cast<unsigned>(config.line_bytes);
  const std::uint64_t sets = config.size_bytes / (line * static_cast<std::uint64_t>(config.ways));
  const std::uint64_t a = 7 * line, b = 8 * line, c = 9 * line;
  const std::vector<unsigned char> a_value = pattern(line, 100);
  bool stop = false;
  int stale = 0, polls = 0;
  std::vector<unsigned char> memory_a(line), memory_b(line), memory_c(line), last(line);
  L2Stats during{};
  Bench::thread([&] {
    std::vector<unsigned char> data = a_value, scratch(line);
    bench.run(Bench::write(), a, line, data.data());
    bench.run(Bench::write(), b, line, scratch.data());
    sc_core::wait(ns(10));
    bench.run(Bench::read(), c, line, scratch.data());  // a fill in flight
    for (std::uint64_t victim : {a, b}) {               // write-backs in flight
      for (std::int64_t k = 1; k <= config.ways; ++k) {
        bench.run(Bench::read(), victim + static_cast<std::uint64_t>(k) * sets * line, line,
                  scratch.data());
      }
    }
    during = bench.l2.stats();
    sc_core::wait(ns(10));
    stop = true;
  });
  Bench::thread([&] {
    sc_core::wait(ns(50));  // after the thread's writes
    std::vector<unsigned char> seen(line);
    for (unsigned k = 0; !stop; ++k) {
      if (k % 5 == 0) {
        last = pattern(line, k + 1);
        bench.debug(true, b, last.data(), line);
        bench.debug(true, c, last.data(), line);
      }
      bench.debug(false, a, seen.data(), line);
      stale += seen != a_value;
      for (std::uint64_t at : {b, c}) {
        bench.debug(false, at, seen.data(), line);
        stale += seen != last;
      }
      ++polls;
      sc_core::wait(ns(1));
    }
    bench.memory(false, a, memory_a.data(), line);
    bench.memory(false, b, memory_b.data(), line);
    bench.memory(false, c, memory_c.data(), line);
  });
  sc_core::sc_start();
  INFO(polls << " polls");
  CHECK(polls > 200);
  CHECK(stale == 0);
  CHECK(during.writeback_bytes[kCompute] == 2 * line);  // a and b really were written back
  CHECK(during.fill_bytes[kCompute] == line * (1 + 2 * static_cast<std::uint64_t>(config.ways)));
  CHECK(memory_a == a_value);
  CHECK(memory_b == last);
  CHECK(memory_c == last);
  CHECK(bench.l2.pending() == 0);
}

TEST_CASE("L2 hit and miss latency follow the configuration", "[l2]") {
  const L2Config config = small_l2();
  const HbmConfig hbm = small_hbm();
  Bench bench("bench", config, hbm, SimMode::Timing);
  const auto line = static_cast<unsigned>(config.line_bytes);
  const std::uint64_t sets = config.size_bytes / (line * static_cast<std::uint64_t>(config.ways));
  sc_time miss, hit_delay, hit_stamp_moved, partial_hit, write_alloc, dirty_miss;
  sc_time first_done, second_done;
  Bench::thread([&] {
    sc_time start = sc_time_stamp(), delay = SC_ZERO_TIME;
    bench.issue(Bench::read(), 0, line, nullptr, delay);
    miss = sc_time_stamp() + delay - start;
    sc_core::wait(delay);
    start = sc_time_stamp();
    delay = SC_ZERO_TIME;
    bench.issue(Bench::read(), 0, line, nullptr, delay);  // a hit returns at once, with a delay
    hit_delay = delay;
    hit_stamp_moved = sc_time_stamp() - start;
    sc_core::wait(delay);
    start = sc_time_stamp();
    bench.run(Bench::read(), 32, 32);
    partial_hit = sc_time_stamp() - start;
    // Whole-line writes into set 1 need no fetch and find free ways.
    for (std::int64_t k = 0; k < config.ways; ++k) {
      start = sc_time_stamp();
      bench.run(Bench::write(), (1 + static_cast<std::uint64_t>(k) * sets) * line, line);
      write_alloc = std::max(write_alloc, sc_time_stamp() - start);
    }
    // One more line of set 1: the dirty LRU line is written back, then the fill is issued.
    start = sc_time_stamp();
    bench.run(Bench::read(), (1 + static_cast<std::uint64_t>(config.ways) * sets) * line, line);
    dirty_miss = sc_time_stamp() - start;
  });
  // Two readers of one line 1 ns apart: the second waits for the first one's fill.
  Bench::thread([&] {
    sc_core::wait(ns(1000));
    bench.run(Bench::read(TrafficClass::Communication), 2 * line, line);
    first_done = sc_time_stamp();
  });
  Bench::thread([&] {
    sc_core::wait(ns(1001));
    bench.run(Bench::read(TrafficClass::Communication), 2 * line, line);
    second_done = sc_time_stamp();
  });
  sc_core::sc_start();
  const double bank = bank_ns(config, line);                     // 4 ns
  const double memory = hbm.latency_ns + channel_ns(hbm, line);  // 50 + 4 ns
  CHECK(hit_delay == ns(config.hit_latency_ns + bank));
  CHECK(hit_delay == ns(24));
  CHECK(hit_stamp_moved == SC_ZERO_TIME);
  CHECK(partial_hit == ns(config.hit_latency_ns + bank_ns(config, 32)));
  CHECK(miss == ns(bank + config.hit_latency_ns + memory));
  CHECK(miss == ns(78));
  CHECK(write_alloc == ns(config.hit_latency_ns + bank));
  CHECK(dirty_miss == ns(bank + config.hit_latency_ns + 2 * memory));
  CHECK(first_done == ns(1000) + ns(bank + config.hit_latency_ns + memory));
  CHECK(second_done == first_done);
  const L2Stats& s = bench.l2.stats();
  CHECK(s.fill_bytes[kCommunication] == line);  // one fetch for both readers
  CHECK(s.read_miss_sectors[kCommunication] == sectors(config, line));
  CHECK(s.read_hit_sectors[kCommunication] == sectors(config, line));
  CHECK(s.writeback_bytes[kCompute] == line);
  CHECK(bench.l2.pending() == 0);
  CHECK(bench.mc.pending() == 0);
}

// ---- the miss path: serial (default), or misses in flight together and posted write-backs --

L2Config concurrent_l2() {
  L2Config c = small_l2();
  c.miss_path = L2MissPath::Concurrent;
  return c;
}

// Whole-line writes of the `ways` lines k * sets + set (k = 0 .. ways-1): set `set` full of dirty
// lines, the first written the least recently used.
void dirty_set(Bench& bench, const L2Config& config, std::uint64_t set) {
  const auto line = static_cast<std::uint64_t>(config.line_bytes);
  const std::uint64_t sets = config.size_bytes / (line * static_cast<std::uint64_t>(config.ways));
  for (std::int64_t k = 0; k < config.ways; ++k) {
    bench.run(Bench::write(), (set + static_cast<std::uint64_t>(k) * sets) * line,
              static_cast<unsigned>(line));
  }
}

// A read that evicts a clean line and one that evicts a dirty line, each alone in the L2.
struct VictimReads {
  sc_time clean_victim, dirty_victim;
  nlohmann::json report;  // the L2's, after both reads
  std::uint64_t writeback_bytes = 0;
  bool drained = false;  // nothing pending in the L2 or the memory at the end
};

// Fills set 1 with clean lines and set 2 with dirty ones, then reads one more line into each.
VictimReads read_past_victims(const L2Config& config, const HbmConfig& hbm) {
  Bench bench("bench", config, hbm, SimMode::Timing);
  const auto line = static_cast<std::uint64_t>(config.line_bytes);
  const std::uint64_t sets = config.size_bytes / (line * static_cast<std::uint64_t>(config.ways));
  const auto ways = static_cast<std::uint64_t>(config.ways);
  VictimReads r;
  Bench::thread([&] {
    for (std::uint64_t k = 0; k < ways; ++k) {
      bench.run(Bench::read(), (1 + k * sets) * line, static_cast<unsigned>(line));
    }
    dirty_set(bench, config, 2);
    sc_core::wait(ns(1000));  // nothing in flight
    sc_time start = sc_time_stamp();
    bench.run(Bench::read(), (1 + ways * sets) * line, static_cast<unsigned>(line));
    r.clean_victim = sc_time_stamp() - start;
    sc_core::wait(ns(1000));
    start = sc_time_stamp();
    bench.run(Bench::read(), (2 + ways * sets) * line, static_cast<unsigned>(line));
    r.dirty_victim = sc_time_stamp() - start;
    r.report = bench.l2.report();
  });
  sc_core::sc_start();
  r.writeback_bytes = bench.l2.stats().writeback_bytes[kCompute];
  r.drained = bench.l2.pending() == 0 && bench.mc.pending() == 0;
  return r;
}

TEST_CASE("L2 serial miss path writes the dirty victim back before it issues the fill", "[l2]") {
  const L2Config config = small_l2();  // l2.miss_path = serial, the default
  REQUIRE(config.miss_path == L2MissPath::Serial);
  const HbmConfig hbm = small_hbm();
  const VictimReads r = read_past_victims(config, hbm);
  const auto line = static_cast<double>(config.line_bytes);
  const double bank = bank_ns(config, line);
  const double memory = hbm.latency_ns + channel_ns(hbm, line);
  CHECK(r.clean_victim == ns(bank + config.hit_latency_ns + memory));
  // The write-back's whole round trip, then the fill's.
  CHECK(r.dirty_victim == r.clean_victim + ns(memory));
  CHECK(r.writeback_bytes == static_cast<std::uint64_t>(config.line_bytes));
  CHECK(r.report["writeback_buffer"]["max_used"] == 0);  // the buffer is not used
  CHECK(r.drained);
}

TEST_CASE("L2 fill is not delayed by the write-back of the dirty line it replaces", "[l2]") {
  const L2Config config = concurrent_l2();
  const HbmConfig hbm = small_hbm();
  const VictimReads r = read_past_victims(config, hbm);
  const auto line = static_cast<double>(config.line_bytes);
  const double bank = bank_ns(config, line);
  const double memory = hbm.latency_ns + channel_ns(hbm, line);
  CHECK(r.clean_victim == ns(bank + config.hit_latency_ns + memory));
  // The write-back leaves with the fill; at most the line's transfer on a shared channel apart.
  CHECK(r.dirty_victim >= r.clean_victim);
  CHECK(r.dirty_victim <= r.clean_victim + ns(channel_ns(hbm, line)));
  // Written back first, it cost a memory round trip more.
  CHECK(r.dirty_victim < ns(bank + config.hit_latency_ns + 2 * memory));
  CHECK(r.writeback_bytes == static_cast<std::uint64_t>(config.line_bytes));
  CHECK(r.report["writeback_buffer"]["stalls"] == 0);
  CHECK(r.drained);
}

TEST_CASE("L2 fetches the missing runs of one access together, in one round trip", "[l2]") {
  const L2Config config = concurrent_l2();
  const HbmConfig hbm = small_hbm();
  Bench bench("bench", config, hbm, SimMode::Timing);
  const auto line = static_cast<std::uint64_t>(config.line_bytes);
  const auto sector = static_cast<std::uint64_t>(config.sector_bytes);
  const std::uint64_t lines = 4;
  sc_time elapsed;
  std::uint64_t reads_before = 0, reads_after = 0;
  auto reads = [&] { return bench.mc.stats().requests[static_cast<int>(Op::Read)][kCompute]; };
  Bench::thread([&] {
    // Sector 1 of each line valid: the read of the four lines misses five runs of sectors,
    // [0, 1), [2, 5), [6, 9), [10, 13) and [14, 16).
    for (std::uint64_t k = 0; k < lines; ++k) {
      bench.run(Bench::read(), k * line + sector, static_cast<unsigned>(sector));
    }
    sc_core::wait(ns(1000));
    reads_before = reads();
    const sc_time start = sc_time_stamp();
    bench.run(Bench::read(), 0, static_cast<unsigned>(lines * line));
    elapsed = sc_time_stamp() - start;
    reads_after = reads();
  });
  sc_core::sc_start();
  REQUIRE(reads_after - reads_before == 5);
  const double bank = bank_ns(config, static_cast<double>(line));  // the lines' banks, in parallel
  const double missing = static_cast<double>((lines * line) - lines * sector);
  // One round trip, plus at most every missing byte on one channel one after another.
  CHECK(elapsed >= ns(bank + config.hit_latency_ns + hbm.latency_ns));
  CHECK(elapsed <= ns(bank + config.hit_latency_ns + hbm.latency_ns + channel_ns(hbm, missing)));
  // Less than two round trips: the runs were not fetched one after another.
  CHECK(elapsed < ns(bank + config.hit_latency_ns + 2 * hbm.latency_ns));
  CHECK(bench.l2.stats().fill_bytes[kCompute] == lines * line);
  CHECK(bench.l2.pending() == 0);
}

TEST_CASE("L2 access whose dirty victims do not fit the write-back buffer waits for room", "[l2]") {
  // Two accesses at once, each evicting one dirty line of its own set: with one entry the second
  // waits until the first one's write-back is in memory; with two neither waits.
  const HbmConfig hbm = small_hbm();
  L2Config one = concurrent_l2(), two = concurrent_l2();
  one.writeback_buffer_entries = 1;
  two.writeback_buffer_entries = 2;
  Bench bench_one("bench_one", one, hbm, SimMode::Timing);
  Bench bench_two("bench_two", two, hbm, SimMode::Timing);
  const auto line = static_cast<std::uint64_t>(one.line_bytes);
  const std::uint64_t sets = one.size_bytes / (line * static_cast<std::uint64_t>(one.ways));
  const auto ways = static_cast<std::uint64_t>(one.ways);
  sc_core::sc_event ready;
  std::vector<std::vector<sc_time>> elapsed(2, std::vector<sc_time>(2));
  Bench* benches[] = {&bench_one, &bench_two};
  Bench::thread([&] {
    for (Bench* bench : benches) {
      dirty_set(*bench, one, 1);
      dirty_set(*bench, one, 2);
    }
    sc_core::wait(ns(1000));
    ready.notify();
  });
  for (std::size_t b = 0; b < 2; ++b) {
    for (std::uint64_t k = 0; k < 2; ++k) {
      Bench::thread([&, b, k] {
        sc_core::wait(ready);
        const sc_time start = sc_time_stamp();
        benches[b]->run(Bench::read(), (1 + k + ways * sets) * line, static_cast<unsigned>(line));
        elapsed[b][k] = sc_time_stamp() - start;
      });
    }
  }
  sc_core::sc_start();
  const double memory = hbm.latency_ns + channel_ns(hbm, static_cast<double>(line));
  const double miss = bank_ns(one, static_cast<double>(line)) + one.hit_latency_ns + memory;
  // Both fills and both write-backs may share a channel: three transfers ahead at most.
  const double contention = channel_ns(hbm, 3.0 * static_cast<double>(line));
  for (std::size_t b = 0; b < 2; ++b) {
    const std::int64_t entries = b == 0 ? 1 : 2;
    INFO("entries = " << entries);
    const nlohmann::json buffer = benches[b]->l2.report()["writeback_buffer"];
    CHECK(buffer["entries"] == entries);
    CHECK(buffer["max_used"] == entries);
    const sc_time first = std::min(elapsed[b][0], elapsed[b][1]);
    const sc_time second = std::max(elapsed[b][0], elapsed[b][1]);
    CHECK(first <= ns(miss + contention));
    if (entries == 1) {
      CHECK(buffer["stalls"] == 1);
      CHECK(buffer["stall_ns"].get<double>() >= memory);
      CHECK(second >= ns(miss + memory));  // after the first write-back's round trip
    } else {
      CHECK(buffer["stalls"] == 0);
      CHECK(second <= ns(miss + contention));
    }
    CHECK(benches[b]->l2.stats().writeback_bytes[kCompute] == 2 * line);
    CHECK(benches[b]->l2.pending() == 0);
    CHECK(benches[b]->mc.pending() == 0);
  }
}

TEST_CASE("L2 read of a line whose write-back is in flight returns the written data", "[l2]") {
  const L2Config config = concurrent_l2();
  Bench bench("bench", config, small_hbm(), SimMode::Functional);
  const auto line = static_cast<std::uint64_t>(config.line_bytes);
  const std::uint64_t sets = config.size_bytes / (line * static_cast<std::uint64_t>(config.ways));
  const auto ways = static_cast<std::uint64_t>(config.ways);
  const std::uint64_t x = 3 * line;  // set 3
  const std::vector<unsigned char> written = pattern(line, 7);
  std::vector<unsigned char> seen(line, 0xee), in_memory(line);
  std::size_t pending_at_read = 0;
  std::uint64_t waits_before = 0, waits_after = 0;
  Bench::thread([&] {
    std::vector<unsigned char> w = written, scratch(line);
    bench.run(Bench::write(), x, static_cast<unsigned>(line), w.data());  // dirty, least recent
    for (std::uint64_t k = 1; k < ways; ++k) {
      bench.run(Bench::read(), x + k * sets * line, static_cast<unsigned>(line), scratch.data());
    }
    // One more line of set 3 evicts x. Without waiting out its delay, read x back: its
    // write-back is still on its way to memory.
    sc_time delay = SC_ZERO_TIME;
    bench.issue(Bench::read(), x + ways * sets * line, static_cast<unsigned>(line), scratch.data(),
                delay);
    pending_at_read = bench.l2.pending();
    waits_before = bench.l2.report()["conflict_waits"].get<std::uint64_t>();
    bench.run(Bench::read(), x, static_cast<unsigned>(line), seen.data());
    waits_after = bench.l2.report()["conflict_waits"].get<std::uint64_t>();
    bench.memory(false, x, in_memory.data(), static_cast<unsigned>(line));
  });
  sc_core::sc_start();
  CHECK(pending_at_read == 1);             // the posted write-back
  CHECK(waits_after - waits_before == 1);  // the read waited for it
  CHECK(seen == written);
  CHECK(in_memory == written);
  CHECK(bench.l2.stats().writeback_bytes[kCompute] == line);
  CHECK(bench.l2.pending() == 0);
  CHECK(bench.mc.pending() == 0);
}

TEST_CASE("L2 banks deliver banks x bytes per clock x clock to a stream of hits", "[l2]") {
  const L2Config config = small_l2();
  Bench bench("bench", config, small_hbm(), SimMode::Timing);
  const auto line = static_cast<unsigned>(config.line_bytes);
  const std::uint64_t lines = config.size_bytes / line;
  const int threads = 64, per_thread = 200;
  sc_core::sc_event warm;
  sc_time start, finish;
  int done = 0;
  Bench::thread([&] {
    for (std::uint64_t k = 0; k < lines; ++k) bench.run(Bench::read(), k * line, line);
    start = sc_time_stamp();
    warm.notify();
  });
  L2Stats after_warmup{};
  for (int t = 0; t < threads; ++t) {
    Bench::thread([&, t] {
      sc_core::wait(warm);
      if (t == 0) after_warmup = bench.l2.stats();
      for (int k = 0; k < per_thread; ++k) {
        bench.run(Bench::read(), ((static_cast<std::uint64_t>(t + k)) % lines) * line, line);
      }
      finish = std::max(finish, sc_time_stamp());
      ++done;
    });
  }
  sc_core::sc_start();
  REQUIRE(done == threads);
  const double bytes = static_cast<double>(threads) * per_thread * line;
  const double achieved = bytes / ((finish - start).to_seconds() * 1e9);  // GB/s = B/ns
  const double peak =
      static_cast<double>(config.banks) * config.bank_bytes_per_clock * config.clock_GHz;
  INFO("achieved " << achieved << " GB/s of " << peak);
  CHECK(achieved == Approx(peak).epsilon(0.02));
  CHECK(achieved <= peak * (1 + 1e-9));
  const L2Stats& s = bench.l2.stats();
  CHECK(s.read_hit_sectors[kCompute] - after_warmup.read_hit_sectors[kCompute] ==
        static_cast<std::uint64_t>(threads) * per_thread * sectors(config, line));
  CHECK(s.read_miss_sectors[kCompute] == sectors(config, config.size_bytes));
  CHECK(bench.l2.pending() == 0);
}

TEST_CASE("L2 rejects inconsistent geometry naming the key", "[l2]") {
  struct Bad {
    const char* key;
    std::function<void(L2Config&)> change;
  };
  const std::vector<Bad> cases = {
      {"l2.line_bytes", [](L2Config& c) { c.line_bytes = 96; }},
      {"l2.sector_bytes", [](L2Config& c) { c.sector_bytes = 48; }},
      {"l2.sector_bytes", [](L2Config& c) { c.sector_bytes = 256; }},
      {"l2.sector_bytes", [](L2Config& c) { c.sector_bytes = 1; }},  // 128 sectors: > 64
      {"l2.block_lines", [](L2Config& c) { c.block_lines = 3; }},
      {"l2.block_lines", [](L2Config& c) { c.block_lines = 32; }},  // 128 sectors: > 64
      {"l2.ways", [](L2Config& c) { c.ways = 0; }},
      {"l2.size_bytes", [](L2Config& c) { c.size_bytes = 10000; }},
      {"l2.size_bytes",
       [](L2Config& c) {
         c.block_lines = 4;
         c.size_bytes = 3 * 128 * 4;
       }},
      {"l2.size_bytes", [](L2Config& c) { c.size_bytes = 256; }},  // less than one set
      {"l2.banks", [](L2Config& c) { c.banks = 0; }},
      {"l2.bank_bytes_per_clock", [](L2Config& c) { c.bank_bytes_per_clock = 0; }},
      {"l2.clock_GHz", [](L2Config& c) { c.clock_GHz = -1; }},
      {"l2.hit_latency_ns", [](L2Config& c) { c.hit_latency_ns = -5; }},
      {"l2.partitions", [](L2Config& c) { c.partitions = 3; }},
      {"l2.banks",
       [](L2Config& c) {
         c.partitions = 2;
         c.banks = 3;
       }},
      {"l2.size_bytes",
       [](L2Config& c) {
         c.partitions = 2;
         c.size_bytes = 3 * 128 * 4;  // three sets: not two equal halves
       }},
      {"l2.partition_granule_bytes", [](L2Config& c) { c.partition_granule_bytes = 64; }},
      {"l2.partition_granule_bytes", [](L2Config& c) { c.partition_granule_bytes = 384; }},
      {"l2.partition_sm_group", [](L2Config& c) { c.partition_sm_group = 0; }},
      {"l2.fabric_latency_ns", [](L2Config& c) { c.fabric_latency_ns = -1; }},
  };
  int n = 0;
  for (const Bad& bad : cases) {
    L2Config config = small_l2();
    bad.change(config);
    const std::string name = "bad" + std::to_string(n++);
    INFO(bad.key);
    CHECK_THROWS_AS(L2Cache(name.c_str(), config, SimMode::Timing, 0, 1 << 20), ConfigError);
    CHECK_THROWS_WITH(L2Cache((name + "b").c_str(), config, SimMode::Timing, 0, 1 << 20),
                      Catch::Contains(bad.key));
  }
  L2Config odd = small_l2();
  odd.size_bytes = 3 * 128 * 4;  // sets need not be a power of two
  L2Cache good("good", odd, SimMode::Timing, 0, 1 << 20);
  CHECK(good.sets() == 3);
  CHECK(good.bank_of(5 * 128) == 1);
}

TEST_CASE("L2 answers bad accesses with error responses and passes memory's on", "[l2]") {
  const L2Config config = small_l2();
  HbmConfig hbm = small_hbm();
  const std::uint64_t base = 1ull << 32, capacity = hbm.capacity_bytes;
  // The L2 window is twice the memory's: its upper half reaches memory, which refuses it.
  Bench bench("bench", config, hbm, SimMode::Functional, base, 2 * capacity);
  std::vector<tlm::tlm_response_status> status;
  sc_time rejected_at;
  Bench::thread([&] {
    std::vector<unsigned char> data(64, 1);
    auto send = [&](std::uint64_t address, Op op, CacheHint hint,
                    const std::function<void(tlm::tlm_generic_payload&)>& tweak) {
      tlm::tlm_generic_payload payload;
      T3Extension extension;
      extension.op = op;
      extension.cache_hint = hint;
      payload.set_address(address);
      payload.set_data_ptr(data.data());
      payload.set_data_length(64);
      payload.set_streaming_width(64);
      payload.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
      T3Extension::set(payload, extension);
      tweak(payload);
      sc_time delay = SC_ZERO_TIME;
      bench.socket->b_transport(payload, delay);
      status.push_back(payload.get_response_status());
    };
    auto as_is = [](tlm::tlm_generic_payload&) {};
    unsigned char enables[64] = {};
    const CacheHint cached = CacheHint::Cached;
    send(base - 64, Op::Read, cached, as_is);                  // below the window
    send(base + 2 * capacity, Op::Read, cached, as_is);        // just past the end
    send(base + 2 * capacity - 32, Op::Write, cached, as_is);  // straddles the end
    send(base, Op::Update, CacheHint::Uncached,
         [](tlm::tlm_generic_payload& p) { p.set_command(tlm::TLM_READ_COMMAND); });
    send(base, Op::Write, cached, [&](tlm::tlm_generic_payload& p) {
      p.set_byte_enable_ptr(enables);
      p.set_byte_enable_length(64);
    });
    send(base, Op::Read, cached, [](tlm::tlm_generic_payload& p) { p.set_streaming_width(16); });
    rejected_at = sc_time_stamp();
    // Memory's own refusals come back to the requester.
    send(base + capacity + 128, Op::Read, cached, as_is);  // fill refused
    send(base + capacity + 128, Op::Read, cached, as_is);  // nothing was installed: again
    send(base + capacity + 256 + 8, Op::Write, cached,     // partial sectors need a fetch
         [](tlm::tlm_generic_payload& p) {
           p.set_data_length(16);
           p.set_streaming_width(16);
         });
    send(base + 2, Op::Update, CacheHint::Uncached, as_is);  // misaligned fp32 update
  });
  sc_core::sc_start();
  const std::vector<tlm::tlm_response_status> expected = {
      tlm::TLM_ADDRESS_ERROR_RESPONSE,     tlm::TLM_ADDRESS_ERROR_RESPONSE,
      tlm::TLM_ADDRESS_ERROR_RESPONSE,     tlm::TLM_COMMAND_ERROR_RESPONSE,
      tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE, tlm::TLM_BURST_ERROR_RESPONSE,
      tlm::TLM_ADDRESS_ERROR_RESPONSE,     tlm::TLM_ADDRESS_ERROR_RESPONSE,
      tlm::TLM_ADDRESS_ERROR_RESPONSE,     tlm::TLM_ADDRESS_ERROR_RESPONSE};
  CHECK(status == expected);
  CHECK(rejected_at == SC_ZERO_TIME);  // the L2's own refusals take no time
  const nlohmann::json report = bench.l2.report();
  CHECK(report["rejected"] == 6);
  const L2Stats& s = bench.l2.stats();
  CHECK(s.read_miss_sectors[kCompute] == 2 * sectors(config, 64));
  CHECK(total(s.read_hit_sectors) == 0);
  CHECK(total(s.fill_bytes) == 0);  // failed fills bring nothing in
  CHECK(bench.mc.stats().rejected == 4);
  CHECK(bench.l2.pending() == 0);
  CHECK(bench.mc.pending() == 0);
}

// ---- blocks: several lines tagged as one unit (l2.block_lines) ------------------------------

TEST_CASE("L2 tagged in blocks times hits and misses as line-by-line tagging does", "[l2]") {
  // Without replacement, a block is bookkeeping only: banks stay line-interleaved and fills
  // merge contiguous missing sectors either way, so every access completes at the same time.
  const L2Config lines = small_l2();
  L2Config blocks = small_l2();
  blocks.block_lines = 4;
  Bench by_line("by_line", lines, small_hbm(), SimMode::Timing);
  Bench by_block("by_block", blocks, small_hbm(), SimMode::Timing);
  const unsigned line = static_cast<unsigned>(lines.line_bytes);
  struct Step {
    bool write;
    std::uint64_t offset;
    unsigned bytes;
    double at_ns;
  };
  // Misses, hits, partial lines, accesses straddling blocks, concurrent accesses to one block;
  // 4 KiB in all, half the L2, so nothing is replaced.
  const std::vector<Step> steps = {
      {false, 0, 4 * line, 0},
      {false, 0, 4 * line, 0},
      {false, 2 * line, line, 1},
      {true, 5 * line + 32, 64, 2},
      {false, 3 * line + 96, 3 * line, 2},
      {true, 8 * line, 8 * line, 3},
      {false, 8 * line, 16 * line, 400},
      {false, 20 * line + 8, 100, 401},
      {true, 21 * line, 2 * line, 401},
      {false, 0, 32 * line, 900},
  };
  std::vector<sc_time> done_by_line(steps.size()), done_by_block(steps.size());
  for (std::size_t i = 0; i < steps.size(); ++i) {
    for (auto [bench, done] : {std::pair{&by_line, &done_by_line}, {&by_block, &done_by_block}}) {
      Bench::thread([&, i, bench, done] {
        const Step& s = steps[i];
        sc_core::wait(ns(s.at_ns));
        bench->run(s.write ? Bench::write() : Bench::read(), s.offset, s.bytes);
        (*done)[i] = sc_time_stamp();
      });
    }
  }
  sc_core::sc_start();
  for (std::size_t i = 0; i < steps.size(); ++i) {
    INFO("step " << i);
    CHECK(done_by_block[i] == done_by_line[i]);
    CHECK(done_by_block[i] > SC_ZERO_TIME);
  }
  const L2Stats& a = by_line.l2.stats();
  const L2Stats& b = by_block.l2.stats();
  CHECK(a.read_hit_sectors == b.read_hit_sectors);
  CHECK(a.read_miss_sectors == b.read_miss_sectors);
  CHECK(a.write_miss_sectors == b.write_miss_sectors);
  CHECK(a.fill_bytes == b.fill_bytes);
  CHECK(total(b.evictions) == 0);
  CHECK(by_line.mc.stats().requests == by_block.mc.stats().requests);
  CHECK(by_block.l2.report()["block_lines"] == 4);
  CHECK(by_block.l2.sets() == by_line.l2.sets() / 4);
  CHECK(by_block.l2.bank_of(5 * line) == by_line.l2.bank_of(5 * line));
}

TEST_CASE("L2 tagged in blocks invalidates only the lines an uncached access overlaps", "[l2]") {
  L2Config config = small_l2();
  config.block_lines = 4;
  Bench bench("bench", config, small_hbm(), SimMode::Functional);
  const unsigned line = static_cast<unsigned>(config.line_bytes);
  const std::vector<unsigned char> block = pattern(4 * line, 3);
  std::vector<unsigned char> operand(64), seen(4 * line);
  for (std::size_t i = 0; i < 16; ++i) store_element(operand.data(), i, ElementType::Fp32, 2);
  L2Stats after_write{}, after_update{}, after_neighbours{};
  Bench::thread([&] {
    std::vector<unsigned char> w = block;
    bench.run(Bench::write(), 0, 4 * line, w.data());  // the whole block, dirty
    after_write = bench.l2.stats();
    bench.run(Bench::update(), line + 64, 64, operand.data());  // inside line 1
    after_update = bench.l2.stats();
    for (unsigned k : {0u, 2u, 3u})
      bench.run(Bench::read(), k * line, line, seen.data() + k * line);
    after_neighbours = bench.l2.stats();
    bench.run(Bench::read(), line, line, seen.data() + line);
  });
  sc_core::sc_start();
  const int cls = kCommunication;
  // Only line 1 was written back (its dirty bytes had to reach memory before the add).
  CHECK(after_update.writeback_bytes[cls] - after_write.writeback_bytes[cls] == line);
  CHECK(total(after_write.writeback_bytes) == 0);
  // Lines 0, 2 and 3 stayed valid: all hits, no fill.
  CHECK(after_neighbours.read_hit_sectors[kCompute] == 3 * sectors(config, line));
  CHECK(total(after_neighbours.fill_bytes) == 0);
  // Line 1 was invalidated and comes back from memory with the update applied.
  const L2Stats& s = bench.l2.stats();
  CHECK(s.fill_bytes[kCompute] == line);
  std::vector<unsigned char> expected = block;
  add_elements(expected.data() + line + 64, operand.data(), 64, ElementType::Fp32);
  CHECK(seen == expected);
  CHECK(bench.l2.pending() == 0);
}

TEST_CASE("L2 tagged in blocks stays exact under a functional random mix", "[l2]") {
  L2Config config = small_l2();
  config.block_lines = 2;  // 8 sets of 4 ways of 256 B blocks
  const L2Stats s = random_mix(config, 4, 1500, 4096);
  CHECK(total(s.evictions) > 0);
  CHECK(total(s.writeback_bytes) > 0);
  CHECK(total(s.bypass_bytes) > 0);
  CHECK(total(s.read_hit_sectors) > 0);
}

TEST_CASE("L2 tagged in blocks counts evictions in lines", "[l2]") {
  L2Config config = small_l2();
  config.block_lines = 4;
  Bench bench("bench", config, small_hbm(), SimMode::Timing);
  const std::uint64_t lines = config.size_bytes / static_cast<std::uint64_t>(config.line_bytes);
  Bench::thread([&] {
    for (std::uint64_t at = 0; at < 4 * config.size_bytes; at += 256) {
      bench.run(Bench::read(), at % (2 * config.size_bytes), 256);
    }
  });
  sc_core::sc_start();
  // Twice the capacity streamed twice: 4x capacity allocated, the first capacity's worth into
  // empty ways.
  CHECK(bench.l2.stats().evictions[kCompute] == 3 * lines);
}

// The tag array on its own. With more than 64 ways it keeps no per-set way masks and scans the
// frames instead; both must choose alike.
TEST_CASE("L2 tag array replaces an empty way, else the least recently used one not filling",
          "[l2]") {
  for (const std::int64_t ways : {4, 72}) {
    INFO("ways = " << ways);
    L2Config config = small_l2();
    config.ways = ways;
    config.size_bytes = static_cast<std::uint64_t>(config.line_bytes * ways) * 16;  // 16 sets
    const l2::Geometry geometry(config);
    l2::TagArray tags(geometry, config.size_bytes);
    const auto n = static_cast<std::uint64_t>(ways);
    const std::uint64_t set = 5;
    const auto line_k = [&](std::uint64_t k) { return geometry.cursor(set + k * geometry.sets); };
    const auto fill = [&](std::uint64_t k, std::uint64_t way) {
      tags.reassign(line_k(k), way);
      l2::Frame& frame = tags.frame(set, way);
      frame.valid = geometry.full_line;
      tags.sync(set, frame);
      tags.touch(set, way);
    };
    // Empty ways first, lowest first; the lines are found where they went.
    for (std::uint64_t k = 0; k < n; ++k) {
      REQUIRE(tags.victim(set) == k);
      fill(k, k);
    }
    for (std::uint64_t k = 0; k < n; ++k) CHECK(tags.find_way(line_k(k)) == k);
    CHECK(tags.find(line_k(n)) == nullptr);
    // All valid: the least recently touched, skipping ways with a fill in flight.
    CHECK(tags.victim(set) == 0);
    tags.touch(set, 0);
    CHECK(tags.victim(set) == 1);
    tags.frame(set, 1).pending = 1;
    tags.sync(set, tags.frame(set, 1));
    CHECK(tags.victim(set) == 2);
    // A way emptied by release() is chosen before any older valid one, and holds nothing.
    l2::Frame& third = tags.frame(set, 3);
    third.valid = 0;
    tags.release(set, third);
    tags.sync(set, third);
    CHECK(tags.find(line_k(3)) == nullptr);
    CHECK(tags.victim(set) == 3);
    fill(n, 3);
    CHECK(tags.find_way(line_k(n)) == 3);
    CHECK(tags.victim(set) == 2);
    // Every way filling: nothing can be replaced.
    for (std::uint64_t way = 0; way < n; ++way) {
      tags.frame(set, way).pending = 1;
      tags.sync(set, tags.frame(set, way));
    }
    CHECK(tags.victim(set) == n);
    CHECK(tags.victim(set + 1) == 0);  // other sets are untouched
  }
}

// ---- partitions (l2.partitions = 2) ---------------------------------------------------------

namespace {

// small_l2 in two partitions of 4 KiB (8 sets of 4 ways, 2 banks each); granules of two lines;
// SM s on side s % 2.
L2Config partitioned_l2() {
  L2Config c = small_l2();
  c.partitions = 2;
  c.partition_granule_bytes = 256;
  c.partition_sm_group = 1;
  c.fabric_latency_ns = 10;
  return c;
}

std::uint64_t partition_sum(const L2Cache& l2, const char* key) {
  std::uint64_t sum = 0;
  const nlohmann::json report = l2.report();  // kept: the loop reads into it
  for (const auto& part : report["partitions"]) sum += part[key].get<std::uint64_t>();
  return sum;
}

}  // namespace

TEST_CASE("L2 with two partitions stays exact under a functional random mix from both sides",
          "[l2]") {
  const L2Stats s = random_mix(partitioned_l2(), 4, 1500, 4096, true);
  CHECK(total(s.evictions) > 0);
  CHECK(total(s.writeback_bytes) > 0);
  CHECK(total(s.read_hit_sectors) > 0);
  CHECK(total(s.bypass_bytes) > 0);
}

TEST_CASE("L2 with two partitions on the concurrent miss path stays exact and finishes", "[l2]") {
  // Lanes of both partitions carry fills that wait in the other partition (this mix does not
  // reach the lane cycle an early release deadlocked on in a full GEMM; it checks exactness).
  L2Config config = partitioned_l2();
  config.miss_path = L2MissPath::Concurrent;
  config.writeback_buffer_entries = 8;
  const L2Stats s = random_mix(config, 6, 1000, 4096, true);
  CHECK(total(s.writeback_bytes) > 0);
}

TEST_CASE("L2 with one partition stays exact under the same mix from SMs", "[l2]") {
  random_mix(small_l2(), 4, 600, 4096, true);
}

// A line read by SMs on both sides holds a line in each partition: a working set of half the
// L2 read from both sides fills both partitions (each line once from memory, once over the
// fabric), and one of three quarters, which one shared L2 holds, no longer fits.
namespace {

struct PassesResult {
  std::uint64_t memory_fill_bytes;
  std::uint64_t fabric_fill_bytes;
};

// Four passes over [0, working_set), by SM 0, 1, 0, 1.
PassesResult passes_from_both_sides(const L2Config& config, std::uint64_t working_set) {
  Bench bench("bench", config, small_hbm(), SimMode::Timing);
  Bench::thread([&] {
    for (int pass = 0; pass < 4; ++pass) {
      for (std::uint64_t at = 0; at < working_set; at += 128) {
        bench.run(Bench::by_sm(Bench::read(), pass % 2), at, 128);
      }
    }
  });
  sc_core::sc_start();
  CHECK(bench.l2.pending() == 0);
  INFO(bench.l2.report().dump(1));
  return {total(bench.l2.stats().fill_bytes),
          config.partitions > 1 ? partition_sum(bench.l2, "fabric_fill_bytes") : 0};
}

}  // namespace

TEST_CASE("L2 with two partitions holds a line read from both sides in each", "[l2]") {
  const L2Config config = partitioned_l2();
  const std::uint64_t half = config.size_bytes / 2;
  const PassesResult r = passes_from_both_sides(config, half);
  CHECK(r.memory_fill_bytes == half);  // each line from memory once, into its home
  CHECK(r.fabric_fill_bytes == half);  // and once over the fabric, into the other partition
}

TEST_CASE("L2 with one partition holds three quarters of its size read from both sides", "[l2]") {
  const L2Config config = small_l2();
  const std::uint64_t three_quarters = config.size_bytes * 3 / 4;
  CHECK(passes_from_both_sides(config, three_quarters).memory_fill_bytes == three_quarters);
}

TEST_CASE("L2 with two partitions does not hold three quarters of its size read from both sides",
          "[l2]") {
  const L2Config config = partitioned_l2();
  const std::uint64_t three_quarters = config.size_bytes * 3 / 4;
  // Lines come from memory again: the copies took the room.
  CHECK(passes_from_both_sides(config, three_quarters).memory_fill_bytes > three_quarters);
}

// A store at a line's home invalidates the other partition's copy, so a later read from either
// side sees it, whichever side stored.
TEST_CASE("L2 with two partitions: a store from one side is seen by a later read from the other",
          "[l2]") {
  const L2Config config = partitioned_l2();
  Bench bench("bench", config, small_hbm(), SimMode::Functional);
  // One line homed in partition 0 and one in partition 1.
  std::uint64_t homed[2] = {~0ull, ~0ull};
  for (std::uint64_t at = 0; homed[0] == ~0ull || homed[1] == ~0ull; at += 128) {
    const int home = bench.l2.home_of(at);
    if (homed[home] == ~0ull) homed[home] = at;
  }
  const std::vector<unsigned char> old_data = pattern(128, 1);
  std::vector<unsigned char> seen[2][2], stored[2];
  int errors = 0;
  Bench::thread([&] {
    for (int home = 0; home < 2; ++home) {
      const std::uint64_t line = homed[home];
      std::vector<unsigned char> buffer = old_data;
      errors += bench.run(Bench::by_sm(Bench::write(), home), line, 128, buffer.data()) !=
                tlm::TLM_OK_RESPONSE;
      for (int side = 0; side < 2; ++side) {  // a copy in each partition
        errors += bench.run(Bench::by_sm(Bench::read(), side), line, 128, buffer.data()) !=
                  tlm::TLM_OK_RESPONSE;
      }
      // The side that is not the home stores; then both sides read.
      stored[home] = pattern(128, 2 + static_cast<unsigned>(home));
      buffer = stored[home];
      errors += bench.run(Bench::by_sm(Bench::write(), 1 - home), line, 128, buffer.data()) !=
                tlm::TLM_OK_RESPONSE;
      for (int side = 0; side < 2; ++side) {
        seen[home][side].assign(128, 0);
        errors += bench.run(Bench::by_sm(Bench::read(), side), line, 128,
                            seen[home][side].data()) != tlm::TLM_OK_RESPONSE;
      }
    }
  });
  sc_core::sc_start();
  CHECK(errors == 0);
  for (int home = 0; home < 2; ++home) {
    INFO("line homed in partition " << home);
    CHECK(seen[home][0] == stored[home]);
    CHECK(seen[home][1] == stored[home]);
  }
  // Each store invalidated the one copy outside the line's home: 4 sectors each.
  CHECK(partition_sum(bench.l2, "dropped_copy_sectors") == 8);
  CHECK(bench.l2.pending() == 0);
}

// A read from the far side of a line costs one hit latency, in the reader's partition: the home
// adds its banks and the fabric both ways, whether it holds the line or fetches it from memory.
// On either miss path.
namespace {

void check_far_latencies(L2MissPath miss_path) {
  L2Config config = partitioned_l2();
  config.miss_path = miss_path;
  Bench bench("bench", config, small_hbm(), SimMode::Timing);
  std::uint64_t line = 0;
  while (bench.l2.home_of(line) != 0) line += 128;
  std::uint64_t cold = line + 128 * 64;  // not read before, and also homed in partition 0
  while (bench.l2.home_of(cold) != 0) cold += 128;
  sc_time near_hit, far_fill, far_miss;
  Bench::thread([&] {
    bench.run(Bench::by_sm(Bench::read(), 0), line, 128);  // into its home, partition 0
    sc_time start = sc_time_stamp();
    bench.run(Bench::by_sm(Bench::read(), 0), line, 128);
    near_hit = sc_time_stamp() - start;
    start = sc_time_stamp();
    bench.run(Bench::by_sm(Bench::read(), 1), line, 128);  // partition 1 misses, 0 hits
    far_fill = sc_time_stamp() - start;
    start = sc_time_stamp();
    bench.run(Bench::by_sm(Bench::read(), 1), cold, 128);  // both miss: 0 fills from memory
    far_miss = sc_time_stamp() - start;
  });
  sc_core::sc_start();
  CHECK(bench.l2.pending() == 0);
  const double bank = bank_ns(config, 128);  // one line, one bank
  const double fabric = 2 * config.fabric_latency_ns;
  const double memory = small_hbm().latency_ns + channel_ns(small_hbm(), 128);
  CHECK(near_hit == ns(bank + config.hit_latency_ns));
  // Not a second hit latency at the home (2 x 24 + 20 ns before).
  CHECK(far_fill == near_hit + ns(bank + fabric));
  CHECK(far_fill == ns(48));
  CHECK(far_miss == near_hit + ns(bank + fabric + memory));
}

}  // namespace

TEST_CASE("L2 with two partitions: a far copy costs the near hit, the home's banks and the fabric",
          "[l2]") {
  check_far_latencies(L2MissPath::Serial);
}

TEST_CASE(
    "L2 with two partitions, concurrent: a far copy costs the near hit, the home's banks "
    "and the fabric",
    "[l2]") {
  check_far_latencies(L2MissPath::Concurrent);
}

// An access spanning both homes is served by the two at once: it completes as its slower home's
// share alone does, not after the two in turn. Each op on fresh granules: 4m and 4m + 1 alone,
// then 4m + 2 and 4m + 3 in one access (each pair has one granule of each home: the parity of
// the granule index's bits); the shares alone take as long as the pieces do.
namespace {

void check_spanning_accesses(L2MissPath miss_path) {
  L2Config config = partitioned_l2();
  config.miss_path = miss_path;
  Bench bench("bench", config, small_hbm(), SimMode::Timing);
  const auto granule = static_cast<unsigned>(config.partition_granule_bytes);
  const std::vector<Bench::Access> ops = {Bench::uncached(Op::Read), Bench::uncached(Op::Write),
                                          Bench::write(), Bench::update()};
  std::vector<sc_time> first(ops.size()), second(ops.size()), both(ops.size());
  Bench::thread([&] {
    const auto latency = [&](const Bench::Access& access, std::uint64_t offset, unsigned bytes) {
      const sc_time start = sc_time_stamp();
      bench.run(access, offset, bytes);
      return sc_time_stamp() - start;
    };
    for (std::size_t k = 0; k < ops.size(); ++k) {
      const std::uint64_t at = 8 * k * granule;
      first[k] = latency(ops[k], at, granule);
      second[k] = latency(ops[k], at + granule, granule);
      both[k] = latency(ops[k], at + 2 * granule, 2 * granule);
    }
  });
  sc_core::sc_start();
  CHECK(bench.l2.pending() == 0);
  for (std::size_t k = 0; k < ops.size(); ++k) {
    INFO("op " << static_cast<int>(ops[k].op) << ", hint " << static_cast<int>(ops[k].hint));
    CHECK(bench.l2.home_of(8 * k * granule) != bench.l2.home_of((8 * k + 1) * granule));
    CHECK(bench.l2.home_of((8 * k + 2) * granule) != bench.l2.home_of((8 * k + 3) * granule));
    CHECK(first[k] > SC_ZERO_TIME);
    CHECK(first[k] == second[k]);
    CHECK(both[k] == std::max(first[k], second[k]));
    CHECK(both[k] < first[k] + second[k]);
  }
}

// A cached read spanning both homes that misses: its reader's partition looks up every line,
// then fetches the lines homed there from memory and those homed in the other over the fabric,
// both at once.
void check_spanning_fill(L2MissPath miss_path) {
  L2Config config = partitioned_l2();
  config.miss_path = miss_path;
  Bench bench("bench", config, small_hbm(), SimMode::Timing);
  const auto granule = static_cast<unsigned>(config.partition_granule_bytes);
  sc_time both;
  Bench::thread([&] {
    const sc_time start = sc_time_stamp();
    bench.run(Bench::by_sm(Bench::read(), 0), 0, 2 * granule);  // granule 0 homed in 0, 1 in 1
    both = sc_time_stamp() - start;
  });
  sc_core::sc_start();
  CHECK(bench.l2.pending() == 0);
  const HbmConfig hbm = small_hbm();
  const double memory = hbm.latency_ns + channel_ns(hbm, granule);  // a granule in one channel
  // Partition 0 (SM 0's) has two banks: the four lines in 2 x 4 ns.
  const double lookup = bank_ns(config, 2.0 * granule) / 2 + config.hit_latency_ns;
  // Granule 1 from partition 1: the fabric both ways, its two lines in its two banks, memory.
  const double far = 2 * config.fabric_latency_ns + bank_ns(config, granule) / 2 + memory;
  CHECK(both == ns(lookup + std::max(memory, far)));
  CHECK(both == ns(110));  // 28 + 58 + 102 one after the other before
}

}  // namespace

TEST_CASE("L2 with two partitions serves an access spanning both homes in both at once", "[l2]") {
  check_spanning_accesses(L2MissPath::Serial);
}

TEST_CASE("L2 with two partitions, concurrent: an access spanning both homes in both at once",
          "[l2]") {
  check_spanning_accesses(L2MissPath::Concurrent);
}

TEST_CASE("L2 with two partitions fills a read spanning both homes from both at once", "[l2]") {
  check_spanning_fill(L2MissPath::Serial);
}

TEST_CASE("L2 with two partitions, concurrent: fills a read spanning both homes from both at once",
          "[l2]") {
  check_spanning_fill(L2MissPath::Concurrent);
}
