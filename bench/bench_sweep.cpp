// Simulation speed of a whole sweep: runs `t3sim sweep` (the paper's suite by default) as a child
// process and reports its wall time against the 60 s target, the transactions it simulated, the
// transactions per second, and the peak memory of the largest simulation process, all measured
// in this one run. With --baseline OTHER_T3SIM it also runs the same suite with that binary, one
// sweep after the other, and prints the ratio of their wall times (the machines are noisy:
// compare binaries side by side in one run, not against a figure from another day).
// By default the sweep simulates one GPU per run under rotational symmetry wherever valid (the
// 60 s target, on two cores); --full simulates every GPU, a cluster job as a whole, whose targets
// are per point (docs/performance.md), so its wall time is printed without one.
// Usage: bench_sweep T3SIM [--suite paper|FILE] [--jobs N] [--out DIR] [--baseline T3SIM] [--full]
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace {

constexpr double kTargetSeconds = 60.0;  // the whole paper sweep, one GPU per run, two cores
constexpr double kTargetMiB = 1024.0;    // peak memory of one simulation

struct Options {
  std::string t3sim, suite = "paper", jobs, out = "bench-sweep-out", baseline;
  bool full = false;
};

Options parse(int argc, char* argv[]) {
  Options options;
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: bench_sweep T3SIM [--suite paper|FILE] [--jobs N] [--out DIR] "
                 "[--baseline T3SIM] [--full]\n");
    std::exit(2);
  }
  options.t3sim = argv[1];
  for (int i = 2; i < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--full") {
      options.full = true;
      --i;  // takes no value
      continue;
    }
    if (i + 1 >= argc) {
      std::fprintf(stderr, "bench_sweep: %s needs a value\n", flag.c_str());
      std::exit(2);
    }
    if (flag == "--suite")
      options.suite = argv[i + 1];
    else if (flag == "--jobs")
      options.jobs = argv[i + 1];
    else if (flag == "--out")
      options.out = argv[i + 1];
    else if (flag == "--baseline")
      options.baseline = argv[i + 1];
    else {
      std::fprintf(stderr, "bench_sweep: unknown option %s\n", flag.c_str());
      std::exit(2);
    }
  }
  return options;
}

struct Sweep {
  double seconds = 0;
  long peak_kib = 0;  // largest resident set of any process of the sweep
};

// Runs `t3sim sweep` in a child that reports its descendants' peak resident set through a pipe,
// so that two sweeps in one bench are measured apart. Exits on failure.
Sweep run_sweep(const std::string& t3sim, const Options& options, const std::string& out) {
  std::vector<std::string> words = {t3sim, "sweep", "--suite", options.suite, "--out", out};
  if (!options.jobs.empty()) words.insert(words.end(), {"--jobs", options.jobs});
  if (options.full) words.push_back("--full");
  std::vector<char*> args;
  for (auto& word : words) args.push_back(word.data());
  args.push_back(nullptr);

  int report[2];
  if (pipe(report) != 0) {
    std::perror("bench_sweep: pipe");
    std::exit(1);
  }
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid == 0) {
    close(report[0]);
    const pid_t sweep = fork();
    if (sweep == 0) {
      execv(args[0], args.data());
      std::perror("bench_sweep: exec");
      _exit(127);
    }
    int status = 0;
    waitpid(sweep, &status, 0);
    // Every simulation is a descendant that was waited for: RUSAGE_CHILDREN holds the largest
    // resident set among them (kilobytes on Linux).
    rusage usage{};
    getrusage(RUSAGE_CHILDREN, &usage);
    const long peak = usage.ru_maxrss;
    if (write(report[1], &peak, sizeof peak) != sizeof peak) _exit(1);
    _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 1);
  }
  close(report[1]);
  Sweep result;
  const bool reported = read(report[0], &result.peak_kib, sizeof result.peak_kib) ==
                        static_cast<ssize_t>(sizeof result.peak_kib);
  close(report[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!reported || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "bench_sweep: the sweep of %s failed\n", t3sim.c_str());
    std::exit(1);
  }
  return result;
}

}  // namespace

int main(int argc, char* argv[]) {
  const Options options = parse(argc, argv);
  const Sweep sweep = run_sweep(options.t3sim, options, options.out);

  // Each workload's point file keeps its runs' wall times (results.json leaves them out, so that
  // equal sweeps give equal files).
  nlohmann::json records = nlohmann::json::array();
  for (const auto& entry : std::filesystem::directory_iterator(options.out + "/points")) {
    if (entry.path().extension() != ".json") continue;
    std::ifstream file(entry.path());
    for (auto& record : nlohmann::json::parse(file)) records.push_back(std::move(record));
  }
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
  const double seconds = sweep.seconds;
  std::printf("bench_sweep: suite %s, %zu records, %.0f simulations, %s\n", options.suite.c_str(),
              records.size(), simulated_runs,
              options.full ? "every GPU simulated (--full)" : "one GPU per run where valid");
  if (options.full) {
    std::printf("  wall time             %10.1f s\n", seconds);
  } else {
    std::printf("  wall time             %10.1f s   (target %.0f s: ratio target / wall = %.3f)\n",
                seconds, kTargetSeconds, kTargetSeconds / seconds);
  }
  std::printf("  simulation time, sum  %10.1f s   (over the simulation processes)\n", run_seconds);
  std::printf("  slowest simulation    %10.1f s   (%s)\n", slowest, slowest_name.c_str());
  std::printf("  transactions          %10.3g     (SM requests and DMA pieces)\n", transactions);
  std::printf("  transactions / s      %10.3g     (per wall second of the sweep)\n",
              transactions / seconds);
  std::printf("  peak memory           %10.1f MiB (largest process; target %.0f MiB: ratio %.3f)\n",
              sweep.peak_kib / 1024.0, kTargetMiB, kTargetMiB / (sweep.peak_kib / 1024.0));
  if (!options.baseline.empty()) {
    const Sweep base = run_sweep(options.baseline, options, options.out + "-baseline");
    std::printf("  baseline wall time    %10.1f s   (%s, same suite, run after)\n", base.seconds,
                options.baseline.c_str());
    std::printf("  speedup over baseline %10.2fx   (baseline wall / wall)\n",
                base.seconds / seconds);
    std::printf("  baseline peak memory  %10.1f MiB\n", base.peak_kib / 1024.0);
  }
  return 0;
}
