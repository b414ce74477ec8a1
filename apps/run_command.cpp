// t3sim run: one sublayer under one scenario on the whole group; t3sim compare: every scenario
// for one sublayer, side by side.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <string>

#include "apps/cli.h"
#include "experiments/isolated.h"
#include "experiments/scenario_job.h"
#include "experiments/stats_dump.h"

namespace t3::cli {

namespace {

po::options_description scenario_options(bool single) {
  po::options_description options("Scenario");
  if (single) {
    options.add_options()(
        "scenario", po::value<std::string>()->default_value("t3-mca"),
        "sequential, t3, t3-mca, ideal, ideal-rs-nmc, slicing, commfuse, t3-switch; "
        "for sublayer fc1-ag: sequential, commfuse-ag")(
        "trace", po::value<std::string>(),
        "write a Chrome trace-event timeline (open it in ui.perfetto.dev); for ideal, of the "
        "sequential run it is derived from")("vcd", po::value<std::string>(),
                                             "write key signals as a VCD file");
  }
  if (!single) {
    options.add_options()(
        "scenarios", po::value<std::string>()->default_value("all"),
        "comma-separated scenarios to run (sequential is always run too, "
        "as the speedups' reference); all: "
        "the paper's five (add slicing, commfuse, t3-switch by name), or for sublayer "
        "fc1-ag sequential and commfuse-ag");
  }
  options.add_options()("jobs", po::value<int>()->default_value(default_jobs()),
                        "simulations run at once, each in its own process");
  return options;
}

ScenarioJob workload_job(const po::variables_map& values) {
  ScenarioJob job;
  job.config = workload_system(values);
  job.shape = custom_shape(values);
  // A custom shape takes fc2's scenarios: it reduces its output like a row-parallel sublayer.
  job.model = job.shape ? kCustom : values["model"].as<std::string>();
  job.sublayer = job.shape ? Sublayer::Fc2 : parse_sublayer(values["sublayer"].as<std::string>());
  job.stats = values.count("stats") != 0;
  if (job.config.gpus < 2) {
    throw UsageError("a sublayer needs a TP group of at least 2 GPUs (gpus = " +
                     std::to_string(job.config.gpus) + "; use --tp)");
  }
  return job;
}

// The scenarios --scenarios names, sequential first; "all" on a sublayer that gathers its input
// is the two that apply to it.
std::vector<Scenario> scenarios_of(const po::variables_map& values, Sublayer sublayer) {
  const std::string list = values["scenarios"].as<std::string>();
  if (list == "all" && gathers_input(sublayer)) return {Scenario::Sequential, Scenario::CommFuseAg};
  return parse_scenarios(list);
}

// Whether compare runs sequential without --scenarios naming it ("all" names it).
bool sequential_added(const po::variables_map& values) {
  const std::string list = values["scenarios"].as<std::string>();
  if (list == "all") return false;
  std::stringstream names(list);
  for (std::string name; std::getline(names, name, ',');) {
    if (name == "sequential") return false;
  }
  return true;
}

int jobs_of(const po::variables_map& values) {
  const int jobs = values["jobs"].as<int>();
  if (jobs < 1) throw UsageError("--jobs " + std::to_string(jobs) + ": must be at least 1");
  return jobs;
}

double mb(const nlohmann::json& bytes) {
  return bytes.get<double>() / 1e6;
}

void print_header(const char* command, const ScenarioJob& job, const nlohmann::json& result) {
  const auto& shape = result["shape"];
  const std::string workload = job.shape ? std::string(kCustom) + " " + shape_text(*job.shape)
                                         : job.model + " " + to_string(job.sublayer);
  std::printf("t3sim %s: %s, TP %lld, %lld tokens, system %s (%s mode)\n", command,
              workload.c_str(), static_cast<long long>(job.config.gpus),
              static_cast<long long>(job.config.workload.tokens), job.config.name.c_str(),
              job.config.sim.mode == SimMode::Functional ? "functional" : "timing");
  if (result.value("symmetry", "none") == "rotational") {
    std::printf(
        "  rotational symmetry: GPU 0 simulated, standing for all %lld (--set "
        "sim.symmetry=none simulates every GPU)\n",
        static_cast<long long>(job.config.gpus));
  }
  const bool gathers = gathers_input(job.sublayer);
  std::printf("  per-GPU GEMM   M=%lld N=%lld K=%lld, fp16; %s %.1f MB per GPU %s\n",
              shape["m"].get<long long>(), shape["n"].get<long long>(), shape["k"].get<long long>(),
              gathers ? "input" : "output",
              2.0 * shape["m"].get<double>() * shape[gathers ? "k" : "n"].get<double>() / 1e6,
              gathers ? "all-gathered from row bands" : "to all-reduce");
}

// "HBM 41.2%, links 23.5% busy; MCA held back 408, opened by starvation 0, kept open by urgency
// 69640": the result's utilisation and, under MCA, its gate's decisions (hbm_queue.mca).
std::string activity_text(const nlohmann::json& result) {
  if (!result.contains("utilisation"))
    return "derived from its runs' phase times, no run of its own";
  const nlohmann::json& busy = result["utilisation"];
  char text[256];
  std::snprintf(text, sizeof text, "HBM %.1f%%, links %.1f%% busy", 100 * busy["hbm"].get<double>(),
                100 * busy["link"].get<double>());
  std::string line = text;
  const nlohmann::json& queue = result["hbm_queue"];
  if (queue.contains("mca")) {
    const nlohmann::json& mca = queue["mca"];
    std::snprintf(text, sizeof text,
                  "; MCA held back %llu, opened by starvation %llu, kept open by urgency %llu",
                  mca["held_back"].get<unsigned long long>(),
                  mca["starvation_overrides"].get<unsigned long long>(),
                  mca["urgent_releases"].get<unsigned long long>());
    line += text;
  }
  return line;
}

// Whether the result's reduce-scatter moved data over the links while its DRAM traffic shows no
// communication-class bytes: its partial sums travel as compute-class writes (T3 behind a switch,
// where the GEMM stores them straight into the owner's memory), so an arbitration that tells the
// classes apart (MCA) has nothing to hold back.
bool reduce_scatter_as_compute(const nlohmann::json& result) {
  if (!result.contains("utilisation")) return false;
  for (const auto& phase : result["phases"]) {
    const std::string name = phase["name"];
    if (name != "gemm_rs" && name != "reduce_scatter") continue;
    const auto& bytes = phase["dram_bytes"];
    const std::uint64_t communication = bytes["rs_read"].get<std::uint64_t>() +
                                        bytes["rs_write"].get<std::uint64_t>() +
                                        bytes["rs_update"].get<std::uint64_t>();
    if (communication == 0 && phase["link_payload_bytes"].get<std::uint64_t>() > 0) return true;
  }
  return false;
}

constexpr const char* kComputeClassNote =
    "its reduce-scatter travels as compute-class traffic (rs_read, rs_write and rs_update are 0): "
    "the partial sums are the GEMM's own writes to their owner, which an MCA gate does not hold "
    "back";

// For ideal: which reduce-scatter it took and the times it chose between.
std::string ideal_choice_text(const nlohmann::json& result) {
  const nlohmann::json& choice = result["ideal_reduce_scatter"];
  std::string text = choice["used"].get<std::string>() + ", the fastest run alone (";
  bool first = true;
  for (const char* name : {"ring", "nvls", "direct_sm", "direct_dma_nmc", "direct_sm_nmc"}) {
    const std::string key = std::string(name) + "_ns";
    if (!choice.contains(key)) continue;
    char time[64];
    std::snprintf(time, sizeof time, "%s%s %.1f us", first ? "" : ", ", name,
                  choice[key].get<double>() / 1e3);
    text += time;
    first = false;
  }
  return text + ")";
}

void print_activity(const nlohmann::json& result) {
  std::printf("  utilisation    %s\n", activity_text(result).c_str());
  if (reduce_scatter_as_compute(result)) std::printf("  note           %s\n", kComputeClassNote);
  if (result.contains("ideal_reduce_scatter")) {
    std::printf("  ideal's rs     %s\n", ideal_choice_text(result).c_str());
  }
}

// The scenario column's width: 13 characters, wider when a scenario's name needs it.
int scenario_width(const std::vector<nlohmann::json>& results) {
  std::size_t width = 13;
  for (const nlohmann::json& result : results) {
    width = std::max(width, result["scenario"].get<std::string>().size());
  }
  return static_cast<int>(width);
}

// Under the compare table: each scenario's utilisation and MCA decisions, and notes.
void print_compare_activity(const std::vector<nlohmann::json>& results) {
  std::printf(
      "\nutilisation (busy share of every HBM channel and link direction over the "
      "scenario's time):\n");
  for (const nlohmann::json& result : results) {
    std::printf("%-*s %s\n", scenario_width(results), result["scenario"].get<std::string>().c_str(),
                activity_text(result).c_str());
  }
  for (const nlohmann::json& result : results) {
    if (reduce_scatter_as_compute(result)) {
      std::printf("note: %s: %s.\n", result["scenario"].get<std::string>().c_str(),
                  kComputeClassNote);
    }
  }
}

// How a scenario's reduce-scatter ran, in words: the engines that moved it and its pattern; for
// ideal the one it took and the times it chose between.
std::string reduce_scatter_text(const nlohmann::json& result) {
  const std::string scenario = result["scenario"].get<std::string>();
  const std::string pattern = result["collective"].get<std::string>();
  if (result.contains("ideal_reduce_scatter")) return ideal_choice_text(result);
  if (scenario == "t3" || scenario == "t3-mca") {
    return pattern == "direct"
               ? "direct, fused into the GEMM: its stores update each chunk's owner"
               : pattern + ", fused into the GEMM: the tracker and DMA engine update the next GPU";
  }
  if (scenario == "ideal-rs-nmc") return pattern + " on the DMA engines with near-memory updates";
  if (scenario == "t3-switch") {
    return "nvls, fused into the GEMM: each chunk's owner pulls it reduced by the switch "
           "(ld_reduce)";
  }
  if (pattern == "nvls") return "nvls on the SMs: reduced by the switch (ld_reduce)";
  if (scenario == "ideal-rs-sm-nmc") {
    return "direct, pushed by the SMs to each chunk's owner as near-memory updates";
  }
  return pattern + " on the SMs";
}

// On a switch or mesh, where a reduce-scatter can go ring or direct: which each scenario used,
// one line each.
void print_compare_collectives(const std::vector<nlohmann::json>& results,
                               const SystemConfig& config) {
  if (config.topology.kind == TopologyKind::Ring) return;
  std::printf("\nreduce-scatter on this %s, by scenario:\n",
              config.topology.kind == TopologyKind::Switch ? "switch" : "fully-connected mesh");
  for (const nlohmann::json& result : results) {
    std::printf("%-*s %s\n", scenario_width(results), result["scenario"].get<std::string>().c_str(),
                reduce_scatter_text(result).c_str());
  }
}

// Moves every result's "stats" into the dump --stats names (by scenario) and writes it.
void write_stats_dump(const po::variables_map& values, std::vector<nlohmann::json>& results) {
  nlohmann::json sections = nlohmann::json::object();
  for (nlohmann::json& result : results) {
    if (!result.contains("stats")) continue;
    sections[result["scenario"].get<std::string>()] = std::move(result["stats"]);
    result.erase("stats");
  }
  if (values.count("stats")) write_stats(values["stats"].as<std::string>(), sections);
}

// The run's first-order energy estimate (experiments/energy.h), in total and by part.
void print_energy(const nlohmann::json& energy) {
  const auto sum = [](const nlohmann::json& part) {
    if (!part.is_object()) return part.get<double>();
    double total = 0;
    for (const auto& [name, joules] : part.items()) total += joules.get<double>();
    return total;
  };
  std::printf("  energy         %.2f mJ: DRAM %.2f, NMC %.2f, links %.2f, SM %.2f, L2 %.2f\n",
              energy["total"].get<double>() * 1e3, sum(energy["dram"]) * 1e3,
              sum(energy["nmc"]) * 1e3, sum(energy["link"]) * 1e3, sum(energy["sm"]) * 1e3,
              sum(energy["l2"]) * 1e3);
}

void print_run(const nlohmann::json& result) {
  std::printf("  scenario       %s (%s reduce-scatter)\n",
              result["scenario"].get<std::string>().c_str(),
              result["collective"].get<std::string>().c_str());
  std::printf("  time           %.1f us, %.3fx sequential; %.1f us of communication exposed\n",
              result["time_ns"].get<double>() / 1e3, result["speedup_vs_sequential"].get<double>(),
              result["exposed_comm_ns"].get<double>() / 1e3);
  std::printf("  phases        ");
  for (const auto& phase : result["phases"]) {
    std::printf(" %s %.1f us", phase["name"].get<std::string>().c_str(),
                phase["time_ns"].get<double>() / 1e3);
  }
  std::printf("\n  DRAM, all GPUs");
  for (const auto& [category, bytes] : result["dram_bytes"].items()) {
    if (bytes.get<std::uint64_t>() != 0) std::printf(" %s %.1f MB", category.c_str(), mb(bytes));
  }
  std::printf("\n  links          %.1f MB payload, %.1f MB on the wire\n",
              mb(result["link_bytes"]["payload"]), mb(result["link_bytes"]["wire"]));
  print_energy(result["energy"]);
  print_activity(result);
  std::printf("  tracker, DMA   %llu tiles fired, %llu transfers\n",
              result["tracker"]["fired"].get<unsigned long long>(),
              result["dma"]["transfers"].get<unsigned long long>());
  if (result.contains("functional_check")) {
    std::printf("  data           %s\n", result["functional_check"].get<std::string>().c_str());
  }
  std::printf("  simulation     %llu transactions, %.2f s wall time\n",
              result["transactions"]["total"].get<unsigned long long>(),
              result["wall_time_s"].get<double>());
}

// The phase's time in us, or "-" if the scenario has no such phase.
std::string phase_us(const nlohmann::json& result, const std::string& name) {
  for (const auto& phase : result["phases"]) {
    if (phase["name"] == name) {
      char text[32];
      std::snprintf(text, sizeof text, "%.1f", phase["time_ns"].get<double>() / 1e3);
      return text;
    }
  }
  return "-";
}

// `gathers`: the sublayer all-gathers its input, and the fused column shows ag_gemm.
void print_compare(const std::vector<nlohmann::json>& results, bool gathers) {
  const double sequential_bytes = results.front()["dram_bytes"]["total"].get<double>();
  const double sequential_energy = results.front()["energy"]["total"].get<double>();
  const int width = scenario_width(results);
  std::printf("\n%-*s %10s %8s %10s %10s %10s %10s %10s %10s %9s %9s %9s\n", width, "scenario",
              "time", "speedup", "gemm", "rs", gathers ? "ag+gemm" : "gemm+rs", "ag", "exposed",
              "DRAM", "DRAM", "energy", "energy");
  std::printf("%-*s %10s %8s %10s %10s %10s %10s %10s %10s %9s %9s %9s\n", width, "", "us", "x seq",
              "us", "us", "us", "us", "us", "MB", "saved", "mJ", "saved");
  for (const nlohmann::json& result : results) {
    const double bytes = result["dram_bytes"]["total"].get<double>();
    const double energy = result["energy"]["total"].get<double>();
    std::printf(
        "%-*s %10.1f %8.3f %10s %10s %10s %10s %10.1f %10.1f %8.1f%% %9.1f %8.1f%%\n", width,
        result["scenario"].get<std::string>().c_str(), result["time_ns"].get<double>() / 1e3,
        result["speedup_vs_sequential"].get<double>(), phase_us(result, "gemm").c_str(),
        phase_us(result, "reduce_scatter").c_str(),
        phase_us(result, gathers ? "ag_gemm" : "gemm_rs").c_str(),
        phase_us(result, "all_gather").c_str(), result["exposed_comm_ns"].get<double>() / 1e3,
        bytes / 1e6, 100.0 * (sequential_bytes - bytes) / sequential_bytes, energy * 1e3,
        100.0 * (sequential_energy - energy) / sequential_energy);
  }
  std::printf(
      "\nspeedup = sequential time / scenario time; DRAM = bytes read, written and updated in HBM\n"
      "by all GPUs; saved = DRAM reduction against sequential; ideal = max(gemm, rs) + ag, rs the\n"
      "fastest reduce-scatter the system runs (sequential's own: the ring, NVLS on a reducing\n"
      "switch; on a switch or mesh also the SM, the DMA + NMC and the SM + NMC direct ones);\n"
      "exposed = time communication runs with no compute beside it.\n"
      "energy = first-order estimate: DRAM, near-memory updates, links, SM FLOPs, L2 "
      "(docs/energy.md).\n");
}

}  // namespace

int run_command(const std::vector<std::string>& args) {
  po::options_description options = system_options();
  options.add(workload_options()).add(scenario_options(true)).add(record_options());
  const auto values = parse(args, options);
  if (print_help_if_asked(
          values, options,
          "usage: t3sim run [OPTIONS]\nRuns one sublayer under one scenario on the group "
          "(every GPU simulated, or GPU 0\nstanding for all with --set "
          "sim.symmetry=rotational) and reports its time, phases,\ndata movement and "
          "speedup over sequential.\n")) {
    return 0;
  }
  ScenarioJob job = workload_job(values);
  try {
    job.scenario = parse_scenario(values["scenario"].as<std::string>());
  } catch (const ConfigError& error) {
    throw UsageError(std::string("--scenario: ") + error.what());
  }
  if (values.count("trace")) job.trace = values["trace"].as<std::string>();
  if (values.count("vcd")) job.vcd = values["vcd"].as<std::string>();
  if (values.count("record")) {
    job.record = values["record"].as<std::string>();
    check_output(job.record, "--record");
    job.record_gpu = values["gpu"].as<int>();
    if (job.record_gpu < 0 || job.record_gpu >= job.config.gpus) {
      throw UsageError("--gpu " + std::to_string(job.record_gpu) + ": the group has GPUs 0.." +
                       std::to_string(job.config.gpus - 1));
    }
  }
  std::vector<nlohmann::json> results =
      run_scenarios({job}, {job.scenario}, jobs_of(values)).front();
  write_stats_dump(values, results);
  const nlohmann::json& result = results.front();
  print_header("run", job, result);
  print_run(result);
  if (values.count("json")) write_json(values["json"].as<std::string>(), result);
  return 0;
}

int compare_command(const std::vector<std::string>& args) {
  po::options_description options = system_options();
  options.add(workload_options()).add(scenario_options(false));
  const auto values = parse(args, options);
  if (print_help_if_asked(
          values, options,
          "usage: t3sim compare [OPTIONS]\nRuns one sublayer under every scenario "
          "--scenarios names and prints them side by side;\nsequential always runs too "
          "(named or not), since every speedup is measured against it.\n")) {
    return 0;
  }
  const ScenarioJob job = workload_job(values);
  std::vector<nlohmann::json> results =
      run_scenarios({job}, scenarios_of(values, job.sublayer), jobs_of(values)).front();
  write_stats_dump(values, results);
  print_header("compare", job, results.front());
  if (sequential_added(values)) {
    std::printf("  sequential     added to --scenarios %s: every speedup is measured against it\n",
                values["scenarios"].as<std::string>().c_str());
  }
  print_compare(results, gathers_input(job.sublayer));
  print_compare_collectives(results, job.config);
  print_compare_activity(results);
  if (values.count("json")) write_json(values["json"].as<std::string>(), results);
  return 0;
}

}  // namespace t3::cli
