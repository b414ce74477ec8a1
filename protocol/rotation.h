// Rotational symmetry: how the traffic of one GPU of a TP group maps onto another's. Plain C++,
// no SystemC.
//
// In a plan whose per-GPU programs are rotations of one another, GPU g + s does at every instant
// what GPU g does, with every GPU index moved by s. Addresses then move in two ways: the GPU whose
// window an address falls in moves by s, and inside a band of per-GPU chunks laid out by absolute
// chunk index (a ring's buffer: GPU g works on chunk g + 2, sends to g - 1, ...) the chunk index
// moves by sign x s, where sign says how the plan's chunk numbering follows GPU indices (+1 when
// GPU g's role is rank g, -1 on a ring numbered the other way round). Tracking tags that number
// the band's tiles or slices chunk by chunk move with their chunk. A plan may have several bands
// (slicing: one ring collective per band of output rows, each over its own buffer of n chunks);
// each moves on its own. Everything else of a GPU's window (other buffers, receive FIFOs, flags,
// registers) sits at the same offset on every GPU and keeps its offset. A plan states this map; a
// simulation that runs one GPU re-addresses with it whatever crosses into another GPU
// (tlm_interconnect/rotator.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "protocol/ring.h"  // wrap

namespace t3 {

// `gpus` equal chunks at the same offset of every GPU's HBM window.
struct RotationBand {
  std::uint64_t offset = 0;       // from the HBM window base
  std::uint64_t chunk_bytes = 0;  // 0: the band is empty
  int sign = 1;                   // chunk index moves by sign x GPU shift
  // Tags [first_tag + c T, first_tag + (c + 1) T) belong to chunk c; T = 0: tags do not rotate.
  std::uint32_t first_tag = 0;
  std::uint32_t tags_per_chunk = 0;
};

struct RotationMap {
  int gpus = 0;                     // 0: the plan states no rotation
  std::vector<RotationBand> bands;  // by ascending offset, disjoint (rotation_map_error)
};

// Why `map` cannot be used (empty if it can): bands out of order or overlapping in offsets or in
// tags, a sign other than +1 or -1.
std::string rotation_map_error(const RotationMap& map);

// The offset inside an HBM window after a GPU shift of `shift`: moved to the rotated chunk inside
// the band it falls in, unchanged outside every band.
std::uint64_t rotate_hbm_offset(const RotationMap& map, std::uint64_t offset, int shift);

// A tag after a GPU shift of `shift`: moved to the rotated chunk of the band whose tags it is;
// untracked tags (0xffffffff) and tags of no band keep their value.
std::uint32_t rotate_tag(const RotationMap& map, std::uint32_t tag, int shift);

}  // namespace t3
