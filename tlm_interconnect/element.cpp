#include "tlm_interconnect/element.h"

#include <cmath>
#include <cstring>

namespace t3 {
namespace {

std::uint32_t float_bits(float value) {
  std::uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

float bits_float(std::uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

// Shifts `value` right by `shift` (1..31) bits, rounding to nearest, ties to even.
std::uint32_t shift_rne(std::uint32_t value, unsigned shift) {
  const std::uint32_t kept = value >> shift;
  const std::uint32_t rest = value & ((1u << shift) - 1);
  const std::uint32_t half = 1u << (shift - 1);
  return kept + ((rest > half || (rest == half && (kept & 1))) ? 1 : 0);
}

}  // namespace

float half_to_float(std::uint16_t bits) {
  const std::uint32_t sign = static_cast<std::uint32_t>(bits & 0x8000u) << 16;
  const std::uint32_t exponent = (bits >> 10) & 0x1fu;
  const std::uint32_t mantissa = bits & 0x3ffu;
  if (exponent == 0) {
    // Zero or subnormal: mantissa * 2^-24, exact in float.
    const float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -magnitude : magnitude;
  }
  if (exponent == 0x1f) return bits_float(sign | 0x7f800000u | (mantissa << 13));  // inf, NaN
  return bits_float(sign | ((exponent + 127 - 15) << 23) | (mantissa << 13));
}

std::uint16_t float_to_half(float value) {
  const std::uint32_t bits = float_bits(value);
  const std::uint32_t sign = (bits >> 16) & 0x8000u;
  const std::uint32_t magnitude = bits & 0x7fffffffu;
  if (magnitude >= 0x7f800000u) {
    if (magnitude == 0x7f800000u) return static_cast<std::uint16_t>(sign | 0x7c00u);
    // NaN stays NaN: keep the top payload bits and force the quiet bit (never becomes inf).
    return static_cast<std::uint16_t>(sign | 0x7e00u | ((magnitude >> 13) & 0x3ffu));
  }
  // 65520 = halfway between the largest half (65504, odd mantissa) and 2^16: ties go up to inf.
  if (magnitude >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);
  if (magnitude < 0x38800000u) {
    // Below the smallest normal half (2^-14): a subnormal count of 2^-24 units, or zero.
    const std::uint32_t exponent = magnitude >> 23;
    if (exponent < 102) return static_cast<std::uint16_t>(sign);  // < 2^-25: rounds to zero
    const std::uint32_t significand = (magnitude & 0x7fffffu) | 0x800000u;
    // value = significand * 2^(exponent - 150) = (significand >> (126 - exponent)) * 2^-24;
    // a carry into 0x400 is exactly the smallest normal's encoding.
    return static_cast<std::uint16_t>(sign | shift_rne(significand, 126 - exponent));
  }
  // Normal: rebias the exponent (127 -> 15) and round the 23-bit mantissa to 10 bits; a carry
  // out of the mantissa correctly increments the exponent.
  return static_cast<std::uint16_t>(sign | shift_rne(magnitude - 0x38000000u, 13));
}

float bf16_to_float(std::uint16_t bits) {
  return bits_float(static_cast<std::uint32_t>(bits) << 16);
}

std::uint16_t float_to_bf16(float value) {
  const std::uint32_t bits = float_bits(value);
  if ((bits & 0x7fffffffu) > 0x7f800000u) {
    return static_cast<std::uint16_t>((bits >> 16) | 0x0040u);  // quiet NaN, never inf
  }
  // bf16 is the top half of a float: round the low 16 bits away, ties to even. Overflow carries
  // into the exponent and yields inf, subnormals round like any other value.
  return static_cast<std::uint16_t>(shift_rne(bits, 16));
}

float load_element(const unsigned char* data, std::size_t index, ElementType type) {
  switch (type) {
    case ElementType::Fp32: {
      const unsigned char* p = data + index * 4;
      return bits_float(static_cast<std::uint32_t>(p[0]) | static_cast<std::uint32_t>(p[1]) << 8 |
                        static_cast<std::uint32_t>(p[2]) << 16 |
                        static_cast<std::uint32_t>(p[3]) << 24);
    }
    case ElementType::Fp16:
    case ElementType::Bf16: {
      const unsigned char* p = data + index * 2;
      const auto bits = static_cast<std::uint16_t>(p[0] | p[1] << 8);
      return type == ElementType::Fp16 ? half_to_float(bits) : bf16_to_float(bits);
    }
  }
  return 0.0f;
}

void store_element(unsigned char* data, std::size_t index, ElementType type, float value) {
  switch (type) {
    case ElementType::Fp32: {
      const std::uint32_t bits = float_bits(value);
      unsigned char* p = data + index * 4;
      p[0] = static_cast<unsigned char>(bits);
      p[1] = static_cast<unsigned char>(bits >> 8);
      p[2] = static_cast<unsigned char>(bits >> 16);
      p[3] = static_cast<unsigned char>(bits >> 24);
      return;
    }
    case ElementType::Fp16:
    case ElementType::Bf16: {
      const std::uint16_t bits =
          type == ElementType::Fp16 ? float_to_half(value) : float_to_bf16(value);
      unsigned char* p = data + index * 2;
      p[0] = static_cast<unsigned char>(bits);
      p[1] = static_cast<unsigned char>(bits >> 8);
      return;
    }
  }
}

void add_elements(unsigned char* dst, const unsigned char* src, std::size_t bytes,
                  ElementType type) {
  // A float sum of two fp16 or bf16 values rounded once more to the element type equals the
  // correctly rounded sum (24 >= 2 * 11 + 2 significand bits), so computing in float is exact
  // enough; for fp32 the float add is the IEEE add itself.
  const std::size_t count = bytes / element_bytes(type);
  for (std::size_t i = 0; i < count; ++i) {
    store_element(dst, i, type, load_element(dst, i, type) + load_element(src, i, type));
  }
}

}  // namespace t3
