// Runs the t3sim binary from a Catch2 suite (the build defines T3SIM_BINARY and
// T3SIM_TEST_BINARY_DIR for the suites that use this).
#pragma once

#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

#include <sys/wait.h>

#include <nlohmann/json.hpp>

#ifndef T3SIM_BINARY
#error "T3SIM_BINARY (the t3sim executable) must be defined by the build"
#endif
#ifndef T3SIM_TEST_BINARY_DIR
#error "T3SIM_TEST_BINARY_DIR (where the test writes its files) must be defined by the build"
#endif

namespace t3::cli_testing {

// Runs `t3sim COMMAND ARGS --json <binary dir>/NAME` (output to NAME.log), requires exit 0 and
// returns the document it wrote.
inline nlohmann::json run_json(const std::string& command, const std::string& args,
                               const std::string& name) {
  const std::string json = std::string(T3SIM_TEST_BINARY_DIR) + "/" + name;
  std::remove(json.c_str());
  const std::string line = std::string("\"") + T3SIM_BINARY + "\" " + command + " " + args +
                           " --json \"" + json + "\" > \"" + json + ".log\" 2>&1";
  INFO(line);
  REQUIRE(std::system(line.c_str()) == 0);
  std::ifstream file(json);
  REQUIRE(file);
  return nlohmann::json::parse(file);
}

struct Output {
  int exit_code = -1;  // -1: did not exit normally
  std::string text;    // stdout and stderr together
};

// Runs `t3sim ARGS` (output to <binary dir>/NAME) and returns its exit code and output.
inline Output run_output(const std::string& args, const std::string& name) {
  const std::string log = std::string(T3SIM_TEST_BINARY_DIR) + "/" + name;
  const std::string line =
      std::string("\"") + T3SIM_BINARY + "\" " + args + " > \"" + log + "\" 2>&1";
  INFO(line);
  const int status = std::system(line.c_str());
  std::ifstream file(log);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1,
          std::string(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>())};
}

}  // namespace t3::cli_testing
