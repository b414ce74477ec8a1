// Rotational symmetry's address and tag map (see rotation.h).
#include "protocol/rotation.h"

#include <algorithm>

namespace t3 {

namespace {

std::uint64_t band_bytes(const RotationMap& map, const RotationBand& band) {
  return band.chunk_bytes * static_cast<std::uint64_t>(map.gpus);
}

std::uint64_t band_tags(const RotationMap& map, const RotationBand& band) {
  return std::uint64_t{band.tags_per_chunk} * static_cast<std::uint64_t>(map.gpus);
}

int rotated_chunk(const RotationMap& map, const RotationBand& band, std::int64_t chunk, int shift) {
  return wrap(chunk + static_cast<std::int64_t>(band.sign) * shift, map.gpus);
}

}  // namespace

std::string rotation_map_error(const RotationMap& map) {
  if (map.gpus <= 0) return map.bands.empty() ? std::string{} : "bands for no GPUs";
  for (std::size_t b = 0; b < map.bands.size(); ++b) {
    const RotationBand& band = map.bands[b];
    const std::string which = "band " + std::to_string(b);
    if (band.sign != 1 && band.sign != -1) {
      return which + ": sign " + std::to_string(band.sign) + " is not +1 or -1";
    }
    if (b == 0) continue;
    const RotationBand& before = map.bands[b - 1];
    if (band.offset < before.offset + band_bytes(map, before)) {
      return which + " starts before band " + std::to_string(b - 1) + " ends";
    }
    if (band.tags_per_chunk == 0) continue;
    for (std::size_t o = 0; o < b; ++o) {
      const RotationBand& other = map.bands[o];
      if (other.tags_per_chunk == 0) continue;
      const std::uint64_t first = band.first_tag, other_first = other.first_tag;
      if (first < other_first + band_tags(map, other) &&
          other_first < first + band_tags(map, band)) {
        return which + "'s tags overlap band " + std::to_string(o) + "'s";
      }
    }
  }
  return {};
}

std::uint64_t rotate_hbm_offset(const RotationMap& map, std::uint64_t offset, int shift) {
  // The last band starting at or before `offset` is the only one it can fall in.
  const auto after = std::upper_bound(
      map.bands.begin(), map.bands.end(), offset,
      [](std::uint64_t value, const RotationBand& band) { return value < band.offset; });
  if (after == map.bands.begin()) return offset;
  const RotationBand& band = *(after - 1);
  const std::uint64_t inside = offset - band.offset;
  if (band.chunk_bytes == 0 || inside >= band_bytes(map, band)) return offset;
  const auto chunk = static_cast<std::int64_t>(inside / band.chunk_bytes);
  const int rotated = rotated_chunk(map, band, chunk, shift);
  return band.offset + static_cast<std::uint64_t>(rotated) * band.chunk_bytes +
         inside % band.chunk_bytes;
}

std::uint32_t rotate_tag(const RotationMap& map, std::uint32_t tag, int shift) {
  constexpr std::uint32_t kUntracked = 0xffffffffu;
  if (tag == kUntracked) return tag;
  for (const RotationBand& band : map.bands) {
    if (band.tags_per_chunk == 0 || tag < band.first_tag) continue;
    const std::uint32_t inside = tag - band.first_tag;
    const std::uint32_t chunk = inside / band.tags_per_chunk;
    if (chunk >= static_cast<std::uint32_t>(map.gpus)) continue;
    const int rotated = rotated_chunk(map, band, chunk, shift);
    return band.first_tag + static_cast<std::uint32_t>(rotated) * band.tags_per_chunk +
           inside % band.tags_per_chunk;
  }
  return tag;
}

}  // namespace t3
