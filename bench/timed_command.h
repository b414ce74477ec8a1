// Runs a t3sim command line that writes a result document, and times it: what the side-by-side
// benchmarks (bench_symmetry, bench_hbm_model) measure. A failed command ends the benchmark,
// naming its log.
#pragma once

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

namespace t3::bench {

struct TimedRun {
  double seconds = 0;
  nlohmann::json results;
};

// Runs `command --json json` (output to json.log) and reads the document it wrote.
inline TimedRun run_timed(const char* bench, const std::string& command, const std::string& json) {
  const auto start = std::chrono::steady_clock::now();
  if (std::system((command + " --json " + json + " > " + json + ".log 2>&1").c_str()) != 0) {
    std::fprintf(stderr, "%s: failed (see %s.log): %s\n", bench, json.c_str(), command.c_str());
    std::exit(1);
  }
  TimedRun run;
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::ifstream file(json);
  run.results = nlohmann::json::parse(file);
  return run;
}

}  // namespace t3::bench
