// t3sim: the command line of the model. `t3sim` alone runs the default job.
#include <cstdlib>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include <systemc>

#include "apps/cli.h"
#include "config/suggestion.h"
#include "config/system_config.h"
#include "models/system/stall_error.h"

namespace {

const char* kUsage =
    "usage: t3sim [COMMAND] [OPTIONS]\n"
    "\n"
    "With no command, runs the default job: t3sim compare --model t-nlg --sublayer fc2 --tp 8\n"
    "--set sim.symmetry=rotational (one GPU standing for all eight; without the --set, compare\n"
    "simulates every GPU)\n"
    "\n"
    "commands:\n"
    "  run         one sublayer under one scenario (sequential, t3, t3-mca, ideal,\n"
    "              ideal-rs-nmc, slicing, commfuse) on the group: every GPU simulated, or\n"
    "              GPU 0 standing for all with --set sim.symmetry=rotational\n"
    "  compare     every scenario for one sublayer, side by side, sequential always among\n"
    "              them (the default job)\n"
    "  sweep       a suite of sublayers and scenarios (--suite paper) in parallel processes\n"
    "  model       a whole model: one transformer layer kernel by kernel, its time by kernel\n"
    "              class and each scenario's end-to-end speedup (--model, --tp, --phase)\n"
    "  gemm        one GPU's GEMM for a sublayer or --shape (--group: every GPU)\n"
    "  collective  one ring collective on the group, with nccl-tests algbw/busbw (--op, --bytes)\n"
    "  bandwidth   stream traffic through HBM and a link and compare with the configured\n"
    "              figures\n"
    "  trace       play a DRAMSys STL memory trace into one GPU's memory (--play); run,\n"
    "              gemm and collective record one with --record\n"
    "  interference  a GEMM beside a memory-streaming and a compute-only kernel on K SMs of\n"
    "              one GPU: its slowdown from memory interference alone\n"
    "  config      print the effective configuration, or --table for every parameter\n"
    "\n"
    "`t3sim COMMAND --help` lists a command's options.\n";

using Command = int (*)(const std::vector<std::string>&);

// The commands, by the word that selects them.
const std::map<std::string, Command>& commands() {
  using namespace t3::cli;
  static const std::map<std::string, Command> table = {{"bandwidth", bandwidth_command},
                                                       {"config", config_command},
                                                       {"gemm", gemm_command},
                                                       {"run", run_command},
                                                       {"compare", compare_command},
                                                       {"sweep", sweep_command},
                                                       {"collective", collective_command},
                                                       {"model", model_command},
                                                       {"trace", trace_command},

                                                       {"interference", interference_command}};
  return table;
}

// The default job shows the paper's headline point in about a second: one GPU stands for the
// group (its equivalence to every-GPU runs is tested; docs/performance.md), which the header of
// its table says.
int dispatch(const std::vector<std::string>& words) {
  if (words.empty()) {
    return t3::cli::compare_command(
        {"--model", "t-nlg", "--sublayer", "fc2", "--tp", "8", "--set", "sim.symmetry=rotational"});
  }
  const std::string& command = words.front();
  const auto found = commands().find(command);
  if (found != commands().end()) {
    return found->second(std::vector<std::string>(words.begin() + 1, words.end()));
  }
  if (command == "--help" || command == "-h" || command == "help") {
    std::cout << kUsage;
    return 0;
  }
  std::vector<std::string> names;
  for (const auto& [name, run] : commands()) names.push_back(name);
  throw t3::cli::UsageError("unknown command '" + command + "'" + t3::did_you_mean(command, names));
}

// Where a usage error sends the reader: the command's own help if the command is known (a wall
// of usage text would bury the one line that says what is wrong).
std::string help_hint(int argc, char* argv[]) {
  if (argc < 2) return "t3sim compare --help";  // the default job is `compare`
  const std::string command = argv[1];
  if (commands().count(command)) return "t3sim " + command + " --help";
  return "t3sim --help";
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
    std::cerr << "t3sim: " << error.what() << "; see `" << help_hint(argc, argv) << "`\n";
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
