// One transformer layer's kernels under Megatron tensor parallelism
// (workloads/transformer_layer.h): the kernel list forward and backward against Megatron's (names,
// shapes, which outputs are all-reduced), the all-reduced GEMMs against the T3 sublayers, the bytes
// of the memory-bound kernels, and the errors.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "config/system_config.h"
#include "workloads/transformer_layer.h"

using namespace t3;
using Catch::Contains;

namespace {

std::vector<std::string> names(const std::vector<LayerKernel>& kernels) {
  std::vector<std::string> out;
  for (const auto& kernel : kernels) out.push_back(kernel.name);
  return out;
}

const LayerKernel& find(const std::vector<LayerKernel>& kernels, const std::string& name) {
  const auto it = std::find_if(kernels.begin(), kernels.end(),
                               [&](const LayerKernel& k) { return k.name == name; });
  if (it == kernels.end()) FAIL("no kernel " << name);
  return *it;
}

const std::vector<std::string> kForward = {"layernorm_1",
                                           "qkv",
                                           "attention_scores",
                                           "softmax",
                                           "attention_dropout",
                                           "attention_context",
                                           "op",
                                           "dropout_residual_1",
                                           "layernorm_2",
                                           "fc1",
                                           "gelu",
                                           "fc2",
                                           "dropout_residual_2"};
const std::vector<std::string> kBackward = {"dropout_residual_2_bwd",
                                            "fc2_dgrad",
                                            "fc2_wgrad",
                                            "gelu_bwd",
                                            "fc1_dgrad",
                                            "fc1_wgrad",
                                            "layernorm_2_bwd",
                                            "residual_grad_2",
                                            "dropout_residual_1_bwd",
                                            "op_dgrad",
                                            "op_wgrad",
                                            "attention_context_dgrad_probs",
                                            "attention_context_dgrad_values",
                                            "attention_dropout_bwd",
                                            "softmax_bwd",
                                            "attention_scores_dgrad_q",
                                            "attention_scores_dgrad_k",
                                            "qkv_dgrad",
                                            "qkv_wgrad",
                                            "layernorm_1_bwd",
                                            "residual_grad_1"};

}  // namespace

TEST_CASE("a training layer's kernels are Megatron's, forward then backward, at TP 2 and 8",
          "[transformer_layer]") {
  const ModelSpec gpt = model("mega-gpt-2");  // H 3072, 32 heads
  const LayerShape shape{4, 1024};            // 4096 tokens
  for (int tp : {2, 8}) {
    INFO("tp " << tp);
    const auto kernels = transformer_layer(gpt, tp, shape, LayerPhase::Training);
    std::vector<std::string> expected = kForward;
    expected.insert(expected.end(), kBackward.begin(), kBackward.end());
    CHECK(names(kernels) == expected);

    const std::int64_t t = 4096, h = 3072, p = tp, heads = 4 * 32 / p, d = 96, s = 1024;
    const std::map<std::string, GemmShape> gemms = {{"qkv", {t, 3 * h / p, h}},
                                                    {"op", {t, h, h / p}},
                                                    {"fc1", {t, 4 * h / p, h}},
                                                    {"fc2", {t, h, 4 * h / p}},
                                                    {"fc2_dgrad", {t, 4 * h / p, h}},
                                                    {"fc2_wgrad", {4 * h / p, h, t}},
                                                    {"fc1_dgrad", {t, h, 4 * h / p}},
                                                    {"fc1_wgrad", {h, 4 * h / p, t}},
                                                    {"op_dgrad", {t, h / p, h}},
                                                    {"op_wgrad", {h / p, h, t}},
                                                    {"qkv_dgrad", {t, h, 3 * h / p}},
                                                    {"qkv_wgrad", {h, 3 * h / p, t}},
                                                    {"attention_scores", {s, s, d}},
                                                    {"attention_context", {s, d, s}},
                                                    {"attention_scores_dgrad_q", {s, d, s}}};
    for (const auto& [name, shape_expected] : gemms) {
      INFO(name);
      const LayerKernel& kernel = find(kernels, name);
      CHECK(kernel.gemm == shape_expected);
      CHECK(kernel.batch == (name.rfind("attention", 0) == 0 ? heads : 1));
    }
    // Only the row-parallel outputs forward and the column-parallel data gradients backward are
    // partial sums, and they are the T3 paper's four sublayers, of the same shapes.
    std::map<std::string, Sublayer> reduced;
    for (const auto& kernel : kernels) {
      if (kernel.all_reduced) reduced[kernel.name] = *kernel.sublayer;
      CHECK(kernel.all_reduced == kernel.sublayer.has_value());
    }
    const std::map<std::string, Sublayer> expected_reduced = {
        {"op", Sublayer::OutputProjection},
        {"fc2", Sublayer::Fc2},
        {"fc1_dgrad", Sublayer::Fc1Backward},
        {"qkv_dgrad", Sublayer::InputProjectionBackward}};
    CHECK(reduced == expected_reduced);
    for (const auto& [name, sublayer] : expected_reduced) {
      CHECK(find(kernels, name).gemm == sublayer_gemm(gpt, sublayer, tp, t));
    }
  }
}

TEST_CASE("inference runs the forward kernels without dropout, fused attention is one kernel",
          "[transformer_layer]") {
  const ModelSpec tnlg = model("t-nlg");  // H 4256, 28 heads
  const auto inference = transformer_layer(tnlg, 4, {2, 2048}, LayerPhase::Inference);
  CHECK(names(inference) == std::vector<std::string>{"layernorm_1", "qkv", "attention_scores",
                                                     "softmax", "attention_context", "op",
                                                     "residual_1", "layernorm_2", "fc1", "gelu",
                                                     "fc2", "residual_2"});
  const auto fused = transformer_layer(tnlg, 4, {2, 2048}, LayerPhase::Training, true);
  CHECK(std::count_if(fused.begin(), fused.end(), [](const LayerKernel& k) {
          return k.kind == KernelClass::Attention;
        }) == 2);  // forward and backward
  const LayerKernel& attention = find(fused, "attention");
  // Both attention GEMMs per local (sequence, head) pair: 2 x 2 x 7 of seq x seq x d.
  CHECK(attention.batch == 2 * 2 * 7);
  CHECK(attention.gemm == GemmShape{2048, 2048, 152});
  // It reads Q, K and V and writes the context: no seq x seq matrix in memory.
  const std::uint64_t local = 2ull * 2048 * 4256 / 4 * 2;
  CHECK(attention.bytes_read == 3 * local);
  CHECK(attention.bytes_written == local);
  CHECK(find(fused, "attention_bwd").batch == 5 * 2 * 7);
}

TEST_CASE("memory-bound kernels move the bytes their shapes imply", "[transformer_layer]") {
  const ModelSpec gpt = model("gpt-3");  // H 12288, 96 heads
  const int tp = 8;
  const std::uint64_t t = 2 * 2048, h = 12288, heads = 2 * 96 / tp, s = 2048;
  const auto kernels = transformer_layer(gpt, tp, {2, 2048}, LayerPhase::Training);
  const std::uint64_t th = t * h * 2;  // fp16 bytes of a T x H activation
  CHECK(find(kernels, "layernorm_1").bytes_read == th);
  CHECK(find(kernels, "layernorm_1").bytes_written == th);
  CHECK(find(kernels, "gelu").bytes_read == t * 4 * h / tp * 2);
  CHECK(find(kernels, "gelu_bwd").bytes_read == 2 * t * 4 * h / tp * 2);
  CHECK(find(kernels, "softmax").bytes_written == heads * s * s * 2);
  // Training dropouts keep a one-byte mask per element, which their backward reads.
  CHECK(find(kernels, "dropout_residual_1").bytes_read == 2 * th);
  CHECK(find(kernels, "dropout_residual_1").bytes_written == th + t * h);
  CHECK(find(kernels, "dropout_residual_1_bwd").bytes_read == th + t * h);
  CHECK(find(kernels, "attention_dropout").bytes_written == heads * s * s * 3);
  for (const auto& kernel : kernels) {
    INFO(kernel.name);
    CHECK((kernel.kind == KernelClass::MemoryBound) == (kernel.batch == 0));
  }
}

TEST_CASE("a layer that cannot be split is refused naming the value", "[transformer_layer]") {
  const ModelSpec tnlg = model("t-nlg");  // 28 heads
  CHECK_THROWS_WITH(transformer_layer(tnlg, 8, {1, 1024}, LayerPhase::Training),
                    Contains("28 heads are not divisible by tp 8"));
  CHECK_THROWS_WITH(transformer_layer(tnlg, 0, {1, 1024}, LayerPhase::Training),
                    Contains("tp must be at least 1"));
  CHECK_THROWS_WITH(transformer_layer(tnlg, 4, {0, 1024}, LayerPhase::Training),
                    Contains("batch 0"));
  ModelSpec odd = tnlg;
  odd.heads = 30;
  CHECK_THROWS_WITH(transformer_layer(odd, 2, {1, 1024}, LayerPhase::Training),
                    Contains("hidden 4256 is not divisible by its 30 heads"));
  CHECK_THROWS_WITH(parse_layer_phase("decode"), Contains("training, inference"));
}
