#include "models/system/tp_group.h"

#include <stdexcept>
#include <string>

#include <tlm>

#include "config/config_io.h"
#include "models/system/stall_error.h"
#include "protocol/to_size.h"

namespace t3 {

AddressMap TpGroup::checked_map(const SystemConfig& config) {
  AddressMap map(config.address_map, static_cast<int>(config.gpus), config.hbm.capacity_bytes);
  map.check();
  return map;
}

namespace {

int simulated_gpus(const SystemConfig& config, const std::optional<RotationMap>& rotation) {
  if (config.sim.symmetry == Symmetry::None) return static_cast<int>(config.gpus);
  if (!rotation) {
    throw ConfigError(
        "sim.symmetry: rotational needs a plan that states how its addresses rotate (a scenario "
        "or collective run); this system was built without one");
  }
  if (const std::string why = rotational_symmetry_refusal(config); !why.empty()) {
    throw ConfigError("sim.symmetry: rotational " + why);
  }
  if (const std::string why = rotation_map_error(*rotation); !why.empty()) {
    throw std::logic_error("sim.symmetry: the plan's rotation is unusable: " + why);
  }
  if (rotation->gpus != config.gpus) {
    throw ConfigError("sim.symmetry: the plan's rotation is for " + std::to_string(rotation->gpus) +
                      " GPUs, the group has " + std::to_string(config.gpus));
  }
  return 1;
}

}  // namespace

TpGroup::TpGroup(sc_core::sc_module_name name, const SystemConfig& config,
                 const std::optional<RotationMap>& rotation)
    : sc_module(name),
      config_(config),
      map_(checked_map(config)),
      topology_(config.topology.kind, static_cast<int>(config.gpus)),
      rotation_(config.sim.symmetry == Symmetry::Rotational ? rotation : std::nullopt),
      barrier_("barrier", simulated_gpus(config, rotation)) {
  tlm::tlm_global_quantum::instance().set(sc_core::sc_time(config.sim.quantum_ns, sc_core::SC_NS));
  for (int g = 0; g < simulated_gpus(config, rotation); ++g) {
    gpus_.push_back(std::make_unique<Gpu>(("gpu" + std::to_string(g)).c_str(), g, config_, map_));
  }
  if (topology_.has_switch()) {
    switch_ = std::make_unique<Router>(
        "switch", map_, sc_core::sc_time(config.topology.switch_latency_ns, sc_core::SC_NS));
    // A multicast access reaches every member GPU, which a rotational run does not build: such
    // a run has no reducer, and whatever would issue multicast accesses refuses it first.
    if (config.topology.switch_reductions && !rotation_) {
      Router& router = *switch_;
      reducer_ = std::make_unique<SwitchReducer>(
          "switch_reducer", map_, config.sim.mode == SimMode::Functional,
          [&router](int gpu, tlm::tlm_generic_payload& payload, sc_core::sc_time& delay) {
            router.send_to_gpu(gpu, payload, delay);
          });
      switch_->set_reducer(reducer_.get());
    }
  }
  if (rotation_) {
    wire_symmetric_links();
  } else {
    wire_links();
  }
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
  if (rotation_) {
    // The others are GPU 0's rotated: GPU 0 stands for them.
    if (!programs.empty()) hosts_.front()->load(programs.front());
    return;
  }
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
    links_.back()->set_turn_owner(ends[l].a, gpus());
    link_ends_.push_back(ends[l]);
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

void TpGroup::wire_symmetric_links() {
  // GPU 0 sends towards GPU h on its link to h. What leaves GPU 0 towards h is, rotated by -h,
  // what enters GPU 0 from -h, so that physical direction and GPU 0's incoming direction from -h
  // are one lane: a single NvLink carries GPU 0's sends towards h on side A and towards -h on
  // side B (folded when h = -h), and each far end hands what arrives to a Rotator into GPU 0.
  // Acks and read data come back through the same call on the other lane, as in hardware.
  Gpu& gpu = *gpus_.front();
  const auto& ends = topology_.links();
  const int n = static_cast<int>(config_.gpus);
  std::vector<int> side_b_of(to_size(n), -1);  // far GPU -> link to bind on B
  for (int l : topology_.links_of(0)) {
    const int far = ends[l].a == 0 ? ends[l].b : ends[l].a;
    if (side_b_of[to_size(far)] >= 0) {
      NvLink& link = *links_[to_size(side_b_of[to_size(far)])];
      gpu.router.out.bind(link.from_b);
      continue;
    }
    const int mirror = wrap(-far, n);
    const bool folded = mirror == far;
    const std::string name =
        "link0_" + std::to_string(far) + (folded ? "" : "_" + std::to_string(mirror));
    links_.push_back(std::make_unique<NvLink>(name.c_str(), config_.link, folded));
    link_ends_.push_back({0, far});
    NvLink& link = *links_.back();
    gpu.router.out.bind(link.from_a);
    side_b_of[to_size(mirror)] = static_cast<int>(links_.size()) - 1;
    for (const auto& [end, shift_from] :
         {std::pair{&link.to_b, far}, std::pair{&link.to_a, mirror}}) {
      rotators_.push_back(
          std::make_unique<Rotator>(("rotate_" + name + (end == &link.to_b ? "_b" : "_a")).c_str(),
                                    map_, *rotation_, shift_from));
      end->bind(rotators_.back()->in);
      rotators_.back()->out.bind(gpu.router.in);
    }
    if (folded) rotators_.back()->quiet.bind(link.from_b);  // side B sends nothing
  }
}

void TpGroup::set_routes() {
  // Every destination of the group, also those a symmetric run does not build.
  const int destinations = static_cast<int>(config_.gpus);
  const int nodes = gpus() + (switch_ ? 1 : 0);
  for (int node = 0; node < nodes; ++node) {
    const bool is_switch = switch_ && node == topology_.switch_node();
    const int first_port = is_switch ? 0 : Gpu::kFirstLinkPort;
    const auto& node_links = topology_.links_of(node);
    for (int destination = 0; destination < destinations; ++destination) {
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
  for (std::size_t l = 0; l < links_.size(); ++l) {
    nlohmann::json link = links_[l]->report();
    link["ends"] = {link_ends_[l].a, link_ends_[l].b};
    report["links"].push_back(link);
  }
  if (switch_) report["switch"] = switch_->report();
  if (reducer_) report["switch"]["reductions"] = reducer_->report();
  return report;
}

std::uint64_t TpGroup::progress() const {
  std::uint64_t progress = 0;
  for (const auto& gpu : gpus_) progress += gpu->progress();
  for (const auto& host : hosts_) progress += host->finish_times().size();
  return progress;
}

std::string TpGroup::describe_pending() const {
  std::string stuck;
  const auto add = [&stuck](const std::string& what) {
    if (!what.empty()) stuck += (stuck.empty() ? "" : "; ") + what;
  };
  for (const auto& gpu : gpus_) add(gpu->pending_work());
  for (const auto& link : links_) add(link->describe_pending());
  for (const auto& host : hosts_) add(host->describe_pending());
  return stuck;
}

void TpGroup::check_drained() const {
  if (const std::string stuck = describe_pending(); !stuck.empty()) {
    throw StallError("simulation ended with work pending (deadlock): " + stuck);
  }
}

}  // namespace t3
