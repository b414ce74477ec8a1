// Rotational symmetry: how the traffic of one GPU of a TP group maps onto another's. Plain C++,
// no SystemC.
//
// In a plan whose per-GPU programs are rotations of one another, GPU g + s does at every instant
// what GPU g does, with every GPU index moved by s. Addresses then move in two ways: the GPU whose
// window an address falls in moves by s, and inside a band of per-GPU chunks laid out by absolute
// chunk index (a ring's buffer: GPU g works on chunk g + 2, sends to g - 1, ...) the chunk index
// moves by sign x s, where sign says how the plan's chunk numbering follows GPU indices (+1 when
// GPU g's role is rank g, -1 on a ring numbered the other way round). Tracking tags that number
// the band's tiles or slices chunk by chunk move with their chunk. Everything else of a GPU's
// window (other buffers, receive FIFOs, flags, registers) sits at the same offset on every GPU
// and keeps its offset. A plan states this map; a simulation that runs one GPU re-addresses with
// it whatever crosses into another GPU (tlm_interconnect/rotator.h).
#pragma once

#include <cstdint>

#include "protocol/ring.h"  // wrap

namespace t3 {

struct RotationMap {
  int gpus = 0;
  // The band of `gpus` equal chunks at the same offset of every GPU's HBM window.
  std::uint64_t band_offset = 0;  // from the HBM window base
  std::uint64_t chunk_bytes = 0;  // 0: no band
  int sign = 1;                   // chunk index moves by sign x GPU shift
  // Tags [c T, (c + 1) T) belong to chunk c; 0: tags do not rotate.
  std::uint32_t tags_per_chunk = 0;
};

// The offset inside an HBM window after a GPU shift of `shift`: moved to the rotated chunk inside
// the band, unchanged outside it.
std::uint64_t rotate_hbm_offset(const RotationMap& map, std::uint64_t offset, int shift);

// A tag after a GPU shift of `shift`; untracked tags (0xffffffff) and tags past the band's
// chunks keep their value.
std::uint32_t rotate_tag(const RotationMap& map, std::uint32_t tag, int shift);

}  // namespace t3
