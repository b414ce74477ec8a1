#include "workloads/scenario.h"

#include <algorithm>
#include <optional>
#include <stdexcept>

#include "config/config_io.h"
#include "config/suggestion.h"
#include "workloads/scenarios/common.h"
#include "workloads/scenarios/planners.h"

namespace t3 {

namespace {

// One row per scenario, in the order known_scenarios() lists them. Adding a scenario is its enum
// value, a row here and its planner's file in workloads/scenarios/.
struct ScenarioEntry {
  Scenario scenario;
  const char* name;
  bool paper;  // one of the paper's five configurations (all_scenarios)
  // Its plan on a sublayer that reduce-scatters its output, and on one that all-gathers its input;
  // null where the scenario does not apply.
  ReducedOutputPlanner reduced_output;
  GatheredInputPlanner gathered_input;
  std::optional<Arbitration> arbitration;  // the hbm.arbitration it runs under, if it forces one
  // Whether its programs are rotations of GPU 0's on a configuration; null: always.
  bool (*rotation_invariant)(const SystemConfig& config);
};

// clang-format off
constexpr ScenarioEntry kScenarioTable[] = {
    // scenario             name            paper  reduced output     gathered input
    //                      arbitration         rotation invariant
    {Scenario::Sequential,  "sequential",   true,  plan_sequential,   plan_sequential_gathered,
                            {},                 nullptr},
    {Scenario::T3,          "t3",           true,  plan_t3,           nullptr,
                            Arbitration::Fcfs,  nullptr},
    {Scenario::T3Mca,       "t3-mca",       true,  plan_t3,           nullptr,
                            Arbitration::Mca,   nullptr},
    // ideal: experiments/ combines the measured phase times of the sequential run and, where
    // ideal_simulated(), of its own run with the direct reduce-scatter.
    {Scenario::Ideal,       "ideal",        true,  plan_ideal,        nullptr,
                            {},                 nullptr},
    {Scenario::IdealRsNmc,  "ideal-rs-nmc", true,  plan_ideal_rs_nmc, nullptr,
                            {},                 nullptr},
    {Scenario::Slicing,     "slicing",      false, plan_slicing,      nullptr,
                            {},                 nullptr},
    {Scenario::CommFuse,    "commfuse",     false, plan_commfuse,     nullptr,
                            {},                 commfuse_rotation_invariant},
    {Scenario::CommFuseAg,  "commfuse-ag",  false, nullptr,           plan_commfuse_ag,
                            {},                 nullptr},
    {Scenario::T3Switch,    "t3-switch",    false, plan_t3_switch,    nullptr,
                            {},                 t3_switch_rotation_invariant},
    // ideal-rs-sm-nmc: one of ideal's candidates where ideal_simulated().
    {Scenario::IdealRsSmNmc, "ideal-rs-sm-nmc", false, plan_ideal_rs_sm_nmc, nullptr,
                            {},                 nullptr},
};
// clang-format on

const ScenarioEntry& entry_of(Scenario scenario) {
  for (const ScenarioEntry& entry : kScenarioTable) {
    if (entry.scenario == scenario) return entry;
  }
  throw std::logic_error("scenario " + std::to_string(static_cast<int>(scenario)) +
                         ": not in the scenario table");
}

// The names of the scenarios that apply to a sublayer that all-gathers its input.
std::string gathered_input_names() {
  std::string names;
  for (const ScenarioEntry& entry : kScenarioTable) {
    if (entry.gathered_input) names += (names.empty() ? "" : ", ") + std::string(entry.name);
  }
  return names;
}

}  // namespace

std::vector<Scenario> all_scenarios() {
  std::vector<Scenario> paper;
  for (const ScenarioEntry& entry : kScenarioTable) {
    if (entry.paper) paper.push_back(entry.scenario);
  }
  return paper;
}

bool rotation_invariant(const SystemConfig& config, Scenario scenario) {
  const ScenarioEntry& entry = entry_of(scenario);
  return !entry.rotation_invariant || entry.rotation_invariant(config);
}

std::vector<Scenario> known_scenarios() {
  std::vector<Scenario> all;
  for (const ScenarioEntry& entry : kScenarioTable) all.push_back(entry.scenario);
  return all;
}

const char* to_string(Scenario scenario) {
  return entry_of(scenario).name;
}

Scenario parse_scenario(const std::string& name) {
  std::string names;
  std::vector<std::string> list;
  for (Scenario scenario : known_scenarios()) {
    if (name == to_string(scenario)) return scenario;
    names += (names.empty() ? "" : ", ") + std::string(to_string(scenario));
    list.emplace_back(to_string(scenario));
  }
  throw ConfigError("scenario '" + name + "': unknown" + did_you_mean(name, list) +
                    " (choices: " + names + ")");
}

const char* to_string(PhaseKind kind) {
  switch (kind) {
    case PhaseKind::Gemm:
      return "gemm";
    case PhaseKind::GemmReduceScatter:
      return "gemm_rs";
    case PhaseKind::ReduceScatter:
      return "reduce_scatter";
    case PhaseKind::AllGather:
      return "all_gather";
    case PhaseKind::AllGatherGemm:
      break;
  }
  return "ag_gemm";
}

SystemConfig scenario_config(const SystemConfig& config, Scenario scenario) {
  SystemConfig effective = config;
  const std::optional<Arbitration>& forced = entry_of(scenario).arbitration;
  if (forced) effective.hbm.arbitration = *forced;
  return effective;
}

bool ideal_simulated(const SystemConfig& config) {
  return direct_collective(config) && config.topology.kind != TopologyKind::Ring;
}

bool sequential_uses_nvls(const SystemConfig& config) {
  // An NVLS reduce-scatter sends every chunk out of every GPU's port, the owner's own included,
  // n / (n - 1) of a ring's bytes: at 4 GPUs (4/3) the ring was faster in every measurement of
  // docs/t3.md, at 8 (8/7) NVLS was.
  constexpr std::int64_t kNvlsFromGpus = 8;
  return config.topology.kind == TopologyKind::Switch && config.topology.switch_reductions &&
         direct_collective(config) && config.gpus >= kNvlsFromGpus;
}

int default_ring_channels(const SystemConfig& config) {
  constexpr std::int64_t kSwitchChannels = 24;  // NCCL on 8-GPU NVSwitch machines
  constexpr std::int64_t kLinkChannels = 16;    // point-to-point links: no published figure
  const std::int64_t channels =
      config.topology.kind == TopologyKind::Switch ? kSwitchChannels : kLinkChannels;
  return static_cast<int>(std::min(config.sm.count * config.sm.occupancy, channels));
}

ScenarioPlan plan_scenario(const SystemConfig& config, const GemmShape& shape, Scenario scenario,
                           ElementType element, ElementType out_element) {
  if (config.gpus < 2) {
    throw std::invalid_argument("scenario " + std::string(to_string(scenario)) +
                                ": needs at least 2 GPUs, has " + std::to_string(config.gpus));
  }
  require_equal_chunks(config, shape);
  ScenarioPlan plan;
  plan.scenario = scenario;
  plan.gemm = plan_group_gemm(config, shape, element, out_element);
  plan.output_bytes = plan.gemm.gpus.front().buffers.c_bytes;
  const ScenarioEntry& entry = entry_of(scenario);
  if (!entry.reduced_output) {
    throw std::invalid_argument(
        "scenario " + std::string(entry.name) +
        " overlaps an all-gather of the GEMM's input: it needs a sublayer that gathers its input "
        "(fc1-ag)");
  }
  entry.reduced_output(config, shape, plan, element, out_element);
  if (plan.bands.empty()) plan.bands = {whole_output(plan)};
  return plan;
}

bool applies_to(Scenario scenario, Sublayer sublayer) {
  const ScenarioEntry& entry = entry_of(scenario);
  return gathers_input(sublayer) ? entry.gathered_input != nullptr
                                 : entry.reduced_output != nullptr;
}

ScenarioPlan plan_sublayer_scenario(const SystemConfig& config, Sublayer sublayer,
                                    const GemmShape& shape, Scenario scenario) {
  const std::string named =
      "scenario " + std::string(to_string(scenario)) + ": sublayer " + to_string(sublayer);
  if (!applies_to(scenario, sublayer)) {
    if (gathers_input(sublayer)) {
      throw std::invalid_argument(named +
                                  " all-gathers its GEMM's input and reduces nothing (its "
                                  "scenarios: " +
                                  gathered_input_names() + ")");
    }
    throw std::invalid_argument(named + " reduce-scatters its GEMM's output; " +
                                to_string(scenario) +
                                " overlaps an all-gather of the input (sublayer fc1-ag)");
  }
  if (!gathers_input(sublayer)) return plan_scenario(config, shape, scenario);
  if (config.gpus < 2) {
    throw std::invalid_argument(named + ": needs at least 2 GPUs, has " +
                                std::to_string(config.gpus));
  }
  // A's row bands are the ring's chunks: whole tile rows, one equal band per GPU.
  require_equal_chunks(config, shape);
  ScenarioPlan plan;
  plan.scenario = scenario;
  plan.gathers_input = true;
  plan.gemm = plan_group_gemm(config, shape, ElementType::Fp16, ElementType::Fp16);
  plan.output_bytes = plan.gemm.gpus.front().buffers.c_bytes;
  entry_of(scenario).gathered_input(config, plan, ElementType::Fp16);
  plan.bands = {whole_output(plan)};
  return plan;
}

}  // namespace t3
