// The far end of a link under rotational symmetry (sim.symmetry = rotational). Only GPU 0 is
// built; what it sends across a link towards GPU h is, shifted by -h, exactly what GPU -h sends
// to GPU 0 at the same instant. So the Rotator takes what arrives at the far end, re-addresses
// it as that shifted transaction (GPU window, chunk inside the plan's band, tracking tag and
// origin: protocol/rotation.h) and delivers it into GPU 0, which routes it on as GPU h's router
// would (to its own memory, or onwards over a link). Reads are answered the same way, through
// the same call. The payload leaves with its own address and extension restored, so initiators
// see nothing of the re-addressing.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>
#include <systemc>
#include <tlm>

#include "protocol/rotation.h"
#include "tlm_interconnect/address_map.h"
#include "tlm_interconnect/error_log.h"

namespace t3 {

class Rotator : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<Rotator> in;      // what reached the far end
  tlm_utils::simple_initiator_socket<Rotator> out;  // into GPU 0 (or the link leading there)
  // The far GPU's own send side of a GPU-to-GPU link. It stays quiet: what it would send is
  // GPU 0's traffic on another link, already simulated there.
  tlm_utils::simple_initiator_socket_optional<Rotator> quiet;

  // Stands at the far end of a link to GPU `far_gpu`: shifts every GPU index by -far_gpu.
  Rotator(sc_core::sc_module_name name, const AddressMap& map, const RotationMap& rotation,
          int far_gpu);

  std::uint64_t transactions() const { return transactions_; }
  // Accesses it cannot rotate answer TLM_ADDRESS_ERROR_RESPONSE; all are counted, the first 64
  // are described here (and reported).
  const std::vector<std::string>& address_errors() const { return address_errors_.messages(); }
  std::uint64_t address_error_count() const { return address_errors_.count(); }

 private:
  struct Saved {
    std::uint64_t address;
    bool had_extension;
    std::uint32_t tag;
    std::uint16_t origin_gpu;
  };
  void b_transport(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay);
  unsigned transport_dbg(tlm::tlm_generic_payload& payload);
  // Re-addresses `payload`; false (payload answered with an error) if it cannot be rotated.
  bool rotate(tlm::tlm_generic_payload& payload, Saved& saved);
  void restore(tlm::tlm_generic_payload& payload, const Saved& saved);

  AddressMap map_;
  RotationMap rotation_;
  int far_gpu_;
  std::uint64_t transactions_ = 0;
  ErrorLog address_errors_;
};

}  // namespace t3
