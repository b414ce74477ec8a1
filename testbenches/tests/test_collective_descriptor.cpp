// The collective descriptor (protocol/collective_descriptor.h): every field survives to_registers
// then from_registers for every COLL_OP code, and register values that name nothing are refused
// with the register and the value in the message.
#include <catch2/catch.hpp>

#include <cstdint>
#include <map>

#include "protocol/collective_descriptor.h"

using namespace t3;
namespace reg = t3::dispatcher;
using Catch::Matchers::Contains;

namespace {

// The dispatcher's COLL_* registers after reset: the tunables' defaults, one ring of stride 1,
// every other word 0 (docs/registers.md).
class RegisterFile {
 public:
  RegisterFile() {
    words_[reg::kCollSliceBytes] = reg::kDefaultSliceBytes;
    words_[reg::kCollFifoDepth] = reg::kDefaultFifoDepth;
    words_[reg::kCollPollNs] = reg::kDefaultPollNs;
    words_[reg::kCollRings] = 1;
    words_[reg::kCollStride] = 1;
    for (int ring = 1; ring < static_cast<int>(reg::kMaxRings); ++ring) {
      words_[reg::ring_register(ring, reg::kRingStride)] = 1;
    }
  }
  void apply(const std::vector<RegisterWrite>& writes) {
    for (const RegisterWrite& w : writes) words_[w.offset] = w.value;
  }
  void set(std::uint64_t offset, std::uint32_t value) { words_[offset] = value; }
  RegisterRead reader() const {
    return [this](std::uint64_t offset) {
      const auto it = words_.find(offset);
      return it == words_.end() ? 0u : it->second;
    };
  }

 private:
  std::map<std::uint64_t, std::uint32_t> words_;
};

// A descriptor whose every field differs from its default and from every other field, as far as
// the op's algorithm carries it.
CollectiveDescriptor every_field(CollectiveOp op) {
  CollectiveDescriptor d;
  d.op = op;
  d.ranks = 8;
  d.rank = 5;
  d.channels = 12;
  d.buffer = 0x1'2345'6000ull;
  d.next_buffer = 0x2'3456'7000ull;
  d.flags = 0x3'0000'0800ull;
  d.next_flags = 0x3'0100'0800ull;
  d.prev_flags = 0x3'0200'0800ull;
  d.bytes = 0x1'0000'0002ull;  // above 32 bits: both halves matter
  d.element = ElementType::Bf16;
  d.sequence = 77;
  d.slice_bytes = 4096;
  d.fifo_depth = 3;
  d.poll_ns = 250;
  switch (d.algorithm()) {
    case CollectiveAlgorithm::Ring:
      d.gate = 0x3'0300'0008ull;
      d.stride = 3;
      d.more_rings = {{5, 0x4'0000'0000ull, 0x4'0000'0100ull, 0x4'0000'0200ull},
                      {7, 0x5'0000'0000ull, 0x5'0000'0100ull, 0x5'0000'0200ull}};
      break;
    case CollectiveAlgorithm::Direct:
      d.peer_stride = 0x10'0000'0000ull;
      d.peer_flag_stride = ~std::uint64_t{0x1000} + 1;  // negative: rank p + 1 below rank p
      break;
    case CollectiveAlgorithm::Nvls:
      d.peer_stride = 0x10'0000'0000ull;
      d.peer_flag_stride = 0x1000;
      d.multicast = 3;
      break;
    case CollectiveAlgorithm::DirectNmc:
      d.peer_stride = 0x20'0000'0000ull;
      d.peer_flag_stride = 0x2000;
      break;
    case CollectiveAlgorithm::Add:
      break;
  }
  return d;
}

}  // namespace

TEST_CASE("collective descriptor: every field of every COLL_OP code survives the registers",
          "[collective][descriptor]") {
  REQUIRE(collective_ops().size() == 9);
  for (std::size_t code = 0; code < collective_ops().size(); ++code) {
    const CollectiveOp op = collective_ops()[code].op;
    INFO("COLL_OP " << code << " (" << to_string(op) << ")");
    CHECK(static_cast<std::size_t>(op) == code);
    const CollectiveDescriptor sent = every_field(op);
    RegisterFile registers;
    registers.apply(to_registers(sent));
    const CollectiveDescriptor received = from_registers(registers.reader());
    CHECK(received == sent);
    CHECK(received.algorithm() == collective_ops()[code].algorithm);
    // Field by field, so a failure names the field.
    CHECK(received.op == sent.op);
    CHECK(received.ranks == sent.ranks);
    CHECK(received.rank == sent.rank);
    CHECK(received.channels == sent.channels);
    CHECK(received.buffer == sent.buffer);
    CHECK(received.next_buffer == sent.next_buffer);
    CHECK(received.flags == sent.flags);
    CHECK(received.next_flags == sent.next_flags);
    CHECK(received.prev_flags == sent.prev_flags);
    CHECK(received.bytes == sent.bytes);
    CHECK(received.element == sent.element);
    CHECK(received.sequence == sent.sequence);
    CHECK(received.slice_bytes == sent.slice_bytes);
    CHECK(received.fifo_depth == sent.fifo_depth);
    CHECK(received.poll_ns == sent.poll_ns);
    CHECK(received.gate == sent.gate);
    CHECK(received.peer_stride == sent.peer_stride);
    CHECK(received.peer_flag_stride == sent.peer_flag_stride);
    CHECK(received.stride == sent.stride);
    REQUIRE(received.ring_count() == sent.ring_count());
    for (int ring = 0; ring < sent.ring_count(); ++ring) {
      CHECK(received.ring(ring).stride == sent.ring(ring).stride);
      CHECK(received.ring(ring).next_buffer == sent.ring(ring).next_buffer);
      CHECK(received.ring(ring).next_flags == sent.ring(ring).next_flags);
      CHECK(received.ring(ring).prev_flags == sent.ring(ring).prev_flags);
    }
  }
}

TEST_CASE("collective descriptor: the registers are written in the order hosts issue them",
          "[collective][descriptor]") {
  const auto writes = to_registers(every_field(CollectiveOp::ReduceScatter));
  REQUIRE(writes.size() >= 3);
  CHECK(writes[0].offset == reg::kKernel);
  CHECK(writes[0].value == reg::kCollective);
  CHECK(writes[1].offset == reg::kCollOp);
  CHECK(writes[1].what == "op = reduce-scatter");
  // KERNEL and 9 one-word COLL registers, 6 two-word ones, the gate (two words), COLL_RINGS,
  // COLL_STRIDE and two ring-table entries (a stride and three two-word addresses each).
  CHECK(writes.size() == 10 + 2 * 6 + 2 + 2 + 2 * 7);
  // One ring of stride 1 without a gate writes no ring register: the reset values hold.
  CollectiveDescriptor plain = every_field(CollectiveOp::AllGather);
  plain.gate = 0;
  plain.stride = 1;
  plain.more_rings.clear();
  for (const RegisterWrite& w : to_registers(plain)) {
    CHECK(w.offset != reg::kCollRings);
    CHECK(w.offset != reg::kCollStride);
    CHECK(w.offset != reg::kCollGateLow);
  }
}

TEST_CASE("collective descriptor: an unknown COLL_OP or COLL_ELEMENT code is refused by name",
          "[collective][descriptor]") {
  RegisterFile registers;
  registers.apply(to_registers(every_field(CollectiveOp::ReduceScatter)));
  registers.set(reg::kCollOp, 9);
  CHECK_THROWS_WITH(from_registers(registers.reader()),
                    Contains("COLL_OP = 9: no collective has this code") && Contains("4 add") &&
                        Contains("7 nvls all-reduce") &&
                        Contains("8 direct nmc reduce-scatter"));
  try {
    from_registers(registers.reader());
    FAIL("COLL_OP 9 was accepted");
  } catch (const CollectiveDecodeError& error) {
    CHECK(error.kind() == CollectiveDecodeError::Kind::UnknownCode);
  }
  registers.set(reg::kCollOp, 0xffffffffu);
  CHECK_THROWS_WITH(from_registers(registers.reader()), Contains("COLL_OP = 4294967295"));
  registers.set(reg::kCollOp, 1);
  registers.set(reg::kCollElement, 3);
  CHECK_THROWS_WITH(from_registers(registers.reader()),
                    Contains("COLL_ELEMENT = 3: no element type has this code"));
  // A descriptor whose op has no code cannot be written either.
  CollectiveDescriptor unknown;
  unknown.op = static_cast<CollectiveOp>(9);
  CHECK_THROWS_AS(to_registers(unknown), CollectiveDecodeError);
}

TEST_CASE("collective descriptor: COLL_RINGS out of range is refused for ring ops only",
          "[collective][descriptor]") {
  for (std::uint32_t rings : {0u, reg::kMaxRings + 1}) {
    RegisterFile registers;
    registers.apply(to_registers(every_field(CollectiveOp::AllGather)));
    registers.set(reg::kCollRings, rings);
    try {
      from_registers(registers.reader());
      FAIL("COLL_RINGS " << rings << " was accepted");
    } catch (const CollectiveDecodeError& error) {
      CHECK(error.kind() == CollectiveDecodeError::Kind::OutOfRange);
      CHECK_THAT(error.what(), Contains("COLL_RINGS = " + std::to_string(rings)));
    }
    // A direct op ignores the ring registers, and the gate (what the dispatcher reads, only).
    registers.set(reg::kCollOp, static_cast<std::uint32_t>(CollectiveOp::DirectAllGather));
    const CollectiveDescriptor direct = from_registers(registers.reader());
    CHECK(direct.ring_count() == 1);
    CHECK(direct.gate == 0);
    CHECK(direct.stride == 1);
  }
}
