// Element formats: fp16 / bf16 conversions (round-to-nearest-even, subnormals, inf, NaN),
// little-endian load/store and the element-wise add near-memory compute applies.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "tlm_interconnect/element.h"

using namespace t3;

namespace {

float bits_float(std::uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

std::uint32_t float_bits(float value) {
  std::uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

const float kInf = std::numeric_limits<float>::infinity();

}  // namespace

TEST_CASE("fp16 elements decode every field from its definition", "[element]") {
  CHECK(half_to_float(0x3c00) == 1.0f);                   // exponent 15 = bias, mantissa 0
  CHECK(half_to_float(0xc000) == -2.0f);                  // sign, exponent 16
  CHECK(half_to_float(0x3e00) == 1.5f);                   // mantissa 0x200 = 1/2
  CHECK(half_to_float(0x7bff) == 65504.0f);               // (2 - 2^-10) * 2^15, the largest finite
  CHECK(half_to_float(0x0400) == std::ldexp(1.0f, -14));  // smallest normal
  CHECK(half_to_float(0x0001) == std::ldexp(1.0f, -24));  // smallest subnormal
  CHECK(half_to_float(0x03ff) == std::ldexp(1023.0f, -24));  // largest subnormal
  CHECK(half_to_float(0x0000) == 0.0f);
  CHECK(std::signbit(half_to_float(0x8000)));
  CHECK(half_to_float(0x7c00) == kInf);
  CHECK(half_to_float(0xfc00) == -kInf);
  CHECK(std::isnan(half_to_float(0x7e00)));
  CHECK(std::isnan(half_to_float(0x7c01)));  // signalling NaN pattern is still NaN
}

TEST_CASE("fp16 elements round trip every finite value exactly", "[element]") {
  // Every fp16 value is exact in float, so encode(decode(h)) must give h back.
  int checked = 0;
  for (std::uint32_t h = 0; h < 0x10000; ++h) {
    const auto bits = static_cast<std::uint16_t>(h);
    if ((bits & 0x7c00) == 0x7c00) continue;  // inf / NaN checked elsewhere
    const std::uint16_t back = float_to_half(half_to_float(bits));
    if (back != bits) FAIL("fp16 0x" << std::hex << h << " came back as 0x" << back);
    ++checked;
  }
  CHECK(checked == 2 * 31 * 1024);
}

TEST_CASE("fp16 element rounding is to nearest, ties to even", "[element]") {
  // Near 1 the fp16 spacing is 2^-10: 1 + 2^-11 is a tie between 1 (even) and 1 + 2^-10 (odd).
  CHECK(float_to_half(1.0f + std::ldexp(1.0f, -11)) == 0x3c00);
  // 1 + 3 * 2^-11 is a tie between 1 + 2^-10 (odd) and 1 + 2^-9 (even): goes up.
  CHECK(float_to_half(1.0f + 3 * std::ldexp(1.0f, -11)) == 0x3c02);
  // Just above / below a tie goes to the nearer value.
  CHECK(float_to_half(1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -20)) == 0x3c01);
  CHECK(float_to_half(1.0f + std::ldexp(1.0f, -11) - std::ldexp(1.0f, -20)) == 0x3c00);
  // A carry out of the mantissa bumps the exponent: 2 - 2^-12 is nearer to 2 than to 2 - 2^-10.
  CHECK(float_to_half(2.0f - std::ldexp(1.0f, -12)) == 0x4000);
  // Negative values round symmetrically.
  CHECK(float_to_half(-(1.0f + 3 * std::ldexp(1.0f, -11))) == 0xbc02);
}

TEST_CASE("fp16 element subnormals, overflow and NaN", "[element]") {
  const float unit = std::ldexp(1.0f, -24);  // one subnormal step
  CHECK(float_to_half(unit) == 0x0001);
  CHECK(float_to_half(37 * unit) == 37);
  CHECK(float_to_half(0.5f * unit) == 0x0000);   // tie between 0 (even) and 1 unit
  CHECK(float_to_half(1.5f * unit) == 0x0002);   // tie between 1 (odd) and 2 units
  CHECK(float_to_half(2.5f * unit) == 0x0002);   // tie between 2 (even) and 3 units
  CHECK(float_to_half(0.75f * unit) == 0x0001);  // above the tie
  CHECK(float_to_half(0.25f * unit) == 0x0000);
  CHECK(float_to_half(std::ldexp(1.0f, -30)) == 0x0000);
  CHECK(float_to_half(-3 * unit) == 0x8003);
  // 1023.5 units is a tie between the largest subnormal (odd) and the smallest normal (even).
  CHECK(float_to_half(1023.5f * unit) == 0x0400);
  CHECK(float_to_half(std::ldexp(1.0f, -149)) == 0x0000);  // float subnormal

  // Largest finite is 65504; the spacing there is 32, so 65519 rounds down, and 65520 (the tie
  // with 2^16, odd mantissa) rounds to inf.
  CHECK(float_to_half(65504.0f) == 0x7bff);
  CHECK(float_to_half(65519.0f) == 0x7bff);
  CHECK(float_to_half(65520.0f) == 0x7c00);
  CHECK(float_to_half(1e10f) == 0x7c00);
  CHECK(float_to_half(-1e10f) == 0xfc00);
  CHECK(float_to_half(kInf) == 0x7c00);
  CHECK(float_to_half(-kInf) == 0xfc00);

  const std::uint16_t nan = float_to_half(std::numeric_limits<float>::quiet_NaN());
  CHECK((nan & 0x7c00) == 0x7c00);
  CHECK((nan & 0x03ff) != 0);
  // A NaN whose payload lives only in the low float mantissa bits must not become inf.
  const std::uint16_t low_payload_nan = float_to_half(bits_float(0x7f800001u));
  CHECK((low_payload_nan & 0x7c00) == 0x7c00);
  CHECK((low_payload_nan & 0x03ff) != 0);
  CHECK(std::isnan(half_to_float(nan)));
}

TEST_CASE("bf16 element conversions round to nearest even and keep inf and NaN", "[element]") {
  // bf16 is the top 16 bits of a float.
  CHECK(bf16_to_float(0x3f80) == 1.0f);
  CHECK(bf16_to_float(0xc040) == -3.0f);
  CHECK(float_to_bf16(1.0f) == 0x3f80);
  CHECK(float_to_bf16(-3.0f) == 0xc040);
  // Round trip of a sample of every exponent and sign with a few mantissas.
  for (std::uint32_t h = 0; h < 0x10000; h += 7) {
    const auto bits = static_cast<std::uint16_t>(h);
    if ((bits & 0x7f80) == 0x7f80) continue;
    REQUIRE(float_to_bf16(bf16_to_float(bits)) == bits);
  }
  // Spacing near 1 is 2^-7: 1 + 2^-8 ties to 1 (even), 1 + 3 * 2^-8 ties up to 1 + 2^-6.
  CHECK(float_to_bf16(1.0f + std::ldexp(1.0f, -8)) == 0x3f80);
  CHECK(float_to_bf16(1.0f + 3 * std::ldexp(1.0f, -8)) == 0x3f82);
  CHECK(float_to_bf16(1.0f + std::ldexp(1.0f, -8) + std::ldexp(1.0f, -20)) == 0x3f81);
  // Subnormal: bits 0x00008000 is a tie between 0x0000 (even) and 0x0001.
  CHECK(float_to_bf16(bits_float(0x00008000u)) == 0x0000);
  CHECK(float_to_bf16(bits_float(0x00018000u)) == 0x0002);
  CHECK(float_to_bf16(bits_float(0x00010000u)) == 0x0001);
  CHECK(bf16_to_float(0x0001) == std::ldexp(1.0f, -133));  // smallest bf16 subnormal
  // The largest float is above the tie with 2^128: overflows to inf.
  CHECK(float_to_bf16(std::numeric_limits<float>::max()) == 0x7f80);
  CHECK(float_to_bf16(-std::numeric_limits<float>::max()) == 0xff80);
  CHECK(float_to_bf16(kInf) == 0x7f80);
  CHECK(bf16_to_float(0xff80) == -kInf);
  // NaNs whose payload is only in the low 16 bits would become inf if truncated naively.
  const std::uint16_t nan = float_to_bf16(bits_float(0x7f800001u));
  CHECK((nan & 0x7f80) == 0x7f80);
  CHECK((nan & 0x007f) != 0);
  CHECK(std::isnan(bf16_to_float(float_to_bf16(std::numeric_limits<float>::quiet_NaN()))));
  CHECK(std::isnan(bf16_to_float(0x7fc0)));
}

TEST_CASE("fp32, fp16 and bf16 elements load and store little-endian", "[element]") {
  unsigned char buffer[8] = {};
  store_element(buffer, 1, ElementType::Fp32, 1.0f);  // 0x3f800000
  CHECK(buffer[4] == 0x00);
  CHECK(buffer[5] == 0x00);
  CHECK(buffer[6] == 0x80);
  CHECK(buffer[7] == 0x3f);
  CHECK(load_element(buffer, 1, ElementType::Fp32) == 1.0f);

  store_element(buffer, 2, ElementType::Fp16, -2.0f);  // 0xc000 at bytes 4..5
  CHECK(buffer[4] == 0x00);
  CHECK(buffer[5] == 0xc0);
  CHECK(load_element(buffer, 2, ElementType::Fp16) == -2.0f);

  store_element(buffer, 0, ElementType::Bf16, 1.5f);  // 0x3fc0
  CHECK(buffer[0] == 0xc0);
  CHECK(buffer[1] == 0x3f);
  CHECK(load_element(buffer, 0, ElementType::Bf16) == 1.5f);

  const unsigned char raw[2] = {0x00, 0x3c};  // fp16 1.0 as bytes
  CHECK(load_element(raw, 0, ElementType::Fp16) == 1.0f);
}

TEST_CASE("add_elements adds element-wise and rounds to the element type", "[element]") {
  SECTION("fp32") {
    std::vector<unsigned char> dst(12), src(12);
    const float a[3] = {1.5f, -2.0f, 16777216.0f};  // 2^24
    const float b[3] = {2.25f, 0.5f, 1.0f};
    for (int i = 0; i < 3; ++i) {
      store_element(dst.data(), i, ElementType::Fp32, a[i]);
      store_element(src.data(), i, ElementType::Fp32, b[i]);
    }
    add_elements(dst.data(), src.data(), dst.size(), ElementType::Fp32);
    CHECK(load_element(dst.data(), 0, ElementType::Fp32) == 3.75f);
    CHECK(load_element(dst.data(), 1, ElementType::Fp32) == -1.5f);
    // 2^24 + 1 is a tie between 2^24 (even) and 2^24 + 2 in fp32.
    CHECK(float_bits(load_element(dst.data(), 2, ElementType::Fp32)) == float_bits(16777216.0f));
    CHECK(load_element(src.data(), 0, ElementType::Fp32) == 2.25f);  // operand untouched
  }
  SECTION("fp16") {
    std::vector<unsigned char> dst(8), src(8);
    // 2048 + 1: spacing is 2 above 2048, tie -> 2048 (even); 2048 + 3 = 2051 -> 2052 (even).
    const float a[4] = {1.5f, 2048.0f, 2048.0f, 60000.0f};
    const float b[4] = {2.25f, 1.0f, 3.0f, 10000.0f};
    for (int i = 0; i < 4; ++i) {
      store_element(dst.data(), i, ElementType::Fp16, a[i]);
      store_element(src.data(), i, ElementType::Fp16, b[i]);
    }
    add_elements(dst.data(), src.data(), dst.size(), ElementType::Fp16);
    CHECK(load_element(dst.data(), 0, ElementType::Fp16) == 3.75f);
    CHECK(load_element(dst.data(), 1, ElementType::Fp16) == 2048.0f);
    CHECK(load_element(dst.data(), 2, ElementType::Fp16) == 2052.0f);
    CHECK(load_element(dst.data(), 3, ElementType::Fp16) == kInf);  // 70000 > 65520
  }
  SECTION("bf16") {
    std::vector<unsigned char> dst(6), src(6);
    // 8 significand bits: spacing 2 in [256, 512); 257 ties to 256, 259 ties to 260.
    const float a[3] = {1.5f, 256.0f, 256.0f};
    const float b[3] = {2.25f, 1.0f, 3.0f};
    for (int i = 0; i < 3; ++i) {
      store_element(dst.data(), i, ElementType::Bf16, a[i]);
      store_element(src.data(), i, ElementType::Bf16, b[i]);
    }
    add_elements(dst.data(), src.data(), dst.size(), ElementType::Bf16);
    CHECK(load_element(dst.data(), 0, ElementType::Bf16) == 3.75f);
    CHECK(load_element(dst.data(), 1, ElementType::Bf16) == 256.0f);
    CHECK(load_element(dst.data(), 2, ElementType::Bf16) == 260.0f);
  }
}
