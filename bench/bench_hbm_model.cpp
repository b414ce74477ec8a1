// Simulation speed of the bank-level HBM against the bandwidth-pipe one on the default job
// (`t3sim compare --model t-nlg --sublayer fc2 --tp 8 --set sim.symmetry=rotational`, one GPU
// standing for eight; add `--set sim.symmetry=none` for every GPU): both wall times side by side,
// their ratio (the target is bank within 1.5x of simple), and each scenario's time under both
// models so the price is seen beside what it buys. Wall time on a shared machine drifts by tens of
// percent from one run to the next, so the two models run in pairs, N times (--repeat, default
// 5), each pair back to back with the order alternating, and the median of the pairs' ratios is
// the figure. CPU time (user + system of the runs) is printed beside it: it leaves out time a
// run waits for a core, so where it drifts with the wall time, the machine's speed moved.
// Usage: bench_hbm_model T3SIM [--repeat N] [extra t3sim options, e.g. --set sim.symmetry=none]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/timed_command.h"

namespace {

using Run = t3::bench::TimedRun;

Run compare(const std::string& command, const std::string& json) {
  return t3::bench::run_timed("bench_hbm_model", command, json);
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

}  // namespace

int main(int argc, char* argv[]) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: bench_hbm_model T3SIM [--repeat N] [t3sim options]\n");
    return 2;
  }
  int repeat = 5;
  int first_extra = 2;
  if (argc >= 4 && std::string(argv[2]) == "--repeat") {
    repeat = std::atoi(argv[3]);
    if (repeat < 1) {
      std::fprintf(stderr, "bench_hbm_model: --repeat %s: must be a positive count\n", argv[3]);
      return 2;
    }
    first_extra = 4;
  }
  std::string extra;
  for (int i = first_extra; i < argc; ++i) extra += std::string(" ") + argv[i];
  // One scenario at a time (--jobs 1), so the wall time is the simulation's, not the machine's
  // spare cores'.
  const std::string command = std::string(argv[1]) +
                              " compare --jobs 1 --model t-nlg --sublayer fc2 --tp 8"
                              " --set sim.symmetry=rotational" +
                              extra;
  std::vector<double> simple_s, bank_s, ratios, cpu_ratios, cpu_simple_s, cpu_bank_s;
  Run simple, bank;
  for (int round = 0; round < repeat; ++round) {
    const auto run_simple = [&] {
      simple = compare(command + " --set hbm.model=simple", "bench-hbm-simple.json");
    };
    const auto run_bank = [&] {
      bank = compare(command + " --set hbm.model=bank", "bench-hbm-bank.json");
    };
    if (round % 2 == 0) {
      run_simple();
      run_bank();
    } else {
      run_bank();
      run_simple();
    }
    simple_s.push_back(simple.seconds);
    bank_s.push_back(bank.seconds);
    ratios.push_back(bank.seconds / simple.seconds);
    cpu_ratios.push_back(bank.cpu_seconds / simple.cpu_seconds);
    cpu_simple_s.push_back(simple.cpu_seconds);
    cpu_bank_s.push_back(bank.cpu_seconds);
  }

  std::printf("bench_hbm_model: t-nlg fc2, TP 8, every scenario, --set sim.symmetry=rotational%s\n",
              extra.c_str());
  std::printf("  %-6s %12s %12s %8s %14s %12s %8s\n", "pair", "simple s", "bank s", "ratio",
              "simple cpu s", "bank cpu s", "ratio");
  for (int round = 0; round < repeat; ++round) {
    std::printf("  %-6d %12.2f %12.2f %7.2fx %14.2f %12.2f %7.2fx\n", round + 1, simple_s[round],
                bank_s[round], ratios[round], cpu_simple_s[round], cpu_bank_s[round],
                cpu_ratios[round]);
  }
  std::printf("  median ratio %.2fx (target <= 1.5x); fastest bank / fastest simple %.2fx\n",
              median(ratios),
              *std::min_element(bank_s.begin(), bank_s.end()) /
                  *std::min_element(simple_s.begin(), simple_s.end()));
  std::printf("  median CPU-time ratio %.2fx (user + system time of the runs)\n",
              median(cpu_ratios));
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
