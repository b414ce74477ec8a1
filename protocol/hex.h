// Addresses and register values in messages and notes: one spelling everywhere.
#pragma once

#include <cstdint>
#include <string>

namespace t3 {

// "0x" and the lowercase hex digits of `value`, no leading zeros: hex(4096) == "0x1000".
std::string hex(std::uint64_t value);

}  // namespace t3
