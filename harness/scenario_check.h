// Golden check of a scenario run in functional mode: loads seeded integer-valued operands into
// every GPU's A and B, and after the run checks that every GPU's C holds the all-reduced output
// (the element-wise sum of every GPU's reference partial GEMM) and, before that, that each GPU's
// owned chunk was reduce-scattered exactly. Integer-valued data keeps every sum exact, so the
// comparison is bit for bit whatever order the reductions ran in.
// For a plan that all-gathers the GEMM's input (ScenarioPlan::gathers_input) GPU g starts with A's
// row band owner_chunk(g) only (the other bands hold a poison value) and its own B; the check is
// that every GPU's A was gathered whole and its C equals the reference GEMM of the whole A with its
// B, bit for bit.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "harness/debug_access.h"
#include "models/system/tp_group.h"
#include "workloads/scenario.h"

namespace t3 {

class ScenarioCheck {
 public:
  // Call after elaboration and before the run (e.g. after sc_start(SC_ZERO_TIME)). Values are
  // integers in [-range, range] drawn from `seed`.
  ScenarioCheck(TpGroup& group, const ScenarioPlan& plan, std::uint64_t seed, int range = 2);

  // After the run: empty if every GPU held its reduced chunk at the end of the reduce-scatter,
  // else a message naming the first GPU, element and values that differ.
  std::string check_reduce_scattered() const;
  // After the run: empty if every GPU holds the expected output, else the same kind of message.
  std::string check_all_gathered() const;
  // The whole reduced output, tile-contiguous, in the output element type (gathered input: GPU
  // 0's output).
  const Bytes& expected() const { return expected_; }

 private:
  // Compares `bytes` of GPU g's output from `offset` (in the whole output, wherever its bands
  // lie) with the expected output there.
  std::string compare(int gpu, std::uint64_t offset, std::uint64_t bytes) const;
  // The same for one stretch inside one band, at `address` on the GPU.
  std::string compare_at(int gpu, std::uint64_t offset, std::uint64_t address,
                         std::uint64_t bytes) const;
  void on_barrier(std::uint32_t barrier);
  // The gathered-input plan's operands and expected outputs (constructor), and its check.
  void load_gathered(std::uint64_t seed, int range);
  std::string check_gathered() const;

  TpGroup& group_;
  ScenarioPlan plan_;
  Bytes expected_;
  Bytes input_;                 // gathered input: the whole A every GPU must end with
  std::vector<Bytes> outputs_;  // gathered input: each GPU's expected C
  bool reduce_scatter_seen_ = false;
  std::string reduce_scatter_error_;
};

}  // namespace t3
