#include "tlm_interconnect/topology.h"

#include <stdexcept>
#include <string>

namespace t3 {

namespace {

const char* kind_name(TopologyKind kind) {
  switch (kind) {
    case TopologyKind::Ring:
      return "ring";
    case TopologyKind::FullyConnected:
      return "fully_connected";
    case TopologyKind::Switch:
      return "switch";
  }
  return "?";
}

}  // namespace

Topology::Topology(TopologyKind kind, int gpus) : kind_(kind), gpus_(gpus) {
  if (gpus < 1) {
    throw ConfigError("gpus: a topology needs at least 1 GPU, got " + std::to_string(gpus));
  }
  switch (kind) {
    case TopologyKind::Ring: {
      node_links_.resize(gpus);
      if (gpus == 2) {
        add_link(0, 1);
      } else if (gpus >= 3) {
        // Link g joins g and g+1; every node's ports are [toward g+1, toward g-1].
        for (int g = 0; g < gpus; ++g) links_.push_back(LinkEnds{g, (g + 1) % gpus});
        for (int g = 0; g < gpus; ++g) {
          node_links_[g] = {g, (g + gpus - 1) % gpus};
        }
      }
      break;
    }
    case TopologyKind::FullyConnected:
      node_links_.resize(gpus);
      for (int a = 0; a < gpus; ++a) {
        for (int b = a + 1; b < gpus; ++b) add_link(a, b);
      }
      break;
    case TopologyKind::Switch:
      node_links_.resize(gpus + 1);
      for (int g = 0; g < gpus; ++g) add_link(g, gpus);
      break;
    default:
      throw ConfigError("topology.kind: unknown topology kind " +
                        std::to_string(static_cast<int>(kind)));
  }
}

void Topology::add_link(int a, int b) {
  const int link = static_cast<int>(links_.size());
  links_.push_back(LinkEnds{a, b});
  node_links_[a].push_back(link);
  node_links_[b].push_back(link);
}

int Topology::next_link(int node, int destination) const {
  const int nodes = static_cast<int>(node_links_.size());
  if (node < 0 || node >= nodes) {
    throw std::out_of_range("Topology::next_link: node " + std::to_string(node) + " not in the " +
                            kind_name(kind_) + " topology");
  }
  if (destination < 0 || destination >= gpus_) {
    throw std::out_of_range("Topology::next_link: destination " + std::to_string(destination) +
                            " is not a GPU (gpus = " + std::to_string(gpus_) + ")");
  }
  if (node == destination) return -1;
  switch (kind_) {
    case TopologyKind::Ring: {
      if (gpus_ == 2) return 0;
      const int forward = (destination - node + gpus_) % gpus_;  // hops going g -> g+1
      const int backward = gpus_ - forward;
      return forward <= backward ? node_links_[node][0] : node_links_[node][1];
    }
    case TopologyKind::FullyConnected:
      for (int link : node_links_[node]) {
        if (across(link, node) == destination) return link;
      }
      break;
    case TopologyKind::Switch:
      if (node == switch_node()) return node_links_[node][destination];
      return node_links_[node][0];
  }
  throw std::logic_error("Topology::next_link: no link from " + std::to_string(node) + " to " +
                         std::to_string(destination));
}

int Topology::across(int link, int node) const {
  if (link < 0 || link >= static_cast<int>(links_.size())) {
    throw std::out_of_range("Topology::across: no link " + std::to_string(link));
  }
  const LinkEnds& ends = links_[link];
  if (ends.a == node) return ends.b;
  if (ends.b == node) return ends.a;
  throw std::out_of_range("Topology::across: node " + std::to_string(node) + " is not on link " +
                          std::to_string(link));
}

int Topology::hops(int source, int destination) const {
  int node = source;
  int count = 0;
  for (int link = next_link(node, destination); link >= 0; link = next_link(node, destination)) {
    node = across(link, node);
    if (++count > static_cast<int>(node_links_.size())) {
      throw std::logic_error("Topology::hops: routing loop");
    }
  }
  return count;
}

}  // namespace t3
