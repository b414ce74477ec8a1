// The memory controller's record of one access in flight, and how it is cut into queue entries.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include <systemc>
#include <tlm>

#include "config/system_config.h"
#include "models/hbm/dram_bank.h"
#include "models/hbm/request_queue.h"
#include "tlm_interconnect/memory_events.h"
#include "tlm_interconnect/object_pool.h"
#include "tlm_interconnect/payload.h"

namespace t3 {

// One granule run of a transaction: the part that one queue serves as one entry. The simple model
// has a queue per channel; the bank model one per pseudo-channel, and an entry never leaves one
// interleave granule (so one bank index and row in each bank group).
struct SubRequest {
  std::uint64_t offset;  // in the window
  std::uint32_t bytes;
  std::uint32_t data_offset;  // into the payload's data buffer
  int channel;
  int queue;           // index of the queue that serves it
  DramLocation where;  // bank model only
};

// One b_transport in flight. Pooled: the event and the sub-request vector are reused.
struct HbmTransaction {
  sc_core::sc_event done;  // notified at the completion time of the last sub-request
  unsigned char* data = nullptr;
  Op op = Op::Read;
  TrafficClass traffic_class = TrafficClass::Compute;
  bool urgent = false;
  ElementType element = ElementType::Fp32;
  std::uint32_t tag = kNoTag;
  Origin origin;
  UnitKind unit_kind = UnitKind::TrafficGenerator;
  sc_core::sc_time arrival;
  sc_core::sc_time::value_type finish = 0;  // latest completion of its sub-requests, in ticks
  std::vector<SubRequest> subs;
  std::size_t unserved = 0;  // sub-requests not yet started

  // Takes the access's attributes, arriving at `arrival`; its sub-requests are the splitter's.
  void open(const tlm::tlm_generic_payload& payload, const T3Extension& extension,
            sc_core::sc_time arrival);
  // Sub-request `sub` as a queue entry, `sequence` its arrival order at the controller (row hit
  // and span, the bank model's, are for the queue's timing to fill in).
  QueueEntry entry(std::uint32_t sub, std::uint64_t sequence) {
    const SubRequest& s = subs[sub];
    QueueEntry entry;
    entry.request = {sequence, arrival, op, traffic_class, s.bytes, urgent};
    entry.transaction = this;
    entry.sub = sub;
    entry.write = op != Op::Read;  // an update ends in a write: it drains with the writes
    entry.traffic_class = traffic_class;
    entry.watched = watched();
    return entry;
  }
  // Tagged writes and updates are shown to the watchers (the tracker); nothing else is.
  bool watched() const { return tag != kNoTag && op != Op::Read; }
  // Sub-request s as the watchers see it, at its global address (the window starts at `base`).
  AppliedAccess applied(const SubRequest& s, std::uint64_t base) const {
    return AppliedAccess{base + s.offset, s.bytes, op,     element,
                         traffic_class,   tag,     origin, unit_kind};
  }
};

// Transactions reused once answered: a run allocates as many as were ever in flight at once.
using TransactionPool = ObjectPool<HbmTransaction>;

// Where the controller's queues take the parts of an access: cuts [offset, offset + length) of
// the window at interleave granules, for the simple model into one sub-request per run of granules
// on one channel (queue = channel), for the bank model into one per granule (queue = its
// pseudo-channel's).
class RequestSplitter {
 public:
  explicit RequestSplitter(const HbmConfig& config);
  // The bank model's address map decides (its channel digit need not be the lowest).
  int channel_of(std::uint64_t offset) const {
    if (map_) return map_->locate(offset, 1).channel;
    return static_cast<int>((offset / granule_) % channels_);
  }
  // Replaces `transaction`'s sub-requests (and its unserved count) with those of the access.
  void split(HbmTransaction& transaction, std::uint64_t offset, std::uint64_t length) const;

 private:
  std::uint64_t granule_;
  std::uint64_t channels_;
  int pseudo_channels_;
  std::optional<DramAddressMap> map_;  // bank model only
};

}  // namespace t3
