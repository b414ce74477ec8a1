// Collectives on the DMA engines with near-memory updates, ring and direct (see dma_collective.h).
#include "workloads/dma_collective.h"

#include <algorithm>
#include <limits>
#include <string>

#include "protocol/dma_registers.h"
#include "protocol/mmio_map.h"
#include "protocol/to_size.h"
#include "protocol/tracker_registers.h"
#include "workloads/gemm_plan.h"
#include "workloads/plan_util.h"
#include "workloads/t3_plan.h"

namespace t3 {
namespace {

// Elements of the smaller chunk (all of them when n divides E): floor(E / n).
std::int64_t smaller_chunk(const DmaCollectiveSpec& spec) {
  return spec.elements() / spec.ranks;
}

// Appends MMIO writes to one rank's program; `label` prefixes every note.
struct Writer {
  Program& program;
  std::string label;
  void write(std::uint64_t address, std::uint32_t value, const std::string& what) {
    program.commands.push_back(
        HostCommand{HostCommand::Kind::WriteRegister, address, value, label + ": " + what});
  }
  void write64(std::uint64_t address, std::uint64_t value, const std::string& what) {
    write(address, static_cast<std::uint32_t>(value), what + " bits 31:0");
    write(address + 4, static_cast<std::uint32_t>(value >> 32), what + " bits 63:32");
  }
  void poll(std::uint64_t address, std::uint32_t value, const std::string& what) {
    program.commands.push_back(
        HostCommand{HostCommand::Kind::PollRegister, address, value, label + ": " + what});
  }
  void barrier(std::uint32_t id, const std::string& what) {
    program.commands.push_back(HostCommand{HostCommand::Kind::Barrier, 0, id, label + ": " + what});
  }
};

// What one rank needs to build its part of one op.
struct RankOp {
  const DmaCollectiveSpec* spec;
  CollectiveOp op;
  int rank, ranks, slices;
  const std::vector<DmaChunk>* chunks;        // by position
  const std::vector<std::uint64_t>* buffers;  // every rank's
  std::uint64_t tracker, dma;                 // this rank's register blocks
  const DmaChunk& chunk(int position) const { return (*chunks)[to_size(position)]; }
  std::uint64_t buffer(int gpu) const { return (*buffers)[to_size(gpu)]; }
  DmaPattern pattern() const { return spec->pattern; }
  bool direct() const { return pattern() == DmaPattern::Direct; }
  // The non-empty chunks it receives, in step order: an empty one is never sent, so never waited
  // for.
  std::vector<int> received() const {
    std::vector<int> positions;
    for (int p : dma_received_chunks(op, rank, ranks, pattern())) {
      if (chunk(p).slices > 0) positions.push_back(p);
    }
    return positions;
  }
  bool reduce() const { return op == CollectiveOp::ReduceScatter; }
  int region(int position) const {
    return reduce() ? dma_reduce_scatter_region(position) : dma_all_gather_region(position, ranks);
  }
  // Incoming transfers of each slice a region counts: every peer's for a direct reduce-scatter,
  // otherwise one.
  std::uint32_t contributions() const {
    return direct() && reduce() ? static_cast<std::uint32_t>(ranks - 1) : 1;
  }
  // The received chunk that stops here (count only); a direct pattern forwards nothing.
  bool forwards(int position) const {
    return !direct() && position != dma_received_chunks(op, rank, ranks).back();
  }
};

void program_regions(Writer& w, const RankOp& r) {
  for (int p : r.received()) {
    const int region = r.region(p);
    const bool forward = r.forwards(p);
    const DmaChunk& chunk = r.chunk(p);
    const std::uint32_t contributions = r.contributions();
    const auto reg = [&](std::uint64_t offset) {
      return r.tracker + tracker::region_register(region, offset);
    };
    const std::string note =
        "region " + std::to_string(region) + " (chunk " + std::to_string(p) + ")";
    w.write64(reg(tracker::kBaseLow), r.buffer(r.rank) + chunk.offset, note + " base");
    w.write64(reg(tracker::kSizeLow), chunk.bytes, note + " size");
    w.write(reg(tracker::kThreshold), static_cast<std::uint32_t>(chunk.slice) * contributions,
            note + " threshold: " + std::to_string(contributions) + " incoming slice(s)");
    if (chunk.even()) {
      // A region keeps its programming across RESET; an earlier user's tile columns would give
      // some tags another threshold.
      w.write(reg(tracker::kGridCols), 0, note + " no tile columns: every tag at THRESHOLD");
    } else {
      // Tag p S + j is column j of S: the last slice, longer, completes at EDGE_THRESHOLD.
      w.write(reg(tracker::kGridCols), static_cast<std::uint32_t>(r.slices),
              note + " slices as tile columns: the last one at EDGE_THRESHOLD");
      w.write(reg(tracker::kEdgeThreshold), static_cast<std::uint32_t>(chunk.last) * contributions,
              note + " edge threshold: the last, longer, incoming slice(s)");
    }
    const std::uint64_t next = r.buffer(t3_next_gpu(r.rank, r.ranks));
    w.write64(reg(tracker::kDmaDstLow), forward ? next + chunk.offset : 0, note + " destination");
    const std::uint32_t op = !forward     ? tracker::kOpNone
                             : r.reduce() ? tracker::kOpUpdate
                                          : tracker::kOpStore;
    w.write(reg(tracker::kDmaOp), op,
            note + (forward ? " forward to the next rank" : " count only (chunk ends here)"));
    w.write(reg(tracker::kElement), element_code(r.spec->element), note + " element");
    w.write(reg(tracker::kControl), tracker::kEnable, note + " enable");
  }
}

void disable_regions(Writer& w, const RankOp& r) {
  for (int p : r.received()) {
    const int region = r.region(p);
    w.write(r.tracker + tracker::region_register(region, tracker::kControl), 0,
            "region " + std::to_string(region) + " disable");
  }
}

// One doorbell per slice of each chunk the rank sends (none for an empty one), descriptor
// k S + j for slice j of send k.
void ring_doorbells(Writer& w, const RankOp& r) {
  const std::vector<DmaSend> sends = dma_sends(*r.spec, r.op, r.rank);
  for (std::size_t k = 0; k < sends.size(); ++k) {
    const auto [p, to] = sends[k];
    const DmaChunk& chunk = r.chunk(p);
    for (int j = 0; j < chunk.slices; ++j) {
      const std::uint64_t offset = chunk.slice_offset(j);
      const int descriptor = static_cast<int>(k) * r.slices + j;
      const auto reg = [&](std::uint64_t field) {
        return r.dma + dma::descriptor_register(descriptor, field);
      };
      const std::string note = "descriptor " + std::to_string(descriptor) + " (chunk " +
                               std::to_string(p) + " slice " + std::to_string(j) + " to rank " +
                               std::to_string(to) + ")";
      w.write64(reg(dma::kSrcLow), r.buffer(r.rank) + offset, note + " source");
      w.write64(reg(dma::kDstLow), r.buffer(to) + offset, note + " destination");
      w.write64(reg(dma::kSizeLow), chunk.slice_bytes(j), note + " size");
      w.write(reg(dma::kOp), r.reduce() ? dma::kOpUpdate : dma::kOpStore,
              note + (r.reduce() ? " op = update" : " op = store"));
      w.write(reg(dma::kElement), element_code(r.spec->element), note + " element");
      w.write(reg(dma::kTag), dma_slice_tag(p, j, r.slices), note + " tag");
      w.write(reg(dma::kDoorbell), 1, note + " doorbell");
    }
  }
}

// Polls every region of the op until it counts `slices` more fires (`done` holds the totals since
// the program's RESET), in step order, then the DMA engine until it is idle.
void wait_done(Writer& w, const RankOp& r, std::vector<std::uint32_t>& done) {
  const std::vector<int> received = r.received();
  for (int p : received) {
    const int region = r.region(p);
    std::uint32_t& count = done[to_size(region)];
    count += static_cast<std::uint32_t>(r.slices);
    w.poll(r.tracker + tracker::kRegionDone + 4 * static_cast<std::uint64_t>(region), count,
           "wait for chunk " + std::to_string(p) + " (region " + std::to_string(region) +
               (p == received.back() ? ", the last one)" : ")"));
  }
  w.poll(r.dma + dma::kStatus, 0, "wait for the DMA engine to be idle");
}

}  // namespace

void check_dma_spec(const DmaCollectiveSpec& spec) {
  const std::string where = std::string("dma collective (") + to_string(spec.pattern) + "): ";
  const bool direct = spec.pattern == DmaPattern::Direct;
  const int most_ranks = direct ? kMaxDirectDmaRanks : kMaxDmaRanks;
  if (spec.ranks < 2 || spec.ranks > most_ranks) {
    bad_plan(where + "ranks = " + std::to_string(spec.ranks) + " must be in [2, " +
             std::to_string(most_ranks) + "] (" +
             (direct ? "one doorbell descriptor per peer and slice"
                     : "two tracker regions per chunk position") +
             ")");
  }
  const std::uint64_t element_bytes = bytes_of(spec.element, 1);
  if (spec.bytes == 0 || spec.bytes % element_bytes != 0) {
    bad_plan(where + "bytes = " + std::to_string(spec.bytes) +
             " must be a positive multiple of the " + std::to_string(element_bytes) + "-byte " +
             to_string(spec.element) + " element");
  }
  const int most_slices = dma_max_slices(spec);
  if (spec.slices < 0 || spec.slices > most_slices) {
    bad_plan(where + "slices = " + std::to_string(spec.slices) + " must be in [0, " +
             std::to_string(most_slices) + "] (0: automatic" +
             (direct ? "; ranks - 1 chunks of slices share the " +
                           std::to_string(dma::kDescriptors) + " descriptors)"
                     : ")"));
  }
  // Every non-empty chunk has at least max(q, 1) elements, one per slice at the least.
  const std::int64_t most = std::max<std::int64_t>(smaller_chunk(spec), 1);
  if (spec.slices > most) {
    bad_plan(where + "slices = " + std::to_string(spec.slices) + " is more than the " +
             std::to_string(most) +
             " elements of the smallest non-empty chunk (a slice holds at least one)");
  }
  // The largest slice is the last one of a larger chunk; a direct reduce-scatter counts it once
  // per peer.
  std::uint64_t largest = 0;
  for (int p = 0; p < spec.ranks; ++p) largest = std::max(largest, dma_chunk(spec, p).last);
  const std::uint64_t counted =
      direct ? largest * static_cast<std::uint64_t>(spec.ranks - 1) : largest;
  if (counted > std::numeric_limits<std::uint32_t>::max()) {
    bad_plan(where + "bytes = " + std::to_string(spec.bytes) + ": a tracker threshold of " +
             std::to_string(counted) +
             " bytes exceeds the tracker's 32-bit THRESHOLD; use more slices or fewer bytes");
  }
}

std::int64_t DmaCollectiveSpec::elements() const {
  return static_cast<std::int64_t>(bytes / bytes_of(element, 1));
}

std::uint64_t DmaCollectiveSpec::chunk_bytes(int chunk) const {
  return bytes_of(element, chunk_range(elements(), ranks, chunk).size());
}

int dma_max_slices(const DmaCollectiveSpec& spec) {
  if (spec.pattern == DmaPattern::Ring || spec.ranks < 2) return kMaxDmaSlices;
  return std::max(1, kMaxDmaSlices / (spec.ranks - 1));
}

int dma_slices(const DmaCollectiveSpec& spec) {
  if (spec.slices > 0) return spec.slices;
  const std::int64_t elements = smaller_chunk(spec);
  for (int s = dma_max_slices(spec); s > 1; --s) {
    if (elements > 0 && elements % s == 0) return s;
  }
  return 1;
}

DmaChunk dma_chunk(const DmaCollectiveSpec& spec, int position) {
  const ElementRange range = chunk_range(spec.elements(), spec.ranks, position);
  DmaChunk chunk;
  chunk.offset = bytes_of(spec.element, range.first);
  chunk.bytes = bytes_of(spec.element, range.size());
  if (range.size() == 0) return chunk;
  chunk.slices = dma_slices(spec);
  const std::int64_t slice = range.size() / chunk.slices;
  chunk.slice = bytes_of(spec.element, slice);
  chunk.last = bytes_of(spec.element, range.size() - (chunk.slices - 1) * slice);
  return chunk;
}

std::uint32_t dma_slice_tag(int position, int slice, int slices) {
  return static_cast<std::uint32_t>(position * slices + slice);
}

int dma_reduce_scatter_region(int position) {
  return position;
}

int dma_all_gather_region(int position, int ranks) {
  return ranks + position;
}

std::vector<int> dma_received_chunks(CollectiveOp op, int rank, int ranks, DmaPattern pattern) {
  const bool reduce = op == CollectiveOp::ReduceScatter;
  if (pattern == DmaPattern::Direct) {
    // Reduce-scatter: the owned chunk, from every peer. All-gather: each peer's owned chunk, from
    // rank - 1 (which sends to this rank first) back round to rank + 1.
    if (reduce) return {static_cast<int>(t3_owned_chunk(rank, ranks))};
    std::vector<int> chunks;
    for (int k = 0; k < ranks - 1; ++k) {
      chunks.push_back(static_cast<int>(t3_owned_chunk(wrap(rank - 1 - k, ranks), ranks)));
    }
    return chunks;
  }
  // What rank + 1 sends at step k: its first chunk (k = 0), then what it received at k - 1.
  const int first = reduce ? 3 : 2;
  std::vector<int> chunks;
  for (int k = 0; k < ranks - 1; ++k) chunks.push_back(wrap(rank + first + k, ranks));
  return chunks;
}

std::vector<DmaSend> dma_sends(const DmaCollectiveSpec& spec, CollectiveOp op, int rank) {
  const int n = spec.ranks;
  const bool reduce = op == CollectiveOp::ReduceScatter;
  const auto owned = static_cast<int>(t3_owned_chunk(rank, n));
  if (spec.pattern == DmaPattern::Ring) {
    return {{reduce ? static_cast<int>(t3_first_chunk(rank, n)) : owned, t3_next_gpu(rank, n)}};
  }
  // At step k every rank targets a different peer: rank + 1 + k.
  std::vector<DmaSend> sends;
  for (int k = 0; k < n - 1; ++k) {
    const int peer = wrap(rank + 1 + k, n);
    sends.push_back({reduce ? static_cast<int>(t3_owned_chunk(peer, n)) : owned, peer});
  }
  return sends;
}

const char* to_string(DmaPattern pattern) {
  return pattern == DmaPattern::Direct ? "direct" : "ring";
}

std::vector<std::uint64_t> dma_ring_buffers(const SystemConfig& config, std::uint64_t hbm_offset) {
  std::vector<std::uint64_t> buffers;
  for (int g = 0; g < static_cast<int>(config.gpus); ++g) {
    buffers.push_back(hbm_base(config, g) + align_up(hbm_offset, 4096));
  }
  return buffers;
}

std::vector<Program> dma_collective_programs(const SystemConfig& config,
                                             const std::vector<std::uint64_t>& buffers,
                                             const DmaCollectiveSpec& spec,
                                             const std::vector<CollectiveOp>& ops) {
  check_dma_spec(spec);
  if (spec.pattern == DmaPattern::Direct && config.topology.kind == TopologyKind::Ring) {
    bad_plan(
        "dma collective (direct): needs topology.kind = fully-connected or switch; on a ring "
        "a direct send would cross other GPUs' links");
  }
  const int n = spec.ranks;
  if (n != static_cast<int>(config.gpus)) {
    bad_plan("dma collective: ranks = " + std::to_string(n) + " but the system has " +
             std::to_string(config.gpus) + " GPUs");
  }
  if (static_cast<int>(buffers.size()) != n) {
    bad_plan("dma collective: buffers: " + std::to_string(buffers.size()) + " for " +
             std::to_string(n) + " ranks");
  }
  for (int g = 0; g < n; ++g) {
    const std::uint64_t base = hbm_base(config, g);
    const std::uint64_t at = buffers[to_size(g)];
    if (at < base || at - base > config.hbm.capacity_bytes ||
        spec.bytes > config.hbm.capacity_bytes - (at - base)) {
      bad_plan("dma collective: buffers[" + std::to_string(g) + "] = " + std::to_string(at) + ": " +
               std::to_string(spec.bytes) + " bytes do not fit in GPU " + std::to_string(g) +
               "'s HBM window");
    }
  }
  if (ops.empty()) bad_plan("dma collective: ops: nothing to run");
  if (spec.barrier_base > std::numeric_limits<std::uint32_t>::max() - (ops.size() - 1)) {
    bad_plan("dma collective: barrier_base = " + std::to_string(spec.barrier_base) +
             " leaves no room for " + std::to_string(ops.size()) + " barrier ids");
  }

  std::vector<DmaChunk> chunks;
  bool even = true;
  for (int p = 0; p < n; ++p) {
    chunks.push_back(dma_chunk(spec, p));
    even = even && chunks.back().even();
  }
  std::vector<Program> programs(to_size(n));
  for (int g = 0; g < n; ++g) {
    Program& program = programs[to_size(g)];
    const std::uint64_t tracker_block = mmio_block(config, g, mmio_map::kTracker);
    Writer reset{program, "dma collective rank " + std::to_string(g)};
    reset.write(tracker_block + tracker::kReset, 1, "tracker reset (REGION_DONE counts from 0)");
    if (!even) {
      // Regions with GRID_COLS set group TAG_GROUP tags per entry, and RESET keeps it.
      reset.write(tracker_block + tracker::kTagGroup, 1, "tag group 1: every slice on its own");
    }
    std::vector<std::uint32_t> done(tracker::kRegions, 0);
    const RankOp* previous = nullptr;
    std::vector<RankOp> steps;
    steps.reserve(ops.size());
    for (std::size_t k = 0; k < ops.size(); ++k) {
      steps.push_back(RankOp{&spec, ops[k], g, n, dma_slices(spec), &chunks, &buffers,
                             tracker_block, mmio_block(config, g, mmio_map::kDma)});
      const RankOp& r = steps.back();
      Writer w{program, "dma " + std::string(to_string(r.op)) + " rank " + std::to_string(g)};
      if (previous) disable_regions(w, *previous);
      program_regions(w, r);
      w.barrier(spec.barrier_base + static_cast<std::uint32_t>(k),
                "every rank armed its regions (and finished the previous op)");
      ring_doorbells(w, r);
      wait_done(w, r, done);
      previous = &r;
    }
    Writer w{program, "dma collective rank " + std::to_string(g)};
    disable_regions(w, *previous);
  }
  return programs;
}

}  // namespace t3
