// Small helpers the program builders share. Plain C++.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

namespace t3 {

// Program builders reject a bad plan with std::invalid_argument carrying `what`.
[[noreturn]] inline void bad_plan(const std::string& what) {
  throw std::invalid_argument(what);
}

inline std::uint64_t align_up(std::uint64_t value, std::uint64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

}  // namespace t3
