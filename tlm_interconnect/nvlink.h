// NVLink-style point-to-point link: full duplex, per-direction line rate, latency, packetisation
// (payload per packet + header bytes) and credit-based flow control.
#pragma once

#include <cstdint>
#include <vector>

#include <nlohmann/json.hpp>
#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "config/system_config.h"

namespace t3 {

struct LinkDirectionStats {
  std::uint64_t transactions = 0;  // requests that crossed in this direction
  std::uint64_t packets = 0;
  std::uint64_t payload_bytes = 0;  // data carried (write data, read data returned)
  std::uint64_t wire_bytes = 0;     // payload plus headers
  double busy_ns = 0;               // serialiser occupancy
  std::uint64_t max_packets_in_flight = 0;  // sent and credit not yet returned
};

// One packet on the wire, for tests and traces.
struct PacketRecord {
  sc_core::sc_time start;    // first bit leaves
  sc_core::sc_time arrival;  // last bit reaches the far end
  std::uint32_t wire_bytes;
};

class NvLink : public sc_core::sc_module {
 public:
  // Side A's router sends into from_a and receives from to_a; likewise side B.
  tlm_utils::simple_target_socket<NvLink> from_a;
  tlm_utils::simple_target_socket<NvLink> from_b;
  tlm_utils::simple_initiator_socket<NvLink> to_a;
  tlm_utils::simple_initiator_socket<NvLink> to_b;

  NvLink(sc_core::sc_module_name name, const LinkConfig& config);

  // Direction 0 is A -> B, direction 1 is B -> A.
  const LinkDirectionStats& stats(int direction) const;
  void record_packets(bool on);
  const std::vector<PacketRecord>& packets(int direction) const;
  nlohmann::json report() const;

 private:
  void b_transport_from_a(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay);
  void b_transport_from_b(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay);
  unsigned dbg_from_a(tlm::tlm_generic_payload& payload);
  unsigned dbg_from_b(tlm::tlm_generic_payload& payload);
  // Implementation state is the helper's to define.
};

}  // namespace t3
