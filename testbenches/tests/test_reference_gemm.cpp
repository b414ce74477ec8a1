// The golden reference GEMM and the row-major <-> tiled conversions, against a naive row-major
// triple loop computed here.
#include <catch2/catch.hpp>

#include <cstring>
#include <random>
#include <stdexcept>

#include "harness/reference_gemm.h"
#include "tlm_interconnect/element.h"

using namespace t3;

namespace {

// Row-major buffer of `type` holding integers in [-limit, limit] (exact in every format for
// limit <= 256).
Bytes random_integers(std::int64_t rows, std::int64_t cols, ElementType type, unsigned seed,
                      int limit = 4) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> value(-limit, limit);
  Bytes out(static_cast<std::size_t>(rows * cols) * element_bytes(type));
  for (std::int64_t i = 0; i < rows * cols; ++i) {
    store_element(out.data(), static_cast<std::size_t>(i), type, static_cast<float>(value(rng)));
  }
  return out;
}

// C = A x B on row-major buffers, in double (exact for these integers), as floats.
std::vector<float> naive_gemm(const GemmShape& s, const Bytes& a, const Bytes& b,
                              ElementType type) {
  std::vector<float> c(static_cast<std::size_t>(s.m * s.n));
  for (std::int64_t i = 0; i < s.m; ++i) {
    for (std::int64_t j = 0; j < s.n; ++j) {
      double sum = 0;
      for (std::int64_t k = 0; k < s.k; ++k) {
        sum += double(load_element(a.data(), static_cast<std::size_t>(i * s.k + k), type)) *
               double(load_element(b.data(), static_cast<std::size_t>(k * s.n + j), type));
      }
      c[static_cast<std::size_t>(i * s.n + j)] = static_cast<float>(sum);
    }
  }
  return c;
}

// Runs the reference on tiled copies of row-major A and B; returns C converted back to row-major.
Bytes run_reference(const GemmShape& s, const GemmConfig& tiles, ElementType in, ElementType out,
                    const Bytes& a_rows, const Bytes& b_rows) {
  const Bytes a = to_tiled(a_rows, layout_a(s, tiles), element_bytes(in));
  const Bytes b = to_tiled(b_rows, layout_b(s, tiles), element_bytes(in));
  const Bytes c = reference_gemm(s, tiles, in, out, a, b);
  return to_row_major(c, layout_c(s, tiles), element_bytes(out));
}

}  // namespace

TEST_CASE("reference gemm: to_tiled places tiles contiguously and to_row_major inverts it") {
  // 4 x 4 fp32, 2 x 2 tiles: tiles (0,0) (0,1) (1,0) (1,1), each row-major.
  const TiledLayout layout(4, 4, 2, 2);
  Bytes rows(16 * 4);
  for (int i = 0; i < 16; ++i) store_element(rows.data(), i, ElementType::Fp32, float(i));
  const Bytes tiled = to_tiled(rows, layout, 4);
  const std::vector<float> expected{0, 1, 4, 5, 2, 3, 6, 7, 8, 9, 12, 13, 10, 11, 14, 15};
  for (int i = 0; i < 16; ++i)
    CHECK(load_element(tiled.data(), i, ElementType::Fp32) == expected[i]);
  CHECK(to_row_major(tiled, layout, 4) == rows);
  // A ragged matrix round-trips too.
  const TiledLayout ragged(37, 29, 8, 5);
  const Bytes data = random_integers(37, 29, ElementType::Fp16, 7);
  CHECK(to_row_major(to_tiled(data, ragged, 2), ragged, 2) == data);
  CHECK(to_tiled(data, ragged, 2) != data);
  CHECK_THROWS_AS(to_tiled(Bytes(10), ragged, 2), std::invalid_argument);
}

TEST_CASE("reference gemm: integer-valued fp32 equals a naive row-major triple loop") {
  const GemmShape s{37, 29, 23};  // no dimension a multiple of its tile
  const GemmConfig tiles{8, 5, 6};
  const Bytes a = random_integers(s.m, s.k, ElementType::Fp32, 1);
  const Bytes b = random_integers(s.k, s.n, ElementType::Fp32, 2);
  const std::vector<float> expected = naive_gemm(s, a, b, ElementType::Fp32);
  const Bytes c = run_reference(s, tiles, ElementType::Fp32, ElementType::Fp32, a, b);
  REQUIRE(c.size() == expected.size() * 4);
  int nonzero = 0;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    INFO("element " << i);
    REQUIRE(load_element(c.data(), i, ElementType::Fp32) == expected[i]);
    nonzero += expected[i] != 0;
  }
  CHECK(nonzero > int(expected.size()) / 2);  // the data is not trivially zero
}

TEST_CASE("reference gemm: fp16 and bf16 inputs and outputs round like the element formats") {
  const GemmShape s{20, 33, 40};
  const GemmConfig tiles{16, 8, 16};
  for (const ElementType in : {ElementType::Fp16, ElementType::Bf16}) {
    for (const ElementType out : {ElementType::Fp32, ElementType::Fp16, ElementType::Bf16}) {
      INFO(to_string(in) << " -> " << to_string(out));
      // |sum| <= 40 * 16 * 16 = 10240: exact in fp32; fp16 rounds above 2048, bf16 above 256.
      const Bytes a = random_integers(s.m, s.k, in, 3, 16);
      const Bytes b = random_integers(s.k, s.n, in, 4, 16);
      const std::vector<float> exact = naive_gemm(s, a, b, in);
      const Bytes c = run_reference(s, tiles, in, out, a, b);
      REQUIRE(c.size() == exact.size() * element_bytes(out));
      int rounded = 0;
      for (std::size_t i = 0; i < exact.size(); ++i) {
        INFO("element " << i << " exact " << exact[i]);
        if (out == ElementType::Fp32) {
          REQUIRE(load_element(c.data(), i, out) == exact[i]);
        } else {
          std::uint16_t bits;
          std::memcpy(&bits, c.data() + 2 * i, 2);
          REQUIRE(bits ==
                  (out == ElementType::Fp16 ? float_to_half(exact[i]) : float_to_bf16(exact[i])));
          rounded += load_element(c.data(), i, out) != exact[i];
        }
      }
      if (out == ElementType::Bf16) CHECK(rounded > 0);  // the rounding path was exercised
    }
  }
}

TEST_CASE("reference gemm: wrong buffer sizes throw invalid_argument") {
  const GemmShape s{4, 4, 4};
  const GemmConfig tiles{2, 2, 2};
  const Bytes ok(16 * 2);
  CHECK_THROWS_AS(reference_gemm(s, tiles, ElementType::Fp16, ElementType::Fp16, Bytes(8), ok),
                  std::invalid_argument);
  CHECK_THROWS_AS(reference_gemm(s, tiles, ElementType::Fp16, ElementType::Fp16, ok, Bytes(64)),
                  std::invalid_argument);
  CHECK(reference_gemm(s, tiles, ElementType::Fp16, ElementType::Fp32, ok, ok).size() == 64);
}
