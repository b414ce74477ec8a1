#include "tlm_interconnect/mmio_bus.h"

#include "protocol/hex.h"
#include "tlm_interconnect/address_map.h"

namespace t3 {

namespace {
constexpr std::size_t kKeptAddressErrors = 64;
}

MmioBus::MmioBus(sc_core::sc_module_name name, std::uint64_t window_base, std::uint64_t window_size)
    : sc_module(name),
      in("in"),
      out("out"),
      base_(window_base),
      size_(window_size),
      address_errors_(this->name(), kKeptAddressErrors) {
  in.register_b_transport(this, &MmioBus::b_transport);
  in.register_transport_dbg(this, &MmioBus::transport_dbg);
}

int MmioBus::add_region(std::string region_name, std::uint64_t offset, std::uint64_t size) {
  for (const auto& region : regions_) {
    if (offset < region.offset + region.size && region.offset < offset + size) {
      SC_REPORT_FATAL(name(), ("MMIO region " + region_name + " overlaps " + region.name).c_str());
    }
  }
  if (offset + size > size_) {
    SC_REPORT_FATAL(name(), ("MMIO region " + region_name + " leaves the window").c_str());
  }
  regions_.push_back({std::move(region_name), offset, size});
  return static_cast<int>(regions_.size() - 1);
}

int MmioBus::find(std::uint64_t address, std::uint64_t length) const {
  if (address < base_) return -1;
  const std::uint64_t offset = address - base_;
  for (std::size_t i = 0; i < regions_.size(); ++i) {
    const auto& region = regions_[i];
    if (offset >= region.offset && offset + length <= region.offset + region.size) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

void MmioBus::b_transport(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay) {
  const std::uint64_t address = payload.get_address();
  const int port = find(address, payload.get_data_length());
  if (port < 0) {
    address_errors_.add("no register block at address " + hex(address));
    payload.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return;
  }
  payload.set_address(address - base_ - regions_[port].offset);
  out[port]->b_transport(payload, delay);
  payload.set_address(address);
}

unsigned MmioBus::transport_dbg(tlm::tlm_generic_payload& payload) {
  const std::uint64_t address = payload.get_address();
  const int port = find(address, payload.get_data_length());
  if (port < 0) return 0;
  payload.set_address(address - base_ - regions_[port].offset);
  const unsigned done = out[port]->transport_dbg(payload);
  payload.set_address(address);
  return done;
}

}  // namespace t3
