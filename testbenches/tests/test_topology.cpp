// Topology: which links exist, the port order at each node, and the route between any two GPUs.
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "tlm_interconnect/topology.h"

using t3::Topology;
using t3::TopologyKind;

namespace {

// Follows next_link from source to destination, checking each hop leaves through a link that
// is attached to the current node; returns the number of links crossed.
int walk(const Topology& topology, int source, int destination) {
  int node = source;
  int count = 0;
  for (int link = topology.next_link(node, destination); link >= 0;
       link = topology.next_link(node, destination)) {
    const auto& ports = topology.links_of(node);
    REQUIRE(std::find(ports.begin(), ports.end(), link) != ports.end());
    node = topology.across(link, node);
    REQUIRE(++count <= topology.gpus() + 1);
  }
  REQUIRE(node == destination);
  return count;
}

// The link joining a and b (either orientation), or -1.
int link_between(const Topology& topology, int a, int b) {
  const auto& links = topology.links();
  for (std::size_t i = 0; i < links.size(); ++i) {
    if ((links[i].a == a && links[i].b == b) || (links[i].a == b && links[i].b == a)) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

void check_fully_connected(int n) {
  const Topology topology(TopologyKind::FullyConnected, n);
  REQUIRE(topology.links().size() == static_cast<std::size_t>(n * (n - 1) / 2));
  // One link per pair, in (a, b) lexicographic order.
  int index = 0;
  for (int a = 0; a < n; ++a) {
    for (int b = a + 1; b < n; ++b, ++index) {
      CHECK(topology.links()[index].a == a);
      CHECK(topology.links()[index].b == b);
    }
  }
  for (int g = 0; g < n; ++g) {
    REQUIRE(topology.links_of(g).size() == static_cast<std::size_t>(n - 1));
    CHECK(topology.next_link(g, g) == -1);
    for (int d = 0; d < n; ++d) {
      if (d == g) continue;
      CHECK(topology.next_link(g, d) == link_between(topology, g, d));
      CHECK(topology.hops(g, d) == 1);
    }
  }
}

}  // namespace

TEST_CASE("Topology: ring of 4 takes the shorter way, ties go to g+1", "[topology]") {
  const int n = 4;
  const Topology topology(TopologyKind::Ring, n);
  REQUIRE(topology.links().size() == 4);
  for (int g = 0; g < n; ++g) {
    CHECK(topology.links()[g].a == g);
    CHECK(topology.links()[g].b == (g + 1) % n);
    // Ports: [link to g+1, link to g-1].
    REQUIRE(topology.links_of(g).size() == 2);
    CHECK(topology.across(topology.links_of(g)[0], g) == (g + 1) % n);
    CHECK(topology.across(topology.links_of(g)[1], g) == (g + n - 1) % n);
  }
  // Neighbours: the direct link.
  CHECK(topology.next_link(0, 1) == link_between(topology, 0, 1));
  CHECK(topology.next_link(0, 3) == link_between(topology, 0, 3));
  CHECK(topology.next_link(2, 1) == link_between(topology, 2, 1));
  // Distance n/2 is a tie: toward (g + 1) mod n.
  CHECK(topology.next_link(0, 2) == link_between(topology, 0, 1));
  CHECK(topology.next_link(1, 3) == link_between(topology, 1, 2));
  CHECK(topology.next_link(2, 0) == link_between(topology, 2, 3));
  CHECK(topology.next_link(3, 1) == link_between(topology, 3, 0));
  for (int s = 0; s < n; ++s) {
    CHECK(topology.next_link(s, s) == -1);
    for (int d = 0; d < n; ++d) {
      const int forward = (d - s + n) % n;
      const int expected = std::min(forward, n - forward);
      CHECK(topology.hops(s, d) == expected);
      CHECK(walk(topology, s, d) == expected);
    }
  }
}

TEST_CASE("Topology: ring of 5 goes backward when that is shorter", "[topology]") {
  const int n = 5;
  const Topology topology(TopologyKind::Ring, n);
  CHECK(topology.next_link(0, 3) == link_between(topology, 0, 4));
  CHECK(topology.next_link(0, 2) == link_between(topology, 0, 1));
  CHECK(topology.next_link(4, 1) == link_between(topology, 4, 0));
  for (int s = 0; s < n; ++s) {
    for (int d = 0; d < n; ++d) {
      const int forward = (d - s + n) % n;
      CHECK(walk(topology, s, d) == std::min(forward, n - forward));
    }
  }
}

TEST_CASE("Topology: ring of 2 is one link, ring of 1 has none", "[topology]") {
  const Topology two(TopologyKind::Ring, 2);
  REQUIRE(two.links().size() == 1);
  CHECK(two.links_of(0) == std::vector<int>{0});
  CHECK(two.links_of(1) == std::vector<int>{0});
  CHECK(two.next_link(0, 1) == 0);
  CHECK(two.next_link(1, 0) == 0);
  CHECK(two.hops(0, 1) == 1);
  CHECK(two.hops(1, 1) == 0);

  const Topology one(TopologyKind::Ring, 1);
  CHECK(one.links().empty());
  CHECK(one.links_of(0).empty());
  CHECK(one.next_link(0, 0) == -1);
  CHECK(one.hops(0, 0) == 0);
}

TEST_CASE("Topology: fully connected 4 and 8 route directly", "[topology]") {
  check_fully_connected(4);
  check_fully_connected(8);
}

TEST_CASE("Topology: switch routes GPU -> switch -> GPU in 2 hops", "[topology]") {
  const int n = 4;
  const Topology topology(TopologyKind::Switch, n);
  REQUIRE(topology.has_switch());
  const int sw = topology.switch_node();
  REQUIRE(sw == n);
  REQUIRE(topology.links().size() == static_cast<std::size_t>(n));
  REQUIRE(topology.links_of(sw).size() == static_cast<std::size_t>(n));
  for (int g = 0; g < n; ++g) {
    CHECK(topology.links()[g].a == g);
    CHECK(topology.links()[g].b == sw);
    CHECK(topology.links_of(g) == std::vector<int>{g});
    CHECK(topology.links_of(sw)[g] == g);
    CHECK(topology.across(g, g) == sw);
    CHECK(topology.across(g, sw) == g);
    CHECK(topology.next_link(sw, g) == g);
    for (int d = 0; d < n; ++d) {
      if (d == g) {
        CHECK(topology.hops(g, d) == 0);
        continue;
      }
      CHECK(topology.next_link(g, d) == g);  // a GPU's only link
      CHECK(topology.hops(g, d) == 2);
      CHECK(walk(topology, g, d) == 2);
    }
  }
}

TEST_CASE("Topology: across() names the other end and rejects strangers", "[topology]") {
  const Topology ring(TopologyKind::Ring, 4);
  for (int link = 0; link < 4; ++link) {
    const auto ends = ring.links()[link];
    CHECK(ring.across(link, ends.a) == ends.b);
    CHECK(ring.across(link, ends.b) == ends.a);
  }
  CHECK_THROWS(ring.across(0, 2));     // link 0 joins 0 and 1
  CHECK_THROWS(ring.across(9, 0));     // no such link
  CHECK_THROWS(ring.next_link(0, 4));  // not a GPU
}

TEST_CASE("Topology: nonsense is a ConfigError naming the parameter", "[topology]") {
  auto message = [](TopologyKind kind, int gpus) -> std::string {
    try {
      Topology topology(kind, gpus);
    } catch (const t3::ConfigError& error) {
      return error.what();
    }
    return "";
  };
  CHECK(message(TopologyKind::Ring, 0).find("gpus") != std::string::npos);
  CHECK(message(TopologyKind::Switch, -1).find("gpus") != std::string::npos);
  CHECK(message(static_cast<TopologyKind>(42), 4).find("topology.kind") != std::string::npos);
  CHECK(message(TopologyKind::FullyConnected, 3).empty());
}
