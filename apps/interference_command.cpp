// t3sim interference: a GEMM on one hardware queue of one GPU beside a background kernel on K SMs
// of another (a memory-streaming kernel, and a compute-only one that takes the same SMs), and the
// GEMM's slowdown from memory interference alone (experiments/interference.h).
#include <cstdio>
#include <sstream>

#include "apps/cli.h"
#include "config/config_io.h"
#include "experiments/interference.h"
#include "workloads/model_zoo.h"
#include "workloads/sublayer.h"

namespace t3::cli {

namespace {

// The measured machine is an H100 SXM (docs/correlation.md), so h100-8 is the default system.
constexpr const char* kDefaultSystem = "h100-8";

po::options_description interference_options() {
  po::options_description options("Interference");
  options.add_options()("model", po::value<std::string>()->default_value("t-nlg"),
                        "model whose sublayer GEMM runs: mega-gpt-2, t-nlg, gpt-3, palm, mt-nlg, "
                        "bert-large, commfuse-mlp")(
      "sublayer", po::value<std::string>()->default_value("fc2"), "sublayer: op, fc2, fc1, ip")(
      "shape", po::value<std::string>(),
      "M,N,K: a custom fp16 GEMM instead of --model and --sublayer (M is its token count)")(
      "tokens", po::value<std::int64_t>(), "tokens per batch (sets workload.tokens)")(
      "background", po::value<std::string>()->default_value("both"),
      "background kernels beside the GEMM: stream, compute or both (both gives the "
      "interference)")("background-sms", po::value<std::string>()->default_value("8,16,24,33,48"),
                       "comma-separated SM counts K the background kernel is confined to")(
      "stream-buffer-bytes", po::value<std::uint64_t>()->default_value(256ull << 20),
      "bytes of each streaming buffer (a, b) of the rate run, and the least beside the GEMM "
      "(default 256 MiB, as the measured kernel's: pass the L2)")(
      "stream-step-bytes", po::value<std::uint64_t>()->default_value(0),
      "input bytes each streaming workgroup reads per step, the reads it keeps in flight "
      "(0: its SM slot's part of sm.max_inflight_bytes)")("json", po::value<std::string>(),
                                                          "write the result document to this file")(
      "jobs", po::value<int>()->default_value(default_jobs()),
      "simulations run at once, each in its own process");
  return options;
}

std::vector<int> parse_sms(const std::string& text) {
  std::vector<int> list;
  std::stringstream items(text);
  for (std::string item; std::getline(items, item, ',');) {
    std::size_t used = 0;
    int value = -1;
    try {
      value = std::stoi(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != item.size() || value < 0) {
      throw UsageError("--background-sms: '" + item + "' in '" + text +
                       "' is not a count of SMs (a whole number, 0 or more)");
    }
    list.push_back(value);
  }
  if (list.empty()) throw UsageError("--background-sms: give at least one count");
  return list;
}

InterferenceRequest interference_request(const po::variables_map& values) {
  InterferenceRequest request;
  request.config = workload_system(values);
  const std::optional<GemmShape> custom = custom_shape(values);
  const std::string model_name = custom ? kCustom : values["model"].as<std::string>();
  const Sublayer sublayer =
      custom ? Sublayer::Fc2 : parse_sublayer(values["sublayer"].as<std::string>());
  request.shape = workload_gemm(model_name, sublayer, custom, static_cast<int>(request.config.gpus),
                                request.config.workload.tokens);
  if (custom) check_fits(request.config, request.shape);
  request.workload = custom ? std::string(kCustom) + " " + shape_text(request.shape)
                            : model_name + " " + to_string(sublayer);
  const std::string background = values["background"].as<std::string>();
  if (background != "stream" && background != "compute" && background != "both") {
    throw UsageError("--background: '" + background + "' is not one of stream, compute, both");
  }
  request.stream = background != "compute";
  request.compute = background != "stream";
  request.background_sms = parse_sms(values["background-sms"].as<std::string>());
  request.stream_buffer_bytes = values["stream-buffer-bytes"].as<std::uint64_t>();
  request.stream_step_bytes = values["stream-step-bytes"].as<std::uint64_t>();
  try {
    check_interference_request(request);
  } catch (const std::invalid_argument& error) {
    const std::string what = error.what();
    const char* option = what.rfind("stream buffer", 0) == 0 ? "--stream-buffer-bytes: "
                         : what.rfind("stream step", 0) == 0 ? "--stream-step-bytes: "
                                                             : "--background-sms: ";
    throw UsageError(option + what);
  }
  return request;
}

// "305.6" or "-" for a figure that was not run.
std::string figure(const nlohmann::json& value, double scale, const char* format) {
  if (value.is_null()) return "-";
  char text[32];
  std::snprintf(text, sizeof text, format, value.get<double>() * scale);
  return text;
}

void print_interference(const nlohmann::json& result, const SystemConfig& config) {
  const auto& shape = result["shape"];
  std::printf("t3sim interference: %s, TP %lld, system %s, one GPU simulated\n",
              result["workload"].get<std::string>().c_str(), static_cast<long long>(config.gpus),
              result["system"].get<std::string>().c_str());
  std::printf("  GEMM M=%lld N=%lld K=%lld fp16 on queue 0, alone %.1f us on %lld SMs\n",
              shape["m"].get<long long>(), shape["n"].get<long long>(), shape["k"].get<long long>(),
              result["gemm_alone_ns"].get<double>() / 1e3, static_cast<long long>(config.sm.count));
  std::printf("  background on queue 1, SMs [0, K); the GEMM on the other SMs\n\n");
  std::printf("%8s %14s %14s %14s %13s\n", "K SMs", "stream alone", "GEMM with", "GEMM with",
              "memory");
  std::printf("%8s %14s %14s %14s %13s\n", "", "GB/s (r + w)", "stream, us", "compute, us",
              "interference");
  for (const auto& point : result["points"]) {
    std::printf("%8d %14s %14s %14s %13s\n", point["background_sms"].get<int>(),
                figure(point["background_GBps"], 1, "%.0f").c_str(),
                figure(point["gemm_with_stream_ns"], 1e-3, "%.1f").c_str(),
                figure(point["gemm_with_compute_ns"], 1e-3, "%.1f").c_str(),
                figure(point["interference"], 100, "%+.1f%%").c_str());
  }
  std::printf(
      "\nstream = reads a[i], writes b[i] = a[i] + 1 (fp32) over buffers past the L2, one "
      "workgroup per SM;\ncompute = the same SMs busy on the math pipe, no memory access; "
      "interference = GEMM with\nstream / GEMM with compute - 1 (the memory system's share of "
      "the slowdown).\n");
}

}  // namespace

int interference_command(const std::vector<std::string>& args) {
  po::options_description options = system_options(true, kDefaultSystem);
  options.add(interference_options());
  const auto values = parse(args, options);
  if (print_help_if_asked(
          values, options,
          "usage: t3sim interference [OPTIONS]\nRuns a GEMM (--model/--sublayer/--tp or "
          "--shape) on one hardware queue of one GPU beside a\nbackground kernel confined to K "
          "SMs on a second queue: a memory-streaming kernel, and a\ncompute-only kernel on the "
          "same SMs; their ratio is the GEMM's slowdown from memory\ninterference alone. "
          "Default system h100-8 (the measured machine).\n")) {
    return 0;
  }
  if (values.count("json")) check_output(values["json"].as<std::string>(), "--json");
  const int jobs = values["jobs"].as<int>();
  if (jobs < 1) throw UsageError("--jobs " + std::to_string(jobs) + ": must be at least 1");
  const InterferenceRequest request = interference_request(values);
  const nlohmann::json result = run_interference(request, jobs, progress_bar());
  print_interference(result, request.config);
  if (values.count("json")) write_json(values["json"].as<std::string>(), result);
  return 0;
}

}  // namespace t3::cli
