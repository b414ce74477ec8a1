// One collective (reduce-scatter, all-gather or all-reduce) on a TP group, run and timed: builds
// the group, programs it, runs it to completion and measures the time, the nccl-tests algbw and
// busbw figures and the bytes on the links. Four implementations: the RCCL-style ring and the
// direct pattern on the SMs (workloads/collective_program.h, protocol/ring.h), and the ring and
// the direct pattern on the DMA engines with near-memory updates (workloads/dma_collective.h; the
// ring is the paper's Ideal-RS+NMC baseline, the direct one its section 7.1 mapping for
// fully-connected and switch fabrics). `t3sim collective` parses options into a CollectiveRequest
// and prints what run_collective returns.
#pragma once

#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/system_config.h"
#include "models/system/simulation.h"
#include "tlm_interconnect/payload.h"
#include "workloads/collective_program.h"
#include "workloads/dma_collective.h"

namespace t3 {

// Nvls: NCCL's NVLS on the SMs through the switch's multicast group (protocol/ring.h, NVLS).
// DirectSmNmc: the SMs push each chunk to its owner as near-memory updates (protocol/ring.h,
// Direct NMC), the all-gather the direct one.
enum class CollectiveImpl { RingSm, DirectSm, RingDmaNmc, DirectDmaNmc, Nvls, DirectSmNmc };
bool on_sms(CollectiveImpl impl);  // ring-sm, direct-sm, nvls, direct-sm-nmc
// direct-sm, direct-dma-nmc, nvls (its direct layout), direct-sm-nmc
bool direct(CollectiveImpl impl);

// The dispatcher launches of each op: all-reduce is reduce-scatter then all-gather, but NVLS runs
// it in one launch (CollectiveOp::NvlsAllReduce).
std::vector<CollectiveOp> launches_of(CollectiveKind kind, CollectiveImpl impl);

// What to run, checked by the caller: the SM implementations use `sm`, the dma-nmc ones `dma`.
struct CollectiveRequest {
  CollectiveKind kind = CollectiveKind::AllReduce;
  CollectiveImpl impl = CollectiveImpl::RingSm;
  SystemConfig config;
  std::uint64_t bytes = 0;  // per GPU, nccl-tests convention
  CollectiveSpec sm;
  DmaCollectiveSpec dma;
  int omit_rank = -1;  // >= 0: this rank's program is left empty (a run that stalls)
};

struct CollectiveResult {
  double time_ns = 0;
  const char* basis = "";  // how time_ns was measured
  RunSummary run;
  CollectiveBandwidth bw;
  std::uint64_t data_bytes = 0;  // the collective's data on the links, summed over links
  std::uint64_t payload_bytes = 0, wire_bytes = 0;  // every link, both directions
  nlohmann::json stats;                             // the group's report (with_stats only)
};

// Runs the collective on a fresh group (nvls: with a multicast group of every GPU; throws
// ConfigError naming topology.switch_reductions if the switch has no reducer). The SM
// implementations are timed from the first doorbell to the last kernel end; the dma-nmc ones from
// the first MMIO write (tracker and descriptor programming included) to the last program's end,
// over every GPU. Throws what the run throws (a stall, a failed launch).
CollectiveResult run_collective(const CollectiveRequest& request, bool with_stats);

// The rate a link delivers to `issuer`'s accesses: payload behind headers (in the packets that
// issuer's accesses use), and at most `credits` packets per round trip.
double delivered_GBps(const LinkConfig& link, UnitKind issuer);

}  // namespace t3
