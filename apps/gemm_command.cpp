// t3sim gemm: the GEMM one GPU of the group runs for a sublayer (or a custom shape), alone, timed
// (or functional); --group runs it on every GPU at once.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <optional>

#include "apps/cli.h"
#include "config/config_io.h"
#include "experiments/stats_dump.h"
#include "models/system/simulation.h"
#include "workloads/gemm_plan.h"
#include "workloads/model_zoo.h"
#include "workloads/sublayer.h"

namespace t3::cli {

po::options_description workload_options() {
  po::options_description options("Workload");
  options.add_options()("model", po::value<std::string>()->default_value("t-nlg"),
                        "model: mega-gpt-2, t-nlg, gpt-3, palm, mt-nlg (the paper's five), "
                        "bert-large, commfuse-mlp")(
      "sublayer", po::value<std::string>()->default_value("fc2"),
      "sublayer: op, fc2, fc1, ip; fc1-ag (all-gathered input, scenarios sequential and "
      "commfuse-ag)")("shape", po::value<std::string>(),
                      "M,N,K: a custom GEMM of M x N x K on each GPU (fp16) instead of --model "
                      "and --sublayer; its M x N output is all-reduced across the group like "
                      "fc2's, and M is its token count")(
      "tokens", po::value<std::int64_t>(),
      "tokens per batch (sets workload.tokens; default: the model's batch x "
      "sequence if it has a batch, e.g. commfuse-mlp 32 x 4096, else the "
      "system's workload.tokens)")("functional", "carry real data (sets sim.mode=functional)")(
      "json", po::value<std::string>(), "write the result document to this file")(
      "stats", po::value<std::string>(),
      "write every block's statistics (gpu0.hbm.ch3.row_hits, gpu0.link.to_gpu7.busy_ns, ...) "
      "per phase and in total to this file: JSON, or gem5-like text (name value # description) "
      "for a name ending in .txt");
  return options;
}

// Whether `--set` assigns `path`.
bool set_on_command_line(const po::variables_map& values, const std::string& path) {
  if (!values.count("set")) return false;
  for (const auto& assignment : values["set"].as<std::vector<std::string>>()) {
    if (assignment.rfind(path + "=", 0) == 0) return true;
  }
  return false;
}

std::optional<GemmShape> custom_shape(const po::variables_map& values) {
  if (!values.count("shape")) return std::nullopt;
  for (const char* option : {"model", "sublayer", "tokens"}) {
    if (values.count(option) && !values[option].defaulted()) {
      throw UsageError(std::string("--shape and --") + option + " exclude each other: --shape " +
                       (option == std::string("tokens") ? "gives the tokens as its M"
                                                        : "runs a custom GEMM, not a model's") +
                       " (use one of them)");
    }
  }
  try {
    return parse_gemm_shape(values["shape"].as<std::string>());
  } catch (const ConfigError& error) {
    throw UsageError(std::string("--shape: ") + error.what());
  }
}

SystemConfig workload_system(const po::variables_map& values) {
  SystemConfig config = system_from(values);
  if (const auto shape = custom_shape(values)) {
    apply_json(config, {{"workload", {{"tokens", shape->m}}}}, "--shape");  // M is the tokens
  } else if (values.count("tokens")) {
    apply_override(config,
                   "workload.tokens=" + std::to_string(values["tokens"].as<std::int64_t>()));
  } else if (values.count("model") && !set_on_command_line(values, "workload.tokens")) {
    // A model with a batch (commfuse-mlp) brings its own token count.
    const std::int64_t tokens =
        default_tokens(model(values["model"].as<std::string>()), config.workload.tokens);
    apply_override(config, "workload.tokens=" + std::to_string(tokens));
  }
  if (values.count("functional")) apply_override(config, "sim.mode=functional");
  validate(config);
  return config;
}

namespace {

// The system `t3sim gemm` builds: the TP group's configuration with one GPU, unless --group asks
// for every GPU. A GEMM alone exchanges nothing between GPUs, so GPU 0 alone runs exactly as it
// does beside the others (its operands lie at the same addresses of its own HBM).
SystemConfig simulated_system(const SystemConfig& config, bool group) {
  if (config.sim.symmetry == Symmetry::Rotational && group) {
    throw UsageError(
        "--group simulates every GPU; sim.symmetry=rotational stands one GPU for them (the "
        "default of t3sim gemm): use one of them");
  }
  SystemConfig simulated = config;
  // Rotation needs a collective's plan; one GPU of a GEMM needs none.
  simulated.sim.symmetry = Symmetry::None;
  if (!group) simulated.gpus = 1;
  validate(simulated);
  return simulated;
}

}  // namespace

int gemm_command(const std::vector<std::string>& args) {
  po::options_description options = system_options();
  options.add(workload_options());
  po::options_description gemm("GEMM");
  gemm.add_options()("group",
                     "simulate every GPU of the TP group, each running the same GEMM at once "
                     "(byte and transaction counts become the group's totals); by default "
                     "one GPU, which runs exactly as it would beside the others");
  options.add(gemm).add(record_options());
  const auto values = parse(args, options);
  if (print_help_if_asked(
          values, options,
          "usage: t3sim gemm [OPTIONS]\nRuns the GEMM one GPU of a TP group of --tp GPUs runs "
          "for a sublayer (or a --shape), alone,\nand reports its kernel time, throughput, "
          "DRAM traffic and L2 hit rate. It simulates one GPU:\na GEMM alone exchanges nothing "
          "with the other GPUs, so every figure is that GPU's (per GPU);\n--group simulates "
          "every GPU of the group at once and reports group totals.\n")) {
    return 0;
  }
  const SystemConfig config = workload_system(values);
  const std::optional<GemmShape> custom = custom_shape(values);
  const std::string model_name = custom ? kCustom : values["model"].as<std::string>();
  const Sublayer sublayer =
      custom ? Sublayer::Fc2 : parse_sublayer(values["sublayer"].as<std::string>());
  const GemmShape shape = workload_gemm(model_name, sublayer, custom, static_cast<int>(config.gpus),
                                        config.workload.tokens);
  if (custom) check_fits(config, shape);
  const bool whole_group = values.count("group") != 0;
  const SystemConfig simulated = simulated_system(config, whole_group);
  const GroupGemmPlan plan = plan_group_gemm(simulated, shape);

  const std::unique_ptr<TraceRecorder> recorder = recorder_from(values, simulated);
  TpGroup group("group", simulated);
  const Statistics before = collect_statistics(group);
  const RunSummary run = run_to_completion(group, plan.programs());
  if (recorder) recorder->close();
  if (values.count("stats")) {
    // No phases: the kernel is the whole run.
    write_stats(values["stats"].as<std::string>(),
                {{"gemm", stats_section(before, collect_statistics(group))}});
  }

  // Kernel time: doorbell to last workgroup, the slowest GPU simulated.
  double time_ns = 0;
  std::uint64_t transactions = 0;
  for (int g = 0; g < group.gpus(); ++g) {
    const LaunchRecord& launch = group.gpu(g).dispatcher.launches().at(0);
    time_ns = std::max(time_ns, (launch.end - launch.doorbell).to_seconds() * 1e9);
    for (int s = 0; s < group.gpu(g).sms(); ++s) {
      const auto& stats = group.gpu(g).sm(s).stats();
      transactions += stats.reads + stats.writes;
    }
  }
  const ComputeTraffic traffic = compute_traffic(group);
  const double tflops = plan.flops_per_gpu() / (time_ns * 1e-9) / 1e12;
  const double peak_tflops = static_cast<double>(config.sm.count) * config.sm.flops_per_clock *
                             config.sm.clock_GHz * 1e9 / 1e12;
  const std::string workload = custom ? std::string(kCustom) + " " + shape_text(shape)
                                      : model_name + " " + to_string(sublayer);
  const std::string scope =
      whole_group ? "all " + std::to_string(group.gpus()) + " GPUs" : std::string("one GPU");

  std::printf("t3sim gemm: %s, TP %lld, %lld tokens, system %s (%s mode)\n", workload.c_str(),
              static_cast<long long>(config.gpus), static_cast<long long>(config.workload.tokens),
              config.name.c_str(),
              config.sim.mode == SimMode::Functional ? "functional" : "timing");
  std::printf("  simulated           %s%s\n", scope.c_str(),
              whole_group ? ", each running the GEMM at once"
                          : " (the GEMM exchanges nothing; --group simulates every GPU)");
  std::printf("  per-GPU GEMM        M=%lld N=%lld K=%lld, fp16, tiles %lldx%lldx%lld\n",
              static_cast<long long>(shape.m), static_cast<long long>(shape.n),
              static_cast<long long>(shape.k), static_cast<long long>(config.gemm.tile_m),
              static_cast<long long>(config.gemm.tile_n),
              static_cast<long long>(config.gemm.tile_k));
  std::printf("  kernel time         %.1f us (%s, doorbell to last workgroup)\n", time_ns / 1e3,
              whole_group ? "slowest GPU" : "the GPU");
  std::printf("  throughput          %.1f TFLOP/s per GPU (%.0f%% of %.1f peak)\n", tflops,
              100 * tflops / peak_tflops, peak_tflops);
  std::printf("  %-19s %.1f MB read, %.1f MB written\n", ("DRAM, " + scope).c_str(),
              traffic.read_bytes / 1e6, traffic.write_bytes / 1e6);
  std::printf("  L2 hit rate         %.1f%%\n", 100 * traffic.l2_hit_rate);
  std::printf("  simulation          %llu SM transactions (%s), %.2f s wall time\n",
              static_cast<unsigned long long>(transactions), scope.c_str(), run.wall_time_s);

  if (values.count("json")) {
    write_json(
        values["json"].as<std::string>(),
        {{"job", "gemm"},
         {"model", model_name},
         {"sublayer", custom ? kCustom : to_string(sublayer)},
         {"tp", config.gpus},
         // GPUs simulated, over which dram_bytes, transactions and stats are totals: 1, or the
         // group's with --group.
         {"gpus_simulated", group.gpus()},
         {"tokens", config.workload.tokens},
         {"shape", {{"m", shape.m}, {"n", shape.n}, {"k", shape.k}}},
         {"time_ns", time_ns},
         {"tflops", tflops},
         {"dram_bytes", {{"gemm_read", traffic.read_bytes}, {"gemm_write", traffic.write_bytes}}},
         {"l2_hit_rate", traffic.l2_hit_rate},
         {"transactions", transactions},
         {"simulated_ns", run.simulated_ns},
         {"wall_time_s", run.wall_time_s},
         {"stats", group.report()},
         {"config", to_json(config)}});
  }
  return 0;
}

}  // namespace t3::cli
