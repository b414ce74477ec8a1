// The element types the blocks move, reduce and multiply, with their names and sizes, and the
// 32-bit codes the dispatcher, DMA and tracker registers hold them as (docs/registers.md).
#pragma once

#include <cstddef>
#include <cstdint>

namespace t3 {

// The enumerator values are the register codes (element_code).
enum class ElementType : std::uint8_t { Fp32 = 0, Fp16 = 1, Bf16 = 2 };

// "fp32", "fp16" or "bf16"; "?" for a value outside the enumeration.
const char* to_string(ElementType type);
// 4 for fp32, 2 for fp16 and bf16.
std::size_t element_bytes(ElementType type);
// Bytes of `elements` elements of `type`; a negative count throws std::invalid_argument.
std::uint64_t bytes_of(ElementType type, std::int64_t elements);

// The register boundary: registers hold a type as a 32-bit code, 0 fp32, 1 fp16, 2 bf16.
std::uint32_t element_code(ElementType type);
bool is_element_code(std::uint32_t code);
// The type of a code; a code that names no type throws std::invalid_argument naming it.
ElementType element_from_code(std::uint32_t code);

}  // namespace t3
