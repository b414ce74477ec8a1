#include "tlm_interconnect/router.h"

#include <stdexcept>

#include "protocol/hex.h"
#include "protocol/to_size.h"

namespace t3 {

namespace {
constexpr std::size_t kKeptAddressErrors = 64;
}

// DMI: the router registers no get_direct_mem_ptr callback, so the multi-passthrough socket's
// default answers false with allow_none over the whole address range. A pointer would let an
// initiator bypass router, link and memory-controller timing, so it is never granted.
Router::Router(sc_core::sc_module_name name, const AddressMap& map, sc_core::sc_time latency)
    : sc_core::sc_module(name),
      in("in"),
      out("out"),
      map_(map),
      latency_(latency),
      routes_(static_cast<std::size_t>(map.gpus()) * 2, -1),
      address_errors_(this->name(), kKeptAddressErrors) {
  in.register_b_transport(this, &Router::b_transport);
  in.register_transport_dbg(this, &Router::transport_dbg);
}

void Router::set_route(int gpu, Window window, int port) {
  if (gpu < 0 || gpu >= map_.gpus()) {
    throw std::out_of_range(std::string(name()) + ": set_route for GPU " + std::to_string(gpu) +
                            " outside the address map (" + std::to_string(map_.gpus()) + " GPUs)");
  }
  if (port < 0) {
    throw std::out_of_range(std::string(name()) + ": set_route to negative port " +
                            std::to_string(port));
  }
  routes_[to_size(gpu) * 2 + (window == Window::Mmio ? 1 : 0)] = port;
}

std::uint64_t Router::transactions(int port) const {
  return port >= 0 && static_cast<std::size_t>(port) < transactions_.size() ? transactions_[port]
                                                                            : 0;
}

std::uint64_t Router::bytes(int port) const {
  return port >= 0 && static_cast<std::size_t>(port) < bytes_.size() ? bytes_[port] : 0;
}

int Router::route(const tlm::tlm_generic_payload& payload) {
  const auto decoded = map_.decode(payload.get_address(), payload.get_data_length());
  if (!decoded) return -1;
  const int port = routes_[to_size(decoded->gpu) * 2 + (decoded->window == Window::Mmio)];
  if (port < 0) return -1;
  if (static_cast<unsigned>(port) >= out.size()) {
    // A netlist bug, not a bad address: the route names a port nothing was bound to.
    SC_REPORT_ERROR(
        name(), ("route for " + hex(payload.get_address()) + " names port " + std::to_string(port) +
                 " but only " + std::to_string(out.size()) + " out ports are bound")
                    .c_str());
    return -1;
  }
  return port;
}

void Router::b_transport(int /*from*/, tlm::tlm_generic_payload& payload, sc_core::sc_time& delay) {
  // A switch that reduces serves multicast accesses itself; elsewhere they are routed by address
  // like any other (a memory refuses one that arrives).
  if (reducer_ != nullptr) {
    if (const auto* extension = payload.get_extension<T3Extension>();
        extension && extension->multicast != kNoMulticast) {
      delay += latency_;
      reducer_->serve(payload, delay);
      return;
    }
  }
  const int port = route(payload);
  if (port < 0) {
    address_errors_.add(std::string(name()) + ": no route for address " +
                        hex(payload.get_address()) + " (" +
                        std::to_string(payload.get_data_length()) + " bytes)");
    payload.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    delay += latency_;  // the decode that failed took the router's time too
    return;
  }
  ++transactions_[port];
  bytes_[port] += payload.get_data_length();
  delay += latency_;
  out[port]->b_transport(payload, delay);
}

void Router::send_to_gpu(int gpu, tlm::tlm_generic_payload& payload, sc_core::sc_time& delay) {
  const int port = routes_.at(to_size(gpu) * 2);
  if (port < 0 || static_cast<unsigned>(port) >= out.size()) {
    payload.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    address_errors_.add(std::string(name()) + ": no port to GPU " + std::to_string(gpu));
    return;
  }
  ++transactions_[port];
  bytes_[port] += payload.get_data_length();
  out[port]->b_transport(payload, delay);
}

void Router::end_of_elaboration() {
  transactions_.assign(out.size(), 0);
  bytes_.assign(out.size(), 0);
}

unsigned Router::transport_dbg(int /*from*/, tlm::tlm_generic_payload& payload) {
  const int port = route(payload);
  if (port < 0) {
    payload.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return 0;
  }
  return out[port]->transport_dbg(payload);
}

nlohmann::json Router::report() const {
  nlohmann::json ports = nlohmann::json::array();
  // multi_passthrough_initiator_socket::size() is not const, though it only reads.
  const std::size_t bound = const_cast<Router*>(this)->out.size();
  for (std::size_t port = 0; port < bound; ++port) {
    ports.push_back({{"port", port},
                     {"transactions", transactions(static_cast<int>(port))},
                     {"bytes", bytes(static_cast<int>(port))}});
  }
  std::uint64_t total_transactions = 0;
  std::uint64_t total_bytes = 0;
  for (auto count : transactions_) total_transactions += count;
  for (auto count : bytes_) total_bytes += count;
  return {{"name", name()},
          {"latency_ns", latency_.to_seconds() * 1e9},
          {"transactions", total_transactions},
          {"bytes", total_bytes},
          {"ports", ports},
          {"address_errors", address_errors_.count()}};
}

}  // namespace t3
