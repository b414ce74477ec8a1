// What the golden suites of the two ring collectives (test_collective: on the SMs;
// test_dma_collective: by DMA and near-memory updates) share: the group they run on, the data
// every GPU starts with, and which collective a case checks.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "config/config_io.h"
#include "workloads/collective_program.h"

namespace t3::ring_testing {

// The t3-paper preset with `gpus` GPUs, 8 SMs each, in the given mode, plus overrides.
inline SystemConfig group_config(int gpus, bool functional,
                                 const std::vector<std::string>& extra = {}) {
  SystemConfig config = load_system("t3-paper");
  apply_override(config, "gpus=" + std::to_string(gpus));
  apply_override(config, "sm.count=8");
  if (functional) apply_override(config, "sim.mode=functional");
  for (const auto& assignment : extra) apply_override(config, assignment);
  validate(config);
  return config;
}

// GPU g's input element i (of its whole buffer): small integers, so every sum is exact in fp32,
// fp16 and bf16 (|sum| <= 8 x 16 = 128).
inline float input(int g, std::int64_t i) {
  return static_cast<float>((i * 5 + g * 11) % 17 - 8 + g);
}
// The all-gather's chunk c, element i.
inline float gathered(int c, std::int64_t i) {
  return static_cast<float>((c * 31 + i * 3) % 19 - 9);
}
inline constexpr float kUntouched = -100.0f;  // all-gather inputs outside the owned chunk

enum class Check { ReduceScatter, AllGather, AllReduce };

// The launches a check runs: all-reduce is reduce-scatter then all-gather.
inline std::vector<CollectiveOp> ops_of(Check check) {
  switch (check) {
    case Check::ReduceScatter:
      return {CollectiveOp::ReduceScatter};
    case Check::AllGather:
      return {CollectiveOp::AllGather};
    case Check::AllReduce:
      break;
  }
  return {CollectiveOp::ReduceScatter, CollectiveOp::AllGather};
}

}  // namespace t3::ring_testing
