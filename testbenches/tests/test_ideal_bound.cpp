// Ideal (max(GEMM alone, reduce-scatter alone) + all-gather) is a bound T3 cannot beat: with the
// fastest reduce-scatter the system runs alone (the SM ring; on a switch or mesh also the SM
// direct one, the DMA + NMC direct one and the SMs' push of each partial to its owner as
// near-memory updates, T3's communication run alone), ideal's speedup is at least t3's for every
// sublayer of T-NLG and Mega-GPT-2 at TP 8 on every preset. 1024 tokens and 128-row tiles keep
// the runs short (about a minute of CPU in all); each preset is a case of its own, so ctest runs
// them side by side.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "config/config_io.h"
#include "experiments/scenario_job.h"
#include "experiments/scenario_run.h"
#include "workloads/sublayer.h"

using namespace t3;

namespace {

// Every sublayer of both models on `preset` at TP 8: ideal's speedup is at least t3's. Where the
// system runs a direct reduce-scatter ideal says which it took.
void check_ideal_bounds_t3(const std::string& preset, bool symmetric) {
  SystemConfig config = load_system(preset);
  apply_override(config, "gpus=8");
  apply_override(config, "workload.tokens=1024");
  apply_override(config, "gemm.tile_m=128");  // 1024 tokens in 8 chunks of whole tile rows
  if (symmetric) apply_override(config, "sim.symmetry=rotational");
  validate(config);
  std::vector<ScenarioJob> points;
  for (const char* model : {"t-nlg", "mega-gpt-2"}) {
    for (const char* sublayer : {"fc1", "fc2", "op", "ip"}) {
      ScenarioJob job;
      job.config = config;
      job.model = model;
      job.sublayer = parse_sublayer(sublayer);
      points.push_back(job);
    }
  }
  const auto results = run_scenarios(points, {Scenario::T3, Scenario::Ideal}, 1);
  for (std::size_t p = 0; p < points.size(); ++p) {
    const nlohmann::json& t3 = results[p][0];
    const nlohmann::json& ideal = results[p][1];
    INFO(preset << " " << describe(points[p]) << ": t3 " << t3["speedup_vs_sequential"]
                << ", ideal " << ideal["speedup_vs_sequential"] << " "
                << ideal["ideal_reduce_scatter"].dump());
    const nlohmann::json& choice = ideal["ideal_reduce_scatter"];
    CHECK(ideal["speedup_vs_sequential"].get<double>() >=
          t3["speedup_vs_sequential"].get<double>());
    CHECK(choice.contains("direct_sm_ns") == ideal_simulated(config));
    CHECK(choice.contains("direct_dma_nmc_ns") == ideal_simulated(config));
    CHECK(choice.contains("direct_sm_nmc_ns") == ideal_simulated(config));
    // Sequential's own reduce-scatter is the ring's, or NVLS's where sequential_uses_nvls holds.
    const bool sequential_taken = choice["used"] == "ring" || choice["used"] == "nvls";
    CHECK(ideal["collective"] == (sequential_taken ? choice["used"].get<std::string>() : "direct"));
    // The one taken is the fastest of those measured.
    const double used = choice[choice["used"].get<std::string>() + "_ns"].get<double>();
    for (const char* name : {"ring_ns", "nvls_ns", "direct_sm_ns", "direct_dma_nmc_ns", "direct_sm_nmc_ns"}) {
      if (choice.contains(name)) CHECK(used <= choice[name].get<double>());
    }
  }
}

}  // namespace

TEST_CASE("ideal bounds t3 on t3-paper (ring)", "[ideal]") {
  check_ideal_bounds_t3("t3-paper", true);
}

TEST_CASE("ideal bounds t3 on a100-8 (switch)", "[ideal]") {
  check_ideal_bounds_t3("a100-8", false);
}

TEST_CASE("ideal bounds t3 on h100-8 (switch)", "[ideal]") {
  check_ideal_bounds_t3("h100-8", false);
}

TEST_CASE("ideal bounds t3 on mi300x-8 (fully-connected)", "[ideal]") {
  check_ideal_bounds_t3("mi300x-8", false);
}

TEST_CASE("ideal takes the fastest of the ring and direct reduce-scatters", "[ideal]") {
  const auto run = [](const char* scenario, double gemm, double rs, double ag) {
    return nlohmann::json{{"scenario", scenario},
                          {"collective", "ring"},
                          {"time_ns", gemm + rs + ag},
                          {"phases",
                           {{{"name", "gemm"}, {"time_ns", gemm}},
                            {{"name", "reduce_scatter"}, {"time_ns", rs}},
                            {{"name", "all_gather"}, {"time_ns", ag}}}}};
  };
  const nlohmann::json sequential = run("sequential", 100, 300, 50);
  const nlohmann::json sm = run("ideal", 100, 250, 60);
  const nlohmann::json dma = run("ideal-rs-nmc", 100, 200, 70);
  const nlohmann::json slow = run("ideal-rs-nmc", 100, 400, 40);
  const nlohmann::json fastest_dma = ideal_result(sequential, {sm, dma});
  CHECK(fastest_dma["time_ns"] == 270.0);  // max(100, 200) + 70: the DMA run's phases
  CHECK(fastest_dma["collective"] == "direct");
  CHECK(fastest_dma["ideal_reduce_scatter"]["used"] == "direct_dma_nmc");
  CHECK(fastest_dma["ideal_reduce_scatter"]["direct_sm_ns"] == 250.0);
  CHECK(fastest_dma["ideal_reduce_scatter"]["direct_dma_nmc_ns"] == 200.0);
  CHECK(fastest_dma["ideal_reduce_scatter"]["ring_ns"] == 300.0);
  const nlohmann::json fastest_sm = ideal_result(sequential, {sm, slow});
  CHECK(fastest_sm["time_ns"] == 310.0);  // max(100, 250) + 60
  CHECK(fastest_sm["ideal_reduce_scatter"]["used"] == "direct_sm");
  const nlohmann::json ring = ideal_result(sequential, {nullptr, slow});
  CHECK(ring["time_ns"] == 350.0);  // max(100, 300) + 50: the sequential run's
  CHECK(ring["collective"] == "ring");
  CHECK(ring["ideal_reduce_scatter"]["used"] == "ring");
  CHECK(!ring["ideal_reduce_scatter"].contains("direct_sm_ns"));
  // The SMs' push with near-memory updates (ideal-rs-sm-nmc) is a candidate of its own.
  const nlohmann::json push = run("ideal-rs-sm-nmc", 100, 150, 65);
  const nlohmann::json fastest_push = ideal_result(sequential, {sm, dma, push});
  CHECK(fastest_push["time_ns"] == 215.0);  // max(100, 150) + 65
  CHECK(fastest_push["collective"] == "direct");
  CHECK(fastest_push["ideal_reduce_scatter"]["used"] == "direct_sm_nmc");
  CHECK(fastest_push["ideal_reduce_scatter"]["direct_sm_nmc_ns"] == 150.0);
  CHECK(fastest_push["ideal_reduce_scatter"]["direct_dma_nmc_ns"] == 200.0);
  const nlohmann::json alone = ideal_result(sequential);
  CHECK(alone["time_ns"] == 350.0);
  CHECK(alone["ideal_reduce_scatter"].size() == 2);  // used, ring_ns
}

TEST_CASE("ideal has programs of its own where a direct collective can run", "[ideal]") {
  for (const auto& [preset, own] : {std::pair{"t3-paper", false}, std::pair{"a100-8", true},
                                    std::pair{"h100-8", true}, std::pair{"mi300x-8", true}}) {
    SystemConfig config = load_system(preset);
    INFO(preset);
    CHECK(ideal_simulated(config) == own);
    apply_override(config, "workload.collective=ring");
    CHECK(!ideal_simulated(config));  // ring asked for: ideal keeps the sequential ring
  }
}
