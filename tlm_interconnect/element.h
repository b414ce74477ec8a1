// Element formats carried by the payload protocol: conversions and the element-wise add that
// near-memory compute applies. Round-to-nearest-even everywhere, as GPU ALUs do.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tlm_interconnect/payload.h"

namespace t3 {

float half_to_float(std::uint16_t bits);
std::uint16_t float_to_half(float value);
float bf16_to_float(std::uint16_t bits);
std::uint16_t float_to_bf16(float value);

// Reads / writes element `index` of a little-endian buffer of `type` as float.
float load_element(const unsigned char* data, std::size_t index, ElementType type);
void store_element(unsigned char* data, std::size_t index, ElementType type, float value);

// dst[i] = round(dst[i] + src[i]) for the `bytes / element_bytes(type)` elements.
void add_elements(unsigned char* dst, const unsigned char* src, std::size_t bytes,
                  ElementType type);

}  // namespace t3
