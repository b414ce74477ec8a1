// Exposed communication (experiments/activity.h, a result's exposed_comm_ns): the interval
// arithmetic on its own, and what it measures of the scenarios: all of sequential's collectives,
// T3's all-gather and what of its reduce-scatter outlasts the GEMM, ideal's derivation.
#include <catch2/catch.hpp>

#include <string>

#include "config/config_io.h"
#include "experiments/activity.h"
#include "experiments/isolated.h"
#include "experiments/scenario_run.h"
#include "testbenches/small_system.h"
#include "workloads/model_zoo.h"
#include "workloads/sublayer.h"

using namespace t3;

TEST_CASE("uncovered time: the union of one kind minus the union of the other, in a window",
          "[exposed]") {
  // Active [0, 10) and [5, 20) = [0, 20); covered [2, 4) and [3, 6) = [2, 6) and [15, 30).
  CHECK(uncovered_ns({{0, 10}, {5, 20}}, {{2, 4}, {3, 6}, {15, 30}}, {0, 100}) == 11);
  // The window clips both.
  CHECK(uncovered_ns({{0, 10}, {5, 20}}, {{2, 4}, {3, 6}, {15, 30}}, {3, 18}) == 9);
  // Nothing covered: the union; nothing active: zero; empty intervals count for nothing.
  CHECK(uncovered_ns({{5, 7}, {1, 3}, {2, 4}}, {}, {0, 100}) == 5);
  CHECK(uncovered_ns({}, {{0, 10}}, {0, 100}) == 0);
  CHECK(uncovered_ns({{4, 4}, {6, 5}}, {}, {0, 100}) == 0);
  // Covered completely, and a cover that ends exactly where the next active interval starts.
  CHECK(uncovered_ns({{1, 2}, {3, 4}}, {{0, 5}}, {0, 100}) == 0);
  CHECK(uncovered_ns({{0, 2}, {2, 6}}, {{0, 2}, {4, 5}}, {0, 100}) == 3);
}

namespace {

nlohmann::json run(Scenario scenario) {
  SystemConfig config = small_system(4, SimMode::Timing);
  // The plain DRAM map, on which T3's fused reduce-scatter outlasts this GEMM by a tail the case
  // checks is counted (with the hashed map the GEMM outlasts it and nothing of it is exposed).
  apply_override(config, "hbm.bank.address_hash=plain");
  ScenarioRun run(config, plan_scenario(config, {1024, 512, 64}, scenario));
  run.run();
  return run.result();
}

double phase(const nlohmann::json& result, const std::string& name) {
  for (const auto& p : result.at("phases")) {
    if (p.at("name") == name) return p.at("time_ns").get<double>();
  }
  FAIL("no phase " << name);
  return 0;
}

}  // namespace

TEST_CASE("sequential exposes its collectives, T3 its all-gather and reduce-scatter tail",
          "[exposed]") {
  // One elaboration per process: each scenario in a child of its own.
  const std::vector<nlohmann::json> results =
      run_isolated({[] { return run(Scenario::Sequential); }, [] { return run(Scenario::T3); }}, 1);
  const nlohmann::json& sequential = results.at(0);
  const nlohmann::json& t3 = results.at(1);
  REQUIRE(!sequential.contains("error"));
  REQUIRE(!t3.contains("error"));
  const double rs = phase(sequential, "reduce_scatter"), ag = phase(sequential, "all_gather");
  // Nothing but the collectives runs in their phases: all of both is exposed.
  const double exposed = sequential.at("exposed_comm_ns");
  CHECK(exposed == Approx(rs + ag));
  // T3: the all-gather is exposed; the fused reduce-scatter only where it outlasts the GEMM,
  // which takes at least as long as it does alone (here it does not: the fused phase ends with
  // the GEMM, so the all-gather alone is exposed).
  const double t3_exposed = t3.at("exposed_comm_ns");
  CHECK(t3_exposed >= Approx(phase(t3, "all_gather")));
  CHECK(t3_exposed <= phase(t3, "all_gather") + phase(t3, "gemm_rs") - phase(sequential, "gemm"));
  CHECK(t3_exposed < exposed);
  // Ideal: what of the reduce-scatter outlasts the GEMM, and the all-gather.
  const nlohmann::json ideal = ideal_result(sequential);
  CHECK(ideal.at("exposed_comm_ns").get<double>() ==
        Approx(std::max(0.0, rs - phase(sequential, "gemm")) + ag));
}

TEST_CASE("slicing exposes its last band's reduce-scatter, commfuse less", "[exposed]") {
  // Mega-GPT-2's FC-2 on 4 GPUs of t3-paper, 2048 tokens: four bands, each band's GEMM about as
  // long as its reduce-scatter (comm per step ~ compute per step).
  const auto paper = [](Scenario scenario) {
    SystemConfig config = load_system("t3-paper");
    apply_override(config, "gpus=4");
    ScenarioRun run(
        config, plan_scenario(config, sublayer_gemm(model("mega-gpt-2"), Sublayer::Fc2, 4, 2048),
                              scenario));
    run.run();
    return run.result();
  };
  const auto results = run_isolated(
      {[&] { return paper(Scenario::Sequential); }, [&] { return paper(Scenario::Slicing); },
       [&] { return paper(Scenario::CommFuse); }},
      1);
  const nlohmann::json& sequential = results.at(0);
  const nlohmann::json& slicing = results.at(1);
  const nlohmann::json& commfuse = results.at(2);
  REQUIRE(!sequential.contains("error"));
  REQUIRE(!slicing.contains("error"));
  REQUIRE(!commfuse.contains("error"));
  // The fused phase exposes about one band's reduce-scatter: a quarter of sequential's.
  const double tail = slicing.at("exposed_comm_ns").get<double>() - phase(slicing, "all_gather");
  const double band = phase(sequential, "reduce_scatter") / 4;
  INFO("tail " << tail << " ns, a band's share of the reduce-scatter " << band << " ns");
  CHECK(tail > 0.5 * band);
  CHECK(tail < 2 * band);
  // CommFuse keeps the chunk it owns for last: what its fused phase exposes is the ring waiting
  // at its gate while the host launches the next chunk, not a reduce-scatter tail; it exposes
  // less than slicing and less than half of sequential's reduce-scatter.
  const double fused = commfuse.at("exposed_comm_ns").get<double>() - phase(commfuse, "all_gather");
  INFO("commfuse exposes " << fused << " ns in its fused phase");
  CHECK(fused < tail);
  CHECK(fused < 0.5 * phase(sequential, "reduce_scatter"));
}
