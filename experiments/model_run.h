// Whole-model views: one transformer layer (workloads/transformer_layer.h) run kernel by kernel on
// the simulated group, and the model's time as layers x that layer's time.
//
// Every kernel's time comes from a simulation of its own, started from an idle GPU with a cold
// L2 (kernels run one after another; none overlaps the next, within a layer or across layers):
//   - an all-reduced GEMM (op, fc2 forward; fc1_dgrad, qkv_dgrad backward: the T3 sublayers) is
//     the sublayer run of each scenario on the whole group (GEMM + reduce-scatter + all-gather;
//     rotational symmetry where the configuration asks for it); its exposed communication is the
//     run's exposed_comm_ns and the rest of its time counts as GEMM;
//   - any other GEMM runs alone on one GPU (it does not communicate, so one GPU stands for all);
//     attention's batched GEMMs (batch x heads/tp products of the same shape) run as one GEMM
//     with the products stacked along M: the same FLOPs, A and C traffic, but one B operand read
//     instead of one per product;
//   - a memory-bound kernel is a streaming kernel on one GPU (dispatcher KERNEL = stream) reading
//     and writing the bytes its shape implies through the L2 and HBM; a fused attention kernel is
//     a streaming kernel of its operand bytes carrying its matrix FLOPs.
// Kernels of the same kind and shape are simulated once per run (the forward and backward halves
// and the scenarios share them), and all simulations of a run go through one pool of processes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/system_config.h"
#include "experiments/isolated.h"
#include "workloads/scenario.h"
#include "workloads/transformer_layer.h"

namespace t3 {

struct ModelRequest {
  SystemConfig config;  // gpus = the TP degree
  std::string model;
  LayerPhase phase = LayerPhase::Training;
  LayerShape shape;         // batch x seq = workload.tokens
  std::int64_t layers = 0;  // 0: the model's own layer count
  bool fused_attention = false;
  std::vector<Scenario> scenarios;  // sequential first
};

// The shape of a model's batch: `seq` (0: the model's sequence length) and `batch` (0: the
// system's workload.tokens / seq). Throws ConfigError naming the values when tokens are not a
// whole number of sequences.
LayerShape model_shape(const SystemConfig& config, const ModelSpec& spec, std::int64_t batch,
                       std::int64_t seq);

// Throws ConfigError naming the value for an unknown model, a TP degree that does not divide the
// heads or hidden size, a group of one, layers < 0, or a sublayer the scenarios cannot plan.
void check_model_request(const ModelRequest& request);

// Runs every request (each simulation in a process of its own, at most `jobs` at once, kernels
// shared between requests of the same system simulated once) and returns one document per
// request: the workload, each kernel with its class, per-scenario time and energy (energy_J, the
// group's: a kernel run on one GPU counts once per GPU), and per scenario the layer time, its
// breakdown by class (gemm, attention, memory_bound, communication_exposed; they sum to the layer
// time), the model time (layers x layer time), the speedup over sequential, the layer's and the
// model's energy (layer_energy_J, the kernels' sum; model_energy_J = layers x that; the first-order
// estimate of experiments/energy.h) and the energy saving against sequential (a fraction).
std::vector<nlohmann::json> run_models(const std::vector<ModelRequest>& requests, int jobs,
                                       const Progress& progress = {});

// Runs one memory-bound kernel of `read_bytes` in and `write_bytes` out on GPU 0 of `config`
// (in this process, which must not have elaborated a design yet): time_ns (doorbell to end) and
// the DRAM bytes the memory controller read and wrote.
nlohmann::json run_stream_kernel(const SystemConfig& config, std::uint64_t read_bytes,
                                 std::uint64_t write_bytes, std::uint64_t flops = 0);

}  // namespace t3
