// Ring collectives run by the SMs (RCCL-style): where every GPU's buffer, receive FIFO and flags
// lie, and the host programs that launch the collective through the dispatcher's collective
// registers (protocol/dispatcher_registers.h, KERNEL = kCollective). The schedule, layout rules
// and flag protocol both the SMs and these programs follow are in protocol/ring.h.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "config/system_config.h"
#include "protocol/collective_descriptor.h"
#include "protocol/dispatcher_registers.h"
#include "protocol/program.h"
#include "protocol/ring.h"
#include "workloads/gemm_program.h"

namespace t3 {

enum class FlagPlacement {
  Mailbox,  // the rank's dispatcher mailbox (MMIO): works in timing and functional mode
  Hbm,      // the rank's HBM after the FIFO: functional mode only (timing mode stores no data)
};

// What every rank of one ring collective shares.
struct CollectiveSpec {
  int ranks = 0;
  std::uint64_t bytes = 0;  // the whole buffer: ranks chunks, any whole number of elements
  ElementType element = ElementType::Fp32;
  int channels = 1;
  std::uint32_t slice_bytes = dispatcher::kDefaultSliceBytes;
  std::uint32_t fifo_depth = dispatcher::kDefaultFifoDepth;
  std::uint32_t poll_ns = dispatcher::kDefaultPollNs;
  FlagPlacement flags = FlagPlacement::Mailbox;
  // Direct instead of ring (protocol/ring.h, Direct): every chunk moves straight between the rank
  // that holds it and the one that needs it; no receive FIFO, a direct flag area per rank. For
  // fully-connected and switch fabrics.
  bool direct = false;
  // NVLS (protocol/ring.h, NVLS; with `direct`, whose layout and arrival it keeps): the data moves
  // through the switch's multicast group `multicast` (topology.switch_reductions).
  bool nvls = false;
  std::uint32_t multicast = 0;
  // Direct NMC (protocol/ring.h, Direct NMC; with `direct`): the reduce-scatter pushes each chunk
  // to its owner as near-memory updates; the all-gather stays the direct one.
  bool nmc = false;
  // Ring ops: the strides of the rings the channels are spread over (protocol/ring.h, Several
  // rings), channel c on ring c mod size; {1} is the one ring r -> r + 1. ring_strides_for picks
  // them for a topology. Ignored when direct.
  std::vector<int> ring_strides = {1};
  std::int64_t elements() const;
  // Bytes of chunk `chunk` (chunk_range: chunks may differ by one element, or be empty).
  std::uint64_t chunk_bytes(int chunk) const;
};

// Where one rank's areas lie (global addresses).
struct CollectiveGpuLayout {
  std::uint64_t dispatcher = 0;  // the rank's dispatcher block (MMIO)
  std::uint64_t buffer = 0, buffer_bytes = 0;
  std::uint64_t receive = 0, receive_bytes = 0;
  std::uint64_t flags = 0, flag_bytes = 0;
  std::uint64_t end = 0;  // first 4 KiB-aligned HBM address after this rank's HBM areas
};

// Rank g is GPU g: its buffer at its HBM window base + hbm_offset (rounded up to 4 KiB), the
// receive FIFO after it, the flags in its mailbox or after the FIFO. Throws std::invalid_argument
// if the spec is invalid (see check_spec) or the mailbox is too small for the channels.
std::vector<CollectiveGpuLayout> plan_collective(const AddressMapConfig& map,
                                                 const CollectiveSpec& spec,
                                                 std::uint64_t hbm_offset = 0);

// The most channels a direct collective of `ranks` ranks can have with its flags in the mailbox
// (8 bytes per channel and rank).
int direct_mailbox_channels(int ranks);

// Throws std::invalid_argument naming the field if the spec cannot run: ranks outside
// [2, 256], channels outside [1, 64], bytes 0 or not a whole number of elements, an unknown
// element code, slice_bytes 0 or not a multiple of 4, fifo_depth 0, poll_ns 0, ring_strides
// empty, longer than kMaxRings or the channels, or a stride not coprime with ranks.
void check_spec(const CollectiveSpec& spec);

// The rings an SM ring collective of `channels` channels on all config.gpus GPUs runs on. On a
// fully-connected fabric every rank has a link to every other, so the channels spread over every
// Hamiltonian ring of a stride coprime with the GPU count (mesh_ring_strides: each ring on its own
// link directions; for 8 GPUs strides 1, 3, 5, 7), as RCCL builds several rings over distinct
// links on a mesh; at most kMaxRings and one per channel. A ring topology has the one ring
// r -> r + 1. Behind a switch every ring crosses each GPU's one switch port, so more rings add no
// bandwidth: one ring too. workload.sm_rings = one keeps the one ring everywhere
// (several_sm_rings in config_io.h).
std::vector<int> ring_strides_for(const SystemConfig& config, int channels);

// ---- Programs ----------------------------------------------------------------------------------

// One launch of a collective on one rank: its descriptor (protocol/collective_descriptor.h) and
// how the host issues it.
struct CollectiveLaunch : CollectiveDescriptor {
  std::uint64_t dispatcher = 0;      // this rank's dispatcher MMIO block base
  std::string label = "collective";  // prefixes every command's note
  int queue = 0;                     // the dispatcher's hardware queue it runs on
  bool wait = true;  // the program waits for it here (false: later, with wait_kernel())
  // A gated reduce-scatter (gate != 0) writes COLL_GATE before its doorbell and clears it after,
  // so the staging descriptor does not gate a later launch. A launch with several_rings() writes
  // COLL_RINGS, COLL_STRIDE and the ring table before its doorbell and puts COLL_RINGS and
  // COLL_STRIDE back to 1 after, so the staging descriptor does not spread a later launch.
};

// Appends WriteRegister commands for KERNEL = collective and every COLL_* register, the queue's
// doorbell and (if `wait`) a WaitKernel on the dispatcher's queue. Throws std::invalid_argument
// (naming the label and field) for what check_spec rejects, a rank outside [0, ranks) or sequence
// 0.
void append_collective(Program& program, const CollectiveLaunch& launch);
Program collective_program(const CollectiveLaunch& launch);

// The launch of `rank` in the ring over `plan` (next and previous ranks' areas filled in, for
// every ring of spec.ring_strides). With spec.direct, `op` becomes its direct form and the peer
// strides are filled in (every rank's areas must be rank 0's moved by equal strides); with
// spec.nvls as well, its NVLS form with the multicast group. CollectiveOp::NvlsAllReduce (the
// all-reduce in one launch) needs spec.nvls and stays as it is.
CollectiveLaunch ring_launch(const std::vector<CollectiveGpuLayout>& plan,
                             const CollectiveSpec& spec, int rank, CollectiveOp op,
                             std::uint32_t sequence);
// One program per rank: the ops launched one after the other (each waited for), sequences
// first_sequence, first_sequence + 1, ... (all-reduce: {ReduceScatter, AllGather}, or
// {NvlsAllReduce} in one launch with spec.nvls).
std::vector<Program> ring_programs(const std::vector<CollectiveGpuLayout>& plan,
                                   const CollectiveSpec& spec, const std::vector<CollectiveOp>& ops,
                                   std::uint32_t first_sequence = 1);

// ---- nccl-tests figures ------------------------------------------------------------------------

enum class CollectiveKind { ReduceScatter, AllGather, AllReduce };
struct CollectiveBandwidth {
  double algbw_GBps = 0;  // bytes / time
  double busbw_GBps = 0;  // algbw x (n-1)/n (RS, AG) or x 2(n-1)/n (all-reduce)
};
// `bytes` is the whole buffer (the RS input, the AG output, the all-reduce input).
CollectiveBandwidth collective_bandwidth(CollectiveKind kind, int ranks, std::uint64_t bytes,
                                         double seconds);

}  // namespace t3
