// Address router: sends each transaction out of the port that leads to its owner. The same block
// is the in-GPU router (ports to memory controller, MMIO and links) and the switch (a port per
// GPU).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <tlm_utils/multi_passthrough_initiator_socket.h>
#include <tlm_utils/multi_passthrough_target_socket.h>
#include <nlohmann/json.hpp>
#include <systemc>
#include <tlm>

#include "tlm_interconnect/address_map.h"
#include "tlm_interconnect/error_log.h"
#include "tlm_interconnect/multicast.h"

namespace t3 {

class Router : public sc_core::sc_module {
 public:
  tlm_utils::multi_passthrough_target_socket<Router> in;      // any number of initiators
  tlm_utils::multi_passthrough_initiator_socket<Router> out;  // port numbers in bind order

  Router(sc_core::sc_module_name name, const AddressMap& map, sc_core::sc_time latency);

  // Traffic for `window` of GPU `gpu` leaves through out[port].
  void set_route(int gpu, Window window, int port);
  // The switch's adder and multicast groups (topology.switch_reductions): multicast accesses go to
  // it, and it sends each member access out of the port routed to the member's HBM. Without one a
  // multicast access is routed by its address like any other (and refused by the memory).
  void set_reducer(SwitchReducer* reducer) { reducer_ = reducer; }
  // Sends `payload` out of the port routed to GPU `gpu`'s HBM window (the reducer's member access).
  void send_to_gpu(int gpu, tlm::tlm_generic_payload& payload, sc_core::sc_time& delay);

  // Unroutable accesses answer TLM_ADDRESS_ERROR_RESPONSE; all are counted, the first 64 are
  // described here (and reported).
  const std::vector<std::string>& address_errors() const { return address_errors_.messages(); }
  std::uint64_t address_error_count() const { return address_errors_.count(); }
  std::uint64_t transactions(int port) const;
  std::uint64_t bytes(int port) const;
  nlohmann::json report() const;

 private:
  void b_transport(int from, tlm::tlm_generic_payload& payload, sc_core::sc_time& delay);
  unsigned transport_dbg(int from, tlm::tlm_generic_payload& payload);
  int route(const tlm::tlm_generic_payload& payload);
  void end_of_elaboration() override;

  AddressMap map_;
  sc_core::sc_time latency_;
  std::vector<int> routes_;  // [gpu * 2 + window] -> port, -1 if none
  std::vector<std::uint64_t> transactions_;
  std::vector<std::uint64_t> bytes_;
  SwitchReducer* reducer_ = nullptr;
  ErrorLog address_errors_;  // every unroutable access counted, the first 64 kept and reported
};

}  // namespace t3
