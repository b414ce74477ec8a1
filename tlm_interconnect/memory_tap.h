// A pass-through on the socket into a memory controller: every access passes unchanged, in zero
// time, and observers see it as it enters the controller. It keeps what watches the traffic
// (a trace recorder) out of the controller, and gives initiators a way in below the L2 (`inject`).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>
#include <systemc>
#include <tlm>

#include "tlm_interconnect/payload.h"

namespace t3 {

// One access as it enters the controller: when (the caller's annotated arrival), what and where.
// `data` is the payload's data (the operand of a write or update; a read's buffer, not yet
// filled), valid only during the call.
struct TappedAccess {
  sc_core::sc_time at;
  Op op = Op::Read;
  ElementType element = ElementType::Fp32;
  std::uint64_t address = 0;  // global
  std::uint64_t offset = 0;   // from the start of the tapped controller's window
  std::uint32_t bytes = 0;
  const unsigned char* data = nullptr;
};

class MemoryTap : public sc_core::sc_module {
 public:
  using Observer = std::function<void(const TappedAccess&)>;

  tlm_utils::simple_target_socket<MemoryTap> in;  // from the L2
  // From initiators below the L2 (a trace player); may stay unbound.
  tlm_utils::simple_target_socket_optional<MemoryTap> inject;
  tlm_utils::simple_initiator_socket<MemoryTap> out;  // to the memory controller

  // `gpu`: the index of the GPU whose controller (serving from `window_base` on) this taps; picks
  // up a process-wide request.
  MemoryTap(sc_core::sc_module_name name, int gpu, std::uint64_t window_base);

  void observe(Observer observer) { observers_.push_back(std::move(observer)); }

  // A request to observe GPU `gpu`'s memory traffic in the systems built while it lives: the
  // command line asks for a recording before an experiment builds its system deep inside, so the
  // request is process-wide (as the SystemC kernel the systems live in is).
  class Request {
   public:
    Request(int gpu, Observer observer);
    ~Request();
    Request(const Request&) = delete;
    Request& operator=(const Request&) = delete;
  };

 private:
  void b_transport(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay);
  unsigned transport_dbg(tlm::tlm_generic_payload& payload);

  std::uint64_t window_base_;
  std::vector<Observer> observers_;
};

}  // namespace t3
