// One transformer layer under Megatron-style tensor parallelism (Shoeybi et al., Megatron-LM,
// arXiv 1909.08053, section 3) as the list of kernels one GPU of a `tp`-way group runs, forward
// and (for training) backward. Plain data, no SystemC: what a layer is made of, for the model
// views that run it kernel by kernel.
//
// Per GPU, with T = batch x seq tokens, H the hidden size, a heads (a / tp of them local, head
// size d = H / a) and fp16 activations:
//   forward:  layernorm_1, qkv (column-parallel: T x 3H/tp x H), attention (scores: batch x
//             a/tp GEMMs of seq x seq x d, softmax, attention dropout, context: seq x d x seq; or
//             one fused kernel), op (row-parallel: T x H x H/tp, all-reduced), dropout_residual_1,
//             layernorm_2, fc1 (column-parallel: T x 4H/tp x H), gelu, fc2 (row-parallel:
//             T x H x 4H/tp, all-reduced), dropout_residual_2.
//   backward: the same in reverse, each linear layer as a data-gradient GEMM (_dgrad) and a
//             weight-gradient GEMM (_wgrad); Megatron's f operator all-reduces the data gradients
//             of the column-parallel qkv and fc1 (the T3 paper's ip and fc1 sublayers).
// Layer norms, dropouts and residual adds are replicated on every GPU (full T x H); inference
// (the prompt phase) runs the forward kernels without the dropouts.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "protocol/gemm_layout.h"
#include "workloads/model_zoo.h"
#include "workloads/sublayer.h"

namespace t3 {

enum class LayerPhase { Training, Inference };
const char* to_string(LayerPhase phase);                // "training", "inference"
LayerPhase parse_layer_phase(const std::string& name);  // ConfigError naming the choices

// What a kernel spends its time on: the breakdown of a model view.
enum class KernelClass { Gemm, Attention, MemoryBound };
const char* to_string(KernelClass kind);  // "gemm", "attention", "memory_bound"

struct LayerKernel {
  std::string name;  // "qkv", "softmax", "fc2_dgrad", ...
  KernelClass kind = KernelClass::Gemm;
  // GEMMs: `batch` independent M x N x K products (batch 1 but for the attention GEMMs).
  GemmShape gemm;
  std::int64_t batch = 0;  // 0: not a GEMM
  // Memory-bound kernels: bytes read and written in HBM when nothing is cached (fp16 elements).
  std::uint64_t bytes_read = 0;
  std::uint64_t bytes_written = 0;
  // The GEMM's output is a partial sum all-reduced across the group, and which of the T3
  // paper's sublayers it is (op, fc2 forward; fc1, ip backward data gradients).
  bool all_reduced = false;
  std::optional<Sublayer> sublayer;
};

struct LayerShape {
  std::int64_t batch = 1;  // sequences
  std::int64_t seq = 0;    // tokens per sequence
  std::int64_t tokens() const { return batch * seq; }
};

// The kernels of one layer of `model` on one GPU of a `tp`-way group, in execution order. With
// `fused_attention` the scores, softmax, dropout and context kernels are one attention kernel
// (its GEMM work and the bytes of Q, K, V and the context, no seq x seq matrix in HBM). Throws
// ConfigError naming the value for tp < 1, heads or hidden not divisible by tp, hidden not
// divisible by heads, or a batch or sequence below 1.
std::vector<LayerKernel> transformer_layer(const ModelSpec& model, int tp, const LayerShape& shape,
                                           LayerPhase phase, bool fused_attention = false);

}  // namespace t3
