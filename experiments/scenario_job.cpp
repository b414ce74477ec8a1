#include "experiments/scenario_job.h"

#include <algorithm>
#include <memory>
#include <stdexcept>

#include "experiments/isolated.h"
#include "experiments/scenario_run.h"
#include "harness/scenario_check.h"
#include "harness/trace_recorder.h"
#include "models/system/stall_error.h"
#include "models/system/timeline.h"
#include "models/system/vcd_trace.h"
#include "protocol/to_size.h"
#include "workloads/model_zoo.h"

namespace t3 {

namespace {

GemmShape shape_of(const ScenarioJob& job) {
  return workload_gemm(job.model, job.sublayer, job.shape, static_cast<int>(job.config.gpus),
                       job.config.workload.tokens);
}

void add_workload(nlohmann::json& result, const ScenarioJob& job) {
  const GemmShape shape = shape_of(job);
  result["model"] = job.shape ? kCustom : job.model;
  result["sublayer"] = job.shape ? kCustom : to_string(job.sublayer);
  result["tp"] = job.config.gpus;
  result["tokens"] = job.config.workload.tokens;
  result["system"] = job.config.name;
  result["shape"] = {{"m", shape.m}, {"n", shape.n}, {"k", shape.k}};
}

}  // namespace

nlohmann::json run_scenario_job(const ScenarioJob& job) {
  const ScenarioPlan plan =
      plan_sublayer_scenario(job.config, job.sublayer, shape_of(job), job.scenario);
  // The recorder observes the group built next (ScenarioRun builds it).
  std::unique_ptr<TraceRecorder> recorder;
  if (!job.record.empty()) {
    recorder = std::make_unique<TraceRecorder>(job.record, job.record_gpu, job.config);
  }
  ScenarioRun run(job.config, plan);
  if (job.stats) run.record_statistics();
  std::unique_ptr<Timeline> timeline;
  if (!job.trace.empty()) timeline = std::make_unique<Timeline>(run.group());
  std::unique_ptr<VcdTrace> vcd;
  if (!job.vcd.empty()) vcd = std::make_unique<VcdTrace>("vcd", run.group(), job.vcd);
  std::unique_ptr<ScenarioCheck> check;
  if (job.config.sim.mode == SimMode::Functional) {
    sc_core::sc_start(sc_core::SC_ZERO_TIME);  // elaborate, so operands can be loaded
    check = std::make_unique<ScenarioCheck>(run.group(), plan, job.config.sim.seed);
  }
  run.run();
  if (recorder) recorder->close();
  nlohmann::json result = run.result();
  add_workload(result, job);
  if (timeline) {
    for (const auto& phase : result["phases"]) {
      const double start = result["start_ns"].get<double>() + phase["start_ns"].get<double>();
      timeline->add_phase(phase["name"], sc_core::sc_time(start, sc_core::SC_NS),
                          sc_core::sc_time(start + phase["time_ns"].get<double>(), sc_core::SC_NS));
    }
    timeline->write(job.trace);
  }
  if (check) {
    for (const std::string& error :
         {check->check_reduce_scattered(), check->check_all_gathered()}) {
      if (!error.empty()) {
        throw std::runtime_error(std::string("functional check failed, scenario ") +
                                 to_string(job.scenario) + ": " + error);
      }
    }
    result["functional_check"] = "passed";
  }
  return result;
}

void check_plannable(const ScenarioJob& job, const std::vector<Scenario>& scenarios) {
  if (job.config.gpus < 2) {
    throw ConfigError(describe(job) + ": a sublayer needs a TP group of at least 2 GPUs");
  }
  try {
    if (job.shape) check_fits(job.config, *job.shape);
    for (Scenario scenario : scenarios) {
      plan_sublayer_scenario(job.config, job.sublayer, shape_of(job), scenario);
    }
  } catch (const std::invalid_argument& error) {
    throw ConfigError(describe(job) + ": " + error.what());
  }
}

std::string describe(const ScenarioJob& job) {
  const std::string workload = job.shape ? std::string(kCustom) + " " + shape_text(*job.shape)
                                         : job.model + " " + to_string(job.sublayer);
  return workload + " TP " + std::to_string(job.config.gpus) + ", " +
         std::to_string(job.config.workload.tokens) + " tokens";
}

namespace {

// The scenarios simulated for `point`: sequential first (every speedup needs it), then each other
// scenario once; ideal is derived, and where ideal_simulated() its own programs (the SM direct
// reduce-scatter), ideal-rs-nmc (the DMA one) and ideal-rs-sm-nmc (the SM push with near-memory
// updates) are simulated for it too.
std::vector<Scenario> simulated_for(const ScenarioJob& point,
                                    const std::vector<Scenario>& scenarios) {
  std::vector<Scenario> wanted = scenarios;
  const bool ideal =
      std::find(scenarios.begin(), scenarios.end(), Scenario::Ideal) != scenarios.end();
  // Ideal's direct reduce-scatters: its own programs' on the SMs, ideal-rs-nmc's on the DMA
  // engines, ideal-rs-sm-nmc's pushed by the SMs.
  if (ideal && ideal_simulated(point.config)) {
    wanted.insert(wanted.end(), {Scenario::IdealRsNmc, Scenario::IdealRsSmNmc});
  }
  std::vector<Scenario> simulated = {Scenario::Sequential};
  for (Scenario scenario : wanted) {
    const bool derived = scenario == Scenario::Ideal && !ideal_simulated(point.config);
    if (!derived && std::find(simulated.begin(), simulated.end(), scenario) == simulated.end()) {
      simulated.push_back(scenario);
    }
  }
  return simulated;
}

}  // namespace

std::vector<std::vector<nlohmann::json>> run_scenarios(const std::vector<ScenarioJob>& points,
                                                       const std::vector<Scenario>& scenarios,
                                                       int jobs, const Progress& progress,
                                                       const PointDone& point_done) {
  std::vector<std::vector<Scenario>> simulated;
  std::vector<std::size_t> first_run;  // point p's runs are [first_run[p], + simulated[p].size())
  for (const ScenarioJob& point : points) {
    simulated.push_back(simulated_for(point, scenarios));
    check_plannable(point, simulated.back());
  }
  std::vector<IsolatedJob> work;
  std::vector<double> costs;          // simulated work grows with the group's GEMM flops
  std::vector<std::size_t> point_of;  // by job
  for (std::size_t p = 0; p < points.size(); ++p) {
    const ScenarioJob& point = points[p];
    const GemmShape shape = shape_of(point);
    const double cost = static_cast<double>(point.config.gpus) * static_cast<double>(shape.m) *
                        static_cast<double>(shape.n) * static_cast<double>(shape.k);
    first_run.push_back(work.size());
    for (Scenario scenario : simulated[p]) {
      ScenarioJob job = point;
      job.scenario = scenario;
      // Only the scenarios asked for write timelines; ideal's is the sequential run's.
      const auto asked = [&](Scenario s) {
        return std::find(scenarios.begin(), scenarios.end(), s) != scenarios.end();
      };
      if (scenario == Scenario::Ideal ||
          (!asked(scenario) && !(scenario == Scenario::Sequential && asked(Scenario::Ideal)))) {
        job.trace.clear();
        job.vcd.clear();
        job.record.clear();
      }
      work.push_back([job] { return run_scenario_job(job); });
      costs.push_back(cost);
      point_of.push_back(p);
    }
  }
  const auto runs_of = [&](std::size_t p, const std::vector<nlohmann::json>& runs) {
    const auto first = runs.begin() + static_cast<std::ptrdiff_t>(first_run[p]);
    return std::vector<nlohmann::json>(first,
                                       first + static_cast<std::ptrdiff_t>(simulated[p].size()));
  };
  // Point p's runs, sequential first.
  const auto assemble = [&](std::size_t p, const std::vector<nlohmann::json>& runs) {
    const std::vector<nlohmann::json> own = runs_of(p, runs);
    const auto run_of = [&](Scenario scenario) -> nlohmann::json {
      const auto index = std::find(simulated[p].begin(), simulated[p].end(), scenario);
      if (index == simulated[p].end()) return nullptr;
      return own[to_size(index - simulated[p].begin())];
    };
    // Ideal's direct reduce-scatters, where the system runs them (elsewhere ideal-rs-nmc, if
    // asked for, runs the DMA ring, which is no direct candidate).
    const auto ideal_direct_runs = [&](std::size_t point) -> std::vector<nlohmann::json> {
      if (!ideal_simulated(points[point].config)) return {};
      return {run_of(Scenario::Ideal), run_of(Scenario::IdealRsNmc),
              run_of(Scenario::IdealRsSmNmc)};
    };
    std::vector<nlohmann::json> point;
    for (Scenario scenario : scenarios) {
      nlohmann::json result = scenario == Scenario::Ideal
                                  ? ideal_result(own.front(), ideal_direct_runs(p))
                                  : run_of(scenario);
      set_speedup(result, own.front());
      point.push_back(std::move(result));
    }
    return point;
  };
  // Each point is assembled once, when its last run arrives without an error among its runs.
  std::vector<std::vector<nlohmann::json>> results(points.size());
  std::vector<nlohmann::json> arrived(work.size());
  std::vector<std::size_t> pending;
  for (const auto& list : simulated) pending.push_back(list.size());
  const Finished finished = [&](std::size_t job, const nlohmann::json& run) {
    const std::size_t p = point_of[job];
    arrived[job] = run;
    if (--pending[p] > 0) return;
    const std::vector<nlohmann::json> own = runs_of(p, arrived);
    if (std::any_of(own.begin(), own.end(),
                    [](const nlohmann::json& r) { return r.contains("error"); })) {
      return;  // thrown below, in point order
    }
    results[p] = assemble(p, arrived);
    if (point_done) point_done(p, results[p]);
  };
  const std::vector<nlohmann::json> runs = run_isolated(work, jobs, progress, costs, finished);
  for (std::size_t p = 0; p < points.size(); ++p) {
    for (const nlohmann::json& run : runs_of(p, runs)) {
      if (run.contains("error")) {
        const std::string what = describe(points[p]) + ": " + run["error"].get<std::string>();
        if (run.value("stall", false)) throw StallError(what);
        throw std::runtime_error(what);
      }
    }
  }
  return results;
}

}  // namespace t3
