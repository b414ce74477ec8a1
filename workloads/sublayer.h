// The four communication-heavy transformer sublayers T3 evaluates, and the per-GPU GEMM each runs
// under Megatron-style tensor parallelism (REFERENCES.md section 1). Plain C++, no SystemC.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config/system_config.h"
#include "protocol/gemm_layout.h"
#include "workloads/model_zoo.h"

namespace t3 {

// Each produces a T x H partial-sum output that must be all-reduced across the TP group.
enum class Sublayer {
  OutputProjection,         // "op":  attention output projection, forward
  Fc2,                      // "fc2": second MLP layer, forward
  Fc1Backward,              // "fc1": first MLP layer, backward (input gradient)
  InputProjectionBackward,  // "ip":  attention input (QKV) projection, backward (input gradient)
  // "fc1-ag": first MLP layer, forward, under sequence parallelism: the T x H input is held as
  // T / p rows per GPU and all-gathered before the column-parallel GEMM (T x 4H/p, K = H), whose
  // output needs no reduction. CommFuse's Flash-AG overlaps that all-gather (REFERENCES section 2).
  Fc1AllGather,
};

// The four T3 evaluates (each all-reduces its output), in the order above: what sweeps run.
std::vector<Sublayer> all_sublayers();
// Every sublayer there is: the four, then fc1-ag.
std::vector<Sublayer> known_sublayers();
// Whether the sublayer all-gathers its GEMM's input (fc1-ag) instead of reducing its output.
bool gathers_input(Sublayer sublayer);

// "op", "fc2", "fc1", "ip", "fc1-ag".
const char* to_string(Sublayer sublayer);

// The inverse of to_string; anything else throws ConfigError listing the valid names.
Sublayer parse_sublayer(const std::string& name);

// K = factor * H / p: 1 (op), 4 (fc2), 4 (fc1), 3 (ip); fc1-ag: N = 4 H / p, so 4.
std::int64_t k_factor(Sublayer sublayer);

// The GEMM one GPU of a `tp`-way group runs: {M, N, K} = {tokens, H, factor * H / tp}, or for
// fc1-ag {tokens, 4 H / tp, H}. Throws ConfigError naming the model, sublayer and tp if factor * H
// is not divisible by tp, or if tp or tokens is below 1.
GemmShape sublayer_gemm(const ModelSpec& model, Sublayer sublayer, int tp, std::int64_t tokens);

// A custom GEMM (--shape M,N,K) instead of a zoo model's sublayer: M x N x K on each GPU, fp16,
// its M x N output all-reduced across the group like a row-parallel sublayer's (fc2), so it runs
// under every scenario fc2 does. M is its token count. Results name its model and its sublayer
// kCustom.
inline constexpr const char* kCustom = "custom";

// "M,N,K": three positive integers; anything else throws ConfigError naming the text.
GemmShape parse_gemm_shape(const std::string& text);

// "8192x4256x2128".
std::string shape_text(const GemmShape& shape);

// Throws ConfigError naming the shape if its fp16 A, B and C do not fit in one GPU's HBM (a
// custom shape's check; the planners lay the operands out without one).
void check_fits(const SystemConfig& config, const GemmShape& shape);

// The GEMM one GPU runs: `custom` if given, else sublayer_gemm of the zoo model `model_name`.
GemmShape workload_gemm(const std::string& model_name, Sublayer sublayer,
                        const std::optional<GemmShape>& custom, int tp, std::int64_t tokens);

}  // namespace t3
