#include "workloads/scenario.h"

#include <algorithm>
#include <stdexcept>

#include "config/config_io.h"
#include "protocol/dispatcher_registers.h"
#include "protocol/dma_registers.h"
#include "protocol/mmio_map.h"
#include "protocol/to_size.h"
#include "workloads/collective_program.h"
#include "workloads/dma_collective.h"
#include "workloads/plan_util.h"
#include "workloads/t3_plan.h"

namespace t3 {

namespace {

const std::vector<Scenario> kScenarios = {Scenario::Sequential, Scenario::T3, Scenario::T3Mca,
                                          Scenario::Ideal, Scenario::IdealRsNmc};
const std::vector<Scenario> kSoftwareOverlap = {Scenario::Slicing, Scenario::CommFuse,
                                                Scenario::CommFuseAg};

HostCommand barrier(std::uint32_t id, const std::string& note) {
  return {HostCommand::Kind::Barrier, 0, id, note};
}

// Phase k ends at barrier kStartBarrier + 1 + k.
void end_phase(Program& program, const std::vector<PhaseSpec>& phases, std::size_t k) {
  program.commands.push_back(
      barrier(kStartBarrier + 1 + static_cast<std::uint32_t>(k), "end of " + phases.at(k).name));
}

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
                     bool gated) {
  RingOnOutput ring;
  ring.order = order;
  ring.spec.ranks = static_cast<int>(config.gpus);
  ring.spec.bytes = bytes;
  ring.spec.element = element;
  const auto chunk_elements = static_cast<std::int64_t>(bytes / bytes_of(element, 1) /
                                                        static_cast<std::uint64_t>(config.gpus));
  ring.spec.channels =
      static_cast<int>(std::min<std::int64_t>(default_ring_channels(config), chunk_elements));
  if (gated) {
    // A ring that overlaps the GEMM stays resident beside it: it may take at most a quarter of
    // the SM slots, so the GEMM always has slots to run in.
    const std::int64_t slots = config.sm.count * config.sm.occupancy;
    ring.spec.channels = static_cast<int>(
        std::max<std::int64_t>(1, std::min<std::int64_t>(ring.spec.channels, slots / 4)));
    // Every channel moves its share of a chunk as one slice, each step whole, so step k completes
    // chunk k alone.
    const std::int64_t share = (chunk_elements + ring.spec.channels - 1) / ring.spec.channels;
    ring.spec.slice_bytes = static_cast<std::uint32_t>(align_up(bytes_of(element, share), 4));
  } else {
    // A gated ring keeps one ring: its producer follows that ring's chunk order.
    ring.spec.ring_strides = ring_strides_for(config, ring.spec.channels);
  }
  const std::uint64_t base = plan.gemm.gpus.front().buffers.*buffer;
  const auto by_gpu = plan_collective(config.address_map, ring.spec, base - hbm_base(config, 0));
  for (int r = 0; r < ring.spec.ranks; ++r) {
    const auto g = static_cast<std::size_t>(order.gpu(r));
    if (by_gpu[g].buffer != plan.gemm.gpus[g].buffers.*buffer) {
      throw std::logic_error("scenario: the ring collective's buffer is not GPU " +
                             std::to_string(g) + "'s GEMM buffer");
    }
    ring.layout.push_back(by_gpu[g]);
  }
  return ring;
}

RingOnOutput ring_on_output(const SystemConfig& config, const ScenarioPlan& plan,
                            ElementType element, T3Ring order, bool gated = false) {
  return ring_on(config, plan, plan.output_bytes, &GemmBuffers::c, element, order, gated);
}

void append_ring(Program& program, const RingOnOutput& ring, int gpu, CollectiveOp op,
                 std::uint32_t sequence) {
  CollectiveLaunch launch = ring_launch(ring.layout, ring.spec, ring.order.rank(gpu), op, sequence);
  launch.label = op == CollectiveOp::ReduceScatter ? "ring reduce-scatter" : "ring all-gather";
  append_collective(program, launch);
}

void require_equal_chunks(const SystemConfig& config, const GemmShape& shape) {
  const std::int64_t tile_rows = (shape.m + config.gemm.tile_m - 1) / config.gemm.tile_m;
  if (shape.m % config.gemm.tile_m != 0 || tile_rows % config.gpus != 0) {
    throw std::invalid_argument(
        "scenario: M = " + std::to_string(shape.m) + " must be a multiple of tile_m (" +
        std::to_string(config.gemm.tile_m) + ") with its tile rows splitting into " +
        std::to_string(config.gpus) + " equal chunks, one per GPU");
  }
}

// States the `bytes` at GPU 0's `buffer` (a ring collective's buffer, at the same offset on every
// GPU) as a band of the plan's rotation: n chunks whose positions follow GPU indices by `sign`,
// `tags_per_chunk` tracking tags each. Buffers whose elements do not split into n equal chunks
// (chunk_range) leave the plan without a rotation: GPU g's chunks are then not GPU 0's moved.
void add_rotation_band(const SystemConfig& config, ScenarioPlan& plan, std::uint64_t buffer,
                       std::uint64_t bytes, ElementType element, const std::string& what,
                       int sign = 1, std::uint32_t tags_per_chunk = 0) {
  if (!plan.rotation_refused.empty()) return;
  const auto n = static_cast<std::uint64_t>(config.gpus);
  const std::uint64_t element_bytes = bytes_of(element, 1);
  if (bytes % (n * element_bytes) != 0) {
    plan.rotation = {};
    plan.rotation_refused = what + "'s " + std::to_string(bytes / element_bytes) +
                            " elements do not split into " + std::to_string(n) +
                            " equal chunks, so the GPUs' programs are not rotations of one another";
    return;
  }
  plan.rotation.gpus = static_cast<int>(config.gpus);
  plan.rotation.bands.push_back({buffer - hbm_base(config, 0), bytes / n, sign, 0, tags_per_chunk});
}

// C lies at the same offset of every GPU's window in n equal chunks (require_equal_chunks), so
// GPU g's chunk positions are GPU 0's moved by g: one band.
void rotate_output(const SystemConfig& config, ScenarioPlan& plan, ElementType out_element,
                   int sign, std::uint32_t tags_per_chunk) {
  const std::uint64_t offset = plan.gemm.gpus.front().buffers.c - hbm_base(config, 0);
  for (int g = 0; g < config.gpus; ++g) {
    if (plan.gemm.gpus[to_size(g)].buffers.c - hbm_base(config, g) != offset) {
      throw std::logic_error("scenario: GPU " + std::to_string(g) +
                             "'s output is not at GPU 0's offset, so GPUs are not rotations of "
                             "one another");
    }
  }
  add_rotation_band(config, plan, plan.gemm.gpus.front().buffers.c, plan.output_bytes, out_element,
                    "C", sign, tags_per_chunk);
}

// GEMM, then a reduce-scatter (SM ring or DMA + NMC), then the SM ring all-gather.
void plan_sequential(const SystemConfig& config, ScenarioPlan& plan, ElementType out_element,
                     bool dma_reduce_scatter) {
  plan.phases = {{"gemm", PhaseKind::Gemm},
                 {"reduce_scatter", PhaseKind::ReduceScatter},
                 {"all_gather", PhaseKind::AllGather}};
  const RingOnOutput ring =
      ring_on_output(config, plan, out_element, T3Ring{static_cast<int>(config.gpus)});
  std::vector<Program> dma_rs;
  std::uint32_t dma_tags_per_chunk = 0;  // the DMA ring tags its slices chunk by chunk
  if (dma_reduce_scatter) {
    DmaCollectiveSpec spec;
    plan.direct = direct_collective(config);
    spec.pattern = plan.direct ? DmaPattern::Direct : DmaPattern::Ring;
    spec.ranks = static_cast<int>(config.gpus);
    spec.bytes = plan.output_bytes;
    spec.element = out_element;
    std::vector<std::uint64_t> buffers;
    for (const GpuGemm& gpu : plan.gemm.gpus) buffers.push_back(gpu.buffers.c);
    dma_tags_per_chunk = static_cast<std::uint32_t>(dma_slices(spec));
    dma_rs = dma_collective_programs(config, buffers, spec, {CollectiveOp::ReduceScatter});
  }
  for (int g = 0; g < config.gpus; ++g) {
    Program program;
    program.commands.push_back(barrier(kStartBarrier, "start"));
    append_gemm(program, plan.gemm.gpus[to_size(g)].launch);
    end_phase(program, plan.phases, 0);
    if (dma_reduce_scatter) {
      const auto& commands = dma_rs[to_size(g)].commands;
      program.commands.insert(program.commands.end(), commands.begin(), commands.end());
    } else {
      append_ring(program, ring, g, CollectiveOp::ReduceScatter, 1);
    }
    end_phase(program, plan.phases, 1);
    append_ring(program, ring, g, CollectiveOp::AllGather, 2);
    end_phase(program, plan.phases, 2);
    plan.programs.push_back(std::move(program));
    plan.owned_chunks.push_back(owner_chunk(g, static_cast<int>(config.gpus)));
  }
  rotate_output(config, plan, out_element, 1, dma_tags_per_chunk);
}

// T3's fused GEMM + reduce-scatter, then the SM ring all-gather.
void plan_fused(const SystemConfig& config, const GemmShape& shape, ScenarioPlan& plan,
                ElementType element, ElementType out_element) {
  plan.phases = {{"gemm_rs", PhaseKind::GemmReduceScatter}, {"all_gather", PhaseKind::AllGather}};
  const T3GemmRsPlan fused =
      plan_t3_gemm_rs(config, shape, element, out_element, direct_collective(config));
  plan.gemm = fused.gemm;
  plan.direct = fused.direct;
  const RingOnOutput ring = ring_on_output(config, plan, out_element, fused.ring);
  std::vector<Program> programs = fused.programs();
  for (int g = 0; g < config.gpus; ++g) {
    Program& program = programs[to_size(g)];
    // The tracker's regions are set up before the clock starts, as a library configures them
    // once per buffer.
    const auto setup = static_cast<std::ptrdiff_t>(fused.tracker_setup[g].size());
    program.commands.insert(program.commands.begin() + setup, barrier(kStartBarrier, "start"));
    end_phase(program, plan.phases, 0);
    append_ring(program, ring, g, CollectiveOp::AllGather, 1);
    end_phase(program, plan.phases, 1);
    plan.owned_chunks.push_back(fused.ring.owned_chunk(g));
  }
  plan.programs = std::move(programs);
  rotate_output(config, plan, out_element,
                fused.ring.direction == RingDirection::Descending ? 1 : -1,
                static_cast<std::uint32_t>(fused.tiles_per_chunk));
}

// C itself, one band.
OutputBand whole_output(const ScenarioPlan& plan) {
  OutputBand band{0, plan.output_bytes, {}};
  for (const GpuGemm& gpu : plan.gemm.gpus) band.address.push_back(gpu.buffers.c);
  return band;
}

// Software overlap launches its communication on this hardware queue, dispatched first.
constexpr int kCommQueue = 1;

HostCommand comm_queue_first(const GemmLaunch& gemm) {
  return {HostCommand::Kind::WriteRegister,
          gemm.dispatcher + dispatcher::queue_register(kCommQueue, dispatcher::kQueuePriority), 1,
          "communication queue first, as NCCL's high-priority streams"};
}

// Rows band `index` of `whole`'s GEMM (bands of `band.m` rows: A's rows from the band's, A being
// tile-contiguous) stored to `output`.
GemmLaunch row_band(const GemmLaunch& whole, const GemmShape& band, std::int64_t index,
                    std::uint64_t output, const std::string& label) {
  GemmLaunch launch = whole;
  launch.shape = band;
  launch.a = whole.a + static_cast<std::uint64_t>(index) * bytes_of(whole.element, band.m * band.k);
  launch.outputs = chunk_outputs(output, band, whole.tiles, 1, whole.out_element);
  launch.label = label;
  return launch;
}

// The software-overlap scenarios cut the GEMM into n x workload.split bands of whole tile rows;
// anything else is refused naming the scenario and the key.
void require_whole_bands(const SystemConfig& config, const GemmShape& shape, const char* scenario,
                         const char* what) {
  const std::int64_t bands = config.gpus * config.workload.split;
  if (shape.m % (bands * config.gemm.tile_m) != 0) {
    throw std::invalid_argument(
        std::string("scenario ") + scenario +
        ": workload.split = " + std::to_string(config.workload.split) +
        ": M = " + std::to_string(shape.m) + " does not cut into " + std::to_string(bands) + " " +
        what + " of whole tile rows (tile_m " + std::to_string(config.gemm.tile_m) + ")");
  }
}

// Software overlap (see scenario.h): n x workload.split bands, each a GEMM launch on queue 0 and,
// once it is done, its ring reduce-scatter on queue 1 while the next band computes; then the ring
// all-gather of each band. Each band has its own buffer with its ring FIFO after it (the FIFO
// follows the buffer, protocol/ring.h), from where C starts.
void plan_slicing(const SystemConfig& config, ScenarioPlan& plan, ElementType out_element) {
  const int n = static_cast<int>(config.gpus);
  const GemmShape& shape = plan.gemm.shape;
  const std::int64_t slices = n * config.workload.split;
  require_whole_bands(config, shape, "slicing", "slices");
  plan.phases = {{"gemm_rs", PhaseKind::GemmReduceScatter}, {"all_gather", PhaseKind::AllGather}};
  const GemmShape band_shape{shape.m / slices, shape.n, shape.k};
  const std::uint64_t band_bytes = plan.output_bytes / static_cast<std::uint64_t>(slices);

  CollectiveSpec spec;
  spec.ranks = n;
  spec.bytes = band_bytes;
  spec.element = out_element;
  spec.channels = static_cast<int>(
      std::min<std::int64_t>(default_ring_channels(config),
                             static_cast<std::int64_t>(band_bytes / bytes_of(out_element, 1)) / n));
  spec.channels = std::max(spec.channels, 1);
  spec.ring_strides = ring_strides_for(config, spec.channels);
  std::vector<std::vector<CollectiveGpuLayout>> layouts;  // per band, by GPU
  std::uint64_t offset = plan.gemm.gpus.front().buffers.c - hbm_base(config, 0);
  for (std::int64_t i = 0; i < slices; ++i) {
    layouts.push_back(plan_collective(config.address_map, spec, offset));
    const CollectiveGpuLayout& first = layouts.back().front();
    if (first.end - hbm_base(config, 0) > config.hbm.capacity_bytes) {
      throw std::invalid_argument("scenario slicing: " + std::to_string(slices) +
                                  " bands with their FIFOs do not fit in hbm.capacity_bytes");
    }
    OutputBand band{static_cast<std::uint64_t>(i) * band_bytes, band_bytes, {}};
    for (const CollectiveGpuLayout& gpu : layouts.back()) band.address.push_back(gpu.buffer);
    plan.bands.push_back(std::move(band));
    // Every GPU does slice i at the same time, and slice i's ring is rank g on GPU g: its buffer
    // rotates as C does in sequential; its FIFO (after it) keeps its offset.
    add_rotation_band(config, plan, first.buffer, band_bytes, out_element,
                      "slice " + std::to_string(i));
    offset = first.end - hbm_base(config, 0);
  }

  const auto sequence = [](std::int64_t k) { return static_cast<std::uint32_t>(k + 1); };
  for (int g = 0; g < n; ++g) {
    const GemmLaunch& whole = plan.gemm.gpus[to_size(g)].launch;
    const auto band_gemm = [&](std::int64_t i) {
      return row_band(whole, band_shape, i, plan.bands[to_size(i)].address[g],
                      "slice " + std::to_string(i) + " gemm");
    };
    const auto band_ring = [&](std::int64_t i, CollectiveOp op, std::uint32_t seq, int queue) {
      CollectiveLaunch launch = ring_launch(layouts[to_size(i)], spec, g, op, seq);
      launch.label = "slice " + std::to_string(i) +
                     (op == CollectiveOp::ReduceScatter ? " reduce-scatter" : " all-gather");
      launch.queue = queue;
      return launch;
    };
    Program program;
    program.commands.push_back(comm_queue_first(whole));
    program.commands.push_back(barrier(kStartBarrier, "start"));
    append_gemm(program, band_gemm(0));
    for (std::int64_t i = 0; i < slices; ++i) {
      GemmLaunch next;
      if (i + 1 < slices) {
        next = band_gemm(i + 1);
        next.wait = false;
        append_gemm(program, next);
      }
      if (i > 0) {
        program.commands.push_back(wait_kernel(
            whole.dispatcher, kCommQueue, "slice " + std::to_string(i - 1) + " reduce-scatter"));
      }
      CollectiveLaunch rs = band_ring(i, CollectiveOp::ReduceScatter, sequence(i), kCommQueue);
      rs.wait = i + 1 == slices;  // the last band's reduce-scatter is the tail
      append_collective(program, rs);
      if (i + 1 < slices) program.commands.push_back(wait_kernel(whole.dispatcher, 0, next.label));
    }
    end_phase(program, plan.phases, 0);
    for (std::int64_t i = 0; i < slices; ++i) {
      append_collective(program, band_ring(i, CollectiveOp::AllGather, sequence(slices + i), 0));
    }
    end_phase(program, plan.phases, 1);
    plan.programs.push_back(std::move(program));
    plan.owned_chunks.push_back(owner_chunk(g, n));
  }
}

// CommFuse's Flash-RS with its sends on the copy engine (workload.commfuse_engine = copy). Per
// GPU g and ring step k (chunk c_k = reduce_scatter_chunk(g, k)), driven by the host as CUDA
// streams would order them:
//   - the GEMM runs chunk by chunk on queue 0 as in the SM variant, the next launch rung as soon
//     as the previous one ended;
//   - once chunk c_k is computed (k >= 1): wait until the previous GPU's copy of step k - 1 has
//     arrived (its flag in this GPU's mailbox), then an add kernel on queue 1 (SMs) sums it into
//     C's chunk c_k;
//   - (k < n - 1) DMA descriptor k copies C's chunk c_k into the next GPU's receive slot k; when
//     the descriptor is done, descriptor 15 copies the step count from this GPU's mailbox into the
//     next GPU's (the copy engine carries the flag, so it is seen in timing mode too).
// Receive slots: n - 1 chunks after C (where the SM ring's FIFO would be). Mailbox words: the
// count to send at kSentFlag, the count received at kArrivedFlag (8 bytes each).
constexpr std::uint64_t kSentFlag = dispatcher::kMailbox + 4 * (dispatcher::kMailboxWords - 6);
constexpr std::uint64_t kArrivedFlag = dispatcher::kMailbox + 4 * (dispatcher::kMailboxWords - 4);
constexpr int kFlagDescriptor = dma::kDescriptors - 1;

void plan_commfuse_copy(const SystemConfig& config, ScenarioPlan& plan, ElementType out_element,
                        const RingOnOutput& gather) {
  const int n = static_cast<int>(config.gpus);
  if (n - 1 > kFlagDescriptor) {
    throw std::invalid_argument(
        "scenario commfuse: workload.commfuse_engine = copy uses a DMA descriptor per ring step "
        "and one for its flag: at most " +
        std::to_string(kFlagDescriptor + 1) + " GPUs, not " + std::to_string(n));
  }
  const GemmShape& shape = plan.gemm.shape;
  const std::int64_t parts = config.workload.split;
  const GemmShape part_shape{shape.m / (n * parts), shape.n, shape.k};
  const std::uint64_t part_bytes = plan.output_bytes / static_cast<std::uint64_t>(n * parts);
  const std::uint64_t chunk_bytes = plan.output_bytes / static_cast<std::uint64_t>(n);
  const std::uint64_t c0 = plan.gemm.gpus.front().buffers.c;
  const std::uint64_t receive = receive_area(c0, plan.output_bytes) - hbm_base(config, 0);
  if (receive + static_cast<std::uint64_t>(n - 1) * chunk_bytes > config.hbm.capacity_bytes) {
    throw std::invalid_argument("scenario commfuse: the copy engine's " + std::to_string(n - 1) +
                                " receive slots do not fit in hbm.capacity_bytes");
  }
  const std::int64_t slots = config.sm.count * config.sm.occupancy;
  const int add_channels = static_cast<int>(
      std::max<std::int64_t>(1, std::min<std::int64_t>(default_ring_channels(config), slots / 4)));
  for (int g = 0; g < n; ++g) {
    const GemmLaunch& whole = plan.gemm.gpus[to_size(g)].launch;
    const int next = next_rank(g, n);
    const std::uint64_t dma =
        whole.dispatcher - mmio_map::kDispatcher + mmio_map::kDma;  // this GPU's engine
    const std::uint64_t next_dispatcher = plan.gemm.gpus[to_size(next)].launch.dispatcher;
    const auto slot_of = [&](int gpu, int step) {
      return hbm_base(config, gpu) + receive + static_cast<std::uint64_t>(step) * chunk_bytes;
    };
    const auto chunk_at = [&](int chunk) {
      return whole.outputs.front().base + static_cast<std::uint64_t>(chunk) * chunk_bytes;
    };
    Program program;
    const auto write = [&](std::uint64_t address, std::uint32_t value, const std::string& note) {
      program.commands.push_back({HostCommand::Kind::WriteRegister, address, value, note});
    };
    const auto poll = [&](std::uint64_t address, std::uint32_t value, HostCommand::Kind kind,
                          const std::string& note) {
      HostCommand command{kind, address, value, note};
      command.interval_ns = dispatcher::kDefaultPollNs;
      program.commands.push_back(command);
    };
    const auto copy = [&](int d, std::uint64_t source, std::uint64_t destination,
                          std::uint64_t bytes, const std::string& what) {
      const auto reg = [&](std::uint64_t field) {
        return dma + dma::descriptor_register(d, field);
      };
      write(reg(dma::kSrcLow), static_cast<std::uint32_t>(source), what + ": source bits 31:0");
      write(reg(dma::kSrcHigh), static_cast<std::uint32_t>(source >> 32),
            what + ": source bits 63:32");
      write(reg(dma::kDstLow), static_cast<std::uint32_t>(destination),
            what + ": destination bits 31:0");
      write(reg(dma::kDstHigh), static_cast<std::uint32_t>(destination >> 32),
            what + ": destination bits 63:32");
      write(reg(dma::kSizeLow), static_cast<std::uint32_t>(bytes), what + ": size bits 31:0");
      write(reg(dma::kSizeHigh), static_cast<std::uint32_t>(bytes >> 32),
            what + ": size bits 63:32");
      write(reg(dma::kOp), dma::kOpStore, what + ": store");
      write(reg(dma::kElement), element_code(out_element), what + ": element");
      write(reg(dma::kTag), 0xffffffffu, what + ": untracked");
      write(reg(dma::kDoorbell), 1, what + ": doorbell");
    };
    const auto state = [&](int d) { return dma + dma::descriptor_register(d, dma::kState); };

    program.commands.push_back(comm_queue_first(whole));
    program.commands.push_back(barrier(kStartBarrier, "start"));
    std::vector<GemmLaunch> launches;  // in order: chunk by chunk, each in `parts`
    for (int step = 0; step < n; ++step) {
      const int chunk = reduce_scatter_chunk(g, step, n);
      for (std::int64_t part = 0; part < parts; ++part) {
        const std::int64_t index = chunk * parts + part;
        GemmLaunch launch =
            row_band(whole, part_shape, index,
                     whole.outputs.front().base + static_cast<std::uint64_t>(index) * part_bytes,
                     "chunk " + std::to_string(chunk) + " part " + std::to_string(part) + " gemm");
        launch.wait = false;
        launches.push_back(std::move(launch));
      }
    }
    append_gemm(program, launches.front());
    for (std::size_t u = 0; u < launches.size(); ++u) {
      program.commands.push_back(wait_kernel(whole.dispatcher, 0, launches[u].label));
      if (u + 1 < launches.size()) append_gemm(program, launches[u + 1]);
      if ((u + 1) % static_cast<std::size_t>(parts) != 0) continue;
      const int step = static_cast<int>(u / static_cast<std::size_t>(parts));
      const int chunk = reduce_scatter_chunk(g, step, n);
      const std::string at = "copy-engine step " + std::to_string(step);
      if (step > 0) {
        poll(whole.dispatcher + kArrivedFlag, static_cast<std::uint32_t>(step),
             HostCommand::Kind::PollAtLeast, at + ": the previous GPU's partial has arrived");
        CollectiveLaunch add;
        add.op = CollectiveOp::Add;
        add.ranks = n;
        add.rank = g;
        add.channels = add_channels;
        add.dispatcher = whole.dispatcher;
        add.buffer = chunk_at(chunk);
        add.next_buffer = slot_of(g, step - 1);
        add.bytes = chunk_bytes;
        add.element = out_element;
        add.sequence = static_cast<std::uint32_t>(step);
        add.queue = kCommQueue;
        add.label = at + " add of chunk " + std::to_string(chunk);
        append_collective(program, add);
      }
      if (step == n - 1) continue;  // the owned chunk is final
      copy(step, chunk_at(chunk), slot_of(next, step), chunk_bytes,
           at + " copy of chunk " + std::to_string(chunk));
      poll(state(step), dma::kStateDone, HostCommand::Kind::PollRegister, at + ": copy done");
      if (step > 0) {
        poll(state(kFlagDescriptor), dma::kStateDone, HostCommand::Kind::PollRegister,
             at + ": the last flag copy done");
      }
      write(whole.dispatcher + kSentFlag, static_cast<std::uint32_t>(step + 1),
            at + ": count to send");
      copy(kFlagDescriptor, whole.dispatcher + kSentFlag, next_dispatcher + kArrivedFlag, 8,
           at + " flag");
    }
    if (n > 1) {
      poll(state(kFlagDescriptor), dma::kStateDone, HostCommand::Kind::PollRegister,
           "copy-engine: the last flag copy done");
    }
    end_phase(program, plan.phases, 0);
    append_ring(program, gather, g, CollectiveOp::AllGather, 2);
    end_phase(program, plan.phases, 1);
    plan.programs.push_back(std::move(program));
    plan.owned_chunks.push_back(owner_chunk(g, n));
  }
}

// CommFuse's Flash-RS (see scenario.h): the sequential run's ring reduce-scatter, launched at
// the start on queue 1 and gated chunk by chunk, while the GEMM runs chunk by chunk on queue 0 in
// the order the ring consumes them; then the ring all-gather.
void plan_commfuse(const SystemConfig& config, ScenarioPlan& plan, ElementType out_element) {
  namespace d = dispatcher;
  const int n = static_cast<int>(config.gpus);
  const GemmShape& shape = plan.gemm.shape;
  const std::int64_t parts = config.workload.split;
  require_whole_bands(config, shape, "commfuse", "launches");
  plan.phases = {{"gemm_rs", PhaseKind::GemmReduceScatter}, {"all_gather", PhaseKind::AllGather}};
  const RingOnOutput gather = ring_on_output(config, plan, out_element, T3Ring{n});
  if (config.workload.commfuse_engine == CommFuseEngine::Copy) {
    plan_commfuse_copy(config, plan, out_element, gather);
    plan.rotation_refused =
        "with workload.commfuse_engine = copy the copy engine moves its flags between the GPUs' "
        "mailboxes (MMIO, which the rotation does not map)";
    return;
  }
  // The reduce-scatter moves each step's chunk whole (one slice per channel), so a step waits only
  // for its own chunk; the all-gather keeps the usual slices.
  const RingOnOutput ring = ring_on_output(config, plan, out_element, T3Ring{n}, true);
  // The gate: the mailbox's last 8 bytes, after every channel's flag area.
  const std::uint64_t gate_offset = d::kMailbox + 4 * (d::kMailboxWords - 2);
  if (d::kMailbox + flag_area_bytes(ring.spec.channels) > gate_offset) {
    throw std::invalid_argument("scenario commfuse: " + std::to_string(ring.spec.channels) +
                                " ring channels leave no mailbox word for the gate");
  }
  const GemmShape part_shape{shape.m / (n * parts), shape.n, shape.k};
  const std::uint64_t part_bytes = plan.output_bytes / static_cast<std::uint64_t>(n * parts);
  for (int g = 0; g < n; ++g) {
    const GemmLaunch& whole = plan.gemm.gpus[to_size(g)].launch;
    const std::uint64_t gate = whole.dispatcher + gate_offset;
    Program program;
    const auto write = [&](std::uint64_t address, std::uint32_t value, const std::string& note) {
      program.commands.push_back({HostCommand::Kind::WriteRegister, address, value, note});
    };
    program.commands.push_back(comm_queue_first(whole));
    write(gate + 4, 1, "gate: sequence 1 (bits 63:32)");
    write(gate, 0, "gate: no chunk ready yet");
    program.commands.push_back(barrier(kStartBarrier, "start"));
    CollectiveLaunch rs = ring_launch(ring.layout, ring.spec, g, CollectiveOp::ReduceScatter, 1);
    rs.label = "flash-rs ring";
    rs.queue = kCommQueue;
    rs.wait = false;
    rs.gate = gate;
    append_collective(program, rs);
    for (int step = 0; step < n; ++step) {
      const int chunk = reduce_scatter_chunk(g, step, n);
      for (std::int64_t part = 0; part < parts; ++part) {
        const std::int64_t index = chunk * parts + part;
        append_gemm(
            program,
            row_band(whole, part_shape, index,
                     whole.outputs.front().base + static_cast<std::uint64_t>(index) * part_bytes,
                     "chunk " + std::to_string(chunk) + " part " + std::to_string(part) + " gemm"));
      }
      write(
          gate, static_cast<std::uint32_t>(step + 1),
          "gate: chunk " + std::to_string(chunk) + " ready for ring step " + std::to_string(step));
    }
    program.commands.push_back(wait_kernel(whole.dispatcher, kCommQueue, rs.label));
    end_phase(program, plan.phases, 0);
    append_ring(program, gather, g, CollectiveOp::AllGather, 2);
    end_phase(program, plan.phases, 1);
    plan.programs.push_back(std::move(program));
    plan.owned_chunks.push_back(owner_chunk(g, n));
  }
  rotate_output(config, plan, out_element, 1, 0);
}

// Sequential for an all-gathered input: the ring all-gather of A, then the whole GEMM.
void plan_gather_sequential(const SystemConfig& config, ScenarioPlan& plan, ElementType element) {
  const int n = static_cast<int>(config.gpus);
  plan.phases = {{"all_gather", PhaseKind::AllGather}, {"gemm", PhaseKind::Gemm}};
  const RingOnOutput ring = ring_on(config, plan, plan.gemm.gpus.front().buffers.a_bytes,
                                    &GemmBuffers::a, element, T3Ring{n}, false);
  for (int g = 0; g < n; ++g) {
    Program program;
    program.commands.push_back(barrier(kStartBarrier, "start"));
    append_ring(program, ring, g, CollectiveOp::AllGather, 1);
    end_phase(program, plan.phases, 0);
    append_gemm(program, plan.gemm.gpus[to_size(g)].launch);
    end_phase(program, plan.phases, 1);
    plan.programs.push_back(std::move(program));
    plan.owned_chunks.push_back(owner_chunk(g, n));
  }
  // The ring's chunks are A's row bands, GPU g ring rank g (ring_on checked A's offsets).
  add_rotation_band(config, plan, ring.layout.front().buffer, ring.spec.bytes, element, "A");
}

// CommFuse's Flash-AG (see scenario.h): the ring all-gather of A on queue 1 from the start, each
// step one whole chunk per channel; the GEMM band by band on queue 0, the band already here first,
// then each band once every channel's READY flag shows its step arrived.
void plan_commfuse_ag(const SystemConfig& config, ScenarioPlan& plan, ElementType element) {
  const int n = static_cast<int>(config.gpus);
  const GemmShape& shape = plan.gemm.shape;
  const std::int64_t parts = config.workload.split;
  require_whole_bands(config, shape, "commfuse-ag", "launches");
  plan.phases = {{"ag_gemm", PhaseKind::AllGatherGemm}};
  const RingOnOutput ring = ring_on(config, plan, plan.gemm.gpus.front().buffers.a_bytes,
                                    &GemmBuffers::a, element, T3Ring{n}, true);
  const GemmShape part_shape{shape.m / (n * parts), shape.n, shape.k};
  const std::uint64_t part_bytes = plan.output_bytes / static_cast<std::uint64_t>(n * parts);
  for (int g = 0; g < n; ++g) {
    const GemmLaunch& whole = plan.gemm.gpus[to_size(g)].launch;
    const CollectiveGpuLayout& here = ring.layout[to_size(g)];
    Program program;
    program.commands.push_back(comm_queue_first(whole));
    program.commands.push_back(barrier(kStartBarrier, "start"));
    CollectiveLaunch gather = ring_launch(ring.layout, ring.spec, g, CollectiveOp::AllGather, 1);
    gather.label = "flash-ag ring";
    gather.queue = kCommQueue;
    gather.wait = false;
    append_collective(program, gather);
    std::string running;  // the GEMM launch in flight on queue 0
    for (int step = -1; step < n - 1; ++step) {
      // Step -1: the band this GPU holds; step s: the one prev sent at its step s.
      const int chunk = owner_chunk(g - step - 1, n);
      for (int c = 0; step >= 0 && c < ring.spec.channels; ++c) {
        HostCommand arrived{HostCommand::Kind::PollAtLeast, ready_flag(here.flags, c),
                            static_cast<std::uint32_t>(step + 1),
                            "flash-ag: chunk " + std::to_string(chunk) + " arrived on channel " +
                                std::to_string(c) + " (READY count, ring step " +
                                std::to_string(step) + ")"};
        arrived.interval_ns = ring.spec.poll_ns;
        program.commands.push_back(arrived);
      }
      for (std::int64_t part = 0; part < parts; ++part) {
        if (!running.empty()) program.commands.push_back(wait_kernel(whole.dispatcher, 0, running));
        const std::int64_t index = chunk * parts + part;
        GemmLaunch launch =
            row_band(whole, part_shape, index,
                     whole.outputs.front().base + static_cast<std::uint64_t>(index) * part_bytes,
                     "chunk " + std::to_string(chunk) + " part " + std::to_string(part) + " gemm");
        launch.wait = false;
        append_gemm(program, launch);
        running = launch.label;
      }
    }
    program.commands.push_back(wait_kernel(whole.dispatcher, 0, running));
    program.commands.push_back(wait_kernel(whole.dispatcher, kCommQueue, gather.label));
    end_phase(program, plan.phases, 0);
    plan.programs.push_back(std::move(program));
    plan.owned_chunks.push_back(owner_chunk(g, n));
  }
  // GPU g's program is GPU 0's with every chunk moved by g: the ring is rank g on GPU g, and the
  // GEMM takes the bands in the order the ring brings them, starting from the one GPU g holds.
  // Only the ring crosses GPUs (into A's row bands; C stays local).
  add_rotation_band(config, plan, ring.layout.front().buffer, ring.spec.bytes, element, "A");
}

}  // namespace

std::vector<Scenario> all_scenarios() {
  return kScenarios;
}

bool rotation_invariant(const SystemConfig& config, Scenario scenario) {
  return scenario != Scenario::CommFuse || config.workload.commfuse_engine != CommFuseEngine::Copy;
}

std::vector<Scenario> known_scenarios() {
  std::vector<Scenario> all = kScenarios;
  all.insert(all.end(), kSoftwareOverlap.begin(), kSoftwareOverlap.end());
  return all;
}

const char* to_string(Scenario scenario) {
  switch (scenario) {
    case Scenario::Sequential:
      return "sequential";
    case Scenario::T3:
      return "t3";
    case Scenario::T3Mca:
      return "t3-mca";
    case Scenario::Ideal:
      return "ideal";
    case Scenario::IdealRsNmc:
      return "ideal-rs-nmc";
    case Scenario::Slicing:
      return "slicing";
    case Scenario::CommFuse:
      return "commfuse";
    case Scenario::CommFuseAg:
      break;
  }
  return "commfuse-ag";
}

Scenario parse_scenario(const std::string& name) {
  std::string names;
  for (Scenario scenario : known_scenarios()) {
    if (name == to_string(scenario)) return scenario;
    names += (names.empty() ? "" : ", ") + std::string(to_string(scenario));
  }
  throw ConfigError("scenario '" + name + "': unknown (choices: " + names + ")");
}

const char* to_string(PhaseKind kind) {
  switch (kind) {
    case PhaseKind::Gemm:
      return "gemm";
    case PhaseKind::GemmReduceScatter:
      return "gemm_rs";
    case PhaseKind::ReduceScatter:
      return "reduce_scatter";
    case PhaseKind::AllGather:
      return "all_gather";
    case PhaseKind::AllGatherGemm:
      break;
  }
  return "ag_gemm";
}

SystemConfig scenario_config(const SystemConfig& config, Scenario scenario) {
  SystemConfig effective = config;
  if (scenario == Scenario::T3) effective.hbm.arbitration = Arbitration::Fcfs;
  if (scenario == Scenario::T3Mca) effective.hbm.arbitration = Arbitration::Mca;
  return effective;
}

int default_ring_channels(const SystemConfig& config) {
  constexpr std::int64_t kSwitchChannels = 24;  // NCCL on 8-GPU NVSwitch machines
  constexpr std::int64_t kLinkChannels = 16;    // point-to-point links: no published figure
  const std::int64_t channels =
      config.topology.kind == TopologyKind::Switch ? kSwitchChannels : kLinkChannels;
  return static_cast<int>(std::min(config.sm.count * config.sm.occupancy, channels));
}

ScenarioPlan plan_scenario(const SystemConfig& config, const GemmShape& shape, Scenario scenario,
                           ElementType element, ElementType out_element) {
  if (config.gpus < 2) {
    throw std::invalid_argument("scenario " + std::string(to_string(scenario)) +
                                ": needs at least 2 GPUs, has " + std::to_string(config.gpus));
  }
  require_equal_chunks(config, shape);
  ScenarioPlan plan;
  plan.scenario = scenario;
  plan.gemm = plan_group_gemm(config, shape, element, out_element);
  plan.output_bytes = plan.gemm.gpus.front().buffers.c_bytes;
  switch (scenario) {
    case Scenario::T3:
    case Scenario::T3Mca:
      plan_fused(config, shape, plan, element, out_element);
      break;
    case Scenario::Sequential:
    case Scenario::Ideal:
      plan_sequential(config, plan, out_element, false);
      break;
    case Scenario::IdealRsNmc:
      plan_sequential(config, plan, out_element, true);
      break;
    case Scenario::Slicing:
      plan_slicing(config, plan, out_element);
      break;
    case Scenario::CommFuse:
      plan_commfuse(config, plan, out_element);
      break;
    case Scenario::CommFuseAg:
      throw std::invalid_argument(
          "scenario commfuse-ag overlaps an all-gather of the GEMM's input: it needs a sublayer "
          "that gathers its input (fc1-ag)");
  }
  if (plan.bands.empty()) plan.bands = {whole_output(plan)};
  return plan;
}

bool applies_to(Scenario scenario, Sublayer sublayer) {
  if (gathers_input(sublayer)) {
    return scenario == Scenario::Sequential || scenario == Scenario::CommFuseAg;
  }
  return scenario != Scenario::CommFuseAg;
}

ScenarioPlan plan_sublayer_scenario(const SystemConfig& config, Sublayer sublayer,
                                    const GemmShape& shape, Scenario scenario) {
  const std::string named =
      "scenario " + std::string(to_string(scenario)) + ": sublayer " + to_string(sublayer);
  if (!applies_to(scenario, sublayer)) {
    if (gathers_input(sublayer)) {
      throw std::invalid_argument(named +
                                  " all-gathers its GEMM's input and reduces nothing (its "
                                  "scenarios: sequential, commfuse-ag)");
    }
    throw std::invalid_argument(named +
                                " reduce-scatters its GEMM's output; commfuse-ag overlaps an "
                                "all-gather of the input (sublayer fc1-ag)");
  }
  if (!gathers_input(sublayer)) return plan_scenario(config, shape, scenario);
  if (config.gpus < 2) {
    throw std::invalid_argument(named + ": needs at least 2 GPUs, has " +
                                std::to_string(config.gpus));
  }
  // A's row bands are the ring's chunks: whole tile rows, one equal band per GPU.
  require_equal_chunks(config, shape);
  ScenarioPlan plan;
  plan.scenario = scenario;
  plan.gathers_input = true;
  plan.gemm = plan_group_gemm(config, shape, ElementType::Fp16, ElementType::Fp16);
  plan.output_bytes = plan.gemm.gpus.front().buffers.c_bytes;
  if (scenario == Scenario::Sequential) {
    plan_gather_sequential(config, plan, ElementType::Fp16);
  } else {
    plan_commfuse_ag(config, plan, ElementType::Fp16);
  }
  plan.bands = {whole_output(plan)};
  return plan;
}

}  // namespace t3
