// t3sim model: one transformer layer of a model run kernel by kernel on the simulated group
// (experiments/model_run.h), its time by kernel class, the whole model's time and the end-to-end
// speedup of each scenario over sequential.
#include <algorithm>
#include <cstdio>
#include <iostream>

#include "apps/cli.h"
#include "config/config_io.h"
#include "experiments/model_run.h"
#include "workloads/model_zoo.h"

namespace t3::cli {

namespace {

po::options_description model_options() {
  po::options_description options("Model");
  options.add_options()("model", po::value<std::string>(),
                        "model: bert-large, mega-gpt-2, t-nlg, gpt-3, palm, mt-nlg (required)")(
      "phase", po::value<std::string>()->default_value("training"),
      "training (forward and backward) or inference (the prompt phase: forward, no dropout)")(
      "scenario", po::value<std::string>(),
      "one scenario beside sequential (sequential, t3, t3-mca, ideal, ideal-rs-nmc, commfuse)")(
      "scenarios", po::value<std::string>()->default_value("all"),
      "comma-separated scenarios (sequential is always run); all: the paper's five")(
      "layers", po::value<std::int64_t>(), "layers of the model (default: the model's own)")(
      "tokens", po::value<std::int64_t>(), "tokens per batch (sets workload.tokens)")(
      "batch", po::value<std::int64_t>(), "sequences per batch (default: tokens / seq)")(
      "seq", po::value<std::int64_t>(), "tokens per sequence (default: the model's)")(
      "fused-attention", "attention as one fused kernel (no seq x seq matrix in memory)")(
      "full",
      "simulate every GPU of each sublayer run (by default one GPU under rotational symmetry "
      "wherever that is valid)")("json", po::value<std::string>(),
                                 "write the result document to this file")(
      "jobs", po::value<int>()->default_value(default_jobs()),
      "simulations run at once, each in its own process");
  return options;
}

std::int64_t positive(const po::variables_map& values, const char* option) {
  const std::int64_t value = values[option].as<std::int64_t>();
  if (value < 1) {
    throw UsageError(std::string("--") + option + " " + std::to_string(value) +
                     ": must be at least 1");
  }
  return value;
}

bool names_symmetry(const po::variables_map& values) {
  if (!values.count("set")) return false;
  const auto& sets = values["set"].as<std::vector<std::string>>();
  return std::any_of(sets.begin(), sets.end(),
                     [](const std::string& s) { return s.rfind("sim.symmetry=", 0) == 0; });
}

ModelRequest model_request(const po::variables_map& values) {
  if (!values.count("model")) throw UsageError("--model is required");
  ModelRequest request;
  request.model = values["model"].as<std::string>();
  const ModelSpec spec = model(request.model);  // an unknown name is refused here
  SystemConfig config = system_from(values);
  // --batch without --tokens sets the tokens: batch x (--seq or the model's sequence).
  if (values.count("batch") && !values.count("tokens")) {
    const std::int64_t seq = values.count("seq") ? positive(values, "seq") : spec.seq;
    config.workload.tokens = positive(values, "batch") * seq;
  }
  if (values.count("tokens")) config.workload.tokens = positive(values, "tokens");
  if (!values.count("full") && !names_symmetry(values) && config.sim.mode == SimMode::Timing) {
    SystemConfig symmetric = config;
    symmetric.sim.symmetry = Symmetry::Rotational;
    if (rotational_symmetry_refusal(symmetric).empty()) config = symmetric;
  }
  if (values.count("full")) config.sim.symmetry = Symmetry::None;
  validate(config);
  request.config = config;
  request.phase = parse_layer_phase(values["phase"].as<std::string>());
  const std::int64_t batch = values.count("batch") ? positive(values, "batch") : 0;
  const std::int64_t seq = values.count("seq") ? positive(values, "seq") : 0;
  request.shape = model_shape(config, spec, batch, seq);
  if (request.shape.tokens() != config.workload.tokens) {
    throw UsageError("--batch " + std::to_string(request.shape.batch) + " x --seq " +
                     std::to_string(request.shape.seq) + " = " +
                     std::to_string(request.shape.tokens()) + " tokens, but workload.tokens is " +
                     std::to_string(config.workload.tokens));
  }
  request.config.workload.tokens = request.shape.tokens();
  if (values.count("layers")) request.layers = positive(values, "layers");
  request.fused_attention = values.count("fused-attention") > 0;
  request.scenarios = values.count("scenario")
                          ? parse_scenarios(values["scenario"].as<std::string>(), "--scenario")
                          : parse_scenarios(values["scenarios"].as<std::string>());
  return request;
}

void print_model(const nlohmann::json& result) {
  std::printf(
      "t3sim model: %s, TP %lld, %s, batch %lld x seq %lld (%lld tokens), %lld layers, "
      "system %s\n",
      result["model"].get<std::string>().c_str(), result["tp"].get<long long>(),
      result["phase"].get<std::string>().c_str(), result["batch"].get<long long>(),
      result["seq"].get<long long>(), result["tokens"].get<long long>(),
      result["layers"].get<long long>(), result["system"].get<std::string>().c_str());
  std::size_t reduced = 0;
  for (const auto& kernel : result["kernels"]) reduced += kernel["all_reduced"].get<bool>();
  std::printf(
      "  one layer: %zu kernels (%zu all-reduced, run as sublayers)%s; %llu simulations "
      "(%s), %.1f s of simulation\n",
      result["kernels"].size(), reduced,
      result["fused_attention"].get<bool>() ? ", fused attention" : "",
      result["simulations"].get<unsigned long long>(),
      result["symmetry"] == "rotational"
          ? "sublayer runs on one GPU under rotational symmetry where it is valid"
          : "sublayer runs on every GPU",
      result["simulation_wall_time_s"].get<double>());
  std::printf("\n%-13s %10s %10s %10s %10s %10s %10s %8s %10s %8s\n", "scenario", "layer", "gemm",
              "attention", "memory", "comm", "model", "speedup", "energy", "energy");
  std::printf("%-13s %10s %10s %10s %10s %10s %10s %8s %10s %8s\n", "", "us", "us", "us",
              "bound us", "exposed us", "ms", "x seq", "model J", "saved");
  for (const auto& entry : result["scenarios"]) {
    const auto& b = entry["breakdown_ns"];
    std::printf("%-13s %10.1f %10.1f %10.1f %10.1f %10.1f %10.2f %8.3f %10.2f %7.1f%%\n",
                entry["scenario"].get<std::string>().c_str(),
                entry["layer_time_ns"].get<double>() / 1e3, b["gemm"].get<double>() / 1e3,
                b["attention"].get<double>() / 1e3, b["memory_bound"].get<double>() / 1e3,
                b["communication_exposed"].get<double>() / 1e3,
                entry["model_time_ns"].get<double>() / 1e6,
                entry["speedup_vs_sequential"].get<double>(), entry["model_energy_J"].get<double>(),
                100 * entry["energy_saving_vs_sequential"].get<double>());
  }
  std::printf(
      "\nlayer = the layer's kernels one after another; model = layers x layer (kernels do not\n"
      "overlap across layer boundaries); gemm includes the all-reduced GEMMs' sublayer time less\n"
      "their exposed communication; speedup = sequential model time / scenario model time;\n"
      "energy = first-order estimate of the model on all GPUs (docs/energy.md), saved = against\n"
      "sequential.\n");
}

}  // namespace

int model_command(const std::vector<std::string>& args) {
  po::options_description options = system_options();
  options.add(model_options());
  const auto values = parse(args, options);
  if (print_help_if_asked(
          values, options,
          "usage: t3sim model --model NAME --tp N [OPTIONS]\nRuns one transformer layer "
          "kernel by kernel on the simulated group, forward and\nbackward (training) or "
          "forward (inference), and reports its time by kernel class,\nthe model's time "
          "and each scenario's end-to-end speedup over sequential.\n")) {
    return 0;
  }
  const ModelRequest request = model_request(values);
  const int jobs = values["jobs"].as<int>();
  if (jobs < 1) throw UsageError("--jobs " + std::to_string(jobs) + ": must be at least 1");
  const nlohmann::json result = run_models({request}, jobs).front();
  print_model(result);
  if (values.count("json")) write_json(values["json"].as<std::string>(), result);
  return 0;
}

}  // namespace t3::cli
