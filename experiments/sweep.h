// Sweeps: many sublayer runs as one experiment. A suite is a list of workload points (model,
// sublayer, TP degree, tokens, parameter overrides) and the scenarios to run on each; the paper's
// suite is built in, any other comes from a JSON file. Results are written as results.json,
// results.csv and summary.md.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "protocol/gemm_layout.h"
#include "workloads/scenario.h"

namespace t3 {

struct SweepPoint {
  std::string model;
  std::string sublayer;
  int tp = 0;
  std::int64_t tokens = 0;        // 0: the system's workload.tokens
  std::vector<std::string> sets;  // path=value overrides, applied after the system's own
  std::size_t index = 0;          // position in the suite (its emitted job and result file)
  // A custom per-GPU GEMM (workloads/sublayer.h): model and sublayer are "custom", tokens its M.
  std::optional<GemmShape> shape;
};

struct Suite {
  std::string name;
  std::vector<SweepPoint> points;
  std::vector<Scenario> scenarios;  // sequential first
};

// The T3 paper's evaluation: Mega-GPT-2 and T-NLG at TP 8 and 16; GPT-3, PaLM and MT-NLG at
// TP 32; sublayers op, fc2, fc1, ip; all five scenarios.
Suite paper_suite();

// "paper", or a JSON file:
//   {"name": "...", "scenarios": [...], "groups": [PRODUCT, ...]}   or a single PRODUCT's keys
//   at the top level, where PRODUCT = {"models": [...], "tp": [...], "sublayers": [...],
//   "tokens": [...], "set": {"dotted.path": [values...], ...}}; every list is a factor of a
//   cartesian product (sublayers default to all four, tokens to the system's, scenarios to all).
//   A PRODUCT of custom GEMMs has "shapes": ["M,N,K" or [M, N, K], ...] in place of models,
//   sublayers and tokens.
// Throws ConfigError naming the file and key for anything malformed or unknown.
Suite load_suite(const std::string& name_or_path);

// One record per run: the run's result with its point. Writes DIR/results.json,
// DIR/results.csv and DIR/summary.md (tables per model of speedup over sequential and DRAM
// data-movement reduction per scenario, with geomean and max rows).
// `missing` names result files of workloads left out (a partial collect); summary.md lists them.
void write_sweep(const std::string& dir, const Suite& suite, const std::string& system,
                 const std::vector<std::vector<nlohmann::json>>& results,
                 const std::vector<std::string>& missing = {});

}  // namespace t3
