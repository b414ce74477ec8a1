// How a GEMM is cut into workgroups and how its matrices lie in memory. Plain C++, no SystemC.
//
// Every matrix is stored tile-contiguous: block-rows of the tile height one after another, and
// inside a block-row the tiles left to right, each tile row-major. So any tile (and any K-step
// sub-tile) is one contiguous range, and transactions stay coarse. Edge tiles are smaller; the
// layout has no padding. Element (r, c) of a rows x cols matrix with tiles th x tw lies at
//   r0 * cols + h * c0 + (r - r0) * w + (c - c0)
// where (r0, c0) is its tile's first element and h x w that tile's size.
#pragma once

#include <cstdint>
#include <vector>

namespace t3 {

// A GEMM C (m x n) = A (m x k) x B (k x n), sizes in elements.
struct GemmShape {
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
};

inline bool operator==(const GemmShape& a, const GemmShape& b) {
  return a.m == b.m && a.n == b.n && a.k == b.k;
}
inline bool operator!=(const GemmShape& a, const GemmShape& b) {
  return !(a == b);
}

class TiledLayout {
 public:
  TiledLayout(std::int64_t rows, std::int64_t cols, std::int64_t tile_rows, std::int64_t tile_cols);

  std::int64_t rows() const { return rows_; }
  std::int64_t cols() const { return cols_; }
  std::int64_t grid_rows() const;  // tiles down
  std::int64_t grid_cols() const;  // tiles across
  std::int64_t tile_height(std::int64_t tile_row) const;
  std::int64_t tile_width(std::int64_t tile_col) const;
  std::int64_t tile_offset(std::int64_t tile_row, std::int64_t tile_col) const;  // elements
  std::int64_t offset(std::int64_t row, std::int64_t col) const;                 // elements
  std::int64_t elements() const { return rows_ * cols_; }

 private:
  std::int64_t rows_, cols_, tile_rows_, tile_cols_;
};

// The output is split into `chunks` bands of whole tile rows (T3's stages; the reduce-scatter's
// chunks). Chunk c covers tile rows [first_tile_row(c), first_tile_row(c + 1)), sizes differing by
// at most one tile row. Throws std::invalid_argument if chunks < 1 or chunks > tile rows.
class ChunkSplit {
 public:
  ChunkSplit(std::int64_t tile_rows, std::int64_t chunks);
  std::int64_t chunks() const { return chunks_; }
  std::int64_t first_tile_row(std::int64_t chunk) const;  // chunk == chunks() gives tile_rows
  std::int64_t chunk_of(std::int64_t tile_row) const;

 private:
  std::int64_t tile_rows_, chunks_;
};

enum class WgOrder { RowMajor = 0, ColumnMajor = 1, ChunkStaggered = 2 };

// The order in which workgroups are dispatched, as tile ids (tile_row * grid_cols + tile_col).
// ChunkStaggered: chunk first_chunk first, then first_chunk + 1, ... (mod chunks), row-major
// inside each chunk. The others ignore chunks and first_chunk.
std::vector<std::int64_t> wg_order(std::int64_t grid_rows, std::int64_t grid_cols, WgOrder order,
                                   std::int64_t chunks = 1, std::int64_t first_chunk = 0);

}  // namespace t3
