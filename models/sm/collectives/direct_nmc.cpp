// The direct NMC reduce-scatter on the SMs (protocol/ring.h, Direct NMC): every partial pushed to
// the rank that owns its chunk as near-memory updates, as T3's producer stores its partial sums.
#include "models/sm/collectives/channel.h"

namespace t3 {

namespace {

// Completion (protocol/ring.h, Direct NMC): once every update of this channel is acknowledged,
// tells every peer so with its arrival word raised to count 2, then waits until every peer's same
// channel has said the same.
bool direct_nmc_completion(ChannelOps& sm, RingChannel& c) {
  return sm.fence() && exchange_arrival(sm, c, c.flag(2));
}

}  // namespace

// One channel: arrival, then each slice of its range of every peer's owned chunk loaded locally
// and stored into that peer's buffer as near-memory adds (channel c's peers in order
// r + 1 + (c + i) mod (n - 1), i = 0 .. n - 2), then completion.
bool DirectNmcAlgorithm::run(ChannelOps& sm, RingChannel& c) const {
  const CollectiveKernel& k = c.k;
  const int n = k.ranks;
  if (!direct_arrival(sm, c)) return false;
  RingChannel push = c;  // the same channel, its stores near-memory updates at the owner
  push.local_write = c.remote_write;  // Communication, Uncached
  push.local_write.op = Op::Update;
  push.local_write.reduce = ReduceOp::Add;
  push.local_write.element = k.element;
  for (std::int64_t slice = 0; slice < c.slices; ++slice) {
    for (int i = 0; i < n - 1; ++i) {
      // Channel c starts at peer r + 1 + c mod (n - 1): at any moment the channels push to every
      // peer, over every link, not all to the same one.
      const int peer = wrap(k.rank + 1 + (c.channel + i) % (n - 1), n);
      const int chunk = owner_chunk(peer, n);
      const ElementRange part = c.slice_of(chunk, slice);
      if (part.size() == 0) continue;
      const std::uint64_t own = c.address(k.buffer, chunk, part.first);
      if (!sm.direct_move(push, {{own, &c.local_read}},
                          c.address(k.peer_buffer(peer), chunk, part.first), part.size())) {
        return false;
      }
    }
  }
  return direct_nmc_completion(sm, c) && !sm.faulted();
}

}  // namespace t3
