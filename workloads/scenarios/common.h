// What the scenario planners (one file each in this folder) share: the start and phase barriers,
// the SM ring collective on a GEMM buffer, the plan's rotation bands, and the band arithmetic of
// the software-overlap scenarios. Internal to workloads/.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "config/system_config.h"
#include "protocol/program.h"
#include "workloads/collective_program.h"
#include "workloads/gemm_program.h"
#include "workloads/scenario.h"
#include "workloads/t3_plan.h"

namespace t3 {

HostCommand barrier(std::uint32_t id, const std::string& note);

// Phase k ends at barrier kStartBarrier + 1 + k.
void end_phase(Program& program, const std::vector<PhaseSpec>& phases, std::size_t k);

// The SM ring collectives run in place on every GPU's C, with GPU g at ring rank order.rank(g):
// the identity for sequential, T3's ring ranks after the fused reduce-scatter (whose rank r owns
// chunk r + 1, where the ring all-gather's rank r starts).
struct RingOnOutput {
  CollectiveSpec spec;
  T3Ring order;
  std::vector<CollectiveGpuLayout> layout;  // by rank
};

// The SM ring collective in place on every GPU's `buffer` (C, or A for an all-gathered input) of
// `bytes`.
RingOnOutput ring_on(const SystemConfig& config, const ScenarioPlan& plan, std::uint64_t bytes,
                     std::uint64_t GemmBuffers::*buffer, ElementType element, T3Ring order,
                     bool gated);
RingOnOutput ring_on_output(const SystemConfig& config, const ScenarioPlan& plan,
                            ElementType element, T3Ring order, bool gated = false);

// The SM direct collective (protocol/ring.h, Direct) in place on every GPU's C, GPU g rank g: the
// reduce-scatter a sequential run would take on a fabric with a route between every pair.
RingOnOutput direct_on_output(const SystemConfig& config, const ScenarioPlan& plan,
                              ElementType element);
// The SM NVLS collective (protocol/ring.h, NVLS) in place on every GPU's C, GPU g rank g, through
// multicast group `multicast` of every GPU: direct_on_output's layout and channels, the data
// through the switch. Names the group in plan.multicast_groups when it is not there yet.
RingOnOutput nvls_on_output(const SystemConfig& config, ScenarioPlan& plan, ElementType element);
// Appends `gpu`'s launch of `op` on `ring` (its direct form when ring.spec.direct).
void append_ring(Program& program, const RingOnOutput& ring, int gpu, CollectiveOp op,
                 std::uint32_t sequence);

void require_equal_chunks(const SystemConfig& config, const GemmShape& shape);

// States the `bytes` at GPU 0's `buffer` (a ring collective's buffer, at the same offset on every
// GPU) as a band of the plan's rotation: n chunks whose positions follow GPU indices by `sign`,
// `tags_per_chunk` tracking tags each. Buffers whose elements do not split into n equal chunks
// (chunk_range) leave the plan without a rotation: GPU g's chunks are then not GPU 0's moved.
void add_rotation_band(const SystemConfig& config, ScenarioPlan& plan, std::uint64_t buffer,
                       std::uint64_t bytes, ElementType element, const std::string& what,
                       int sign = 1, std::uint32_t tags_per_chunk = 0);

// C lies at the same offset of every GPU's window in n equal chunks (require_equal_chunks), so
// GPU g's chunk positions are GPU 0's moved by g: one band.
void rotate_output(const SystemConfig& config, ScenarioPlan& plan, ElementType out_element,
                   int sign, std::uint32_t tags_per_chunk);

// C itself, one band.
OutputBand whole_output(const ScenarioPlan& plan);

// Software overlap launches its communication on this hardware queue, dispatched first.
constexpr int kCommQueue = 1;

HostCommand comm_queue_first(const GemmLaunch& gemm);

// Rows band `index` of `whole`'s GEMM (bands of `band.m` rows: A's rows from the band's, A being
// tile-contiguous) stored to `output`.
GemmLaunch row_band(const GemmLaunch& whole, const GemmShape& band, std::int64_t index,
                    std::uint64_t output, const std::string& label);

// The fused scenarios cut each chunk into `parts` row bands of `part_shape` rows; this is band
// `part` of `chunk`, stored in place in `whole`'s output (bands `part_bytes` apart), labelled for
// the trace.
GemmLaunch chunk_part_band(const GemmLaunch& whole, const GemmShape& part_shape,
                           std::uint64_t part_bytes, int chunk, std::int64_t index_in_chunk,
                           std::int64_t parts);

// The software-overlap scenarios cut the GEMM into n x workload.split bands of whole tile rows;
// anything else is refused naming the scenario and the key.
void require_whole_bands(const SystemConfig& config, const GemmShape& shape, const char* scenario,
                         const char* what);

}  // namespace t3
