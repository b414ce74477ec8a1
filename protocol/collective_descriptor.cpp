// The collective descriptor and its register encoding (see collective_descriptor.h).
#include "protocol/collective_descriptor.h"

#include <tuple>

#include "protocol/hex.h"
#include "protocol/to_size.h"

namespace t3 {
namespace {

namespace d = dispatcher;

bool same_route(const RingRoute& a, const RingRoute& b) {
  return std::tie(a.stride, a.next_buffer, a.next_flags, a.prev_flags) ==
         std::tie(b.stride, b.next_buffer, b.next_flags, b.prev_flags);
}

}  // namespace

const char* to_string(CollectiveAlgorithm algorithm) {
  switch (algorithm) {
    case CollectiveAlgorithm::Ring:
      return "ring";
    case CollectiveAlgorithm::Direct:
      return "direct";
    case CollectiveAlgorithm::Add:
      return "add";
    case CollectiveAlgorithm::Nvls:
      return "nvls";
    case CollectiveAlgorithm::DirectNmc:
      return "direct nmc";
  }
  return "unknown";
}

bool direct_layout(CollectiveAlgorithm algorithm) {
  return algorithm == CollectiveAlgorithm::Direct || algorithm == CollectiveAlgorithm::Nvls ||
         algorithm == CollectiveAlgorithm::DirectNmc;
}

const std::vector<CollectiveOpInfo>& collective_ops() {
  // Indexed by COLL_OP code.
  static const std::vector<CollectiveOpInfo> ops = {
      {CollectiveOp::ReduceScatter, CollectiveAlgorithm::Ring},
      {CollectiveOp::AllGather, CollectiveAlgorithm::Ring},
      {CollectiveOp::DirectReduceScatter, CollectiveAlgorithm::Direct},
      {CollectiveOp::DirectAllGather, CollectiveAlgorithm::Direct},
      {CollectiveOp::Add, CollectiveAlgorithm::Add},
      {CollectiveOp::NvlsReduceScatter, CollectiveAlgorithm::Nvls},
      {CollectiveOp::NvlsAllGather, CollectiveAlgorithm::Nvls},
      {CollectiveOp::NvlsAllReduce, CollectiveAlgorithm::Nvls},
      {CollectiveOp::DirectNmcReduceScatter, CollectiveAlgorithm::DirectNmc},
  };
  return ops;
}

const CollectiveOpInfo& collective_op_info(std::uint32_t code) {
  const auto& ops = collective_ops();
  if (code >= ops.size()) {
    std::string known;
    for (std::size_t i = 0; i < ops.size(); ++i) {
      known += (i == 0 ? "" : ", ") + std::to_string(i) + " " + to_string(ops[i].op);
    }
    throw CollectiveDecodeError(CollectiveDecodeError::Kind::UnknownCode,
                                "COLL_OP = " + std::to_string(code) +
                                    ": no collective has this code (known: " + known + ")");
  }
  return ops[code];
}

CollectiveAlgorithm algorithm_of(CollectiveOp op) {
  return collective_op_info(static_cast<std::uint32_t>(op)).algorithm;
}

RingRoute CollectiveDescriptor::ring(int index) const {
  if (index == 0) return {stride, next_buffer, next_flags, prev_flags};
  return more_rings.at(to_size(index - 1));
}

bool CollectiveDescriptor::operator==(const CollectiveDescriptor& o) const {
  if (more_rings.size() != o.more_rings.size()) return false;
  for (std::size_t i = 0; i < more_rings.size(); ++i) {
    if (!same_route(more_rings[i], o.more_rings[i])) return false;
  }
  return std::tie(op, ranks, rank, channels, buffer, next_buffer, flags, next_flags, prev_flags,
                  bytes, element, sequence, slice_bytes, fifo_depth, poll_ns, gate, peer_stride,
                  peer_flag_stride, stride, multicast) ==
         std::tie(o.op, o.ranks, o.rank, o.channels, o.buffer, o.next_buffer, o.flags, o.next_flags,
                  o.prev_flags, o.bytes, o.element, o.sequence, o.slice_bytes, o.fifo_depth,
                  o.poll_ns, o.gate, o.peer_stride, o.peer_flag_stride, o.stride, o.multicast);
}

std::vector<RegisterWrite> to_registers(const CollectiveDescriptor& c) {
  const CollectiveAlgorithm algorithm = c.algorithm();  // refuses an op with no code
  std::vector<RegisterWrite> writes;
  const auto write = [&](std::uint64_t offset, std::uint32_t value, std::string what) {
    writes.push_back({offset, value, std::move(what)});
  };
  const auto write64 = [&](std::uint64_t offset, std::uint64_t value, const std::string& what) {
    write(offset, static_cast<std::uint32_t>(value & 0xffffffffu),
          what + " " + hex(value) + " bits 31:0");
    write(offset + 4, static_cast<std::uint32_t>(value >> 32),
          what + " " + hex(value) + " bits 63:32");
  };
  write(d::kKernel, d::kCollective, "kernel = collective");
  write(d::kCollOp, static_cast<std::uint32_t>(c.op), std::string("op = ") + to_string(c.op));
  write(d::kCollRanks, static_cast<std::uint32_t>(c.ranks), "ranks = " + std::to_string(c.ranks));
  write(d::kCollRank, static_cast<std::uint32_t>(c.rank), "rank = " + std::to_string(c.rank));
  write(d::kCollChannels, static_cast<std::uint32_t>(c.channels),
        "channels = " + std::to_string(c.channels));
  write64(d::kCollBufferLow, c.buffer, "buffer");
  write64(d::kCollNextBufferLow, c.next_buffer, "next buffer");
  write64(d::kCollFlagsLow, c.flags, "flags");
  write64(d::kCollNextFlagsLow, c.next_flags, "next flags");
  write64(d::kCollPrevFlagsLow, c.prev_flags, "prev flags");
  write64(d::kCollBytesLow, c.bytes, "bytes");
  write(d::kCollElement, element_code(c.element), std::string("element = ") + to_string(c.element));
  write(d::kCollSequence, c.sequence, "sequence = " + std::to_string(c.sequence));
  write(d::kCollSliceBytes, c.slice_bytes, "slice bytes = " + std::to_string(c.slice_bytes));
  write(d::kCollFifoDepth, c.fifo_depth, "FIFO depth = " + std::to_string(c.fifo_depth));
  write(d::kCollPollNs, c.poll_ns, "poll interval = " + std::to_string(c.poll_ns) + " ns");
  if (c.gate != 0) write64(d::kCollGateLow, c.gate, "gate");
  if (direct_layout(algorithm)) {
    write64(d::kCollPeerStrideLow, c.peer_stride, "peer stride");
    write64(d::kCollPeerFlagStrideLow, c.peer_flag_stride, "peer flag stride");
  }
  if (algorithm == CollectiveAlgorithm::Nvls) {
    write(d::kCollMulticast, c.multicast, "multicast group = " + std::to_string(c.multicast));
  }
  if (c.several_rings()) {
    write(d::kCollRings, static_cast<std::uint32_t>(c.ring_count()),
          "rings = " + std::to_string(c.ring_count()));
    write(d::kCollStride, static_cast<std::uint32_t>(c.stride),
          "ring 0 stride = " + std::to_string(c.stride));
    for (int index = 1; index < c.ring_count(); ++index) {
      const RingRoute ring = c.ring(index);
      const std::string what = "ring " + std::to_string(index);
      write(d::ring_register(index, d::kRingStride), static_cast<std::uint32_t>(ring.stride),
            what + " stride = " + std::to_string(ring.stride));
      write64(d::ring_register(index, d::kRingNextBufferLow), ring.next_buffer,
              what + " next buffer");
      write64(d::ring_register(index, d::kRingNextFlagsLow), ring.next_flags, what + " next flags");
      write64(d::ring_register(index, d::kRingPrevFlagsLow), ring.prev_flags, what + " prev flags");
    }
  }
  return writes;
}

CollectiveDescriptor from_registers(const RegisterRead& read) {
  const auto read64 = [&](std::uint64_t low) {
    return std::uint64_t{read(low)} | (std::uint64_t{read(low + 4)} << 32);
  };
  // Register values beyond INT_MAX become negative and fail the dispatcher's range checks.
  const auto signed_value = [&](std::uint64_t offset) { return static_cast<int>(read(offset)); };
  CollectiveDescriptor c;
  const CollectiveOpInfo& info = collective_op_info(read(d::kCollOp));
  c.op = info.op;
  const std::uint32_t element = read(d::kCollElement);
  if (!is_element_code(element)) {
    throw CollectiveDecodeError(CollectiveDecodeError::Kind::UnknownCode,
                                "COLL_ELEMENT = " + std::to_string(element) +
                                    ": no element type has this code (0 fp32, 1 fp16, 2 bf16)");
  }
  // One field a register: the decode mirrors the register map line by line.
  c.element = element_from_code(element);
  c.ranks = signed_value(d::kCollRanks);
  c.rank = signed_value(d::kCollRank);
  c.channels = signed_value(d::kCollChannels);
  c.buffer = read64(d::kCollBufferLow);
  c.next_buffer = read64(d::kCollNextBufferLow);
  c.flags = read64(d::kCollFlagsLow);
  c.next_flags = read64(d::kCollNextFlagsLow);
  c.prev_flags = read64(d::kCollPrevFlagsLow);
  c.bytes = read64(d::kCollBytesLow);
  c.sequence = read(d::kCollSequence);
  c.slice_bytes = read(d::kCollSliceBytes);
  c.fifo_depth = read(d::kCollFifoDepth);
  c.poll_ns = read(d::kCollPollNs);
  if (direct_layout(info.algorithm)) {
    c.peer_stride = read64(d::kCollPeerStrideLow);
    c.peer_flag_stride = read64(d::kCollPeerFlagStrideLow);
  }
  if (info.algorithm == CollectiveAlgorithm::Nvls) c.multicast = read(d::kCollMulticast);
  if (info.algorithm != CollectiveAlgorithm::Ring) return c;
  c.gate = read64(d::kCollGateLow);
  c.stride = signed_value(d::kCollStride);
  const std::uint32_t rings = read(d::kCollRings);
  if (rings < 1 || rings > d::kMaxRings) {
    throw CollectiveDecodeError(CollectiveDecodeError::Kind::OutOfRange,
                                "COLL_RINGS = " + std::to_string(rings) + ": must be in [1, " +
                                    std::to_string(d::kMaxRings) + "]");
  }
  for (int index = 1; index < static_cast<int>(rings); ++index) {
    c.more_rings.push_back({signed_value(d::ring_register(index, d::kRingStride)),
                            read64(d::ring_register(index, d::kRingNextBufferLow)),
                            read64(d::ring_register(index, d::kRingNextFlagsLow)),
                            read64(d::ring_register(index, d::kRingPrevFlagsLow))});
  }
  return c;
}

}  // namespace t3
