// The add the SMs run for a collective whose sends another engine moves (CollectiveOp::Add).
#include "models/sm/collectives/channel.h"

namespace t3 {

// One channel of an add (CollectiveOp::Add): its range of the whole buffer, slice by slice,
// BUFFER += NEXT_BUFFER.
bool AddAlgorithm::run(ChannelOps& sm, RingChannel& c) const {
  const CollectiveKernel& k = c.k;
  const ElementRange range = channel_range(c.elements, k.channels, c.channel);
  for (std::int64_t first = range.first; first < range.end; first += c.slice_elements) {
    const std::int64_t count = std::min(c.slice_elements, range.end - first);
    const auto offset = static_cast<std::uint64_t>(first * c.eb);
    if (!sm.direct_move(
            c, {{k.buffer + offset, &c.local_read}, {k.next_buffer + offset, &c.local_read}},
            k.buffer + offset, count)) {
      return false;
    }
  }
  return !sm.faulted();
}

}  // namespace t3
