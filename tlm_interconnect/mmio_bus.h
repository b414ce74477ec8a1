// Decodes one GPU's MMIO window into the register blocks mapped in it. Each block sees
// addresses relative to its own region.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <tlm_utils/multi_passthrough_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>
#include <systemc>
#include <tlm>

#include "tlm_interconnect/error_log.h"

namespace t3 {

class MmioBus : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<MmioBus> in;
  tlm_utils::multi_passthrough_initiator_socket<MmioBus> out;  // one port per region, in order

  MmioBus(sc_core::sc_module_name name, std::uint64_t window_base, std::uint64_t window_size);

  // Maps [offset, offset + size) of the window to the next port of `out`; returns the port.
  int add_region(std::string name, std::uint64_t offset, std::uint64_t size);

  struct Region {
    std::string name;
    std::uint64_t offset;
    std::uint64_t size;
  };
  const std::vector<Region>& regions() const { return regions_; }

  // Accesses that hit no region answer TLM_ADDRESS_ERROR_RESPONSE; all are counted, the first 64
  // are described here (and reported).
  const std::vector<std::string>& address_errors() const { return address_errors_.messages(); }
  std::uint64_t address_error_count() const { return address_errors_.count(); }

 private:
  void b_transport(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay);
  unsigned transport_dbg(tlm::tlm_generic_payload& payload);
  int find(std::uint64_t address, std::uint64_t length) const;
  std::uint64_t base_;
  std::uint64_t size_;
  std::vector<Region> regions_;
  ErrorLog address_errors_;
};

}  // namespace t3
