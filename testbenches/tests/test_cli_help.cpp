// Every command's --help tells the truth: each option it lists is accepted by that command. The
// options are read from the help text itself, so an option added to a command's help without a
// sample here fails the test until one is given.
#include <catch2/catch.hpp>

#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "testbenches/tests/cli_testing.h"

namespace {

using t3::cli_testing::run_output;

const std::string kDir = T3SIM_TEST_BINARY_DIR;

// How one command is exercised: `context` is passed on every run (option -> its words), each
// listed option is then given as `samples` says (words that follow it, companions included),
// replacing its own context entry and those `replaces` names for it (--shape takes the place of
// --model, --sublayer and --tokens). A run must exit `exit_code` (0 unless `exit_codes` says).
struct CommandSamples {
  std::map<std::string, std::string> context;
  std::map<std::string, std::string> samples;
  std::map<std::string, int> exit_codes;
  std::map<std::string, std::set<std::string>> replaces;
};

// The long options a help text lists: its lines "  --name ..." or "  -h [ --help ] ...".
// Continuation lines are indented further, so an option named in a description is not read.
std::vector<std::string> listed_options(const std::string& help) {
  static const std::regex option(R"(^  (?:-\w \[ )?--([a-z0-9][a-zA-Z0-9-]*))");
  std::vector<std::string> names;
  std::istringstream lines(help);
  for (std::string line; std::getline(lines, line);) {
    std::smatch match;
    if (std::regex_search(line, match, option)) names.push_back(match[1]);
  }
  return names;
}

std::string command_line(const std::string& command, const CommandSamples& samples,
                         const std::string& option) {
  std::string line = command;
  const auto replaced = samples.replaces.find(option);
  for (const auto& [name, words] : samples.context) {
    if (name == option) continue;
    if (replaced != samples.replaces.end() && replaced->second.count(name)) continue;
    line += " --" + name + (words.empty() ? "" : " " + words);
  }
  const std::string& words = samples.samples.at(option);
  return line + " --" + option + (words.empty() ? "" : " " + words);
}

void check_help(const std::string& command, const CommandSamples& samples) {
  const auto help = run_output(command + " --help", "help-" + command + ".log");
  REQUIRE(help.exit_code == 0);
  const std::vector<std::string> options = listed_options(help.text);
  INFO(help.text);
  REQUIRE(options.size() >= 4);  // --system, --tp, --set, --help at least: the parse found them
  for (const std::string& option : options) {
    INFO("t3sim " << command << " --" << option);
    REQUIRE(samples.samples.count(option));  // a listed option with no sample: add one here
    const std::string line = command_line(command, samples, option);
    INFO(line);
    const auto run = run_output(line, "help-" + command + "-" + option + ".log");
    INFO(run.text);
    const auto expected = samples.exit_codes.find(option);
    CHECK(run.exit_code == (expected == samples.exit_codes.end() ? 0 : expected->second));
    CHECK(run.text.find("unrecognised option") == std::string::npos);
    CHECK(run.text.find("--" + option + ":") == std::string::npos);  // refused by name
  }
}

std::string file(const std::string& name) {
  return "\"" + kDir + "/" + name + "\"";
}

// --system, --tp, --set and --help, with the values that keep `tp` GPUs.
std::map<std::string, std::string> system_samples(int tp) {
  return {{"system", "t3-paper"}, {"tp", std::to_string(tp)}, {"set", "sim.seed=2"}, {"help", ""}};
}

// `samples` with the entries of `more` added or replaced.
std::map<std::string, std::string> with(std::map<std::string, std::string> samples,
                                        const std::map<std::string, std::string>& more) {
  for (const auto& [option, words] : more) samples[option] = words;
  return samples;
}

// A small sublayer that simulates in a fraction of a second, functional mode included.
const std::map<std::string, std::string> kWorkload = {{"model", "bert-large"},
                                                      {"sublayer", "op"},
                                                      {"tp", "4"},
                                                      {"tokens", "256"},
                                                      {"set", "gemm.tile_m=64"}};

// --shape M,N,K stands for the model's sublayer at its token count.
const std::map<std::string, std::set<std::string>> kShapeReplaces = {
    {"shape", {"model", "sublayer", "tokens"}}};

// The samples of the workload options and --set (which keeps the workload's tile size).
std::map<std::string, std::string> workload_samples(const std::string& json) {
  return with(system_samples(4), {{"set", "gemm.tile_m=64 --set sim.seed=2"},
                                  {"model", "bert-large"},
                                  {"sublayer", "op"},
                                  {"tokens", "256"},
                                  {"functional", ""},
                                  {"shape", "256,1024,256"},
                                  {"json", file(json)},
                                  {"stats", file("stats-" + json)}});
}

}  // namespace

TEST_CASE("run --help lists only options run accepts", "[cli][help]") {
  CommandSamples samples;
  samples.context = with(kWorkload, {{"scenario", "sequential"}});
  samples.replaces = kShapeReplaces;
  samples.samples =
      with(workload_samples("help-run.json"), {{"scenario", "t3"},
                                               {"trace", file("help-run.trace.json")},
                                               {"vcd", file("help-run.vcd")},
                                               {"record", file("help-run.stl")},
                                               {"gpu", "1 --record " + file("help-run-gpu1.stl")},
                                               {"jobs", "1"}});
  check_help("run", samples);
}

TEST_CASE("compare --help lists only options compare accepts", "[cli][help]") {
  CommandSamples samples;
  samples.context = with(kWorkload, {{"scenarios", "t3"}});
  samples.replaces = kShapeReplaces;
  samples.samples =
      with(workload_samples("help-compare.json"), {{"scenarios", "t3,t3-mca"}, {"jobs", "1"}});
  check_help("compare", samples);
}

TEST_CASE("sweep --help lists only options sweep accepts", "[cli][help]") {
  const std::string suite = kDir + "/help-sweep-suite.json";
  std::ofstream(suite) << R"({"models": ["mega-gpt-2"], "sublayers": ["op"], "tp": [4],
                              "tokens": [1024], "scenarios": ["t3"]})";
  CommandSamples samples;
  samples.context = {{"suite", "\"" + suite + "\""}, {"out", file("help-sweep")}};
  // A sweep of the context first, so --collect has results to read.
  REQUIRE(run_output("sweep --suite \"" + suite + "\" --out " + file("help-sweep"),
                     "help-sweep-setup.log")
              .exit_code == 0);
  samples.samples = with(system_samples(4), {{"suite", "\"" + suite + "\""},
                                             {"out", file("help-sweep")},
                                             {"jobs", "1"},
                                             {"emit-jobs", file("help-sweep-jobs.txt")},
                                             {"collect", ""},
                                             {"allow-missing", "--collect"},
                                             {"resume", ""},
                                             {"full", ""}});
  check_help("sweep", samples);
}

TEST_CASE("model --help lists only options model accepts", "[cli][help]") {
  CommandSamples samples;
  samples.context = {{"model", "bert-large"}, {"tp", "4"},     {"phase", "inference"},
                     {"scenarios", "t3"},     {"layers", "1"}, {"tokens", "1024"}};
  samples.samples = with(system_samples(4), {{"model", "bert-large"},
                                             {"phase", "training"},
                                             {"scenario", "t3-mca"},
                                             {"scenarios", "t3,t3-mca"},
                                             {"layers", "2"},
                                             {"tokens", "1024"},
                                             {"batch", "2"},
                                             {"seq", "256 --batch 4"},
                                             {"fused-attention", ""},
                                             {"full", ""},
                                             {"json", file("help-model.json")},
                                             {"jobs", "1"}});
  check_help("model", samples);
}

TEST_CASE("gemm --help lists only options gemm accepts", "[cli][help]") {
  CommandSamples samples;
  samples.context = kWorkload;
  samples.replaces = kShapeReplaces;
  samples.samples = with(workload_samples("help-gemm.json"),
                         {{"group", ""},
                          {"record", file("help-gemm.stl")},
                          {"gpu", "1 --group --record " + file("help-gemm-gpu1.stl")}});
  check_help("gemm", samples);
}

TEST_CASE("collective --help lists only options collective accepts", "[cli][help]") {
  CommandSamples samples;
  samples.context = {{"op", "all-reduce"}, {"tp", "2"}, {"bytes", "4096"}};
  samples.samples =
      with(system_samples(2), {{"op", "all-gather"},
                               {"impl", "ring-dma-nmc"},
                               {"bytes", "8192"},
                               {"channels", "2"},
                               {"slices", "2 --impl ring-dma-nmc"},
                               {"functional", ""},
                               {"omit-rank", "1"},
                               {"record", file("help-collective.stl")},
                               {"gpu", "1 --record " + file("help-collective-gpu1.stl")},
                               {"json", file("help-collective.json")}});
  // A rank that never launches is a run that cannot finish: its stall diagnosis exits 2.
  samples.exit_codes = {{"omit-rank", 2}};
  check_help("collective", samples);
}

TEST_CASE("bandwidth --help lists only options bandwidth accepts", "[cli][help]") {
  CommandSamples samples;
  samples.context = {{"tp", "2"}};
  samples.samples = with(system_samples(2), {{"json", file("help-bandwidth.json")},
                                             {"pattern", "read"},
                                             {"streams", "4,8 --pattern read"},
                                             {"access-bytes", "4096 --pattern read"}});
  check_help("bandwidth", samples);
}

TEST_CASE("trace --help lists only options trace accepts", "[cli][help]") {
  std::ofstream(kDir + "/help-trace.stl") << "0:\tread\t0x0\n2:\twrite\t0x1000\n4:\tupdate\t0x40\n";
  CommandSamples samples;
  samples.context = {{"play", file("help-trace.stl")}, {"tp", "2"}};
  samples.samples = with(system_samples(2), {{"play", file("help-trace.stl")},
                                             {"clock-MHz", "500"},
                                             {"saturate", ""},
                                             {"outstanding", "8 --saturate"},
                                             {"through", "l2"},
                                             {"gpu", "1"},
                                             {"element", "fp32"},
                                             {"json", file("help-trace.json")},
                                             {"commands", file("help-trace.commands")}});
  check_help("trace", samples);
}

TEST_CASE("interference --help lists only options interference accepts", "[cli][help]") {
  CommandSamples samples;
  // A small GEMM on 16 SMs beside 2-SM backgrounds streaming 1 MiB buffers past a 256 KiB L2.
  samples.context = {{"shape", "512,256,128"},
                     {"set", "sm.count=16 --set l2.size_bytes=262144"},
                     {"background-sms", "2"},
                     {"stream-buffer-bytes", "1048576"}};
  samples.replaces = {{"model", {"shape"}}, {"sublayer", {"shape"}}, {"tokens", {"shape"}}};
  samples.samples = with(system_samples(4), {{"system", "h100-8"},
                                             {"set", "sm.count=16 --set l2.size_bytes=262144"},
                                             {"model", "mega-gpt-2 --tokens 256"},
                                             {"sublayer", "op --tokens 256"},
                                             {"tokens", "256"},
                                             {"shape", "256,256,64"},
                                             {"background", "compute"},
                                             {"background-sms", "2,4"},
                                             {"stream-buffer-bytes", "2097152"},
                                             {"stream-step-bytes", "8192"},
                                             {"json", file("help-interference.json")},
                                             {"jobs", "1"}});
  check_help("interference", samples);
}

TEST_CASE("config --help lists only options config accepts", "[cli][help]") {
  CommandSamples samples;
  samples.samples = with(system_samples(4), {{"table", ""}});
  check_help("config", samples);
}

TEST_CASE("the help's option lines are read, descriptions naming options are not", "[cli][help]") {
  const std::string help =
      "System:\n"
      "  --system arg (=t3-paper) preset name\n"
      "  -h [ --help ]            show this help\n"
      "  --allow-missing          with --collect: summarise\n"
      "                           --out and summarise them\n";
  CHECK(listed_options(help) == std::vector<std::string>{"system", "help", "allow-missing"});
}
