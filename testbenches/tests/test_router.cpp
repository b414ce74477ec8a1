// Router: decode by the global address map, per-port routes, address errors, multi-hop over links.
#include <catch2/catch.hpp>

#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>
#include <systemc>
#include <tlm>

#include "protocol/hex.h"
#include "tlm_interconnect/address_map.h"
#include "tlm_interconnect/nvlink.h"
#include "tlm_interconnect/payload.h"
#include "tlm_interconnect/router.h"
#include "tlm_interconnect/topology.h"

using namespace sc_core;
using t3::Window;

namespace {

sc_time ns(double value) {
  return sc_time(value, SC_NS);
}

struct Source : sc_module {
  tlm_utils::simple_initiator_socket<Source> socket;
  std::function<void(Source&)> body;
  std::vector<unsigned char> buffer;

  SC_HAS_PROCESS(Source);
  explicit Source(sc_module_name name) : sc_module(name), socket("socket") { SC_THREAD(run); }
  void run() {
    if (body) body(*this);
  }
  struct Result {
    tlm::tlm_response_status status;
    sc_time delay;
  };
  Result write(std::uint64_t address, std::uint64_t bytes, sc_time delay = SC_ZERO_TIME) {
    if (buffer.size() < bytes) buffer.resize(bytes);
    tlm::tlm_generic_payload payload;
    payload.set_address(address);
    payload.set_data_ptr(buffer.data());
    payload.set_data_length(static_cast<unsigned>(bytes));
    payload.set_streaming_width(static_cast<unsigned>(bytes));
    payload.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    t3::T3Extension extension;
    extension.op = t3::Op::Write;
    t3::T3Extension::set(payload, extension);
    socket->b_transport(payload, delay);
    return {payload.get_response_status(), delay};
  }
  unsigned debug_read(std::uint64_t address, std::uint64_t bytes) {
    if (buffer.size() < bytes) buffer.resize(bytes);
    tlm::tlm_generic_payload payload;
    payload.set_command(tlm::TLM_READ_COMMAND);
    payload.set_address(address);
    payload.set_data_ptr(buffer.data());
    payload.set_data_length(static_cast<unsigned>(bytes));
    payload.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    return socket->transport_dbg(payload);
  }
};

struct Sink : sc_module {
  tlm_utils::simple_target_socket<Sink> socket;
  std::vector<std::uint64_t> addresses;
  std::vector<sc_time> arrivals;
  std::uint64_t bytes = 0;
  std::vector<std::uint64_t> debug_addresses;

  explicit Sink(sc_module_name name) : sc_module(name), socket("socket") {
    socket.register_b_transport(this, &Sink::b_transport);
    socket.register_transport_dbg(this, &Sink::transport_dbg);
  }
  void b_transport(tlm::tlm_generic_payload& payload, sc_time& delay) {
    addresses.push_back(payload.get_address());
    arrivals.push_back(sc_time_stamp() + delay);
    bytes += payload.get_data_length();
    payload.set_response_status(tlm::TLM_OK_RESPONSE);
  }
  unsigned transport_dbg(tlm::tlm_generic_payload& payload) {
    debug_addresses.push_back(payload.get_address());
    return payload.get_data_length();
  }
};

constexpr std::uint64_t kCapacity = 1 << 20;

bool mentions(const std::vector<std::string>& messages, const std::string& text) {
  return std::any_of(messages.begin(), messages.end(),
                     [&](const std::string& m) { return m.find(text) != std::string::npos; });
}

// One router of GPU 0 in a 3-GPU map: out[0] memory, out[1] MMIO, out[2] to GPU 1, out[3] to
// GPU 2.
struct SingleBench {
  t3::AddressMapConfig map_config;
  t3::AddressMap map{map_config, 3, kCapacity};
  const sc_time latency = ns(2);
  Source source{"source"};
  t3::Router router{"gpu0_router", map, latency};
  Sink memory{"memory"};
  Sink mmio{"mmio"};
  Sink link1{"link1"};
  Sink link2{"link2"};

  SingleBench() {
    source.socket.bind(router.in);
    router.out.bind(memory.socket);
    router.out.bind(mmio.socket);
    router.out.bind(link1.socket);
    router.out.bind(link2.socket);
    router.set_route(0, Window::Hbm, 0);
    router.set_route(0, Window::Mmio, 1);
    router.set_route(1, Window::Hbm, 2);
    router.set_route(1, Window::Mmio, 2);
    router.set_route(2, Window::Hbm, 3);
    // GPU 2's MMIO deliberately has no route.
  }
};

}  // namespace

TEST_CASE("Router: local HBM, local MMIO and remote GPUs leave through their ports", "[router]") {
  SingleBench bench;
  const auto& map = bench.map;
  std::vector<Source::Result> results;
  bench.source.body = [&](Source& source) {
    results.push_back(source.write(map.hbm_base(0) + 0x100, 64, ns(5)));
    results.push_back(source.write(map.mmio_base(0) + 0x8, 4));
    results.push_back(source.write(map.hbm_base(1) + kCapacity - 128, 128));
    results.push_back(source.write(map.mmio_base(1), 8));
    results.push_back(source.write(map.hbm_base(2), 256));
  };
  sc_start();

  REQUIRE(results.size() == 5);
  for (const auto& result : results) CHECK(result.status == tlm::TLM_OK_RESPONSE);
  CHECK(results[0].delay == ns(5) + bench.latency);  // the router adds its latency
  CHECK(bench.memory.addresses == std::vector<std::uint64_t>{map.hbm_base(0) + 0x100});
  CHECK(bench.memory.arrivals == std::vector<sc_time>{ns(5) + bench.latency});
  CHECK(bench.mmio.addresses == std::vector<std::uint64_t>{map.mmio_base(0) + 0x8});
  CHECK(bench.link1.addresses ==
        std::vector<std::uint64_t>{map.hbm_base(1) + kCapacity - 128, map.mmio_base(1)});
  CHECK(bench.link2.addresses == std::vector<std::uint64_t>{map.hbm_base(2)});
  CHECK(bench.router.transactions(0) == 1);
  CHECK(bench.router.bytes(0) == 64);
  CHECK(bench.router.transactions(1) == 1);
  CHECK(bench.router.transactions(2) == 2);
  CHECK(bench.router.bytes(2) == 128 + 8);
  CHECK(bench.router.transactions(3) == 1);
  CHECK(bench.router.bytes(3) == 256);
  CHECK(bench.router.address_errors().empty());

  const auto report = bench.router.report();
  REQUIRE(report["ports"].size() == 4);
  CHECK(report["ports"][2]["transactions"].get<std::uint64_t>() == 2);
  CHECK(report["ports"][3]["bytes"].get<std::uint64_t>() == 256);
  CHECK(report["address_errors"].get<std::uint64_t>() == 0);
}

TEST_CASE("Router: addresses nobody owns get TLM_ADDRESS_ERROR_RESPONSE and a message",
          "[router]") {
  SingleBench bench;
  const auto& map = bench.map;
  const std::uint64_t between = map.hbm_base(0) + kCapacity;        // past GPU 0's HBM
  const std::uint64_t beyond = map.hbm_base(3);                     // there is no GPU 3
  const std::uint64_t crossing = map.hbm_base(1) + kCapacity - 32;  // 64 B leaves the window
  const std::uint64_t no_route = map.mmio_base(2);                  // owned, but no route set
  std::vector<tlm::tlm_response_status> statuses;
  unsigned debug_bytes = 1;
  bench.source.body = [&](Source& source) {
    for (std::uint64_t address : {between, beyond, crossing, no_route}) {
      statuses.push_back(source.write(address, 64).status);
    }
    debug_bytes = source.debug_read(between, 16);
  };
  sc_start();

  REQUIRE(statuses.size() == 4);
  for (auto status : statuses) CHECK(status == tlm::TLM_ADDRESS_ERROR_RESPONSE);
  CHECK(debug_bytes == 0);
  for (const Sink* sink : {&bench.memory, &bench.mmio, &bench.link1, &bench.link2}) {
    CHECK(sink->addresses.empty());
    CHECK(sink->debug_addresses.empty());
  }
  for (int port = 0; port < 4; ++port) CHECK(bench.router.transactions(port) == 0);

  const auto& errors = bench.router.address_errors();
  REQUIRE(errors.size() == 4);
  for (std::uint64_t address : {between, beyond, crossing, no_route}) {
    INFO("address " << t3::hex(address));
    CHECK(mentions(errors, t3::hex(address) + " (64 bytes)"));
  }
  for (const auto& error : errors) {
    CHECK(error.find(bench.router.name()) != std::string::npos);
  }
  CHECK(bench.router.report()["address_errors"].get<std::uint64_t>() == 4);
}

TEST_CASE("Router: debug transport follows the routes; DMI is refused", "[router]") {
  SingleBench bench;
  const auto& map = bench.map;
  unsigned local = 0;
  unsigned remote = 0;
  bool dmi = true;
  bench.source.body = [&](Source& source) {
    local = source.debug_read(map.hbm_base(0) + 0x40, 32);
    remote = source.debug_read(map.hbm_base(2) + 0x80, 48);
    tlm::tlm_generic_payload payload;
    payload.set_command(tlm::TLM_READ_COMMAND);
    payload.set_address(map.hbm_base(0));
    payload.set_data_length(4);
    tlm::tlm_dmi dmi_data;
    dmi = source.socket->get_direct_mem_ptr(payload, dmi_data);
  };
  sc_start();
  CHECK(local == 32);
  CHECK(remote == 48);
  CHECK(bench.memory.debug_addresses == std::vector<std::uint64_t>{map.hbm_base(0) + 0x40});
  CHECK(bench.link2.debug_addresses == std::vector<std::uint64_t>{map.hbm_base(2) + 0x80});
  CHECK_FALSE(dmi);
  CHECK(bench.router.transactions(0) == 0);  // debug accesses are not traffic
}

TEST_CASE("Router: a ring of 4 routers and NvLinks carries GPU0 -> GPU2 over 2 links", "[router]") {
  const int gpus = 4;
  const t3::AddressMapConfig map_config;
  const t3::AddressMap map(map_config, gpus, kCapacity);
  const t3::Topology topology(t3::TopologyKind::Ring, gpus);
  const t3::LinkConfig link_config;
  const sc_time router_latency = ns(2);

  std::vector<std::unique_ptr<t3::Router>> routers;
  std::vector<std::unique_ptr<Sink>> memories;
  std::vector<std::unique_ptr<Sink>> mmios;
  std::vector<std::unique_ptr<t3::NvLink>> links;
  Source source("source");
  for (int g = 0; g < gpus; ++g) {
    const std::string gpu = "gpu" + std::to_string(g);
    routers.push_back(std::make_unique<t3::Router>((gpu + "_router").c_str(), map, router_latency));
    memories.push_back(std::make_unique<Sink>((gpu + "_memory").c_str()));
    mmios.push_back(std::make_unique<Sink>((gpu + "_mmio").c_str()));
  }
  for (std::size_t l = 0; l < topology.links().size(); ++l) {
    links.push_back(
        std::make_unique<t3::NvLink>(("link" + std::to_string(l)).c_str(), link_config));
  }
  source.socket.bind(routers[0]->in);
  for (int g = 0; g < gpus; ++g) {
    auto& router = *routers[g];
    router.out.bind(memories[g]->socket);  // port 0
    router.out.bind(mmios[g]->socket);     // port 1
    const auto& ports = topology.links_of(g);
    for (int link : ports) {  // ports 2, 3, ...
      auto& nvlink = *links[link];
      if (topology.links()[link].a == g) {
        router.out.bind(nvlink.from_a);
        nvlink.to_a.bind(router.in);
      } else {
        router.out.bind(nvlink.from_b);
        nvlink.to_b.bind(router.in);
      }
    }
    for (int d = 0; d < gpus; ++d) {
      int port = 0;
      if (d != g) {
        const int link = topology.next_link(g, d);
        port = 2 + static_cast<int>(std::find(ports.begin(), ports.end(), link) - ports.begin());
      }
      router.set_route(d, Window::Hbm, port);
      router.set_route(d, Window::Mmio, d == g ? 1 : port);
    }
  }

  const std::uint64_t bytes = 512;
  const std::uint64_t address = map.hbm_base(2) + 0x1000;
  Source::Result result{};
  unsigned debug = 0;
  unsigned debug_two_hops = 0;
  source.body = [&](Source& s) {
    result = s.write(address, bytes);
    debug = s.debug_read(map.mmio_base(3) + 0x10, 8);
    debug_two_hops = s.debug_read(address + 64, 16);
  };
  sc_start();

  CHECK(result.status == tlm::TLM_OK_RESPONSE);
  REQUIRE(memories[2]->addresses == std::vector<std::uint64_t>{address});
  for (int g : {0, 1, 3}) CHECK(memories[g]->addresses.empty());

  // The ring's tie rule sends 0 -> 2 through GPU 1: link 0 then link 1, both A -> B.
  const int first = topology.next_link(0, 2);
  const int second = topology.next_link(topology.across(first, 0), 2);
  CHECK(topology.hops(0, 2) == 2);
  for (std::size_t l = 0; l < links.size(); ++l) {
    const bool used = static_cast<int>(l) == first || static_cast<int>(l) == second;
    const std::uint64_t crossed = links[l]->stats(0).transactions + links[l]->stats(1).transactions;
    INFO("link " << l);
    CHECK(crossed == (used ? 1u : 0u));
    if (used) {
      CHECK(links[l]->stats(0).payload_bytes + links[l]->stats(1).payload_bytes == bytes);
    }
  }

  // Timing: three router decodes, two link crossings out, two acks back.
  const auto wire = [&](std::uint64_t wire_bytes) {
    return ns(static_cast<double>(wire_bytes) / link_config.bandwidth_GBps);
  };
  const sc_time latency = ns(link_config.latency_ns);
  const std::uint64_t packets = bytes / link_config.max_payload_bytes;
  sc_time crossing = latency;
  for (std::uint64_t k = 0; k < packets; ++k) {
    crossing += wire(link_config.max_payload_bytes + link_config.header_bytes);
  }
  const sc_time arrival = 3 * router_latency + 2 * crossing;
  CHECK(memories[2]->arrivals == std::vector<sc_time>{arrival});
  CHECK(result.delay == arrival + 2 * (wire(link_config.header_bytes) + latency));

  // Debug access to GPU 3's MMIO: 0 -> 3 is one hop backward.
  CHECK(debug == 8);
  CHECK(mmios[3]->debug_addresses == std::vector<std::uint64_t>{map.mmio_base(3) + 0x10});
  CHECK(debug_two_hops == 16);
  CHECK(memories[2]->debug_addresses == std::vector<std::uint64_t>{address + 64});
  // Debug accesses add no packets: still exactly the write's on the two links.
  CHECK(links[first]->stats(0).packets + links[first]->stats(1).packets == packets + 1);
}
