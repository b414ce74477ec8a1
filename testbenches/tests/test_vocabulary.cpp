// The bottom layer's shared vocabulary: element types and their register codes, the one hex
// spelling of addresses, the index conversion.
#include <catch2/catch.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "protocol/element_type.h"
#include "protocol/hex.h"
#include "protocol/to_size.h"

using namespace t3;
using Catch::Matchers::Contains;

TEST_CASE("every element type survives the register code round trip", "[element]") {
  for (ElementType type : {ElementType::Fp32, ElementType::Fp16, ElementType::Bf16}) {
    INFO(to_string(type));
    CHECK(is_element_code(element_code(type)));
    CHECK(element_from_code(element_code(type)) == type);
  }
  for (std::uint32_t code = 0; code < 3; ++code) {
    CHECK(element_code(element_from_code(code)) == code);
  }
}

TEST_CASE("element codes are the ones the registers document", "[element]") {
  // docs/registers.md: 0 fp32, 1 fp16, 2 bf16.
  CHECK(element_code(ElementType::Fp32) == 0);
  CHECK(element_code(ElementType::Fp16) == 1);
  CHECK(element_code(ElementType::Bf16) == 2);
  CHECK(std::string(to_string(ElementType::Fp32)) == "fp32");
  CHECK(std::string(to_string(ElementType::Fp16)) == "fp16");
  CHECK(std::string(to_string(ElementType::Bf16)) == "bf16");
  CHECK(element_bytes(ElementType::Fp32) == 4);
  CHECK(element_bytes(ElementType::Fp16) == 2);
  CHECK(element_bytes(ElementType::Bf16) == 2);
}

TEST_CASE("an unknown element code is refused, naming the code", "[element]") {
  for (std::uint32_t code : {3u, 7u, 0xffffffffu}) {
    INFO(code);
    CHECK_FALSE(is_element_code(code));
    CHECK_THROWS_AS(element_from_code(code), std::invalid_argument);
    CHECK_THROWS_WITH(element_from_code(code),
                      Contains("unknown element code " + std::to_string(code)) &&
                          Contains("0 fp32, 1 fp16, 2 bf16"));
  }
}

TEST_CASE("bytes_of counts whole elements and refuses a negative count", "[element]") {
  CHECK(bytes_of(ElementType::Fp32, 3) == 12);
  CHECK(bytes_of(ElementType::Bf16, 3) == 6);
  CHECK(bytes_of(ElementType::Fp16, 0) == 0);
  CHECK(bytes_of(ElementType::Fp32, std::int64_t{1} << 40) == std::uint64_t{4} << 40);
  CHECK_THROWS_WITH(bytes_of(ElementType::Fp16, -2), Contains("negative element count -2"));
}

TEST_CASE("hex spells a value as 0x and lowercase digits without leading zeros", "[hex]") {
  CHECK(hex(0) == "0x0");
  CHECK(hex(9) == "0x9");
  CHECK(hex(0xabcdef) == "0xabcdef");
  CHECK(hex(4096) == "0x1000");
  CHECK(hex(0x100000000ull) == "0x100000000");
  CHECK(hex(0xffffffffffffffffull) == "0xffffffffffffffff");
}

TEST_CASE("to_size converts indices and enumerators", "[index]") {
  enum class Row { First, Second, Third };
  static_assert(to_size(Row::Third) == 2);
  static_assert(to_size(std::int64_t{1} << 40) == std::size_t{1} << 40);
  CHECK(to_size(5) == 5u);
  CHECK(to_size(static_cast<std::uint16_t>(65535)) == 65535u);
}
