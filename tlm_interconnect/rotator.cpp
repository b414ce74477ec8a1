#include "tlm_interconnect/rotator.h"

#include "protocol/hex.h"
#include "tlm_interconnect/payload.h"

namespace t3 {

namespace {
constexpr std::size_t kKeptAddressErrors = 64;
}

Rotator::Rotator(sc_core::sc_module_name name, const AddressMap& map, const RotationMap& rotation,
                 int far_gpu)
    : sc_core::sc_module(name),
      in("in"),
      out("out"),
      quiet("quiet"),
      map_(map),
      rotation_(rotation),
      far_gpu_(far_gpu),
      address_errors_(this->name(), kKeptAddressErrors) {
  in.register_b_transport(this, &Rotator::b_transport);
  in.register_transport_dbg(this, &Rotator::transport_dbg);
}

bool Rotator::rotate(tlm::tlm_generic_payload& payload, Saved& saved) {
  saved.address = payload.get_address();
  const std::uint64_t bytes = payload.get_data_length();
  const auto decoded = map_.decode(saved.address, bytes);
  if (!decoded) {
    address_errors_.add("no GPU owns " + hex(saved.address));
    payload.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return false;
  }
  const int shift = -far_gpu_;
  const int gpu = wrap(decoded->gpu + shift, map_.gpus());
  std::uint64_t offset = decoded->offset;
  if (decoded->window == Window::Hbm) {
    offset = rotate_hbm_offset(rotation_, offset, shift);
    const bool split = bytes > 0 && rotate_hbm_offset(rotation_, decoded->offset + bytes - 1,
                                                      shift) != offset + bytes - 1;
    if (split) {
      address_errors_.add("access at " + hex(saved.address) + " of " + std::to_string(bytes) +
                          " bytes crosses a chunk of the rotation band");
      payload.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
      return false;
    }
  }
  payload.set_address((decoded->window == Window::Hbm ? map_.hbm_base(gpu) : map_.mmio_base(gpu)) +
                      offset);
  T3Extension* extension = nullptr;
  payload.get_extension(extension);
  saved.had_extension = extension != nullptr;
  if (extension) {
    saved.tag = extension->tag;
    saved.origin_gpu = extension->origin.gpu;
    extension->tag = rotate_tag(rotation_, extension->tag, shift);
    extension->origin.gpu =
        static_cast<std::uint16_t>(wrap(extension->origin.gpu + shift, map_.gpus()));
  }
  return true;
}

void Rotator::restore(tlm::tlm_generic_payload& payload, const Saved& saved) {
  payload.set_address(saved.address);
  if (!saved.had_extension) return;
  T3Extension* extension = nullptr;
  payload.get_extension(extension);
  extension->tag = saved.tag;
  extension->origin.gpu = saved.origin_gpu;
}

void Rotator::b_transport(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay) {
  Saved saved{};
  if (!rotate(payload, saved)) return;
  ++transactions_;
  out->b_transport(payload, delay);
  restore(payload, saved);
}

unsigned Rotator::transport_dbg(tlm::tlm_generic_payload& payload) {
  Saved saved{};
  if (!rotate(payload, saved)) return 0;
  const unsigned bytes = out->transport_dbg(payload);
  restore(payload, saved);
  return bytes;
}

}  // namespace t3
