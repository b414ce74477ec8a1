// `t3sim gemm` on one GPU against every GPU, and custom GEMMs (--shape, a suite's "shapes")
// against the zoo sublayers of the same shape, end to end through the binary.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "testbenches/tests/cli_testing.h"

namespace {

using t3::cli_testing::run_json;
using t3::cli_testing::run_output;

// Fields of a result that depend on how the workload was named, or on the machine.
nlohmann::json simulated_part(nlohmann::json result) {
  for (const char* key : {"model", "sublayer", "wall_time_s"}) result.erase(key);
  return result;
}

}  // namespace

TEST_CASE("t3sim gemm simulates one GPU whose kernel time is the every-GPU run's to the ns",
          "[cli][gemm]") {
  const std::string workload = "--model t-nlg --sublayer fc2 --tp 4 --tokens 512";
  const nlohmann::json one = run_json("gemm", workload, "gemm_one.json");
  const nlohmann::json all = run_json("gemm", workload + " --group", "gemm_group.json");
  CHECK(one["gpus_simulated"] == 1);
  CHECK(all["gpus_simulated"] == 4);
  CHECK(one["tp"] == 4);
  CHECK(one["shape"] == all["shape"]);
  // Each GPU's GEMM reads only its own HBM, so alone it runs exactly as beside the others.
  CHECK(one["time_ns"].get<double>() == all["time_ns"].get<double>());
  CHECK(one["tflops"].get<double>() == all["tflops"].get<double>());
  // Byte and transaction counts are the simulated GPUs' totals: the group's are four GPUs'.
  CHECK(4 * one["dram_bytes"]["gemm_read"].get<std::uint64_t>() ==
        all["dram_bytes"]["gemm_read"].get<std::uint64_t>());
  CHECK(4 * one["dram_bytes"]["gemm_write"].get<std::uint64_t>() ==
        all["dram_bytes"]["gemm_write"].get<std::uint64_t>());
  CHECK(4 * one["transactions"].get<std::uint64_t>() == all["transactions"].get<std::uint64_t>());
  CHECK(one["l2_hit_rate"].get<double>() == all["l2_hit_rate"].get<double>());
}

TEST_CASE("t3sim gemm takes rotational symmetry as its own one-GPU run, and --group refuses it",
          "[cli][gemm]") {
  const std::string workload = "--model t-nlg --sublayer op --tp 4 --tokens 512";
  const nlohmann::json plain = run_json("gemm", workload, "gemm_plain.json");
  const nlohmann::json rotational =
      run_json("gemm", workload + " --set sim.symmetry=rotational", "gemm_rotational.json");
  CHECK(rotational["time_ns"].get<double>() == plain["time_ns"].get<double>());
  const auto refused =
      run_output("gemm " + workload + " --group --set sim.symmetry=rotational", "gemm_refused.log");
  CHECK(refused.exit_code == 2);
  CHECK_THAT(refused.text, Catch::Contains("--group simulates every GPU"));
}

TEST_CASE("t3sim gemm --shape equals the zoo sublayer of the same shape", "[cli][gemm][shape]") {
  const nlohmann::json zoo =
      run_json("gemm", "--model t-nlg --sublayer fc2 --tp 8 --tokens 512", "gemm_zoo.json");
  const nlohmann::json custom =
      run_json("gemm", "--shape 512,4256,2128 --tp 8", "gemm_custom.json");
  CHECK(custom["model"] == "custom");
  CHECK(custom["sublayer"] == "custom");
  CHECK(custom["tokens"] == 512);
  CHECK(custom["shape"] == nlohmann::json{{"m", 512}, {"n", 4256}, {"k", 2128}});
  CHECK(simulated_part(custom) == simulated_part(zoo));
}

TEST_CASE("t3sim compare --shape equals the zoo sublayer of the same shape under every scenario",
          "[cli][scenario][shape]") {
  // T-NLG FC-2 at TP 8 and 2048 tokens is M x N x K = 2048 x 4256 x (4 x 4256 / 8).
  const std::string common = " --tp 8 --set sim.symmetry=rotational --scenarios all";
  const nlohmann::json zoo = run_json(
      "compare", "--model t-nlg --sublayer fc2 --tokens 2048" + common, "compare_zoo.json");
  const nlohmann::json custom =
      run_json("compare", "--shape 2048,4256,2128" + common, "compare_custom.json");
  REQUIRE(custom.size() == zoo.size());
  REQUIRE(custom.size() == 5);
  for (std::size_t s = 0; s < custom.size(); ++s) {
    INFO(custom[s]["scenario"]);
    CHECK(custom[s]["model"] == "custom");
    CHECK(custom[s]["sublayer"] == "custom");
    CHECK(custom[s]["shape"] == nlohmann::json{{"m", 2048}, {"n", 4256}, {"k", 2128}});
    CHECK(custom[s]["time_ns"].get<double>() == zoo[s]["time_ns"].get<double>());
    CHECK(simulated_part(custom[s]) == simulated_part(zoo[s]));
  }
}

TEST_CASE("a sweep suite's shapes run as custom points equal to their zoo twins",
          "[cli][sweep][shape]") {
  const std::string dir = std::string(T3SIM_TEST_BINARY_DIR) + "/sweep_shape";
  std::system(("rm -rf '" + dir + "' && mkdir -p '" + dir + "'").c_str());
  {
    std::ofstream suite(dir + "/suite.json");
    suite << R"({"name": "shapes", "scenarios": ["t3-mca"], "groups": [
      {"shapes": ["2048,4256,2128", [4096, 1024, 512]], "tp": [8]},
      {"models": ["t-nlg"], "sublayers": ["fc2"], "tp": [8], "tokens": [2048]}]})";
  }
  const auto sweep = run_output(
      "sweep --suite '" + dir + "/suite.json' --out '" + dir + "/out' --jobs 2", "sweep_shape.log");
  INFO(sweep.text);
  REQUIRE(sweep.exit_code == 0);
  std::ifstream file(dir + "/out/results.json");
  const nlohmann::json records = nlohmann::json::parse(file);
  REQUIRE(records.size() == 6);  // 3 points x (sequential, t3-mca)
  for (std::size_t r = 0; r < 4; ++r) {
    CHECK(records[r]["model"] == "custom");
    CHECK(records[r]["point"]["index"] == r / 2);
  }
  CHECK(records[2]["shape"] == nlohmann::json{{"m", 4096}, {"n", 1024}, {"k", 512}});
  CHECK(records[2]["tokens"] == 4096);
  CHECK(records[4]["model"] == "t-nlg");
  for (std::size_t r : {0, 1}) {
    CHECK(records[r]["time_ns"].get<double>() == records[r + 4]["time_ns"].get<double>());
  }
  std::ifstream summary(dir + "/out/summary.md");
  const std::string text((std::istreambuf_iterator<char>(summary)),
                         std::istreambuf_iterator<char>());
  CHECK_THAT(text, Catch::Contains("| 8 | 4096x1024x512 | 4096 |"));
}

TEST_CASE("a sweep suite's bad shape is refused naming the file and the value",
          "[cli][sweep][shape]") {
  const std::string dir = std::string(T3SIM_TEST_BINARY_DIR) + "/sweep_bad_shape";
  std::system(("mkdir -p '" + dir + "'").c_str());
  {
    std::ofstream suite(dir + "/suite.json");
    suite << R"({"shapes": ["2048,4256,0"], "tp": [8]})";
  }
  const auto refused = run_output("sweep --suite '" + dir + "/suite.json' --out '" + dir + "/out'",
                                  "sweep_bad_shape.log");
  CHECK(refused.exit_code != 0);
  CHECK_THAT(refused.text, Catch::Contains("suite.json.shapes: shape '2048,4256,0': '0' is not a "
                                           "positive integer"));
}
