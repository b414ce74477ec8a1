// The all-gathered-input sublayer (fc1-ag) and CommFuse's Flash-AG (scenario commfuse-ag): the
// shape, the schedule each GPU's program follows, golden checks in functional mode (every GPU's
// input gathered whole and its GEMM output equal to the reference bit for bit), overlap, and the
// combinations that are refused naming what is wrong.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "config/config_io.h"
#include "experiments/isolated.h"
#include "protocol/dispatcher_registers.h"
#include "protocol/ring.h"
#include "testbenches/small_system.h"
#include "testbenches/tests/scenario_testing.h"
#include "workloads/model_zoo.h"
#include "workloads/scenario.h"
#include "workloads/sublayer.h"

using namespace t3;
using Catch::Contains;

namespace {

// 4 tile rows per GPU band of 32 rows: M = 128 n.
GemmShape small_shape(int gpus) {
  return {128 * gpus, 64, 48};
}

// One scenario on `gpus` GPUs of the small system; in functional mode with the golden check.
nlohmann::json run_gather(Scenario scenario, int gpus, SimMode mode,
                          const std::vector<std::string>& overrides = {}) {
  SystemConfig config = small_system(gpus, mode);
  for (const auto& assignment : overrides) apply_override(config, assignment);
  validate(config);
  const ScenarioPlan plan =
      plan_sublayer_scenario(config, Sublayer::Fc1AllGather, small_shape(gpus), scenario);
  return scenario_testing::run_golden_scenario(
      config, plan, 7, [&](TpGroup& group, nlohmann::json& result) {
        // When each GPU's first GEMM workgroup started and its all-gather kernel ended.
        double first_gemm = 1e30, gather_end = 0;
        for (int g = 0; g < gpus; ++g) {
          for (const LaunchRecord& launch : group.gpu(g).dispatcher.launches()) {
            if (launch.kind == dispatcher::kGemm) {
              first_gemm = std::min(first_gemm, launch.doorbell.to_seconds() * 1e9);
            } else {
              gather_end = std::max(gather_end, launch.end.to_seconds() * 1e9);
            }
          }
        }
        result["first_gemm_ns"] = first_gemm;
        result["gather_end_ns"] = gather_end;
      });
}

void golden(Scenario scenario, int gpus, const std::vector<std::string>& overrides = {}) {
  const auto results =
      run_isolated({[=] { return run_gather(scenario, gpus, SimMode::Functional, overrides); }}, 1);
  const nlohmann::json& result = results.at(0);
  REQUIRE(!result.contains("error"));
  CHECK(result.at("reduce_scatter_check") == "");
  CHECK(result.at("all_gather_check") == "");
}

// The GEMM launches of a program in order, as the row band (chunk) each computes, and whether a
// PollAtLeast came before it.
struct Band {
  int chunk;
  bool polled_before;
};
std::vector<Band> gemm_bands(const Program& program, const GemmShape& shape, int gpus,
                             const GpuGemm& gemm) {
  std::vector<Band> bands;
  bool polled = false;
  const std::uint64_t band_bytes = static_cast<std::uint64_t>(shape.m * shape.k * 2 / gpus);
  const std::uint64_t a_low = gemm.launch.dispatcher + dispatcher::kALow;
  for (std::size_t i = 0; i + 1 < program.commands.size(); ++i) {
    const HostCommand& c = program.commands[i];
    if (c.kind == HostCommand::Kind::PollAtLeast) polled = true;
    // The GEMM descriptor's A register pair holds the band's first byte.
    if (c.kind == HostCommand::Kind::WriteRegister && c.address == a_low) {
      const std::uint64_t at =
          c.value | (static_cast<std::uint64_t>(program.commands[i + 1].value) << 32);
      bands.push_back({static_cast<int>((at - gemm.buffers.a) / band_bytes), polled});
      polled = false;
    }
  }
  return bands;
}

}  // namespace

TEST_CASE("fc1-ag is the column-parallel FC-1 GEMM of the whole sequence", "[scenario_gather]") {
  const GemmShape shape = sublayer_gemm(model("t-nlg"), Sublayer::Fc1AllGather, 8, 8192);
  CHECK(shape.m == 8192);
  CHECK(shape.n == 4 * 4256 / 8);
  CHECK(shape.k == 4256);
  CHECK(gathers_input(Sublayer::Fc1AllGather));
  CHECK(parse_sublayer("fc1-ag") == Sublayer::Fc1AllGather);
  // The paper's four stay what sweeps run.
  CHECK(all_sublayers().size() == 4);
  CHECK(known_sublayers().back() == Sublayer::Fc1AllGather);
}

TEST_CASE("flash-ag computes the band it holds first, then each band as the ring delivers it",
          "[scenario_gather]") {
  const int n = 4;
  const SystemConfig config = small_system(n, SimMode::Timing);
  const GemmShape shape = small_shape(n);
  const ScenarioPlan plan =
      plan_sublayer_scenario(config, Sublayer::Fc1AllGather, shape, Scenario::CommFuseAg);
  REQUIRE(plan.gathers_input);
  REQUIRE(plan.phases.size() == 1);
  CHECK(plan.phases[0].kind == PhaseKind::AllGatherGemm);
  for (int g = 0; g < n; ++g) {
    INFO("GPU " << g);
    const auto bands = gemm_bands(plan.programs[static_cast<std::size_t>(g)], shape, n,
                                  plan.gemm.gpus[static_cast<std::size_t>(g)]);
    REQUIRE(bands.size() == static_cast<std::size_t>(n));
    CHECK(bands[0].chunk == owner_chunk(g, n));
    CHECK_FALSE(bands[0].polled_before);  // no wait for what is already here
    for (int step = 0; step < n - 1; ++step) {
      // What prev sent at its ring step `step`.
      CHECK(bands[static_cast<std::size_t>(step + 1)].chunk ==
            all_gather_chunk(prev_rank(g, n), step, n));
      CHECK(bands[static_cast<std::size_t>(step + 1)].polled_before);
    }
  }
}

TEST_CASE("sequential fc1-ag is exact: 4 GPUs", "[scenario_gather]") {
  golden(Scenario::Sequential, 4);
}
TEST_CASE("commfuse-ag is exact: 4 GPUs", "[scenario_gather]") {
  golden(Scenario::CommFuseAg, 4);
}
TEST_CASE("commfuse-ag is exact: 8 GPUs, two launches per band", "[scenario_gather]") {
  golden(Scenario::CommFuseAg, 8, {"workload.split=2"});
}
TEST_CASE("commfuse-ag is exact on a switch", "[scenario_gather]") {
  golden(Scenario::CommFuseAg, 4, {"topology.kind=switch"});
}

TEST_CASE("commfuse-ag overlaps the all-gather with the GEMM, sequential does not",
          "[scenario_gather]") {
  const auto results =
      run_isolated({[] { return run_gather(Scenario::Sequential, 4, SimMode::Timing); },
                    [] { return run_gather(Scenario::CommFuseAg, 4, SimMode::Timing); }},
                   1);
  const nlohmann::json& sequential = results.at(0);
  const nlohmann::json& fused = results.at(1);
  REQUIRE(!sequential.contains("error"));
  REQUIRE(!fused.contains("error"));
  // Sequential: the GEMM starts after the all-gather ended, which is all exposed.
  CHECK(sequential.at("first_gemm_ns").get<double>() >=
        sequential.at("gather_end_ns").get<double>());
  CHECK(sequential.at("exposed_comm_ns").get<double>() ==
        Approx(sequential.at("phases")[0].at("time_ns").get<double>()));
  // Flash-AG: the first band computes while the ring still runs, and less is exposed.
  CHECK(fused.at("first_gemm_ns").get<double>() < fused.at("gather_end_ns").get<double>());
  CHECK(fused.at("exposed_comm_ns").get<double>() < sequential.at("exposed_comm_ns").get<double>());
  // Its traffic is the all-gather's and the GEMM's: nothing reduced, nothing else.
  CHECK(fused.at("dram_bytes").at("rs_update").get<double>() == 0);
  CHECK(fused.at("dram_bytes").at("other").get<double>() == 0);
  CHECK(fused.at("link_bytes").at("payload").get<double>() >=
        sequential.at("link_bytes").at("payload").get<double>() * 0.99);
}

TEST_CASE("scenarios and sublayers that do not go together are refused, naming both",
          "[scenario_gather]") {
  const SystemConfig config = small_system(4, SimMode::Timing);
  // Reduce-scatter scenarios on the all-gather sublayer.
  for (Scenario scenario : {Scenario::T3, Scenario::T3Mca, Scenario::Ideal, Scenario::IdealRsNmc,
                            Scenario::Slicing, Scenario::CommFuse}) {
    INFO(to_string(scenario));
    CHECK_FALSE(applies_to(scenario, Sublayer::Fc1AllGather));
    CHECK_THROWS_WITH(
        plan_sublayer_scenario(config, Sublayer::Fc1AllGather, small_shape(4), scenario),
        Contains(std::string("scenario ") + to_string(scenario)) && Contains("fc1-ag") &&
            Contains("commfuse-ag"));
  }
  // Flash-AG on the sublayers that reduce their output.
  for (Sublayer sublayer : all_sublayers()) {
    INFO(to_string(sublayer));
    CHECK_THROWS_WITH(plan_sublayer_scenario(config, sublayer, {128, 64, 48}, Scenario::CommFuseAg),
                      Contains("scenario commfuse-ag") &&
                          Contains(std::string("sublayer ") + to_string(sublayer)));
  }
  CHECK_THROWS_WITH(plan_scenario(config, {128, 64, 48}, Scenario::CommFuseAg), Contains("fc1-ag"));
  // A split that does not cut the bands into whole tile rows.
  SystemConfig split = config;
  apply_override(split, "workload.split=3");
  CHECK_THROWS_WITH(
      plan_sublayer_scenario(split, Sublayer::Fc1AllGather, small_shape(4), Scenario::CommFuseAg),
      Contains("workload.split = 3"));
  // Rows that do not split into one band of whole tile rows per GPU.
  CHECK_THROWS_WITH(
      plan_sublayer_scenario(config, Sublayer::Fc1AllGather, {96, 64, 48}, Scenario::CommFuseAg),
      Contains("M = 96"));
}
