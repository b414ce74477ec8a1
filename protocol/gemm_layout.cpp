// Tile-contiguous matrix layout, chunk split and workgroup dispatch orders (see gemm_layout.h).
#include "protocol/gemm_layout.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "protocol/to_size.h"

namespace t3 {
namespace {

std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

[[noreturn]] void bad(const std::string& what) {
  throw std::invalid_argument(what);
}

void check_index(const char* where, const char* name, std::int64_t value, std::int64_t limit) {
  if (value < 0 || value >= limit) {
    bad(std::string(where) + ": " + name + " " + std::to_string(value) + " is outside [0, " +
        std::to_string(limit) + ")");
  }
}

}  // namespace

TiledLayout::TiledLayout(std::int64_t rows, std::int64_t cols, std::int64_t tile_rows,
                         std::int64_t tile_cols)
    : rows_(rows), cols_(cols), tile_rows_(tile_rows), tile_cols_(tile_cols) {
  if (rows < 1 || cols < 1 || tile_rows < 1 || tile_cols < 1) {
    bad("TiledLayout: sizes must be positive, got " + std::to_string(rows) + " x " +
        std::to_string(cols) + " with tiles " + std::to_string(tile_rows) + " x " +
        std::to_string(tile_cols));
  }
}

std::int64_t TiledLayout::grid_rows() const {
  return ceil_div(rows_, tile_rows_);
}

std::int64_t TiledLayout::grid_cols() const {
  return ceil_div(cols_, tile_cols_);
}

std::int64_t TiledLayout::tile_height(std::int64_t tile_row) const {
  check_index("TiledLayout::tile_height", "tile row", tile_row, grid_rows());
  const std::int64_t r0 = tile_row * tile_rows_;
  return std::min(tile_rows_, rows_ - r0);
}

std::int64_t TiledLayout::tile_width(std::int64_t tile_col) const {
  check_index("TiledLayout::tile_width", "tile column", tile_col, grid_cols());
  const std::int64_t c0 = tile_col * tile_cols_;
  return std::min(tile_cols_, cols_ - c0);
}

std::int64_t TiledLayout::tile_offset(std::int64_t tile_row, std::int64_t tile_col) const {
  check_index("TiledLayout::tile_offset", "tile row", tile_row, grid_rows());
  check_index("TiledLayout::tile_offset", "tile column", tile_col, grid_cols());
  const std::int64_t r0 = tile_row * tile_rows_;
  const std::int64_t c0 = tile_col * tile_cols_;
  return r0 * cols_ + tile_height(tile_row) * c0;
}

std::int64_t TiledLayout::offset(std::int64_t row, std::int64_t col) const {
  check_index("TiledLayout::offset", "row", row, rows_);
  check_index("TiledLayout::offset", "column", col, cols_);
  const std::int64_t tile_row = row / tile_rows_;
  const std::int64_t tile_col = col / tile_cols_;
  const std::int64_t r0 = tile_row * tile_rows_;
  const std::int64_t c0 = tile_col * tile_cols_;
  return tile_offset(tile_row, tile_col) + (row - r0) * tile_width(tile_col) + (col - c0);
}

ChunkSplit::ChunkSplit(std::int64_t tile_rows, std::int64_t chunks)
    : tile_rows_(tile_rows), chunks_(chunks) {
  if (tile_rows < 1) {
    bad("ChunkSplit: tile rows must be positive, got " + std::to_string(tile_rows));
  }
  if (chunks < 1 || chunks > tile_rows) {
    bad("ChunkSplit: chunks must be in [1, tile rows = " + std::to_string(tile_rows) + "], got " +
        std::to_string(chunks));
  }
}

std::int64_t ChunkSplit::first_tile_row(std::int64_t chunk) const {
  check_index("ChunkSplit::first_tile_row", "chunk", chunk, chunks_ + 1);
  return chunk * tile_rows_ / chunks_;  // floor(c * R / N)
}

std::int64_t ChunkSplit::chunk_of(std::int64_t tile_row) const {
  check_index("ChunkSplit::chunk_of", "tile row", tile_row, tile_rows_);
  // The largest c with floor(c * R / N) <= t, i.e. c * R < (t + 1) * N.
  return ((tile_row + 1) * chunks_ - 1) / tile_rows_;
}

std::vector<std::int64_t> wg_order(std::int64_t grid_rows, std::int64_t grid_cols, WgOrder order,
                                   std::int64_t chunks, std::int64_t first_chunk) {
  if (grid_rows < 1 || grid_cols < 1) {
    bad("wg_order: grid must be positive, got " + std::to_string(grid_rows) + " x " +
        std::to_string(grid_cols));
  }
  std::vector<std::int64_t> ids;
  ids.reserve(to_size(grid_rows * grid_cols));
  switch (order) {
    case WgOrder::RowMajor:
      for (std::int64_t r = 0; r < grid_rows; ++r) {
        for (std::int64_t c = 0; c < grid_cols; ++c) ids.push_back(r * grid_cols + c);
      }
      return ids;
    case WgOrder::ColumnMajor:
      for (std::int64_t c = 0; c < grid_cols; ++c) {
        for (std::int64_t r = 0; r < grid_rows; ++r) ids.push_back(r * grid_cols + c);
      }
      return ids;
    case WgOrder::ChunkStaggered: {
      const ChunkSplit split(grid_rows, chunks);  // checks chunks
      if (first_chunk < 0 || first_chunk >= chunks) {
        bad("wg_order: first_chunk must be in [0, chunks = " + std::to_string(chunks) + "), got " +
            std::to_string(first_chunk));
      }
      for (std::int64_t i = 0; i < chunks; ++i) {
        const std::int64_t chunk = (first_chunk + i) % chunks;
        for (std::int64_t r = split.first_tile_row(chunk); r < split.first_tile_row(chunk + 1);
             ++r) {
          for (std::int64_t c = 0; c < grid_cols; ++c) ids.push_back(r * grid_cols + c);
        }
      }
      return ids;
    }
  }
  bad("wg_order: unknown order " + std::to_string(static_cast<int>(order)));
}

}  // namespace t3
