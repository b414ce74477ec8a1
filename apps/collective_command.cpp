// t3sim collective: parses the options of one collective (reduce-scatter, all-gather or all-reduce)
// into a CollectiveRequest, runs it (experiments/collective_run.h has the implementations, the
// timing and the link counts) and prints the nccl-tests algbw and busbw figures.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "apps/cli.h"
#include "config/config_io.h"
#include "experiments/collective_run.h"
#include "workloads/collective_program.h"
#include "workloads/dma_collective.h"
#include "workloads/scenario.h"

namespace t3::cli {

namespace {

constexpr const char* kOps = "reduce-scatter, all-gather, all-reduce";
constexpr const char* kImpls =
    "ring-sm, direct-sm, direct-sm-nmc, ring-dma-nmc, direct-dma-nmc, nvls";
constexpr std::uint64_t kElementBytes = 4;  // the collective carries fp32 elements

po::options_description collective_options() {
  po::options_description options("Collective");
  options.add_options()("op", po::value<std::string>(),
                        "collective (required): reduce-scatter, all-gather, all-reduce")(
      "impl", po::value<std::string>()->default_value("ring-sm"),
      "implementation: ring-sm (ring on the SMs, RCCL-style; on a fully-connected topology "
      "its channels spread over every ring of a stride coprime with the GPU count, "
      "workload.sm_rings), direct-sm (on the SMs, every chunk "
      "loaded straight from the GPU that holds it by the one that needs it; topology.kind "
      "fully-connected or switch), direct-sm-nmc (on the SMs, each GPU stores its partial of "
      "every chunk straight into the GPU that owns it as near-memory updates, as T3's GEMM "
      "stores its partial sums; its all-gather is direct-sm's; topology.kind fully-connected or "
      "switch), ring-dma-nmc (ring on the DMA "
      "engines, tracker-forwarded slices, reductions by near-memory updates), direct-dma-nmc "
      "(every chunk straight to its owner by DMA, reduced there by near-memory updates; "
      "topology.kind fully-connected or switch), nvls (NCCL's NVLS on the SMs: each GPU reduces "
      "its share in the switch with ld_reduce reads and multicasts it with multicast stores, the "
      "all-reduce both at once in one launch; "
      "topology.kind switch with topology.switch_reductions true)")(
      "bytes", po::value<std::int64_t>(),
      "buffer bytes per GPU (required), nccl-tests convention: the reduce-scatter input, the "
      "all-gather output, the all-reduce input; any whole number of 4-byte fp32 elements, down to "
      "one (chunks then differ by an element, or are empty)")(
      "channels", po::value<int>(),
      "ring channels, one workgroup each, 1..64 (default: what NCCL picks for the class of "
      "machine, 24 on a switch and 16 on point-to-point links, at most sm.count x "
      "sm.occupancy; direct-sm, direct-sm-nmc: at most the 128 / n the mailbox holds flags "
      "for); ring-sm, direct-sm and direct-sm-nmc only")(
      "slices", po::value<int>(),
      "slices per chunk, 1..16 (direct-dma-nmc: 1..16/(n-1)) and at most the smaller chunk's "
      "elements, each a DMA descriptor and a tracker tag (default: the largest such count "
      "dividing the smaller chunk's elements); dma-nmc implementations only")(
      "functional", "carry real data (sets sim.mode=functional)")(
      "omit-rank", po::value<int>(),
      "launch nothing on this rank, so the others wait for it forever: a run that can never "
      "finish, to see the stall diagnosis (exit status 2)")(
      "json", po::value<std::string>(), "write the result document to this file");
  return options;
}

CollectiveKind parse_kind(const std::string& op) {
  if (op == "reduce-scatter") return CollectiveKind::ReduceScatter;
  if (op == "all-gather") return CollectiveKind::AllGather;
  if (op == "all-reduce") return CollectiveKind::AllReduce;
  throw UsageError("--op " + op + ": unknown collective (choices: " + kOps + ")");
}

using Impl = CollectiveImpl;

Impl parse_impl(const std::string& impl) {
  if (impl == "ring-sm") return Impl::RingSm;
  if (impl == "direct-sm") return Impl::DirectSm;
  if (impl == "direct-sm-nmc") return Impl::DirectSmNmc;
  if (impl == "ring-dma-nmc") return Impl::RingDmaNmc;
  if (impl == "direct-dma-nmc") return Impl::DirectDmaNmc;
  if (impl == "nvls") return Impl::Nvls;
  throw UsageError("--impl " + impl + ": unknown implementation (choices: " + kImpls + ")");
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

std::string rings_text(const std::vector<int>& strides) {
  std::string text = std::to_string(strides.size()) + " rings of stride";
  for (std::size_t i = 0; i < strides.size(); ++i) {
    text += (i == 0 ? " " : ", ") + std::to_string(strides[i]);
  }
  return text;
}

int sm_channels(const po::variables_map& values, const SystemConfig& config, bool direct) {
  const int most = direct ? direct_mailbox_channels(static_cast<int>(config.gpus))
                          : static_cast<int>(dispatcher::kMaxChannels);
  const int channels = values.count("channels") ? values["channels"].as<int>()
                                                : std::min(default_ring_channels(config), most);
  if (channels < 1 || channels > most) {
    throw UsageError(
        "--channels " + std::to_string(channels) + ": must be in [1, " + std::to_string(most) +
        "]" +
        (direct
             ? " (direct-sm and direct-sm-nmc: the mailbox holds 8 bytes of flags per channel and "
               "GPU)"
             : ""));
  }
  // More channels than a chunk has elements is allowed: the empty ones pass flags only.
  return channels;
}

DmaCollectiveSpec dma_spec(const po::variables_map& values, const std::string& impl,
                           DmaPattern pattern, int n, std::uint64_t bytes) {
  DmaCollectiveSpec spec;
  spec.pattern = pattern;
  spec.ranks = n;
  spec.bytes = bytes;
  spec.element = ElementType::Fp32;
  spec.slices = values.count("slices") ? values["slices"].as<int>() : 0;
  const bool direct = pattern == DmaPattern::Direct;
  const int most_ranks = direct ? kMaxDirectDmaRanks : kMaxDmaRanks;
  if (n > most_ranks) {
    throw UsageError("--impl " + impl + ": at most " + std::to_string(most_ranks) + " GPUs (" +
                     (direct ? "one DMA descriptor per peer" : "two tracker regions per chunk") +
                     "), not " + std::to_string(n));
  }
  // Every non-empty chunk has at least this many elements, one per slice at the least.
  const std::uint64_t most =
      std::max<std::uint64_t>(bytes / (static_cast<std::uint64_t>(n) * kElementBytes), 1);
  const int most_slices = dma_max_slices(spec);
  if (values.count("slices") && (spec.slices < 1 || spec.slices > most_slices ||
                                 static_cast<std::uint64_t>(spec.slices) > most)) {
    throw UsageError("--slices " + std::to_string(spec.slices) + ": must be in [1, " +
                     std::to_string(most_slices) + "] and at most the smaller chunk's " +
                     std::to_string(most) + " fp32 elements");
  }
  try {
    check_dma_spec(spec);
  } catch (const std::invalid_argument& error) {
    throw UsageError("--impl " + impl + ": " + error.what());
  }
  return spec;
}

std::uint64_t checked_bytes(const po::variables_map& values) {
  if (!values.count("bytes")) throw UsageError("--bytes is required");
  const std::int64_t bytes = values["bytes"].as<std::int64_t>();
  // Any whole number of elements: the chunks may be uneven, or empty (protocol/ring.h).
  if (bytes <= 0 || static_cast<std::uint64_t>(bytes) % kElementBytes != 0) {
    throw UsageError("--bytes " + std::to_string(bytes) + ": must be a positive multiple of the " +
                     std::to_string(kElementBytes) + "-byte fp32 element");
  }
  return static_cast<std::uint64_t>(bytes);
}

// Options that belong to the other implementation are a usage error, not silently ignored.
void check_impl_options(const po::variables_map& values, Impl impl) {
  if (!on_sms(impl) && values.count("channels")) {
    throw UsageError(
        "--channels applies to --impl ring-sm, direct-sm and direct-sm-nmc only (the dma-nmc "
        "ones use --slices)");
  }
  if (on_sms(impl) && values.count("slices")) {
    throw UsageError(
        "--slices applies to the dma-nmc implementations only (ring-sm, direct-sm and "
        "direct-sm-nmc use --channels)");
  }
}

// NVLS needs a switch that reduces, and every GPU built (a multicast access reaches them all).
void check_nvls(const SystemConfig& config) {
  if (config.topology.kind != TopologyKind::Switch) {
    throw UsageError(
        "--impl nvls needs topology.kind = switch (the reductions happen in the switch)");
  }
  if (!config.topology.switch_reductions) {
    throw UsageError("--impl nvls needs topology.switch_reductions = true (system '" + config.name +
                     "' has a switch that does not reduce)");
  }
  if (config.sim.symmetry == Symmetry::Rotational) {
    throw UsageError(
        "--impl nvls needs sim.symmetry = none (a multicast access reaches every GPU)");
  }
}

// What the command line asks for, checked: the collective, its implementation and its shape.
struct Request : CollectiveRequest {
  std::string op;  // as typed
  std::string impl_name;
  int n = 0;
  std::size_t launches = 0;  // per GPU (all-reduce: two, nvls one)
  std::string shape;         // "16 channels", "16 slices per chunk"
};

void print_help(const po::options_description& options) {
  std::cout
      << "usage: t3sim collective --op OP --bytes B "
         "[--impl ring-sm|direct-sm|direct-sm-nmc|ring-dma-nmc|direct-dma-nmc|nvls] [OPTIONS]\n"
         "Times one collective on the group and reports nccl-tests figures: algbw = "
         "bytes / time,\nbusbw = algbw x (n-1)/n (reduce-scatter, all-gather) or x "
         "2(n-1)/n (all-reduce).\n"
         "the SM implementations are timed from the first doorbell to the last kernel end; the "
         "dma-nmc "
         "ones from the\nfirst MMIO write (tracker and descriptor programming included) to the "
         "last program's end.\n"
      << options;
}

Request parse_request(const po::variables_map& values) {
  Request r;
  if (!values.count("op")) {
    throw UsageError("--op is required (choices: " + std::string(kOps) + ")");
  }
  r.op = values["op"].as<std::string>();
  r.kind = parse_kind(r.op);
  r.impl_name = values["impl"].as<std::string>();
  r.impl = parse_impl(r.impl_name);
  check_impl_options(values, r.impl);

  r.config = system_from(values);
  if (values.count("functional")) {
    apply_override(r.config, "sim.mode=functional");
    validate(r.config);
  }
  r.n = static_cast<int>(r.config.gpus);
  if (r.n < 2) {
    throw UsageError("a collective needs at least 2 GPUs (gpus = " + std::to_string(r.n) +
                     "; use --tp)");
  }
  r.bytes = checked_bytes(values);
  r.launches = launches_of(r.kind, r.impl).size();
  if (values.count("omit-rank")) {
    r.omit_rank = values["omit-rank"].as<int>();
    if (r.omit_rank < 0 || r.omit_rank >= r.n) {
      throw UsageError("--omit-rank " + std::to_string(r.omit_rank) + ": must be a rank in [0, " +
                       std::to_string(r.n - 1) + "]");
    }
  }

  if (r.impl == Impl::Nvls) check_nvls(r.config);  // before the direct check: it names more
  if (direct(r.impl) && r.config.topology.kind == TopologyKind::Ring) {
    throw UsageError("--impl " + r.impl_name +
                     " needs topology.kind = fully-connected or switch (on a ring a direct "
                     "transfer crosses other GPUs' links)");
  }
  // Each implementation's shape: SM channels, or DMA slices per chunk.
  if (on_sms(r.impl)) {
    r.sm.ranks = r.n;
    r.sm.bytes = r.bytes;
    r.sm.element = ElementType::Fp32;
    r.sm.direct = r.impl == Impl::DirectSm || r.impl == Impl::Nvls || r.impl == Impl::DirectSmNmc;
    r.sm.nmc = r.impl == Impl::DirectSmNmc;
    r.sm.nvls = r.impl == Impl::Nvls;
    r.sm.channels = sm_channels(values, r.config, r.sm.direct);
    r.shape = std::to_string(r.sm.channels) + " channels";
    if (!r.sm.direct) {
      r.sm.ring_strides = ring_strides_for(r.config, r.sm.channels);
      if (r.sm.ring_strides.size() > 1) r.shape += " on " + rings_text(r.sm.ring_strides);
    }
  } else {
    const DmaPattern pattern = r.impl == Impl::DirectDmaNmc ? DmaPattern::Direct : DmaPattern::Ring;
    r.dma = dma_spec(values, r.impl_name, pattern, r.n, r.bytes);
    r.shape = std::to_string(dma_slices(r.dma)) + " slices per chunk";
  }
  return r;
}

void print_summary(const Request& r, const CollectiveResult& m) {
  const double link_GBps =
      delivered_GBps(r.config.link, on_sms(r.impl) ? UnitKind::Sm : UnitKind::Dma);
  // Chunks of an uneven split differ by one element: the larger one is chunk n - 1.
  const std::uint64_t chunk_bytes =
      on_sms(r.impl) ? r.sm.chunk_bytes(r.n - 1) : r.dma.chunk_bytes(r.n - 1);
  const bool even = r.bytes % (static_cast<std::uint64_t>(r.n) * kElementBytes) == 0;
  std::printf("t3sim collective: %s %s, TP %d, %llu bytes fp32, %s, system %s (%s mode)\n",
              r.op.c_str(), r.impl_name.c_str(), r.n, static_cast<unsigned long long>(r.bytes),
              r.shape.c_str(), r.config.name.c_str(),
              r.config.sim.mode == SimMode::Functional ? "functional" : "timing");
  std::printf(
      "  bytes               %.2f MB per GPU = %s (nccl-tests convention), chunks of %s%.2f MB\n",
      static_cast<double>(r.bytes) / 1e6, bytes_meaning(r.kind), even ? "" : "up to ",
      chunk_bytes / 1e6);
  std::printf("  collective time     %.1f us (%s)\n", m.time_ns / 1e3, m.basis);
  std::printf("  algbw               %.2f GB/s (bytes / time)\n", m.bw.algbw_GBps);
  // A ring sends on one link of each GPU; several rings (a mesh) on one link each.
  const int rings = r.impl == Impl::RingSm ? static_cast<int>(r.sm.ring_strides.size()) : 1;
  if (rings > 1) {
    std::printf(
        "  busbw               %.2f GB/s (algbw x %s; %.0f%% of the %d x %.2f GB/s the links of "
        "%d rings deliver)\n",
        m.bw.busbw_GBps, busbw_factor(r.kind), 100 * m.bw.busbw_GBps / (rings * link_GBps), rings,
        link_GBps, rings);
  } else {
    std::printf(
        "  busbw               %.2f GB/s (algbw x %s; %.0f%% of the %.2f GB/s a link delivers)\n",
        m.bw.busbw_GBps, busbw_factor(r.kind), 100 * m.bw.busbw_GBps / link_GBps, link_GBps);
  }
  std::printf(
      "  link traffic        %.2f MB payload (%.2f MB %s data, %s), "
      "%.2f MB on the wire, summed over links\n",
      m.payload_bytes / 1e6, m.data_bytes / 1e6, direct(r.impl) ? "direct" : "ring",
      on_sms(r.impl) ? "the rest flags" : "no flags", m.wire_bytes / 1e6);
  if (on_sms(r.impl)) {
    std::printf("  per channel         %.2f GB/s busbw per channel (%d channels)\n",
                m.bw.busbw_GBps / r.sm.channels, r.sm.channels);
  }
  std::printf("  simulation          %zu %s per GPU, %.2f s wall time\n", r.launches,
              on_sms(r.impl) ? (r.launches == 1 ? "launch" : "launches")
                             : (r.launches == 1 ? "DMA collective" : "DMA collectives"),
              m.run.wall_time_s);
}

nlohmann::json result_document(const Request& r, const CollectiveResult& m) {
  nlohmann::json document = {{"job", "collective"},
                             {"op", r.op},
                             {"impl", r.impl_name},
                             {"tp", r.n},
                             {"bytes", r.bytes},
                             {"element", "fp32"},
                             {"time_ns", m.time_ns},
                             {"algbw_GBps", m.bw.algbw_GBps},
                             {"busbw_GBps", m.bw.busbw_GBps},
                             {"link_bytes",
                              {{"payload", m.payload_bytes},
                               {"wire", m.wire_bytes},
                               {direct(r.impl) ? "direct_data" : "ring_data", m.data_bytes}}},
                             {"simulated_ns", m.run.simulated_ns},
                             {"wall_time_s", m.run.wall_time_s},
                             {"stats", m.stats},
                             {"config", to_json(r.config)}};
  if (on_sms(r.impl)) {
    document["channels"] = r.sm.channels;
    if (r.impl == Impl::RingSm) document["ring_strides"] = r.sm.ring_strides;
    // What one channel (one workgroup) carries: the bus bandwidth shared by the channels.
    document["busbw_per_channel_GBps"] = m.bw.busbw_GBps / r.sm.channels;
  } else {
    document["slices"] = dma_slices(r.dma);
  }
  return document;
}

}  // namespace

int collective_command(const std::vector<std::string>& args) {
  po::options_description options = system_options();
  options.add(collective_options()).add(record_options());
  const auto values = parse(args, options);
  if (values.count("help")) {
    print_help(options);
    return 0;
  }
  const Request request = parse_request(values);
  const bool json = values.count("json") > 0;
  const std::unique_ptr<TraceRecorder> recorder = recorder_from(values, request.config);
  const CollectiveResult measured = run_collective(request, json);
  if (recorder) recorder->close();
  print_summary(request, measured);
  if (json) write_json(values["json"].as<std::string>(), result_document(request, measured));
  return 0;
}

}  // namespace t3::cli
