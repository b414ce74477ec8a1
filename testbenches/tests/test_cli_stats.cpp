// --stats on `t3sim run`, `compare` and `gemm`: the statistics dump agrees with the result
// document it sits beside (bytes, busy time), phase by phase and in total; its text form is one
// "name value # description" per line; and the utilisation line run prints is the JSON's.
#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "testbenches/tests/cli_testing.h"

namespace {

using t3::cli_testing::run_json;

// A small sublayer that simulates in a fraction of a second.
const std::string kWorkload =
    "--model bert-large --sublayer op --tp 4 --tokens 256 --set gemm.tile_m=64";

std::string path(const std::string& name) {
  return std::string(T3SIM_TEST_BINARY_DIR) + "/" + name;
}

std::string read(const std::string& file) {
  std::ifstream in(file);
  REQUIRE(in);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The sum of every statistic in `values` whose name matches `pattern` whole.
double sum_of(const nlohmann::json& values, const std::string& pattern) {
  const std::regex form(pattern);
  double sum = 0;
  for (const auto& [name, value] : values.items()) {
    if (std::regex_match(name, form)) sum += value.get<double>();
  }
  return sum;
}

std::uint64_t dram_total(const nlohmann::json& bytes) {
  std::uint64_t total = 0;
  for (const auto& [category, value] : bytes.items()) {
    if (category != "total") total += value.get<std::uint64_t>();
  }
  return total;
}

// The dump section of one simulated run against its result document.
void check_section(const nlohmann::json& section, const nlohmann::json& result) {
  const nlohmann::json& total = section["total"];
  INFO(result["scenario"]);
  CHECK(total["group.hbm.bytes"].get<std::uint64_t>() ==
        result["dram_bytes"]["total"].get<std::uint64_t>());
  CHECK(total["group.link.payload_bytes"].get<std::uint64_t>() ==
        result["link_bytes"]["payload"].get<std::uint64_t>());
  CHECK(total["group.hbm.busy_ns"].get<double>() ==
        Approx(result["utilisation"]["hbm_busy_ns"].get<double>()));
  CHECK(total["group.link.busy_ns"].get<double>() ==
        Approx(result["utilisation"]["link_busy_ns"].get<double>()));
  CHECK(total["sim.time_ns"].get<double>() == Approx(result["time_ns"].get<double>()));
  // Every GPU simulated: the group's bytes are the GPUs' channels', the links' their directions'.
  CHECK(sum_of(total, R"(gpu[0-9]+\.hbm\.ch[0-9]+\.bytes)") ==
        Approx(total["group.hbm.bytes"].get<double>()));
  CHECK(sum_of(total, R"((gpu[0-9]+|switch)\.link\.to_.*\.payload_bytes)") ==
        Approx(total["group.link.payload_bytes"].get<double>()));
  CHECK(total["group.hbm.bytes"].get<std::uint64_t>() > 0);
  // Phase by phase: the result's phases, their bytes the result's, and they add up to the total.
  REQUIRE(section["phases"].size() == result["phases"].size());
  double phase_bytes = 0;
  for (const auto& phase : result["phases"]) {
    const nlohmann::json& values = section["phases"][phase["name"].get<std::string>()];
    CHECK(values["group.hbm.bytes"].get<std::uint64_t>() == dram_total(phase["dram_bytes"]));
    CHECK(values["group.link.payload_bytes"].get<std::uint64_t>() ==
          phase["link_payload_bytes"].get<std::uint64_t>());
    CHECK(values["sim.time_ns"].get<double>() == Approx(phase["time_ns"].get<double>()));
    phase_bytes += values["group.hbm.bytes"].get<double>();
  }
  CHECK(phase_bytes == total["group.hbm.bytes"].get<double>());
}

}  // namespace

TEST_CASE("run --stats: the dump's totals and phases are the result document's", "[cli][stats]") {
  const std::string stats = path("stats-run.json");
  const nlohmann::json result =
      run_json("run", kWorkload + " --scenario t3-mca --stats " + stats, "stats-run-result.json");
  CHECK(!result.contains("stats"));  // the dump goes to its own file
  const nlohmann::json dump = nlohmann::json::parse(read(stats));
  CHECK(dump["format"] == "t3sim-stats-1");
  REQUIRE(dump["runs"].contains("t3-mca"));
  const nlohmann::json& section = dump["runs"]["t3-mca"];
  check_section(section, result);
  // Names the documentation lists, per channel and per link direction.
  for (const char* name : {"gpu0.hbm.ch3.row_hits", "gpu0.link.to_gpu1.busy_ns", "gpu0.dma0.bytes",
                           "gpu0.sm.busy_ns", "gpu0.hbm.mca.held_back"}) {
    INFO(name);
    CHECK(section["total"].contains(name));
    CHECK(section["descriptions"].contains(name));
  }
  // MCA's decisions are the result's (hbm_queue.mca sums them over the GPUs).
  const nlohmann::json& mca = result["hbm_queue"]["mca"];
  CHECK(sum_of(section["total"], R"(gpu[0-9]+\.hbm\.mca\.urgent_releases)") <=
        mca["urgent_releases"].get<double>());
}

TEST_CASE("run --stats FILE.txt: one 'name value # description' per line", "[cli][stats]") {
  const std::string json = path("stats-text.json");
  const std::string text = path("stats-text.txt");
  run_json("run", kWorkload + " --scenario t3 --stats " + json, "stats-text-a.json");
  run_json("run", kWorkload + " --scenario t3 --stats " + text, "stats-text-b.json");
  const nlohmann::json dump = nlohmann::json::parse(read(json));
  const std::regex line_form(R"(^(\S+) (-?[0-9.eE+-]+) # (.+)$)");
  std::istringstream lines(read(text));
  std::size_t count = 0;
  for (std::string line; std::getline(lines, line);) {
    std::smatch match;
    INFO(line);
    REQUIRE(std::regex_match(line, match, line_form));
    // t3.total.<name> or t3.phase.<phase>.<name>: the JSON's value under that name.
    const std::string name = match[1];
    REQUIRE(name.rfind("t3.", 0) == 0);
    const std::string rest = name.substr(3);
    const nlohmann::json& run = dump["runs"]["t3"];
    double expected = 0;
    if (rest.rfind("total.", 0) == 0) {
      expected = run["total"][rest.substr(6)].get<double>();
    } else {
      REQUIRE(rest.rfind("phase.", 0) == 0);
      const std::string phase_and_name = rest.substr(6);
      const std::string phase = phase_and_name.substr(0, phase_and_name.find('.'));
      expected = run["phases"][phase][phase_and_name.substr(phase.size() + 1)].get<double>();
    }
    CHECK(std::stod(match[2]) == Approx(expected));
    ++count;
  }
  const nlohmann::json& run = dump["runs"]["t3"];
  std::size_t values = run["total"].size();
  for (const auto& [phase, stats] : run["phases"].items()) values += stats.size();
  CHECK(count == values);
}

TEST_CASE("run prints the utilisation line of its result document", "[cli][stats]") {
  const nlohmann::json result =
      run_json("run", kWorkload + " --scenario t3-mca", "stats-line.json");
  const std::string log = read(path("stats-line.json.log"));
  const std::regex form(
      R"(utilisation +HBM ([0-9.]+)%, links ([0-9.]+)% busy; MCA held back ([0-9]+), opened by )"
      R"(starvation ([0-9]+), kept open by urgency ([0-9]+))");
  std::smatch match;
  INFO(log);
  REQUIRE(std::regex_search(log, match, form));
  CHECK(std::stod(match[1]) ==
        Approx(100 * result["utilisation"]["hbm"].get<double>()).margin(0.05));
  CHECK(std::stod(match[2]) ==
        Approx(100 * result["utilisation"]["link"].get<double>()).margin(0.05));
  const nlohmann::json& mca = result["hbm_queue"]["mca"];
  CHECK(std::stoull(match[3]) == mca["held_back"].get<std::uint64_t>());
  CHECK(std::stoull(match[4]) == mca["starvation_overrides"].get<std::uint64_t>());
  CHECK(std::stoull(match[5]) == mca["urgent_releases"].get<std::uint64_t>());
  // Busy shares: some of each, never more than all.
  for (const char* part : {"hbm", "link"}) {
    CHECK(result["utilisation"][part].get<double>() > 0);
    CHECK(result["utilisation"][part].get<double>() <= 1);
  }
}

TEST_CASE("compare --stats: a section per simulated scenario, a utilisation line each",
          "[cli][stats]") {
  const std::string stats = path("stats-compare.json");
  const nlohmann::json results =
      run_json("compare", kWorkload + " --scenarios t3,ideal --jobs 1 --stats " + stats,
               "stats-compare-result.json");
  const nlohmann::json dump = nlohmann::json::parse(read(stats));
  const std::string log = read(path("stats-compare-result.json.log"));
  INFO(log);
  for (const nlohmann::json& result : results) {
    const std::string name = result["scenario"];
    CHECK(!result.contains("stats"));
    if (name == "ideal") {
      // Derived: no run, no statistics of its own.
      CHECK(!dump["runs"].contains("ideal"));
      CHECK(log.find("ideal         derived") != std::string::npos);
      continue;
    }
    REQUIRE(dump["runs"].contains(name));
    check_section(dump["runs"][name], result);
    CHECK(std::regex_search(log, std::regex("\n" + name + " +HBM [0-9.]+%, links [0-9.]+% busy")));
  }
}

TEST_CASE("gemm --stats: the kernel's HBM bytes are its DRAM traffic", "[cli][stats]") {
  const std::string stats = path("stats-gemm.txt");
  const nlohmann::json result =
      run_json("gemm", kWorkload + " --stats " + stats, "stats-gemm-result.json");
  const std::string text = read(stats);
  const std::regex bytes_line(R"(\ngemm\.total\.group\.hbm\.bytes ([0-9]+) # )");
  std::smatch match;
  REQUIRE(std::regex_search(text, match, bytes_line));
  CHECK(std::stoull(match[1]) == result["dram_bytes"]["gemm_read"].get<std::uint64_t>() +
                                     result["dram_bytes"]["gemm_write"].get<std::uint64_t>());
}
