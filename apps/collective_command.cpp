// t3sim collective: one ring collective (reduce-scatter, all-gather or all-reduce) on the group,
// timed (or functional), with the nccl-tests algbw and busbw figures. Two implementations: the
// RCCL-style ring on the SMs (collective_program.h) and the ring on the DMA engines with
// near-memory updates (dma_collective.h, the paper's Ideal-RS+NMC baseline).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <string>

#include "apps/cli.h"
#include "config/config_io.h"
#include "models/system/simulation.h"
#include "workloads/collective_program.h"
#include "workloads/dma_collective.h"
#include "workloads/t3_plan.h"

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
      "implementation: ring-sm (ring on the SMs, RCCL-style), ring-dma-nmc (ring on the DMA "
      "engines, tracker-forwarded slices, reductions by near-memory updates)")(
      "bytes", po::value<std::int64_t>(),
      "buffer bytes per GPU (required), nccl-tests convention: the reduce-scatter input, the "
      "all-gather output, the all-reduce input; a positive multiple of tp x 4 (fp32 chunks)")(
      "channels", po::value<int>(),
      "ring channels, one workgroup each, 1..64 (default: min(sm.count x sm.occupancy, 16), "
      "one per resident workgroup slot, capped like NCCL's ring channels); ring-sm only")(
      "slices", po::value<int>(),
      "slices per chunk, 1..16, each a DMA descriptor and a tracker tag (default: the largest "
      "count <= 16 that splits a chunk into equal whole elements); ring-dma-nmc only")(
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

enum class Impl { RingSm, RingDmaNmc };

Impl parse_impl(const std::string& impl) {
  if (impl == "ring-sm") return Impl::RingSm;
  if (impl == "ring-dma-nmc") return Impl::RingDmaNmc;
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

// What an implementation's run yields for the report.
struct Timed {
  double time_ns = 0;
  RunSummary run;
  const char* basis = "";       // how time_ns was measured
  std::uint64_t ring_data = 0;  // ring data bytes on the links, summed over links
};

// Ring data on the links: every GPU sends (n - 1) chunks per op to its ring successor, over every
// link of its route (one on a ring; two, GPU to switch to GPU, through a switch).
std::uint64_t ring_data_bytes(const TpGroup& group, std::uint64_t chunk, std::size_t ops,
                              int (*successor)(int, int)) {
  const int n = group.gpus();
  std::uint64_t bytes = 0;
  for (int g = 0; g < n; ++g) {
    bytes += static_cast<std::uint64_t>(group.topology().hops(g, successor(g, n))) * ops *
             static_cast<std::uint64_t>(n - 1) * chunk;
  }
  return bytes;
}

int sm_channels(const po::variables_map& values, const SystemConfig& config, std::uint64_t bytes) {
  const int channels = values.count("channels")
                           ? values["channels"].as<int>()
                           : static_cast<int>(std::min<std::int64_t>(
                                 config.sm.count * config.sm.occupancy, kDefaultChannelCap));
  if (channels < 1 || channels > static_cast<int>(dispatcher::kMaxChannels)) {
    throw UsageError("--channels " + std::to_string(channels) + ": must be in [1, " +
                     std::to_string(dispatcher::kMaxChannels) + "]");
  }
  const std::uint64_t divisor = config.gpus * kElementBytes;
  const std::uint64_t chunk_elements = bytes / divisor;
  if (chunk_elements < static_cast<std::uint64_t>(channels)) {
    throw UsageError("--bytes " + std::to_string(bytes) + ": a chunk of " +
                     std::to_string(chunk_elements) + " fp32 elements is fewer than the " +
                     std::to_string(channels) + " channels (bytes must be at least tp x 4 x " +
                     "channels = " + std::to_string(divisor * channels) + ")");
  }
  return channels;
}

// The SM ring: time from the first doorbell to the last kernel end, over every GPU and launch.
Timed run_sm(TpGroup& group, const CollectiveSpec& spec, const std::vector<CollectiveOp>& ops) {
  const auto plan = plan_collective(group.config().address_map, spec);
  Timed timed;
  timed.run = run_to_completion(group, ring_programs(plan, spec, ops, 1));
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
  timed.time_ns = (last_end - first_doorbell).to_seconds() * 1e9;
  timed.basis = "first doorbell to last kernel end, all GPUs";
  timed.ring_data = ring_data_bytes(group, spec.chunk_bytes(), ops.size(), next_rank);
  return timed;
}

DmaCollectiveSpec dma_spec(const po::variables_map& values, int n, std::uint64_t bytes) {
  DmaCollectiveSpec spec;
  spec.ranks = n;
  spec.bytes = bytes;
  spec.element = kElementFp32;
  spec.slices = values.count("slices") ? values["slices"].as<int>() : 0;
  const std::uint64_t chunk_elements = bytes / (static_cast<std::uint64_t>(n) * kElementBytes);
  if (values.count("slices") && (spec.slices < 1 || spec.slices > kMaxDmaSlices ||
                                 chunk_elements % static_cast<std::uint64_t>(spec.slices) != 0)) {
    throw UsageError("--slices " + std::to_string(spec.slices) + ": must be in [1, " +
                     std::to_string(kMaxDmaSlices) + "] and divide a chunk's " +
                     std::to_string(chunk_elements) + " fp32 elements");
  }
  if (n > kMaxDmaRanks) {
    throw UsageError("--impl ring-dma-nmc: at most " + std::to_string(kMaxDmaRanks) +
                     " GPUs (two tracker regions per chunk), not " + std::to_string(n));
  }
  try {
    check_dma_spec(spec);
  } catch (const std::invalid_argument& error) {
    throw UsageError(std::string("--impl ring-dma-nmc: ") + error.what());
  }
  return spec;
}

// The DMA ring: every program starts with an MMIO write at time 0 (all of it is the collective:
// tracker and descriptor programming included), and the collective ends when the last one ended.
Timed run_dma(TpGroup& group, const DmaCollectiveSpec& spec, const std::vector<CollectiveOp>& ops) {
  const SystemConfig& config = group.config();
  Timed timed;
  timed.run =
      run_to_completion(group, dma_ring_programs(config, dma_ring_buffers(config), spec, ops));
  sc_core::sc_time last_end = sc_core::SC_ZERO_TIME;
  for (int g = 0; g < group.gpus(); ++g) {
    last_end = std::max(last_end, group.host(g).finish_times().back());
  }
  timed.time_ns = last_end.to_seconds() * 1e9;
  timed.basis = "first MMIO write to the last program's end, all GPUs";
  timed.ring_data = ring_data_bytes(group, spec.chunk_bytes(), ops.size(), t3_next_gpu);
  return timed;
}

// The rate a link delivers: payload behind headers, and at most `credits` packets per round trip.
double delivered_GBps(const LinkConfig& link) {
  const double packet_bytes = static_cast<double>(link.max_payload_bytes + link.header_bytes);
  const double wire_GBps = link.bandwidth_GBps * link.max_payload_bytes / packet_bytes;
  const double credit_GBps = link.credits * link.max_payload_bytes /
                             (packet_bytes / link.bandwidth_GBps + 2 * link.latency_ns);
  return std::min(wire_GBps, credit_GBps);
}

std::uint64_t checked_bytes(const po::variables_map& values, int n) {
  if (!values.count("bytes")) throw UsageError("--bytes is required");
  const std::int64_t bytes = values["bytes"].as<std::int64_t>();
  const std::uint64_t divisor = static_cast<std::uint64_t>(n) * kElementBytes;
  if (bytes <= 0 || static_cast<std::uint64_t>(bytes) % divisor != 0) {
    throw UsageError("--bytes " + std::to_string(bytes) + ": must be a positive multiple of tp x " +
                     std::to_string(kElementBytes) + " = " + std::to_string(divisor) + " (" +
                     std::to_string(n) + " equal chunks of whole fp32 elements)");
  }
  return static_cast<std::uint64_t>(bytes);
}

// Options that belong to the other implementation are a usage error, not silently ignored.
void check_impl_options(const po::variables_map& values, Impl impl) {
  if (impl == Impl::RingDmaNmc && values.count("channels")) {
    throw UsageError("--channels applies to --impl ring-sm only (ring-dma-nmc uses --slices)");
  }
  if (impl == Impl::RingSm && values.count("slices")) {
    throw UsageError("--slices applies to --impl ring-dma-nmc only (ring-sm uses --channels)");
  }
}

}  // namespace

int collective_command(const std::vector<std::string>& args) {
  po::options_description options = system_options();
  options.add(collective_options());
  const auto values = parse(args, options);
  if (values.count("help")) {
    std::cout << "usage: t3sim collective --op OP --bytes B [--impl ring-sm|ring-dma-nmc] "
                 "[OPTIONS]\n"
                 "Times one collective on the group and reports nccl-tests figures: algbw = "
                 "bytes / time,\nbusbw = algbw x (n-1)/n (reduce-scatter, all-gather) or x "
                 "2(n-1)/n (all-reduce).\n"
                 "ring-sm is timed from the first doorbell to the last kernel end; ring-dma-nmc "
                 "from the\nfirst MMIO write (tracker and descriptor programming included) to the "
                 "last program's end.\n"
              << options;
    return 0;
  }
  if (!values.count("op"))
    throw UsageError("--op is required (choices: " + std::string(kOps) + ")");
  const std::string op = values["op"].as<std::string>();
  const CollectiveKind kind = parse_kind(op);
  const std::string impl_name = values["impl"].as<std::string>();
  const Impl impl = parse_impl(impl_name);
  check_impl_options(values, impl);

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
  const std::uint64_t bytes = checked_bytes(values, n);
  const std::vector<CollectiveOp> ops = launches_of(kind);

  // Each implementation's shape: SM channels, or DMA slices per chunk.
  CollectiveSpec sm_spec;
  DmaCollectiveSpec dma;
  std::string shape;
  if (impl == Impl::RingSm) {
    sm_spec.ranks = n;
    sm_spec.bytes = bytes;
    sm_spec.element = kElementFp32;
    sm_spec.channels = sm_channels(values, config, bytes);
    shape = std::to_string(sm_spec.channels) + " channels";
  } else {
    dma = dma_spec(values, n, bytes);
    shape = std::to_string(dma_slices(dma)) + " slices per chunk";
  }

  TpGroup group("group", config);
  const Timed timed = impl == Impl::RingSm ? run_sm(group, sm_spec, ops) : run_dma(group, dma, ops);
  const CollectiveBandwidth bw = collective_bandwidth(kind, n, bytes, timed.time_ns * 1e-9);

  std::uint64_t payload_bytes = 0, wire_bytes = 0;
  for (int l = 0; l < group.links(); ++l) {
    for (int direction = 0; direction < 2; ++direction) {
      payload_bytes += group.link(l).stats(direction).payload_bytes;
      wire_bytes += group.link(l).stats(direction).wire_bytes;
    }
  }
  const double link_GBps = delivered_GBps(config.link);
  const std::uint64_t chunk_bytes = bytes / static_cast<std::uint64_t>(n);

  std::printf("t3sim collective: %s %s, TP %d, %llu bytes fp32, %s, system %s (%s mode)\n",
              op.c_str(), impl_name.c_str(), n, static_cast<unsigned long long>(bytes),
              shape.c_str(), config.name.c_str(),
              config.sim.mode == SimMode::Functional ? "functional" : "timing");
  std::printf(
      "  bytes               %.2f MB per GPU = %s (nccl-tests convention), chunks of %.2f MB\n",
      static_cast<double>(bytes) / 1e6, bytes_meaning(kind), chunk_bytes / 1e6);
  std::printf("  collective time     %.1f us (%s)\n", timed.time_ns / 1e3, timed.basis);
  std::printf("  algbw               %.2f GB/s (bytes / time)\n", bw.algbw_GBps);
  std::printf(
      "  busbw               %.2f GB/s (algbw x %s; %.0f%% of the %.2f GB/s a link delivers)\n",
      bw.busbw_GBps, busbw_factor(kind), 100 * bw.busbw_GBps / link_GBps, link_GBps);
  std::printf(
      "  link traffic        %.2f MB payload (%.2f MB ring data, %s), "
      "%.2f MB on the wire, summed over links\n",
      payload_bytes / 1e6, timed.ring_data / 1e6,
      impl == Impl::RingSm ? "the rest flags" : "no flags", wire_bytes / 1e6);
  std::printf("  simulation          %zu %s per GPU, %.2f s wall time\n", ops.size(),
              impl == Impl::RingSm ? (ops.size() == 1 ? "launch" : "launches")
                                   : (ops.size() == 1 ? "DMA ring" : "DMA rings"),
              timed.run.wall_time_s);

  if (values.count("json")) {
    nlohmann::json document = {
        {"job", "collective"},
        {"op", op},
        {"impl", impl_name},
        {"tp", n},
        {"bytes", bytes},
        {"element", "fp32"},
        {"time_ns", timed.time_ns},
        {"algbw_GBps", bw.algbw_GBps},
        {"busbw_GBps", bw.busbw_GBps},
        {"link_bytes",
         {{"payload", payload_bytes}, {"wire", wire_bytes}, {"ring_data", timed.ring_data}}},
        {"simulated_ns", timed.run.simulated_ns},
        {"wall_time_s", timed.run.wall_time_s},
        {"stats", group.report()},
        {"config", to_json(config)}};
    if (impl == Impl::RingSm) {
      document["channels"] = sm_spec.channels;
    } else {
      document["slices"] = dma_slices(dma);
    }
    write_json(values["json"].as<std::string>(), document);
  }
  return 0;
}

}  // namespace t3::cli
