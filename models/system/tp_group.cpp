#include "models/system/tp_group.h"

#include <stdexcept>
#include <string>

#include <tlm>

namespace t3 {

AddressMap TpGroup::checked_map(const SystemConfig& config) {
  AddressMap map(config.address_map, static_cast<int>(config.gpus), config.hbm.capacity_bytes);
  map.check();
  return map;
}

TpGroup::TpGroup(sc_core::sc_module_name name, const SystemConfig& config)
    : sc_module(name),
      config_(config),
      map_(checked_map(config)),
      topology_(config.topology.kind, static_cast<int>(config.gpus)),
      barrier_("barrier", static_cast<int>(config.gpus)) {
  tlm::tlm_global_quantum::instance().set(sc_core::sc_time(config.sim.quantum_ns, sc_core::SC_NS));
  for (int g = 0; g < config.gpus; ++g) {
    gpus_.push_back(std::make_unique<Gpu>(("gpu" + std::to_string(g)).c_str(), g, config_, map_));
  }
  if (topology_.has_switch()) {
    switch_ = std::make_unique<Router>(
        "switch", map_, sc_core::sc_time(config.topology.switch_latency_ns, sc_core::SC_NS));
  }
  wire_links();
  set_routes();
  for (auto& gpu : gpus_) {
    hosts_.push_back(
        std::make_unique<Host>(("host" + std::to_string(gpu->index())).c_str(), gpu->index()));
    hosts_.back()->socket.bind(gpu->router.in);
    hosts_.back()->irq.bind(gpu->interrupt);
    hosts_.back()->barrier.bind(barrier_);
  }
}

void TpGroup::load(const std::vector<Program>& programs) {
  if (programs.size() > hosts_.size()) {
    throw std::invalid_argument(std::to_string(programs.size()) + " programs for " +
                                std::to_string(hosts_.size()) + " GPUs");
  }
  for (std::size_t g = 0; g < programs.size(); ++g) hosts_[g]->load(programs[g]);
}

bool TpGroup::hosts_done() const {
  for (const auto& host : hosts_) {
    if (!host->done() || host->failed()) return false;
  }
  return true;
}

std::string TpGroup::host_error() const {
  for (const auto& host : hosts_) {
    if (host->failed()) return host->error();
  }
  return {};
}

Router& TpGroup::node_router(int node) {
  return node == topology_.switch_node() && switch_ ? *switch_ : gpus_[node]->router;
}

void TpGroup::wire_links() {
  const auto& ends = topology_.links();
  for (std::size_t l = 0; l < ends.size(); ++l) {
    const std::string name = "link" + std::to_string(ends[l].a) + "_" + std::to_string(ends[l].b);
    links_.push_back(std::make_unique<NvLink>(name.c_str(), config_.link));
  }
  // Each node binds its router's out ports in links_of() order, so port numbers follow it.
  const int nodes = gpus() + (switch_ ? 1 : 0);
  for (int node = 0; node < nodes; ++node) {
    Router& router = node_router(node);
    for (int l : topology_.links_of(node)) {
      NvLink& link = *links_[l];
      const bool side_a = ends[l].a == node;
      router.out.bind(side_a ? link.from_a : link.from_b);
      (side_a ? link.to_a : link.to_b).bind(router.in);
    }
  }
}

void TpGroup::set_routes() {
  const int nodes = gpus() + (switch_ ? 1 : 0);
  for (int node = 0; node < nodes; ++node) {
    const bool is_switch = switch_ && node == topology_.switch_node();
    const int first_port = is_switch ? 0 : Gpu::kFirstLinkPort;
    const auto& node_links = topology_.links_of(node);
    for (int destination = 0; destination < gpus(); ++destination) {
      if (destination == node) continue;  // a GPU's own windows were routed by the Gpu
      const int link = topology_.next_link(node, destination);
      int index = 0;
      while (node_links[index] != link) ++index;
      for (Window window : {Window::Hbm, Window::Mmio}) {
        node_router(node).set_route(destination, window, first_port + index);
      }
    }
  }
}

nlohmann::json TpGroup::report() const {
  nlohmann::json report;
  for (const auto& gpu : gpus_) report["gpus"].push_back(gpu->report());
  const auto& ends = topology_.links();
  for (std::size_t l = 0; l < links_.size(); ++l) {
    nlohmann::json link = links_[l]->report();
    link["ends"] = {ends[l].a, ends[l].b};
    report["links"].push_back(link);
  }
  if (switch_) report["switch"] = switch_->report();
  return report;
}

void TpGroup::check_drained() const {
  std::string stuck;
  const auto add = [&stuck](const std::string& what) {
    if (!what.empty()) stuck += (stuck.empty() ? "" : "; ") + what;
  };
  for (const auto& gpu : gpus_) add(gpu->pending_work());
  for (const auto& host : hosts_) {
    if (!host->done() && !host->failed())
      add(std::string(host->name()) + " did not finish its program");
  }
  if (!stuck.empty()) {
    throw std::runtime_error("simulation ended with work pending (deadlock): " + stuck);
  }
}

}  // namespace t3
