#include "experiments/scenario_run.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "config/config_io.h"
#include "models/system/simulation.h"
#include "tlm_interconnect/multicast.h"

namespace t3 {

namespace {

constexpr int kRead = static_cast<int>(Op::Read);
constexpr int kWrite = static_cast<int>(Op::Write);
constexpr int kUpdate = static_cast<int>(Op::Update);
constexpr int kCompute = static_cast<int>(TrafficClass::Compute);
constexpr int kComm = static_cast<int>(TrafficClass::Communication);

double ns(sc_core::sc_time time) {
  return time.to_seconds() * 1e9;
}

// MCA's decisions summed over every GPU's channels (null unless the arbitration is MCA), so a
// result says whether the gate acted at all (docs/t3.md, "Where MCA matters").
nlohmann::json mca_decisions(const TpGroup& group) {
  nlohmann::json sum = nlohmann::json::object();
  for (int g = 0; g < group.gpus(); ++g) {
    const nlohmann::json memory = group.gpu(g).memory.report();
    if (!memory.contains("mca")) return nullptr;
    const nlohmann::json& mca = memory["mca"];
    for (const char* key : {"held_back", "starvation_overrides", "urgent_releases"}) {
      sum[key] = sum.value(key, std::uint64_t{0}) + mca[key].get<std::uint64_t>();
    }
    const auto low = mca["threshold_min"].get<std::int64_t>();
    const auto high = mca["threshold_max"].get<std::int64_t>();
    sum["threshold_min"] = g == 0 ? low : std::min(sum["threshold_min"].get<std::int64_t>(), low);
    sum["threshold_max"] = g == 0 ? high : std::max(sum["threshold_max"].get<std::int64_t>(), high);
  }
  return sum;
}

}  // namespace

TrafficCounters TrafficCounters::operator*(std::uint64_t factor) const {
  TrafficCounters scaled = *this;
  for (auto& by_class : scaled.dram) {
    for (auto& bytes : by_class) bytes *= factor;
  }
  scaled.link_payload *= factor;
  scaled.link_wire *= factor;
  scaled.hbm_busy_ns *= static_cast<double>(factor);
  scaled.link_busy_ns *= static_cast<double>(factor);
  return scaled;
}

TrafficCounters TrafficCounters::operator-(const TrafficCounters& earlier) const {
  TrafficCounters delta;
  for (int op = 0; op < kOps; ++op) {
    for (int c = 0; c < kTrafficClasses; ++c) delta.dram[op][c] = dram[op][c] - earlier.dram[op][c];
  }
  delta.link_payload = link_payload - earlier.link_payload;
  delta.link_wire = link_wire - earlier.link_wire;
  delta.hbm_busy_ns = hbm_busy_ns - earlier.hbm_busy_ns;
  delta.link_busy_ns = link_busy_ns - earlier.link_busy_ns;
  return delta;
}

nlohmann::json dram_categories(PhaseKind kind, const TrafficCounters& moved) {
  const auto& d = moved.dram;
  nlohmann::json bytes = {{"gemm_read", d[kRead][kCompute]},
                          {"gemm_write", d[kWrite][kCompute] + d[kUpdate][kCompute]},
                          {"rs_read", 0},
                          {"rs_write", 0},
                          {"rs_update", 0},
                          {"ag_read", 0},
                          {"ag_write", 0},
                          {"other", 0}};
  std::uint64_t other = 0;
  if (kind == PhaseKind::Gemm) {
    other = d[kRead][kComm] + d[kWrite][kComm] + d[kUpdate][kComm];
  } else if (kind == PhaseKind::AllGather || kind == PhaseKind::AllGatherGemm) {
    bytes["ag_read"] = d[kRead][kComm];
    bytes["ag_write"] = d[kWrite][kComm];
    other = d[kUpdate][kComm];
  } else {
    bytes["rs_read"] = d[kRead][kComm];
    bytes["rs_write"] = d[kWrite][kComm];
    bytes["rs_update"] = d[kUpdate][kComm];
  }
  bytes["other"] = other;
  return bytes;
}

ScenarioRun::ScenarioRun(const SystemConfig& config, const ScenarioPlan& plan)
    : config_(scenario_config(config, plan.scenario)), plan_(plan) {
  if (config_.sim.symmetry == Symmetry::Rotational && plan_.rotation.gpus == 0) {
    throw ConfigError(std::string("sim.symmetry: rotational cannot stand for scenario ") +
                      to_string(plan_.scenario) + ": " +
                      (plan_.rotation_refused.empty()
                           ? std::string("its GPUs' programs are not rotations of one another")
                           : plan_.rotation_refused) +
                      " (set sim.symmetry=none)");
  }
  group_ = std::make_unique<TpGroup>("group", config_, plan_.rotation);
  make_multicast_groups();
  group_->barrier().observe_release([this](sc_core::sc_time time, std::uint32_t barrier) {
    marks_.push_back({barrier, time, counters(), energy_activity(*group_)});
    if (record_statistics_) snapshots_.emplace_back(barrier, collect_statistics(*group_));
  });
  group_->barrier().observe_arrival([this](sc_core::sc_time time, std::uint32_t barrier) {
    arrivals_.emplace_back(barrier, time);
  });
  group_->load(plan_.programs);
}

ScenarioRun::~ScenarioRun() = default;

void ScenarioRun::make_multicast_groups() {
  if (plan_.multicast_groups.empty()) return;
  SwitchReducer* reducer = group_->switch_reducer();
  if (reducer == nullptr) {
    throw ConfigError(std::string("topology.switch_reductions: scenario ") +
                      to_string(plan_.scenario) +
                      " reduces through the switch's multicast groups and needs a switch that "
                      "reduces (topology.kind = switch, topology.switch_reductions = true, "
                      "sim.symmetry = none)");
  }
  for (std::size_t i = 0; i < plan_.multicast_groups.size(); ++i) {
    if (reducer->add_group(plan_.multicast_groups[i]) != i + 1) {
      throw std::logic_error("scenario: the switch numbered a multicast group other than the plan");
    }
  }
}

TrafficCounters ScenarioRun::counters() const {
  TrafficCounters now;
  for (int g = 0; g < group_->gpus(); ++g) {
    const HbmStats& memory = group_->gpu(g).memory.stats();
    for (int op = 0; op < kOps; ++op) {
      for (int c = 0; c < kTrafficClasses; ++c) now.dram[op][c] += memory.bytes[op][c];
    }
    for (double busy : memory.channel_busy_ns) now.hbm_busy_ns += busy;
  }
  for (int l = 0; l < group_->links(); ++l) {
    for (int direction = 0; direction < 2; ++direction) {
      now.link_payload += group_->link(l).stats(direction).payload_bytes;
      now.link_wire += group_->link(l).stats(direction).wire_bytes;
      now.link_busy_ns += group_->link(l).stats(direction).busy_ns;
    }
  }
  return now * static_cast<std::uint64_t>(group_->replicas());
}

void ScenarioRun::run() {
  const RunSummary summary = simulate(*group_);
  wall_time_s_ = summary.wall_time_s;
  for (std::uint32_t k = 0; k <= plan_.phases.size(); ++k) mark(kStartBarrier + k);
}

const ScenarioRun::Mark& ScenarioRun::mark(std::uint32_t barrier) const {
  const auto found = std::find_if(marks_.begin(), marks_.end(),
                                  [barrier](const Mark& m) { return m.barrier == barrier; });
  if (found == marks_.end()) {
    throw std::runtime_error("scenario " + std::string(to_string(plan_.scenario)) + ": barrier " +
                             std::to_string(barrier) + " never released");
  }
  return *found;
}

nlohmann::json ScenarioRun::result() const {
  const Mark& start = mark(kStartBarrier);
  nlohmann::json phases = nlohmann::json::array();
  nlohmann::json dram = dram_categories(PhaseKind::Gemm, {});
  for (std::size_t k = 0; k < plan_.phases.size(); ++k) {
    const Mark& begin = mark(kStartBarrier + static_cast<std::uint32_t>(k));
    const Mark& end = mark(kStartBarrier + 1 + static_cast<std::uint32_t>(k));
    const TrafficCounters moved = end.counters - begin.counters;
    const nlohmann::json bytes = dram_categories(plan_.phases[k].kind, moved);
    for (const auto& [category, value] : bytes.items()) {
      dram[category] = dram[category].get<std::uint64_t>() + value.get<std::uint64_t>();
    }
    // When each simulated GPU's host finished the phase: the group's phase ends at the last.
    nlohmann::json arrivals = nlohmann::json::array();
    for (const auto& [barrier, time] : arrivals_) {
      if (barrier == end.barrier && time >= begin.time && time <= end.time) {
        arrivals.push_back(ns(time - begin.time));
      }
    }
    phases.push_back({{"name", plan_.phases[k].name},
                      {"start_ns", ns(begin.time - start.time)},
                      {"time_ns", ns(end.time - begin.time)},
                      {"gpu_done_ns", arrivals},
                      {"dram_bytes", bytes},
                      {"link_payload_bytes", moved.link_payload}});
  }
  const Mark& last = mark(kStartBarrier + static_cast<std::uint32_t>(plan_.phases.size()));
  const TrafficCounters moved = last.counters - start.counters;
  std::uint64_t total = 0;
  for (const auto& [category, value] : dram.items()) total += value.get<std::uint64_t>();
  dram["total"] = total;

  nlohmann::json result = {
      {"scenario", to_string(plan_.scenario)},
      {"symmetry", config_.sim.symmetry == Symmetry::Rotational ? "rotational" : "none"},
      {"collective", plan_.nvls     ? "nvls"
                     : plan_.direct ? "direct"
                                    : "ring"},
      {"time_ns", ns(last.time - start.time)},
      {"start_ns", ns(start.time)},  // simulated time at which the sublayer's clock started
      {"exposed_comm_ns", exposed_comm_ns()},
      {"phases", phases},
      {"dram_bytes", dram},
      {"link_bytes", {{"payload", moved.link_payload}, {"wire", moved.link_wire}}},
      {"energy",
       energy_estimate(config_, last.activity - start.activity, ns(last.time - start.time),
                       plan_.gemm.flops_per_gpu() * static_cast<double>(config_.gpus))},
      {"hbm_queue", queue_statistics()},
      {"tracker", tracker_statistics()},
      {"dma", dma_statistics()},
      {"transactions", transactions()},
      {"simulated_ns", ns(sc_core::sc_time_stamp())},
      {"wall_time_s", wall_time_s_},
      {"config", to_json(config_)}};
  result["utilisation"] = utilisation(moved, result["time_ns"].get<double>());
  if (record_statistics_) result["stats"] = statistics_section();
  return result;
}

nlohmann::json ScenarioRun::utilisation(const TrafficCounters& moved, double time_ns) const {
  // Every channel of every GPU, and both directions of every link, over the sublayer's time
  // (the counters are the group's, so are the capacities).
  const auto replicas = static_cast<double>(group_->replicas());
  double channels = 0;
  for (int g = 0; g < group_->gpus(); ++g) {
    channels += static_cast<double>(group_->gpu(g).memory.stats().channel_busy_ns.size());
  }
  const double link_directions = 2.0 * group_->links() * replicas;
  const auto share = [time_ns](double busy, double units) {
    return time_ns > 0 && units > 0 ? busy / (time_ns * units) : 0.0;
  };
  return {{"hbm", share(moved.hbm_busy_ns, channels * replicas)},
          {"hbm_busy_ns", moved.hbm_busy_ns},
          {"link", share(moved.link_busy_ns, link_directions)},
          {"link_busy_ns", moved.link_busy_ns}};
}

nlohmann::json ScenarioRun::statistics_section() const {
  const auto snapshot = [this](std::uint32_t barrier) -> const Statistics& {
    for (const auto& [id, statistics] : snapshots_) {
      if (id == barrier) return statistics;
    }
    throw std::runtime_error("statistics: barrier " + std::to_string(barrier) + " not recorded");
  };
  std::vector<PhaseEnd> phases;
  for (std::size_t k = 0; k < plan_.phases.size(); ++k) {
    phases.emplace_back(plan_.phases[k].name,
                        snapshot(kStartBarrier + 1 + static_cast<std::uint32_t>(k)));
  }
  const Statistics& end = phases.empty() ? snapshot(kStartBarrier) : phases.back().second;
  return stats_section(snapshot(kStartBarrier), end, phases);
}

double ScenarioRun::exposed_comm_ns() const {
  double exposed = 0;
  for (std::size_t k = 0; k < plan_.phases.size(); ++k) {
    const Interval window{ns(mark(kStartBarrier + static_cast<std::uint32_t>(k)).time),
                          ns(mark(kStartBarrier + 1 + static_cast<std::uint32_t>(k)).time)};
    switch (plan_.phases[k].kind) {
      case PhaseKind::Gemm:
        break;
      case PhaseKind::ReduceScatter:
      case PhaseKind::AllGather:  // nothing but the collective runs, setup and launch included
        exposed += window.end - window.begin;
        break;
      case PhaseKind::GemmReduceScatter:
      case PhaseKind::AllGatherGemm:
        exposed += uncovered_communication_ns(window);
        break;
    }
  }
  return exposed;
}

double ScenarioRun::uncovered_communication_ns(Interval window) const {
  double most = 0;
  for (int g = 0; g < group_->gpus(); ++g) {
    const Gpu& gpu = group_->gpu(g);
    std::vector<Interval> compute, communication;
    std::vector<bool> gemm;  // by launch number
    for (const LaunchRecord& launch : gpu.dispatcher.launches()) {
      gemm.resize(std::max<std::size_t>(gemm.size(), launch.launch + 1), false);
      gemm[launch.launch] = launch.kind == dispatcher::kGemm;
      if (launch.kind == dispatcher::kCollective) {
        communication.push_back({ns(launch.doorbell), ns(launch.end)});
      }
    }
    for (const DispatchRecord& wg : gpu.dispatcher.dispatched()) {
      if (gemm.at(wg.launch)) compute.push_back({ns(wg.time), ns(wg.end)});
    }
    for (const DmaTransfer& transfer : gpu.dma.transfers()) {
      communication.push_back({ns(transfer.queued), ns(transfer.end)});
    }
    most = std::max(most, uncovered_ns(std::move(communication), std::move(compute), window));
  }
  return most;
}

nlohmann::json ScenarioRun::queue_statistics() const {
  // Entries waiting in a GPU's controller (all channels), averaged over the run and over GPUs.
  const double elapsed_ns = ns(sc_core::sc_time_stamp());
  nlohmann::json queue;
  for (int c : {kCompute, kComm}) {
    double integral = 0;
    std::uint64_t peak = 0;
    for (int g = 0; g < group_->gpus(); ++g) {
      const HbmStats& memory = group_->gpu(g).memory.stats();
      integral += memory.occupancy_integral_ns[c];
      peak = std::max(peak, memory.max_occupancy[c]);
    }
    const std::string name = c == kCompute ? "compute" : "communication";
    queue["mean_" + name + "_per_gpu"] =
        elapsed_ns > 0 ? integral / elapsed_ns / group_->gpus() : 0.0;
    queue["max_" + name + "_per_channel"] = peak;
  }
  // Bank model: the share of bank accesses that found their row open, over every GPU.
  std::uint64_t hits = 0, opened = 0;
  for (int g = 0; g < group_->gpus(); ++g) {
    const HbmStats& memory = group_->gpu(g).memory.stats();
    hits += memory.row_hits;
    opened += memory.row_hits + memory.row_misses;
  }
  if (opened > 0) queue["row_hit_rate"] = static_cast<double>(hits) / static_cast<double>(opened);
  if (nlohmann::json mca = mca_decisions(*group_); !mca.is_null()) queue["mca"] = std::move(mca);
  return queue;
}

nlohmann::json ScenarioRun::tracker_statistics() const {
  std::uint64_t fired = 0, refused = 0, errors = 0, overcount = 0, peak = 0;
  for (int g = 0; g < group_->gpus(); ++g) {
    const TrackerStats& stats = group_->gpu(g).tracker.stats();
    fired += stats.fired;
    refused += stats.refused;
    errors += stats.errors;
    overcount += stats.overcount;
    peak = std::max(peak, stats.max_in_use);
  }
  const auto n = static_cast<std::uint64_t>(group_->replicas());
  return {{"fired", fired * n},
          {"refused", refused * n},
          {"errors", errors * n},
          {"overcount", overcount * n},
          {"max_in_use", peak}};
}

nlohmann::json ScenarioRun::dma_statistics() const {
  std::uint64_t transfers = 0, read = 0, written = 0, updated = 0, errors = 0, pieces = 0;
  std::uint64_t urgent_reads = 0, urgent_writes = 0;
  sc_core::sc_time buffer_wait, read_latency, write_latency;
  for (int g = 0; g < group_->gpus(); ++g) {
    const DmaStats& stats = group_->gpu(g).dma.stats();
    transfers += stats.transfers;
    read += stats.bytes_read;
    written += stats.bytes_written;
    updated += stats.bytes_updated;
    errors += stats.errors;
    pieces += stats.pieces;
    urgent_reads += stats.urgent_reads;
    urgent_writes += stats.urgent_writes;
    buffer_wait += stats.buffer_wait;
    read_latency += stats.read_latency;
    write_latency += stats.write_latency;
  }
  const auto n = static_cast<std::uint64_t>(group_->replicas());
  const auto ns = [](sc_core::sc_time t, double over) {
    return over > 0 ? t.to_seconds() * 1e9 / over : 0.0;
  };
  // Of the pieces moved, those whose read (write or update) was issued urgent (dma.urgent_fill).
  const auto share = [pieces](std::uint64_t count) {
    return pieces > 0 ? static_cast<double>(count) / static_cast<double>(pieces) : 0.0;
  };
  // Latencies are means over pieces, buffer waits a mean per GPU: the same for a symmetric run.
  return {{"transfers", transfers * n},
          {"bytes_read", read * n},
          {"bytes_written", written * n},
          {"bytes_updated", updated * n},
          {"errors", errors * n},
          {"mean_piece_read_ns", ns(read_latency, static_cast<double>(pieces))},
          {"mean_piece_write_ns", ns(write_latency, static_cast<double>(pieces))},
          {"buffer_wait_ns_per_gpu", ns(buffer_wait, group_->gpus())},
          {"urgent_read_share", share(urgent_reads)},
          {"urgent_write_share", share(urgent_writes)}};
}

nlohmann::json ScenarioRun::transactions() const {
  // Transactions the model simulated end to end: SM requests and DMA pieces (each may fan out
  // into several memory-controller and link requests, counted in the blocks' own statistics).
  std::uint64_t sm = 0, dma = 0;
  for (int g = 0; g < group_->gpus(); ++g) {
    for (int s = 0; s < group_->gpu(g).sms(); ++s) {
      sm += group_->gpu(g).sm(s).stats().reads + group_->gpu(g).sm(s).stats().writes;
    }
    dma += group_->gpu(g).dma.stats().pieces;
  }
  // Simulated, not represented: a symmetric run's one GPU is what it cost.
  return {{"sm", sm}, {"dma", dma}, {"total", sm + dma}};
}

namespace {

double phase_ns(const nlohmann::json& run, const std::string& name) {
  for (const auto& phase : run.at("phases")) {
    if (phase.at("name") == name) return phase.at("time_ns");
  }
  return 0;
}

// A direct reduce-scatter's name by the run it comes from: ideal's own programs pull it on the
// SMs, ideal-rs-nmc's run it on the DMA engines with near-memory updates, ideal-rs-sm-nmc's push
// it from the SMs as near-memory updates.
std::string direct_name(const nlohmann::json& run) {
  const std::string scenario = run.value("scenario", "");
  if (scenario == to_string(Scenario::IdealRsNmc)) return "direct_dma_nmc";
  if (scenario == to_string(Scenario::IdealRsSmNmc)) return "direct_sm_nmc";
  return "direct_sm";
}

}  // namespace

nlohmann::json ideal_result(const nlohmann::json& sequential,
                            const std::vector<nlohmann::json>& direct) {
  // The run whose reduce-scatter is the fastest: its phases and data movement are ideal's.
  const nlohmann::json* fastest = &sequential;
  // Sequential's own reduce-scatter: the SM ring, or NVLS where sequential_uses_nvls holds.
  const std::string sequential_name =
      sequential.value("collective", "ring") == "nvls" ? "nvls" : "ring";
  nlohmann::json choice = {{sequential_name + "_ns", phase_ns(sequential, "reduce_scatter")}};
  for (const nlohmann::json& candidate : direct) {
    if (candidate.is_null()) continue;
    const double time = phase_ns(candidate, "reduce_scatter");
    choice[direct_name(candidate) + "_ns"] = time;
    if (time < phase_ns(*fastest, "reduce_scatter")) fastest = &candidate;
  }
  const bool take_direct = fastest != &sequential;
  choice["used"] = take_direct ? direct_name(*fastest) : sequential_name;
  const nlohmann::json& run = *fastest;
  const double gemm = phase_ns(run, "gemm");
  const double reduce_scatter = phase_ns(run, "reduce_scatter");
  const double all_gather = phase_ns(run, "all_gather");
  const std::string of_run =
      take_direct ? "the run with the " + choice["used"].get<std::string>() + " reduce-scatter"
                  : "the sequential run";
  nlohmann::json ideal = run;
  // Busy shares and block statistics belong to a simulated run's time, not to ideal's.
  ideal.erase("utilisation");
  ideal.erase("stats");
  ideal["scenario"] = to_string(Scenario::Ideal);
  ideal["time_ns"] = std::max(gemm, reduce_scatter) + all_gather;
  // Overlapped perfectly, the reduce-scatter shows only where it outlasts the GEMM.
  ideal["exposed_comm_ns"] = std::max(0.0, reduce_scatter - gemm) + all_gather;
  ideal["phases"] = nlohmann::json::array({{{"name", "gemm_rs"},
                                            {"start_ns", 0.0},
                                            {"time_ns", std::max(gemm, reduce_scatter)},
                                            {"derived", "max(gemm, reduce_scatter) of " + of_run}},
                                           {{"name", "all_gather"},
                                            {"start_ns", std::max(gemm, reduce_scatter)},
                                            {"time_ns", all_gather},
                                            {"derived", "all_gather of " + of_run}}});
  ideal["collective"] = take_direct ? "direct" : sequential.value("collective", "ring");
  ideal["ideal_reduce_scatter"] = choice;
  return ideal;
}

void set_speedup(nlohmann::json& result, const nlohmann::json& sequential) {
  result["speedup_vs_sequential"] =
      sequential.at("time_ns").get<double>() / result.at("time_ns").get<double>();
}

}  // namespace t3
