// Ring collectives: schedule, layout and launch programs (see collective_program.h).
#include "workloads/collective_program.h"

#include <algorithm>
#include <stdexcept>

#include "config/config_io.h"
#include "protocol/collective_fields.h"
#include "protocol/mmio_map.h"
#include "protocol/to_size.h"
#include "workloads/gemm_program.h"
#include "workloads/plan_util.h"

namespace t3 {
namespace {

// The checks shared by check_spec and append_collective; `where` prefixes every message.
void check_fields(const std::string& where, int ranks, std::uint64_t bytes, ElementType element,
                  int channels, std::uint32_t slice_bytes, std::uint32_t fifo_depth,
                  std::uint32_t poll_ns) {
  const std::string problem =
      collective_field_problem(ranks, channels, bytes, element, slice_bytes, fifo_depth, poll_ns);
  if (!problem.empty()) bad_plan(where + problem);
}

// The rings of a ring launch: at most kMaxRings and one per channel, every stride Hamiltonian.
void check_rings(const std::string& where, int ranks, int channels,
                 const std::vector<int>& strides) {
  const auto rings = static_cast<int>(strides.size());
  if (rings < 1 || rings > static_cast<int>(dispatcher::kMaxRings) || rings > channels) {
    bad_plan(where + "ring_strides: " + std::to_string(rings) + " rings must be in [1, " +
             std::to_string(std::min<int>(dispatcher::kMaxRings, channels)) + "] (at most " +
             std::to_string(dispatcher::kMaxRings) + " and one per channel)");
  }
  for (int stride : strides) {
    if (!hamiltonian_stride(stride, ranks)) {
      bad_plan(where + "ring stride " + std::to_string(stride) + " must be in [1, " +
               std::to_string(ranks) + ") and coprime with " + std::to_string(ranks) +
               " ranks (a ring that visits every rank)");
    }
  }
}

}  // namespace

std::int64_t CollectiveSpec::elements() const {
  return static_cast<std::int64_t>(bytes / bytes_of(element, 1));
}

std::uint64_t CollectiveSpec::chunk_bytes(int chunk) const {
  return bytes_of(element, chunk_range(elements(), ranks, chunk).size());
}

int direct_mailbox_channels(int ranks) {
  return std::min<int>(static_cast<int>(dispatcher::kMaxChannels),
                       4 * dispatcher::kMailboxWords / (8 * std::max(ranks, 1)));
}

void check_spec(const CollectiveSpec& spec) {
  check_fields("collective: ", spec.ranks, spec.bytes, spec.element, spec.channels,
               spec.slice_bytes, spec.fifo_depth, spec.poll_ns);
  if (!spec.direct) check_rings("collective: ", spec.ranks, spec.channels, spec.ring_strides);
  if (spec.nvls && !spec.direct) {
    bad_plan("collective: nvls keeps the direct layout, so it needs direct as well");
  }
  if (spec.nmc && (!spec.direct || spec.nvls)) {
    bad_plan("collective: nmc pushes over the direct layout, so it needs direct and not nvls");
  }
}

std::vector<int> ring_strides_for(const SystemConfig& config, int channels) {
  if (!several_sm_rings(config)) return {1};
  return mesh_ring_strides(static_cast<int>(config.gpus),
                           std::min<int>(dispatcher::kMaxRings, std::max(channels, 1)));
}

std::vector<CollectiveGpuLayout> plan_collective(const AddressMapConfig& map,
                                                 const CollectiveSpec& spec,
                                                 std::uint64_t hbm_offset) {
  check_spec(spec);
  const std::uint64_t flag_bytes = spec.direct ? direct_flag_area_bytes(spec.channels, spec.ranks)
                                               : flag_area_bytes(spec.channels);
  if (spec.flags == FlagPlacement::Mailbox &&
      flag_bytes > 4 * static_cast<std::uint64_t>(dispatcher::kMailboxWords)) {
    bad_plan("plan_collective: " + std::to_string(spec.channels) + " channels need " +
             std::to_string(flag_bytes) + " bytes of flags, more than the mailbox holds" +
             (spec.direct ? " (direct: 8 bytes per channel and rank)" : ""));
  }
  std::vector<CollectiveGpuLayout> plan;
  for (int g = 0; g < spec.ranks; ++g) {
    CollectiveGpuLayout gpu;
    const std::uint64_t mmio = map.mmio_base + static_cast<std::uint64_t>(g) * map.mmio_stride;
    const std::uint64_t hbm = map.hbm_base + static_cast<std::uint64_t>(g) * map.hbm_stride;
    gpu.dispatcher = mmio + mmio_map::kDispatcher;
    gpu.buffer = align_up(hbm + hbm_offset, kBufferAlignment);
    gpu.buffer_bytes = spec.bytes;
    gpu.receive = receive_area(gpu.buffer, spec.bytes);
    gpu.receive_bytes =
        spec.direct ? 0 : receive_area_bytes(spec.channels, spec.fifo_depth, spec.slice_bytes);
    gpu.end = align_up(gpu.receive + gpu.receive_bytes, kBufferAlignment);
    gpu.flag_bytes = flag_bytes;
    if (spec.flags == FlagPlacement::Mailbox) {
      gpu.flags = gpu.dispatcher + dispatcher::kMailbox;
    } else {
      gpu.flags = gpu.end;
      gpu.end = align_up(gpu.flags + flag_bytes, kBufferAlignment);
    }
    plan.push_back(gpu);
  }
  return plan;
}

void append_collective(Program& program, const CollectiveLaunch& launch) {
  namespace d = dispatcher;
  const std::string& label = launch.label;
  check_fields(label + ": ", launch.ranks, launch.bytes, launch.element, launch.channels,
               launch.slice_bytes, launch.fifo_depth, launch.poll_ns);
  if (launch.rank < 0 || launch.rank >= launch.ranks) {
    bad_plan(label + ": rank = " + std::to_string(launch.rank) + " must be in [0, " +
             std::to_string(launch.ranks) + ")");
  }
  if (launch.sequence == 0) bad_plan(label + ": sequence must be at least 1");
  if (launch.queue < 0 || launch.queue >= d::kQueues) {
    bad_plan(label + ": queue = " + std::to_string(launch.queue) + " must be in [0, " +
             std::to_string(d::kQueues) + ")");
  }
  if (static_cast<std::uint32_t>(launch.op) > d::kDirectNmcReduceScatter) {
    bad_plan(label + ": unknown collective op " +
             std::to_string(static_cast<std::uint32_t>(launch.op)));
  }
  const bool several_rings = launch.several_rings();
  if (several_rings) {
    if (launch.op != CollectiveOp::ReduceScatter && launch.op != CollectiveOp::AllGather) {
      bad_plan(label + ": rings other than the one of stride 1 apply to ring ops only, not " +
               to_string(launch.op));
    }
    if (launch.gate != 0 && !launch.more_rings.empty()) {
      bad_plan(label + ": a gated reduce-scatter runs on one ring (the gate follows its steps)");
    }
    std::vector<int> strides{launch.stride};
    for (const RingRoute& ring : launch.more_rings) strides.push_back(ring.stride);
    check_rings(label + ": ", launch.ranks, launch.channels, strides);
  }

  auto write = [&](std::uint64_t offset, std::uint32_t value, const std::string& what) {
    program.commands.push_back(HostCommand{HostCommand::Kind::WriteRegister,
                                           launch.dispatcher + offset, value, label + ": " + what});
  };
  for (const RegisterWrite& w : to_registers(launch)) write(w.offset, w.value, w.what);
  write(d::doorbell_register(launch.queue), 1, "doorbell (launch)");
  if (launch.gate != 0) {
    write(d::kCollGateLow, 0, "gate cleared (the launch took its copy) 0x0 bits 31:0");
    write(d::kCollGateHigh, 0, "gate cleared (the launch took its copy) 0x0 bits 63:32");
  }
  if (several_rings) {
    write(d::kCollRings, 1, "rings = 1 again (the launch took its copy)");
    write(d::kCollStride, 1, "ring 0 stride = 1 again");
  }
  if (launch.wait) program.commands.push_back(wait_kernel(launch.dispatcher, launch.queue, label));
}

Program collective_program(const CollectiveLaunch& launch) {
  Program program;
  append_collective(program, launch);
  return program;
}

CollectiveLaunch ring_launch(const std::vector<CollectiveGpuLayout>& plan,
                             const CollectiveSpec& spec, int rank, CollectiveOp op,
                             std::uint32_t sequence) {
  if (static_cast<int>(plan.size()) != spec.ranks) {
    bad_plan("ring_launch: the plan has " + std::to_string(plan.size()) + " ranks, the spec " +
             std::to_string(spec.ranks));
  }
  if (rank < 0 || rank >= spec.ranks) {
    bad_plan("ring_launch: rank " + std::to_string(rank) + " outside [0, " +
             std::to_string(spec.ranks) + ")");
  }
  check_spec(spec);
  const CollectiveGpuLayout& self = plan[to_size(rank)];
  // Ring i's neighbours: rank + stride (data, READY) and rank - stride (ACK).
  const auto route = [&](int stride) {
    const CollectiveGpuLayout& next = plan[to_size(wrap(rank + stride, spec.ranks))];
    const CollectiveGpuLayout& prev = plan[to_size(wrap(rank - stride, spec.ranks))];
    return RingRoute{stride, next.buffer, next.flags, prev.flags};
  };
  const RingRoute first = route(spec.direct ? 1 : spec.ring_strides.front());
  // One line a launch field, from the spec and this rank's layout.
  CollectiveLaunch launch;
  launch.op = op;
  launch.ranks = spec.ranks;
  launch.rank = rank;
  launch.channels = spec.channels;
  launch.dispatcher = self.dispatcher;
  launch.buffer = self.buffer;
  launch.next_buffer = first.next_buffer;
  launch.flags = self.flags;
  launch.next_flags = first.next_flags;
  launch.prev_flags = first.prev_flags;
  launch.bytes = spec.bytes;
  launch.element = spec.element;
  launch.sequence = sequence;
  launch.slice_bytes = spec.slice_bytes;
  launch.fifo_depth = spec.fifo_depth;
  launch.poll_ns = spec.poll_ns;
  if (!spec.direct && (op == CollectiveOp::ReduceScatter || op == CollectiveOp::AllGather)) {
    launch.stride = first.stride;
    for (std::size_t i = 1; i < spec.ring_strides.size(); ++i) {
      launch.more_rings.push_back(route(spec.ring_strides[i]));
    }
  }
  if (op == CollectiveOp::NvlsAllReduce && !spec.nvls) {
    bad_plan("ring_launch: the one-launch nvls all-reduce needs spec.nvls (a switch that reduces)");
  }
  if (spec.direct) {
    launch.op =
        is_reduce_scatter(op) ? CollectiveOp::DirectReduceScatter : CollectiveOp::DirectAllGather;
    launch.peer_stride = plan[1].buffer - plan[0].buffer;
    launch.peer_flag_stride = plan[1].flags - plan[0].flags;
    for (std::size_t p = 0; p < plan.size(); ++p) {
      if (plan[p].buffer != plan[0].buffer + p * launch.peer_stride ||
          plan[p].flags != plan[0].flags + p * launch.peer_flag_stride) {
        bad_plan(
            "ring_launch: a direct collective needs every rank's buffer and flags at equal "
            "strides from rank 0's; rank " +
            std::to_string(p) + "'s are not");
      }
    }
  }
  if (spec.nmc && is_reduce_scatter(op)) launch.op = CollectiveOp::DirectNmcReduceScatter;
  if (spec.nvls) {
    launch.op = op == CollectiveOp::NvlsAllReduce ? op
                : is_reduce_scatter(op)           ? CollectiveOp::NvlsReduceScatter
                                                  : CollectiveOp::NvlsAllGather;
    launch.multicast = spec.multicast;
  }
  launch.label = std::string(to_string(launch.op)) + " rank " + std::to_string(rank) + " seq " +
                 std::to_string(sequence);
  return launch;
}

std::vector<Program> ring_programs(const std::vector<CollectiveGpuLayout>& plan,
                                   const CollectiveSpec& spec, const std::vector<CollectiveOp>& ops,
                                   std::uint32_t first_sequence) {
  std::vector<Program> programs(to_size(spec.ranks));
  for (int rank = 0; rank < spec.ranks; ++rank) {
    std::uint32_t sequence = first_sequence;
    for (CollectiveOp op : ops) {
      append_collective(programs[to_size(rank)], ring_launch(plan, spec, rank, op, sequence++));
    }
  }
  return programs;
}

CollectiveBandwidth collective_bandwidth(CollectiveKind kind, int ranks, std::uint64_t bytes,
                                         double seconds) {
  CollectiveBandwidth bw;
  if (seconds <= 0 || ranks < 1) return bw;
  bw.algbw_GBps = static_cast<double>(bytes) / seconds / 1e9;
  const double n = ranks;
  const double factor = kind == CollectiveKind::AllReduce ? 2 * (n - 1) / n : (n - 1) / n;
  bw.busbw_GBps = bw.algbw_GBps * factor;
  return bw;
}

}  // namespace t3
