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

std::vector<std::vector<nlohmann::json>> run_scenarios(const std::vector<ScenarioJob>& points,
                                                       const std::vector<Scenario>& scenarios,
                                                       int jobs, const Progress& progress,
                                                       const PointDone& point_done) {
  // Simulated per point: sequential first (every speedup needs it), then each other scenario
  // once; ideal is derived.
  std::vector<Scenario> simulated = {Scenario::Sequential};
  for (Scenario scenario : scenarios) {
    if (scenario != Scenario::Ideal &&
        std::find(simulated.begin(), simulated.end(), scenario) == simulated.end()) {
      simulated.push_back(scenario);
    }
  }
  for (const ScenarioJob& point : points) check_plannable(point, simulated);
  std::vector<IsolatedJob> work;
  std::vector<double> costs;  // simulated work grows with the group's GEMM flops
  for (const ScenarioJob& point : points) {
    const GemmShape shape = shape_of(point);
    const double cost = static_cast<double>(point.config.gpus) * static_cast<double>(shape.m) *
                        static_cast<double>(shape.n) * static_cast<double>(shape.k);
    for (Scenario scenario : simulated) {
      ScenarioJob job = point;
      job.scenario = scenario;
      // Only the scenarios asked for write timelines; ideal's is the sequential run's.
      const auto asked = [&](Scenario s) {
        return std::find(scenarios.begin(), scenarios.end(), s) != scenarios.end();
      };
      if (!asked(scenario) && !(scenario == Scenario::Sequential && asked(Scenario::Ideal))) {
        job.trace.clear();
        job.vcd.clear();
        job.record.clear();
      }
      work.push_back([job] { return run_scenario_job(job); });
      costs.push_back(cost);
    }
  }
  // Point p's runs are runs[p * simulated.size(), ...), sequential first.
  const auto assemble = [&](std::size_t p, const std::vector<nlohmann::json>& runs) {
    const auto first = runs.begin() + static_cast<std::ptrdiff_t>(p * simulated.size());
    std::vector<nlohmann::json> point;
    for (Scenario scenario : scenarios) {
      const auto index =
          std::find(simulated.begin(), simulated.end(), scenario) - simulated.begin();
      nlohmann::json result = scenario == Scenario::Ideal ? ideal_result(*first) : first[index];
      set_speedup(result, *first);
      point.push_back(std::move(result));
    }
    return point;
  };
  // Each point is assembled once, when its last run arrives without an error among its runs.
  std::vector<std::vector<nlohmann::json>> results(points.size());
  std::vector<nlohmann::json> arrived(work.size());
  std::vector<std::size_t> pending(points.size(), simulated.size());
  const Finished finished = [&](std::size_t job, const nlohmann::json& run) {
    const std::size_t p = job / simulated.size();
    arrived[job] = run;
    if (--pending[p] > 0) return;
    const auto first = arrived.begin() + static_cast<std::ptrdiff_t>(p * simulated.size());
    if (std::any_of(first, first + static_cast<std::ptrdiff_t>(simulated.size()),
                    [](const nlohmann::json& r) { return r.contains("error"); })) {
      return;  // thrown below, in point order
    }
    results[p] = assemble(p, arrived);
    if (point_done) point_done(p, results[p]);
  };
  const std::vector<nlohmann::json> runs = run_isolated(work, jobs, progress, costs, finished);
  for (std::size_t p = 0; p < points.size(); ++p) {
    const auto first = runs.begin() + static_cast<std::ptrdiff_t>(p * simulated.size());
    for (auto run = first; run != first + static_cast<std::ptrdiff_t>(simulated.size()); ++run) {
      if (run->contains("error")) {
        const std::string what = describe(points[p]) + ": " + (*run)["error"].get<std::string>();
        if (run->value("stall", false)) throw StallError(what);
        throw std::runtime_error(what);
      }
    }
  }
  return results;
}

}  // namespace t3
