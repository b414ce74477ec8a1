// commfuse: CommFuse's Flash-RS (see scenario.h), its sends on the SMs or, under
// workload.commfuse_engine = copy, on the copy engine.
#include <algorithm>
#include <stdexcept>

#include "protocol/dispatcher_registers.h"
#include "protocol/dma_registers.h"
#include "protocol/mmio_map.h"
#include "protocol/to_size.h"
#include "workloads/scenarios/common.h"
#include "workloads/scenarios/planners.h"

namespace t3 {

namespace {

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
        GemmLaunch launch = chunk_part_band(whole, part_shape, part_bytes, chunk, part, parts);
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

}  // namespace

bool commfuse_rotation_invariant(const SystemConfig& config) {
  return config.workload.commfuse_engine != CommFuseEngine::Copy;
}

// CommFuse's Flash-RS (see scenario.h): the sequential run's ring reduce-scatter, launched at
// the start on queue 1 and gated chunk by chunk, while the GEMM runs chunk by chunk on queue 0 in
// the order the ring consumes them; then the ring all-gather.
void plan_commfuse(const SystemConfig& config, const GemmShape& /*shape*/, ScenarioPlan& plan,
                   ElementType /*element*/, ElementType out_element) {
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
        append_gemm(program, chunk_part_band(whole, part_shape, part_bytes, chunk, part, parts));
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

}  // namespace t3
