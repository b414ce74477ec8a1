// One sublayer under one scenario as a job of the command line: plan it, simulate it (in the
// calling process, which must not have elaborated a design yet), optionally check its data and
// write its timeline, and return the result document.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/system_config.h"
#include "experiments/isolated.h"
#include "workloads/scenario.h"
#include "workloads/sublayer.h"

namespace t3 {

struct ScenarioJob {
  SystemConfig config;  // gpus = TP degree, workload.tokens set; sim.mode decides the data check
  std::string model;    // kCustom for a custom shape
  Sublayer sublayer = Sublayer::Fc2;
  // A custom per-GPU GEMM (sublayer.h, kCustom) run in place of the model's sublayer: model is
  // kCustom and sublayer fc2, whose scenarios it takes.
  std::optional<GemmShape> shape;
  Scenario scenario = Scenario::Sequential;
  std::string trace;  // Chrome trace-event file to write, if not empty
  std::string vcd;    // VCD file to write, if not empty
  // STL trace of the HBM traffic GPU record_gpu's memory controller receives, if not empty
  // (harness/trace_recorder.h).
  std::string record;
  int record_gpu = 0;
  // Add "stats": every block's statistics at the phase barriers (stats_dump.h), for --stats.
  bool stats = false;
};

// The result document of one simulated scenario (not ideal, which is derived): the run's own
// fields (scenario_run.h) plus the workload. In functional mode it loads seeded integer-valued
// operands and adds "functional_check": "passed", or throws naming the first wrong element.
nlohmann::json run_scenario_job(const ScenarioJob& job);

// Every scenario of `scenarios` for each workload of `points`, each simulation in a process of its
// own (at most `jobs` at once, across all points), each point's sequential run done once and
// shared, ideal derived from it, each result with speedup_vs_sequential. Results per point in the
// order asked; a failed run throws its error, naming the workload. `point_done` gets each
// workload's results as soon as its last simulation has finished without error (so a caller can
// keep them should the rest be interrupted).
using PointDone = std::function<void(std::size_t point, const std::vector<nlohmann::json>&)>;
std::vector<std::vector<nlohmann::json>> run_scenarios(const std::vector<ScenarioJob>& points,
                                                       const std::vector<Scenario>& scenarios,
                                                       int jobs, const Progress& progress = {},
                                                       const PointDone& point_done = {});

// Throws ConfigError naming the workload if any of `scenarios` cannot be planned for it (a group
// of one, tokens that do not split into chunks): a bad point is refused before any simulation.
void check_plannable(const ScenarioJob& job, const std::vector<Scenario>& scenarios);

// "t-nlg fc2 TP 8, 8192 tokens" (a custom shape: "custom 8192x4256x2128 TP 8, 8192 tokens"): how
// errors and progress name a workload.
std::string describe(const ScenarioJob& job);

}  // namespace t3
