#include "experiments/interference.h"

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "config/config_io.h"
#include "models/system/simulation.h"
#include "models/system/tp_group.h"
#include "protocol/to_size.h"
#include "workloads/gemm_plan.h"
#include "workloads/interference_program.h"
#include "workloads/plan_util.h"

namespace t3 {

namespace {

constexpr std::uint64_t kFp32Bytes = 4;
// A background must outlast the GEMM. The first try gives it this many times the time the GEMM
// is expected to take; each further try (a process of its own: one elaboration per process)
// doubles it, up to kTries tries.
constexpr double kFirstMargin = 1.25;
constexpr int kTries = 5;

SystemConfig one_gpu(const SystemConfig& config) {
  SystemConfig simulated = config;
  simulated.gpus = 1;
  simulated.sim.symmetry = Symmetry::None;  // one GPU, no collective to rotate
  validate(simulated);
  return simulated;
}

double ns(const sc_core::sc_time& time) {
  return time.to_seconds() * 1e9;
}

// The GEMM's launch (GPU 0's A, B and C) and the first free address after C.
struct GemmPlacement {
  GemmLaunch launch;
  std::uint64_t free = 0;
};

GemmPlacement place_gemm(const SystemConfig& config, const GemmShape& shape) {
  const GroupGemmPlan plan = plan_group_gemm(config, shape);
  return {plan.gpus.at(0).launch, plan.gpus.at(0).buffers.end};
}

// What the GEMM's SMs [first_gemm_sm, sm.count) saw, and the memory system over the whole run
// (the background's traffic included; its SMs' bytes are given apart so that the GEMM's share of
// the L2's misses can be told: a streaming kernel's reads all miss).
nlohmann::json memory_detail(const TpGroup& group, int first_gemm_sm) {
  const Gpu& gpu = group.gpu(0);
  double latency_ns = 0, load_wait_ns = 0, budget_wait_ns = 0, fence_wait_ns = 0;
  double background_latency_ns = 0;
  std::uint64_t reads = 0, gemm_bytes = 0, background_read = 0, background_written = 0, steps = 0;
  std::uint64_t background_reads = 0;
  for (int i = 0; i < gpu.sms(); ++i) {
    const SmStats& s = gpu.sm(i).stats();
    if (i < first_gemm_sm) {
      background_read += s.bytes_read;
      background_written += s.bytes_written;
      background_reads += s.reads;
      background_latency_ns += ns(s.read_latency);
      continue;
    }
    latency_ns += s.read_latency.to_seconds() * 1e9;
    load_wait_ns += s.gemm_load_wait.to_seconds() * 1e9;
    budget_wait_ns += s.budget_wait.to_seconds() * 1e9;
    fence_wait_ns += ns(s.fence_wait);
    reads += s.reads;
    gemm_bytes += s.bytes_read;
    steps += s.wgs;
  }
  const nlohmann::json l2 = gpu.l2.report();
  const nlohmann::json hbm = gpu.memory.report();
  return {
      {"gemm_reads", reads},
      {"gemm_bytes_read", gemm_bytes},
      {"gemm_mean_read_latency_ns", reads > 0 ? latency_ns / static_cast<double>(reads) : 0.0},
      {"gemm_load_wait_ns_per_wg", steps > 0 ? load_wait_ns / static_cast<double>(steps) : 0.0},
      {"gemm_budget_wait_ns_per_wg", steps > 0 ? budget_wait_ns / static_cast<double>(steps) : 0.0},
      {"gemm_fence_wait_ns_per_wg", steps > 0 ? fence_wait_ns / static_cast<double>(steps) : 0.0},
      {"background_bytes_read", background_read},
      {"background_bytes_written", background_written},
      {"background_mean_read_latency_ns",
       background_reads > 0 ? background_latency_ns / static_cast<double>(background_reads) : 0.0},
      {"l2", l2.value("total", nlohmann::json::object())},
      {"l2_writeback_buffer", l2.value("writeback_buffer", nlohmann::json::object())},
      {"hbm_row_hit_rate", hbm.value("row_hit_rate", 0.0)},
      {"hbm_bytes", hbm["bytes"]},
      {"hbm_mean_entry_latency_ns", hbm["mean_entry_latency_ns"]},
      {"hbm_backpressured", hbm.value("backpressured", 0)},
      {"end_ns", sc_core::sc_time_stamp().to_seconds() * 1e9}};
}

// Runs `program` on the one GPU of `config`; returns its dispatcher's launch records (and, if
// `detail` is given, memory_detail there).
std::vector<LaunchRecord> simulate_program(const SystemConfig& config, const Program& program,
                                           nlohmann::json* detail = nullptr,
                                           int first_gemm_sm = 0) {
  TpGroup group("group", config);
  run_to_completion(group, {program});
  if (detail) *detail = memory_detail(group, first_gemm_sm);
  return group.gpu(0).dispatcher.launches();
}

const LaunchRecord& launch_on(const std::vector<LaunchRecord>& launches, int queue) {
  for (const LaunchRecord& launch : launches) {
    if (launch.queue == queue && launch.status == dispatcher::kDone) return launch;
  }
  throw std::runtime_error("no finished launch on queue " + std::to_string(queue));
}

// The GEMM on SMs [sms, sm.count) beside `background` (none: the GEMM alone there).
nlohmann::json gemm_beside(const SystemConfig& config, const GemmShape& shape,
                           const std::optional<StreamLaunch>& background, int sms) {
  const GemmPlacement gemm = place_gemm(config, shape);
  nlohmann::json detail;
  const auto launches = simulate_program(
      config, interference_program(config, gemm.launch, background, sms), &detail, sms);
  const LaunchRecord& run = launch_on(launches, 0);
  nlohmann::json result = {
      {"gemm_ns", ns(run.end - run.doorbell)}, {"outlasted", true}, {"detail", detail}};
  if (background) result["outlasted"] = launch_on(launches, 1).end >= run.end;
  return result;
}

// The streaming kernel alone on SMs [0, sms): {"GBps": bytes read + written per second,
// "mean_read_latency_ns": its reads' mean issue-to-data time}.
nlohmann::json stream_alone(const SystemConfig& config, const GemmShape& shape, int sms,
                            std::uint64_t bytes, std::uint64_t step_bytes) {
  StreamLaunch stream = background_stream(config, place_gemm(config, shape).free, bytes, sms);
  stream.step_bytes = step_bytes;
  stream.wait = true;
  Program program;
  append_sm_range(program, stream.dispatcher, SmRange{0, sms}, stream.label);
  append_stream(program, stream);
  nlohmann::json detail;
  // The launches outlive the record read from them.
  const auto launches = simulate_program(config, program, &detail, sms);
  const LaunchRecord& run = launch_on(launches, 1);
  return {{"GBps", static_cast<double>(2 * bytes) / ns(run.end - run.start)},  // bytes/ns = GB/s
          {"mean_read_latency_ns", detail["background_mean_read_latency_ns"]}};
}

// The GEMM beside the compute background lasting `scale` x kFirstMargin x `expected_ns`.
nlohmann::json with_compute(const SystemConfig& config, const GemmShape& shape, int sms,
                            double expected_ns, double scale) {
  if (sms == 0) return gemm_beside(config, shape, std::nullopt, 0);
  const double seconds = kFirstMargin * scale * expected_ns * 1e-9;
  return gemm_beside(config, shape, background_compute(config, seconds, sms), sms);
}

// The streaming background of `request` on SMs [0, sms), `bytes` per buffer from `base`.
StreamLaunch stream_of(const InterferenceRequest& request, const SystemConfig& config,
                       std::uint64_t base, std::uint64_t bytes, int sms) {
  StreamLaunch stream = background_stream(config, base, bytes, sms);
  stream.step_bytes = request.stream_step_bytes;
  return stream;
}

// The GEMM beside the streaming background, its buffers sized to last `scale` x kFirstMargin x
// `expected_ns` at its rate alone (or as request.stream_bytes says).
nlohmann::json with_stream(const InterferenceRequest& request, const SystemConfig& config, int sms,
                           double stream_GBps, double expected_ns, double scale) {
  const GemmShape& shape = request.shape;
  const std::uint64_t base = place_gemm(config, shape).free;
  if (request.stream_bytes) {
    const std::uint64_t bytes = *request.stream_bytes;
    if (bytes == 0 || sms == 0) return gemm_beside(config, shape, std::nullopt, sms);
    nlohmann::json result =
        gemm_beside(config, shape, stream_of(request, config, base, bytes, sms), sms);
    result["outlasted"] = true;  // as asked: no second try
    return result;
  }
  if (sms == 0) return gemm_beside(config, shape, std::nullopt, 0);
  // Each buffer moves half the bytes: read from a, written to b.
  const double wanted = stream_GBps * expected_ns / 2 * kFirstMargin * scale;
  const std::uint64_t bytes =
      align_up(std::max(request.stream_buffer_bytes, static_cast<std::uint64_t>(wanted)), 4096);
  return gemm_beside(config, shape, stream_of(request, config, base, bytes, sms), sms);
}

// Runs `work` in isolated processes, reporting progress as steps [offset, offset + work.size())
// of `total`; throws the first job's error.
std::vector<nlohmann::json> run_phase(const std::vector<IsolatedJob>& work, int jobs,
                                      const Progress& progress, std::size_t offset,
                                      std::size_t total) {
  const auto results = run_isolated(work, jobs, [&](std::size_t done, std::size_t) {
    if (progress) progress(offset + done, total);
  });
  for (const auto& result : results) {
    if (result.contains("error")) throw std::runtime_error(result["error"].get<std::string>());
  }
  return results;
}

nlohmann::json number_or_null(bool present, double value) {
  return present ? nlohmann::json(value) : nlohmann::json(nullptr);
}

}  // namespace

void check_interference_request(const InterferenceRequest& request) {
  const auto sms = static_cast<int>(request.config.sm.count);
  if (request.background_sms.empty()) {
    throw std::invalid_argument("background SMs: give at least one count");
  }
  for (int k : request.background_sms) {
    if (k < 0 || k >= sms) {
      throw std::invalid_argument("background SMs " + std::to_string(k) + ": must be in [0, " +
                                  std::to_string(sms - 1) + "] (the GEMM keeps at least one of " +
                                  std::to_string(sms) + " SMs)");
    }
  }
  if (!request.stream && !request.compute) {
    throw std::invalid_argument("background: give stream, compute or both");
  }
  if (request.stream_buffer_bytes == 0 || request.stream_buffer_bytes % kFp32Bytes != 0) {
    throw std::invalid_argument("stream buffer bytes " +
                                std::to_string(request.stream_buffer_bytes) +
                                ": must be a positive number of fp32 elements");
  }
  if (request.stream_step_bytes % kFp32Bytes != 0 ||
      request.stream_step_bytes > std::numeric_limits<std::uint32_t>::max()) {
    throw std::invalid_argument("stream step bytes " + std::to_string(request.stream_step_bytes) +
                                ": must be whole fp32 elements below 4 GiB");
  }
  if (request.stream_bytes && *request.stream_bytes % kFp32Bytes != 0) {
    throw std::invalid_argument("stream bytes " + std::to_string(*request.stream_bytes) +
                                ": must be whole fp32 elements");
  }
}

nlohmann::json run_interference(const InterferenceRequest& request, int jobs,
                                const Progress& progress) {
  check_interference_request(request);
  const SystemConfig config = one_gpu(request.config);
  const GemmShape shape = request.shape;
  const std::vector<int>& ks = request.background_sms;
  const std::size_t n = ks.size();
  const std::size_t total = 1 + n * (request.stream ? 2 : 0) + n * (request.compute ? 1 : 0);

  // Phase 1: the GEMM alone, each K's stream alone (its rate sizes the runs beside the GEMM).
  std::vector<IsolatedJob> first = {[&] { return gemm_beside(config, shape, std::nullopt, 0); }};
  for (std::size_t i = 0; i < n && request.stream; ++i) {
    first.push_back([&, i]() -> nlohmann::json {
      if (ks[i] == 0) return {{"GBps", 0.0}, {"mean_read_latency_ns", 0.0}};
      return stream_alone(config, shape, ks[i], request.stream_buffer_bytes,
                          request.stream_step_bytes);
    });
  }
  const auto alone = run_phase(first, jobs, progress, 0, total);
  const double alone_ns = alone[0]["gemm_ns"].get<double>();
  // Losing K SMs of S slows the GEMM by up to S / (S - K) (more by wave quantisation).
  const auto expected_ns = [&](int k) {
    const double s = static_cast<double>(config.sm.count);
    return alone_ns * s / (s - k);
  };

  // Phase 2: the GEMM beside each background (slots: compute runs, then stream runs), again with
  // a background twice as long wherever one ended before the GEMM.
  struct Attempt {
    std::size_t slot;
    double scale;
  };
  const std::size_t compute_runs = request.compute ? n : 0;
  std::vector<nlohmann::json> beside(compute_runs + (request.stream ? n : 0));
  std::vector<Attempt> pending;
  for (std::size_t slot = 0; slot < beside.size(); ++slot) pending.push_back({slot, 1.0});
  std::size_t done = first.size(), steps = total;
  for (int t = 0; !pending.empty(); ++t) {
    if (t == kTries) {
      throw std::runtime_error("a background kernel on " + std::to_string(ks[pending[0].slot % n]) +
                               " SMs ended before the GEMM in " + std::to_string(kTries) +
                               " tries, each twice as long as the one before");
    }
    std::vector<IsolatedJob> work;
    for (const Attempt& a : pending) {
      const std::size_t i = a.slot % n;
      if (a.slot < compute_runs) {
        work.push_back(
            [&, i, a] { return with_compute(config, shape, ks[i], expected_ns(ks[i]), a.scale); });
      } else {
        const double rate = alone[1 + i]["GBps"].get<double>();
        work.push_back([&, i, a, rate] {
          return with_stream(request, config, ks[i], rate, expected_ns(ks[i]), a.scale);
        });
      }
    }
    const auto results = run_phase(work, jobs, progress, done, steps);
    done += work.size();
    std::vector<Attempt> again;
    for (std::size_t r = 0; r < results.size(); ++r) {
      if (results[r]["outlasted"].get<bool>()) {
        beside[pending[r].slot] = results[r];
      } else {
        again.push_back({pending[r].slot, 2 * pending[r].scale});
      }
    }
    steps += again.size();
    pending = std::move(again);
  }

  nlohmann::json points = nlohmann::json::array();
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t stream_at = compute_runs + i;
    const double compute_ns = request.compute ? beside[i]["gemm_ns"].get<double>() : 0;
    const double stream_ns = request.stream ? beside[stream_at]["gemm_ns"].get<double>() : 0;
    const double rate = request.stream ? alone[1 + i]["GBps"].get<double>() : 0;
    const bool both = request.stream && request.compute;
    points.push_back(
        {{"background_sms", ks[i]},
         {"background_GBps", number_or_null(request.stream, rate)},
         {"background_alone_read_latency_ns",
          request.stream ? alone[1 + i]["mean_read_latency_ns"] : nlohmann::json(nullptr)},
         {"gemm_alone_ns", alone_ns},
         {"gemm_with_stream_ns", number_or_null(request.stream, stream_ns)},
         {"gemm_with_compute_ns", number_or_null(request.compute, compute_ns)},
         {"interference", number_or_null(both, stream_ns / compute_ns - 1)},
         {"with_stream_detail",
          request.stream ? beside[stream_at]["detail"] : nlohmann::json(nullptr)},
         {"with_compute_detail", request.compute ? beside[i]["detail"] : nlohmann::json(nullptr)}});
  }
  return {{"job", "interference"},
          {"workload", request.workload},
          {"shape", {{"m", shape.m}, {"n", shape.n}, {"k", shape.k}}},
          {"system", config.name},
          {"gemm_alone_ns", alone_ns},
          {"stream_buffer_bytes", request.stream_buffer_bytes},
          {"points", points},
          {"config", to_json(request.config)}};
}

}  // namespace t3
