// t3sim collective: one ring collective (reduce-scatter, all-gather or all-reduce) on the group,
// timed (or functional), with the nccl-tests algbw and busbw figures.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <string>

#include "apps/cli.h"
#include "config/config_io.h"
#include "models/system/simulation.h"
#include "workloads/collective_program.h"

namespace t3::cli {

namespace {

constexpr const char* kOps = "reduce-scatter, all-gather, all-reduce";
constexpr const char* kImpls = "ring-sm, ring-dma-nmc";
constexpr int kDefaultChannelCap = 16;
constexpr std::uint64_t kElementBytes = 4;  // the collective carries fp32 elements

po::options_description collective_options() {
  po::options_description options("Collective");
  options.add_options()("op", po::value<std::string>(),
                        "collective (required): reduce-scatter, all-gather, all-reduce")(
      "impl", po::value<std::string>()->default_value("ring-sm"),
      "implementation: ring-sm (ring on the SMs, RCCL-style); ring-dma-nmc is not built yet")(
      "bytes", po::value<std::int64_t>(),
      "buffer bytes per GPU (required), nccl-tests convention: the reduce-scatter input, the "
      "all-gather output, the all-reduce input; a positive multiple of tp x 4 (fp32 chunks)")(
      "channels", po::value<int>(),
      "ring channels, one workgroup each, 1..64 (default: min(sm.count x sm.occupancy, 16), "
      "one per resident workgroup slot, capped like NCCL's ring channels)")(
      "functional", "carry real data (sets sim.mode=functional)")(
      "json", po::value<std::string>(), "write the result document to this file");
  return options;
}

CollectiveKind parse_kind(const std::string& op) {
  if (op == "reduce-scatter") return CollectiveKind::ReduceScatter;
  if (op == "all-gather") return CollectiveKind::AllGather;
  if (op == "all-reduce") return CollectiveKind::AllReduce;
  throw UsageError("--op " + op + ": unknown collective (choices: " + kOps + ")");
}

void check_impl(const std::string& impl) {
  if (impl == "ring-sm") return;
  if (impl == "ring-dma-nmc")
    throw UsageError("--impl ring-dma-nmc: not available yet (only ring-sm)");
  throw UsageError("--impl " + impl + ": unknown implementation (choices: " + kImpls + ")");
}

// The dispatcher launches of each op: all-reduce is reduce-scatter then all-gather.
std::vector<CollectiveOp> launches_of(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::ReduceScatter:
      return {CollectiveOp::ReduceScatter};
    case CollectiveKind::AllGather:
      return {CollectiveOp::AllGather};
    case CollectiveKind::AllReduce:
      break;
  }
  return {CollectiveOp::ReduceScatter, CollectiveOp::AllGather};
}

const char* busbw_factor(CollectiveKind kind) {
  return kind == CollectiveKind::AllReduce ? "2(n-1)/n" : "(n-1)/n";
}

const char* bytes_meaning(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::ReduceScatter:
      return "the reduce-scatter input";
    case CollectiveKind::AllGather:
      return "the all-gather output";
    case CollectiveKind::AllReduce:
      break;
  }
  return "the all-reduce input";
}

}  // namespace

int collective_command(const std::vector<std::string>& args) {
  po::options_description options = system_options();
  options.add(collective_options());
  const auto values = parse(args, options);
  if (values.count("help")) {
    std::cout << "usage: t3sim collective --op OP --bytes B [OPTIONS]\n"
                 "Times one collective on the group and reports nccl-tests figures: algbw = "
                 "bytes / time,\nbusbw = algbw x (n-1)/n (reduce-scatter, all-gather) or x "
                 "2(n-1)/n (all-reduce).\n"
              << options;
    return 0;
  }
  if (!values.count("op"))
    throw UsageError("--op is required (choices: " + std::string(kOps) + ")");
  const std::string op = values["op"].as<std::string>();
  const CollectiveKind kind = parse_kind(op);
  const std::string impl = values["impl"].as<std::string>();
  check_impl(impl);
  if (!values.count("bytes")) throw UsageError("--bytes is required");

  SystemConfig config = system_from(values);
  if (values.count("functional")) {
    apply_override(config, "sim.mode=functional");
    validate(config);
  }
  const int n = static_cast<int>(config.gpus);
  if (n < 2) {
    throw UsageError("a collective needs at least 2 GPUs (gpus = " + std::to_string(n) +
                     "; use --tp)");
  }

  const std::int64_t bytes = values["bytes"].as<std::int64_t>();
  const std::uint64_t divisor = static_cast<std::uint64_t>(n) * kElementBytes;
  if (bytes <= 0 || static_cast<std::uint64_t>(bytes) % divisor != 0) {
    throw UsageError("--bytes " + std::to_string(bytes) + ": must be a positive multiple of tp x " +
                     std::to_string(kElementBytes) + " = " + std::to_string(divisor) + " (" +
                     std::to_string(n) + " equal chunks of whole fp32 elements)");
  }
  const int channels = values.count("channels")
                           ? values["channels"].as<int>()
                           : static_cast<int>(std::min<std::int64_t>(
                                 config.sm.count * config.sm.occupancy, kDefaultChannelCap));
  if (channels < 1 || channels > static_cast<int>(dispatcher::kMaxChannels)) {
    throw UsageError("--channels " + std::to_string(channels) + ": must be in [1, " +
                     std::to_string(dispatcher::kMaxChannels) + "]");
  }
  const std::uint64_t chunk_elements = static_cast<std::uint64_t>(bytes) / divisor;
  if (chunk_elements < static_cast<std::uint64_t>(channels)) {
    throw UsageError("--bytes " + std::to_string(bytes) + ": a chunk of " +
                     std::to_string(chunk_elements) + " fp32 elements is fewer than the " +
                     std::to_string(channels) + " channels (bytes must be at least tp x 4 x " +
                     "channels = " + std::to_string(divisor * channels) + ")");
  }

  CollectiveSpec spec;
  spec.ranks = n;
  spec.bytes = static_cast<std::uint64_t>(bytes);
  spec.element = kElementFp32;
  spec.channels = channels;
  const std::vector<CollectiveOp> ops = launches_of(kind);
  const auto plan = plan_collective(config.address_map, spec);

  TpGroup group("group", config);
  const RunSummary run = run_to_completion(group, ring_programs(plan, spec, ops, 1));

  // Collective time: the first doorbell to the last kernel end, over every GPU and launch.
  sc_core::sc_time first_doorbell = sc_core::sc_max_time(), last_end = sc_core::SC_ZERO_TIME;
  for (int g = 0; g < group.gpus(); ++g) {
    const auto& launches = group.gpu(g).dispatcher.launches();
    if (launches.size() != ops.size()) {
      throw std::runtime_error("GPU " + std::to_string(g) + " recorded " +
                               std::to_string(launches.size()) + " launches, expected " +
                               std::to_string(ops.size()));
    }
    for (const LaunchRecord& launch : launches) {
      first_doorbell = std::min(first_doorbell, launch.doorbell);
      last_end = std::max(last_end, launch.end);
    }
  }
  const double time_ns = (last_end - first_doorbell).to_seconds() * 1e9;
  const CollectiveBandwidth bw = collective_bandwidth(kind, n, spec.bytes, time_ns * 1e-9);

  std::uint64_t payload_bytes = 0, wire_bytes = 0;
  for (int l = 0; l < group.links(); ++l) {
    for (int direction = 0; direction < 2; ++direction) {
      payload_bytes += group.link(l).stats(direction).payload_bytes;
      wire_bytes += group.link(l).stats(direction).wire_bytes;
    }
  }
  // Ring data on the links: every GPU sends (n - 1) chunks per launch to next, over every link of
  // its route (one on a ring; two, GPU to switch to GPU, through a switch).
  std::uint64_t data_bytes = 0;
  for (int g = 0; g < n; ++g) {
    data_bytes += static_cast<std::uint64_t>(group.topology().hops(g, next_rank(g, n))) *
                  ops.size() * (n - 1) * spec.chunk_bytes();
  }
  // The rate a link delivers: payload behind headers, and at most `credits` packets per round trip.
  const LinkConfig& link = config.link;
  const double packet_bytes = static_cast<double>(link.max_payload_bytes + link.header_bytes);
  const double wire_GBps = link.bandwidth_GBps * link.max_payload_bytes / packet_bytes;
  const double credit_GBps = link.credits * link.max_payload_bytes /
                             (packet_bytes / link.bandwidth_GBps + 2 * link.latency_ns);
  const double delivered_GBps = std::min(wire_GBps, credit_GBps);

  std::printf("t3sim collective: %s %s, TP %d, %lld bytes fp32, %d channels, system %s (%s mode)\n",
              op.c_str(), impl.c_str(), n, static_cast<long long>(bytes), channels,
              config.name.c_str(),
              config.sim.mode == SimMode::Functional ? "functional" : "timing");
  std::printf(
      "  bytes               %.2f MB per GPU = %s (nccl-tests convention), chunks of %.2f MB\n",
      static_cast<double>(bytes) / 1e6, bytes_meaning(kind), spec.chunk_bytes() / 1e6);
  std::printf("  collective time     %.1f us (first doorbell to last kernel end, all GPUs)\n",
              time_ns / 1e3);
  std::printf("  algbw               %.2f GB/s (bytes / time)\n", bw.algbw_GBps);
  std::printf(
      "  busbw               %.2f GB/s (algbw x %s; %.0f%% of the %.2f GB/s a link delivers)\n",
      bw.busbw_GBps, busbw_factor(kind), 100 * bw.busbw_GBps / delivered_GBps, delivered_GBps);
  std::printf(
      "  link traffic        %.2f MB payload (%.2f MB ring data, the rest flags), "
      "%.2f MB on the wire, summed over links\n",
      payload_bytes / 1e6, data_bytes / 1e6, wire_bytes / 1e6);
  std::printf("  simulation          %zu launch%s per GPU, %.2f s wall time\n", ops.size(),
              ops.size() == 1 ? "" : "es", run.wall_time_s);

  if (values.count("json")) {
    write_json(values["json"].as<std::string>(),
               {{"job", "collective"},
                {"op", op},
                {"impl", impl},
                {"tp", n},
                {"bytes", spec.bytes},
                {"element", "fp32"},
                {"channels", channels},
                {"time_ns", time_ns},
                {"algbw_GBps", bw.algbw_GBps},
                {"busbw_GBps", bw.busbw_GBps},
                {"link_bytes",
                 {{"payload", payload_bytes}, {"wire", wire_bytes}, {"ring_data", data_bytes}}},
                {"simulated_ns", run.simulated_ns},
                {"wall_time_s", run.wall_time_s},
                {"stats", group.report()},
                {"config", to_json(config)}});
  }
  return 0;
}

}  // namespace t3::cli
