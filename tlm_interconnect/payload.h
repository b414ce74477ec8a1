// The t3 payload protocol: tlm_generic_payload plus one T3Extension, from a pooled memory manager.
// Rules are in docs/protocol.md.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <tlm>

#include "protocol/element_type.h"

namespace t3 {

// What the initiator asks of the target. Update is an atomic read-modify-write done at the
// target (near-memory compute): the payload data is the operand, nothing is returned.
enum class Op : std::uint8_t { Read, Write, Update };
enum class ReduceOp : std::uint8_t { Add };
enum class TrafficClass : std::uint8_t { Compute, Communication };
enum class CacheHint : std::uint8_t { Cached, Uncached };

inline constexpr int kTrafficClasses = 2;
inline constexpr int kOps = 3;

// The virtual channel a packet crosses a link in (docs/protocol.md, "Virtual channels"): each has
// its own receive-buffer credits, and the link's serialiser serves responses first. Requests and
// their data use Request; acknowledgements and read data always use Response, and so do flag
// stores (a request marked Response): a control word must not wait behind bulk data.
enum class LinkChannel : std::uint8_t { Request, Response };
inline constexpr int kLinkChannels = 2;

const char* to_string(Op op);
const char* to_string(TrafficClass traffic_class);
const char* to_string(CacheHint hint);
const char* to_string(LinkChannel channel);

// Which block issued a transaction: GPU index and a unit number within it (SM, DMA engine, ...).
struct Origin {
  std::uint16_t gpu = 0;
  std::uint16_t unit = 0;
};

// Units that issue transactions; the unit number in Origin is relative to the kind.
enum class UnitKind : std::uint8_t { Host, Sm, Dma, TrafficGenerator };

inline constexpr std::uint32_t kNoTag = 0xffffffffu;
// The multicast group of an access that is not a multicast one.
inline constexpr std::uint16_t kNoMulticast = 0;

class T3Extension : public tlm::tlm_extension<T3Extension> {
 public:
  Op op = Op::Read;
  ReduceOp reduce = ReduceOp::Add;
  ElementType element = ElementType::Fp32;
  TrafficClass traffic_class = TrafficClass::Compute;
  Origin origin;
  UnitKind unit_kind = UnitKind::TrafficGenerator;
  std::uint32_t tag = kNoTag;  // tracking tag (WG/WF id) the tracker counts; kNoTag if untracked
  CacheHint cache_hint = CacheHint::Cached;
  // Communication its issuer is waiting on: a DMA engine sets it while its read-ahead buffer is
  // filled past dma.urgent_fill, i.e. while the path (memory, link) and not the producer paces
  // it. MCA does not hold urgent communication back (hbm.mca.release_urgent).
  bool urgent = false;
  // The virtual channel the request crosses links in (its response always takes Response).
  LinkChannel link_channel = LinkChannel::Request;
  // A multicast access (docs/protocol.md, "Switch reductions"), served by a switch that reduces
  // (topology.switch_reductions): a Read is an ld_reduce, the `reduce` of `element`s over the
  // same window offset in every member GPU of the group, answered once; a Write is a multicast
  // store, written at that offset in every member. kNoMulticast: an ordinary access.
  std::uint16_t multicast = kNoMulticast;

  tlm::tlm_extension_base* clone() const override;
  void copy_from(const tlm::tlm_extension_base& other) override;

  // The extension of a payload; a payload without one reads as a plain TLM read or write of
  // compute traffic, so a virtual platform's own initiators can talk to our targets unchanged.
  static T3Extension get(const tlm::tlm_generic_payload& payload);
  // Attaches (or overwrites) the extension and sets the TLM command that matches the op.
  static void set(tlm::tlm_generic_payload& payload, const T3Extension& extension);
  // Checks that command and op agree (read <-> Read, write <-> Write/Update); an empty string
  // means consistent, otherwise the reason.
  static std::string check(const tlm::tlm_generic_payload& payload);
};

// Why a memory-like target (memory controller, L2) must refuse a payload before serving it:
// command and op disagree, byte enables are set, or the streaming width is not the length.
struct PayloadError {
  tlm::tlm_response_status status;
  std::string reason;
};
std::optional<PayloadError> memory_payload_error(const tlm::tlm_generic_payload& payload);

// Pooled memory manager: payloads and their data buffers are reused, never freed mid-run.
class PayloadPool : public tlm::tlm_mm_interface {
 public:
  PayloadPool();
  PayloadPool(const PayloadPool&) = delete;
  PayloadPool& operator=(const PayloadPool&) = delete;
  ~PayloadPool() override;

  // A payload with reference count 1 and a data buffer of `data_bytes` (contents unspecified,
  // byte enables off, response TLM_INCOMPLETE_RESPONSE). Release with payload->release().
  tlm::tlm_generic_payload* allocate(std::size_t data_bytes);
  void free(tlm::tlm_generic_payload* payload) override;

  std::size_t allocated() const { return all_.size(); }
  std::size_t in_use() const { return all_.size() - free_.size(); }

 private:
  struct Slot;
  std::vector<std::unique_ptr<Slot>> all_;
  std::vector<Slot*> free_;
};

// Convenience for initiators: fills a pooled payload for one access.
tlm::tlm_generic_payload* make_payload(PayloadPool& pool, std::uint64_t address, std::size_t bytes,
                                       const T3Extension& extension);

}  // namespace t3
