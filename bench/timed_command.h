// Runs a t3sim command line that writes a result document, and times it: what the side-by-side
// benchmarks (bench_symmetry, bench_hbm_model) measure. A failed command ends the benchmark,
// naming its log.
#pragma once

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include <sys/resource.h>

#include <nlohmann/json.hpp>

namespace t3::bench {

struct TimedRun {
  double seconds = 0;      // wall time
  double cpu_seconds = 0;  // user and system time of the command and its children
  nlohmann::json results;
};

// User and system time of every waited-for child process so far.
inline double children_cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_CHILDREN, &usage);
  const auto seconds = [](const timeval& t) { return t.tv_sec + t.tv_usec / 1e6; };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
}

// Runs `command --json json` (output to json.log) and reads the document it wrote.
inline TimedRun run_timed(const char* bench, const std::string& command, const std::string& json) {
  const double cpu_start = children_cpu_seconds();
  const auto start = std::chrono::steady_clock::now();
  if (std::system((command + " --json " + json + " > " + json + ".log 2>&1").c_str()) != 0) {
    std::fprintf(stderr, "%s: failed (see %s.log): %s\n", bench, json.c_str(), command.c_str());
    std::exit(1);
  }
  TimedRun run;
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  run.cpu_seconds = children_cpu_seconds() - cpu_start;
  std::ifstream file(json);
  run.results = nlohmann::json::parse(file);
  return run;
}

}  // namespace t3::bench
