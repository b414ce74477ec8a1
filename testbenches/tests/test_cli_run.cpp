// `t3sim run` and `t3sim compare` end to end: the binary simulates the scenarios of a sublayer and
// writes result documents, checked here for their arithmetic (speedups, ideal, DRAM totals), for
// determinism, for the functional check, and on the paper's T-NLG sublayers for the orderings
// the T3 paper's configurations must keep.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "testbenches/tests/cli_testing.h"

namespace {

using t3::cli_testing::run_json;

const nlohmann::json& scenario(const nlohmann::json& results, const std::string& name) {
  const auto found = std::find_if(results.begin(), results.end(),
                                  [&](const nlohmann::json& r) { return r["scenario"] == name; });
  REQUIRE(found != results.end());
  return *found;
}

double phase_ns(const nlohmann::json& result, const std::string& name) {
  for (const auto& phase : result["phases"]) {
    if (phase["name"] == name) return phase["time_ns"].get<double>();
  }
  FAIL("no phase " << name << " in " << result["scenario"]);
  return 0;
}

// The floor of a ring reduce-scatter's traffic: each GPU sends n - 1 chunks of its output over
// one link, at the rate a link delivers behind packet headers.
double reduce_scatter_link_floor_ns(const nlohmann::json& result) {
  const auto& link = result["config"]["link"];
  const double n = result["tp"].get<double>();
  const double output =
      2.0 * result["shape"]["m"].get<double>() * result["shape"]["n"].get<double>();
  const double payload = link["max_payload_bytes"].get<double>();
  const double rate = link["bandwidth_GBps"].get<double>() * payload /
                      (payload + link["header_bytes"].get<double>());
  return (n - 1) * (output / n) / rate;
}

void check_compare_arithmetic(const nlohmann::json& results) {
  REQUIRE(results.size() == 5);
  const nlohmann::json& sequential = scenario(results, "sequential");
  CHECK(sequential["speedup_vs_sequential"].get<double>() == Approx(1.0));
  for (const nlohmann::json& result : results) {
    INFO(result["scenario"]);
    CHECK(result["speedup_vs_sequential"].get<double>() ==
          Approx(sequential["time_ns"].get<double>() / result["time_ns"].get<double>()));
    std::uint64_t total = 0;
    for (const auto& [category, bytes] : result["dram_bytes"].items()) {
      if (category != "total") total += bytes.get<std::uint64_t>();
    }
    CHECK(result["dram_bytes"]["total"] == total);
    CHECK(result["dram_bytes"]["other"] == 0);
    // Each simulated GPU finished every simulated phase, and the last of them ended it.
    const std::size_t gpus =
        result["symmetry"] == "rotational" ? 1 : result["tp"].get<std::size_t>();
    for (const auto& phase : result["phases"]) {
      if (phase.contains("derived")) continue;
      INFO(phase["name"]);
      const auto& done = phase.at("gpu_done_ns");
      REQUIRE(done.size() == gpus);
      CHECK(std::is_sorted(done.begin(), done.end()));
      CHECK(done.front().get<double>() >= 0);
      CHECK(done.back().get<double>() == Approx(phase["time_ns"].get<double>()));
    }
  }
  const double ideal =
      std::max(phase_ns(sequential, "gemm"), phase_ns(sequential, "reduce_scatter")) +
      phase_ns(sequential, "all_gather");
  CHECK(scenario(results, "ideal")["time_ns"].get<double>() == Approx(ideal));
  // T3's near-memory updates replace the SMs' reads of the partial sums: less DRAM traffic. (Not
  // so for ideal-rs-nmc on small outputs: its uncached DMA reads miss an L2 that holds the whole
  // output, where the SM ring's cached reads hit.)
  for (const char* fused : {"t3", "t3-mca"}) {
    CHECK(scenario(results, fused)["dram_bytes"]["total"] < sequential["dram_bytes"]["total"]);
  }
}

// On the paper's sublayers: MCA must not slow T3 down beyond its bounded deferral, and no fused
// scenario may beat the ideal overlap by more than near-memory reduction can give.
void check_paper_sublayer(const std::string& sublayer) {
  const nlohmann::json results =
      run_json("compare", "--model t-nlg --tp 8 --jobs 2 --sublayer " + sublayer,
               "compare-t-nlg-" + sublayer + ".json");
  check_compare_arithmetic(results);
  const nlohmann::json& sequential = scenario(results, "sequential");
  const double t3 = scenario(results, "t3")["time_ns"];
  const double mca = scenario(results, "t3-mca")["time_ns"];
  // MCA holds communication back while compute fills the queues; where the reduce-scatter is the
  // critical path that lengthens it. The goal is at most 1% behind t3, not met everywhere
  // (docs/t3.md, "The MCA study": up to 6% on T-NLG FC-2 with 160 SMs; 2.2% on T-NLG OP here);
  // 3% keeps these four points from sliding further (test_cli_mca checks the 250 GB/s case the
  // defect of giving communication priority showed on, at 1%).
  CHECK(mca <= 1.03 * t3);
  // The bound: a fused GEMM + reduce-scatter cannot end before the GEMM alone nor before its
  // reduce-scatter traffic crossed the link at the delivered rate; the all-gather follows. The
  // ideal scenario's reduce-scatter runs on SMs; what T3 may gain over it is the part of that
  // time above the link floor (CU reductions and partial-sum reads that NMC removes). 2% covers
  // the GEMM's own change of output path (uncached near-memory updates instead of cached stores).
  const double floor =
      std::max(phase_ns(sequential, "gemm"), reduce_scatter_link_floor_ns(sequential)) +
      phase_ns(sequential, "all_gather");
  for (const char* fused : {"t3", "t3-mca"}) {
    INFO(fused << " " << scenario(results, fused)["time_ns"] << " ns, bound " << floor << " ns");
    CHECK(scenario(results, fused)["time_ns"].get<double>() >= 0.98 * floor);
  }
}

}  // namespace

TEST_CASE("t3sim compare on a small sublayer keeps its arithmetic and is deterministic",
          "[cli][scenario]") {
  const std::string args = "--model mega-gpt-2 --sublayer op --tp 2 --tokens 512 --jobs 2";
  nlohmann::json first = run_json("compare", args, "compare-small-1.json");
  nlohmann::json second = run_json("compare", args, "compare-small-2.json");
  check_compare_arithmetic(first);
  for (auto* results : {&first, &second}) {
    for (auto& result : *results) result.erase("wall_time_s");
  }
  CHECK(first.dump() == second.dump());
}

// l2.block_lines is a simulation granularity: its default must keep a whole sublayer within 2%
// of line-by-line tagging (DESIGN.md: the coarsest granularity within 2% of the fine one).
TEST_CASE("t3sim with no command compares T-NLG FC-2 at TP 8 with one GPU standing for all",
          "[cli][default]") {
  const auto job = t3::cli_testing::run_output("", "default_job.log");
  const auto spelled = t3::cli_testing::run_output(
      "compare --model t-nlg --sublayer fc2 --tp 8 --set sim.symmetry=rotational",
      "default_job_spelled.log");
  REQUIRE(job.exit_code == 0);
  REQUIRE(spelled.exit_code == 0);
  CHECK(job.text == spelled.text);
  CHECK_THAT(job.text, Catch::Contains("t-nlg fc2, TP 8, 8192 tokens, system t3-paper"));
  CHECK_THAT(job.text, Catch::Contains("rotational symmetry: GPU 0 simulated, standing for all 8"));
  for (const char* row : {"\nsequential ", "\nt3 ", "\nt3-mca ", "\nideal ", "\nideal-rs-nmc "}) {
    CHECK_THAT(job.text, Catch::Contains(row));
  }
}

TEST_CASE("the L2's default tag block keeps a sublayer within 2% of line-by-line tagging",
          "[cli][scenario]") {
  const std::string args =
      "--model mega-gpt-2 --sublayer fc2 --tp 4 --tokens 2048 --jobs 2 "
      "--scenarios sequential,t3-mca,ideal-rs-nmc";
  const nlohmann::json coarse = run_json("compare", args, "compare-blocks-default.json");
  const nlohmann::json fine =
      run_json("compare", args + " --set l2.block_lines=1", "compare-blocks-1.json");
  REQUIRE(coarse.size() == 3);
  REQUIRE(fine.size() == 3);
  CHECK(coarse[0]["config"]["l2"]["block_lines"].get<int>() > 1);
  CHECK(fine[0]["config"]["l2"]["block_lines"] == 1);
  for (const char* name : {"sequential", "t3-mca", "ideal-rs-nmc"}) {
    INFO(name);
    const nlohmann::json& c = scenario(coarse, name);
    const nlohmann::json& f = scenario(fine, name);
    CHECK(c["time_ns"].get<double>() == Approx(f["time_ns"].get<double>()).epsilon(0.02));
    CHECK(c["dram_bytes"]["total"].get<double>() ==
          Approx(f["dram_bytes"]["total"].get<double>()).epsilon(0.02));
    CHECK(c["dram_bytes"]["gemm_read"].get<double>() ==
          Approx(f["dram_bytes"]["gemm_read"].get<double>()).epsilon(0.02));
  }
}

// sm.request_bytes is a simulation granularity only: SMs keep several requests in flight and post
// their stores, so cutting the same traffic into 4 KiB or 64 KiB requests must not move a whole
// sublayer, in any scenario, by more than 2% in time or in any DRAM category.
TEST_CASE("the SM request size keeps every scenario within 2% from 4 KiB to 64 KiB",
          "[cli][scenario]") {
  const std::string args = "--model mega-gpt-2 --sublayer fc2 --tp 4 --tokens 2048 --jobs 2";
  const nlohmann::json fine =
      run_json("compare", args + " --set sm.request_bytes=4096", "compare-request-4k.json");
  REQUIRE(fine.size() == 5);
  for (const int kib : {8, 16, 32, 64}) {
    const std::string bytes = std::to_string(kib * 1024);
    const nlohmann::json coarse = run_json("compare", args + " --set sm.request_bytes=" + bytes,
                                           "compare-request-" + std::to_string(kib) + "k.json");
    REQUIRE(coarse.size() == fine.size());
    CHECK(coarse[0]["config"]["sm"]["request_bytes"].get<int>() == kib * 1024);
    for (const nlohmann::json& f : fine) {
      const std::string name = f["scenario"];
      INFO(kib << " KiB requests, " << name);
      const nlohmann::json& c = scenario(coarse, name);
      CHECK(c["time_ns"].get<double>() == Approx(f["time_ns"].get<double>()).epsilon(0.02));
      // A category's bytes within 2.5%: the all-gather's reads hit the L2 by when the HBM
      // answers (sequential, ag_read: 27.00 MB at 64 KiB against 27.57 MB at 4 KiB requests).
      for (const auto& [category, bytes_fine] : f["dram_bytes"].items()) {
        INFO(category);
        CHECK(c["dram_bytes"][category].get<double>() ==
              Approx(bytes_fine.get<double>()).epsilon(0.025));
      }
    }
  }
}

namespace {

// Runs `args` with --trace and checks the timeline against the result: phases, every DMA transfer
// and tracker fire, link bytes (group totals in the result, the simulated GPUs' on the timeline).
void check_trace(const std::string& args, const std::string& name) {
  const std::string trace = std::string(T3SIM_TEST_BINARY_DIR) + "/" + name + ".json";
  std::remove(trace.c_str());
  const nlohmann::json result =
      run_json("run", args + " --trace \"" + trace + "\"", name + "-result.json");
  std::ifstream file(trace);
  REQUIRE(file);
  const nlohmann::json timeline = nlohmann::json::parse(file);
  REQUIRE(timeline.at("traceEvents").is_array());
  std::map<std::string, std::size_t> counts;
  std::vector<nlohmann::json> phases;
  double last_end_us = 0;
  double wire_bytes = 0;
  for (const nlohmann::json& event : timeline["traceEvents"]) {
    REQUIRE(event.contains("ph"));
    REQUIRE(event.contains("pid"));
    REQUIRE(event.contains("ts"));
    if (event["ph"] == "M") continue;
    const double end = event["ts"].get<double>() + event.value("dur", 0.0);
    last_end_us = std::max(last_end_us, end);
    ++counts[event.value("cat", std::string("-")) + "/" + event["ph"].get<std::string>()];
    if (event.value("cat", std::string()) == "phase") phases.push_back(event);
    if (event.value("cat", std::string()) == "link")
      wire_bytes += event["args"]["wire_bytes"].get<double>();
  }
  // Phase spans are the result's phases, at its clock start, in microseconds.
  REQUIRE(phases.size() == result["phases"].size());
  const double start_ns = result["start_ns"];
  for (std::size_t k = 0; k < phases.size(); ++k) {
    const nlohmann::json& phase = result["phases"][k];
    CHECK(phases[k]["name"] == phase["name"]);
    CHECK(phases[k]["ts"].get<double>() ==
          Approx((start_ns + phase["start_ns"].get<double>()) / 1e3).epsilon(1e-9));
    CHECK(phases[k]["dur"].get<double>() ==
          Approx(phase["time_ns"].get<double>() / 1e3).epsilon(1e-9));
  }
  // Every DMA transfer and tracker fire the result counts is on the timeline, and nothing ends
  // after the simulation did.
  const double replicas = result["symmetry"] == "rotational" ? result["tp"].get<double>() : 1.0;
  CHECK(counts["dma/X"] * replicas == result["dma"]["transfers"].get<double>());
  CHECK(counts["tracker/i"] * replicas == result["tracker"]["fired"].get<double>());
  CHECK(counts["workgroup/X"] > 0);
  CHECK(counts["link/X"] > 0);
  CHECK(wire_bytes * replicas == result["link_bytes"]["wire"].get<double>());
  CHECK(last_end_us <= result["simulated_ns"].get<double>() / 1e3 + 1e-6);
}

}  // namespace

TEST_CASE("t3sim run --trace writes a timeline whose events agree with the result",
          "[cli][trace]") {
  check_trace("--model mega-gpt-2 --sublayer op --tp 2 --tokens 512 --scenario t3-mca",
              "run-trace");
}

// Only GPU 0 and its links exist under symmetry: the timeline shows them (it used to index the
// topology's every link and failed).
TEST_CASE("t3sim run --trace under rotational symmetry shows GPU 0 and its links", "[cli][trace]") {
  check_trace(
      "--model mega-gpt-2 --sublayer op --tp 4 --tokens 1024 --scenario t3 "
      "--set sim.symmetry=rotational",
      "run-trace-symmetric");
}

TEST_CASE("t3sim run checks its data in functional mode", "[cli][scenario]") {
  for (const char* name : {"t3-mca", "ideal-rs-nmc"}) {
    const nlohmann::json result =
        run_json("run",
                 std::string("--model mega-gpt-2 --sublayer op --tp 4 --tokens 1024 --functional "
                             "--scenario ") +
                     name,
                 std::string("run-functional-") + name + ".json");
    CHECK(result["functional_check"] == "passed");
    CHECK(result["config"]["sim"]["mode"] == "functional");
    CHECK(result["speedup_vs_sequential"].get<double>() > 0);
  }
}

TEST_CASE("t3sim run's functional check passes with the near-memory adds on the base die",
          "[cli][scenario][nmc]") {
  // The adds are the backing store's whatever the placement times them as: the same sums.
  const nlohmann::json result = run_json(
      "run",
      "--model mega-gpt-2 --sublayer op --tp 4 --tokens 1024 --functional --scenario t3-mca "
      "--set hbm.nmc.placement=base-die",
      "run-functional-base-die.json");
  CHECK(result["functional_check"] == "passed");
  CHECK(result["config"]["hbm"]["nmc"]["placement"] == "base-die");
}

TEST_CASE("t-nlg op at TP 8: t3-mca and the fused scenarios keep the paper's ordering",
          "[cli][scenario][paper]") {
  check_paper_sublayer("op");
}
TEST_CASE("t-nlg fc2 at TP 8: t3-mca and the fused scenarios keep the paper's ordering",
          "[cli][scenario][paper]") {
  check_paper_sublayer("fc2");
}
TEST_CASE("t-nlg fc1 at TP 8: t3-mca and the fused scenarios keep the paper's ordering",
          "[cli][scenario][paper]") {
  check_paper_sublayer("fc1");
}
TEST_CASE("t-nlg ip at TP 8: t3-mca and the fused scenarios keep the paper's ordering",
          "[cli][scenario][paper]") {
  check_paper_sublayer("ip");
}

// Speedups need sequential, so compare runs it whether --scenarios names it or not; its help says
// so, and its output says so when --scenarios left it out.
TEST_CASE("compare says when it adds sequential to the scenarios named", "[cli][compare]") {
  using t3::cli_testing::run_output;
  const std::string workload = "compare --model mega-gpt-2 --sublayer op --tp 4 --tokens 1024";
  const auto added = run_output(workload + " --scenarios t3,t3-mca", "compare-added.log");
  REQUIRE(added.exit_code == 0);
  CHECK(added.text.find("sequential     added to --scenarios t3,t3-mca: every speedup is "
                        "measured against it") != std::string::npos);
  CHECK(added.text.find("\nsequential ") != std::string::npos);  // its row in the table
  for (const char* named : {"sequential,t3", "all"}) {
    const auto kept = run_output(workload + " --scenarios " + named, "compare-named.log");
    REQUIRE(kept.exit_code == 0);
    INFO(named);
    CHECK(kept.text.find("added to --scenarios") == std::string::npos);
  }
  const auto help = run_output("compare --help", "compare-help.log");
  CHECK(help.text.find("sequential always runs too") != std::string::npos);
}

// On a switch compare names each scenario's reduce-scatter on a line of its own: ideal's names the
// one it took and the times it chose between, not a bare "ideal direct direct_sm". The scenario
// column widens to its longest name (ideal-rs-sm-nmc), so the lines stay aligned.
TEST_CASE("compare names each scenario's reduce-scatter on a switch", "[cli][compare]") {
  using t3::cli_testing::run_output;
  const std::string json = std::string(T3SIM_TEST_BINARY_DIR) + "/compare-collectives.json";
  const auto out = run_output(
      "compare --system h100-8 --model mega-gpt-2 --sublayer op --tp 4 --tokens 1024 "
      "--scenarios sequential,t3,ideal,ideal-rs-nmc,ideal-rs-sm-nmc --json \"" +
          json + "\"",
      "compare-collectives.log");
  REQUIRE(out.exit_code == 0);
  std::ifstream file(json);
  const nlohmann::json results = nlohmann::json::parse(file);
  const nlohmann::json& choice = scenario(results, "ideal")["ideal_reduce_scatter"];
  char times[200];
  std::snprintf(times, sizeof times,
                "(ring %.1f us, direct_sm %.1f us, direct_dma_nmc %.1f us, direct_sm_nmc %.1f us)",
                choice["ring_ns"].get<double>() / 1e3, choice["direct_sm_ns"].get<double>() / 1e3,
                choice["direct_dma_nmc_ns"].get<double>() / 1e3,
                choice["direct_sm_nmc_ns"].get<double>() / 1e3);
  INFO(out.text);
  CHECK(out.text.find("reduce-scatter on this switch, by scenario:\n") != std::string::npos);
  CHECK(out.text.find("\nsequential      ring on the SMs\n") != std::string::npos);
  CHECK(out.text.find("\nt3              direct, fused into the GEMM: its stores update each "
                      "chunk's owner\n") != std::string::npos);
  CHECK(out.text.find("\nideal           " + choice["used"].get<std::string>() +
                      ", the fastest run alone " + times + "\n") != std::string::npos);
  CHECK(out.text.find("\nideal-rs-nmc    direct on the DMA engines with near-memory updates\n") !=
        std::string::npos);
  CHECK(out.text.find("\nideal-rs-sm-nmc direct, pushed by the SMs to each chunk's owner as "
                      "near-memory updates\n") != std::string::npos);
  CHECK(out.text.find("\nscenario              time") != std::string::npos);
  CHECK(out.text.find("ideal direct direct") == std::string::npos);
}

// run prints the energy estimate as compare does, in total and by part (mJ).
TEST_CASE("run prints its energy estimate", "[cli][run][energy]") {
  using t3::cli_testing::run_output;
  const std::string json = std::string(T3SIM_TEST_BINARY_DIR) + "/run-energy.json";
  const auto out = run_output(
      "run --model mega-gpt-2 --sublayer op --tp 4 --tokens 1024 --scenario t3 --json \"" + json +
          "\"",
      "run-energy.log");
  REQUIRE(out.exit_code == 0);
  std::ifstream file(json);
  const nlohmann::json energy = nlohmann::json::parse(file)["energy"];
  double dram = 0, nmc = 0;
  for (const auto& [part, joules] : energy["dram"].items()) dram += joules.get<double>();
  for (const auto& [part, joules] : energy["nmc"].items()) nmc += joules.get<double>();
  char line[200];
  std::snprintf(line, sizeof line,
                "\n  energy         %.2f mJ: DRAM %.2f, NMC %.2f, links %.2f, SM %.2f, L2 %.2f\n",
                energy["total"].get<double>() * 1e3, dram * 1e3, nmc * 1e3,
                energy["link"].get<double>() * 1e3, energy["sm"].get<double>() * 1e3,
                energy["l2"].get<double>() * 1e3);
  INFO(out.text);
  CHECK(energy["total"].get<double>() > 0);
  CHECK(out.text.find(line) != std::string::npos);
}

// A sweep warns, as run and compare do, when a DRAM timing caps the HBM's peak, and once for the
// sweep, not once per workload.
TEST_CASE("sweep warns once when a DRAM timing caps the peak", "[cli][sweep][timing]") {
  using t3::cli_testing::run_output;
  const std::string dir = std::string(T3SIM_TEST_BINARY_DIR) + "/sweep-capped";
  const std::string suite = dir + "-suite.json";
  std::ofstream(suite) << R"({"models": ["mega-gpt-2"], "sublayers": ["op", "fc2"], "tp": [4],
                             "tokens": [1024], "scenarios": ["sequential", "t3"]})";
  const std::string emit =
      "sweep --suite \"" + suite + "\" --out \"" + dir + "\" --emit-jobs \"" + dir + "-jobs.txt\"";
  const std::string warning =
      "warning: hbm.bank.timing.ccd_s caps the bank model's peak at 666.7 GB/s";
  const auto capped = run_output(emit + " --set hbm.bank.timing.ccd_s=3", "sweep-capped.log");
  REQUIRE(capped.exit_code == 0);
  INFO(capped.text);
  const std::size_t first = capped.text.find(warning);
  CHECK(first != std::string::npos);
  CHECK(capped.text.find(warning, first + 1) == std::string::npos);
  const auto plain = run_output(emit, "sweep-plain.log");
  REQUIRE(plain.exit_code == 0);
  CHECK(plain.text.find("warning:") == std::string::npos);
}
