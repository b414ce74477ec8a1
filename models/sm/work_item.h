// What the dispatcher hands an SM (a workgroup of a kernel) and what the SM hands back when the
// workgroup is finished. They travel through sc_fifo channels, one pair per SM.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>
#include <utility>
#include <vector>

#include "protocol/collective_descriptor.h"
#include "protocol/dispatcher_registers.h"
#include "protocol/gemm_layout.h"
#include "protocol/ring.h"
#include "tlm_interconnect/payload.h"

namespace t3 {

// Where one chunk of a GEMM's output goes (one output-map entry of the dispatcher).
struct OutputTarget {
  std::uint64_t base = 0;
  Op op = Op::Write;  // Write or Update (add)
  CacheHint cache_hint = CacheHint::Cached;
  bool tagged = false;  // stores carry the tile id as tracking tag
};

// A GEMM C (m x n) = A (m x k) x B (k x n), every matrix tile-contiguous (gemm_layout.h):
// A in tiles tile_m x tile_k, B in tiles tile_k x tile_n, each output chunk a band of whole tile
// rows stored tile-contiguously (tiles tile_m x tile_n) from its own base.
struct GemmKernel {
  std::int64_t m = 0, n = 0, k = 0;
  std::int64_t tile_m = 0, tile_n = 0, tile_k = 0;
  ElementType element = ElementType::Fp32;      // A and B
  ElementType out_element = ElementType::Fp32;  // C
  std::uint64_t a = 0, b = 0;
  std::vector<OutputTarget> outputs;  // one per chunk
  std::optional<ChunkSplit> split;    // output tile rows into chunks
  WgOrder order = WgOrder::RowMajor;  // dispatch order of the workgroups
  std::int64_t first_chunk = 0;       // chunk dispatched first (ChunkStaggered)

  std::int64_t grid_rows() const { return (m + tile_m - 1) / tile_m; }
  std::int64_t grid_cols() const { return (n + tile_n - 1) / tile_n; }
  std::int64_t tiles() const { return grid_rows() * grid_cols(); }
};

// A collective launch as the dispatcher validated it: its descriptor
// (protocol/collective_descriptor.h; protocol/ring.h has the schedules, the layout and the flag
// protocols), one workgroup per channel.
struct CollectiveKernel : CollectiveDescriptor {
  CollectiveKernel() = default;
  CollectiveKernel(CollectiveDescriptor descriptor, bool flags_in_hbm)
      : CollectiveDescriptor(std::move(descriptor)), hbm_flags(flags_in_hbm) {}
  bool hbm_flags = false;  // some flag area (or the gate) lies in HBM (needs functional mode)
};

// A memory-streaming kernel (element-wise or normalisation): `workgroups` workgroups, workgroup w
// reading share w of [src, src + read_bytes) and writing share w of [dst, dst + write_bytes)
// (shares element-aligned and as equal as they can be), step by step.
struct StreamKernel {
  std::uint64_t src = 0, read_bytes = 0;
  std::uint64_t dst = 0, write_bytes = 0;
  std::int64_t workgroups = 0;
  std::uint32_t ops_per_element = 1;  // vector-ALU operations per element read
  std::uint64_t flops = 0;            // matrix FLOPs of the whole kernel (fused attention)
  ElementType element = ElementType::Fp16;
  CacheHint out_hint = CacheHint::Cached;
  // Input bytes a workgroup reads per step (the reads it keeps in flight); 0: its SM slot's part
  // of the SM's request capacity.
  std::uint64_t step_bytes = 0;

  // [begin, end) of workgroup w's share of `bytes`, in whole elements of `element_bytes`.
  static std::pair<std::uint64_t, std::uint64_t> share(std::uint64_t bytes,
                                                       std::uint64_t element_bytes,
                                                       std::int64_t workgroups, std::int64_t w) {
    const std::uint64_t elements = bytes / element_bytes;
    const auto n = static_cast<std::uint64_t>(workgroups);
    const auto i = static_cast<std::uint64_t>(w);
    return {elements * i / n * element_bytes, elements * (i + 1) / n * element_bytes};
  }
};

// One validated launch, immutable while its workgroups run.
struct Kernel {
  dispatcher::KernelKind kind = dispatcher::kNone;
  std::uint64_t launch = 0;     // sequence number of the launch at its dispatcher
  GemmKernel gemm;              // kind == kGemm
  CollectiveKernel collective;  // kind == kCollective
  StreamKernel stream;          // kind == kStream
  // The SMs its workgroups may go to, [sm_first, sm_end) (SM_FIRST, SM_COUNT).
  int sm_first = 0;
  int sm_end = 0;

  std::int64_t workgroups() const {
    if (kind == dispatcher::kStream) return stream.workgroups;
    return kind == dispatcher::kCollective ? collective.channels : gemm.tiles();
  }
};

// One workgroup: for a GEMM, the output tile `tile` (tile_row * grid_cols + tile_col); for a
// collective, the channel `tile`.
struct WorkItem {
  std::shared_ptr<const Kernel> kernel;
  std::int64_t tile = 0;
};

// A finished workgroup. A memory error response ends the workgroup early with `fault` set.
struct WgDone {
  std::uint64_t launch = 0;  // Kernel::launch of its workgroup
  std::int64_t tile = 0;
  int sm = 0;
  bool fault = false;
  std::uint64_t fault_address = 0;
};

// sc_fifo prints its contents on request.
inline std::ostream& operator<<(std::ostream& os, const WorkItem& item) {
  return os << "wg(tile " << item.tile << ")";
}
inline std::ostream& operator<<(std::ostream& os, const WgDone& done) {
  return os << "done(tile " << done.tile << ", sm " << done.sm << (done.fault ? ", fault)" : ")");
}

}  // namespace t3
