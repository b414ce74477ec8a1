// Runs one scenario (workloads/scenario.h) on a freshly built group and turns what the blocks
// recorded into the result document of DESIGN.md: time, phase breakdown, DRAM bytes by category,
// link bytes, queue, tracker and DMA statistics, and the effective configuration. Under
// rotational symmetry (sim.symmetry) bytes and counts are the group's: the simulated GPU's times
// the group's size; queue statistics are per GPU either way.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>
#include <systemc>

#include "experiments/activity.h"
#include "experiments/energy.h"
#include "experiments/stats_dump.h"
#include "models/system/tp_group.h"
#include "tlm_interconnect/payload.h"
#include "workloads/scenario.h"

namespace t3 {

// Group-wide counters at one instant: DRAM bytes by op and traffic class, and link bytes.
struct TrafficCounters {
  std::array<std::array<std::uint64_t, kTrafficClasses>, kOps> dram{};
  std::uint64_t link_payload = 0;
  std::uint64_t link_wire = 0;
  double hbm_busy_ns = 0;   // data-bus busy time summed over every channel
  double link_busy_ns = 0;  // serialiser busy time summed over every link direction
  TrafficCounters operator-(const TrafficCounters& earlier) const;
  TrafficCounters operator*(std::uint64_t factor) const;
};

// DRAM bytes of one phase by the categories of the result document: compute-class traffic is
// the GEMM's (gemm_read; gemm_write holds its stores and updates, wherever they land), and
// communication-class traffic is the phase's collective's (rs_* or ag_*). An L2 write-back is
// charged to the access that evicted or flushed the line. Communication traffic in a GEMM-only
// phase, or updates in an all-gather, land in "other", which the tests expect to be 0.
nlohmann::json dram_categories(PhaseKind kind, const TrafficCounters& moved);

class ScenarioRun {
 public:
  // Builds the group for scenario_config(config, plan.scenario) and loads the plan's programs.
  ScenarioRun(const SystemConfig& config, const ScenarioPlan& plan);
  ~ScenarioRun();

  TpGroup& group() { return *group_; }
  const SystemConfig& config() const { return config_; }
  // Before run(): also snapshot every block's statistics at each phase barrier, so result() has
  // "stats" (stats_dump.h: the section of the --stats dump).
  void record_statistics() { record_statistics_ = true; }
  // Simulates to the end; throws std::runtime_error for a host error, a deadlock, or phases that
  // did not all end.
  void run();
  // The result document (after run()).
  nlohmann::json result() const;

 private:
  // The switch's multicast groups the plan names (ScenarioPlan::multicast_groups), made before the
  // run starts; throws ConfigError naming topology.switch_reductions if the switch cannot reduce.
  void make_multicast_groups();
  struct Mark {
    std::uint32_t barrier;
    sc_core::sc_time time;
    TrafficCounters counters;
    EnergyActivity activity;
  };
  TrafficCounters counters() const;
  nlohmann::json queue_statistics() const;
  nlohmann::json tracker_statistics() const;
  nlohmann::json dma_statistics() const;
  nlohmann::json transactions() const;
  // Time communication runs with no compute beside it: every collective-only phase whole (its
  // setup and launch included), and in a phase that fuses the GEMM with its reduce-scatter, the
  // time a GPU's communication runs with none of its GEMM workgroups running (the most over the
  // simulated GPUs).
  double exposed_comm_ns() const;
  // That time in `window` (ns): a collective kernel counts from its doorbell to its end, a DMA
  // transfer from its queueing to its end.
  double uncovered_communication_ns(Interval window) const;
  const Mark& mark(std::uint32_t barrier) const;

  SystemConfig config_;
  ScenarioPlan plan_;
  std::unique_ptr<TpGroup> group_;
  // HBM and link busy time over the sublayer as shares of what the group could have been busy.
  nlohmann::json utilisation(const TrafficCounters& moved, double time_ns) const;
  nlohmann::json statistics_section() const;

  std::vector<Mark> marks_;
  bool record_statistics_ = false;
  std::vector<std::pair<std::uint32_t, Statistics>> snapshots_;       // (barrier, statistics)
  std::vector<std::pair<std::uint32_t, sc_core::sc_time>> arrivals_;  // (barrier, time)
  double wall_time_s_ = 0;
};

// The ideal scenario: max(GEMM alone, reduce-scatter alone) + all-gather, with the phases and data
// movement of the run whose reduce-scatter is the fastest: the sequential result (ring), or one of
// `direct` where a direct reduce-scatter runs (ideal_simulated): the run of ideal's own programs
// (the SM direct reduce-scatter), ideal-rs-nmc's (the DMA engines', as T3's) and ideal-rs-sm-nmc's
// (the SMs push each partial to its owner as near-memory updates, as T3's GEMM stores it); null
// entries are skipped. "ideal_reduce_scatter" says which it took ("used": ring, direct_sm,
// direct_dma_nmc or direct_sm_nmc) and the reduce-scatter times it chose between ("ring_ns",
// "direct_sm_ns", "direct_dma_nmc_ns", "direct_sm_nmc_ns").
nlohmann::json ideal_result(const nlohmann::json& sequential,
                            const std::vector<nlohmann::json>& direct = {});

// Sets "speedup_vs_sequential" = sequential time / this time.
void set_speedup(nlohmann::json& result, const nlohmann::json& sequential);

}  // namespace t3
