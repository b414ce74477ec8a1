// How every-GPU simulation time grows with the work: `t3sim run` for tokens 2048, 4096, 8192 x
// TP 8, 16, 32, one after the other in this one run, each with every GPU simulated. Prints each
// run's wall time and its wall time per (tokens x TP) relative to the smallest run's: a column
// that stays near 1 means time grows linearly with tokens x TP; and the same per simulated
// transaction (SM requests and DMA pieces), which separates the work's growth from the cost of
// each transaction. Output tiles are 64 rows high
// (gemm.tile_m=64) in every run, so that 2048 tokens split into 32 chunks of whole tile rows.
// Usage: bench_scaling T3SIM [--model mega-gpt-2] [--sublayer op] [--scenario sequential]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

int main(int argc, char* argv[]) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: bench_scaling T3SIM [--model M] [--sublayer S] [--scenario S]\n");
    return 2;
  }
  std::string model = "mega-gpt-2", sublayer = "op", scenario = "sequential";
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    std::string* value = flag == "--model"      ? &model
                         : flag == "--sublayer" ? &sublayer
                         : flag == "--scenario" ? &scenario
                                                : nullptr;
    if (!value) {
      std::fprintf(stderr, "bench_scaling: unknown option %s\n", flag.c_str());
      return 2;
    }
    *value = argv[i + 1];
  }
  std::printf("bench_scaling: %s %s, %s, every GPU simulated, gemm.tile_m=64\n", model.c_str(),
              sublayer.c_str(), scenario.c_str());
  std::printf("  %6s %4s %10s %14s %22s %22s\n", "tokens", "TP", "wall s", "transactions",
              "wall / (tokens x TP)", "wall / transaction");
  double unit = 0, per_transaction_unit = 0;
  for (int tokens : {2048, 4096, 8192}) {
    for (int tp : {8, 16, 32}) {
      const std::string command =
          std::string(argv[1]) + " run --model " + model + " --sublayer " + sublayer +
          " --scenario " + scenario + " --tp " + std::to_string(tp) + " --tokens " +
          std::to_string(tokens) +
          " --set gemm.tile_m=64 --json bench-scaling.json > /dev/null 2>&1";
      const auto start = std::chrono::steady_clock::now();
      if (std::system(command.c_str()) != 0) {
        std::fprintf(stderr, "bench_scaling: failed: %s\n", command.c_str());
        return 1;
      }
      const double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      std::ifstream file("bench-scaling.json");
      const double transactions =
          nlohmann::json::parse(file)["transactions"]["total"].get<double>();
      const double per_work = seconds / (static_cast<double>(tokens) * tp);
      const double per_transaction = seconds / transactions;
      if (unit == 0) unit = per_work;
      if (per_transaction_unit == 0) per_transaction_unit = per_transaction;
      std::printf("  %6d %4d %10.2f %14.3g %22.2f %22.2f\n", tokens, tp, seconds, transactions,
                  per_work / unit, per_transaction / per_transaction_unit);
      std::fflush(stdout);
    }
  }
  return 0;
}
