// t3sim trace: plays a DRAMSys STL memory trace into one GPU's memory system and reports
// bandwidth, latency, row hits and per-bank activity; and the --record option of run, gemm and
// collective, which writes the HBM traffic one GPU's controller saw as such a trace.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <tuple>

#include "apps/cli.h"
#include "config/config_io.h"
#include "harness/stl_trace.h"
#include "harness/trace_player.h"
#include "harness/trace_recorder.h"
#include "models/hbm/dram_bank.h"
#include "models/system/tp_group.h"

namespace t3::cli {
namespace {

// Slots in flight by default: DRAMSys's fr_fcfs controller holds up to 64 transactions at once
// (McConfig DEFAULT_MAX_ACTIVE_TRANSACTIONS), which --saturate keeps full.
constexpr int kDefaultOutstanding = 64;

// The latency below which a fraction `q` of requests finish (nearest rank).
double percentile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(values.size())));
  return values[std::min(values.size() - 1, rank == 0 ? 0 : rank - 1)];
}

double mean_of(const std::vector<double>& values) {
  double sum = 0;
  for (const double value : values) sum += value;
  return values.empty() ? 0.0 : sum / static_cast<double>(values.size());
}

ElementType parse_element(const std::string& name) {
  if (name == "fp32") return ElementType::Fp32;
  if (name == "fp16") return ElementType::Fp16;
  if (name == "bf16") return ElementType::Bf16;
  throw UsageError("--element: '" + name + "' is not fp32, fp16 or bf16");
}

TracePlayerOptions player_options(const po::variables_map& values) {
  TracePlayerOptions options;
  const double clock_MHz = values["clock-MHz"].as<double>();
  if (!(clock_MHz > 0)) throw UsageError("--clock-MHz: must be positive");
  options.period = sc_core::sc_time(1e3 / clock_MHz, sc_core::SC_NS);
  options.saturate = values.count("saturate") > 0;
  options.outstanding = values["outstanding"].as<int>();
  if (options.outstanding < 1) throw UsageError("--outstanding: must be at least 1");
  options.element = parse_element(values["element"].as<std::string>());
  return options;
}

std::string through_of(const po::variables_map& values) {
  const std::string through = values["through"].as<std::string>();
  if (through != "l2" && through != "hbm") {
    throw UsageError("--through: '" + through + "' is not l2 or hbm");
  }
  return through;
}

int gpu_of(const po::variables_map& values, const SystemConfig& config) {
  const int gpu = values["gpu"].as<int>();
  if (gpu < 0 || gpu >= config.gpus) {
    throw UsageError("--gpu " + std::to_string(gpu) + ": the system has GPUs 0.." +
                     std::to_string(config.gpus - 1));
  }
  return gpu;
}

void print_bank_table(const BankActivity& activity) {
  std::printf("\n%-8s %-6s %-6s %-6s %12s %12s\n", "channel", "pc", "group", "bank", "RD bursts",
              "WR bursts");
  for (const auto& [where, counts] : activity.banks) {
    const auto [channel, pseudo_channel, group, bank] = where;
    std::printf("%-8d %-6d %-6d %-6d %12llu %12llu\n", channel, pseudo_channel, group, bank,
                static_cast<unsigned long long>(counts.reads),
                static_cast<unsigned long long>(counts.writes));
  }
}

// The bank model's commands by issue time, one a line: time in ns, then DRAMSys's Phases columns
// (command, channel, pseudo-channel, i.e. DRAMSys's rank, bank group, bank in the group, row; -1
// for a refresh's every bank).
void write_commands(const std::string& path, std::vector<DramCommand> commands) {
  std::stable_sort(commands.begin(), commands.end(),
                   [](const DramCommand& a, const DramCommand& b) { return a.time < b.time; });
  std::FILE* out = std::fopen(path.c_str(), "w");
  if (out == nullptr) throw UsageError("--commands: cannot write '" + path + "'");
  std::fprintf(out, "# time_ns command channel pseudo_channel bank_group bank row\n");
  const double ns_per_unit = sc_core::sc_get_time_resolution().to_seconds() * 1e9;
  for (const DramCommand& c : commands) {
    std::fprintf(out, "%.3f %s %d %d %d %d %lld\n", static_cast<double>(c.time) * ns_per_unit,
                 command_name(c.kind), c.channel, c.pseudo_channel, c.group, c.bank,
                 static_cast<long long>(c.row));
  }
  if (std::fclose(out) != 0) throw UsageError("--commands: cannot write '" + path + "'");
}

}  // namespace

po::options_description record_options() {
  po::options_description options("Recording");
  options.add_options()("record", po::value<std::string>(),
                        "write the HBM traffic one GPU's memory controller receives as an STL "
                        "trace (timestamps in ns; replay with t3sim trace --play)")(
      "gpu", po::value<int>()->default_value(0),
      "with --record: the GPU whose memory controller to record");
  return options;
}

std::unique_ptr<TraceRecorder> recorder_from(const po::variables_map& values,
                                             const SystemConfig& config) {
  if (!values.count("record")) return nullptr;
  const std::string path = values["record"].as<std::string>();
  check_output(path, "--record");
  return std::make_unique<TraceRecorder>(path, gpu_of(values, config), config);
}

int trace_command(const std::vector<std::string>& args) {
  po::options_description options = system_options();
  po::options_description play("Trace");
  play.add_options()("play", po::value<std::string>(), "the STL trace to play (required)")(
      "clock-MHz", po::value<double>()->default_value(1000.0),
      "the trace's clock: a line at time T issues at T / clock")(
      "saturate",
      "ignore timestamps: issue each request as soon as one of --outstanding slots is free")(
      "outstanding", po::value<int>()->default_value(kDefaultOutstanding),
      "requests in flight at most")("through", po::value<std::string>()->default_value("hbm"),
                                    "enter at the memory controller (hbm, below the L2) or "
                                    "at the GPU's router (l2, through the L2)")(
      "gpu", po::value<int>()->default_value(0), "the GPU whose memory the trace addresses")(
      "element", po::value<std::string>()->default_value("fp16"),
      "element type of update lines (fp32, fp16, bf16)")("json", po::value<std::string>(),
                                                         "write the results as JSON to this file")(
      "commands", po::value<std::string>(),
      "hbm.model bank: write every DRAM command the GPU's memory issued (ACT, PREPB, RD, WR, "
      "PREAB, REFAB) with its time in ns, one a line in time order, to this file");
  options.add(play);
  const auto values = parse(args, options);
  if (print_help_if_asked(
          values, options,
          "usage: t3sim trace --play FILE [OPTIONS]\nPlays a DRAMSys STL trace "
          "(<time>:<TAB><read|write|update><TAB>0x<address>[<TAB>0x<data>])\ninto one GPU's "
          "memory and reports bandwidth, latency, row hits and per-bank activity;\nin "
          "functional mode it checks every read's data. `update` (a near-memory add) is\n"
          "t3sim's extension of the format.\n")) {
    return 0;
  }
  if (!values.count("play")) throw UsageError("--play FILE is required");
  if (values.count("json")) check_output(values["json"].as<std::string>(), "--json");
  if (values.count("commands")) check_output(values["commands"].as<std::string>(), "--commands");
  const SystemConfig config = system_from(values);
  if (values.count("commands") && config.hbm.model != HbmModel::Bank) {
    throw UsageError(
        "--commands: the system's hbm.model is not bank (the simple model issues no "
        "DRAM commands)");
  }
  const int gpu = gpu_of(values, config);
  const std::string through = through_of(values);
  TracePlayerOptions player = player_options(values);
  StlLimits limits;
  limits.capacity = config.hbm.capacity_bytes;
  limits.default_length =
      static_cast<std::uint32_t>(config.hbm.bank.bus_bits * config.hbm.bank.burst_length / 8);
  std::vector<StlRecord> records = read_stl_file(values["play"].as<std::string>(), limits);
  if (records.empty()) throw UsageError("--play: the trace holds no requests");
  const BankActivity activity = bank_activity(records, config.hbm);

  TpGroup group("group", config);
  player.base = group.address_map().hbm_base(gpu);
  player.cache_hint = through == "hbm" ? CacheHint::Uncached : CacheHint::Cached;
  player.check_data = config.sim.mode == SimMode::Functional;
  TracePlayer trace_player("player", std::move(records), player);
  std::vector<DramCommand> commands;
  if (values.count("commands")) group.gpu(gpu).memory.log_commands(&commands);
  if (through == "hbm") {
    trace_player.socket.bind(group.gpu(gpu).memory_tap.inject);
  } else {
    trace_player.socket.bind(group.gpu(gpu).router.in);
  }
  sc_core::sc_start();
  group.check_drained();
  const TracePlayResult& result = trace_player.result();
  if (!result.errors.empty()) throw std::runtime_error(result.errors.front());
  if (values.count("commands")) write_commands(values["commands"].as<std::string>(), commands);

  const nlohmann::json memory = group.gpu(gpu).memory.report();
  const double mean = mean_of(result.latency_ns);
  const double p50 = percentile(result.latency_ns, 0.5);
  const double p99 = percentile(result.latency_ns, 0.99);
  const double row_hit_rate = memory.value("row_hit_rate", 0.0);
  char pacing[96];
  if (player.saturate) {
    std::snprintf(pacing, sizeof pacing, "saturating, %d requests in flight at most",
                  player.outstanding);
  } else {
    std::snprintf(pacing, sizeof pacing, "timed at %g MHz, %d requests in flight at most",
                  values["clock-MHz"].as<double>(), player.outstanding);
  }
  std::printf("t3sim trace: %s into GPU %d's %s, system %s, hbm.model %s, %s\n",
              values["play"].as<std::string>().c_str(), gpu, through.c_str(), config.name.c_str(),
              memory["model"].get<std::string>().c_str(), pacing);
  std::printf("\n%10s %12s %10s %10s %10s %10s %10s\n", "requests", "bytes", "GB/s", "mean ns",
              "p50 ns", "p99 ns", "row hits");
  std::printf("%10llu %12llu %10.2f %10.1f %10.1f %10.1f %9.1f%%\n",
              static_cast<unsigned long long>(result.requests),
              static_cast<unsigned long long>(result.bytes), result.bandwidth_GBps(), mean, p50,
              p99, 100 * row_hit_rate);
  print_bank_table(activity);
  if (player.check_data) {
    std::printf("\ndata check: %llu reads checked, %zu mismatches\n",
                static_cast<unsigned long long>(result.checked_reads), result.mismatches.size());
  }
  if (values.count("json")) {
    write_json(values["json"].as<std::string>(),
               {{"job", "trace"},
                {"trace", values["play"].as<std::string>()},
                {"gpu", gpu},
                {"through", through},
                {"saturate", player.saturate},
                {"outstanding", player.outstanding},
                {"clock_MHz", values["clock-MHz"].as<double>()},
                {"requests", result.requests},
                {"bytes", result.bytes},
                {"start_ns", result.start.to_seconds() * 1e9},
                {"end_ns", result.end.to_seconds() * 1e9},
                {"bandwidth_GBps", result.bandwidth_GBps()},
                {"latency_ns", {{"mean", mean}, {"p50", p50}, {"p99", p99}}},
                {"row_hit_rate", row_hit_rate},
                {"banks", to_json(activity)},
                {"checked_reads", result.checked_reads},
                {"mismatches", result.mismatches},
                {"hbm", memory},
                {"config", to_json(config)}});
  }
  for (const std::string& mismatch : result.mismatches)
    std::fprintf(stderr, "%s\n", mismatch.c_str());
  if (!result.mismatches.empty()) {
    throw std::runtime_error("data check failed: " + result.mismatches.front());
  }
  return 0;
}

}  // namespace t3::cli
