#include "protocol/element_type.h"

#include <stdexcept>
#include <string>

namespace t3 {

const char* to_string(ElementType type) {
  switch (type) {
    case ElementType::Fp32:
      return "fp32";
    case ElementType::Fp16:
      return "fp16";
    case ElementType::Bf16:
      return "bf16";
  }
  return "?";
}

std::size_t element_bytes(ElementType type) {
  return type == ElementType::Fp32 ? 4 : 2;
}

std::uint64_t bytes_of(ElementType type, std::int64_t elements) {
  if (elements < 0) {
    throw std::invalid_argument("bytes_of: negative element count " + std::to_string(elements));
  }
  return element_bytes(type) * static_cast<std::uint64_t>(elements);
}

std::uint32_t element_code(ElementType type) {
  return static_cast<std::uint32_t>(type);
}

bool is_element_code(std::uint32_t code) {
  return code <= element_code(ElementType::Bf16);
}

ElementType element_from_code(std::uint32_t code) {
  if (!is_element_code(code)) {
    throw std::invalid_argument("unknown element code " + std::to_string(code) +
                                " (0 fp32, 1 fp16, 2 bf16)");
  }
  return static_cast<ElementType>(code);
}

}  // namespace t3
