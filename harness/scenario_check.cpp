#include "harness/scenario_check.h"

#include <algorithm>
#include <random>
#include <sstream>

#include "harness/reference_gemm.h"
#include "protocol/ring.h"
#include "protocol/to_size.h"
#include "tlm_interconnect/element.h"

namespace t3 {

namespace {

// `elements` values of `type` drawn from the integers in [-range, range].
Bytes integer_values(std::size_t elements, ElementType type, std::mt19937_64& random, int range) {
  std::uniform_int_distribution<int> value(-range, range);
  Bytes data(elements * element_bytes(type));
  for (std::size_t i = 0; i < elements; ++i) {
    store_element(data.data(), i, type, static_cast<float>(value(random)));
  }
  return data;
}

}  // namespace

ScenarioCheck::ScenarioCheck(TpGroup& group, const ScenarioPlan& plan, std::uint64_t seed,
                             int range)
    : group_(group), plan_(plan) {
  if (plan.gathers_input) {
    load_gathered(seed, range);
    return;
  }
  const GemmShape& shape = plan.gemm.shape;
  const GemmLaunch& launch = plan.gemm.gpus.front().launch;
  const ElementType in = launch.element;
  const ElementType out = launch.out_element;
  std::mt19937_64 random(seed);
  std::vector<float> sum(to_size(shape.m * shape.n), 0.0f);
  for (int g = 0; g < group.gpus(); ++g) {
    const GemmBuffers& buffers = plan.gemm.gpus[to_size(g)].buffers;
    const Bytes a = integer_values(static_cast<std::size_t>(shape.m * shape.k), in, random, range);
    const Bytes b = integer_values(static_cast<std::size_t>(shape.k * shape.n), in, random, range);
    debug_write(group.gpu(g).router, buffers.a, a);
    debug_write(group.gpu(g).router, buffers.b, b);
    const Bytes partial = reference_gemm(shape, launch.tiles, in, out, a, b);
    for (std::size_t i = 0; i < sum.size(); ++i) sum[i] += load_element(partial.data(), i, out);
  }
  expected_.resize(sum.size() * element_bytes(out));
  for (std::size_t i = 0; i < sum.size(); ++i) store_element(expected_.data(), i, out, sum[i]);
  group.barrier().observe_release(
      [this](sc_core::sc_time, std::uint32_t barrier) { on_barrier(barrier); });
}

void ScenarioCheck::load_gathered(std::uint64_t seed, int range) {
  const GemmShape& shape = plan_.gemm.shape;
  const GemmLaunch& launch = plan_.gemm.gpus.front().launch;
  const ElementType in = launch.element;
  const ElementType out = launch.out_element;
  const int n = group_.gpus();
  std::mt19937_64 random(seed);
  input_ = integer_values(static_cast<std::size_t>(shape.m * shape.k), in, random, range);
  // A's row bands are the ring's chunks (whole tile rows, tile-contiguous, so contiguous bytes).
  const std::size_t band = input_.size() / static_cast<std::size_t>(n);
  for (int g = 0; g < n; ++g) {
    const GemmBuffers& buffers = plan_.gemm.gpus[to_size(g)].buffers;
    const Bytes b = integer_values(static_cast<std::size_t>(shape.k * shape.n), in, random, range);
    // Only the band GPU g holds; the others a value the data never has, so a band the
    // all-gather missed shows in C.
    Bytes a(input_.size());
    for (std::size_t i = 0; i < a.size() / element_bytes(in); ++i) {
      store_element(a.data(), i, in, static_cast<float>(range + 7));
    }
    const std::size_t own = static_cast<std::size_t>(owner_chunk(g, n)) * band;
    std::copy(input_.begin() + static_cast<std::ptrdiff_t>(own),
              input_.begin() + static_cast<std::ptrdiff_t>(own + band),
              a.begin() + static_cast<std::ptrdiff_t>(own));
    debug_write(group_.gpu(g).router, buffers.a, a);
    debug_write(group_.gpu(g).router, buffers.b, b);
    outputs_.push_back(reference_gemm(shape, launch.tiles, in, out, input_, b));
  }
  expected_ = outputs_.front();
}

std::string ScenarioCheck::check_gathered() const {
  for (int g = 0; g < group_.gpus(); ++g) {
    const GemmBuffers& buffers = plan_.gemm.gpus[to_size(g)].buffers;
    if (debug_read(group_.gpu(g).router, buffers.a, input_.size()) != input_) {
      return "gpu " + std::to_string(g) + ": its input A was not gathered whole";
    }
    const Bytes& want = outputs_[to_size(g)];
    const Bytes got = debug_read(group_.gpu(g).router, buffers.c, want.size());
    if (got != want) {
      const auto mismatch = std::mismatch(want.begin(), want.end(), got.begin());
      return "gpu " + std::to_string(g) + ": output byte " +
             std::to_string(mismatch.first - want.begin()) +
             " differs from the reference GEMM of the gathered input";
    }
  }
  return {};
}

void ScenarioCheck::on_barrier(std::uint32_t barrier) {
  for (std::size_t k = 0; k < plan_.phases.size(); ++k) {
    const PhaseKind kind = plan_.phases[k].kind;
    if (barrier != kStartBarrier + 1 + k ||
        (kind != PhaseKind::ReduceScatter && kind != PhaseKind::GemmReduceScatter)) {
      continue;
    }
    reduce_scatter_seen_ = true;
    const int n = group_.gpus();
    const std::uint64_t element = element_bytes(plan_.gemm.gpus.front().launch.out_element);
    // Each band is reduce-scattered on its own: GPU g owns the same chunk of every band.
    for (const OutputBand& band : plan_.bands) {
      for (int g = 0; g < n && reduce_scatter_error_.empty(); ++g) {
        const ElementRange owned = chunk_range(static_cast<std::int64_t>(band.bytes / element), n,
                                               static_cast<int>(plan_.owned_chunks[to_size(g)]));
        reduce_scatter_error_ =
            compare(g, band.offset + static_cast<std::uint64_t>(owned.first) * element,
                    static_cast<std::uint64_t>(owned.size()) * element);
      }
    }
  }
}

std::string ScenarioCheck::check_reduce_scattered() const {
  if (plan_.gathers_input) return {};  // nothing is reduced
  if (!reduce_scatter_seen_) return "the reduce-scatter never ended";
  return reduce_scatter_error_;
}

std::string ScenarioCheck::check_all_gathered() const {
  if (plan_.gathers_input) return check_gathered();
  for (int g = 0; g < group_.gpus(); ++g) {
    if (std::string error = compare(g, 0, expected_.size()); !error.empty()) return error;
  }
  return {};
}

std::string ScenarioCheck::compare(int gpu, std::uint64_t offset, std::uint64_t bytes) const {
  // Compared band by band: [offset, offset + bytes) may span several.
  for (const OutputBand& band : plan_.bands) {
    const std::uint64_t begin = std::max(offset, band.offset);
    const std::uint64_t end = std::min(offset + bytes, band.offset + band.bytes);
    if (begin >= end) continue;
    const std::uint64_t at = band.address[to_size(gpu)] + (begin - band.offset);
    if (std::string error = compare_at(gpu, begin, at, end - begin); !error.empty()) return error;
  }
  return {};
}

std::string ScenarioCheck::compare_at(int gpu, std::uint64_t offset, std::uint64_t address,
                                      std::uint64_t bytes) const {
  const ElementType out = plan_.gemm.gpus.front().launch.out_element;
  const std::size_t size = element_bytes(out);
  const Bytes got = debug_read(group_.gpu(gpu).router, address, bytes);
  const unsigned char* want = expected_.data() + offset;
  for (std::size_t i = 0; i < bytes / size; ++i) {
    if (load_element(want, i, out) != load_element(got.data(), i, out)) {
      std::ostringstream message;
      message << "gpu " << gpu << ": output element " << offset / size + i << " (byte offset "
              << offset + i * size << ") is " << load_element(got.data(), i, out) << ", expected "
              << load_element(want, i, out);
      return message.str();
    }
  }
  return {};
}

}  // namespace t3
