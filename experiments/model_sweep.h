// The end-to-end suite of `t3sim sweep --suite e2e`: whole-model runs (model_run.h) of every
// paper model at each of its paper TP degrees, training and prompt-phase inference, under every
// scenario, and the files they are summarised in (results.json, results.csv, summary.md).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "workloads/scenario.h"
#include "workloads/transformer_layer.h"

namespace t3 {

struct ModelPoint {
  std::string model;
  int tp = 0;
  LayerPhase phase = LayerPhase::Training;
};

struct ModelSuite {
  std::string name;
  std::vector<ModelPoint> points;
  std::vector<Scenario> scenarios;  // sequential first
  // Paper (model, TP) pairs a Megatron layer cannot be split for, each with the reason.
  std::vector<std::string> left_out;
};

// Every model with paper TP degrees, at each of them where Megatron can split its layer (the TP
// degree divides the heads and the hidden size), training then inference; the pairs it cannot
// split are listed in left_out with the reason. All five paper scenarios.
ModelSuite e2e_suite();

// results.json (one model document per point, suite order), results.csv (one row per point and
// scenario: layer time, its breakdown, model time, speedup) and summary.md (speedups per phase
// with geomean and max rows, where a sequential layer's time goes, and what was left out).
void write_model_sweep(const std::string& dir, const ModelSuite& suite, const std::string& system,
                       const std::vector<nlohmann::json>& documents);

}  // namespace t3
