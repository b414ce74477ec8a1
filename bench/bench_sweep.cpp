// Simulation speed of a whole sweep: runs `t3sim sweep` (the paper's suite by default) as a child
// process and reports its wall time against the 120 s target, the transactions it simulated, the
// transactions per second, and the peak memory of the largest simulation process, all measured
// in this one run.
// Usage: bench_sweep T3SIM [--suite paper|FILE] [--jobs N] [--out DIR]
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace {

constexpr double kTargetSeconds = 120.0;  // the whole paper sweep, every GPU simulated

struct Options {
  std::string t3sim, suite = "paper", jobs, out = "bench-sweep-out";
};

Options parse(int argc, char* argv[]) {
  Options options;
  if (argc < 2) {
    std::fprintf(stderr, "usage: bench_sweep T3SIM [--suite paper|FILE] [--jobs N] [--out DIR]\n");
    std::exit(2);
  }
  options.t3sim = argv[1];
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--suite")
      options.suite = argv[i + 1];
    else if (flag == "--jobs")
      options.jobs = argv[i + 1];
    else if (flag == "--out")
      options.out = argv[i + 1];
    else {
      std::fprintf(stderr, "bench_sweep: unknown option %s\n", flag.c_str());
      std::exit(2);
    }
  }
  return options;
}

}  // namespace

int main(int argc, char* argv[]) {
  const Options options = parse(argc, argv);
  std::vector<std::string> words = {options.t3sim, "sweep", "--suite",
                                    options.suite, "--out", options.out};
  if (!options.jobs.empty()) words.insert(words.end(), {"--jobs", options.jobs});
  std::vector<char*> args;
  for (auto& word : words) args.push_back(word.data());
  args.push_back(nullptr);

  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid == 0) {
    execv(args[0], args.data());
    std::perror("bench_sweep: exec");
    _exit(127);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "bench_sweep: the sweep failed\n");
    return 1;
  }
  // Every simulation is a descendant that was waited for: RUSAGE_CHILDREN holds the largest
  // resident set among them (kilobytes on Linux).
  rusage usage{};
  getrusage(RUSAGE_CHILDREN, &usage);

  std::ifstream file(options.out + "/results.json");
  const nlohmann::json records = nlohmann::json::parse(file);
  double transactions = 0, simulated_runs = 0, run_seconds = 0, slowest = 0;
  std::string slowest_name;
  for (const auto& record : records) {
    if (record["scenario"] == "ideal") continue;  // derived from the sequential run, not simulated
    transactions += record["transactions"]["total"].get<double>();
    run_seconds += record["wall_time_s"].get<double>();
    ++simulated_runs;
    if (record["wall_time_s"].get<double>() > slowest) {
      slowest = record["wall_time_s"];
      slowest_name = record["model"].get<std::string>() + " " +
                     record["sublayer"].get<std::string>() + " TP " +
                     std::to_string(record["tp"].get<int>()) + " " +
                     record["scenario"].get<std::string>();
    }
  }
  std::printf("bench_sweep: suite %s, %zu records, %.0f simulations\n", options.suite.c_str(),
              records.size(), simulated_runs);
  std::printf("  wall time             %10.1f s   (target %.0f s: ratio target / wall = %.3f)\n",
              seconds, kTargetSeconds, kTargetSeconds / seconds);
  std::printf("  simulation time, sum  %10.1f s   (over the simulation processes)\n", run_seconds);
  std::printf("  slowest simulation    %10.1f s   (%s)\n", slowest, slowest_name.c_str());
  std::printf("  transactions          %10.3g     (SM requests and DMA pieces)\n", transactions);
  std::printf("  transactions / s      %10.3g     (per wall second of the sweep)\n",
              transactions / seconds);
  std::printf("  peak memory           %10.1f MiB (largest process; target 2048 MiB: ratio %.3f)\n",
              usage.ru_maxrss / 1024.0, 2048.0 / (usage.ru_maxrss / 1024.0));
  return 0;
}
