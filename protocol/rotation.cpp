// Rotational symmetry's address and tag map (see rotation.h).
#include "protocol/rotation.h"

namespace t3 {

std::uint64_t rotate_hbm_offset(const RotationMap& map, std::uint64_t offset, int shift) {
  const std::uint64_t band_bytes = map.chunk_bytes * static_cast<std::uint64_t>(map.gpus);
  if (map.chunk_bytes == 0 || offset < map.band_offset || offset - map.band_offset >= band_bytes) {
    return offset;
  }
  const std::uint64_t inside = offset - map.band_offset;
  const auto chunk = static_cast<std::int64_t>(inside / map.chunk_bytes);
  const int rotated = wrap(chunk + static_cast<std::int64_t>(map.sign) * shift, map.gpus);
  return map.band_offset + static_cast<std::uint64_t>(rotated) * map.chunk_bytes +
         inside % map.chunk_bytes;
}

std::uint32_t rotate_tag(const RotationMap& map, std::uint32_t tag, int shift) {
  constexpr std::uint32_t kUntracked = 0xffffffffu;
  if (map.tags_per_chunk == 0 || tag == kUntracked) return tag;
  const std::uint32_t chunk = tag / map.tags_per_chunk;
  if (chunk >= static_cast<std::uint32_t>(map.gpus)) return tag;
  const int rotated =
      wrap(static_cast<std::int64_t>(chunk) + std::int64_t{map.sign} * shift, map.gpus);
  return static_cast<std::uint32_t>(rotated) * map.tags_per_chunk + tag % map.tags_per_chunk;
}

}  // namespace t3
