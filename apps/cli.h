// Shared pieces of the t3sim command line: system selection, overrides, output files.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>

#include "config/system_config.h"
#include "experiments/isolated.h"
#include "harness/trace_recorder.h"
#include "protocol/gemm_layout.h"
#include "workloads/scenario.h"

namespace t3::cli {

namespace po = boost::program_options;

// Thrown for bad command-line use; main prints it with the usage hint and exits 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// --system, --tp, --set and --help, shared by every command that builds a system; without --tp
// for a command that takes its group sizes from elsewhere (a sweep's suite); --system defaults
// to `default_system`.
po::options_description system_options(bool with_tp = true,
                                       const std::string& default_system = "t3-paper");
// Loads --system, applies --tp then every --set in order, and validates.
SystemConfig system_from(const po::variables_map& options);

// Parses `args` against `description`; no positional arguments are accepted.
po::variables_map parse(const std::vector<std::string>& args,
                        const po::options_description& description);
// If --help was given, prints `usage` (the command's usage line and what it does) then
// `options`, and returns true: the command then exits 0 without running.
bool print_help_if_asked(const po::variables_map& values, const po::options_description& options,
                         const std::string& usage);

// Throws UsageError if `path` (given with `option`) cannot be an output file: a directory, or in a
// directory that does not exist. Checked before a run, so a typo does not cost the run.
void check_output(const std::string& path, const std::string& option);

// A comma-separated list of scenario names ("all": the paper's five), sequential first whether
// named or not (every speedup is measured against it); a bad name is a UsageError naming `option`.
std::vector<Scenario> parse_scenarios(const std::string& list,
                                      const std::string& option = "--scenarios");

// Writes `document` to `path` (pretty-printed); throws naming the file if it cannot.
void write_json(const std::string& path, const nlohmann::json& document);

// --model, --sublayer, --shape, --tokens, --functional, --json, --stats, for commands that run a
// workload.
po::options_description workload_options();
// system_from() plus the workload options that set configuration keys (--shape sets
// workload.tokens to its M).
SystemConfig workload_system(const po::variables_map& options);
// The custom GEMM --shape gives, if any; a UsageError naming the value for a malformed one, or
// if --model, --sublayer or --tokens is given beside it.
std::optional<GemmShape> custom_shape(const po::variables_map& options);

// --record FILE and --gpu N, for commands whose HBM traffic can be recorded as an STL trace.
po::options_description record_options();
// The recorder --record asks for (nullptr without it), observing the systems built while it lives.
std::unique_ptr<TraceRecorder> recorder_from(const po::variables_map& options,
                                             const SystemConfig& config);
// A progress bar on stderr for commands that run many simulations: redrawn in place on a
// terminal, a line per simulation otherwise.
Progress progress_bar();

int config_command(const std::vector<std::string>& args);
int gemm_command(const std::vector<std::string>& args);
int collective_command(const std::vector<std::string>& args);
int bandwidth_command(const std::vector<std::string>& args);
int run_command(const std::vector<std::string>& args);
int compare_command(const std::vector<std::string>& args);
int sweep_command(const std::vector<std::string>& args);
int model_command(const std::vector<std::string>& args);
int trace_command(const std::vector<std::string>& args);
int interference_command(const std::vector<std::string>& args);

}  // namespace t3::cli
