// t3sim sweep: a suite of sublayer runs, run here in parallel processes, or written out as one
// shell command per workload for GNU parallel or a Slurm job array and collected afterwards.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>

#include "apps/cli.h"
#include "config/config_io.h"
#include "config/dram_timing.h"
#include "experiments/model_run.h"
#include "experiments/model_sweep.h"
#include "experiments/scenario_job.h"
#include "experiments/sweep.h"

namespace t3::cli {

namespace {

po::options_description sweep_options() {
  po::options_description options("Sweep");
  options.add_options()("suite", po::value<std::string>()->default_value("paper"),
                        "'paper' (the T3 paper's evaluation), 'e2e' (its models end to end, "
                        "t3sim model) or a suite JSON file")(
      "out", po::value<std::string>(), "directory for results.json, results.csv, summary.md")(
      "jobs", po::value<int>()->default_value(default_jobs()),
      "simulations run at once, each in its own process")(
      "emit-jobs", po::value<std::string>(),
      "write one shell command per workload to this file instead of running (not with --suite "
      "e2e)")("collect",
              "read the results the emitted commands wrote under --out and summarise them (not "
              "with --suite e2e)")(
      "allow-missing",
      "with --collect: summarise the workloads whose results exist and list the missing ones "
      "(a partial sweep) instead of failing")(
      "resume",
      "keep the workloads whose results are already under --out (points/) and run, or with "
      "--emit-jobs write commands for, only the others (not with --suite e2e)")(
      "full",
      "simulate every GPU (sim.symmetry = none); by default a sweep simulates one GPU under "
      "rotational symmetry wherever that is valid (timing mode)");
  return options;
}

std::string quoted(const std::string& word) {
  std::string text = "'";
  for (char c : word) text += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return text + "'";
}

std::string self_path() {
  std::error_code error;
  const auto path = std::filesystem::read_symlink("/proc/self/exe", error);
  return error ? "t3sim" : path.string();
}

// A preset name stays a name; a file becomes absolute, so emitted commands run from anywhere.
std::string system_argument(const std::string& system) {
  if (!std::filesystem::exists(system)) return system;
  return std::filesystem::absolute(system).string();
}

std::vector<std::string> base_sets(const po::variables_map& values) {
  return values.count("set") ? values["set"].as<std::vector<std::string>>()
                             : std::vector<std::string>{};
}

bool names_symmetry(const std::string& set) {
  return set.rfind("sim.symmetry=", 0) == 0;
}

ScenarioJob point_job(const po::variables_map& values, const SweepPoint& point,
                      const std::vector<Scenario>& scenarios) {
  ScenarioJob job;
  job.config = load_system(values["system"].as<std::string>());
  const std::vector<std::string> sets = base_sets(values);
  for (const auto& set : sets) apply_override(job.config, set);
  apply_override(job.config, "gpus=" + std::to_string(point.tp));
  if (point.tokens > 0)
    apply_override(job.config, "workload.tokens=" + std::to_string(point.tokens));
  for (const auto& set : point.sets) apply_override(job.config, set);
  // One GPU stands for the group wherever rotational symmetry matches an every-GPU run and every
  // scenario's programs rotate, unless --full or the suite chose for itself.
  const bool chosen = std::any_of(sets.begin(), sets.end(), names_symmetry) ||
                      std::any_of(point.sets.begin(), point.sets.end(), names_symmetry);
  const bool rotate = std::all_of(scenarios.begin(), scenarios.end(), [&](Scenario scenario) {
    return rotation_invariant(job.config, scenario);
  });
  if (!values.count("full") && !chosen && rotate &&
      rotational_symmetry_refusal(job.config).empty()) {
    job.config.sim.symmetry = Symmetry::Rotational;
  }
  validate(job.config);
  job.model = point.model;
  job.shape = point.shape;
  // A custom shape takes fc2's scenarios: it reduces its output like a row-parallel sublayer.
  job.sublayer = point.shape ? Sublayer::Fc2 : parse_sublayer(point.sublayer);
  return job;
}

// The DRAM-timing peak warning the single-run commands print (cli.cpp, system_from), once per
// sweep: each distinct warning of the sweep's systems once, not once per workload.
void warn_capped_peaks(const std::vector<const SystemConfig*>& systems) {
  std::vector<std::string> printed;
  for (const SystemConfig* config : systems) {
    const std::string capped = dram_peak_warning(config->hbm);
    if (capped.empty() || std::find(printed.begin(), printed.end(), capped) != printed.end()) {
      continue;
    }
    std::fprintf(stderr, "t3sim: warning: %s\n", capped.c_str());
    printed.push_back(capped);
  }
}

std::string point_file(const std::string& out, std::size_t index) {
  char name[32];
  std::snprintf(name, sizeof name, "point-%04zu.json", index);
  return out + "/points/" + name;
}

// Point p's results under `out`, if its file exists; throws if the file holds something else.
std::optional<std::vector<nlohmann::json>> read_point(const Suite& suite, const std::string& out,
                                                      std::size_t p) {
  const std::string path = point_file(out, p);
  std::ifstream file(path);
  if (!file) return std::nullopt;
  const nlohmann::json point = nlohmann::json::parse(file);
  if (!point.is_array() || point.size() != suite.scenarios.size()) {
    throw std::runtime_error("sweep: '" + path + "' does not hold " +
                             std::to_string(suite.scenarios.size()) + " scenario results");
  }
  // Results of another suite (a reused --out) are refused, not mixed in.
  const SweepPoint& expected = suite.points[p];
  for (const nlohmann::json& result : point) {
    if (result.value("model", "") != expected.model ||
        result.value("sublayer", "") != expected.sublayer || result.value("tp", 0) != expected.tp ||
        (expected.tokens > 0 && result.value("tokens", std::int64_t{0}) != expected.tokens) ||
        (expected.shape &&
         result.value("shape", nlohmann::json()) != nlohmann::json{{"m", expected.shape->m},
                                                                   {"n", expected.shape->n},
                                                                   {"k", expected.shape->k}})) {
      throw std::runtime_error("sweep: '" + path + "' holds results of another workload than " +
                               expected.model + " " + expected.sublayer + " TP " +
                               std::to_string(expected.tp) +
                               " (another suite's results? use a new --out)");
    }
  }
  return point.get<std::vector<nlohmann::json>>();
}

// Written whole or not at all: an interrupted sweep leaves no half-written point behind.
void write_point(const std::string& out, std::size_t p, const std::vector<nlohmann::json>& point) {
  const std::string path = point_file(out, p), partial = path + ".partial";
  {
    std::ofstream file(partial);
    file << nlohmann::json(point).dump(1) << "\n";
    if (!file) throw std::runtime_error("cannot write '" + partial + "'");
  }
  std::filesystem::rename(partial, path);
}

void emit_jobs(const po::variables_map& values, const Suite& suite,
               const std::vector<ScenarioJob>& jobs, const std::string& out,
               const std::string& path, bool resume) {
  std::ofstream file(path);
  if (!file) throw UsageError("--emit-jobs " + path + ": cannot write");
  std::filesystem::create_directories(out + "/points");
  std::string scenarios;
  for (Scenario s : suite.scenarios)
    scenarios += (scenarios.empty() ? "" : ",") + std::string(to_string(s));
  std::size_t emitted = 0;
  for (std::size_t p = 0; p < suite.points.size(); ++p) {
    if (resume && read_point(suite, out, p)) continue;
    ++emitted;
    const SweepPoint& point = suite.points[p];
    file << quoted(self_path()) << " compare --jobs 1 --system "
         << quoted(system_argument(values["system"].as<std::string>()));
    if (point.shape) {  // its M is its tokens
      const GemmShape& shape = *point.shape;
      file << " --shape " << shape.m << "," << shape.n << "," << shape.k << " --tp " << point.tp;
    } else {
      file << " --model " << quoted(point.model) << " --sublayer " << quoted(point.sublayer)
           << " --tp " << point.tp;
      if (point.tokens > 0) file << " --tokens " << point.tokens;
    }
    for (const auto& set : base_sets(values)) file << " --set " << quoted(set);
    for (const auto& set : point.sets) file << " --set " << quoted(set);
    if (jobs[p].config.sim.symmetry == Symmetry::Rotational)
      file << " --set sim.symmetry=rotational";
    file << " --scenarios " << scenarios << " --json " << quoted(point_file(out, p)) << "\n";
  }
  std::printf(
      "t3sim sweep: wrote %zu commands to %s; run them (e.g. parallel < %s), then\n"
      "  t3sim sweep --suite %s --out %s --collect\n",
      emitted, path.c_str(), path.c_str(), values["suite"].as<std::string>().c_str(), out.c_str());
}

// Reads each point's results; a missing one fails, or with `allow_missing` leaves the suite
// (named in `missing`).
std::vector<std::vector<nlohmann::json>> collect(Suite& suite, const std::string& out,
                                                 bool allow_missing,
                                                 std::vector<std::string>& missing) {
  std::vector<std::vector<nlohmann::json>> results;
  std::vector<SweepPoint> present;
  for (std::size_t p = 0; p < suite.points.size(); ++p) {
    auto point = read_point(suite, out, p);
    if (!point && allow_missing) {
      missing.push_back(point_file(out, p));
      continue;
    }
    if (!point) {
      throw std::runtime_error("sweep --collect: '" + point_file(out, p) +
                               "' is missing (run its job)");
    }
    results.push_back(std::move(*point));
    present.push_back(suite.points[p]);
  }
  if (results.empty()) throw std::runtime_error("sweep --collect: no workload has results yet");
  suite.points = std::move(present);
  return results;
}

// Runs the suite's workloads here (with `resume`, only those without results under `out`),
// writing each workload's results to its point file as soon as they are complete.
std::vector<std::vector<nlohmann::json>> run_here(const Suite& suite,
                                                  const std::vector<ScenarioJob>& jobs,
                                                  const std::string& out, int parallel,
                                                  bool resume) {
  std::vector<std::vector<nlohmann::json>> results(suite.points.size());
  std::vector<std::size_t> to_run;  // suite positions
  for (std::size_t p = 0; p < suite.points.size(); ++p) {
    auto kept = resume ? read_point(suite, out, p) : std::nullopt;
    if (kept) {
      results[p] = std::move(*kept);
    } else {
      to_run.push_back(p);
    }
  }
  if (resume) {
    std::fprintf(stderr, "t3sim sweep: %zu of %zu workloads have results already; running %zu\n",
                 suite.points.size() - to_run.size(), suite.points.size(), to_run.size());
  }
  if (to_run.empty()) return results;
  std::vector<ScenarioJob> run_jobs;
  for (std::size_t p : to_run) run_jobs.push_back(jobs[p]);
  std::filesystem::create_directories(out + "/points");
  const auto ran = run_scenarios(run_jobs, suite.scenarios, parallel, progress_bar(),
                                 [&](std::size_t k, const std::vector<nlohmann::json>& point) {
                                   write_point(out, to_run[k], point);
                                 });
  for (std::size_t k = 0; k < to_run.size(); ++k) results[to_run[k]] = ran[k];
  return results;
}

// The e2e suite: whole-model runs, all simulations in one pool (kernels shared between points
// simulated once), summarised when all are done.
int model_sweep(const po::variables_map& values, const std::string& out) {
  for (const char* option : {"emit-jobs", "collect", "resume", "allow-missing"}) {
    if (values.count(option)) {
      throw UsageError(std::string("--") + option +
                       ": the e2e suite runs in one process pool here (no point files)");
    }
  }
  const int jobs = values["jobs"].as<int>();
  if (jobs < 1) throw UsageError("--jobs " + std::to_string(jobs) + ": must be at least 1");
  const ModelSuite suite = e2e_suite();
  const std::vector<std::string> sets = base_sets(values);
  std::vector<ModelRequest> requests;
  for (const ModelPoint& point : suite.points) {
    ModelRequest request;
    request.config = load_system(values["system"].as<std::string>());
    for (const auto& set : sets) apply_override(request.config, set);
    apply_override(request.config, "gpus=" + std::to_string(point.tp));
    if (!values.count("full") && std::none_of(sets.begin(), sets.end(), names_symmetry) &&
        rotational_symmetry_refusal(request.config).empty()) {
      request.config.sim.symmetry = Symmetry::Rotational;
    }
    validate(request.config);
    request.model = point.model;
    request.phase = point.phase;
    request.shape = model_shape(request.config, model(point.model), 0, 0);
    request.config.workload.tokens = request.shape.tokens();
    request.scenarios = suite.scenarios;
    requests.push_back(request);
  }
  std::vector<const SystemConfig*> systems;
  for (const ModelRequest& request : requests) systems.push_back(&request.config);
  warn_capped_peaks(systems);
  const auto documents = run_models(requests, jobs, progress_bar());
  write_model_sweep(out, suite, values["system"].as<std::string>(), documents);
  std::printf(
      "t3sim sweep: suite e2e, %zu models x phases x %zu scenarios (%zu left out, listed in "
      "summary.md); wrote %s/results.json, %s/results.csv, %s/summary.md\n",
      suite.points.size(), suite.scenarios.size(), suite.left_out.size(), out.c_str(), out.c_str(),
      out.c_str());
  return 0;
}

}  // namespace

int sweep_command(const std::vector<std::string>& args) {
  // --tp and --shape are parsed (to refuse them with a reason) but not listed: the suite sets
  // the TP degrees and the workloads.
  po::options_description options = system_options();
  options.add(sweep_options());
  po::options_description refused;
  refused.add_options()("shape", po::value<std::string>(), "refused: a suite's \"shapes\"");
  options.add(refused);
  const auto values = parse(args, options);
  if (values.count("help")) {
    po::options_description listed = system_options(false);
    listed.add(sweep_options());
    std::cout << "usage: t3sim sweep --out DIR [OPTIONS]\nRuns a suite of sublayers under its "
                 "scenarios and writes results.json, results.csv and summary.md.\n"
              << listed;
    return 0;
  }
  if (values.count("tp")) throw UsageError("--tp: a sweep takes its TP degrees from the suite");
  if (values.count("shape")) {
    throw UsageError(
        "--shape: a sweep takes its workloads from the suite; give custom GEMMs there as "
        "\"shapes\": [\"M,N,K\", ...]");
  }
  if (!values.count("out")) throw UsageError("--out DIR is required");
  // Absolute, so emitted commands write where --collect reads from any working directory.
  const std::string out = std::filesystem::absolute(values["out"].as<std::string>()).string();
  if (values["suite"].as<std::string>() == "e2e") {
    std::error_code made;
    std::filesystem::create_directories(out, made);
    if (made || !std::filesystem::is_directory(out))
      throw UsageError("--out " + out + ": cannot create the directory");
    return model_sweep(values, out);
  }
  Suite suite = load_suite(values["suite"].as<std::string>());
  std::vector<ScenarioJob> points;
  // Every point is planned up front, so a bad one fails the sweep before any simulation (and
  // before --emit-jobs writes a job that could only fail on the cluster).
  for (const SweepPoint& point : suite.points) {
    points.push_back(point_job(values, point, suite.scenarios));
    check_plannable(points.back(), suite.scenarios);
  }
  std::vector<const SystemConfig*> systems;
  for (const ScenarioJob& job : points) systems.push_back(&job.config);
  warn_capped_peaks(systems);
  std::error_code error;
  std::filesystem::create_directories(out, error);
  if (error || !std::filesystem::is_directory(out)) {
    throw UsageError(
        "--out " + out + ": cannot create the directory" +
        (error ? " (" + error.message() + ")" : std::string(" (a file is in the way)")));
  }
  const bool resume = values.count("resume") != 0;
  if (resume && values.count("collect")) {
    throw UsageError("--resume runs what is missing; --collect only reads: use one of them");
  }
  if (values.count("emit-jobs")) {
    emit_jobs(values, suite, points, out, values["emit-jobs"].as<std::string>(), resume);
    return 0;
  }
  const int jobs = values["jobs"].as<int>();
  if (jobs < 1) throw UsageError("--jobs " + std::to_string(jobs) + ": must be at least 1");
  if (values.count("allow-missing") && !values.count("collect")) {
    throw UsageError("--allow-missing applies to --collect only");
  }
  std::vector<std::string> missing;
  const auto results = values.count("collect")
                           ? collect(suite, out, values.count("allow-missing") != 0, missing)
                           : run_here(suite, points, out, jobs, resume);
  write_sweep(out, suite, values["system"].as<std::string>(), results, missing);
  std::printf(
      "t3sim sweep: suite %s, %zu workloads x %zu scenarios; wrote %s/results.json, "
      "%s/results.csv, %s/summary.md\n",
      suite.name.c_str(), suite.points.size(), suite.scenarios.size(), out.c_str(), out.c_str(),
      out.c_str());
  if (!missing.empty()) {
    std::printf(
        "t3sim sweep: %zu workloads have no results yet and are left out (listed in "
        "summary.md)\n",
        missing.size());
  }
  return 0;
}

}  // namespace t3::cli
