// What the scenario suites share: one scenario on a configured group, with, in functional mode,
// the golden check (ScenarioCheck) loading seeded operands first and its verdicts in the result.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

#include <nlohmann/json.hpp>
#include <systemc>

#include "config/system_config.h"
#include "experiments/scenario_run.h"
#include "harness/scenario_check.h"
#include "models/system/tp_group.h"
#include "workloads/scenario.h"

namespace t3::scenario_testing {

// Runs `plan` on `config` and returns the result document; in functional mode it also holds
// "reduce_scatter_check" and "all_gather_check" (empty when every GPU's data was exact).
// `inspect`, if given, reads what a suite needs from the finished group into the result.
inline nlohmann::json run_golden_scenario(
    const SystemConfig& config, const ScenarioPlan& plan, std::uint64_t seed,
    const std::function<void(TpGroup&, nlohmann::json&)>& inspect = {}) {
  ScenarioRun run(config, plan);
  std::unique_ptr<ScenarioCheck> check;
  if (config.sim.mode == SimMode::Functional) {
    sc_core::sc_start(sc_core::SC_ZERO_TIME);  // elaborate, so the operands can be loaded
    check = std::make_unique<ScenarioCheck>(run.group(), plan, seed);
  }
  run.run();
  nlohmann::json result = run.result();
  if (check) {
    result["reduce_scatter_check"] = check->check_reduce_scattered();
    result["all_gather_check"] = check->check_all_gathered();
  }
  if (inspect) inspect(run.group(), result);
  return result;
}

}  // namespace t3::scenario_testing
