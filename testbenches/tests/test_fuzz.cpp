// A seeded battery of hostile inputs: mutated presets (configs/*.json), mutated command lines and
// sweep suites with bad entries, all run through the t3sim binary, and mutated host programs
// (unowned addresses, overlapping tracker regions, an overflowing tracker) run through the
// library. Every case must end within 10 s, either normally (exit 0, or a program that completes)
// or with exit 2 and a one-line message naming the cause (a library run: an exception with a
// message): never a crash, a hang, an exit 1 or a sanitizer report.
//
// The seed is fixed (kDefaultSeed) so the battery is the same on every run; T3SIM_FUZZ_SEED=S
// runs another battery, T3SIM_FUZZ_CASE=N runs only case N of each family. A failing case prints
// its input, its command and the line that reproduces it. Inputs are written under
// <binary dir>/fuzz/ and kept for failing cases.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config_io.h"
#include "models/system/simulation.h"
#include "models/system/tp_group.h"
#include "protocol/tracker_registers.h"
#include "testbenches/small_system.h"
#include "testbenches/tests/cli_testing.h"
#include "workloads/scenario.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr std::uint64_t kDefaultSeed = 0x7353'1a2b'2026'1125ull;
constexpr double kTimeoutS = 10.0;
// Cases per family: 220 + 170 + 90 + 100 = 580.
constexpr int kPresetCases = 220;
constexpr int kCommandCases = 170;
constexpr int kSuiteCases = 90;
constexpr int kProgramCases = 100;

std::uint64_t battery_seed() {
  const char* text = std::getenv("T3SIM_FUZZ_SEED");
  return text && *text ? std::stoull(text, nullptr, 0) : kDefaultSeed;
}

// -1: every case; otherwise the one case to run.
int only_case() {
  const char* text = std::getenv("T3SIM_FUZZ_CASE");
  return text && *text ? std::stoi(text) : -1;
}

// A small, portable generator (splitmix64), so a seed means the same battery on every platform.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  std::size_t below(std::size_t n) { return static_cast<std::size_t>(next() % n); }
  bool chance(int percent) { return below(100) < static_cast<std::size_t>(percent); }
  template <typename T>
  const T& pick(const std::vector<T>& items) {
    return items[below(items.size())];
  }

 private:
  std::uint64_t state_;
};

std::uint64_t case_seed(std::uint64_t seed, int family, int index) {
  Rng mix(seed ^ (static_cast<std::uint64_t>(family) << 40) ^ static_cast<std::uint64_t>(index));
  return mix.next();
}

// One hostile input for the binary.
struct CliCase {
  std::vector<std::string> args;   // after the binary
  std::string what;                // the mutation, for the failure report
  std::string input_path;          // a file the case reads, if any (shown on failure)
  bool must_fail = false;          // the input is wrong: exit 0 would be a bug
  std::vector<std::string> names;  // with exit 2, the message must name one of these
};

struct Outcome {
  bool timed_out = false;
  bool signaled = false;
  int code = 0;
  int signal = 0;
  double seconds = 0;
  std::string out, err;
};

std::string read_text(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

// Runs t3sim in its own process group (it may fork simulation processes) with stdout and stderr
// in files; a run past the timeout is killed with its whole group.
Outcome run_binary(const std::vector<std::string>& args, const std::string& work) {
  const std::string out = work + "/stdout", err = work + "/stderr";
  std::vector<std::string> words = {T3SIM_BINARY};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& word : words) argv.push_back(word.data());
  argv.push_back(nullptr);
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    setpgid(0, 0);
    const int o = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int e = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (o < 0 || e < 0) _exit(126);
    dup2(o, 1);
    dup2(e, 2);
    setenv("TMPDIR", work.c_str(), 1);
    execv(argv[0], argv.data());
    _exit(127);
  }
  setpgid(pid, pid);
  Outcome outcome;
  int status = 0;
  for (;;) {
    const pid_t done = waitpid(pid, &status, WNOHANG);
    outcome.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (done == pid) break;
    if (outcome.seconds > kTimeoutS) {
      outcome.timed_out = true;
      kill(-pid, SIGKILL);
      waitpid(pid, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  kill(-pid, SIGKILL);  // no simulation process may outlive its parent
  if (!outcome.timed_out) {
    outcome.signaled = WIFSIGNALED(status);
    outcome.signal = outcome.signaled ? WTERMSIG(status) : 0;
    outcome.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  outcome.out = read_text(out);
  outcome.err = read_text(err);
  return outcome;
}

bool has_sanitizer_report(const std::string& err) {
  return err.find("Sanitizer") != std::string::npos ||
         err.find("runtime error:") != std::string::npos;
}

// Empty if the outcome is acceptable for the case, else what is wrong with it.
std::string judge(const CliCase& c, const Outcome& o) {
  if (o.timed_out) return "did not finish within 10 s";
  if (o.signaled) return "killed by signal " + std::to_string(o.signal);
  if (has_sanitizer_report(o.err)) return "sanitizer report";
  if (o.code != 0 && o.code != 2) return "exit " + std::to_string(o.code) + " (want 0 or 2)";
  if (o.code == 0) return c.must_fail ? "exit 0 for an input that is wrong" : "";
  std::string line = o.err;
  while (!line.empty() && line.back() == '\n') line.pop_back();
  if (line.rfind("t3sim: ", 0) != 0) return "the message does not start with 't3sim: '";
  if (line.find('\n') != std::string::npos) return "the message is more than one line";
  if (c.names.empty()) return "";
  for (const auto& name : c.names) {
    if (line.find(name) != std::string::npos) return "";
  }
  std::string wanted;
  for (const auto& name : c.names) wanted += (wanted.empty() ? "'" : ", '") + name + "'";
  return "the message names none of " + wanted;
}

std::string shell_quote(const std::string& word) {
  std::string quoted = "'";
  for (char ch : word) quoted += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return quoted + "'";
}

std::string clip(const std::string& text, std::size_t most = 1500) {
  if (text.size() <= most) return text;
  return text.substr(0, most) + "... (" + std::to_string(text.size()) + " bytes)";
}

std::string work_dir(const std::string& family, int index) {
  const std::string dir =
      std::string(T3SIM_TEST_BINARY_DIR) + "/fuzz/" + family + "/" + std::to_string(index);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// Runs `count` cases of a family made by `make` (case index, its generator, its work directory)
// and fails listing every case that misbehaved, with its input and how to reproduce it.
void run_family(const char* family, int family_id, int count,
                const std::function<CliCase(int, Rng&, const std::string&)>& make) {
  const std::uint64_t seed = battery_seed();
  std::vector<std::string> failures;
  int ran = 0, failed_inputs = 0;
  for (int index = 0; index < count; ++index) {
    if (only_case() >= 0 && index != only_case()) continue;
    Rng rng(case_seed(seed, family_id, index));
    const std::string work = work_dir(family, index);
    const CliCase c = make(index, rng, work);
    const Outcome outcome = run_binary(c.args, work);
    ++ran;
    if (outcome.code == 2) ++failed_inputs;
    const std::string wrong = judge(c, outcome);
    if (wrong.empty()) {
      fs::remove_all(work);
      continue;
    }
    std::string command = "t3sim";
    for (const auto& arg : c.args) command += " " + shell_quote(clip(arg, 200));
    std::ostringstream report;
    report << family << " case " << index << ": " << wrong << "\n  mutation: " << c.what
           << "\n  command:  " << command << "\n  exit " << outcome.code << " after "
           << outcome.seconds << " s\n  stderr:   " << clip(outcome.err);
    if (!c.input_path.empty()) {
      report << "\n  input (" << c.input_path << "):\n" << clip(read_text(c.input_path));
    }
    report << "\n  reproduce: T3SIM_FUZZ_SEED=" << seed << " T3SIM_FUZZ_CASE=" << index
           << " testbenches/tests/test_fuzz '" << Catch::getResultCapture().getCurrentTestName()
           << "'";
    failures.push_back(report.str());
  }
  INFO(family << ": " << ran << " cases, " << failed_inputs << " refused with exit 2");
  for (const auto& failure : failures) {
    UNSCOPED_INFO(failure);
  }
  CHECK(failures.empty());
}

// ---- presets ----------------------------------------------------------------------------------

// Dotted paths of every leaf of `document`.
void leaves(const json& document, const std::string& prefix, std::vector<std::string>& out) {
  for (const auto& [key, value] : document.items()) {
    const std::string path = prefix.empty() ? key : prefix + "." + key;
    if (value.is_object()) {
      leaves(value, path, out);
    } else {
      out.push_back(path);
    }
  }
}

json::json_pointer pointer(const std::string& dotted) {
  std::string text = "/" + dotted;
  for (auto& ch : text) {
    if (ch == '.') ch = '/';
  }
  return json::json_pointer(text);
}

const std::vector<std::string> kRawNumbers = {
    "NaN",  "Infinity", "-Infinity", "1e999", "-1e999",
    "0x10", "01",       ".5",        "+1",    std::string(400, '9')};

const std::vector<json> kExtremeNumbers = {-1,
                                           0,
                                           1,
                                           2,
                                           3,
                                           7,
                                           2147483647,
                                           2147483648.0,
                                           4294967295u,
                                           4294967296u,
                                           9007199254740993u,
                                           9223372036854775807ll,
                                           18446744073709551615ull,
                                           -9223372036854775807ll - 1,
                                           1e19,
                                           1e30,
                                           1e308,
                                           -1e308,
                                           5e-324,
                                           -0.0,
                                           0.5,
                                           1e-9,
                                           1.5,
                                           3.7};

// A random nested value of the wrong type for a leaf of `original`'s type.
json wrong_type(Rng& rng, const json& original) {
  std::vector<json> choices = {
      json("fast"), json(true), json(nullptr), json::array({1, 2}), json::object({{"a", 1}}),
      json(12)};
  for (;;) {
    json choice = rng.pick(choices);
    const bool same = (choice.is_number() && original.is_number()) ||
                      (choice.is_string() && original.is_string());
    if (!same) return choice;
  }
}

std::string write_file(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

std::vector<json> presets() {
  std::vector<json> documents;
  for (const char* name : {"t3-paper", "a100-8", "h100-8"}) {
    documents.push_back(
        json::parse(read_text(std::string(T3SIM_SOURCE_DIR) + "/configs/" + name + ".json")));
  }
  return documents;
}

CliCase preset_case(int index, Rng& rng, const std::string& work) {
  static const std::vector<json> bases = presets();
  json document = rng.pick(bases);
  std::vector<std::string> paths;
  leaves(document, "", paths);
  const std::string file = work + "/preset.json";
  CliCase c;
  std::string raw;  // replaces the marker string in the text, for values JSON cannot hold
  const std::string marker = "@@raw@@";
  // Which command reads the file: `config` always; a tiny collective or run sometimes, so that
  // values the loader accepts reach the models (kept cheap: 2 GPUs, 4 KiB, or a 512-token op).
  const std::size_t kind = rng.below(11);
  const std::string path = rng.pick(paths);
  std::string text;
  bool have_text = false;    // the case wrote the file's text itself
  bool cheap_to_run = true;  // false when the mutation may leave a valid but expensive system
  switch (index % 12) {
    case 0:
    case 1: {
      document[pointer(path)] = wrong_type(rng, document[pointer(path)]);
      c.what = path + " = " + document[pointer(path)].dump() + " (wrong type)";
      c.must_fail = true;
      c.names = {path};
      break;
    }
    case 2: {
      const auto p = pointer(path);
      if (rng.chance(30) && path.find('.') != std::string::npos) {
        document.erase(path.substr(0, path.find('.')));
        c.what = "section " + path.substr(0, path.find('.')) + " missing";
      } else {
        document[p.parent_pointer()].erase(p.back());
        c.what = path + " missing";
      }
      break;
    }
    case 3:
    case 4:
    case 5: {
      document[pointer(path)] = rng.pick(kExtremeNumbers);
      c.what = path + " = " + document[pointer(path)].dump() + " (extreme number)";
      c.names = {path};
      cheap_to_run = false;
      break;
    }
    case 6: {
      raw = rng.pick(kRawNumbers);
      document[pointer(path)] = marker;
      c.what = path + " = " + clip(raw, 20) + " (not a finite JSON number)";
      c.must_fail = true;
      c.names = {path, file};
      break;
    }
    case 7: {
      const std::string section =
          path.find('.') == std::string::npos ? std::string() : path.substr(0, path.find('.'));
      const std::string key = rng.chance(50) ? "bogus_key" : "Channels";
      if (section.empty()) {
        document[key] = 1;
      } else {
        document[section][key] = 1;
      }
      c.what = "unknown key " + key + " in " + (section.empty() ? "the top level" : section);
      c.must_fail = true;
      c.names = {key};
      break;
    }
    case 8: {
      json huge = json::array();
      for (int i = 0; i < 100000; ++i) huge.push_back(i);
      if (rng.chance(30)) {
        document["huge"] = huge;
        c.names = {"huge"};
      } else {
        document[pointer(path)] = huge;
        c.names = {path};
      }
      c.what = "a 100000-element array";
      c.must_fail = true;
      break;
    }
    case 9: {
      const std::size_t how = rng.below(7);
      have_text = how != 4;
      c.must_fail = true;
      c.names = {file};
      if (how == 0) {
        text = "";
        c.what = "an empty file";
      } else if (how == 1) {
        text = document.dump(2);
        text = text.substr(0, rng.below(text.size() - 1));
        c.what = "the text cut at " + std::to_string(text.size());
      } else if (how == 2) {
        text = rng.chance(50) ? "[1, 2, 3]" : "\"t3-paper\"";
        c.what = "a document that is not an object";
      } else if (how == 3) {
        text = std::string(20000, '[') + std::string(20000, ']');
        c.what = "20000 nested arrays";
      } else if (how == 4) {
        document[pointer(path)] = json::parse(std::string(2000, '[') + std::string(2000, ']'));
        c.what = path + " = 2000 nested arrays";
        c.names = {path};
      } else if (how == 5) {
        text = document.dump(2);
        for (int i = 0; i < 8; ++i)
          text[rng.below(text.size())] = static_cast<char>(rng.below(256));
        c.what = "8 random bytes overwritten";
        c.must_fail = false;
        c.names = {};
        cheap_to_run = false;
      } else {
        text = document.dump(2) + "\n{\"gpus\": 2}";
        c.what = "a second document after the first";
      }
      break;
    }
    case 10: {
      document[pointer(path)] = std::string(1 << 20, 'x');
      c.what = path + " = a 1 MiB string";
      c.names = {path};
      c.must_fail = path != "name";
      break;
    }
    default: {  // two or three of the value mutations at once
      const int count = 2 + static_cast<int>(rng.below(2));
      c.what = "";
      for (int i = 0; i < count; ++i) {
        const std::string p = rng.pick(paths);
        document[pointer(p)] =
            rng.chance(50) ? rng.pick(kExtremeNumbers) : wrong_type(rng, document[pointer(p)]);
        c.what += p + " = " + document[pointer(p)].dump() + "; ";
      }
      cheap_to_run = false;
      break;
    }
  }
  if (!have_text) text = document.dump(2);
  if (!raw.empty()) text.replace(text.find("\"" + marker + "\""), marker.size() + 2, raw);
  c.input_path = write_file(file, text);
  if (kind < 7 || !cheap_to_run) {
    c.args = {"config", "--system", file};
  } else if (kind < 10) {
    c.args = {"collective", "--op", "all-reduce", "--tp", "2", "--bytes", "4096", "--system", file};
  } else {
    c.args = {"run", "--model", "mega-gpt-2", "--sublayer", "op", "--tp",     "2", "--tokens",
              "512", "--jobs",  "1",          "--scenario", "t3", "--system", file};
  }
  return c;
}

TEST_CASE("fuzz: mutated presets exit 0 or 2 naming the key or file", "[fuzz]") {
  run_family("preset", 1, kPresetCases, preset_case);
}

// ---- command lines ----------------------------------------------------------------------------

const std::vector<std::string> kHostileValues = {"",
                                                 "-1",
                                                 "0",
                                                 "nan",
                                                 "inf",
                                                 "-inf",
                                                 "1e400",
                                                 "99999999999999999999",
                                                 "0x10",
                                                 "2.5",
                                                 " 2",
                                                 "two",
                                                 "\xff\xfe",
                                                 std::string(10000, 'a'),
                                                 "--tp",
                                                 "-",
                                                 "9223372036854775807",
                                                 "-0"};

// Every parameter path of the configuration, for --set.
std::vector<std::string> parameter_paths() {
  std::vector<std::string> paths;
  leaves(t3::to_json(t3::load_system("t3-paper")), "", paths);
  return paths;
}

// Parameters whose value barely changes a tiny run's cost, so a valid draw stays cheap in a
// simulation (tile sizes, request sizes and the like are fuzzed through `config` only).
const std::vector<std::string> kCheapPaths = {"hbm.channels",
                                              "hbm.bandwidth_GBps",
                                              "hbm.latency_ns",
                                              "hbm.queue_depth",
                                              "hbm.arbitration",
                                              "hbm.mca.threshold",
                                              "hbm.mca.window_ns",
                                              "link.bandwidth_GBps",
                                              "link.latency_ns",
                                              "link.credits",
                                              "link.response_credits",
                                              "topology.kind",
                                              "router.latency_ns",
                                              "sm.count",
                                              "sm.clock_GHz",
                                              "sm.efficiency",
                                              "sm.occupancy",
                                              "l2.ways",
                                              "l2.banks",
                                              "l2.hit_latency_ns",
                                              "l2.writeback_buffer_entries",
                                              "l2.miss_path",
                                              "tracker.entries",
                                              "dma.in_flight",
                                              "dma.outstanding_bytes",
                                              "sm.max_inflight_bytes",
                                              "sm.issue_bytes_per_clock",
                                              "workload.ring",
                                              "sim.mode",
                                              "sim.seed",
                                              "address_map.hbm_stride",
                                              "address_map.mmio_base",
                                              "address_map.hbm_base",
                                              "address_map.mmio_size",
                                              "address_map.mmio_stride",
                                              "gpus"};

std::vector<std::string> base_command(std::size_t which, const std::string& work) {
  switch (which) {
    case 0:
      return {"config"};
    case 1:
      return {"config", "--table"};
    case 2:
      return {"collective", "--op", "all-reduce", "--tp", "2", "--bytes", "4096"};
    case 3:
      return {"collective", "--op", "reduce-scatter", "--impl", "ring-dma-nmc",
              "--tp",       "2",    "--bytes",        "4096"};
    case 4:
      return {"run",      "--model", "mega-gpt-2", "--sublayer", "op",         "--tp", "2",
              "--tokens", "512",     "--jobs",     "1",          "--scenario", "t3"};
    case 5:
      return {"compare",  "--model", "mega-gpt-2", "--sublayer", "op",          "--tp",  "2",
              "--tokens", "512",     "--jobs",     "1",          "--scenarios", "t3-mca"};
    case 6:
      return {"gemm", "--model", "mega-gpt-2", "--sublayer", "op", "--tp", "2", "--tokens", "512"};
    default: {
      const std::string suite = write_file(
          work + "/suite.json",
          R"({"scenarios": ["sequential"], "models": ["mega-gpt-2"], "tp": [2], "sublayers": ["op"], "tokens": [512]})");
      return {"sweep", "--suite", suite, "--out", work + "/out", "--jobs", "1"};
    }
  }
}

// Positions of option words that take a value (the word after is their value).
std::vector<std::size_t> valued_options(const std::vector<std::string>& args) {
  std::vector<std::size_t> at;
  for (std::size_t i = 1; i + 1 < args.size(); ++i) {
    if (args[i].rfind("--", 0) == 0 && args[i] != "--table" && args[i + 1].rfind("--", 0) != 0) {
      at.push_back(i);
    }
  }
  return at;
}

CliCase command_case(int index, Rng& rng, const std::string& work) {
  static const std::vector<std::string> all_paths = parameter_paths();
  const std::size_t which = rng.below(8);
  const bool simulates = which >= 2;
  CliCase c;
  c.args = base_command(which, work);
  const auto options = valued_options(c.args);
  switch (index % 10) {
    case 0: {  // a value replaced
      if (options.empty()) {
        c.args.push_back("--bogus");
        c.what = "unknown option --bogus";
        c.must_fail = true;
        c.names = {"--bogus"};
        break;
      }
      const std::size_t at = rng.pick(options);
      const std::string value = rng.pick(kHostileValues);
      c.what = c.args[at] + " " + clip(value, 20) + " (hostile value)";
      c.names = {c.args[at], c.args[at].substr(2)};
      c.args[at + 1] = value;
      break;
    }
    case 1: {  // a hostile --set
      const auto& paths = simulates ? kCheapPaths : all_paths;
      const std::string path = rng.pick(paths);
      std::string value =
          rng.chance(50) ? rng.pick(kHostileValues) : rng.pick(kExtremeNumbers).dump();
      if (simulates && path == "gpus")
        value = rng.pick(std::vector<std::string>{"0", "1", "65", "-2", "x"});
      c.args.insert(c.args.begin() + 1, {"--set", path + "=" + value});
      c.what = "--set " + path + "=" + clip(value, 20);
      c.names = {path};
      // Windows that overlap are one fault of several keys: the message names the windows.
      if (path.rfind("address_map.", 0) == 0) c.names.push_back("address_map: the HBM windows");
      break;
    }
    case 2: {  // a malformed --set
      const std::string assignment = rng.pick(std::vector<std::string>{
          "=", "hbm", "hbm=1", "hbm.channels", "=5", "a.b.c.d=1", "hbm.channels=1=2",
          "hbm..channels=1", ".hbm.channels=1", "hbm.channels.x=1", "hbm/channels=1",
          "HBM.CHANNELS=8", "hbm.mca=1", "name", ""});
      c.args.insert(c.args.begin() + 1, {"--set", assignment});
      c.what = "--set '" + assignment + "'";
      c.must_fail = true;
      c.names = {"--set"};
      break;
    }
    case 3: {  // an option twice
      if (options.empty()) {
        c.args.push_back("--table");
        c.args.push_back("--table");
        c.what = "--table twice";
        c.names = {"table"};
        break;
      }
      const std::size_t at = rng.pick(options);
      c.args.push_back(c.args[at]);
      c.args.push_back(c.args[at + 1]);
      c.what = c.args[at] + " twice";
      c.must_fail = true;
      c.names = {c.args[at].substr(2)};
      break;
    }
    case 4: {  // a word dropped
      const std::size_t at = 1 + rng.below(std::max<std::size_t>(1, c.args.size() - 1));
      if (at < c.args.size()) {
        c.what = "word " + std::to_string(at) + " ('" + c.args[at] + "') dropped";
        c.args.erase(c.args.begin() + static_cast<std::ptrdiff_t>(at));
      } else {
        c.what = "no change";
      }
      break;
    }
    case 5: {  // an unexpected word
      const std::string word = rng.pick(std::vector<std::string>{
          "extra", "--", "-", "-x", "--bogus", "--tp=", "--set=", "-h2", "--jobs", "\xc3\x28"});
      const std::size_t at = 1 + rng.below(c.args.size());
      c.args.insert(c.args.begin() + static_cast<std::ptrdiff_t>(at), word);
      c.what = "'" + word + "' inserted";
      // The parser may blame the word or a neighbour it changed the meaning of (`--sublayer
      // --bogus op`: 'op' is then the unexpected one; `--jobs --sublayer op` likewise).
      c.names = {word, word.substr(0, word.find('=')), c.args[at - 1]};
      for (std::size_t next = at + 1; next < std::min(at + 3, c.args.size()); ++next) {
        c.names.push_back(c.args[next]);
      }
      break;
    }
    case 6: {  // the command word
      c.args[0] = rng.pick(std::vector<std::string>{"frobnicate", "", "RUN", "run2", "-tp",
                                                    std::string(5000, 'r'), "conf"});
      c.what = "command '" + clip(c.args[0], 20) + "'";
      c.must_fail = true;
      c.names = {clip(c.args[0], 20).substr(0, 4), "command"};
      break;
    }
    case 7: {  // --system that is not a configuration
      const std::string system = rng.pick(std::vector<std::string>{
          "nope", "", "/", "/dev/null", "/dev/zero", work, work + "/missing.json",
          std::string(T3SIM_SOURCE_DIR) + "/README.md", "T3-PAPER", "t3-paper "});
      c.args.insert(c.args.begin() + 1, {"--system", system});
      c.what = "--system '" + system + "'";
      c.must_fail = true;
      c.names = {system.empty() ? "system" : system};
      break;
    }
    case 8: {  // an output that cannot be written
      // Paths that cannot be opened. (A write that fails on an opened file, /dev/full, is the
      // machine's failure, not the input's: exit 1, so not part of this battery.)
      const std::string target = rng.pick(std::vector<std::string>{
          work + "/missing-dir/out.json", work, work + "/missing-dir/sub/out.json"});
      if (c.args[0] == "config") {
        c.args.push_back("--bogus-json");
        c.what = "unknown option --bogus-json";
        c.names = {"--bogus-json"};
      } else if (c.args[0] == "sweep") {
        c.args[4] = rng.chance(50) ? work + "/suite.json" : work + "/suite.json/out";  // a file
        c.what = "--out '" + c.args[4] + "'";
        c.names = {c.args[4]};
      } else {
        c.args.push_back("--json");
        c.args.push_back(target);
        c.what = "--json '" + target + "'";
        c.names = {target};
      }
      c.must_fail = true;
      break;
    }
    default: {  // the words shuffled (the command stays first)
      for (std::size_t i = c.args.size() - 1; i > 1; --i) {
        std::swap(c.args[i], c.args[1 + rng.below(i)]);
      }
      c.what = "options shuffled";
      break;
    }
  }
  return c;
}

TEST_CASE("fuzz: mutated command lines exit 0 or 2 with a one-line cause", "[fuzz]") {
  run_family("command", 2, kCommandCases, command_case);
}

// ---- sweep suites -----------------------------------------------------------------------------

CliCase suite_case(int index, Rng& rng, const std::string& work) {
  json suite = {{"scenarios", {"sequential"}},
                {"models", {"mega-gpt-2"}},
                {"tp", {2}},
                {"sublayers", {"op"}},
                {"tokens", {512}}};
  CliCase c;
  c.must_fail = true;
  // Bad entries, each with what the message must name.
  struct Bad {
    std::string key;
    json value;
    std::vector<std::string> names;
  };
  json huge_tp = json::array(), huge_tokens = json::array();
  for (int i = 0; i < 100000; ++i) {
    huge_tp.push_back(2);
    huge_tokens.push_back(512 + i);
  }
  const std::vector<Bad> bad = {
      {"models", "t-nlg", {"models"}},
      {"models", json::array(), {"models"}},
      {"models", {"nope"}, {"nope"}},
      {"models", {7}, {"models"}},
      {"tp", 2, {"tp"}},
      {"tp", {"2"}, {"tp"}},
      {"tp", {2.5}, {"tp", "2.5"}},
      {"tp", {true}, {"tp"}},
      {"tp", {0}, {"tp", "gpus"}},
      {"tp", {1}, {"tp", "gpus", "2 GPUs"}},
      {"tp", {-2}, {"tp", "gpus"}},
      {"tp", {65}, {"tp", "gpus"}},
      {"tp", {3}, {"3"}},
      {"tp", {2147483648.0}, {"tp"}},
      {"tp", {1e10}, {"tp"}},
      {"tp", {4294967298ll}, {"tp"}},
      {"tp", huge_tp, {"tp"}},
      {"tokens", {0}, {"tokens"}},
      {"tokens", {-1}, {"tokens"}},
      {"tokens", {1e12}, {"tokens"}},
      {"tokens", {100}, {"100"}},
      {"tokens", {"512"}, {"tokens"}},
      {"tokens", huge_tokens, {"tokens"}},
      {"tokens", {9223372036854775807ll}, {"tokens"}},
      {"sublayers", {"xx"}, {"xx"}},
      {"sublayers", json::array(), {"sublayers"}},
      {"scenarios", {"bogus"}, {"bogus"}},
      {"scenarios", "all", {"scenarios"}},
      {"scenarios", json::array(), {"scenarios"}},
      {"name", 7, {"name"}},
      {"name", json::array(), {"name"}},
      {"set", {{"hbm.channels", json::array()}}, {"hbm.channels"}},
      {"set", {{"hbm.channels", {0}}}, {"hbm.channels"}},
      {"set", {{"no.such", {1}}}, {"no.such"}},
      {"set", {{"hbm.channels", "16"}}, {"hbm.channels"}},
      {"set", {{"hbm.latency_ns", {nullptr}}}, {"hbm.latency_ns"}},
      {"set", {{"hbm.latency_ns", {{{"a", 1}}}}}, {"hbm.latency_ns"}},
      {"set", {{"gpus", {1}}}, {"gpus", "TP 1"}},
      {"set", {{"workload.tokens", {100}}}, {"100"}},
      {"set", "hbm.channels=8", {"set"}},
      {"groups", "x", {"groups"}},
      {"groups", json::array(), {"groups"}},
      {"groups", {5}, {"groups"}},
      {"groups", {{{"tp", {2}}}}, {"models"}},
      {"groups",
       {{{"models", {"mega-gpt-2"}}, {"tp", {2}}, {"groups", json::array()}}},
       {"groups"}},
      {"bogus", 1, {"bogus"}},
  };
  std::string text;
  const std::size_t how = rng.below(bad.size() + 4);
  if (how < bad.size()) {
    const Bad& b = bad[how];
    suite[b.key] = b.value;
    c.what = b.key + " = " + clip(b.value.dump(), 60);
    c.names = b.names;
    text = suite.dump();
  } else if (how == bad.size()) {
    suite.erase(rng.pick(std::vector<std::string>{"models", "tp"}));
    c.what = "a required key missing";
    c.names = {"required"};
    text = suite.dump();
  } else if (how == bad.size() + 1) {
    text = suite.dump();
    text = text.substr(0, rng.below(text.size() - 1));
    c.what = "the text cut at " + std::to_string(text.size());
  } else if (how == bad.size() + 2) {
    text = rng.pick(std::vector<std::string>{"[]", "null", "12", "{\"tp\": 1e999}", ""});
    c.what = "the document '" + text + "'";
  } else {
    c.must_fail = false;
    c.what = "the valid tiny suite";
    text = suite.dump();
  }
  const std::string file = work + "/suite.json";
  c.input_path = write_file(file, text);
  if (c.names.empty() && c.must_fail) c.names = {file};
  c.args = {"sweep", "--suite", file, "--out", work + "/out", "--jobs", "1"};
  if (rng.chance(30)) {  // the cluster path reads the same suite
    c.args.push_back("--emit-jobs");
    c.args.push_back(work + "/jobs.txt");
  }
  (void)index;
  return c;
}

TEST_CASE("fuzz: sweep suites with bad entries exit 2 naming the entry", "[fuzz]") {
  run_family("suite", 3, kSuiteCases, suite_case);
}

// ---- host programs through the library --------------------------------------------------------

// A mutated scenario on a small group, run in a forked child (one elaboration per process) with
// a time limit. The child writes "ok" or "error: <message>" to `result`.
struct ProgramCase {
  t3::SystemConfig config;
  std::vector<t3::Program> programs;
  std::string what;
};

ProgramCase program_case(Rng& rng) {
  using namespace t3;
  ProgramCase c;
  c.config = small_system(2, rng.chance(50) ? SimMode::Timing : SimMode::Functional);
  const Scenario scenario =
      rng.pick(std::vector<Scenario>{Scenario::Sequential, Scenario::T3, Scenario::IdealRsNmc});
  if (rng.chance(25)) {  // tracker overflow: fewer entries than tiles in flight
    apply_override(c.config, "tracker.entries=" + std::to_string(1 + rng.below(3)));
    c.what += "tracker.entries=" + std::to_string(c.config.tracker.entries) + "; ";
  }
  const GemmShape shape{64, 32, 16};
  c.programs = plan_scenario(c.config, shape, scenario).programs;
  c.what += std::string(to_string(scenario)) + "; ";
  const std::uint64_t mmio0 = c.config.address_map.mmio_base;
  const std::uint64_t unowned = c.config.address_map.hbm_base + 2 * c.config.address_map.hbm_stride;
  const int mutations = 1 + static_cast<int>(rng.below(3));
  for (int m = 0; m < mutations; ++m) {
    Program& program = c.programs[rng.below(c.programs.size())];
    auto& commands = program.commands;
    const std::size_t at = rng.below(commands.size());
    HostCommand& command = commands[at];
    c.what += "[gpu " + std::to_string(&program - c.programs.data()) + " '" + command.note +
              "' kind " + std::to_string(static_cast<int>(command.kind)) + "] ";
    switch (rng.below(8)) {
      case 0: {  // a register value replaced
        const std::uint32_t value = static_cast<std::uint32_t>(rng.pick(
            std::vector<std::uint64_t>{0, 1, 0xffffffffu, 0x80000000u, rng.next() & 0xffffffffu,
                                       command.value ^ 1u, command.value ^ (1u << rng.below(32))}));
        c.what += "command " + std::to_string(at) + " value " + std::to_string(value) + "; ";
        command.value = value;
        break;
      }
      case 1: {  // an address nobody owns, another GPU's block, or a neighbouring register
        const std::uint64_t address = rng.pick(std::vector<std::uint64_t>{
            unowned, 0x1234, ~0ull - 3, mmio0 + 2 * c.config.address_map.mmio_stride,
            command.address + 4, command.address ^ c.config.address_map.mmio_stride,
            mmio0 + 0x7ffc});
        c.what += "command " + std::to_string(at) + " address " + std::to_string(address) + "; ";
        command.address = address;
        break;
      }
      case 2:
        c.what += "command " + std::to_string(at) + " deleted; ";
        commands.erase(commands.begin() + static_cast<std::ptrdiff_t>(at));
        break;
      case 3:
        c.what += "command " + std::to_string(at) + " repeated; ";
        commands.insert(commands.begin() + static_cast<std::ptrdiff_t>(at), command);
        break;
      case 4:
        if (at + 1 < commands.size()) {
          c.what += "commands " + std::to_string(at) + " and next swapped; ";
          std::swap(commands[at], commands[at + 1]);
        }
        break;
      case 5: {  // an enabled tracker region overlapping another (same base, every size)
        const int region = static_cast<int>(rng.below(tracker::kRegions));
        const std::uint64_t block = mmio0 + 0x2000;  // GPU 0's tracker (protocol/mmio_map.h)
        const std::uint64_t base = c.config.address_map.hbm_base + rng.below(1 << 20);
        std::vector<HostCommand> writes;
        const auto write = [&](std::uint64_t reg, std::uint32_t value) {
          writes.push_back({HostCommand::Kind::WriteRegister,
                            block + tracker::region_register(region, reg), value, "fuzz region"});
        };
        write(tracker::kBaseLow, static_cast<std::uint32_t>(base));
        write(tracker::kBaseHigh, static_cast<std::uint32_t>(base >> 32));
        write(tracker::kSizeLow, static_cast<std::uint32_t>(rng.next()));
        write(tracker::kSizeHigh, rng.chance(20) ? 0xffffffffu : 0u);
        write(tracker::kThreshold, static_cast<std::uint32_t>(rng.below(1 << 16)));
        write(tracker::kDmaOp, static_cast<std::uint32_t>(rng.below(4)));
        write(tracker::kDmaDstLow, static_cast<std::uint32_t>(rng.next()));
        write(tracker::kDmaDstHigh, static_cast<std::uint32_t>(rng.below(3)));
        write(tracker::kControl, 1);
        c.what += "tracker region " + std::to_string(region) + " at " + std::to_string(base) +
                  " overlapping; ";
        auto& first = c.programs[0].commands;
        first.insert(first.begin() + static_cast<std::ptrdiff_t>(rng.below(first.size())),
                     writes.begin(), writes.end());
        break;
      }
      case 6:
        c.what += "command " + std::to_string(at) + " kind changed; ";
        command.kind = static_cast<HostCommand::Kind>(rng.below(6));
        break;
      default:  // a poll that gives up sooner
        command.timeout_ns = rng.below(100000);
        c.what += "command " + std::to_string(at) + " timeout " +
                  std::to_string(command.timeout_ns) + " ns; ";
        break;
    }
  }
  return c;
}

TEST_CASE("fuzz: hostile host programs end with a result or an error naming it", "[fuzz]") {
  const std::uint64_t seed = battery_seed();
  std::vector<std::string> failures;
  int ran = 0, errors = 0;
  for (int index = 0; index < kProgramCases; ++index) {
    if (only_case() >= 0 && index != only_case()) continue;
    Rng rng(case_seed(seed, 4, index));
    const ProgramCase c = program_case(rng);
    ++ran;
    int fds[2];
    REQUIRE(pipe(fds) == 0);
    const auto start = std::chrono::steady_clock::now();
    const pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
      close(fds[0]);
      const int null = open("/dev/null", O_WRONLY);  // the blocks' Info reports of the errors
      if (null >= 0) dup2(null, 1);
      std::string result = "ok";
      try {
        t3::TpGroup group("group", c.config);
        group.load(c.programs);
        // The unmutated scenario ends within ~0.2 ms of simulated time. A program that can never
        // finish (a flag never set, a threshold never reached) keeps SMs polling forever: the
        // model has no bound of its own yet (issue 15, item 9), so the battery stops it here
        // and asks the group which blocks hold work, as that bound will.
        sc_core::sc_start(sc_core::sc_time(2, sc_core::SC_MS));
        if (const std::string error = group.host_error(); !error.empty()) {
          throw std::runtime_error(error);
        }
        group.check_drained();
        if (!group.hosts_done()) throw std::runtime_error("stalled: hosts not done");
      } catch (const std::exception& error) {
        result = std::string("error: ") + error.what();
      }
      (void)!write(fds[1], result.data(), result.size());
      close(fds[1]);
      _exit(0);
    }
    close(fds[1]);
    fcntl(fds[0], F_SETFL, O_NONBLOCK);
    std::string result;
    int status = 0;
    bool timed_out = false;
    for (;;) {
      char buffer[4096];
      for (ssize_t got; (got = read(fds[0], buffer, sizeof buffer)) > 0;)
        result.append(buffer, got);
      if (waitpid(pid, &status, WNOHANG) == pid) break;
      if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() >
          kTimeoutS) {
        timed_out = true;
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    char buffer[4096];
    for (ssize_t got; (got = read(fds[0], buffer, sizeof buffer)) > 0;) result.append(buffer, got);
    close(fds[0]);
    std::string wrong;
    if (timed_out) {
      wrong = "did not finish within 10 s";
    } else if (WIFSIGNALED(status)) {
      wrong = "killed by signal " + std::to_string(WTERMSIG(status));
    } else if (WEXITSTATUS(status) != 0) {
      wrong = "the child exited " + std::to_string(WEXITSTATUS(status)) + " (a sanitizer report?)";
    } else if (result != "ok" && (result.rfind("error: ", 0) != 0 || result.size() < 12)) {
      wrong = "no result and no error message";
    }
    if (result != "ok") ++errors;
    if (!wrong.empty()) {
      failures.push_back("program case " + std::to_string(index) + ": " + wrong +
                         "\n  mutation: " + c.what + "\n  result:   " + clip(result) +
                         "\n  reproduce: T3SIM_FUZZ_SEED=" + std::to_string(seed) +
                         " T3SIM_FUZZ_CASE=" + std::to_string(index) +
                         " testbenches/tests/test_fuzz '" +
                         Catch::getResultCapture().getCurrentTestName() + "'");
    }
  }
  INFO("program: " << ran << " cases, " << errors << " ended with an error");
  for (const auto& failure : failures) UNSCOPED_INFO(failure);
  CHECK(failures.empty());
}

}  // namespace
