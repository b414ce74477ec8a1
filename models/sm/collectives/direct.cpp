// The direct collective on the SMs (protocol/ring.h, Direct).
#include "models/sm/collectives/channel.h"

namespace t3 {

bool exchange_arrival(ChannelOps& sm, RingChannel& c, std::uint64_t word) {
  const CollectiveKernel& k = c.k;
  const int n = k.ranks;
  for (int step = 1; step < n; ++step) {
    const int peer = wrap(k.rank + step, n);
    if (!sm.post_flag(arrival_flag(k.peer_flags(peer), c.channel, n, k.rank), word, c.flag_write)) {
      return false;
    }
  }
  for (int step = 1; step < n; ++step) {
    std::uint64_t seen = 0;
    const int peer = wrap(k.rank + step, n);
    if (!sm.wait_flag(arrival_flag(k.flags, c.channel, n, peer), word, seen, c.flag_read,
                      c.interval)) {
      return false;
    }
  }
  return true;
}

bool direct_arrival(ChannelOps& sm, RingChannel& c) {
  return exchange_arrival(sm, c, c.flag(1));
}

// One channel of a direct collective (protocol/ring.h, Direct): arrival, then every slice of its
// range loaded straight from the ranks that hold it.
bool DirectAlgorithm::run(ChannelOps& sm, RingChannel& c) const {
  const CollectiveKernel& k = c.k;
  const int n = k.ranks;
  if (!direct_arrival(sm, c)) return false;
  T3Extension remote_read = c.flag_read;  // Communication, Uncached
  remote_read.element = k.element;
  for (std::int64_t slice = 0; slice < c.slices; ++slice) {
    if (c.reduce_scatter) {
      const int chunk = owner_chunk(k.rank, n);
      const ElementRange part = c.slice_of(chunk, slice);
      if (part.size() == 0) continue;
      const std::uint64_t own = c.address(k.buffer, chunk, part.first);
      std::vector<DirectSource> sources{{own, &c.local_read}};
      for (int step = 1; step < n; ++step) {
        sources.push_back(
            {c.address(k.peer_buffer(wrap(k.rank + step, n)), chunk, part.first), &remote_read});
      }
      if (!sm.direct_move(c, sources, own, part.size())) return false;
      continue;
    }
    for (int step = 1; step < n; ++step) {
      const int peer = wrap(k.rank + step, n);
      const int chunk = owner_chunk(peer, n);
      const ElementRange part = c.slice_of(chunk, slice);
      if (part.size() == 0) continue;
      const std::uint64_t source = c.address(k.peer_buffer(peer), chunk, part.first);
      if (!sm.direct_move(c, {{source, &remote_read}}, c.address(k.buffer, chunk, part.first),
                          part.size())) {
        return false;
      }
    }
  }
  return !sm.faulted();
}

}  // namespace t3
