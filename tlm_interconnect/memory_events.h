// What flows from a memory controller to the blocks that watch it (the tracker), and from the
// tracker to the DMA engine. Standard SystemC interfaces, bound through sc_port/sc_export, so no
// block reaches into another.
#pragma once

#include <cstdint>

#include <systemc>

#include "tlm_interconnect/payload.h"

namespace t3 {

// One write or update as the memory controller applies it (one channel's part of a transaction).
struct AppliedAccess {
  std::uint64_t address;  // global address of the first byte
  std::uint32_t bytes;
  Op op;
  ElementType element;
  TrafficClass traffic_class;
  std::uint32_t tag;  // kNoTag if untracked
  Origin origin;
  UnitKind unit_kind;
};

// Implemented by the tracker; the memory controller holds a port to it.
struct MemoryWatchIf : virtual sc_core::sc_interface {
  // Asked just before a tagged write/update is applied. False: it cannot be counted now (the
  // table is full); the controller keeps the request queued and asks again after space_event().
  virtual bool admit(const AppliedAccess& access) = 0;
  // The access's data has been applied (called for every tagged write/update, once).
  virtual void applied(const AppliedAccess& access) = 0;
  virtual const sc_core::sc_event& space_event() const = 0;
};

// A transfer the DMA engine is asked to make.
struct DmaRequest {
  std::uint64_t source;       // global address, read with traffic class Communication
  std::uint64_t destination;  // global address, any GPU
  std::uint64_t bytes;
  Op op;  // Write or Update
  ElementType element;
  std::uint32_t tag;         // carried by the writes/updates it sends (kNoTag: untracked)
  std::uint32_t descriptor;  // the descriptor it came from, for statistics and traces
};

// Implemented by the DMA engine; the tracker holds a port to it.
struct DmaTriggerIf : virtual sc_core::sc_interface {
  virtual void trigger(const DmaRequest& request) = 0;
};

}  // namespace t3
