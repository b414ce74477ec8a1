// Rotational symmetry on one paper point: `t3sim compare` (every scenario) with every GPU
// simulated and with one GPU under sim.symmetry = rotational, side by side in this one run. Prints
// both wall times and their ratio, and for each scenario how far the symmetric run's time, DRAM
// total and largest DRAM category are from the every-GPU run's. On the default point the one-GPU
// run is the default job, whose 3 s target this measures.
// Usage: bench_symmetry T3SIM [--model t-nlg] [--sublayer fc2] [--tp 8] [--tokens N]
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "bench/timed_command.h"

namespace {

using Run = t3::bench::TimedRun;

Run compare(const std::string& command, const std::string& json) {
  return t3::bench::run_timed("bench_symmetry", command, json);
}

double relative(const nlohmann::json& full, const nlohmann::json& symmetric) {
  const double a = full.get<double>(), b = symmetric.get<double>();
  return a == b ? 0.0 : 100.0 * (b - a) / a;
}

}  // namespace

int main(int argc, char* argv[]) {
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: bench_symmetry T3SIM [--model M] [--sublayer S] [--tp N] "
                 "[--tokens N]\n");
    return 2;
  }
  std::string model = "t-nlg", sublayer = "fc2", tp = "8", tokens;
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    std::string* value = flag == "--model"      ? &model
                         : flag == "--sublayer" ? &sublayer
                         : flag == "--tp"       ? &tp
                         : flag == "--tokens"   ? &tokens
                                                : nullptr;
    if (!value) {
      std::fprintf(stderr, "bench_symmetry: unknown option %s\n", flag.c_str());
      return 2;
    }
    *value = argv[i + 1];
  }
  const std::string command = std::string(argv[1]) + " compare --jobs 2 --model " + model +
                              " --sublayer " + sublayer + " --tp " + tp +
                              (tokens.empty() ? "" : " --tokens " + tokens);
  // With the default point, the one-GPU comparison is what `t3sim` alone runs (on 2 cores).
  const bool defaults = model == "t-nlg" && sublayer == "fc2" && tp == "8" && tokens.empty();
  const Run full = compare(command, "bench-symmetry-full.json");
  const Run symmetric =
      compare(command + " --set sim.symmetry=rotational", "bench-symmetry-rotational.json");

  std::printf("bench_symmetry: %s %s, TP %s, every scenario\n", model.c_str(), sublayer.c_str(),
              tp.c_str());
  std::printf("  wall time, every GPU  %8.2f s\n", full.seconds);
  std::printf("  wall time, one GPU    %8.2f s   (speedup %.1fx)%s\n", symmetric.seconds,
              full.seconds / symmetric.seconds,
              defaults ? "; the default job (`t3sim` alone) on 2 cores, target 3 s" : "");
  std::printf("  %-14s %12s %12s %12s %16s\n", "scenario", "time us", "time diff", "DRAM diff",
              "worst category");
  for (const auto& one : full.results) {
    for (const auto& sym : symmetric.results) {
      if (sym["scenario"] != one["scenario"]) continue;
      double worst = 0;
      std::string worst_name = "-";
      for (const auto& [category, bytes] : one["dram_bytes"].items()) {
        if (bytes.get<double>() == 0) continue;
        const double d = relative(bytes, sym["dram_bytes"][category]);
        if (std::abs(d) > std::abs(worst)) {
          worst = d;
          worst_name = category;
        }
      }
      std::printf("  %-14s %12.1f %11.3f%% %11.3f%% %9.3f%% %s\n",
                  one["scenario"].get<std::string>().c_str(), one["time_ns"].get<double>() / 1e3,
                  relative(one["time_ns"], sym["time_ns"]),
                  relative(one["dram_bytes"]["total"], sym["dram_bytes"]["total"]), worst,
                  worst_name.c_str());
    }
  }
  return 0;
}
