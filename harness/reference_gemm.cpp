// Golden reference GEMM and layout conversions (see reference_gemm.h).
#include "harness/reference_gemm.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "protocol/to_size.h"
#include "tlm_interconnect/element.h"

namespace t3 {
namespace {

std::size_t count(std::int64_t rows, std::int64_t cols) {
  return static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols);
}

void check_size(const char* what, std::size_t actual, std::size_t expected) {
  if (actual != expected) {
    throw std::invalid_argument(std::string(what) + ": buffer holds " + std::to_string(actual) +
                                " bytes, expected " + std::to_string(expected));
  }
}

// Row-major float copy of a tiled buffer of `type`.
std::vector<float> load_row_major(const unsigned char* tiled, const TiledLayout& layout,
                                  ElementType type) {
  std::vector<float> values(count(layout.rows(), layout.cols()));
  for (std::int64_t r = 0; r < layout.rows(); ++r) {
    for (std::int64_t c = 0; c < layout.cols(); ++c) {
      values[count(r, layout.cols()) + static_cast<std::size_t>(c)] =
          load_element(tiled, static_cast<std::size_t>(layout.offset(r, c)), type);
    }
  }
  return values;
}

// Which image of a matrix a copy reads: the other one is written.
enum class Source { RowMajor, Tiled };

void reorder(const unsigned char* source, unsigned char* destination, const TiledLayout& layout,
             std::size_t element_bytes, Source from) {
  for (std::int64_t r = 0; r < layout.rows(); ++r) {
    for (std::int64_t c = 0; c < layout.cols(); ++c) {
      const std::size_t tiled = to_size(layout.offset(r, c)) * element_bytes;
      const std::size_t row_major = (count(r, layout.cols()) + to_size(c)) * element_bytes;
      const bool tiled_source = from == Source::Tiled;
      std::memcpy(destination + (tiled_source ? row_major : tiled),
                  source + (tiled_source ? tiled : row_major), element_bytes);
    }
  }
}

Bytes reorder(const char* what, const Bytes& source, const TiledLayout& layout,
              std::size_t element_bytes, Source from) {
  const std::size_t bytes = count(layout.rows(), layout.cols()) * element_bytes;
  check_size(what, source.size(), bytes);
  Bytes destination(bytes);
  reorder(source.data(), destination.data(), layout, element_bytes, from);
  return destination;
}

}  // namespace

void to_tiled(const unsigned char* row_major, unsigned char* tiled, const TiledLayout& layout,
              std::size_t element_bytes) {
  reorder(row_major, tiled, layout, element_bytes, Source::RowMajor);
}

void to_row_major(const unsigned char* tiled, unsigned char* row_major, const TiledLayout& layout,
                  std::size_t element_bytes) {
  reorder(tiled, row_major, layout, element_bytes, Source::Tiled);
}

Bytes to_tiled(const Bytes& row_major, const TiledLayout& layout, std::size_t element_bytes) {
  return reorder("to_tiled", row_major, layout, element_bytes, Source::RowMajor);
}

Bytes to_row_major(const Bytes& tiled, const TiledLayout& layout, std::size_t element_bytes) {
  return reorder("to_row_major", tiled, layout, element_bytes, Source::Tiled);
}

TiledLayout layout_a(const GemmShape& shape, const GemmConfig& tiles) {
  return TiledLayout(shape.m, shape.k, tiles.tile_m, tiles.tile_k);
}

TiledLayout layout_b(const GemmShape& shape, const GemmConfig& tiles) {
  return TiledLayout(shape.k, shape.n, tiles.tile_k, tiles.tile_n);
}

TiledLayout layout_c(const GemmShape& shape, const GemmConfig& tiles) {
  return TiledLayout(shape.m, shape.n, tiles.tile_m, tiles.tile_n);
}

void reference_gemm(const GemmShape& shape, const GemmConfig& tiles, ElementType in,
                    ElementType out, const unsigned char* a, const unsigned char* b,
                    unsigned char* c) {
  const TiledLayout la = layout_a(shape, tiles);
  const TiledLayout lb = layout_b(shape, tiles);
  const TiledLayout lc = layout_c(shape, tiles);
  const std::vector<float> av = load_row_major(a, la, in);
  const std::vector<float> bv = load_row_major(b, lb, in);
  const std::size_t n = static_cast<std::size_t>(shape.n);
  std::vector<float> row(n);
  for (std::int64_t i = 0; i < shape.m; ++i) {
    std::fill(row.begin(), row.end(), 0.0f);
    // k outermost inside the row: every C(i, j) still accumulates in ascending k.
    for (std::int64_t k = 0; k < shape.k; ++k) {
      const float aik = av[count(i, shape.k) + static_cast<std::size_t>(k)];
      const float* bk = &bv[count(k, shape.n)];
      for (std::size_t j = 0; j < n; ++j) row[j] += aik * bk[j];
    }
    for (std::size_t j = 0; j < n; ++j) {
      store_element(c, static_cast<std::size_t>(lc.offset(i, static_cast<std::int64_t>(j))), out,
                    row[j]);
    }
  }
}

Bytes reference_gemm(const GemmShape& shape, const GemmConfig& tiles, ElementType in,
                     ElementType out, const Bytes& a, const Bytes& b) {
  const std::size_t in_bytes = element_bytes(in);
  check_size("reference_gemm A", a.size(), count(shape.m, shape.k) * in_bytes);
  check_size("reference_gemm B", b.size(), count(shape.k, shape.n) * in_bytes);
  Bytes c(count(shape.m, shape.n) * element_bytes(out));
  reference_gemm(shape, tiles, in, out, a.data(), b.data(), c.data());
  return c;
}

}  // namespace t3
