// One collective run and timed on a TP group (see collective_run.h).
#include "experiments/collective_run.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "models/system/tp_group.h"
#include "protocol/to_size.h"
#include "tlm_interconnect/nvlink.h"
#include "workloads/t3_plan.h"

namespace t3 {
namespace {

// Ring data on the links: in each op every GPU sends every chunk but one to its ring successor
// (`unsent(op, rank)`: the chunk it ends with or that ends at it), over every link of its route
// (one on a ring; two, GPU to switch to GPU, through a switch).
template <typename Unsent, typename ChunkBytes>
std::uint64_t ring_data_bytes(const TpGroup& group, const std::vector<CollectiveOp>& ops,
                              std::uint64_t bytes, int (*successor)(int, int), Unsent unsent,
                              ChunkBytes chunk_bytes) {
  const int n = group.gpus();
  std::uint64_t total = 0;
  for (CollectiveOp op : ops) {
    for (int g = 0; g < n; ++g) {
      total += static_cast<std::uint64_t>(group.topology().hops(g, successor(g, n))) *
               (bytes - chunk_bytes(unsent(op, g)));
    }
  }
  return total;
}

// Direct data on the links: every send of every rank (nothing is forwarded), over every link of
// its route.
std::uint64_t direct_data_bytes(const TpGroup& group, const std::vector<CollectiveOp>& ops,
                                const DmaCollectiveSpec& spec) {
  std::uint64_t total = 0;
  for (CollectiveOp op : ops) {
    for (int g = 0; g < group.gpus(); ++g) {
      for (const DmaSend& send : dma_sends(spec, op, g)) {
        total += static_cast<std::uint64_t>(group.topology().hops(g, send.to)) *
                 spec.chunk_bytes(send.position);
      }
    }
  }
  return total;
}

// SM ring data on the links: on each ring (protocol/ring.h, Several rings) every rank sends its
// ring's channels' share of every chunk but one to rank + stride (the chunk it ends with, or the
// all-gather's chunk that ends at it), over every link of that route.
std::uint64_t sm_ring_data_bytes(const TpGroup& group, const std::vector<CollectiveOp>& ops,
                                 const CollectiveSpec& spec) {
  const int n = spec.ranks;
  const auto rings = static_cast<int>(spec.ring_strides.size());
  std::uint64_t total = 0;
  for (CollectiveOp op : ops) {
    for (int c = 0; c < spec.channels; ++c) {
      const int stride = spec.ring_strides[to_size(ring_of_channel(c, rings))];
      for (int g = 0; g < n; ++g) {
        const int unsent = op == CollectiveOp::ReduceScatter
                               ? reduce_scatter_chunk(g, n - 1, n, stride)
                               : all_gather_chunk(g, n - 1, n, stride);
        std::int64_t elements = 0;
        for (int chunk = 0; chunk < n; ++chunk) {
          if (chunk == unsent) continue;
          const std::int64_t chunk_elements = chunk_range(spec.elements(), n, chunk).size();
          elements += channel_range(chunk_elements, spec.channels, c).size();
        }
        total += static_cast<std::uint64_t>(group.topology().hops(g, wrap(g + stride, n))) *
                 bytes_of(spec.element, elements);
      }
    }
  }
  return total;
}

// SM direct data on the links: every rank's owned chunk comes from (reduce-scatter, pulled or
// pushed) or goes to (all-gather) every peer.
std::uint64_t sm_direct_data_bytes(const TpGroup& group, std::size_t ops,
                                   const CollectiveSpec& spec) {
  std::uint64_t total = 0;
  for (std::size_t op = 0; op < ops; ++op) {
    for (int owner = 0; owner < spec.ranks; ++owner) {
      for (int peer = 0; peer < spec.ranks; ++peer) {
        if (peer == owner) continue;
        total += static_cast<std::uint64_t>(group.topology().hops(peer, owner)) *
                 spec.chunk_bytes(owner_chunk(owner, spec.ranks));
      }
    }
  }
  return total;
}

// NVLS data on the links: each rank's owned chunk crosses every member's link once and the
// owner's once more per half (reduce-scatter: n member reads to the switch, the sum back to the
// owner; all-gather: the owner's store to the switch, n member writes out of it); the one-launch
// all-reduce does both halves.
std::uint64_t sm_nvls_data_bytes(const std::vector<CollectiveOp>& ops, const CollectiveSpec& spec) {
  std::uint64_t per_half = 0;
  for (int owner = 0; owner < spec.ranks; ++owner) {
    per_half += static_cast<std::uint64_t>(spec.ranks + 1) *
                spec.chunk_bytes(owner_chunk(owner, spec.ranks));
  }
  std::uint64_t halves = 0;
  for (CollectiveOp op : ops) halves += op == CollectiveOp::NvlsAllReduce ? 2 : 1;
  return per_half * halves;
}

// The programs with rank `omit`'s emptied (its host idles), or unchanged for -1.
std::vector<Program> launched(std::vector<Program> programs, int omit) {
  if (omit >= 0) programs.at(to_size(omit)) = Program{};
  return programs;
}

// The SM collective: time from the first doorbell to the last kernel end, over every GPU and
// launch.
void run_sm(TpGroup& group, CollectiveSpec spec, const std::vector<CollectiveOp>& ops,
            int omit_rank, CollectiveResult& result) {
  if (spec.nvls) {
    SwitchReducer* reducer = group.switch_reducer();
    if (reducer == nullptr) {
      throw ConfigError(
          "topology.switch_reductions: nvls needs a switch that reduces (topology.kind = switch, "
          "topology.switch_reductions = true, sim.symmetry = none)");
    }
    std::vector<int> members;
    for (int g = 0; g < spec.ranks; ++g) members.push_back(g);
    spec.multicast = reducer->add_group(members);
  }
  const auto plan = plan_collective(group.config().address_map, spec);
  result.run = run_to_completion(group, launched(ring_programs(plan, spec, ops, 1), omit_rank));
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
  result.time_ns = (last_end - first_doorbell).to_seconds() * 1e9;
  result.basis = "first doorbell to last kernel end, all GPUs";
  result.data_bytes = spec.nvls     ? sm_nvls_data_bytes(ops, spec)
                      : spec.direct ? sm_direct_data_bytes(group, ops.size(), spec)
                                    : sm_ring_data_bytes(group, ops, spec);
}

// The DMA collective: every program starts with an MMIO write at time 0 (all of it is the
// collective: tracker and descriptor programming included), and the collective ends when the last
// one ended.
void run_dma(TpGroup& group, const DmaCollectiveSpec& spec, const std::vector<CollectiveOp>& ops,
             int omit_rank, CollectiveResult& result) {
  const SystemConfig& config = group.config();
  result.run = run_to_completion(
      group,
      launched(dma_collective_programs(config, dma_ring_buffers(config), spec, ops), omit_rank));
  sc_core::sc_time last_end = sc_core::SC_ZERO_TIME;
  for (int g = 0; g < group.gpus(); ++g) {
    last_end = std::max(last_end, group.host(g).finish_times().back());
  }
  result.time_ns = last_end.to_seconds() * 1e9;
  result.basis = "first MMIO write to the last program's end, all GPUs";
  if (spec.pattern == DmaPattern::Direct) {
    result.data_bytes = direct_data_bytes(group, ops, spec);
    return;
  }
  // A reduce-scatter never sends the chunk it owns; an all-gather, the one that ends at it.
  const auto unsent = [n = spec.ranks](CollectiveOp op, int rank) {
    return op == CollectiveOp::ReduceScatter ? static_cast<int>(t3_owned_chunk(rank, n))
                                             : dma_received_chunks(op, rank, n).back();
  };
  const auto chunk_bytes = [&](int chunk) { return spec.chunk_bytes(chunk); };
  result.data_bytes = ring_data_bytes(group, ops, spec.bytes, t3_next_gpu, unsent, chunk_bytes);
}

}  // namespace

bool on_sms(CollectiveImpl impl) {
  return impl == CollectiveImpl::RingSm || impl == CollectiveImpl::DirectSm ||
         impl == CollectiveImpl::Nvls || impl == CollectiveImpl::DirectSmNmc;
}

bool direct(CollectiveImpl impl) {
  return impl == CollectiveImpl::DirectSm || impl == CollectiveImpl::DirectDmaNmc ||
         impl == CollectiveImpl::Nvls || impl == CollectiveImpl::DirectSmNmc;
}

std::vector<CollectiveOp> launches_of(CollectiveKind kind, CollectiveImpl impl) {
  // NCCL's NVLS all-reduce is one kernel: each slice reduced and multicast at once.
  if (kind == CollectiveKind::AllReduce && impl == CollectiveImpl::Nvls) {
    return {CollectiveOp::NvlsAllReduce};
  }
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

CollectiveResult run_collective(const CollectiveRequest& request, bool with_stats) {
  TpGroup group("group", request.config);
  const std::vector<CollectiveOp> ops = launches_of(request.kind, request.impl);
  CollectiveResult result;
  if (on_sms(request.impl)) {
    run_sm(group, request.sm, ops, request.omit_rank, result);
  } else {
    run_dma(group, request.dma, ops, request.omit_rank, result);
  }
  // nccl-tests figures use the whole buffer, whatever its chunks.
  result.bw = collective_bandwidth(request.kind, static_cast<int>(request.config.gpus),
                                   request.bytes, result.time_ns * 1e-9);
  for (int l = 0; l < group.links(); ++l) {
    for (int direction = 0; direction < 2; ++direction) {
      result.payload_bytes += group.link(l).stats(direction).payload_bytes;
      result.wire_bytes += group.link(l).stats(direction).wire_bytes;
    }
  }
  if (with_stats) result.stats = group.report();
  return result;
}

double delivered_GBps(const LinkConfig& link, UnitKind issuer) {
  const auto payload = static_cast<double>(max_payload_for(link, issuer));
  const double packet_bytes = payload + static_cast<double>(link.header_bytes);
  const double wire_GBps = link.bandwidth_GBps * payload / packet_bytes;
  const double credit_GBps = static_cast<double>(link.credits) * payload /
                             (packet_bytes / link.bandwidth_GBps + 2 * link.latency_ns);
  return std::min(wire_GBps, credit_GBps);
}

}  // namespace t3
