// The one conversion from a signed or narrower integer (a GPU, rank, chunk or region number, a
// count) or an enumerator (a row of a table of names) to the std::size_t that indexes and sizes
// containers.
#pragma once

#include <cstddef>
#include <type_traits>

namespace t3 {

// `value` as a container index or size; the caller knows it is not negative.
template <typename Index>
constexpr std::size_t to_size(Index value) {
  static_assert(std::is_integral_v<Index> || std::is_enum_v<Index>,
                "to_size converts integers and enumerators only");
  return static_cast<std::size_t>(value);
}

}  // namespace t3
