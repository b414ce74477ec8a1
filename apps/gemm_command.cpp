// t3sim gemm: one sublayer's GEMM on every GPU of the group at once, timed (or functional).
#include <algorithm>
#include <cstdio>
#include <iostream>

#include "apps/cli.h"
#include "config/config_io.h"
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
      "commfuse-ag)")("tokens", po::value<std::int64_t>(),
                      "tokens per batch (sets workload.tokens; default: the model's batch x "
                      "sequence if it has a batch, e.g. commfuse-mlp 32 x 4096, else the "
                      "system's workload.tokens)")("functional",
                                                   "carry real data (sets sim.mode=functional)")(
      "json", po::value<std::string>(), "write the result document to this file");
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

SystemConfig workload_system(const po::variables_map& values) {
  SystemConfig config = system_from(values);
  if (values.count("tokens")) {
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

int gemm_command(const std::vector<std::string>& args) {
  po::options_description options = system_options();
  options.add(workload_options());
  const auto values = parse(args, options);
  if (values.count("help")) {
    std::cout << "usage: t3sim gemm [OPTIONS]\nRuns one sublayer's GEMM alone (no collective) on "
                 "every GPU of the group and reports\nits kernel time, throughput, DRAM traffic "
                 "and L2 hit rate.\n"
              << options;
    return 0;
  }
  const SystemConfig config = workload_system(values);
  const ModelSpec spec = model(values["model"].as<std::string>());
  const Sublayer sublayer = parse_sublayer(values["sublayer"].as<std::string>());
  const GemmShape shape =
      sublayer_gemm(spec, sublayer, static_cast<int>(config.gpus), config.workload.tokens);
  const GroupGemmPlan plan = plan_group_gemm(config, shape);

  TpGroup group("group", config);
  const RunSummary run = run_to_completion(group, plan.programs());

  // Kernel time: doorbell to last workgroup, the slowest GPU.
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

  std::printf("t3sim gemm: %s %s, TP %lld, %lld tokens, system %s (%s mode)\n", spec.name.c_str(),
              to_string(sublayer), static_cast<long long>(config.gpus),
              static_cast<long long>(config.workload.tokens), config.name.c_str(),
              config.sim.mode == SimMode::Functional ? "functional" : "timing");
  std::printf("  per-GPU GEMM        M=%lld N=%lld K=%lld, fp16, tiles %lldx%lldx%lld\n",
              static_cast<long long>(shape.m), static_cast<long long>(shape.n),
              static_cast<long long>(shape.k), static_cast<long long>(config.gemm.tile_m),
              static_cast<long long>(config.gemm.tile_n),
              static_cast<long long>(config.gemm.tile_k));
  std::printf("  kernel time         %.1f us (slowest GPU, doorbell to last workgroup)\n",
              time_ns / 1e3);
  std::printf("  throughput          %.1f TFLOP/s per GPU (%.0f%% of %.1f peak)\n", tflops,
              100 * tflops / peak_tflops, peak_tflops);
  std::printf("  DRAM, all GPUs      %.1f MB read, %.1f MB written\n", traffic.read_bytes / 1e6,
              traffic.write_bytes / 1e6);
  std::printf("  L2 hit rate         %.1f%%\n", 100 * traffic.l2_hit_rate);
  std::printf("  simulation          %llu SM transactions, %.2f s wall time\n",
              static_cast<unsigned long long>(transactions), run.wall_time_s);

  if (values.count("json")) {
    write_json(
        values["json"].as<std::string>(),
        {{"job", "gemm"},
         {"model", spec.name},
         {"sublayer", to_string(sublayer)},
         {"tp", config.gpus},
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
