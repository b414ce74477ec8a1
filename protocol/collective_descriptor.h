// The one description of a collective launch that hosts, the dispatcher and the SMs share: what
// the COLL_* registers of the dispatcher (dispatcher_registers.h, docs/registers.md) hold, as one
// struct. Host programs build it and write it with to_registers; the dispatcher reads it back with
// from_registers at the doorbell; the SM runs it with the algorithm its op names
// (models/sm/collectives/). The schedules, layouts and flag protocols are in protocol/ring.h.
// Plain C++, no SystemC.
//
// Each COLL_OP code names an op (reduce-scatter, all-gather, add) and the algorithm that runs it
// (collective_ops below). A new algorithm is one CollectiveAlgorithm value, its COLL_OP codes in
// collective_ops, one class in models/sm/collectives/ and its tests.
#pragma once

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "protocol/dispatcher_registers.h"
#include "protocol/element_type.h"
#include "protocol/ring.h"

namespace t3 {

// How the SMs move a collective's data (protocol/ring.h).
enum class CollectiveAlgorithm : std::uint32_t {
  Ring,       // RCCL-style ring over one or several rings, FIFO and READY/ACK flags
  Direct,     // every chunk loaded straight from the rank that holds it (fully-connected, switch)
  Add,        // not a collective: BUFFER += NEXT_BUFFER, channel by channel, no flags
  Nvls,       // direct's layout and arrival, the data through the switch's multicast group (NVLS)
  DirectNmc,  // direct's layout and arrival, each chunk pushed to its owner as near-memory updates
};
const char* to_string(CollectiveAlgorithm algorithm);
// Whether the algorithm keeps the direct layout (peer strides, direct flag area): Direct, Nvls and
// DirectNmc.
bool direct_layout(CollectiveAlgorithm algorithm);

// One COLL_OP code: the op it names and the algorithm that runs it.
struct CollectiveOpInfo {
  CollectiveOp op;
  CollectiveAlgorithm algorithm;
};
// Every COLL_OP code the dispatcher accepts.
const std::vector<CollectiveOpInfo>& collective_ops();
// The entry of `code`; throws CollectiveDecodeError naming COLL_OP and the code if none.
const CollectiveOpInfo& collective_op_info(std::uint32_t code);
CollectiveAlgorithm algorithm_of(CollectiveOp op);

// A register value that names nothing (an unknown COLL_OP or COLL_ELEMENT code, COLL_RINGS out of
// range); the message names the register and the value.
class CollectiveDecodeError : public std::invalid_argument {
 public:
  enum class Kind { UnknownCode, OutOfRange };
  CollectiveDecodeError(Kind kind, const std::string& message)
      : std::invalid_argument(message), kind_(kind) {}
  Kind kind() const { return kind_; }

 private:
  Kind kind_;
};

struct CollectiveDescriptor {
  CollectiveOp op = CollectiveOp::ReduceScatter;  // COLL_OP
  int ranks = 0;                                  // n
  int rank = 0;                                   // this GPU's position r < n
  int channels = 1;                               // workgroups
  std::uint64_t buffer = 0;                       // this rank's n chunks
  std::uint64_t next_buffer = 0;                  // ring 0's next rank's buffer (add: the addend)
  std::uint64_t flags = 0;                        // this rank's flag area
  std::uint64_t next_flags = 0, prev_flags = 0;   // ring 0's neighbours' flag areas
  std::uint64_t bytes = 0;                        // the whole buffer, whole elements
  ElementType element = ElementType::Fp32;        // COLL_ELEMENT
  std::uint32_t sequence = 1;                     // launch sequence number (>= 1, growing)
  std::uint32_t slice_bytes = dispatcher::kDefaultSliceBytes;  // per flag and FIFO entry
  std::uint32_t fifo_depth = dispatcher::kDefaultFifoDepth;    // receive FIFO entries per channel
  std::uint32_t poll_ns = dispatcher::kDefaultPollNs;          // between flag polls
  // Ring ops: the word reduce-scatter steps wait on (0: none; dispatcher_registers.h, COLL_GATE).
  std::uint64_t gate = 0;
  // Direct ops: rank p's buffer (flag area) is this rank's moved by (p - rank) strides.
  std::uint64_t peer_stride = 0, peer_flag_stride = 0;
  // NVLS ops: the switch's multicast group of the ranks (COLL_MULTICAST, from 1).
  std::uint32_t multicast = 0;
  // Ring ops: ring 0's stride (its neighbours are next_buffer, next_flags and prev_flags) and
  // rings 1.. (protocol/ring.h, Several rings); channel c runs on ring c mod ring_count().
  int stride = 1;
  std::vector<RingRoute> more_rings;

  CollectiveAlgorithm algorithm() const { return algorithm_of(op); }
  int ring_count() const { return 1 + static_cast<int>(more_rings.size()); }
  // Ring `ring` (0: the descriptor's own neighbours).
  RingRoute ring(int ring) const;
  RingRoute ring_of(int channel) const { return ring(ring_of_channel(channel, ring_count())); }
  // More than the one ring of stride 1: COLL_RINGS, COLL_STRIDE and the ring table are written.
  bool several_rings() const { return stride != 1 || !more_rings.empty(); }

  std::uint64_t peer_buffer(int peer) const { return buffer + offset(peer, peer_stride); }
  std::uint64_t peer_flags(int peer) const { return flags + offset(peer, peer_flag_stride); }
  std::uint64_t offset(int peer, std::uint64_t step) const {
    return static_cast<std::uint64_t>(static_cast<std::int64_t>(peer - rank)) * step;
  }
  std::uint64_t receive() const { return receive_area(buffer, bytes); }

  bool operator==(const CollectiveDescriptor& other) const;
  bool operator!=(const CollectiveDescriptor& other) const { return !(*this == other); }
};

// One 32-bit register write of a descriptor: the dispatcher-block offset, the value and what it
// sets ("ranks = 8", "buffer 0x... bits 31:0").
struct RegisterWrite {
  std::uint64_t offset = 0;
  std::uint32_t value = 0;
  std::string what;
};

// The writes that program `d` into the dispatcher's staging descriptor, in the order hosts issue
// them: KERNEL = collective, COLL_OP .. COLL_POLL_NS, COLL_GATE if set, the peer strides for a
// direct op, and COLL_RINGS, COLL_STRIDE and the ring table when several_rings(). Registers not
// written keep their values (the reset values: gate 0, one ring of stride 1). Throws
// CollectiveDecodeError for an op with no COLL_OP code.
std::vector<RegisterWrite> to_registers(const CollectiveDescriptor& d);

// Reads one 32-bit register of the dispatcher block at `offset`.
using RegisterRead = std::function<std::uint32_t(std::uint64_t offset)>;
// The descriptor the COLL_* registers hold, as the dispatcher takes it at a doorbell. The gate and
// the ring table are read for ring ops only, the peer strides for direct ops only (the others keep
// their defaults). Throws CollectiveDecodeError (naming the register and its value) for an unknown
// COLL_OP or COLL_ELEMENT code (UnknownCode) or, for a ring op, COLL_RINGS outside [1, kMaxRings]
// (OutOfRange). Other values are taken as they are: their range checks are the dispatcher's.
CollectiveDescriptor from_registers(const RegisterRead& read);

}  // namespace t3
