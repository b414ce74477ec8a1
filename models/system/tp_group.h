// The tensor-parallel group: N GPUs wired by the configured topology (ring, a link per pair, or
// one switch), with routes set so any GPU reaches any other's HBM and MMIO, and one host per GPU
// that runs that GPU's program. Under rotational symmetry (sim.symmetry) only GPU 0, its host,
// its links and the switch are built; what crosses a link into another GPU comes back into GPU 0
// re-addressed by a Rotator (tlm_interconnect/rotator.h), and every statistic stands for one
// of the group's `replicas()` identical GPUs.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>
#include <systemc>

#include "config/system_config.h"
#include "models/gpu/gpu.h"
#include "models/host/barrier.h"
#include "models/host/host.h"
#include "protocol/program.h"
#include "protocol/rotation.h"
#include "tlm_interconnect/address_map.h"
#include "tlm_interconnect/multicast.h"
#include "tlm_interconnect/nvlink.h"
#include "tlm_interconnect/rotator.h"
#include "tlm_interconnect/router.h"
#include "tlm_interconnect/topology.h"

namespace t3 {

class TpGroup : public sc_core::sc_module {
 public:
  // Throws ConfigError if the configuration cannot be built (e.g. overlapping address windows,
  // or sim.symmetry = rotational without the plan's `rotation`).
  TpGroup(sc_core::sc_module_name name, const SystemConfig& config,
          const std::optional<RotationMap>& rotation = std::nullopt);

  // GPUs simulated: config.gpus, or 1 under rotational symmetry.
  int gpus() const { return static_cast<int>(gpus_.size()); }
  // How many GPUs of the group each simulated one stands for (1, or config.gpus).
  int replicas() const { return static_cast<int>(config_.gpus) / gpus(); }
  Gpu& gpu(int index) { return *gpus_.at(index); }
  const Gpu& gpu(int index) const { return *gpus_.at(index); }
  const AddressMap& address_map() const { return map_; }
  const Topology& topology() const { return topology_; }
  const SystemConfig& config() const { return config_; }
  // The switch's adder and multicast groups (topology.switch_reductions), null if it has none.
  SwitchReducer* switch_reducer() { return reducer_.get(); }
  const SwitchReducer* switch_reducer() const { return reducer_.get(); }
  NvLink& link(int index) { return *links_.at(index); }
  const NvLink& link(int index) const { return *links_.at(index); }
  Host& host(int index) { return *hosts_.at(index); }
  HostBarrier& barrier() { return barrier_; }
  // Before sc_start: one program per GPU (fewer programs leave the remaining hosts idle); under
  // rotational symmetry only GPU 0's runs.
  void load(const std::vector<Program>& programs);
  // Every host finished its program without an error.
  bool hosts_done() const;
  // The first host error, empty if none.
  std::string host_error() const;
  int links() const { return static_cast<int>(links_.size()); }
  // The nodes link `index` joins (side A, side B). Under rotational symmetry GPU 0's link towards
  // h is {0, h}: side B then carries what h sends to 0, i.e. GPU 0's sends towards -h rotated.
  const LinkEnds& link_ends(int index) const { return link_ends_.at(index); }

  // Statistics of every block, gathered once at the end of a run.
  nlohmann::json report() const;
  // Throws StallError (models/system/stall_error.h) naming every block that still holds work (a
  // deadlock), including hosts that did not reach the end of their program.
  void check_drained() const;
  // Every block still holding work, on one line (empty if none): what check_drained reports.
  std::string describe_pending() const;
  // A count that rises whenever useful work completes anywhere in the group: SM workgroups and
  // their memory accesses (not flag polls), DMA pieces and transfers, tracker counts, host
  // commands. The stall watchdog (simulation.h) stops a run in which it stands still.
  std::uint64_t progress() const;

 private:
  static AddressMap checked_map(const SystemConfig& config);
  void wire_links();
  void wire_symmetric_links();
  void set_routes();
  Router& node_router(int node);

  SystemConfig config_;
  AddressMap map_;
  Topology topology_;
  std::vector<std::unique_ptr<Gpu>> gpus_;
  std::unique_ptr<Router> switch_;
  std::unique_ptr<SwitchReducer> reducer_;
  std::vector<std::unique_ptr<NvLink>> links_;
  std::vector<LinkEnds> link_ends_;  // of each built link, in the topology's node numbers
  std::optional<RotationMap> rotation_;
  std::vector<std::unique_ptr<Rotator>> rotators_;
  HostBarrier barrier_;
  std::vector<std::unique_ptr<Host>> hosts_;
};

}  // namespace t3
