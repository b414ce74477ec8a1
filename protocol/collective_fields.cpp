#include "protocol/collective_fields.h"

#include "protocol/dispatcher_registers.h"

namespace t3 {

std::string collective_field_problem(int ranks, int channels, std::uint64_t bytes,
                                     ElementType element, std::uint32_t slice_bytes,
                                     std::uint32_t fifo_depth, std::uint32_t poll_ns) {
  if (ranks < 2 || ranks > static_cast<int>(dispatcher::kMaxRanks)) {
    return "ranks = " + std::to_string(ranks) + " must be in [2, " +
           std::to_string(dispatcher::kMaxRanks) + "]";
  }
  if (channels < 1 || channels > static_cast<int>(dispatcher::kMaxChannels)) {
    return "channels = " + std::to_string(channels) + " must be in [1, " +
           std::to_string(dispatcher::kMaxChannels) + "]";
  }
  const std::uint64_t element_bytes = bytes_of(element, 1);
  if (bytes == 0 || bytes % element_bytes != 0) {
    return "bytes = " + std::to_string(bytes) + " must be a positive multiple of the " +
           std::to_string(element_bytes) + "-byte " + to_string(element) + " element";
  }
  if (slice_bytes == 0 || slice_bytes % 4 != 0) {
    return "slice_bytes = " + std::to_string(slice_bytes) + " must be a positive multiple of 4";
  }
  if (fifo_depth == 0) return "fifo_depth must be at least 1";
  if (poll_ns == 0) return "poll_ns must be at least 1";
  return "";
}

}  // namespace t3
