// Which GPUs are linked to which, and the route a transaction takes. Plain C++, no SystemC.
#pragma once

#include <vector>

#include "config/system_config.h"

namespace t3 {

// One full-duplex link between two nodes. Nodes 0..gpus-1 are GPUs; node `gpus` is the switch.
struct LinkEnds {
  int a;
  int b;
};

class Topology {
 public:
  Topology(TopologyKind kind, int gpus);

  TopologyKind kind() const { return kind_; }
  int gpus() const { return gpus_; }
  bool has_switch() const { return kind_ == TopologyKind::Switch; }
  int switch_node() const { return gpus_; }
  const std::vector<LinkEnds>& links() const { return links_; }
  // Links attached to `node`, in the order that node's link ports are numbered.
  const std::vector<int>& links_of(int node) const { return node_links_[node]; }

  // The link a transaction at `node` takes toward GPU `destination` (-1 if it is there).
  // Ring: the shorter way round; a tie goes to the higher-numbered neighbour, (g + 1) mod n.
  int next_link(int node, int destination) const;
  // The neighbour at the other end of `link` from `node`.
  int across(int link, int node) const;
  int hops(int source, int destination) const;

 private:
  void add_link(int a, int b);
  TopologyKind kind_;
  int gpus_;
  std::vector<LinkEnds> links_;
  std::vector<std::vector<int>> node_links_;
};

}  // namespace t3
