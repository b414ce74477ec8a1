// The ring collective protocol's arithmetic (see ring.h).
#include "protocol/ring.h"

#include <algorithm>

namespace t3 {

int wrap(std::int64_t n, int ranks) {
  const std::int64_t m = n % ranks;
  return static_cast<int>(m < 0 ? m + ranks : m);
}

const char* to_string(CollectiveOp op) {
  switch (op) {
    case CollectiveOp::ReduceScatter:
      return "reduce-scatter";
    case CollectiveOp::AllGather:
      return "all-gather";
    case CollectiveOp::DirectReduceScatter:
      return "direct reduce-scatter";
    case CollectiveOp::DirectAllGather:
      return "direct all-gather";
    case CollectiveOp::Add:
      return "add";
    case CollectiveOp::NvlsReduceScatter:
      return "nvls reduce-scatter";
    case CollectiveOp::NvlsAllGather:
      return "nvls all-gather";
    case CollectiveOp::NvlsAllReduce:
      return "nvls all-reduce";
    case CollectiveOp::DirectNmcReduceScatter:
      return "direct nmc reduce-scatter";
  }
  return "unknown";
}

bool is_direct(CollectiveOp op) {
  return op == CollectiveOp::DirectReduceScatter || op == CollectiveOp::DirectAllGather;
}

bool is_reduce_scatter(CollectiveOp op) {
  return op == CollectiveOp::ReduceScatter || op == CollectiveOp::DirectReduceScatter ||
         op == CollectiveOp::NvlsReduceScatter || op == CollectiveOp::DirectNmcReduceScatter;
}

bool is_nvls(CollectiveOp op) {
  return op == CollectiveOp::NvlsReduceScatter || op == CollectiveOp::NvlsAllGather ||
         op == CollectiveOp::NvlsAllReduce;
}

std::uint64_t direct_flag_area_bytes(int channels, int ranks) {
  return 8 * static_cast<std::uint64_t>(channels) * static_cast<std::uint64_t>(ranks);
}

std::uint64_t arrival_flag(std::uint64_t flags, int channel, int ranks, int peer) {
  return flags + 8 * (static_cast<std::uint64_t>(channel) * static_cast<std::uint64_t>(ranks) +
                      static_cast<std::uint64_t>(peer));
}

int next_rank(int rank, int ranks) {
  return wrap(rank + 1, ranks);
}
int prev_rank(int rank, int ranks) {
  return wrap(rank - 1, ranks);
}
int owner_chunk(int rank, int ranks) {
  return wrap(rank + 1, ranks);
}
int reduce_scatter_chunk(int rank, int step, int ranks, int stride) {
  return wrap(rank + 1 - static_cast<std::int64_t>(step + 1) * stride, ranks);
}
int all_gather_chunk(int rank, int step, int ranks, int stride) {
  return owner_chunk(wrap(rank - static_cast<std::int64_t>(step) * stride, ranks), ranks);
}

bool hamiltonian_stride(int stride, int ranks) {
  if (stride < 1 || stride >= ranks) return false;
  int a = stride, b = ranks;
  while (b != 0) {
    const int r = a % b;
    a = b;
    b = r;
  }
  return a == 1;
}

std::vector<int> mesh_ring_strides(int ranks, int most) {
  std::vector<int> strides;
  for (int s = 1; s < ranks && static_cast<int>(strides.size()) < most; ++s) {
    if (hamiltonian_stride(s, ranks)) strides.push_back(s);
  }
  return strides;
}

ElementRange split_range(std::int64_t total, int parts, int part) {
  // floor(i * total / parts) = i * (total / parts) + floor(i * (total % parts) / parts), whose
  // products stay below parts^2 and total.
  const auto point = [&](std::int64_t i) {
    return i * (total / parts) + i * (total % parts) / parts;
  };
  return {point(part), point(part + 1)};
}

ElementRange chunk_range(std::int64_t elements, int ranks, int chunk) {
  return split_range(elements, ranks, chunk);
}

ElementRange channel_range(std::int64_t chunk_elements, int channels, int channel) {
  return split_range(chunk_elements, channels, channel);
}

std::int64_t slice_count(std::int64_t range_elements, std::int64_t slice_elements) {
  if (range_elements <= 0) return 1;
  return (range_elements + slice_elements - 1) / slice_elements;
}

std::int64_t channel_slices(std::int64_t elements, int ranks, int channels, int channel,
                            std::int64_t slice_elements) {
  const std::int64_t small = elements / ranks;
  const std::int64_t large = small + (elements % ranks != 0 ? 1 : 0);
  return std::max(slice_count(channel_range(small, channels, channel).size(), slice_elements),
                  slice_count(channel_range(large, channels, channel).size(), slice_elements));
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
