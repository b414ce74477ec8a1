#include "workloads/transformer_layer.h"

#include <array>

#include "config/suggestion.h"
#include "config/system_config.h"

namespace t3 {

namespace {

constexpr std::uint64_t kActivationBytes = 2;  // fp16
constexpr std::uint64_t kMaskBytes = 1;        // a dropout mask keeps one byte per element

// Appends the layer's kernels in order; sizes in elements are turned into bytes here.
class LayerBuilder {
 public:
  explicit LayerBuilder(std::vector<LayerKernel>& kernels) : kernels_(kernels) {}

  void gemm(const std::string& name, std::int64_t m, std::int64_t n, std::int64_t k,
            std::int64_t batch = 1, std::optional<Sublayer> reduced = std::nullopt,
            KernelClass kind = KernelClass::Gemm) {
    LayerKernel kernel;
    kernel.name = name;
    kernel.kind = kind;
    kernel.gemm = {m, n, k};
    kernel.batch = batch;
    kernel.all_reduced = reduced.has_value();
    kernel.sublayer = reduced;
    kernels_.push_back(std::move(kernel));
  }
  // A memory-bound kernel reading and writing fp16 elements, plus dropout-mask bytes.
  void memory(const std::string& name, std::int64_t read, std::int64_t written,
              std::int64_t mask_read = 0, std::int64_t mask_written = 0) {
    LayerKernel kernel;
    kernel.name = name;
    kernel.kind = KernelClass::MemoryBound;
    kernel.bytes_read = static_cast<std::uint64_t>(read) * kActivationBytes +
                        static_cast<std::uint64_t>(mask_read) * kMaskBytes;
    kernel.bytes_written = static_cast<std::uint64_t>(written) * kActivationBytes +
                           static_cast<std::uint64_t>(mask_written) * kMaskBytes;
    kernels_.push_back(std::move(kernel));
  }
  // Attention as one fused kernel: `gemms` products of seq x seq x d worth of FLOPs per head
  // (the score and the context GEMMs cost the same), and the bytes of its operands.
  void fused_attention(const std::string& name, std::int64_t gemms, std::int64_t heads,
                       std::int64_t seq, std::int64_t d, std::int64_t read, std::int64_t written) {
    gemm(name, seq, seq, d, gemms * heads, std::nullopt, KernelClass::Attention);
    kernels_.back().bytes_read = static_cast<std::uint64_t>(read) * kActivationBytes;
    kernels_.back().bytes_written = static_cast<std::uint64_t>(written) * kActivationBytes;
  }

 private:
  std::vector<LayerKernel>& kernels_;
};

void check(const ModelSpec& model, int tp, const LayerShape& shape) {
  const std::string what = model.name + " at tp " + std::to_string(tp);
  if (tp < 1) throw ConfigError(what + ": tp must be at least 1");
  if (model.heads < 1 || model.hidden % model.heads != 0) {
    throw ConfigError(what + ": hidden " + std::to_string(model.hidden) +
                      " is not divisible by its " + std::to_string(model.heads) + " heads");
  }
  if (model.heads % tp != 0) {
    throw ConfigError(what + ": its " + std::to_string(model.heads) +
                      " heads are not divisible by tp " + std::to_string(tp) +
                      " (Megatron splits attention by heads)");
  }
  if (shape.batch < 1 || shape.seq < 1) {
    throw ConfigError(what + ": batch " + std::to_string(shape.batch) + " and sequence " +
                      std::to_string(shape.seq) + " must be at least 1");
  }
}

}  // namespace

const char* to_string(LayerPhase phase) {
  return phase == LayerPhase::Training ? "training" : "inference";
}

LayerPhase parse_layer_phase(const std::string& name) {
  if (name == "training") return LayerPhase::Training;
  if (name == "inference") return LayerPhase::Inference;
  throw ConfigError("phase '" + name + "': unknown" +
                    did_you_mean(name, {"training", "inference"}) +
                    " (choices: training, inference)");
}

const char* to_string(KernelClass kind) {
  switch (kind) {
    case KernelClass::Gemm:
      return "gemm";
    case KernelClass::Attention:
      return "attention";
    case KernelClass::MemoryBound:
      break;
  }
  return "memory_bound";
}

std::vector<LayerKernel> transformer_layer(const ModelSpec& model, int tp, const LayerShape& shape,
                                           LayerPhase phase, bool fused_attention) {
  check(model, tp, shape);
  const bool training = phase == LayerPhase::Training;
  const std::int64_t t = shape.tokens(), h = model.hidden, s = shape.seq;
  const std::int64_t heads = shape.batch * model.heads / tp;  // local (sequence, head) pairs
  const std::int64_t d = h / model.heads;
  const std::int64_t th = t * h;
  const std::int64_t probs = heads * s * s;  // the local attention matrices
  const std::int64_t ffn = 4 * h / tp;       // local FFN width
  const std::int64_t local = t * h / tp;     // Q, K, V or the context, local heads
  const std::int64_t dropout = training ? 1 : 0;

  std::vector<LayerKernel> kernels;
  LayerBuilder add(kernels);
  // Forward.
  add.memory("layernorm_1", th, th);
  add.gemm("qkv", t, 3 * h / tp, h);
  if (fused_attention) {
    add.fused_attention("attention", 2, heads, s, d, 3 * local, local);
  } else {
    add.gemm("attention_scores", s, s, d, heads, std::nullopt, KernelClass::Attention);
    add.memory("softmax", probs, probs);
    if (training) add.memory("attention_dropout", probs, probs, 0, probs);
    add.gemm("attention_context", s, d, s, heads, std::nullopt, KernelClass::Attention);
  }
  add.gemm("op", t, h, h / tp, 1, Sublayer::OutputProjection);
  add.memory(training ? "dropout_residual_1" : "residual_1", 2 * th, th, 0, dropout * th);
  add.memory("layernorm_2", th, th);
  add.gemm("fc1", t, ffn, h);
  add.memory("gelu", t * ffn, t * ffn);
  add.gemm("fc2", t, h, ffn, 1, Sublayer::Fc2);
  add.memory(training ? "dropout_residual_2" : "residual_2", 2 * th, th, 0, dropout * th);
  if (!training) return kernels;

  // Backward: data gradient, then weight gradient, of each linear layer in reverse.
  add.memory("dropout_residual_2_bwd", th, th, th, 0);
  add.gemm("fc2_dgrad", t, ffn, h);
  add.gemm("fc2_wgrad", ffn, h, t);
  add.memory("gelu_bwd", 2 * t * ffn, t * ffn);
  add.gemm("fc1_dgrad", t, h, ffn, 1, Sublayer::Fc1Backward);
  add.gemm("fc1_wgrad", h, ffn, t);
  add.memory("layernorm_2_bwd", 2 * th, th);
  add.memory("residual_grad_2", 2 * th, th);
  add.memory("dropout_residual_1_bwd", th, th, th, 0);
  add.gemm("op_dgrad", t, h / tp, h);
  add.gemm("op_wgrad", h / tp, h, t);
  if (fused_attention) {
    // Recomputes the scores: five products of the forward's size; reads Q, K, V, the output and
    // its gradient, writes the gradients of Q, K and V.
    add.fused_attention("attention_bwd", 5, heads, s, d, 5 * local, 3 * local);
  } else {
    add.gemm("attention_context_dgrad_probs", s, s, d, heads, std::nullopt, KernelClass::Attention);
    add.gemm("attention_context_dgrad_values", s, d, s, heads, std::nullopt,
             KernelClass::Attention);
    add.memory("attention_dropout_bwd", probs, probs, probs, 0);
    add.memory("softmax_bwd", 2 * probs, probs);
    add.gemm("attention_scores_dgrad_q", s, d, s, heads, std::nullopt, KernelClass::Attention);
    add.gemm("attention_scores_dgrad_k", s, d, s, heads, std::nullopt, KernelClass::Attention);
  }
  add.gemm("qkv_dgrad", t, h, 3 * h / tp, 1, Sublayer::InputProjectionBackward);
  add.gemm("qkv_wgrad", h, 3 * h / tp, t);
  add.memory("layernorm_1_bwd", 2 * th, th);
  add.memory("residual_grad_1", 2 * th, th);
  return kernels;
}

}  // namespace t3
