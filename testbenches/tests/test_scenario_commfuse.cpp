// CommFuse's Flash-RS with its sends on the copy engine (workload.commfuse_engine = copy): golden
// checks in functional mode on 4 and 8 GPUs, what it changes against the SM variant (the sends
// leave the SMs for the DMA engine; only the adds take SM slots), and its refusals.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "config/config_io.h"
#include "experiments/isolated.h"
#include "testbenches/small_system.h"
#include "testbenches/tests/scenario_testing.h"
#include "workloads/scenario.h"

using namespace t3;
using Catch::Contains;

namespace {

// 2 tile rows per chunk of 32 rows.
GemmShape small_shape(int gpus) {
  return {64 * gpus, 48, 32};
}

// CommFuse on the small system; its golden check in functional mode, and what the SMs and DMA
// engines did.
nlohmann::json run_commfuse(const std::string& engine, int gpus, SimMode mode,
                            const std::vector<std::string>& overrides = {}) {
  SystemConfig config = small_system(gpus, mode);
  apply_override(config, "workload.commfuse_engine=" + engine);
  for (const auto& assignment : overrides) apply_override(config, assignment);
  validate(config);
  const ScenarioPlan plan = plan_scenario(config, small_shape(gpus), Scenario::CommFuse);
  nlohmann::json result = scenario_testing::run_golden_scenario(
      config, plan, 11, [&](TpGroup& group, nlohmann::json& found) {
        // SM slot time held by collective workgroups (ns, all GPUs), and the DMA engines' traffic.
        double collective_slot_ns = 0;
        std::uint64_t dma_written = 0, dma_doorbells = 0;
        for (int g = 0; g < gpus; ++g) {
          const Dispatcher& dispatcher = group.gpu(g).dispatcher;
          std::vector<bool> collective;
          for (const LaunchRecord& launch : dispatcher.launches()) {
            collective.resize(std::max<std::size_t>(collective.size(), launch.launch + 1), false);
            collective[launch.launch] = launch.kind == dispatcher::kCollective;
          }
          for (const DispatchRecord& wg : dispatcher.dispatched()) {
            if (collective.at(wg.launch))
              collective_slot_ns += (wg.end - wg.time).to_seconds() * 1e9;
          }
          dma_written += group.gpu(g).dma.stats().bytes_written;
          dma_doorbells += group.gpu(g).dma.stats().doorbells;
        }
        found["collective_slot_ns"] = collective_slot_ns;
        found["dma_written"] = dma_written;
        found["dma_doorbells"] = dma_doorbells;
      });
  result["chunk_bytes"] = plan.output_bytes / static_cast<std::uint64_t>(gpus);
  return result;
}

void golden(int gpus, const std::vector<std::string>& overrides = {}) {
  const auto results =
      run_isolated({[=] { return run_commfuse("copy", gpus, SimMode::Functional, overrides); }}, 1);
  const nlohmann::json& result = results.at(0);
  REQUIRE(!result.contains("error"));
  CHECK(result.at("reduce_scatter_check") == "");
  CHECK(result.at("all_gather_check") == "");
}

}  // namespace

TEST_CASE("commfuse on the copy engine is exact: 4 GPUs", "[commfuse_copy]") {
  golden(4);
}
TEST_CASE("commfuse on the copy engine is exact: 8 GPUs on a switch", "[commfuse_copy]") {
  golden(8, {"topology.kind=switch"});
}
TEST_CASE("commfuse on the copy engine is exact: two launches per chunk", "[commfuse_copy]") {
  golden(4, {"workload.split=2"});
}

TEST_CASE("the copy engine takes the sends off the SMs", "[commfuse_copy]") {
  const int n = 4;
  const auto results = run_isolated({[] { return run_commfuse("sm", n, SimMode::Timing); },
                                     [] { return run_commfuse("copy", n, SimMode::Timing); }},
                                    1);
  const nlohmann::json& sm = results.at(0);
  const nlohmann::json& copy = results.at(1);
  REQUIRE(!sm.contains("error"));
  REQUIRE(!copy.contains("error"));
  const auto chunk = copy.at("chunk_bytes").get<std::uint64_t>();
  // SM variant: nothing on the DMA engines; the ring kernel stays resident through the fused
  // phase.
  CHECK(sm.at("dma_doorbells").get<std::uint64_t>() == 0);
  // Copy variant: every GPU copies n - 1 partial sums and n - 1 8-byte step flags.
  CHECK(copy.at("dma_doorbells").get<std::uint64_t>() == 2ull * n * (n - 1));
  CHECK(copy.at("dma_written").get<std::uint64_t>() == n * (n - 1) * (chunk + 8));
  // Only the adds (and the all-gather, the same in both) hold SM slots.
  CHECK(copy.at("collective_slot_ns").get<double>() <
        0.5 * sm.at("collective_slot_ns").get<double>());
}

TEST_CASE("the copy engine's descriptors bound the group", "[commfuse_copy]") {
  SystemConfig config = small_system(17, SimMode::Timing);
  apply_override(config, "workload.commfuse_engine=copy");
  CHECK_THROWS_WITH(plan_scenario(config, small_shape(17), Scenario::CommFuse),
                    Contains("workload.commfuse_engine = copy") && Contains("at most 16 GPUs"));
  CHECK_THROWS_WITH(apply_override(config, "workload.commfuse_engine=dma"),
                    Contains("workload.commfuse_engine"));
}
