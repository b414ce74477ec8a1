// A block of 32-bit memory-mapped registers behind a TLM target socket. Devices (device info,
// and later the dispatcher, tracker and DMA engine) derive from it and declare their map.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include <tlm_utils/simple_target_socket.h>
#include <systemc>
#include <tlm>

namespace t3 {

struct RegisterInfo {
  std::string name;
  std::string doc;
  bool writable;
};

class RegisterBlock : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<RegisterBlock> socket;

  RegisterBlock(sc_core::sc_module_name name, sc_core::sc_time latency);

  // The register map, by offset, for documentation and tests.
  std::map<std::uint64_t, RegisterInfo> register_map() const;

 protected:
  using Reader = std::function<std::uint32_t()>;
  using Writer = std::function<void(std::uint32_t)>;
  // A register at a 4-byte aligned offset; a null writer makes it read-only.
  void add_register(std::uint64_t offset, std::string name, std::string doc, Reader read,
                    Writer write = nullptr);
  // Registers that expose a field of the block as it is: read-only, read/write, and a 64-bit
  // field as NAME_LO (bits 31:0) at `offset` and NAME_HI (bits 63:32) at `offset + 4`.
  void add_ro(std::uint64_t offset, const std::string& name, const std::string& doc,
              const std::uint32_t& field);
  void add_rw(std::uint64_t offset, const std::string& name, const std::string& doc,
              std::uint32_t& field);
  void add_rw64(std::uint64_t offset, const std::string& name, const std::string& doc,
                std::uint64_t& field);
  // A counter wider than a register reads as its value, capped at the register's maximum.
  static std::uint32_t saturate(std::uint64_t value);

 private:
  struct Register {
    RegisterInfo info;
    Reader read;
    Writer write;
  };
  // Accesses are 4 or 8 bytes (two consecutive registers), aligned to 4, no byte enables.
  void b_transport(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay);
  unsigned transport_dbg(tlm::tlm_generic_payload& payload);
  tlm::tlm_response_status access(tlm::tlm_generic_payload& payload);
  sc_core::sc_time latency_;
  std::map<std::uint64_t, Register> registers_;
};

}  // namespace t3
