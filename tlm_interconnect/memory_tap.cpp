#include "tlm_interconnect/memory_tap.h"

#include <optional>
#include <stdexcept>
#include <utility>

namespace t3 {

namespace {

struct PendingRequest {
  int gpu;
  MemoryTap::Observer observer;
};

std::optional<PendingRequest>& pending_request() {
  static std::optional<PendingRequest> request;
  return request;
}

}  // namespace

MemoryTap::Request::Request(int gpu, Observer observer) {
  if (pending_request()) throw std::logic_error("MemoryTap: one recording request at a time");
  pending_request() = PendingRequest{gpu, std::move(observer)};
}

MemoryTap::Request::~Request() {
  pending_request().reset();
}

MemoryTap::MemoryTap(sc_core::sc_module_name name, int gpu, std::uint64_t window_base)
    : sc_core::sc_module(name), in("in"), inject("inject"), out("out"), window_base_(window_base) {
  in.register_b_transport(this, &MemoryTap::b_transport);
  in.register_transport_dbg(this, &MemoryTap::transport_dbg);
  inject.register_b_transport(this, &MemoryTap::b_transport);
  inject.register_transport_dbg(this, &MemoryTap::transport_dbg);
  if (const auto& request = pending_request(); request && request->gpu == gpu) {
    observers_.push_back(request->observer);
  }
}

void MemoryTap::b_transport(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay) {
  if (!observers_.empty()) {
    const T3Extension extension = T3Extension::get(payload);
    const TappedAccess access{sc_core::sc_time_stamp() + delay,
                              extension.op,
                              extension.element,
                              payload.get_address(),
                              payload.get_address() - window_base_,
                              payload.get_data_length(),
                              payload.get_data_ptr()};
    for (const auto& observer : observers_) observer(access);
  }
  out->b_transport(payload, delay);
}

unsigned MemoryTap::transport_dbg(tlm::tlm_generic_payload& payload) {
  return out->transport_dbg(payload);
}

}  // namespace t3
