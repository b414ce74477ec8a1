// What a collective algorithm run by the SMs is made of: the channel it runs (one workgroup), the
// services of the SM slot that runs it (ChannelOps: flags, the fence and the data movers) and the
// algorithm itself (ChannelAlgorithm), one class per CollectiveAlgorithm
// (protocol/collective_descriptor.h), chosen by channel_algorithm(). A new algorithm is one class
// here, one CollectiveAlgorithm value with its COLL_OP codes, one row of channel_algorithm's table
// and its tests.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include <systemc>

#include "models/sm/work_item.h"
#include "protocol/ring.h"
#include "tlm_interconnect/payload.h"

namespace t3 {

// One channel's view of a collective launch (protocol/ring.h): its share of every chunk, its
// slices, the extensions of its five kinds of access and its flag words. Made once per workgroup
// by the SM (Sm::make_ring_channel); the algorithms only read it, but for the flag values last
// seen.
struct RingChannel {
  explicit RingChannel(const CollectiveKernel& kernel) : k(kernel) {}
  const CollectiveKernel& k;
  int channel = 0;
  int stride = 1;                  // of its ring: data flows rank r -> r + stride
  std::uint64_t next_buffer = 0;   // its ring's next rank's buffer
  std::uint64_t next_receive = 0;  // and receive FIFO
  bool functional = false;
  bool reduce_scatter = false;
  std::int64_t eb = 0;              // bytes per element
  std::int64_t elements = 0;        // of the whole buffer
  std::int64_t slice_elements = 0;  // of a full slice
  std::int64_t slices = 0;          // the channel runs, each with every ring step
  std::int64_t piece_elements = 0;  // of one request
  sc_core::sc_time interval;        // between flag polls
  // Communication traffic. Local data goes through this GPU's L2; stores into next's HBM and every
  // flag access bypass it (protocol/ring.h, Traffic).
  T3Extension local_read, local_write, remote_write, flag_read, flag_write;
  std::uint64_t ready = 0, ack = 0;  // this channel's flag words here,
  std::uint64_t next_ready = 0;      // the READY it sets at next,
  std::uint64_t prev_ack = 0;        // the ACK it sets at prev
  std::uint64_t seen_ready = 0, seen_ack = 0, seen_gate = 0;

  std::uint64_t flag(std::uint32_t count) const { return flag_value(k.sequence, count); }
  // The part of slice `slice` of this channel's range of `chunk`, in elements from the chunk's
  // start: empty past the end of the range (the chunk is smaller than the one that sets `slices`).
  ElementRange slice_of(int chunk, std::int64_t slice) const {
    const ElementRange range =
        channel_range(chunk_range(elements, k.ranks, chunk).size(), k.channels, channel);
    const std::int64_t first = range.first + slice * slice_elements;
    return {first, std::max(first, std::min(first + slice_elements, range.end))};
  }
  // Element `element` of chunk `chunk` in the buffer at `buffer`.
  std::uint64_t address(std::uint64_t buffer, int chunk, std::int64_t element) const {
    return buffer +
           static_cast<std::uint64_t>((chunk_range(elements, k.ranks, chunk).first + element) * eb);
  }
  std::uint64_t fifo(std::uint64_t receive, std::uint32_t send) const {
    return fifo_entry(receive, channel, k.fifo_depth, k.slice_bytes, send % k.fifo_depth);
  }
};

// What one ring step does with its slice's data: read `source` (and, when it reduces, the
// received partial at `received`), add them, store the result at `destination`.
struct RingMove {
  std::uint64_t source = 0, received = 0, destination = 0;
  std::int64_t count = 0;  // elements; 0: flags only
  bool reduce = false;
  const T3Extension* store = nullptr;
};

// One source of a direct load: where it reads and with which extension.
struct DirectSource {
  std::uint64_t address = 0;
  const T3Extension* extension = nullptr;
};

// What an algorithm asks of the SM slot that runs its channel. Every call returns false once the
// workgroup has faulted (the fault is recorded in its result).
class ChannelOps {
 public:
  virtual ~ChannelOps() = default;
  // A posted 8-byte flag store; the fence waits for its acknowledgement.
  virtual bool post_flag(std::uint64_t address, std::uint64_t value,
                         const T3Extension& extension) = 0;
  // Polls the 8-byte flag at `address` every `interval` until it is at least `expected`; `seen`
  // caches the last value read (a wait it already satisfies costs no access).
  virtual bool wait_flag(std::uint64_t address, std::uint64_t expected, std::uint64_t& seen,
                         const T3Extension& extension, sc_core::sc_time interval) = 0;
  // Waits until every request of the slot completed (posted stores and flag stores acknowledged).
  virtual bool fence() = 0;
  // A ring step's data, in pieces (Sm::move_pieces); `ack` > 0 acknowledges send ack - 1 to prev
  // once its last piece has been read.
  virtual bool move_pieces(RingChannel& channel, const RingMove& move, std::uint32_t ack) = 0;
  // `count` elements loaded from every source, summed when there are several, stored at
  // `destination` (Sm::direct_move).
  virtual bool direct_move(RingChannel& channel, const std::vector<DirectSource>& sources,
                           std::uint64_t destination, std::int64_t count) = 0;
  virtual bool faulted() const = 0;
};

// One collective algorithm: runs one channel of a launch to its end.
class ChannelAlgorithm {
 public:
  virtual ~ChannelAlgorithm() = default;
  virtual bool run(ChannelOps& sm, RingChannel& channel) const = 0;
};

// RCCL-style ring (protocol/ring.h): every ring step on slice 0, then on slice 1, ...
class RingAlgorithm : public ChannelAlgorithm {
 public:
  bool run(ChannelOps& sm, RingChannel& channel) const override;

 private:
  // Ring step `step` of slice `slice`: wait for what it receives (and for room in next's FIFO),
  // move the data, then acknowledge what it received to prev and announce what it sent to next.
  bool ring_step(ChannelOps& sm, RingChannel& channel, std::int64_t slice, int step) const;
};

// Direct (protocol/ring.h, Direct): arrival, then every slice loaded from the ranks that hold it.
class DirectAlgorithm : public ChannelAlgorithm {
 public:
  bool run(ChannelOps& sm, RingChannel& channel) const override;
};

// Add (CollectiveOp::Add): BUFFER += NEXT_BUFFER over the channel's range, slice by slice.
class AddAlgorithm : public ChannelAlgorithm {
 public:
  bool run(ChannelOps& sm, RingChannel& channel) const override;
};

// NVLS (protocol/ring.h, NVLS): direct's arrival, then every slice of its range of the owned
// chunk through the switch's multicast group: ld_reduce and a local store (reduce-scatter), a
// local load and a multicast store (all-gather), or ld_reduce and a multicast store of each sum
// as it comes back (all-reduce, one launch).
class NvlsAlgorithm : public ChannelAlgorithm {
 public:
  bool run(ChannelOps& sm, RingChannel& channel) const override;
};

// Direct NMC reduce-scatter (protocol/ring.h, Direct NMC): direct's arrival, then every slice of
// the peers' owned chunks pushed to them as near-memory updates, then completion flags.
class DirectNmcAlgorithm : public ChannelAlgorithm {
 public:
  bool run(ChannelOps& sm, RingChannel& channel) const override;
};

// Raises this channel's arrival word at every peer to `word` and waits until every peer's same
// channel has raised its word here to `word`.
bool exchange_arrival(ChannelOps& sm, RingChannel& channel, std::uint64_t word);
// Direct arrival (protocol/ring.h, Direct): announces this channel to every peer and waits until
// every peer's same channel has arrived (count 1). The direct and NVLS ops start with it.
bool direct_arrival(ChannelOps& sm, RingChannel& channel);

// The algorithm that runs `algorithm`'s channels.
const ChannelAlgorithm& channel_algorithm(CollectiveAlgorithm algorithm);

}  // namespace t3
