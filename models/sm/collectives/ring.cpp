// The ring collective on the SMs (protocol/ring.h has the schedule and the flag protocol).
#include "models/sm/collectives/channel.h"

namespace t3 {

// The channel runs every ring step on one slice of its range before it moves to the next slice.
bool RingAlgorithm::run(ChannelOps& sm, RingChannel& c) const {
  const CollectiveKernel& k = c.k;
  for (std::int64_t slice = 0; slice < c.slices; ++slice) {
    // Step n - 1 only receives: the reduce-scatter finishes its owned chunk, the all-gather
    // takes in the last chunk.
    for (int s = 0; s < k.ranks; ++s) {
      if (!ring_step(sm, c, slice, s)) return false;
    }
  }
  // Done when next has consumed every send: nothing of this launch is left in flight.
  const auto sends = static_cast<std::uint32_t>(c.slices * (k.ranks - 1));
  return sm.wait_flag(c.ack, c.flag(sends), c.seen_ack, c.flag_read, c.interval);
}

// Ring step `step` of slice `slice`: wait for what it receives (and for room in next's FIFO),
// move the data, then acknowledge what it received to prev and announce what it sent to next.
bool RingAlgorithm::ring_step(ChannelOps& sm, RingChannel& c, std::int64_t slice, int step) const {
  const CollectiveKernel& k = c.k;
  const int n = k.ranks;
  const auto g = static_cast<std::uint32_t>(slice * (n - 1) + step);  // this step's send index
  const bool last = step == n - 1;
  const bool receives = step > 0;
  // A gated reduce-scatter's local data for this step exists once the gate says so.
  if (k.gate != 0 && k.op == CollectiveOp::ReduceScatter &&
      !sm.wait_flag(k.gate, c.flag(static_cast<std::uint32_t>(step) + 1), c.seen_gate, c.flag_read,
                    c.interval)) {
    return false;
  }
  // prev's send g - 1 (the slice this step needs) is complete once READY reaches g.
  if (receives && !sm.wait_flag(c.ready, c.flag(g), c.seen_ready, c.flag_read, c.interval)) {
    return false;
  }
  bool moves = true;
  RingMove move;
  if (c.reduce_scatter) {
    const int chunk = reduce_scatter_chunk(k.rank, step, n, c.stride);
    const ElementRange part = c.slice_of(chunk, slice);
    move.source = c.address(k.buffer, chunk, part.first);
    move.count = part.size();
    move.reduce = receives;
    if (receives) move.received = c.fifo(k.receive(), g - 1);
    if (last) {
      move.destination = move.source;  // the owned chunk, reduced
      move.store = &c.local_write;
    } else {
      move.destination = c.fifo(c.next_receive, g);
      move.store = &c.remote_write;
      // The entry's previous use (send g - depth) must have been consumed by next.
      if (g >= k.fifo_depth &&
          !sm.wait_flag(c.ack, c.flag(g + 1 - k.fifo_depth), c.seen_ack, c.flag_read, c.interval)) {
        return false;
      }
    }
  } else if (!last) {
    const int chunk = all_gather_chunk(k.rank, step, n, c.stride);
    const ElementRange part = c.slice_of(chunk, slice);
    move.source = c.address(k.buffer, chunk, part.first);
    move.destination = c.address(c.next_buffer, chunk, part.first);
    move.count = part.size();
    move.store = &c.remote_write;
  } else {
    moves = false;  // the all-gather's last chunk arrived in place: nothing to move
  }
  // The received slice's ACK goes out as soon as its last piece has been read (inside
  // move_pieces); a step that reads nothing of it acknowledges it here.
  const bool acked_by_move = moves && move.count > 0;
  if (moves && !sm.move_pieces(c, move, receives ? g : 0)) return false;
  if (receives && !acked_by_move && !sm.post_flag(c.prev_ack, c.flag(g), c.flag_write)) {
    return false;
  }
  // The data of send g is acknowledged (the fence waits for every posted store): tell next.
  return last || (sm.fence() && sm.post_flag(c.next_ready, c.flag(g + 1), c.flag_write));
}

}  // namespace t3
