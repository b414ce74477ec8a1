// Golden reference GEMM for verification: C = A x B computed in float (fp32 accumulate, k in
// ascending order), with A, B and C in the tile-contiguous layout of protocol/gemm_layout.h, read
// from and written to byte buffers of any element type (tlm_interconnect/element.h conversions,
// round-to-nearest-even on the output). Plus conversions between row-major and tiled buffers.
// No SystemC objects: usable from a scoreboard, a test or a script.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "config/system_config.h"
#include "protocol/gemm_layout.h"
#include "tlm_interconnect/payload.h"

namespace t3 {

using Bytes = std::vector<unsigned char>;

// Row-major rows x cols buffer of `element_bytes`-byte elements <-> the tiled layout of
// `layout`. Buffers hold layout.elements() * element_bytes bytes; they must not overlap.
void to_tiled(const unsigned char* row_major, unsigned char* tiled, const TiledLayout& layout,
              std::size_t element_bytes);
void to_row_major(const unsigned char* tiled, unsigned char* row_major, const TiledLayout& layout,
                  std::size_t element_bytes);
// The same on vectors; a size other than layout.elements() * element_bytes throws
// std::invalid_argument.
Bytes to_tiled(const Bytes& row_major, const TiledLayout& layout, std::size_t element_bytes);
Bytes to_row_major(const Bytes& tiled, const TiledLayout& layout, std::size_t element_bytes);

// The layouts of a GEMM's operands: A m x k in tile_m x tile_k tiles, B k x n in tile_k x tile_n,
// C m x n in tile_m x tile_n.
TiledLayout layout_a(const GemmShape& shape, const GemmConfig& tiles);
TiledLayout layout_b(const GemmShape& shape, const GemmConfig& tiles);
TiledLayout layout_c(const GemmShape& shape, const GemmConfig& tiles);

// C = A x B. `a` and `b` hold `in` elements, `c` receives `out` elements, all tiled as above.
void reference_gemm(const GemmShape& shape, const GemmConfig& tiles, ElementType in,
                    ElementType out, const unsigned char* a, const unsigned char* b,
                    unsigned char* c);
// The same on vectors, returning C; input sizes are checked (std::invalid_argument).
Bytes reference_gemm(const GemmShape& shape, const GemmConfig& tiles, ElementType in,
                     ElementType out, const Bytes& a, const Bytes& b);

}  // namespace t3
