// What the golden suites of the collectives (ring, direct and NVLS on the SMs; ring and direct by
// DMA and near-memory updates) share: the group they run on, the data every GPU starts with and
// ends with, and which collective a case checks.
#pragma once

#include <catch2/catch.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include <systemc>

#include "config/config_io.h"
#include "harness/debug_access.h"
#include "models/system/tp_group.h"
#include "protocol/ring.h"
#include "tlm_interconnect/element.h"
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

// The chunk (of n over `total` elements) that element i falls in.
inline int chunk_of(std::int64_t total, int n, std::int64_t i) {
  for (int c = 0; c < n; ++c) {
    if (i < chunk_range(total, n, c).end) return c;
  }
  return n - 1;
}

// Writes every GPU's starting buffer (buffers[g], `total` elements of `type`): its input, or for
// an all-gather the gathered values of the chunk it owns (`owned(g, n)`) and kUntouched elsewhere.
template <class Owned>
void preload(TpGroup& group, const std::vector<std::uint64_t>& buffers, Check check,
             ElementType type, std::int64_t total, Owned owned) {
  const int n = static_cast<int>(buffers.size());
  for (int g = 0; g < n; ++g) {
    Bytes bytes(static_cast<std::size_t>(bytes_of(type, total)));
    for (std::int64_t i = 0; i < total; ++i) {
      const int chunk = chunk_of(total, n, i);
      const std::int64_t offset = i - chunk_range(total, n, chunk).first;
      float value = input(g, i);
      if (check == Check::AllGather) {
        value = chunk == owned(g, n) ? gathered(chunk, offset) : kUntouched;
      }
      store_element(bytes.data(), static_cast<std::size_t>(i), type, value);
    }
    debug_write(group.gpu(g).router, buffers[static_cast<std::size_t>(g)], bytes);
  }
}

// Elements of GPU g's buffer that differ from what the check leaves there: a reduce-scatter the
// owned chunk reduced and every other one as it was, an all-gather every chunk gathered, an
// all-reduce every element reduced. `first_wrong` is the first such element's index, or -1.
template <class Owned>
std::int64_t wrong_elements(TpGroup& group, std::uint64_t buffer, int g, int n, Check check,
                            ElementType type, std::int64_t total, Owned owned,
                            std::int64_t& first_wrong) {
  const Bytes bytes =
      debug_read(group.gpu(g).router, buffer, static_cast<std::size_t>(bytes_of(type, total)));
  std::int64_t wrong = 0;
  first_wrong = -1;
  for (std::int64_t i = 0; i < total; ++i) {
    const int chunk = chunk_of(total, n, i);
    float sum = 0;
    for (int h = 0; h < n; ++h) sum += input(h, i);
    float expected = sum;
    if (check == Check::ReduceScatter) {
      expected = chunk == owned(g, n) ? sum : input(g, i);
    } else if (check == Check::AllGather) {
      expected = gathered(chunk, i - chunk_range(total, n, chunk).first);
    }
    if (load_element(bytes.data(), static_cast<std::size_t>(i), type) != expected) {
      if (wrong++ == 0) first_wrong = i;
    }
  }
  return wrong;
}

// Runs a golden case on `group`: loads the programs, writes every rank's starting buffer once the
// sockets are bound (the preload goes through the routers), runs to the end and requires that
// every host finished without error and nothing is left in flight.
template <class Owned>
void run_golden(TpGroup& group, const std::vector<Program>& programs,
                const std::vector<std::uint64_t>& buffers, Check check, ElementType type,
                std::int64_t total, Owned owned) {
  group.load(programs);
  sc_core::sc_start(sc_core::SC_ZERO_TIME);
  preload(group, buffers, check, type, total, owned);
  sc_core::sc_start();
  REQUIRE(group.host_error().empty());
  REQUIRE(group.hosts_done());
  group.check_drained();
}

// Checks that every element of GPU g's buffer holds what the check leaves there, naming the first
// wrong one.
template <class Owned>
void check_elements(TpGroup& group, const std::vector<std::uint64_t>& buffers, int g, Check check,
                    ElementType type, std::int64_t total, Owned owned) {
  const int n = static_cast<int>(buffers.size());
  std::int64_t first_wrong = -1;
  const std::int64_t wrong = wrong_elements(group, buffers[static_cast<std::size_t>(g)], g, n,
                                            check, type, total, owned, first_wrong);
  INFO("GPU " << g << " of " << n << ": first wrong element " << first_wrong);
  CHECK(wrong == 0);
}

// The payload bytes every link of the group carried, both directions.
inline std::uint64_t link_payload(TpGroup& group) {
  std::uint64_t bytes = 0;
  for (int l = 0; l < group.links(); ++l) {
    bytes += group.link(l).stats(0).payload_bytes + group.link(l).stats(1).payload_bytes;
  }
  return bytes;
}

}  // namespace t3::ring_testing
