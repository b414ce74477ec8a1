// Simulation speed of the bank-level HBM against the bandwidth-pipe one on the default job
// (`t3sim compare --model t-nlg --sublayer fc2 --tp 8`, every GPU): both wall times side by side,
// their ratio (the target is bank within 1.5x of simple), and each scenario's time under both
// models so the price is seen beside what it buys.
// Usage: bench_hbm_model T3SIM [extra t3sim options, e.g. --set sim.symmetry=rotational]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "bench/timed_command.h"

namespace {

using Run = t3::bench::TimedRun;

Run compare(const std::string& command, const std::string& json) {
  return t3::bench::run_timed("bench_hbm_model", command, json);
}

}  // namespace

int main(int argc, char* argv[]) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: bench_hbm_model T3SIM [t3sim options]\n");
    return 2;
  }
  std::string extra;
  for (int i = 2; i < argc; ++i) extra += std::string(" ") + argv[i];
  // One scenario at a time (--jobs 1), so the wall time is the simulation's, not the machine's
  // spare cores'.
  const std::string command =
      std::string(argv[1]) + " compare --jobs 1 --model t-nlg --sublayer fc2 --tp 8" + extra;
  const Run simple = compare(command + " --set hbm.model=simple", "bench-hbm-simple.json");
  const Run bank = compare(command + " --set hbm.model=bank", "bench-hbm-bank.json");

  std::printf("bench_hbm_model: t-nlg fc2, TP 8, every scenario%s\n", extra.c_str());
  std::printf("  wall time, hbm.model=simple %8.2f s\n", simple.seconds);
  std::printf("  wall time, hbm.model=bank   %8.2f s   (ratio %.2fx, target <= 1.5x)\n",
              bank.seconds, bank.seconds / simple.seconds);
  std::printf("  %-14s %14s %14s %10s\n", "scenario", "simple us", "bank us", "bank/simple");
  for (const auto& one : simple.results) {
    for (const auto& other : bank.results) {
      if (other["scenario"] != one["scenario"]) continue;
      const double a = one["time_ns"].get<double>() / 1e3;
      const double b = other["time_ns"].get<double>() / 1e3;
      std::printf("  %-14s %14.1f %14.1f %10.3f\n", one["scenario"].get<std::string>().c_str(), a,
                  b, b / a);
    }
  }
  return 0;
}
