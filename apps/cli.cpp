#include "apps/cli.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "config/config_io.h"
#include "config/dram_timing.h"
#include "config/suggestion.h"
#include "tlm_interconnect/address_map.h"

namespace t3::cli {

po::options_description system_options(bool with_tp, const std::string& default_system) {
  po::options_description options("System");
  options.add_options()("system", po::value<std::string>()->default_value(default_system),
                        "preset name or JSON file (presets: t3-paper, a100-8, h100-8, mi300x-8, "
                        "dramsys-hbm2)");
  if (with_tp) {
    options.add_options()("tp", po::value<int>(), "GPUs in the tensor-parallel group (sets gpus)");
  }
  options.add_options()("set", po::value<std::vector<std::string>>()->composing(),
                        "override one parameter, path=value (repeatable), e.g. --set "
                        "hbm.channels=16")("help,h", "show this help");
  return options;
}

SystemConfig system_from(const po::variables_map& options) {
  SystemConfig config = load_system(options["system"].as<std::string>());
  if (options.count("tp")) {  // "--tp: gpus: 0 is out of range", naming the option given
    apply_json(config, {{"gpus", options["tp"].as<int>()}}, "--tp");
  }
  if (options.count("set")) {
    for (const auto& assignment : options["set"].as<std::vector<std::string>>()) {
      apply_override(config, assignment);
    }
  }
  validate(config);
  // Overlapping address windows are refused here, before any simulation process starts.
  AddressMap(config.address_map, static_cast<int>(config.gpus), config.hbm.capacity_bytes).check();
  // Warned, not refused: a design-space sweep may mean to study a part its timing caps.
  const std::string capped = dram_peak_warning(config.hbm);
  if (!capped.empty()) std::fprintf(stderr, "t3sim: warning: %s\n", capped.c_str());
  return config;
}

namespace {

// " (did you mean '--x'?)" for an option `given` ("--scenaro") near one `description` holds.
std::string option_suggestion(const std::string& given,
                              const po::options_description& description) {
  std::vector<std::string> names;
  for (const auto& option : description.options()) names.push_back("--" + option->long_name());
  return did_you_mean(given, names);
}

}  // namespace

po::variables_map parse(const std::vector<std::string>& args,
                        const po::options_description& description) {
  po::variables_map options;
  try {
    const po::parsed_options parsed = po::command_line_parser(args).options(description).run();
    // program_options keeps words that belong to no option and store() drops them silently: a
    // forgotten option name (`sweep my-suite.json`) would run the defaults instead.
    for (const auto& option : parsed.options) {
      if (option.position_key >= 0 && !option.value.empty()) {
        throw UsageError("unexpected argument '" + option.value.front() + "'");
      }
    }
    po::store(parsed, options);
    po::notify(options);
  } catch (const po::unknown_option& error) {
    throw UsageError(error.what() + option_suggestion(error.get_option_name(), description));
  } catch (const po::error& error) {
    throw UsageError(error.what());
  }
  if (options.count("json")) check_output(options["json"].as<std::string>(), "--json");
  if (options.count("stats")) check_output(options["stats"].as<std::string>(), "--stats");
  return options;
}

bool print_help_if_asked(const po::variables_map& values, const po::options_description& options,
                         const std::string& usage) {
  if (!values.count("help")) return false;
  std::cout << usage << options;
  return true;
}

std::vector<Scenario> parse_scenarios(const std::string& list, const std::string& option) {
  if (list == "all") return all_scenarios();
  std::vector<Scenario> scenarios = {Scenario::Sequential};
  std::string::size_type start = 0;
  while (start <= list.size()) {
    const auto comma = std::min(list.find(',', start), list.size());
    const std::string name = list.substr(start, comma - start);
    Scenario scenario;
    try {
      scenario = parse_scenario(name);
    } catch (const ConfigError& error) {
      throw UsageError(option + ": " + error.what());
    }
    if (std::find(scenarios.begin(), scenarios.end(), scenario) == scenarios.end()) {
      scenarios.push_back(scenario);
    }
    start = comma + 1;
  }
  return scenarios;
}

void check_output(const std::string& path, const std::string& option) {
  namespace fs = std::filesystem;
  std::error_code error;
  const fs::path parent = fs::path(path).parent_path();
  if (fs::is_directory(path, error)) {
    throw UsageError(option + " " + path + ": is a directory, not a file");
  }
  if (!parent.empty() && !fs::is_directory(parent, error)) {
    throw UsageError(option + " " + path + ": no directory '" + parent.string() + "'");
  }
}

void write_json(const std::string& path, const nlohmann::json& document) {
  std::ofstream file(path);
  // A file that cannot be opened is a bad path (exit 2); a write that fails once open (a full
  // disk) is the machine's failure and stays a runtime error (exit 1).
  if (!file) throw UsageError("cannot write '" + path + "'");
  file << document.dump(2) << "\n";
  if (!file) throw std::runtime_error("error writing '" + path + "'");
}

Progress progress_bar() {
  const bool terminal = isatty(STDERR_FILENO);
  const auto start = std::chrono::steady_clock::now();
  return [terminal, start](std::size_t done, std::size_t total) {
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const std::size_t filled = 30 * done / total;
    std::fprintf(stderr, "%s[%s%s] %zu/%zu simulations, %.0f s%s", terminal ? "\r" : "",
                 std::string(filled, '#').c_str(), std::string(30 - filled, ' ').c_str(), done,
                 total, seconds, terminal && done != total ? "" : "\n");
  };
}

}  // namespace t3::cli
