// Workload layer, pure logic: tiled layout, chunk split, WG orders, model zoo, sublayer shapes and
// GEMM launch programs. Expectations are computed here independently of the code under test.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <functional>
#include <map>
#include <numeric>
#include <set>
#include <stdexcept>

#include "config/system_config.h"
#include "protocol/gemm_layout.h"
#include "workloads/gemm_program.h"
#include "workloads/model_zoo.h"
#include "workloads/sublayer.h"

using namespace t3;
using Catch::Contains;

namespace {

template <typename Error>
std::string error_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const Error& error) {
    return error.what();
  }
  return "no error";
}

bool is_permutation_of_range(std::vector<std::int64_t> ids, std::int64_t size) {
  std::vector<std::int64_t> expected(static_cast<std::size_t>(size));
  std::iota(expected.begin(), expected.end(), 0);
  std::sort(ids.begin(), ids.end());
  return ids == expected;
}

}  // namespace

// ---------------------------------------------------------------------------------- TiledLayout

TEST_CASE("TiledLayout: offsets of a non-multiple-of-tile matrix are a bijection") {
  for (const auto& [rows, cols, th, tw] : std::vector<std::array<std::int64_t, 4>>{{37, 29, 8, 5},
                                                                                   {32, 30, 8, 5},
                                                                                   {3, 4, 8, 5},
                                                                                   {1, 1, 1, 1},
                                                                                   {17, 1, 4, 3},
                                                                                   {1, 19, 2, 7}}) {
    INFO(rows << "x" << cols << " tiles " << th << "x" << tw);
    const TiledLayout layout(rows, cols, th, tw);
    CHECK(layout.elements() == rows * cols);
    std::vector<int> hits(static_cast<std::size_t>(rows * cols), 0);
    for (std::int64_t r = 0; r < rows; ++r) {
      for (std::int64_t c = 0; c < cols; ++c) {
        const std::int64_t offset = layout.offset(r, c);
        REQUIRE(offset >= 0);
        REQUIRE(offset < rows * cols);
        ++hits[static_cast<std::size_t>(offset)];
      }
    }
    CHECK(std::all_of(hits.begin(), hits.end(), [](int n) { return n == 1; }));
  }
}

TEST_CASE("TiledLayout: edge tiles are smaller and the grid covers the matrix") {
  const TiledLayout layout(37, 29, 8, 5);
  REQUIRE(layout.grid_rows() == 5);  // ceil(37 / 8)
  REQUIRE(layout.grid_cols() == 6);  // ceil(29 / 5)
  const std::vector<std::int64_t> heights{8, 8, 8, 8, 5};
  const std::vector<std::int64_t> widths{5, 5, 5, 5, 5, 4};
  for (std::int64_t i = 0; i < 5; ++i) CHECK(layout.tile_height(i) == heights[i]);
  for (std::int64_t j = 0; j < 6; ++j) CHECK(layout.tile_width(j) == widths[j]);
  const TiledLayout small(3, 4, 8, 5);  // one tile larger than the matrix
  CHECK(small.grid_rows() == 1);
  CHECK(small.grid_cols() == 1);
  CHECK(small.tile_height(0) == 3);
  CHECK(small.tile_width(0) == 4);
}

TEST_CASE("TiledLayout: tiles lie one after another, each contiguous and row-major") {
  const std::int64_t rows = 37, cols = 29, th = 8, tw = 5;
  const TiledLayout layout(rows, cols, th, tw);
  // Walk the tiles in storage order (block-rows, then left to right) summing their sizes.
  std::int64_t expected = 0;
  for (std::int64_t tr = 0; tr < layout.grid_rows(); ++tr) {
    for (std::int64_t tc = 0; tc < layout.grid_cols(); ++tc) {
      INFO("tile " << tr << "," << tc);
      const std::int64_t r0 = tr * th, c0 = tc * tw;
      const std::int64_t h = std::min(th, rows - r0), w = std::min(tw, cols - c0);
      CHECK(layout.tile_offset(tr, tc) == expected);
      CHECK(layout.tile_offset(tr, tc) == r0 * cols + h * c0);  // the header's formula
      for (std::int64_t i = 0; i < h; ++i) {
        for (std::int64_t j = 0; j < w; ++j) {
          REQUIRE(layout.offset(r0 + i, c0 + j) == expected + i * w + j);
        }
      }
      expected += h * w;
    }
  }
  CHECK(expected == rows * cols);
}

TEST_CASE("TiledLayout: bad arguments throw invalid_argument") {
  CHECK_THROWS_AS(TiledLayout(0, 4, 2, 2), std::invalid_argument);
  CHECK_THROWS_AS(TiledLayout(4, 0, 2, 2), std::invalid_argument);
  CHECK_THROWS_AS(TiledLayout(4, 4, 0, 2), std::invalid_argument);
  CHECK_THROWS_AS(TiledLayout(4, 4, 2, -1), std::invalid_argument);
  const TiledLayout layout(5, 6, 2, 4);
  CHECK_THROWS_AS(layout.offset(5, 0), std::invalid_argument);
  CHECK_THROWS_AS(layout.offset(0, -1), std::invalid_argument);
  CHECK_THROWS_AS(layout.tile_height(3), std::invalid_argument);
  CHECK_THROWS_AS(layout.tile_width(2), std::invalid_argument);
  CHECK_THROWS_AS(layout.tile_offset(0, 2), std::invalid_argument);
  CHECK_THAT(error_of<std::invalid_argument>([] { TiledLayout(0, 4, 2, 2); }),
             Contains("positive"));
}

// ----------------------------------------------------------------------------------- ChunkSplit

TEST_CASE("ChunkSplit: boundaries of a worked example") {
  const ChunkSplit split(10, 4);  // floor(c * 10 / 4) = 0, 2, 5, 7, 10
  CHECK(split.chunks() == 4);
  const std::vector<std::int64_t> first{0, 2, 5, 7, 10};
  for (std::int64_t c = 0; c <= 4; ++c) CHECK(split.first_tile_row(c) == first[c]);
  const std::vector<std::int64_t> owner{0, 0, 1, 1, 1, 2, 2, 3, 3, 3};
  for (std::int64_t t = 0; t < 10; ++t) CHECK(split.chunk_of(t) == owner[t]);
}

TEST_CASE(
    "ChunkSplit: chunks cover every tile row, sizes differ by at most one, chunk_of inverts") {
  for (std::int64_t rows = 1; rows <= 40; ++rows) {
    for (std::int64_t chunks = 1; chunks <= rows; ++chunks) {
      INFO(rows << " tile rows, " << chunks << " chunks");
      const ChunkSplit split(rows, chunks);
      REQUIRE(split.first_tile_row(0) == 0);
      REQUIRE(split.first_tile_row(chunks) == rows);
      std::int64_t smallest = rows, largest = 0;
      for (std::int64_t c = 0; c < chunks; ++c) {
        const std::int64_t begin = split.first_tile_row(c), end = split.first_tile_row(c + 1);
        // floor(c * R / N) computed a second way: the largest b with b * N <= c * R.
        std::int64_t b = 0;
        while ((b + 1) * chunks <= c * rows) ++b;
        REQUIRE(begin == b);
        smallest = std::min(smallest, end - begin);
        largest = std::max(largest, end - begin);
        for (std::int64_t t = begin; t < end; ++t) REQUIRE(split.chunk_of(t) == c);
      }
      REQUIRE(smallest >= 1);
      REQUIRE(largest - smallest <= 1);
    }
  }
}

TEST_CASE("ChunkSplit: bad arguments throw invalid_argument") {
  CHECK_THROWS_AS(ChunkSplit(4, 0), std::invalid_argument);
  CHECK_THROWS_AS(ChunkSplit(4, 5), std::invalid_argument);
  CHECK_THROWS_AS(ChunkSplit(0, 1), std::invalid_argument);
  CHECK_THAT(error_of<std::invalid_argument>([] { ChunkSplit(4, 5); }), Contains("5"));
  const ChunkSplit split(6, 3);
  CHECK_THROWS_AS(split.first_tile_row(4), std::invalid_argument);
  CHECK_THROWS_AS(split.first_tile_row(-1), std::invalid_argument);
  CHECK_THROWS_AS(split.chunk_of(6), std::invalid_argument);
  CHECK_THROWS_AS(split.chunk_of(-1), std::invalid_argument);
}

// ------------------------------------------------------------------------------------- wg order

TEST_CASE("wg order: row-major and column-major are the expected permutations") {
  CHECK(wg_order(3, 4, WgOrder::RowMajor) ==
        std::vector<std::int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  CHECK(wg_order(3, 4, WgOrder::ColumnMajor) ==
        std::vector<std::int64_t>{0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11});
  for (const WgOrder order : {WgOrder::RowMajor, WgOrder::ColumnMajor}) {
    CHECK(is_permutation_of_range(wg_order(13, 7, order), 13 * 7));
    // chunks and first_chunk are ignored by the plain orders
    CHECK(wg_order(13, 7, order, 4, 3) == wg_order(13, 7, order));
  }
  CHECK(wg_order(5, 3, WgOrder::ChunkStaggered, 1, 0) == wg_order(5, 3, WgOrder::RowMajor));
}

TEST_CASE("wg order: chunk-staggered rotates the chunks per GPU, row-major inside") {
  const std::int64_t grid_rows = 19, grid_cols = 3;  // 19 tile rows: unequal chunks
  for (const std::int64_t n : {2, 4, 8}) {
    for (std::int64_t gpu = 0; gpu < n; ++gpu) {
      for (std::int64_t offset = 0; offset < n; ++offset) {
        const std::int64_t first = (gpu + offset) % n;
        INFO("N " << n << " gpu " << gpu << " offset " << offset);
        const auto ids = wg_order(grid_rows, grid_cols, WgOrder::ChunkStaggered, n, first);
        REQUIRE(is_permutation_of_range(ids, grid_rows * grid_cols));
        // Chunk of a WG, from floor(c * R / N) boundaries computed here.
        auto chunk_of = [&](std::int64_t id) {
          const std::int64_t row = id / grid_cols;
          std::int64_t c = 0;
          while ((c + 1) * grid_rows / n <= row) ++c;
          return c;
        };
        CHECK(chunk_of(ids.front()) == first);
        // The chunk sequence, run by run, is first, first + 1, ... (mod N), each run once.
        std::vector<std::int64_t> runs;
        for (std::size_t i = 0; i < ids.size(); ++i) {
          const std::int64_t c = chunk_of(ids[i]);
          if (runs.empty() || runs.back() != c) {
            runs.push_back(c);
          } else {
            REQUIRE(ids[i] > ids[i - 1]);  // row-major inside a chunk
            REQUIRE(ids[i] == ids[i - 1] + 1);
          }
        }
        REQUIRE(runs.size() == static_cast<std::size_t>(n));
        for (std::int64_t i = 0; i < n; ++i) CHECK(runs[i] == (first + i) % n);
      }
    }
  }
}

TEST_CASE("wg order: bad staggered arguments throw invalid_argument") {
  CHECK_THROWS_AS(wg_order(4, 2, WgOrder::ChunkStaggered, 0, 0), std::invalid_argument);
  CHECK_THROWS_AS(wg_order(4, 2, WgOrder::ChunkStaggered, 5, 0), std::invalid_argument);
  CHECK_THROWS_AS(wg_order(4, 2, WgOrder::ChunkStaggered, 4, 4), std::invalid_argument);
  CHECK_THROWS_AS(wg_order(4, 2, WgOrder::ChunkStaggered, 4, -1), std::invalid_argument);
  CHECK_THROWS_AS(wg_order(0, 2, WgOrder::RowMajor), std::invalid_argument);
  CHECK_THAT(error_of<std::invalid_argument>([] { wg_order(4, 2, WgOrder::ChunkStaggered, 4, 4); }),
             Contains("first_chunk"));
}

// ------------------------------------------------------------------------------------ model zoo

TEST_CASE(
    "model zoo: BERT-Large, CommFuse's MLP and the five paper models load with the published "
    "figures") {
  struct Expected {
    const char* name;
    std::int64_t hidden, layers, heads, seq;
    std::vector<int> tp;
  };
  // REFERENCES.md section 1, the model table; TP degrees from the paper's workload list; heads
  // and sequence lengths from each model's paper (cited in its file). BERT-Large: Devlin et al.
  const std::vector<Expected> expected{
      {"bert-large", 1024, 24, 16, 512, {}},   {"mega-gpt-2", 3072, 72, 32, 1024, {8, 16}},
      {"commfuse-mlp", 4096, 1, 32, 4096, {}}, {"t-nlg", 4256, 78, 28, 1024, {8, 16}},
      {"gpt-3", 12288, 96, 96, 2048, {32}},    {"palm", 18432, 118, 48, 2048, {32}},
      {"mt-nlg", 20480, 105, 128, 2048, {32}}};
  std::vector<std::string> names;
  for (const auto& e : expected) names.push_back(e.name);
  CHECK(model_names() == names);
  for (const auto& e : expected) {
    INFO(e.name);
    const ModelSpec spec = model(e.name);
    CHECK(spec.name == e.name);
    CHECK(spec.hidden == e.hidden);
    CHECK(spec.layers == e.layers);
    CHECK(spec.heads == e.heads);
    CHECK(spec.seq == e.seq);
    CHECK(spec.paper_tp == e.tp);
    // The TP degrees' source, for the models the paper evaluates.
    if (!e.tp.empty()) CHECK_THAT(spec.source, Contains("arXiv 2401.16677"));
    CHECK(spec.source.size() > 40);
  }
}

TEST_CASE("model zoo: an unknown name is a ConfigError listing the known models") {
  const std::string message = error_of<ConfigError>([] { model("gpt-4"); });
  CHECK_THAT(message, Contains("'gpt-4'"));
  for (const char* name :
       {"bert-large", "mega-gpt-2", "commfuse-mlp", "t-nlg", "gpt-3", "palm", "mt-nlg"}) {
    CHECK_THAT(message, Contains(name));
  }
}

TEST_CASE("model zoo: parse_model checks its document") {
  const std::string good =
      R"({"name": "x", "hidden": 64, "layers": 2, "heads": 4, "seq": 8, "paper_tp": [2], "source": "s"})";
  const ModelSpec spec = parse_model(good, "x.json");
  CHECK(spec.hidden == 64);
  CHECK(spec.paper_tp == std::vector<int>{2});
  auto error = [](const std::string& text) {
    return error_of<ConfigError>([&] { parse_model(text, "m.json"); });
  };
  CHECK_THAT(error("{"), Contains("m.json: not valid JSON"));
  CHECK_THAT(
      error(R"({"name": "x", "hidden": 64, "layers": 2, "heads": 4, "seq": 8, "paper_tp": [2],
                      "source": "s", "vocab": 1})"),
      Contains("vocab: unknown key"));
  CHECK_THAT(
      error(
          R"({"name": "x", "hidden": 64, "layers": 2, "seq": 8, "paper_tp": [2], "source": "s"})"),
      Contains("heads: missing"));
  CHECK_THAT(error(R"({"name": "x", "hidden": 0, "layers": 2, "heads": 4, "seq": 8, "paper_tp": [2],
                      "source": "s"})"),
             Contains("hidden: must be positive"));
  CHECK_THAT(
      error(R"({"name": "x", "hidden": "64", "layers": 2, "heads": 4, "seq": 8, "paper_tp": [2],
                      "source": "s"})"),
      Contains("hidden: expected an integer"));
  CHECK_THAT(
      error(R"({"name": "x", "hidden": 64, "layers": 2, "heads": 5, "seq": 8, "paper_tp": [2],
                      "source": "s"})"),
      Contains("not a multiple of heads"));
  CHECK_THAT(error(R"({"name": "x", "hidden": 64, "layers": 2, "heads": 4, "seq": 8, "paper_tp": 2,
                      "source": "s"})"),
             Contains("paper_tp: expected an array"));
  CHECK_THAT(error(R"({"name": "x", "hidden": 64, "layers": 2, "heads": 4, "paper_tp": [2],
                      "source": "s"})"),
             Contains("seq: missing"));
  // A model the paper does not evaluate has no TP degrees.
  CHECK(parse_model(R"({"name": "x", "hidden": 64, "layers": 2, "heads": 4, "seq": 8,
                        "paper_tp": [], "source": "s"})",
                    "x.json")
            .paper_tp.empty());
}

TEST_CASE("model zoo: a model's batch sets the tokens run and compare use by default") {
  // CommFuse's MLP block: batch 32 x sequence 4096.
  const ModelSpec mlp = model("commfuse-mlp");
  CHECK(mlp.batch == 32);
  CHECK(default_tokens(mlp, 8192) == 131072);
  // Models without a batch keep the system's workload.tokens.
  CHECK(model("t-nlg").batch == 0);
  CHECK(default_tokens(model("t-nlg"), 8192) == 8192);
  // Its FC-2 at TP 4: the row-parallel second GEMM, K = 4H / 4 = H.
  const GemmShape fc2 = sublayer_gemm(mlp, Sublayer::Fc2, 4, default_tokens(mlp, 8192));
  CHECK(fc2.m == 131072);
  CHECK(fc2.n == 4096);
  CHECK(fc2.k == 4096);
  auto error = [](const std::string& text) {
    return error_of<ConfigError>([&] { parse_model(text, "m.json"); });
  };
  CHECK_THAT(error(R"({"name": "x", "hidden": 64, "layers": 2, "heads": 4, "seq": 8, "batch": 0,
                      "paper_tp": [], "source": "s"})"),
             Contains("m.json: batch: must be positive"));
}

// ------------------------------------------------------------------------------------- sublayer

TEST_CASE("sublayer: names round-trip and unknown names list the valid ones") {
  const std::vector<std::string> names{"op", "fc2", "fc1", "ip"};
  const auto all = all_sublayers();
  REQUIRE(all.size() == 4);
  for (std::size_t i = 0; i < all.size(); ++i) {
    CHECK(to_string(all[i]) == names[i]);
    CHECK(parse_sublayer(names[i]) == all[i]);
  }
  CHECK(parse_sublayer("op") == Sublayer::OutputProjection);
  CHECK(parse_sublayer("ip") == Sublayer::InputProjectionBackward);
  const std::string message = error_of<ConfigError>([] { parse_sublayer("qkv"); });
  CHECK_THAT(message, Contains("'qkv'"));
  for (const auto& name : names) CHECK_THAT(message, Contains(name));
}

TEST_CASE("sublayer: per-GPU GEMM shapes follow Megatron-style TP") {
  CHECK(sublayer_gemm(model("t-nlg"), Sublayer::Fc2, 8, 8192) == GemmShape{8192, 4256, 2128});
  CHECK(sublayer_gemm(model("gpt-3"), Sublayer::OutputProjection, 32, 8192) ==
        GemmShape{8192, 12288, 384});
  CHECK(sublayer_gemm(model("mega-gpt-2"), Sublayer::InputProjectionBackward, 16, 2048) ==
        GemmShape{2048, 3072, 576});  // 3 * 3072 / 16
  CHECK(sublayer_gemm(model("mt-nlg"), Sublayer::Fc1Backward, 32, 4096) ==
        GemmShape{4096, 20480, 2560});  // 4 * 20480 / 32
  // Every model at each of its paper TP degrees has integral shapes for all four sublayers.
  const std::map<Sublayer, std::int64_t> factor{{Sublayer::OutputProjection, 1},
                                                {Sublayer::Fc2, 4},
                                                {Sublayer::Fc1Backward, 4},
                                                {Sublayer::InputProjectionBackward, 3}};
  for (const auto& name : model_names()) {
    const ModelSpec spec = model(name);
    for (const int tp : spec.paper_tp) {
      for (const Sublayer sublayer : all_sublayers()) {
        INFO(name << " " << to_string(sublayer) << " tp " << tp);
        const GemmShape shape = sublayer_gemm(spec, sublayer, tp, 1000);
        CHECK(shape.m == 1000);
        CHECK(shape.n == spec.hidden);
        CHECK(shape.k * tp == factor.at(sublayer) * spec.hidden);
      }
    }
  }
}

TEST_CASE("sublayer: an indivisible K is a ConfigError naming model, sublayer and tp") {
  const ModelSpec tnlg = model("t-nlg");  // H = 4256 = 2^5 * 7 * 19
  const std::string message =
      error_of<ConfigError>([&] { sublayer_gemm(tnlg, Sublayer::OutputProjection, 3, 8192); });
  CHECK_THAT(message, Contains("t-nlg"));
  CHECK_THAT(message, Contains("op"));
  CHECK_THAT(message, Contains("tp 3"));
  // the same tp divides 3H, so IP is fine: the factor is part of the check
  CHECK(sublayer_gemm(tnlg, Sublayer::InputProjectionBackward, 3, 8192).k == 4256);
  CHECK_THROWS_AS(sublayer_gemm(tnlg, Sublayer::OutputProjection, 64, 8192), ConfigError);
  CHECK(sublayer_gemm(tnlg, Sublayer::Fc2, 64, 8192).k == 266);  // 4H / 64 divides
  CHECK_THROWS_AS(sublayer_gemm(tnlg, Sublayer::Fc2, 0, 8192), ConfigError);
  CHECK_THROWS_AS(sublayer_gemm(tnlg, Sublayer::Fc2, 8, 0), ConfigError);
}

TEST_CASE("custom shape: M,N,K parses to the GEMM every GPU runs, whatever the tp") {
  CHECK(parse_gemm_shape("8192,4256,2128") == GemmShape{8192, 4256, 2128});
  // The zoo's T-NLG FC-2 at TP 8 is that shape: the custom path stands in for it.
  const GemmShape shape = parse_gemm_shape("8192,4256,2128");
  CHECK(workload_gemm(kCustom, Sublayer::Fc2, shape, 8, 8192) ==
        sublayer_gemm(model("t-nlg"), Sublayer::Fc2, 8, 8192));
  CHECK(workload_gemm(kCustom, Sublayer::Fc2, shape, 32, 8192) == shape);
  CHECK(workload_gemm("t-nlg", Sublayer::Fc2, std::nullopt, 8, 8192) == shape);
  CHECK(shape_text(shape) == "8192x4256x2128");
}

TEST_CASE("custom shape: anything but three positive integers is a ConfigError naming it") {
  for (const char* bad : {"", "1,2", "1,2,3,4", "0,2,3", "1,-2,3", "1,2,x", "1, 2,3", "1,,3",
                          "1.5,2,3", "2147483648,1,1"}) {
    INFO(bad);
    const std::string message = error_of<ConfigError>([&] { parse_gemm_shape(bad); });
    CHECK_THAT(message, Contains("shape '" + std::string(bad) + "'"));
  }
  CHECK_THAT(error_of<ConfigError>([] { parse_gemm_shape("1,0,3"); }),
             Contains("'0' is not a positive integer"));
  CHECK(parse_gemm_shape("2147483647,1,1").m == 2147483647);
}

TEST_CASE("custom shape: operands larger than one GPU's HBM are refused naming the shape") {
  SystemConfig config;
  config.hbm.capacity_bytes = 1ull << 30;
  check_fits(config, {8192, 4256, 2128});  // 122 MB
  const std::string message = error_of<ConfigError>([&] {
    check_fits(config, {32768, 32768, 32768});
  });  // 6.4 GB
  CHECK_THAT(message, Contains("32768x32768x32768"));
  CHECK_THAT(message, Contains("hbm.capacity_bytes"));
}

// --------------------------------------------------------------------------------- gemm program

namespace {

GemmLaunch sample_launch() {
  GemmLaunch launch;
  launch.shape = GemmShape{1000, 768, 96};  // 1000 / 128 -> 8 tile rows
  launch.tiles = GemmConfig{128, 64, 32};
  launch.element = ElementType::Bf16;
  launch.out_element = ElementType::Fp32;
  launch.dispatcher = 0xff00000001002000ull;
  launch.a = 0x0000012345678000ull;
  launch.b = 0x0000020000001000ull;
  launch.order = WgOrder::ChunkStaggered;
  launch.chunks = 4;
  launch.first_chunk = 2;
  for (int c = 0; c < 4; ++c) {
    launch.outputs.push_back(OutputChunk{0x0000030000000000ull + 0x100000ull * c + 0x40,
                                         c == 3 ? OutputOp::Store : OutputOp::Update,
                                         c == 0 ? 1u : 3u});
  }
  launch.label = "fc2 gpu1";
  return launch;
}

}  // namespace

TEST_CASE("gemm program: writes the documented registers, then the doorbell, then waits") {
  const GemmLaunch launch = sample_launch();
  const Program program = gemm_program(launch);
  const auto& commands = program.commands;
  const std::uint64_t base = launch.dispatcher;
  // 16 descriptor registers, 4 per output chunk, doorbell, wait.
  REQUIRE(commands.size() == 16 + 4 * 4 + 2);
  std::map<std::uint64_t, std::uint32_t> written;
  for (std::size_t i = 0; i + 1 < commands.size(); ++i) {
    REQUIRE(commands[i].kind == HostCommand::Kind::WriteRegister);
    REQUIRE(commands[i].address >= base);
    REQUIRE(written.count(commands[i].address - base) == 0);  // each register once
    written[commands[i].address - base] = commands[i].value;
  }
  for (const auto& command : commands) {
    CHECK_THAT(command.note, Contains("fc2 gpu1"));
    CHECK(command.note.size() > std::string("fc2 gpu1: ").size());
  }
  // Offsets as docs/registers.md and dispatcher_registers.h give them, written out here.
  CHECK(written.at(0x010) == 1);            // kernel = GEMM
  CHECK(written.at(0x014) == 1000);         // M
  CHECK(written.at(0x018) == 768);          // N
  CHECK(written.at(0x01c) == 96);           // K
  CHECK(written.at(0x020) == 128);          // tile M
  CHECK(written.at(0x024) == 64);           // tile N
  CHECK(written.at(0x028) == 32);           // tile K
  CHECK(written.at(0x02c) == 2);            // A/B bf16
  CHECK(written.at(0x030) == 0);            // output fp32
  CHECK(written.at(0x034) == 2);            // chunk-staggered
  CHECK(written.at(0x038) == 4);            // chunks
  CHECK(written.at(0x03c) == 2);            // first chunk
  CHECK(written.at(0x040) == 0x45678000u);  // A low
  CHECK(written.at(0x044) == 0x123u);       // A high
  CHECK(written.at(0x048) == 0x00001000u);  // B low
  CHECK(written.at(0x04c) == 0x200u);       // B high
  for (std::uint64_t c = 0; c < 4; ++c) {
    INFO("chunk " << c);
    const std::uint64_t entry = 0x100 + 0x10 * c;
    CHECK(written.at(entry + 0x0) == 0x100000u * c + 0x40);  // base low
    CHECK(written.at(entry + 0x4) == 0x300u);                // base high
    CHECK(written.at(entry + 0x8) == (c == 3 ? 0u : 1u));    // op: update except the last
    CHECK(written.at(entry + 0xc) == (c == 0 ? 1u : 3u));    // flags
  }
  CHECK(written.count(0x140) == 0);  // no entry beyond the chunks
  // The doorbell comes after every descriptor write; then the wait on the block base.
  const HostCommand& doorbell = commands[commands.size() - 2];
  CHECK(doorbell.address == base + 0x008);
  CHECK(doorbell.value == 1);
  const HostCommand& wait = commands.back();
  CHECK(wait.kind == HostCommand::Kind::WaitKernel);
  CHECK(wait.address == base);
}

TEST_CASE("gemm program: append_gemm chains launches and a plain GEMM has one store chunk") {
  GemmLaunch launch = sample_launch();
  launch.order = WgOrder::RowMajor;
  launch.chunks = 1;
  launch.first_chunk = 0;
  launch.outputs = single_output(0x5000);
  Program program;
  append_gemm(program, launch);
  append_gemm(program, launch);
  REQUIRE(program.commands.size() == 2 * (16 + 4 + 2));
  CHECK(program.commands[21].kind == HostCommand::Kind::WaitKernel);
  CHECK(program.commands[22].address == launch.dispatcher + 0x010);
  const auto& c0 = program.commands[16];  // first output-map write
  CHECK(c0.address == launch.dispatcher + 0x100);
  CHECK(c0.value == 0x5000u);
  CHECK(program.commands[18].value == 0u);  // store
  CHECK(program.commands[19].value == 0u);  // no flags
}

TEST_CASE("gemm program: bad launches throw invalid_argument") {
  auto error = [](const std::function<void(GemmLaunch&)>& edit) {
    GemmLaunch launch = sample_launch();
    edit(launch);
    return error_of<std::invalid_argument>([&] { gemm_program(launch); });
  };
  CHECK(error([](GemmLaunch&) {}) == "no error");
  CHECK_THAT(error([](GemmLaunch& l) { l.shape.m = 0; }), Contains("M = 0"));
  CHECK_THAT(error([](GemmLaunch& l) { l.shape.k = 1ll << 32; }), Contains("K = 4294967296"));
  CHECK_THAT(error([](GemmLaunch& l) { l.tiles.tile_n = 0; }), Contains("tile_n"));
  CHECK_THAT(error([](GemmLaunch& l) { l.outputs.pop_back(); }), Contains("3 entries for 4"));
  CHECK_THAT(error([](GemmLaunch& l) { l.first_chunk = 4; }), Contains("first_chunk"));
  CHECK_THAT(error([](GemmLaunch& l) {
               l.chunks = 9;  // 8 tile rows
               l.outputs.resize(9);
             }),
             Contains("chunks = 9"));
  CHECK_THAT(error([](GemmLaunch& l) {
               l.shape.m = 128 * 100;
               l.chunks = 65;  // above the dispatcher's 64 entries
               l.outputs.resize(65);
             }),
             Contains("chunks = 65"));
  CHECK_THAT(error([](GemmLaunch& l) { l.order = static_cast<WgOrder>(9); }), Contains("WG order"));
}

TEST_CASE("gemm program: element sizes and buffer plans") {
  CHECK(bytes_of(ElementType::Fp32, 10) == 40);
  CHECK(bytes_of(ElementType::Fp16, 10) == 20);
  CHECK(bytes_of(ElementType::Bf16, 10) == 20);
  CHECK(bytes_of(ElementType::Fp16, 0) == 0);
  CHECK_THROWS_AS(bytes_of(ElementType::Fp32, -1), std::invalid_argument);

  const std::uint64_t hbm = (1ull << 40) + 0x123;  // an unaligned start
  const GemmShape shape{1000, 770, 96};
  const GemmBuffers buffers = plan_buffers(hbm, shape, 2, 4);
  CHECK(buffers.a_bytes == 1000ull * 96 * 2);
  CHECK(buffers.b_bytes == 96ull * 770 * 2);
  CHECK(buffers.c_bytes == 1000ull * 770 * 4);
  struct Range {
    std::uint64_t begin, bytes;
  };
  const std::vector<Range> ranges{
      {buffers.a, buffers.a_bytes}, {buffers.b, buffers.b_bytes}, {buffers.c, buffers.c_bytes}};
  for (std::size_t i = 0; i < ranges.size(); ++i) {
    CHECK(ranges[i].begin % 4096 == 0);
    CHECK(ranges[i].begin >= hbm);
    CHECK(ranges[i].begin + ranges[i].bytes <= buffers.end);
    for (std::size_t j = i + 1; j < ranges.size(); ++j) {
      const bool disjoint = ranges[i].begin + ranges[i].bytes <= ranges[j].begin ||
                            ranges[j].begin + ranges[j].bytes <= ranges[i].begin;
      CHECK(disjoint);
    }
  }
  CHECK(buffers.end % 4096 == 0);
  CHECK(buffers.a - hbm < 4096);  // packed: no more than alignment padding
  CHECK(buffers.end - buffers.a < buffers.a_bytes + buffers.b_bytes + buffers.c_bytes + 3 * 4096);
  CHECK_THROWS_AS(plan_buffers(0, GemmShape{0, 1, 1}, 2, 2), std::invalid_argument);
  CHECK_THROWS_AS(plan_buffers(0, GemmShape{1, 1, 1}, 0, 2), std::invalid_argument);
}
