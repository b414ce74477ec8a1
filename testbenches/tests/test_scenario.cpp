// The five scenarios on the whole group: golden data in functional mode for TP 2, 4 and 8, the
// DRAM categories against the blocks' own counters, the paper's ring order and staggering from
// the recorded events, and the ideal scenario's arithmetic.
#include <catch2/catch.hpp>

#include <array>
#include <set>

#include "config/config_io.h"
#include "experiments/scenario_run.h"
#include "harness/scenario_check.h"
#include "protocol/dispatcher_registers.h"
#include "protocol/mmio_map.h"
#include "testbenches/small_system.h"
#include "workloads/model_zoo.h"
#include "workloads/sublayer.h"
#include "workloads/t3_plan.h"

using namespace t3;

namespace {

// Two tile rows per chunk; N = 40 leaves a ragged last tile column.
GemmShape small_shape(int gpus) {
  return {64 * gpus, 40, 24};
}

std::uint64_t bytes(const nlohmann::json& result, const char* category) {
  return result["dram_bytes"][category].get<std::uint64_t>();
}

// The ring counts the plan's ring collectives are launched with (COLL_RINGS written above 1),
// over every GPU's program.
std::multiset<std::uint32_t> rings_launched(const ScenarioPlan& plan) {
  std::multiset<std::uint32_t> rings;
  for (const Program& program : plan.programs) {
    for (const HostCommand& command : program.commands) {
      if (command.kind == HostCommand::Kind::WriteRegister &&
          command.address % mmio_map::kBlockSize == dispatcher::kCollRings && command.value > 1) {
        rings.insert(command.value);
      }
    }
  }
  return rings;
}

nlohmann::json run_golden(int gpus, Scenario scenario, const char* ring = "descending",
                          int split = 1, const std::vector<std::string>& extra = {},
                          std::multiset<std::uint32_t>* rings = nullptr) {
  SystemConfig config = small_system(gpus);
  apply_override(config, std::string("workload.ring=") + ring);
  apply_override(config, "workload.split=" + std::to_string(split));
  for (const std::string& assignment : extra) apply_override(config, assignment);
  validate(config);
  const ScenarioPlan plan =
      plan_scenario(config, small_shape(gpus), scenario, ElementType::Fp32, ElementType::Fp32);
  if (rings != nullptr) *rings = rings_launched(plan);
  ScenarioRun run(config, plan);
  sc_core::sc_start(sc_core::SC_ZERO_TIME);
  const ScenarioCheck check(run.group(), plan, 7);
  run.run();
  CHECK(check.check_reduce_scattered() == "");
  CHECK(check.check_all_gathered() == "");

  const nlohmann::json result = run.result();
  CHECK(result["scenario"] == to_string(scenario));
  CHECK(bytes(result, "other") == 0);
  CHECK(result["tracker"]["errors"] == 0);
  CHECK(result["tracker"]["overcount"] == 0);
  CHECK(result["dma"]["errors"] == 0);
  // The phases tile the sublayer's time without gaps.
  double elapsed = 0;
  for (const auto& phase : result["phases"]) {
    CHECK(phase["start_ns"].get<double>() == Approx(elapsed));
    elapsed += phase["time_ns"].get<double>();
  }
  CHECK(elapsed == Approx(result["time_ns"].get<double>()));
  // DMA traffic is uncached, so every byte the engines moved reached DRAM in its category.
  CHECK(bytes(result, "rs_read") + bytes(result, "ag_read") >= result["dma"]["bytes_read"]);
  return result;
}

void check_sequential(int gpus) {
  const nlohmann::json result = run_golden(gpus, Scenario::Sequential);
  CHECK(result["phases"].size() == 3);
  CHECK(bytes(result, "rs_read") > 0);
  CHECK(bytes(result, "rs_write") > 0);
  CHECK(bytes(result, "rs_update") == 0);  // the SMs reduce; nothing is added in memory
  CHECK(bytes(result, "ag_write") > 0);
  CHECK(result["dma"]["transfers"] == 0);
}

void check_fused(int gpus, Scenario scenario, const char* ring = "descending") {
  const nlohmann::json result = run_golden(gpus, scenario, ring);
  CHECK(result["phases"].size() == 2);
  CHECK(result["config"]["hbm"]["arbitration"] == (scenario == Scenario::T3 ? "fcfs" : "mca"));
  // The GEMM writes every output tile once, as updates, locally or into the next GPU.
  const std::uint64_t output = 64ull * gpus * 40 * 4;
  CHECK(bytes(result, "gemm_write") == output * static_cast<std::uint64_t>(gpus));
  // Every middle-stage tile crosses once by DMA: (n - 2) chunks per GPU, read and updated.
  const std::uint64_t dma = (output / gpus) * static_cast<std::uint64_t>(gpus * (gpus - 2));
  CHECK(result["dma"]["bytes_updated"] == dma);
  CHECK(bytes(result, "rs_update") == dma);
  CHECK(bytes(result, "rs_read") == dma);
  CHECK(bytes(result, "rs_write") == 0);
}

void check_dma_reduce_scatter(int gpus) {
  const nlohmann::json result = run_golden(gpus, Scenario::IdealRsNmc);
  CHECK(result["phases"].size() == 3);
  // Each GPU sends n - 1 chunks by DMA update; SMs do no reduce-scatter work.
  const std::uint64_t chunk = 64ull * 40 * 4;
  const std::uint64_t moved = chunk * static_cast<std::uint64_t>(gpus * (gpus - 1));
  CHECK(result["dma"]["bytes_updated"] == moved);
  CHECK(bytes(result, "rs_update") == moved);
  CHECK(bytes(result, "rs_read") == moved);
  // Its only stores are write-backs of the GEMM's output that the uncached DMA reads flushed.
  CHECK(bytes(result, "rs_write") <= 64ull * gpus * 40 * 4 * static_cast<std::uint64_t>(gpus));
}

// Slicing (n x split bands, each reduced by the SM ring while the next computes) and CommFuse
// (the ring gated chunk by chunk behind the GEMM).
void check_software_overlap(int gpus, Scenario scenario, int split) {
  const nlohmann::json result = run_golden(gpus, scenario, "descending", split);
  CHECK(result["phases"].size() == 2);
  CHECK(result["collective"] == "ring");
  // Stores are the GEMM's, cached; the rings move every band, reduced by the SMs.
  CHECK(bytes(result, "rs_read") > 0);
  CHECK(bytes(result, "rs_update") == 0);
  CHECK(bytes(result, "ag_write") > 0);
  CHECK(result["dma"]["transfers"] == 0);
  CHECK(result["tracker"]["fired"] == 0);
}

}  // namespace

TEST_CASE("slicing reduces and gathers exactly on 4 GPUs, band by band", "[scenario]") {
  check_software_overlap(4, Scenario::Slicing, 1);
}
TEST_CASE("slicing reduces and gathers exactly on 8 GPUs with two slices per GPU", "[scenario]") {
  check_software_overlap(8, Scenario::Slicing, 2);
}
TEST_CASE("commfuse reduces and gathers exactly on 4 GPUs", "[scenario]") {
  check_software_overlap(4, Scenario::CommFuse, 1);
}
TEST_CASE("commfuse reduces and gathers exactly on 8 GPUs, each chunk in two launches",
          "[scenario]") {
  check_software_overlap(8, Scenario::CommFuse, 2);
}
TEST_CASE("slicing refuses a split that does not cut the rows, naming it", "[scenario]") {
  SystemConfig config = small_system(4);
  apply_override(config, "workload.split=3");  // 12 slices of 256 rows: not whole tile rows
  CHECK_THROWS_WITH(plan_scenario(config, small_shape(4), Scenario::Slicing),
                    Catch::Contains("workload.split = 3"));
}

// Every GPU does slice i at the same time on its own copy of slice i's buffer, rank g of its ring
// on GPU g: the plan states one rotation band per slice, where the slice's buffer lies.
TEST_CASE("slicing states one rotation band per slice, at each slice's buffer", "[scenario]") {
  SystemConfig config = small_system(4, SimMode::Timing);
  apply_override(config, "workload.split=2");
  const ScenarioPlan plan = plan_scenario(config, small_shape(4), Scenario::Slicing);
  CHECK(plan.rotation_refused.empty());
  CHECK(rotation_map_error(plan.rotation).empty());
  CHECK(plan.rotation.gpus == 4);
  REQUIRE(plan.bands.size() == 8);
  REQUIRE(plan.rotation.bands.size() == plan.bands.size());
  for (std::size_t i = 0; i < plan.bands.size(); ++i) {
    INFO("slice " << i);
    const RotationBand& band = plan.rotation.bands[i];
    CHECK(band.offset == plan.bands[i].address.front() - hbm_base(config, 0));
    for (int g = 0; g < 4; ++g) {
      CHECK(plan.bands[i].address[static_cast<std::size_t>(g)] - hbm_base(config, g) ==
            band.offset);
    }
    CHECK(band.chunk_bytes * 4 == plan.bands[i].bytes);
    CHECK(band.sign == 1);
    CHECK(band.tags_per_chunk == 0);
  }
  // One GPU stands for the group.
  apply_override(config, "sim.symmetry=rotational");
  ScenarioRun run(config, plan);
  CHECK(run.group().gpus() == 1);
}

TEST_CASE("rotational symmetry refuses slices whose chunks are unequal, saying why", "[scenario]") {
  // 3 GPUs, one slice each: 64 rows x 40 columns = 2560 elements per slice, not 3 equal chunks.
  SystemConfig config = small_system(3, SimMode::Timing);
  const ScenarioPlan plan = plan_scenario(config, small_shape(3), Scenario::Slicing);
  CHECK(plan.rotation.gpus == 0);
  CHECK(plan.rotation.bands.empty());
  apply_override(config, "sim.symmetry=rotational");
  CHECK_THROWS_WITH(ScenarioRun(config, plan),
                    Catch::Contains("sim.symmetry: rotational cannot stand for scenario slicing: "
                                    "slice 0's 2560 elements do not split into 3 equal chunks"));
}

TEST_CASE("rotational symmetry refuses commfuse on the copy engine, saying why", "[scenario]") {
  SystemConfig config = small_system(4, SimMode::Timing);
  apply_override(config, "workload.commfuse_engine=copy");
  CHECK_FALSE(rotation_invariant(config, Scenario::CommFuse));
  CHECK(rotation_invariant(config, Scenario::Slicing));
  CHECK(rotation_invariant(config, Scenario::CommFuseAg));
  const ScenarioPlan plan = plan_scenario(config, small_shape(4), Scenario::CommFuse);
  CHECK(plan.rotation.gpus == 0);
  apply_override(config, "sim.symmetry=rotational");
  CHECK_THROWS_WITH(ScenarioRun(config, plan), Catch::Contains("moves its flags between the GPUs' "
                                                               "mailboxes"));
}

TEST_CASE("sequential scenario reduces and gathers exactly on 2 GPUs", "[scenario]") {
  check_sequential(2);
}
TEST_CASE("sequential scenario reduces and gathers exactly on 4 GPUs", "[scenario]") {
  check_sequential(4);
}
TEST_CASE("sequential scenario reduces and gathers exactly on 8 GPUs", "[scenario]") {
  check_sequential(8);
}
TEST_CASE("t3 scenario reduces and gathers exactly on 2 GPUs", "[scenario]") {
  check_fused(2, Scenario::T3);
}
TEST_CASE("t3 scenario reduces and gathers exactly on 4 GPUs", "[scenario]") {
  check_fused(4, Scenario::T3);
}
TEST_CASE("t3 scenario reduces and gathers exactly on 8 GPUs", "[scenario]") {
  check_fused(8, Scenario::T3);
}
TEST_CASE("t3-mca scenario reduces and gathers exactly on 2 GPUs", "[scenario]") {
  check_fused(2, Scenario::T3Mca);
}
TEST_CASE("t3-mca scenario reduces and gathers exactly on 4 GPUs", "[scenario]") {
  check_fused(4, Scenario::T3Mca);
}
TEST_CASE("t3-mca scenario reduces and gathers exactly on 8 GPUs", "[scenario]") {
  check_fused(8, Scenario::T3Mca);
}
TEST_CASE("t3-mca scenario on the ascending ring reduces and gathers exactly on 4 GPUs",
          "[scenario]") {
  check_fused(4, Scenario::T3Mca, "ascending");
}
// On a fully-connected group the SM ring collectives spread over every coprime-stride ring
// (protocol/ring.h, Several rings); each GPU still ends with the chunk the stride-1 ring gives it.
TEST_CASE("sequential scenario on 8 fully-connected GPUs reduces and gathers exactly on 4 rings",
          "[scenario][rings]") {
  std::multiset<std::uint32_t> rings;
  const nlohmann::json result = run_golden(8, Scenario::Sequential, "descending", 1,
                                           {"topology.kind=fully-connected"}, &rings);
  CHECK(result["phases"].size() == 3);
  CHECK(result["dma"]["transfers"] == 0);
  CHECK(rings == std::multiset<std::uint32_t>{{4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4}});
}
TEST_CASE("sequential scenario on 4 fully-connected GPUs reduces and gathers exactly on 2 rings",
          "[scenario][rings]") {
  std::multiset<std::uint32_t> rings;
  run_golden(4, Scenario::Sequential, "descending", 1, {"topology.kind=fully-connected"}, &rings);
  CHECK(rings == std::multiset<std::uint32_t>{{2, 2, 2, 2, 2, 2, 2, 2}});
}
TEST_CASE("t3 on 8 fully-connected GPUs: direct reduce-scatter, all-gather exact on 4 rings",
          "[scenario][rings]") {
  std::multiset<std::uint32_t> rings;
  const nlohmann::json result =
      run_golden(8, Scenario::T3, "descending", 1, {"topology.kind=fully-connected"}, &rings);
  CHECK(result["collective"] == "direct");
  CHECK(rings == std::multiset<std::uint32_t>{{4, 4, 4, 4, 4, 4, 4, 4}});  // the all-gathers
}
TEST_CASE("t3-mca on 4 fully-connected GPUs of the ascending ring gathers exactly on 2 rings",
          "[scenario][rings]") {
  // Ring collectives on the mesh: the fused reduce-scatter on T3's ascending ring, then the
  // all-gather on two rings in its ring ranks (GPU g is rank -g).
  std::multiset<std::uint32_t> rings;
  const nlohmann::json result =
      run_golden(4, Scenario::T3Mca, "ascending", 1,
                 {"topology.kind=fully-connected", "workload.collective=ring"}, &rings);
  CHECK(result["collective"] == "ring");
  CHECK(rings == std::multiset<std::uint32_t>{{2, 2, 2, 2}});
}
TEST_CASE("slicing on 4 fully-connected GPUs reduces and gathers exactly on 2 rings per band",
          "[scenario][rings]") {
  std::multiset<std::uint32_t> rings;
  run_golden(4, Scenario::Slicing, "descending", 1, {"topology.kind=fully-connected"}, &rings);
  CHECK(rings.size() == 4 * 4 * 2);  // 4 GPUs x 4 bands x (reduce-scatter, all-gather)
  CHECK(rings.count(2) == rings.size());
}

TEST_CASE("ideal-rs-nmc scenario reduces and gathers exactly on 2 GPUs", "[scenario]") {
  check_dma_reduce_scatter(2);
}
TEST_CASE("ideal-rs-nmc scenario reduces and gathers exactly on 4 GPUs", "[scenario]") {
  check_dma_reduce_scatter(4);
}
TEST_CASE("ideal-rs-nmc scenario reduces and gathers exactly on 8 GPUs", "[scenario]") {
  check_dma_reduce_scatter(8);
}

TEST_CASE("ideal scenario runs the sequential programs and combines their phases", "[scenario]") {
  // Its data path is the sequential one (golden above); its time is max(gemm, rs) + ag.
  const SystemConfig config = small_system(4);
  const ScenarioPlan ideal = plan_scenario(config, small_shape(4), Scenario::Ideal);
  const ScenarioPlan sequential = plan_scenario(config, small_shape(4), Scenario::Sequential);
  REQUIRE(ideal.programs.size() == sequential.programs.size());
  for (std::size_t g = 0; g < ideal.programs.size(); ++g) {
    CHECK(ideal.programs[g].commands.size() == sequential.programs[g].commands.size());
  }
  for (const auto& [gemm, rs] : {std::pair{300.0, 200.0}, std::pair{200.0, 300.0}}) {
    const nlohmann::json run = {{"scenario", "sequential"},
                                {"time_ns", gemm + rs + 50.0},
                                {"phases",
                                 {{{"name", "gemm"}, {"time_ns", gemm}},
                                  {{"name", "reduce_scatter"}, {"time_ns", rs}},
                                  {{"name", "all_gather"}, {"time_ns", 50.0}}}}};
    nlohmann::json result = ideal_result(run);
    set_speedup(result, run);
    CHECK(result["scenario"] == "ideal");
    CHECK(result["time_ns"] == 350.0);
    CHECK(result["speedup_vs_sequential"].get<double>() == Approx(550.0 / 350.0));
  }
}

namespace {

// Runs t3 on 4 GPUs of `ring` and checks, from the recorded events, that GPU g's workgroups come
// chunk after chunk from first_chunk[g] on and that its DMA transfers all go to next[g].
void check_ring_events(const char* ring, const std::array<int, 4>& next,
                       const std::array<int, 4>& first_chunk) {
  SystemConfig config = small_system(4, SimMode::Timing);
  apply_override(config, std::string("workload.ring=") + ring);
  const GemmShape shape = small_shape(4);
  ScenarioRun run(config, plan_scenario(config, shape, Scenario::T3));
  run.run();
  const std::int64_t rows_per_chunk = shape.m / config.gemm.tile_m / 4;
  const std::int64_t grid_cols = (shape.n + config.gemm.tile_n - 1) / config.gemm.tile_n;
  for (int g = 0; g < 4; ++g) {
    Gpu& gpu = run.group().gpu(g);
    std::vector<std::int64_t> chunk_order;
    for (const DispatchRecord& wg : gpu.dispatcher.dispatched()) {
      if (wg.launch != 0) continue;
      const std::int64_t chunk = wg.tile / grid_cols / rows_per_chunk;
      if (chunk_order.empty() || chunk_order.back() != chunk) chunk_order.push_back(chunk);
    }
    INFO(ring << " ring, gpu " << g);
    REQUIRE(chunk_order.size() == 4);
    for (int stage = 0; stage < 4; ++stage) {
      CHECK(chunk_order[stage] == (first_chunk[g] + stage) % 4);
    }
    REQUIRE(!gpu.dma.transfers().empty());
    std::set<int> destinations;
    for (const DmaTransfer& transfer : gpu.dma.transfers()) {
      destinations.insert(run.group().address_map().decode(transfer.destination)->gpu);
    }
    CHECK(destinations == std::set<int>{next[g]});
  }
}

}  // namespace

TEST_CASE("t3 on 4 GPUs follows the paper's ring and stagger in the recorded events",
          "[scenario]") {
  // REFERENCES.md: ring GPU0 -> GPU3 -> GPU2 -> GPU1; GPU0 computes stage 1 first while GPU1
  // computes stage 2 first, so each GPU's chunk order is rotated by one from its neighbour's.
  check_ring_events("descending", {3, 0, 1, 2}, {2, 3, 0, 1});
}

TEST_CASE("t3 on 4 GPUs of the ascending ring sends the other way in the recorded events",
          "[scenario]") {
  // GPU0 -> GPU1 -> GPU2 -> GPU3: GPU1 sends to GPU2 the chunk GPU2 computes one stage later.
  check_ring_events("ascending", {1, 2, 3, 0}, {2, 1, 0, 3});
}

TEST_CASE("every scenario plans for every paper model at its TP degrees and every sublayer",
          "[scenario]") {
  // The zoo's paper TP degrees (test_t3 checks them against REFERENCES.md).
  int planned = 0;
  for (const std::string& name : model_names()) {
    for (const int tp : model(name).paper_tp) {
      SystemConfig config = load_system("t3-paper");
      apply_override(config, "gpus=" + std::to_string(tp));
      validate(config);
      for (const Sublayer sublayer : all_sublayers()) {
        const GemmShape shape = sublayer_gemm(model(name), sublayer, tp, config.workload.tokens);
        for (const Scenario scenario : all_scenarios()) {
          INFO(name << " TP " << tp << " " << to_string(sublayer) << " " << to_string(scenario));
          ScenarioPlan plan;
          REQUIRE_NOTHROW(plan = plan_scenario(config, shape, scenario));
          CHECK(plan.programs.size() == static_cast<std::size_t>(tp));
          CHECK(plan.output_bytes == 2ull * static_cast<std::uint64_t>(shape.m * shape.n));
          ++planned;
        }
      }
    }
  }
  CHECK(planned == 7 * 4 * 5);
}
