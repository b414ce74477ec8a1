// Whole-model views (experiments/model_run.h): a layer is its kernels one after another, each
// simulated; memory-bound kernels are streaming kernels that move the bytes their shapes imply
// through the simulated DRAM; all-reduced GEMMs are their scenario's sublayer runs; the model is
// layers x the layer; identical kernels are simulated once; bad input is refused naming it.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "config/config_io.h"
#include "experiments/model_run.h"
#include "experiments/model_sweep.h"
#include "experiments/scenario_job.h"
#include "models/sm/work_item.h"
#include "workloads/model_zoo.h"

using namespace t3;
using Catch::Contains;

namespace {

ModelRequest request(const std::string& name, int tp, LayerPhase phase,
                     std::vector<Scenario> scenarios) {
  ModelRequest r;
  r.config = load_system("t3-paper");
  apply_override(r.config, "gpus=" + std::to_string(tp));
  if (tp >= 3) apply_override(r.config, "sim.symmetry=rotational");
  validate(r.config);
  r.model = name;
  r.phase = phase;
  r.shape = model_shape(r.config, model(name), 0, 0);
  r.scenarios = std::move(scenarios);
  return r;
}

template <typename Error, typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& error) {
    return error.what();
  }
  FAIL("no error thrown");
  return {};
}

const nlohmann::json& scenario_of(const nlohmann::json& document, const std::string& name) {
  for (const auto& entry : document["scenarios"]) {
    if (entry["scenario"] == name) return entry;
  }
  FAIL("no scenario " << name);
  return document;
}

// A kernel's time under `scenario`: its own, or its sublayer run's under that scenario.
double kernel_ns(const nlohmann::json& kernel, const std::string& scenario) {
  const auto& time = kernel["time_ns"];
  return time.is_object() ? time[scenario].get<double>() : time.get<double>();
}

}  // namespace

TEST_CASE("a streaming kernel's workgroup shares cover its bytes in whole elements", "[model]") {
  for (const std::uint64_t bytes : {0ull, 2ull, 1000ull, 33554432ull, 100000002ull}) {
    for (const std::int64_t workgroups : {1, 7, 160}) {
      std::uint64_t next = 0;
      for (std::int64_t w = 0; w < workgroups; ++w) {
        const auto [begin, end] = StreamKernel::share(bytes, 2, workgroups, w);
        CHECK(begin == next);
        CHECK(begin % 2 == 0);
        CHECK(end >= begin);
        CHECK(end - begin <= (bytes / 2 / workgroups + 1) * 2);  // as equal as they can be
        next = end;
      }
      CHECK(next == bytes);
    }
  }
}

TEST_CASE("a streaming kernel moves its bytes through DRAM at no more than HBM's rate", "[model]") {
  SystemConfig config = load_system("t3-paper");
  apply_override(config, "gpus=1");
  validate(config);
  const std::uint64_t read = 64ull << 20, written = 32ull << 20;
  const nlohmann::json run = run_stream_kernel(config, read, written);
  CHECK(run["dram_read_bytes"].get<double>() == Approx(read).epsilon(0.01));
  CHECK(run["dram_write_bytes"].get<double>() == Approx(written).epsilon(0.01));
  const double floor_ns = static_cast<double>(read + written) / config.hbm.bandwidth_GBps;
  CHECK(run["time_ns"].get<double>() > floor_ns);
  // A memory-bound kernel, not a compute-bound one: within 2x of the bandwidth floor.
  CHECK(run["time_ns"].get<double>() < 2 * floor_ns);
}

TEST_CASE("a streaming kernel carrying matrix FLOPs takes at least their time on the SMs",
          "[model]") {
  SystemConfig config = load_system("t3-paper");
  apply_override(config, "gpus=1");
  validate(config);
  const std::uint64_t bytes = 8ull << 20;
  const double peak = static_cast<double>(config.sm.count) * config.sm.flops_per_clock *
                      config.sm.clock_GHz * config.sm.efficiency;  // FLOP per ns
  const auto flops = static_cast<std::uint64_t>(peak * 200e3);     // 200 us of math
  const nlohmann::json run = run_stream_kernel(config, bytes, bytes, flops);
  CHECK(run["time_ns"].get<double>() >= 200e3);
  CHECK(run["time_ns"].get<double>() < 1.2 * 200e3);  // the bytes hide under the math
}

TEST_CASE("memory-bound kernels move the bytes their shapes imply (simulated DRAM counters)",
          "[model]") {
  // Training: layer norms, softmax, dropouts with their masks, residuals, GeLU and their
  // backward kernels.
  const nlohmann::json document =
      run_models({request("bert-large", 4, LayerPhase::Training, {Scenario::Sequential})}, 2)
          .front();
  int memory_bound = 0;
  for (const auto& kernel : document["kernels"]) {
    if (kernel["class"] != "memory_bound") continue;
    INFO(kernel["name"]);
    ++memory_bound;
    CHECK(kernel["dram_read_bytes"].get<double>() ==
          Approx(kernel["bytes_read"].get<double>()).epsilon(0.01));
    CHECK(kernel["dram_write_bytes"].get<double>() ==
          Approx(kernel["bytes_written"].get<double>()).epsilon(0.01));
  }
  CHECK(memory_bound == 16);  // 7 forward (with the attention dropout), 9 backward
}

TEST_CASE("a layer is its kernels one after another, the model is layers x the layer", "[model]") {
  ModelRequest asked = request("bert-large", 4, LayerPhase::Inference,
                               {Scenario::Sequential, Scenario::T3, Scenario::Ideal});
  ModelRequest three = asked;
  three.layers = 3;
  const std::vector<nlohmann::json> documents = run_models({asked, three}, 2);
  const nlohmann::json& whole = documents[0];
  CHECK(whole["layers"] == 24);  // BERT-Large's own
  for (const std::string name : {"sequential", "t3", "ideal"}) {
    INFO(name);
    const auto& entry = scenario_of(whole, name);
    double sum = 0;
    for (const auto& kernel : whole["kernels"]) sum += kernel_ns(kernel, name);
    const double layer = entry["layer_time_ns"];
    CHECK(layer == Approx(sum).epsilon(1e-12));
    double classes = 0;
    for (const auto& [kind, time] : entry["breakdown_ns"].items()) classes += time.get<double>();
    CHECK(classes == Approx(layer).epsilon(1e-12));
    CHECK(entry["model_time_ns"].get<double>() == Approx(24 * layer).epsilon(1e-12));
    // The same layer with --layers 3: the same layer time, three of them.
    const auto& short_entry = scenario_of(documents[1], name);
    CHECK(short_entry["layer_time_ns"].get<double>() == layer);
    CHECK(short_entry["model_time_ns"].get<double>() == Approx(3 * layer).epsilon(1e-12));
    CHECK(entry["speedup_vs_sequential"].get<double>() ==
          Approx(scenario_of(whole, "sequential")["layer_time_ns"].get<double>() / layer));
  }
  // Energy: a layer's is its kernels', the model's layers x that; a one-GPU kernel counts once
  // per GPU (each of the 4 runs its copy), so it is 4 x the same kernel's energy on a group of 1.
  for (const std::string name : {"sequential", "t3", "ideal"}) {
    INFO(name);
    const auto& entry = scenario_of(whole, name);
    double sum = 0;
    for (const auto& kernel : whole["kernels"]) {
      const auto& energy = kernel["energy_J"];
      sum += energy.is_object() ? energy[name].get<double>() : energy.get<double>();
    }
    CHECK(sum > 0);
    CHECK(entry["layer_energy_J"].get<double>() == Approx(sum).epsilon(1e-12));
    CHECK(entry["model_energy_J"].get<double>() == Approx(24 * sum).epsilon(1e-12));
    CHECK(scenario_of(documents[1], name)["model_energy_J"].get<double>() ==
          Approx(3 * sum).epsilon(1e-12));
    const double sequential_energy = scenario_of(whole, "sequential")["layer_energy_J"];
    CHECK(entry["energy_saving_vs_sequential"].get<double>() ==
          Approx((sequential_energy - sum) / sequential_energy));
  }
  // T3 moves less through DRAM than sequential: the layer costs less energy.
  CHECK(scenario_of(whole, "t3")["energy_saving_vs_sequential"].get<double>() > 0);
  // T3 changes only the all-reduced kernels' time; exposed communication is theirs alone.
  const auto& sequential = scenario_of(whole, "sequential")["breakdown_ns"];
  const auto& t3 = scenario_of(whole, "t3")["breakdown_ns"];
  CHECK(t3["memory_bound"] == sequential["memory_bound"]);
  CHECK(t3["attention"] == sequential["attention"]);
  CHECK(t3["communication_exposed"].get<double>() <
        sequential["communication_exposed"].get<double>());
}

TEST_CASE("an all-reduced kernel is its scenario's sublayer run, identical kernels run once",
          "[model]") {
  const ModelRequest asked =
      request("bert-large", 4, LayerPhase::Inference, {Scenario::Sequential, Scenario::T3});
  const nlohmann::json document = run_models({asked}, 2).front();
  ScenarioJob job;
  job.config = asked.config;
  job.model = "bert-large";
  job.sublayer = Sublayer::Fc2;
  const std::vector<nlohmann::json> runs =
      run_scenarios({job}, {Scenario::Sequential, Scenario::T3}, 2).front();
  for (const auto& kernel : document["kernels"]) {
    if (kernel["name"] != "fc2") continue;
    CHECK(kernel["time_ns"]["sequential"] == runs[0]["time_ns"]);
    CHECK(kernel["time_ns"]["t3"] == runs[1]["time_ns"]);
    CHECK(kernel["exposed_comm_ns"]["t3"] == runs[1]["exposed_comm_ns"]);
    CHECK(kernel["energy_J"]["t3"] == runs[1]["energy"]["total"]);
  }
  // 12 kernels; at TP 4 layer norms and GeLU move the same bytes (T x H = T x 4H/4) and so do
  // both residuals: layer norm, qkv, scores, softmax, context, residual, fc1 once each, op and fc2
  // under two scenarios each: 11 simulations.
  CHECK(document["kernels"].size() == 12);
  CHECK(document["simulations"] == 11);
}

TEST_CASE("bad model input is refused naming the value", "[model]") {
  CHECK_THAT(
      error_of<ConfigError>([] {
        check_model_request(request("gpt-5", 4, LayerPhase::Training, {Scenario::Sequential}));
      }),
      Contains("'gpt-5'"));
}

TEST_CASE("a TP degree that does not divide the heads or the hidden size is refused", "[model]") {
  ModelRequest heads = request("bert-large", 4, LayerPhase::Training, {Scenario::Sequential});
  apply_override(heads.config, "gpus=32");
  CHECK_THAT(error_of<ConfigError>([&] { check_model_request(heads); }),
             Contains("16 heads are not divisible by tp 32"));
  ModelRequest hidden = heads;
  apply_override(hidden.config, "gpus=3");
  CHECK_THAT(error_of<ConfigError>([&] { check_model_request(hidden); }),
             Contains("hidden 1024 is not divisible by tp 3"));
  ModelRequest layers = request("bert-large", 4, LayerPhase::Training, {Scenario::Sequential});
  layers.layers = -2;
  CHECK_THAT(error_of<ConfigError>([&] { check_model_request(layers); }), Contains("layers -2"));
}

TEST_CASE("the e2e suite: every paper model at each TP a Megatron layer splits for, both phases",
          "[model]") {
  const ModelSuite suite = e2e_suite();
  CHECK(suite.scenarios == all_scenarios());
  std::vector<std::string> points;
  for (const ModelPoint& point : suite.points) {
    points.push_back(point.model + " " + std::to_string(point.tp) + " " + to_string(point.phase));
  }
  // REFERENCES section 1's models at their TP degrees, less those whose heads the TP degree does
  // not divide (T-NLG's 28 at 8 and 16, PaLM's 48 at 32); BERT-Large has no paper TP degree.
  CHECK(points == std::vector<std::string>{"mega-gpt-2 8 training", "mega-gpt-2 16 training",
                                           "gpt-3 32 training", "mt-nlg 32 training",
                                           "mega-gpt-2 8 inference", "mega-gpt-2 16 inference",
                                           "gpt-3 32 inference", "mt-nlg 32 inference"});
  REQUIRE(suite.left_out.size() == 3);
  CHECK_THAT(suite.left_out[0], Contains("t-nlg at tp 8: its 28 heads are not divisible"));
  CHECK_THAT(suite.left_out[2], Contains("palm at tp 32: its 48 heads are not divisible"));
}

TEST_CASE("the e2e summary has speedups per phase with geomean and max rows", "[model]") {
  const auto document = [](const char* name, const char* phase, double t3) {
    nlohmann::json scenarios = nlohmann::json::array();
    for (const auto& [scenario, speedup] : {std::pair<const char*, double>{"sequential", 1.0},
                                            std::pair<const char*, double>{"t3", t3}}) {
      scenarios.push_back({{"scenario", scenario},
                           {"layer_time_ns", 1000.0 / speedup},
                           {"model_time_ns", 2000.0 / speedup},
                           {"speedup_vs_sequential", speedup},
                           {"model_energy_J", 3.0 / speedup},
                           {"energy_saving_vs_sequential", 1.0 - 1.0 / speedup},
                           {"breakdown_ns",
                            {{"gemm", 500.0 / speedup},
                             {"attention", 100.0},
                             {"memory_bound", 200.0},
                             {"communication_exposed", 200.0 / speedup}}}});
    }
    return nlohmann::json{
        {"model", name}, {"tp", 8},     {"phase", phase},           {"batch", 2},
        {"seq", 4},      {"layers", 2}, {"symmetry", "rotational"}, {"scenarios", scenarios}};
  };
  ModelSuite suite;
  suite.name = "test";
  suite.scenarios = {Scenario::Sequential, Scenario::T3};
  suite.left_out = {"x at tp 3: why"};
  const std::string dir = std::string(T3SIM_TEST_BINARY_DIR) + "/model-sweep";
  std::filesystem::create_directories(dir);
  write_model_sweep(dir, suite, "t3-paper",
                    {document("a", "training", 1.1), document("b", "training", 1.21),
                     document("a", "inference", 1.3)});
  std::ifstream file(dir + "/summary.md");
  const std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  const std::string training = text.substr(text.find("## Training"));
  CHECK_THAT(training, Contains("| **geomean** | | | | | **1.154** |"));  // sqrt(1.1 x 1.21)
  CHECK_THAT(training, Contains("| **max** | | | | | **1.210** |"));
  CHECK_THAT(text.substr(text.find("## Inference")),
             Contains("| **geomean** | | | | | **1.300** |"));
  CHECK_THAT(text, Contains("- x at tp 3: why"));
  // Energy: sequential's model energy and t3's saving (1 - 1 / 1.1 = 9.1%) per document.
  const std::string energy = text.substr(text.find("## Energy"));
  CHECK_THAT(energy, Contains("| model | TP | phase | sequential model J | t3 saved |"));
  CHECK_THAT(energy, Contains("| a | 8 | training | 3.0 | 9.1% |"));
  CHECK_THAT(energy, Contains("| a | 8 | inference | 3.0 | 23.1% |"));
  std::ifstream csv(dir + "/results.csv");
  std::string header, line;
  std::getline(csv, header);
  CHECK(header.rfind("model,tp,phase,", 0) == 0);
  CHECK(header.find(",model_energy_J,energy_saving_vs_sequential") != std::string::npos);
  int rows = 0;
  while (std::getline(csv, line)) ++rows;
  CHECK(rows == 6);  // 3 documents x 2 scenarios
}
