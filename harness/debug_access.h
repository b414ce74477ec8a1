// Debug (zero-time) access to a group's memory through a GPU's router: how testbenches load
// operands and check results without disturbing timing. Call after elaboration (sockets are bound
// at the end of elaboration, e.g. after sc_start(SC_ZERO_TIME)).
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "tlm_interconnect/router.h"

namespace t3 {

using Bytes = std::vector<unsigned char>;

// Throws std::runtime_error naming the address if not every byte was transferred.
void debug_write(Router& router, std::uint64_t address, const Bytes& data);
Bytes debug_read(Router& router, std::uint64_t address, std::size_t bytes);

// `elements` fp32 values drawn from the integers in [-range, range]: sums of their products are
// exact in fp32, so functional results can be compared bit for bit.
Bytes integer_fp32(std::size_t elements, std::mt19937_64& random, int range = 4);

}  // namespace t3
