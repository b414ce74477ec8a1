#include "tlm_interconnect/register_block.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "tlm_interconnect/payload.h"

namespace t3 {

RegisterBlock::RegisterBlock(sc_core::sc_module_name name, sc_core::sc_time latency)
    : sc_module(name), socket("socket"), latency_(latency) {
  socket.register_b_transport(this, &RegisterBlock::b_transport);
  socket.register_transport_dbg(this, &RegisterBlock::transport_dbg);
}

void RegisterBlock::add_register(std::uint64_t offset, std::string name, std::string doc,
                                 Reader read, Writer write) {
  sc_assert(offset % 4 == 0 && registers_.count(offset) == 0);
  const bool writable = static_cast<bool>(write);
  registers_[offset] =
      Register{{std::move(name), std::move(doc), writable}, std::move(read), std::move(write)};
}

void RegisterBlock::add_ro(std::uint64_t offset, const std::string& name, const std::string& doc,
                           const std::uint32_t& field) {
  add_register(offset, name, doc, [&field] { return field; });
}

void RegisterBlock::add_rw(std::uint64_t offset, const std::string& name, const std::string& doc,
                           std::uint32_t& field) {
  add_register(
      offset, name, doc, [&field] { return field; }, [&field](std::uint32_t v) { field = v; });
}

void RegisterBlock::add_rw64(std::uint64_t offset, const std::string& name, const std::string& doc,
                             std::uint64_t& field) {
  add_register(
      offset, name + "_LO", doc + ", bits 31:0",
      [&field] { return static_cast<std::uint32_t>(field); },
      [&field](std::uint32_t v) { field = (field & 0xffffffff00000000ull) | v; });
  add_register(
      offset + 4, name + "_HI", doc + ", bits 63:32",
      [&field] { return static_cast<std::uint32_t>(field >> 32); },
      [&field](std::uint32_t v) {
        field = (field & 0xffffffffull) | (static_cast<std::uint64_t>(v) << 32);
      });
}

std::uint32_t RegisterBlock::saturate(std::uint64_t value) {
  return static_cast<std::uint32_t>(
      std::min<std::uint64_t>(value, std::numeric_limits<std::uint32_t>::max()));
}

std::map<std::uint64_t, RegisterInfo> RegisterBlock::register_map() const {
  std::map<std::uint64_t, RegisterInfo> map;
  for (const auto& [offset, reg] : registers_) map[offset] = reg.info;
  return map;
}

tlm::tlm_response_status RegisterBlock::access(tlm::tlm_generic_payload& payload) {
  const std::uint64_t offset = payload.get_address();
  const unsigned length = payload.get_data_length();
  if (payload.get_byte_enable_ptr() || payload.get_streaming_width() < length) {
    return tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE;
  }
  if ((length != 4 && length != 8) || offset % 4 != 0) return tlm::TLM_BURST_ERROR_RESPONSE;
  if (T3Extension::get(payload).op == Op::Update || !T3Extension::check(payload).empty()) {
    return tlm::TLM_COMMAND_ERROR_RESPONSE;
  }
  // Check every word first so a rejected access has no side effect.
  for (unsigned word = 0; word < length / 4; ++word) {
    const auto found = registers_.find(offset + 4 * word);
    if (found == registers_.end()) return tlm::TLM_ADDRESS_ERROR_RESPONSE;
    if (payload.is_write() && !found->second.write) return tlm::TLM_COMMAND_ERROR_RESPONSE;
  }
  for (unsigned word = 0; word < length / 4; ++word) {
    Register& reg = registers_.at(offset + 4 * word);
    unsigned char* data = payload.get_data_ptr() + 4 * word;
    std::uint32_t value;
    if (payload.is_write()) {
      std::memcpy(&value, data, 4);
      reg.write(value);
    } else {
      value = reg.read();
      std::memcpy(data, &value, 4);
    }
  }
  return tlm::TLM_OK_RESPONSE;
}

void RegisterBlock::b_transport(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay) {
  delay += latency_;
  payload.set_response_status(access(payload));
}

unsigned RegisterBlock::transport_dbg(tlm::tlm_generic_payload& payload) {
  return access(payload) == tlm::TLM_OK_RESPONSE ? payload.get_data_length() : 0;
}

}  // namespace t3
