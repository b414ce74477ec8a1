// The ring collective protocol's arithmetic (see ring.h).
#include "protocol/ring.h"

namespace t3 {
namespace {

int mod(int value, int n) {
  const int m = value % n;
  return m < 0 ? m + n : m;
}

}  // namespace

const char* to_string(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::ReduceScatter:
      return "reduce-scatter";
    case CollectiveOp::AllGather:
      return "all-gather";
  }
  return "unknown";
}

int next_rank(int rank, int ranks) {
  return mod(rank + 1, ranks);
}
int prev_rank(int rank, int ranks) {
  return mod(rank - 1, ranks);
}
int owner_chunk(int rank, int ranks) {
  return mod(rank + 1, ranks);
}
int reduce_scatter_chunk(int rank, int step, int ranks) {
  return mod(rank - step, ranks);
}
int all_gather_chunk(int rank, int step, int ranks) {
  return owner_chunk(mod(rank - step, ranks), ranks);
}

ElementRange channel_range(std::int64_t chunk_elements, int channels, int channel) {
  return {chunk_elements * channel / channels, chunk_elements * (channel + 1) / channels};
}

std::int64_t slice_count(std::int64_t range_elements, std::int64_t slice_elements) {
  if (range_elements <= 0) return 1;
  return (range_elements + slice_elements - 1) / slice_elements;
}

std::uint64_t flag_area_bytes(int channels) {
  return kFlagStride * static_cast<std::uint64_t>(channels);
}
std::uint64_t ready_flag(std::uint64_t flags, int channel) {
  return flags + kFlagStride * static_cast<std::uint64_t>(channel) + kReadyFlag;
}
std::uint64_t ack_flag(std::uint64_t flags, int channel) {
  return flags + kFlagStride * static_cast<std::uint64_t>(channel) + kAckFlag;
}
std::uint64_t flag_value(std::uint32_t sequence, std::uint32_t count) {
  return (static_cast<std::uint64_t>(sequence) << 32) | count;
}

std::uint64_t receive_area(std::uint64_t buffer, std::uint64_t bytes) {
  return (buffer + bytes + kFifoAlignment - 1) / kFifoAlignment * kFifoAlignment;
}
std::uint64_t receive_area_bytes(int channels, std::uint32_t fifo_depth,
                                 std::uint32_t slice_bytes) {
  return static_cast<std::uint64_t>(channels) * fifo_depth * slice_bytes;
}
std::uint64_t fifo_entry(std::uint64_t receive, int channel, std::uint32_t fifo_depth,
                         std::uint32_t slice_bytes, std::uint32_t entry) {
  return receive + (static_cast<std::uint64_t>(channel) * fifo_depth + entry) *
                       static_cast<std::uint64_t>(slice_bytes);
}

}  // namespace t3
