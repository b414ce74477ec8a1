// NvLink calibration: line rate, packet efficiency, latency, credits, read direction, full duplex.
// Every expected figure is computed from the LinkConfig used in the case.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <vector>

#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>
#include <systemc>
#include <tlm>

#include "tlm_interconnect/nvlink.h"
#include "tlm_interconnect/payload.h"

using namespace sc_core;

namespace {

constexpr std::uint64_t KiB = 1024;
constexpr std::uint64_t MiB = 1024 * KiB;

// An SC_THREAD that runs `body`; `access` issues one blocking transaction.
struct Source : sc_module {
  tlm_utils::simple_initiator_socket<Source> socket;
  std::function<void(Source&)> body;
  std::vector<unsigned char> buffer;

  SC_HAS_PROCESS(Source);
  explicit Source(sc_module_name name) : sc_module(name), socket("socket") { SC_THREAD(run); }
  void run() {
    if (body) body(*this);
  }

  // Returns the annotated delay the initiator gets back; `op` < 0 means a plain payload.
  sc_time access(tlm::tlm_command command, std::uint64_t address, std::uint64_t bytes,
                 sc_time delay, bool with_extension = true,
                 tlm::tlm_response_status* status = nullptr,
                 t3::UnitKind unit = t3::UnitKind::TrafficGenerator) {
    if (buffer.size() < bytes) buffer.resize(bytes);
    tlm::tlm_generic_payload payload;
    payload.set_address(address);
    payload.set_data_ptr(buffer.data());
    payload.set_data_length(static_cast<unsigned>(bytes));
    payload.set_streaming_width(static_cast<unsigned>(bytes));
    payload.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    if (with_extension) {
      t3::T3Extension extension;
      extension.op = command == tlm::TLM_READ_COMMAND ? t3::Op::Read : t3::Op::Write;
      extension.unit_kind = unit;
      t3::T3Extension::set(payload, extension);
    } else {
      payload.set_command(command);
    }
    socket->b_transport(payload, delay);
    if (status) *status = payload.get_response_status();
    return delay;
  }
};

// Answers OK at once and records when each request reached it.
struct Sink : sc_module {
  tlm_utils::simple_target_socket<Sink> socket;
  std::vector<sc_time> arrivals;  // sc_time_stamp() + delay at entry
  std::uint64_t bytes = 0;
  unsigned debug_calls = 0;
  tlm::tlm_response_status answer = tlm::TLM_OK_RESPONSE;

  explicit Sink(sc_module_name name) : sc_module(name), socket("socket") {
    socket.register_b_transport(this, &Sink::b_transport);
    socket.register_transport_dbg(this, &Sink::transport_dbg);
  }
  void b_transport(tlm::tlm_generic_payload& payload, sc_time& delay) {
    arrivals.push_back(sc_time_stamp() + delay);
    bytes += payload.get_data_length();
    payload.set_response_status(answer);
  }
  unsigned transport_dbg(tlm::tlm_generic_payload& payload) {
    ++debug_calls;
    return payload.get_data_length();
  }
};

// Source A -> link -> sink B, and source B -> link -> sink A.
struct Bench {
  Source source_a{"source_a"};
  Source source_b{"source_b"};
  Sink sink_a{"sink_a"};
  Sink sink_b{"sink_b"};
  t3::NvLink link;

  explicit Bench(const t3::LinkConfig& config) : link("link", config) {
    source_a.socket.bind(link.from_a);
    source_b.socket.bind(link.from_b);
    link.to_a.bind(sink_a.socket);
    link.to_b.bind(sink_b.socket);
    link.record_packets(true);
  }
};

sc_time ns(double value) {
  return sc_time(value, SC_NS);
}
double to_ns(const sc_time& time) {
  return time.to_seconds() * 1e9;
}
// Serialisation time of `wire_bytes` at the configured rate, with the kernel's rounding.
sc_time wire(const t3::LinkConfig& config, double wire_bytes) {
  return ns(wire_bytes / config.bandwidth_GBps);
}

struct Span {
  sc_time first_start = SC_ZERO_TIME;
  sc_time last_arrival = SC_ZERO_TIME;
  std::uint64_t payload_bytes = 0;
  double payload_GBps() const {
    return static_cast<double>(payload_bytes) / to_ns(last_arrival - first_start);
  }
};

// Data packets (wire larger than a bare header) of one direction.
Span data_span(const t3::NvLink& link, int direction, const t3::LinkConfig& config) {
  Span span;
  bool first = true;
  for (const auto& packet : link.packets(direction)) {
    if (packet.wire_bytes <= static_cast<std::uint32_t>(config.header_bytes)) continue;
    // Records are in call order; a packet may take an idle stretch before earlier calls' ones.
    span.first_start = first ? packet.start : std::min(span.first_start, packet.start);
    first = false;
    span.last_arrival = std::max(span.last_arrival, packet.arrival);
    span.payload_bytes += packet.wire_bytes - static_cast<std::uint64_t>(config.header_bytes);
  }
  return span;
}

double packet_efficiency(const t3::LinkConfig& config) {
  return static_cast<double>(config.max_payload_bytes) /
         static_cast<double>(config.max_payload_bytes + config.header_bytes);
}

// Writes `total` bytes in `chunk`-byte transactions. With `pace`, the local time advances by
// each transaction's wire time (a DMA engine feeding the link at line rate) and the thread syncs
// every `quantum`; otherwise everything is offered at once.
void write_stream(Source& source, const t3::LinkConfig& config, std::uint64_t total,
                  std::uint64_t chunk, bool pace, sc_time quantum = ns(1000)) {
  sc_time local = SC_ZERO_TIME;
  const std::uint64_t packets_per_chunk =
      (chunk + config.max_payload_bytes - 1) / config.max_payload_bytes;
  const sc_time chunk_wire =
      wire(config, static_cast<double>(chunk + packets_per_chunk * config.header_bytes));
  for (std::uint64_t offset = 0; offset < total; offset += chunk) {
    tlm::tlm_response_status status;
    source.access(tlm::TLM_WRITE_COMMAND, offset, chunk, local, true, &status);
    REQUIRE(status == tlm::TLM_OK_RESPONSE);
    if (pace) {
      local += chunk_wire;
      if (local >= quantum) {
        wait(local);
        local = SC_ZERO_TIME;
      }
    }
  }
}

}  // namespace

TEST_CASE("Link: a large write stream runs at the packet-efficiency share of the line rate",
          "[link]") {
  const t3::LinkConfig config;  // 75 GB/s, 256 B payload + 16 B header, 512 credits
  Bench bench(config);
  const std::uint64_t total = 64 * MiB;
  const std::uint64_t chunk = 64 * KiB;
  bench.source_a.body = [&](Source& source) { write_stream(source, config, total, chunk, false); };
  sc_start();

  const Span span = data_span(bench.link, 0, config);
  REQUIRE(span.payload_bytes == total);
  const double expected = packet_efficiency(config) * config.bandwidth_GBps;
  INFO("delivered " << span.payload_GBps() << " GB/s, expected " << expected);
  CHECK(span.payload_GBps() == Approx(expected).epsilon(0.02));

  const auto& forward = bench.link.stats(0);
  const auto& reverse = bench.link.stats(1);
  CHECK(forward.transactions == total / chunk);
  CHECK(forward.packets == total / config.max_payload_bytes);
  CHECK(forward.payload_bytes == total);
  CHECK(forward.wire_bytes == total + forward.packets * config.header_bytes);
  // One header-only ack per write, nothing else backward.
  CHECK(reverse.packets == total / chunk);
  CHECK(reverse.payload_bytes == 0);
  CHECK(reverse.wire_bytes == reverse.packets * config.header_bytes);
  CHECK(bench.sink_b.bytes == total);
  CHECK(bench.sink_b.arrivals.size() == total / chunk);
  CHECK(forward.max_packets_in_flight <= static_cast<std::uint64_t>(config.credits));

  const auto report = bench.link.report();
  CHECK(report["directions"][0]["efficiency"].get<double>() == Approx(packet_efficiency(config)));
  CHECK(report["directions"][0]["utilisation"].get<double>() == Approx(1.0).epsilon(0.02));
}

TEST_CASE("Link: packet arithmetic: packets, wire bytes and payload efficiency", "[link]") {
  // NVLink-style packets: a 16-byte header flit each; a copy engine's carry up to 256 B, an SM's
  // up to 128 B (h100-8, a100-8).
  CHECK(t3::packet_count(16 * KiB, 128) == 128);
  CHECK(t3::packet_wire_bytes(16 * KiB, 128, 16) == 18432);
  CHECK(t3::payload_efficiency(16 * KiB, 128, 16) == 8.0 / 9.0);
  CHECK(t3::packet_count(16 * KiB, 256) == 64);
  CHECK(t3::packet_wire_bytes(16 * KiB, 256, 16) == 17408);
  CHECK(t3::payload_efficiency(16 * KiB, 256, 16) == 16.0 / 17.0);
  // A short last packet, and a header-only packet for no data.
  CHECK(t3::packet_count(300, 128) == 3);
  CHECK(t3::packet_wire_bytes(300, 128, 16) == 348);
  CHECK(t3::packet_count(0, 128) == 1);
  CHECK(t3::packet_wire_bytes(0, 128, 16) == 16);
  CHECK(t3::payload_efficiency(0, 128, 16) == 0.0);

  t3::LinkConfig config;
  config.max_payload_bytes = 256;
  config.sm_max_payload_bytes = 128;
  CHECK(t3::max_payload_for(config, t3::UnitKind::Sm) == 128);
  CHECK(t3::max_payload_for(config, t3::UnitKind::Dma) == 256);
  CHECK(t3::max_payload_for(config, t3::UnitKind::Host) == 256);
  config.sm_max_payload_bytes = 512;  // the link's own limit caps an SM's too
  CHECK(t3::max_payload_for(config, t3::UnitKind::Sm) == 256);
}

TEST_CASE("Link: an SM's write crosses in its smaller packets, a copy engine's in full ones",
          "[link]") {
  t3::LinkConfig config;
  config.bandwidth_GBps = 64.0;  // every packet's wire time a whole number of picoseconds
  config.max_payload_bytes = 256;
  config.sm_max_payload_bytes = 128;
  Bench bench(config);
  const std::uint64_t bytes = 16 * KiB;
  sc_time sm_done, dma_done;
  bench.source_a.body = [&](Source& source) {
    sm_done = source.access(tlm::TLM_WRITE_COMMAND, 0, bytes, SC_ZERO_TIME, true, nullptr,
                            t3::UnitKind::Sm);
  };
  bench.source_b.body = [&](Source& source) {
    dma_done = source.access(tlm::TLM_WRITE_COMMAND, 0, bytes, SC_ZERO_TIME, true, nullptr,
                             t3::UnitKind::Dma);
  };
  sc_start();

  const auto& sm = bench.link.stats(0, t3::LinkChannel::Request);
  CHECK(sm.packets == 128);
  CHECK(sm.wire_bytes == t3::packet_wire_bytes(bytes, 128, 16));
  const auto& dma = bench.link.stats(1, t3::LinkChannel::Request);
  CHECK(dma.packets == 64);
  CHECK(dma.wire_bytes == t3::packet_wire_bytes(bytes, 256, 16));
  // Each write's answer is one header; the write and its answer cross an idle link back to back.
  const sc_time latency = ns(config.latency_ns);
  const sc_time ack = wire(config, 16.0) + latency;
  CHECK(sm_done == wire(config, 18432.0) + latency + ack);
  CHECK(dma_done == wire(config, 17408.0) + latency + ack);
}

TEST_CASE("Link: a single write arrives after serialisation + latency; the ack comes back",
          "[link]") {
  t3::LinkConfig config;
  config.bandwidth_GBps = 50.0;
  config.latency_ns = 300.0;
  Bench bench(config);
  const std::uint64_t bytes = 64;
  const sc_time start = ns(100);
  const sc_time offset = ns(10);
  sc_time returned;
  bench.source_a.body = [&](Source& source) {
    wait(start);
    returned = source.access(tlm::TLM_WRITE_COMMAND, 0x40, bytes, offset);
  };
  sc_start();

  const sc_time latency = ns(config.latency_ns);
  const sc_time request_arrival =
      start + offset + wire(config, static_cast<double>(bytes + config.header_bytes)) + latency;
  REQUIRE(bench.sink_b.arrivals.size() == 1);
  CHECK(bench.sink_b.arrivals[0] == request_arrival);
  const sc_time ack_arrival =
      request_arrival + wire(config, static_cast<double>(config.header_bytes)) + latency;
  CHECK(start + returned == ack_arrival);
  CHECK(bench.sink_a.arrivals.empty());
  CHECK(bench.link.stats(0).packets == 1);
  CHECK(bench.link.stats(1).packets == 1);
  CHECK(bench.link.stats(0).transactions == 1);
  CHECK(bench.link.stats(1).transactions == 0);
}

TEST_CASE("Link: few credits limit the rate to credits x payload per round trip", "[link]") {
  t3::LinkConfig config;
  config.credits = 4;
  Bench bench(config);
  const std::uint64_t total = 1 * MiB;
  const std::uint64_t chunk = 64 * KiB;
  bench.source_a.body = [&](Source& source) { write_stream(source, config, total, chunk, false); };
  sc_start();

  const auto& forward = bench.link.stats(0);
  CHECK(forward.max_packets_in_flight <= static_cast<std::uint64_t>(config.credits));
  CHECK(forward.max_packets_in_flight == static_cast<std::uint64_t>(config.credits));
  const double round_trip_ns =
      to_ns(wire(config, static_cast<double>(config.max_payload_bytes + config.header_bytes))) +
      2 * config.latency_ns;
  const double expected =
      static_cast<double>(config.credits * config.max_payload_bytes) / round_trip_ns;
  const Span span = data_span(bench.link, 0, config);
  REQUIRE(span.payload_bytes == total);
  INFO("delivered " << span.payload_GBps() << " GB/s, credit-limited " << expected);
  CHECK(span.payload_GBps() == Approx(expected).epsilon(0.02));
  CHECK(span.payload_GBps() < 0.1 * config.bandwidth_GBps);  // far below line rate
}

TEST_CASE("Link: read data crosses in the reverse direction", "[link]") {
  const t3::LinkConfig config;
  Bench bench(config);
  const std::uint64_t bytes = 4 * KiB;
  sc_time returned_t3;
  sc_time returned_plain;
  bench.source_a.body = [&](Source& source) {
    returned_t3 = source.access(tlm::TLM_READ_COMMAND, 0x1000, bytes, SC_ZERO_TIME, true);
    wait(returned_t3);
    returned_plain = source.access(tlm::TLM_READ_COMMAND, 0x2000, bytes, SC_ZERO_TIME, false);
  };
  sc_start();

  const std::uint64_t packets = bytes / config.max_payload_bytes;
  const auto& request = bench.link.stats(0);
  const auto& response = bench.link.stats(1);
  CHECK(request.transactions == 2);
  CHECK(request.packets == 2);  // one header-only request each
  CHECK(request.payload_bytes == 0);
  CHECK(request.wire_bytes == 2 * static_cast<std::uint64_t>(config.header_bytes));
  CHECK(response.transactions == 0);
  CHECK(response.packets == 2 * packets);
  CHECK(response.payload_bytes == 2 * bytes);
  CHECK(response.wire_bytes == 2 * (bytes + packets * config.header_bytes));
  CHECK(bench.sink_b.arrivals.size() == 2);

  // Unloaded read: header out, then the data packets back to back, plus latency each way.
  const sc_time latency = ns(config.latency_ns);
  const sc_time full =
      wire(config, static_cast<double>(config.max_payload_bytes + config.header_bytes));
  sc_time expected = wire(config, static_cast<double>(config.header_bytes)) + latency + latency;
  for (std::uint64_t k = 0; k < packets; ++k) expected += full;
  CHECK(returned_t3 == expected);
  CHECK(returned_plain == expected);
}

TEST_CASE("Link: an error answer still travels back, without read data", "[link]") {
  const t3::LinkConfig config;
  Bench bench(config);
  bench.sink_b.answer = tlm::TLM_ADDRESS_ERROR_RESPONSE;
  tlm::tlm_response_status status = tlm::TLM_INCOMPLETE_RESPONSE;
  sc_time returned;
  bench.source_a.body = [&](Source& source) {
    returned = source.access(tlm::TLM_READ_COMMAND, 0x0, 1 * KiB, SC_ZERO_TIME, true, &status);
  };
  sc_start();
  CHECK(status == tlm::TLM_ADDRESS_ERROR_RESPONSE);
  CHECK(bench.link.stats(1).packets == 1);
  CHECK(bench.link.stats(1).payload_bytes == 0);
  const sc_time header = wire(config, static_cast<double>(config.header_bytes));
  CHECK(returned == header + ns(config.latency_ns) + header + ns(config.latency_ns));
}

namespace {

// Both sides stream 16 MiB at once: each direction must deliver the line rate's payload share
// and finish about when it would have alone. `pace` as write_stream's (line-rate feeding, or
// everything offered at once).
void check_full_duplex(bool pace) {
  const t3::LinkConfig config;
  const std::uint64_t total = 16 * MiB;
  const std::uint64_t chunk = 64 * KiB;
  const double expected = packet_efficiency(config) * config.bandwidth_GBps;
  // Time one stream alone would take: all its wire bytes at line rate, plus one latency.
  const double alone_ns =
      static_cast<double>(total + total / config.max_payload_bytes * config.header_bytes) /
          config.bandwidth_GBps +
      config.latency_ns;
  Bench bench(config);
  bench.source_a.body = [&](Source& source) { write_stream(source, config, total, chunk, pace); };
  bench.source_b.body = [&](Source& source) { write_stream(source, config, total, chunk, pace); };
  sc_start();
  for (int direction = 0; direction < 2; ++direction) {
    const Span span = data_span(bench.link, direction, config);
    INFO("direction " << direction << ": " << span.payload_GBps() << " GB/s from "
                      << to_ns(span.first_start) << " ns to " << to_ns(span.last_arrival)
                      << " ns, expected " << expected << " GB/s");
    REQUIRE(span.payload_bytes == total);
    CHECK(span.payload_GBps() == Approx(expected).epsilon(0.02));
    CHECK(to_ns(span.last_arrival) <= 1.02 * alone_ns);
  }
  CHECK(bench.sink_a.bytes == total);
  CHECK(bench.sink_b.bytes == total);
}

}  // namespace

TEST_CASE("Link: the two directions are independent (full duplex)", "[link]") {
  check_full_duplex(true);
}

TEST_CASE("Link: full duplex holds when each side offers its whole stream at once", "[link]") {
  // Side A's acks are reserved ahead in time on B -> A before side B's thread runs; B's data must
  // still use the wire before them rather than queue behind the last one.
  check_full_duplex(false);
}

TEST_CASE("Link: mixed random traffic never overlaps on the wire nor overdraws credits", "[link]") {
  t3::LinkConfig config;
  config.bandwidth_GBps = 40.0;
  config.latency_ns = 60.0;
  config.max_payload_bytes = 64;
  config.header_bytes = 16;
  config.credits = 6;
  Bench bench(config);
  std::uint64_t completed = 0;
  auto traffic = [&](unsigned seed) {
    return [&, seed](Source& source) {
      std::mt19937 random(seed);
      std::uniform_int_distribution<int> size(0, 600);
      std::uniform_int_distribution<int> offset_ns(0, 3000);
      std::uniform_int_distribution<int> kind(0, 9);
      for (int i = 0; i < 3000; ++i) {
        const auto command = kind(random) < 4 ? tlm::TLM_READ_COMMAND : tlm::TLM_WRITE_COMMAND;
        const sc_time offset = ns(offset_ns(random));
        const sc_time returned = source.access(command, 0, size(random), offset);
        CHECK(returned > offset);
        ++completed;
        if (kind(random) == 0) wait(ns(offset_ns(random)));
      }
    };
  };
  bench.source_a.body = traffic(1);
  bench.source_b.body = traffic(2);
  sc_start();
  REQUIRE(completed == 6000);

  const sc_time latency = ns(config.latency_ns);
  for (int direction = 0; direction < 2; ++direction) {
    REQUIRE(bench.link.packets(direction).size() == bench.link.stats(direction).packets);
    sc_time first = sc_time(1, SC_SEC);
    sc_time last = SC_ZERO_TIME;
    sc_time busy = SC_ZERO_TIME;
    for (const t3::LinkChannel channel : {t3::LinkChannel::Request, t3::LinkChannel::Response}) {
      std::vector<t3::PacketRecord> packets;
      for (const auto& packet : bench.link.packets(direction)) {
        if (packet.channel == channel) packets.push_back(packet);
      }
      std::sort(
          packets.begin(), packets.end(),
          [](const t3::PacketRecord& x, const t3::PacketRecord& y) { return x.start < y.start; });
      const auto& stats = bench.link.stats(direction, channel);
      REQUIRE(packets.size() == stats.packets);
      std::uint64_t wire_bytes = 0;
      std::map<sc_time, int> changes;  // the channel's credits taken (+1) and returned (-1)
      for (std::size_t k = 0; k < packets.size(); ++k) {
        const auto& packet = packets[k];
        wire_bytes += packet.wire_bytes;
        const sc_time end = packet.arrival - latency;
        CHECK(end - packet.start == wire(config, packet.wire_bytes));
        if (k + 1 < packets.size()) CHECK(packets[k + 1].start >= end);  // one packet at a time
        changes[packet.start] += 1;
        changes[packet.arrival + latency] -= 1;
        first = std::min(first, packet.start);
        last = std::max(last, end);
        busy += end - packet.start;
      }
      CHECK(wire_bytes == stats.wire_bytes);
      int in_flight = 0;
      int peak = 0;
      for (const auto& change : changes) {
        in_flight += change.second;
        peak = std::max(peak, in_flight);
      }
      const auto credits = static_cast<int>(bench.link.credits(channel));
      INFO("direction " << direction << " " << t3::to_string(channel) << " peak " << peak);
      CHECK(peak <= credits);
      // Writes and read requests are heavy enough to reach the request channel's limit.
      if (channel == t3::LinkChannel::Request) CHECK(peak == credits);
      CHECK(stats.max_packets_in_flight == static_cast<std::uint64_t>(peak));
    }
    // Both channels share one serialiser: together they never carry more than the line rate.
    INFO("direction " << direction << " busy " << to_ns(busy) << " ns of " << to_ns(last - first));
    CHECK(busy <= last - first);
  }
}

TEST_CASE("Link: an acknowledgement is never delayed by data booked on the request channel",
          "[link]") {
  // Side B books a long burst toward A first; side A's write then needs its acknowledgement to
  // cross B -> A while that burst is still booked ahead. On one calendar shared by both kinds of
  // packet it would wait for the whole burst (about 60 us here); in the response channel it waits
  // at most for the data packet on the wire when it is ready.
  const t3::LinkConfig config;
  Bench bench(config);
  const std::uint64_t burst = 4 * MiB;
  const sc_time late = ns(10);
  sc_time returned;
  bench.source_b.body = [&](Source& source) {
    source.access(tlm::TLM_WRITE_COMMAND, 0, burst, SC_ZERO_TIME);
  };
  bench.source_a.body = [&](Source& source) {
    wait(late);
    returned = source.access(tlm::TLM_WRITE_COMMAND, 0x40, 64, SC_ZERO_TIME);
  };
  sc_start();

  REQUIRE(bench.sink_a.arrivals.size() == 1);
  const sc_time burst_end = bench.sink_a.arrivals[0] - ns(config.latency_ns);
  const sc_time latency = ns(config.latency_ns);
  const sc_time header = wire(config, static_cast<double>(config.header_bytes));
  const sc_time full =
      wire(config, static_cast<double>(config.max_payload_bytes + config.header_bytes));
  const sc_time request_arrival = late + wire(config, 64.0 + config.header_bytes) + latency;
  REQUIRE(bench.sink_b.arrivals.size() == 1);
  CHECK(bench.sink_b.arrivals[0] == request_arrival);
  const sc_time ack_arrival = late + returned;
  INFO("ack arrives at " << to_ns(ack_arrival) << " ns, the burst's last packet leaves at "
                         << to_ns(burst_end) << " ns");
  CHECK(ack_arrival >= request_arrival + header + latency);
  CHECK(ack_arrival <= request_arrival + full + header + latency);
  CHECK(ack_arrival + ns(10000) < burst_end);  // far ahead of the data booked before it
  CHECK(bench.link.stats(1, t3::LinkChannel::Response).packets == 1);
  CHECK(bench.link.stats(1, t3::LinkChannel::Request).packets == burst / config.max_payload_bytes);
}

TEST_CASE("Link: a flag store crosses in the response channel, ahead of booked data", "[link]") {
  const t3::LinkConfig config;
  Bench bench(config);
  sc_time flag_arrival;
  bench.source_a.body = [&](Source& source) {
    source.access(tlm::TLM_WRITE_COMMAND, 0, 4 * MiB, SC_ZERO_TIME);  // booked ahead on A -> B
    tlm::tlm_generic_payload payload;
    std::uint64_t value = 1;
    payload.set_address(0x80);
    payload.set_data_ptr(reinterpret_cast<unsigned char*>(&value));
    payload.set_data_length(sizeof value);
    payload.set_streaming_width(sizeof value);
    t3::T3Extension flag;
    flag.op = t3::Op::Write;
    flag.link_channel = t3::LinkChannel::Response;
    t3::T3Extension::set(payload, flag);
    sc_time delay = SC_ZERO_TIME;
    source.socket->b_transport(payload, delay);
  };
  sc_start();
  REQUIRE(bench.sink_b.arrivals.size() == 2);
  flag_arrival = bench.sink_b.arrivals[1];
  const sc_time full =
      wire(config, static_cast<double>(config.max_payload_bytes + config.header_bytes));
  CHECK(flag_arrival <= full + wire(config, 8.0 + config.header_bytes) + ns(config.latency_ns));
  CHECK(bench.link.stats(0, t3::LinkChannel::Response).transactions == 1);
  CHECK(bench.link.stats(0, t3::LinkChannel::Request).transactions == 1);
}

TEST_CASE("Link: after traffic both channels of both directions hold all their credits", "[link]") {
  t3::LinkConfig config;
  config.credits = 8;
  config.response_credits = 5;
  Bench bench(config);
  std::uint64_t least_free[2][2] = {{~0ull, ~0ull}, {~0ull, ~0ull}};
  auto sample = [&] {
    for (int d = 0; d < 2; ++d) {
      for (int c = 0; c < t3::kLinkChannels; ++c) {
        const auto channel = static_cast<t3::LinkChannel>(c);
        least_free[d][c] = std::min(least_free[d][c], bench.link.credits_free(d, channel));
      }
    }
  };
  auto traffic = [&](tlm::tlm_command command) {
    return [&, command](Source& source) {
      for (int i = 0; i < 50; ++i) {
        const sc_time returned = source.access(command, 0, 2 * KiB, SC_ZERO_TIME);
        sample();
        wait(returned);  // as an initiator does: the answer is back
      }
    };
  };
  bench.source_a.body = traffic(tlm::TLM_WRITE_COMMAND);
  bench.source_b.body = traffic(tlm::TLM_READ_COMMAND);  // its data comes back as responses
  sc_start();
  // Every credit comes back `latency` after its packet arrives: a while after the last one.
  sc_start(ns(4 * config.latency_ns));
  for (int d = 0; d < 2; ++d) {
    CHECK(bench.link.credits_free(d, t3::LinkChannel::Request) == 8);
    CHECK(bench.link.credits_free(d, t3::LinkChannel::Response) == 5);
  }
  // The traffic did hold the credits it was sent with: writes A -> B, read data A -> B.
  CHECK(least_free[0][0] == 0);
  CHECK(least_free[0][1] == 0);
}

TEST_CASE("Link: debug transport crosses without timing; DMI is refused", "[link]") {
  const t3::LinkConfig config;
  Bench bench(config);
  unsigned forward = 0;
  unsigned backward = 0;
  bool dmi = true;
  bench.source_a.body = [&](Source& source) {
    std::vector<unsigned char> data(128);
    tlm::tlm_generic_payload payload;
    payload.set_command(tlm::TLM_READ_COMMAND);
    payload.set_address(0x80);
    payload.set_data_ptr(data.data());
    payload.set_data_length(128);
    forward = source.socket->transport_dbg(payload);
    tlm::tlm_dmi dmi_data;
    dmi = source.socket->get_direct_mem_ptr(payload, dmi_data);
  };
  bench.source_b.body = [&](Source& source) {
    std::vector<unsigned char> data(32);
    tlm::tlm_generic_payload payload;
    payload.set_command(tlm::TLM_WRITE_COMMAND);
    payload.set_data_ptr(data.data());
    payload.set_data_length(32);
    backward = source.socket->transport_dbg(payload);
  };
  sc_start();
  CHECK(forward == 128);
  CHECK(backward == 32);
  CHECK(bench.sink_b.debug_calls == 1);
  CHECK(bench.sink_a.debug_calls == 1);
  CHECK_FALSE(dmi);
  CHECK(bench.link.stats(0).packets == 0);
  CHECK(bench.link.stats(1).packets == 0);
}

TEST_CASE("Link: a bad configuration names the parameter", "[link]") {
  for (const std::string key :
       {"link.credits", "link.response_credits", "link.sm_max_payload_bytes"}) {
    t3::LinkConfig config;
    (key == "link.credits"            ? config.credits
     : key == "link.response_credits" ? config.response_credits
                                      : config.sm_max_payload_bytes) = 0;
    try {
      t3::NvLink link("link", config);
      FAIL("no error");
    } catch (const t3::ConfigError& error) {
      CHECK(std::string(error.what()).find(std::string(key) + ":") != std::string::npos);
    }
  }
}
