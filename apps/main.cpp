// t3sim: the command line of the model. `t3sim` alone runs the default job.
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include <systemc>

#include "apps/cli.h"
#include "config/system_config.h"
#include "models/system/stall_error.h"

namespace {

const char* kUsage =
    "usage: t3sim [COMMAND] [OPTIONS]\n"
    "\n"
    "With no command, runs the default job: t3sim compare --model t-nlg --sublayer fc2 --tp 8\n"
    "\n"
    "commands:\n"
    "  run         one sublayer under one scenario (sequential, t3, t3-mca, ideal,\n"
    "              ideal-rs-nmc) on every GPU of the group\n"
    "  compare     every scenario for one sublayer, side by side (the default job)\n"
    "  sweep       a suite of sublayers and scenarios (--suite paper) in parallel processes\n"
    "  gemm        one sublayer's GEMM on every GPU of the group (--model, --sublayer)\n"
    "  collective  one ring collective on the group, with nccl-tests algbw/busbw (--op, --bytes)\n"
    "  bandwidth   stream traffic through HBM and a link and compare with the configured\n"
    "              figures\n"
    "  config      print the effective configuration, or --table for every parameter\n"
    "\n"
    "`t3sim COMMAND --help` lists a command's options.\n";

int dispatch(const std::vector<std::string>& words) {
  using namespace t3::cli;
  if (words.empty()) {
    return compare_command({"--model", "t-nlg", "--sublayer", "fc2", "--tp", "8"});
  }
  const std::string& command = words.front();
  const std::vector<std::string> args(words.begin() + 1, words.end());
  if (command == "bandwidth") return bandwidth_command(args);
  if (command == "config") return config_command(args);
  if (command == "gemm") return gemm_command(args);
  if (command == "run") return run_command(args);
  if (command == "compare") return compare_command(args);
  if (command == "sweep") return sweep_command(args);
  if (command == "collective") return collective_command(args);
  if (command == "--help" || command == "-h" || command == "help") {
    std::cout << kUsage;
    return 0;
  }
  throw UsageError("unknown command '" + command + "'");
}

}  // namespace

// Our own main, so the SystemC banner is off before the kernel prints it; results stay clean.
int main(int argc, char* argv[]) {
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
  return sc_core::sc_elab_and_sim(argc, argv);
}

int sc_main(int argc, char* argv[]) {
  sc_core::sc_report_handler::set_actions(sc_core::SC_WARNING, sc_core::SC_DISPLAY);
  try {
    return dispatch(std::vector<std::string>(argv + 1, argv + argc));
  } catch (const t3::cli::UsageError& error) {
    std::cerr << "t3sim: " << error.what() << "\n" << kUsage;
    return 2;
  } catch (const t3::ConfigError& error) {
    std::cerr << "t3sim: configuration error: " << error.what() << "\n";
    return 2;
  } catch (const t3::StallError& error) {
    // A run that can never finish is a property of its inputs, like a bad configuration.
    std::cerr << "t3sim: " << error.what() << "\n";
    return 2;
  } catch (const std::exception& error) {
    std::cerr << "t3sim: error: " << error.what() << "\n";
    return 1;
  }
}
