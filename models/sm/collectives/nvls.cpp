// The NVLS collective on the SMs (protocol/ring.h, NVLS): the data moves through the switch's
// multicast group, as NCCL's NVLS algorithm does with multimem.ld_reduce and multimem.st.
#include "models/sm/collectives/channel.h"

namespace t3 {

// One channel of an NVLS collective: arrival, then each slice of its range of the owned chunk,
// reduced by the switch (ld_reduce) and stored locally (reduce-scatter), loaded locally and stored
// through the multicast group into every rank (all-gather), or reduced by the switch and stored
// through the multicast group piece by piece as each sum comes back (all-reduce, one launch).
bool NvlsAlgorithm::run(ChannelOps& sm, RingChannel& c) const {
  const CollectiveKernel& k = c.k;
  const int n = k.ranks;
  if (!direct_arrival(sm, c)) return false;
  // A multicast address names the position through the next rank's window, so it leaves the GPU
  // for the switch, which takes its offset in every member's window.
  const std::uint64_t multicast_buffer = k.peer_buffer(wrap(k.rank + 1, n));
  T3Extension ld_reduce = c.flag_read;  // Communication, Uncached
  ld_reduce.element = k.element;
  ld_reduce.multicast = static_cast<std::uint16_t>(k.multicast);
  RingChannel multicast_store = c;  // the same channel, its stores through the group
  multicast_store.local_write = c.remote_write;
  multicast_store.local_write.multicast = static_cast<std::uint16_t>(k.multicast);

  const int chunk = owner_chunk(k.rank, n);
  for (std::int64_t slice = 0; slice < c.slices; ++slice) {
    const ElementRange part = c.slice_of(chunk, slice);
    if (part.size() == 0) continue;
    const std::uint64_t own = c.address(k.buffer, chunk, part.first);
    const std::uint64_t multicast = c.address(multicast_buffer, chunk, part.first);
    bool moved = false;
    if (k.op == CollectiveOp::NvlsAllReduce) {
      // direct_move stores each piece once its sum is back while later pieces' reads run ahead.
      moved = sm.direct_move(multicast_store, {{multicast, &ld_reduce}}, multicast, part.size());
    } else if (c.reduce_scatter) {
      moved = sm.direct_move(c, {{multicast, &ld_reduce}}, own, part.size());
    } else {
      moved = sm.direct_move(multicast_store, {{own, &c.local_read}}, multicast, part.size());
    }
    if (!moved) return false;
  }
  return !sm.faulted();
}

}  // namespace t3
