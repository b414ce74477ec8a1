#include "harness/debug_access.h"

#include <cstring>
#include <stdexcept>

#include "protocol/hex.h"
#include "tlm_interconnect/address_map.h"

namespace t3 {
namespace {

void transfer(Router& router, tlm::tlm_command command, std::uint64_t address, unsigned char* data,
              std::size_t bytes) {
  tlm::tlm_generic_payload payload;
  payload.set_command(command);
  payload.set_address(address);
  payload.set_data_ptr(data);
  payload.set_data_length(static_cast<unsigned>(bytes));
  payload.set_streaming_width(static_cast<unsigned>(bytes));
  const unsigned done = router.in.get_base_export()->transport_dbg(payload);
  if (done != bytes) {
    throw std::runtime_error(std::string(router.name()) + ": debug " +
                             (command == tlm::TLM_READ_COMMAND ? "read" : "write") + " of " +
                             std::to_string(bytes) + " bytes at " + hex(address) + " moved " +
                             std::to_string(done));
  }
}

}  // namespace

void debug_write(Router& router, std::uint64_t address, const Bytes& data) {
  Bytes copy = data;  // transport_dbg takes a mutable pointer
  transfer(router, tlm::TLM_WRITE_COMMAND, address, copy.data(), copy.size());
}

Bytes debug_read(Router& router, std::uint64_t address, std::size_t bytes) {
  Bytes data(bytes);
  transfer(router, tlm::TLM_READ_COMMAND, address, data.data(), bytes);
  return data;
}

Bytes integer_fp32(std::size_t elements, std::mt19937_64& random, int range) {
  Bytes bytes(elements * 4);
  std::uniform_int_distribution<int> value(-range, range);
  for (std::size_t i = 0; i < elements; ++i) {
    const float f = static_cast<float>(value(random));
    std::memcpy(bytes.data() + 4 * i, &f, 4);
  }
  return bytes;
}

}  // namespace t3
