#include "workloads/scenario.h"

#include <algorithm>
#include <stdexcept>

#include "workloads/collective_program.h"
#include "workloads/dma_collective.h"
#include "workloads/t3_plan.h"

namespace t3 {

namespace {

const std::vector<Scenario> kScenarios = {Scenario::Sequential, Scenario::T3, Scenario::T3Mca,
                                          Scenario::Ideal, Scenario::IdealRsNmc};

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

RingOnOutput ring_on_output(const SystemConfig& config, const ScenarioPlan& plan,
                            ElementCode element, T3Ring order) {
  RingOnOutput ring;
  ring.order = order;
  ring.spec.ranks = static_cast<int>(config.gpus);
  ring.spec.bytes = plan.output_bytes;
  ring.spec.element = element;
  const auto chunk_elements = static_cast<std::int64_t>(plan.output_bytes / bytes_of(element, 1) /
                                                        static_cast<std::uint64_t>(config.gpus));
  ring.spec.channels =
      static_cast<int>(std::min<std::int64_t>(default_ring_channels(config), chunk_elements));
  const std::uint64_t c = plan.gemm.gpus.front().buffers.c;
  const auto by_gpu = plan_collective(config.address_map, ring.spec, c - hbm_base(config, 0));
  for (int r = 0; r < ring.spec.ranks; ++r) {
    const auto g = static_cast<std::size_t>(order.gpu(r));
    if (by_gpu[g].buffer != plan.gemm.gpus[g].buffers.c) {
      throw std::logic_error("scenario: the ring collective's buffer is not GPU " +
                             std::to_string(g) + "'s output");
    }
    ring.layout.push_back(by_gpu[g]);
  }
  return ring;
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

// GEMM, then a reduce-scatter (SM ring or DMA + NMC), then the SM ring all-gather.
void plan_sequential(const SystemConfig& config, ScenarioPlan& plan, ElementCode out_element,
                     bool dma_reduce_scatter) {
  plan.phases = {{"gemm", PhaseKind::Gemm},
                 {"reduce_scatter", PhaseKind::ReduceScatter},
                 {"all_gather", PhaseKind::AllGather}};
  const RingOnOutput ring =
      ring_on_output(config, plan, out_element, T3Ring{static_cast<int>(config.gpus)});
  std::vector<Program> dma_rs;
  if (dma_reduce_scatter) {
    DmaCollectiveSpec spec;
    spec.ranks = static_cast<int>(config.gpus);
    spec.bytes = plan.output_bytes;
    spec.element = out_element;
    std::vector<std::uint64_t> buffers;
    for (const GpuGemm& gpu : plan.gemm.gpus) buffers.push_back(gpu.buffers.c);
    plan.rotation.tags_per_chunk = static_cast<std::uint32_t>(dma_slices(spec));
    dma_rs = dma_ring_programs(config, buffers, spec, {CollectiveOp::ReduceScatter});
  }
  for (int g = 0; g < config.gpus; ++g) {
    Program program;
    program.commands.push_back(barrier(kStartBarrier, "start"));
    append_gemm(program, plan.gemm.gpus[static_cast<std::size_t>(g)].launch);
    end_phase(program, plan.phases, 0);
    if (dma_reduce_scatter) {
      const auto& commands = dma_rs[static_cast<std::size_t>(g)].commands;
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
}

// T3's fused GEMM + reduce-scatter, then the SM ring all-gather.
void plan_fused(const SystemConfig& config, const GemmShape& shape, ScenarioPlan& plan,
                ElementCode element, ElementCode out_element) {
  plan.phases = {{"gemm_rs", PhaseKind::GemmReduceScatter}, {"all_gather", PhaseKind::AllGather}};
  const T3GemmRsPlan fused = plan_t3_gemm_rs(config, shape, element, out_element);
  plan.gemm = fused.gemm;
  const RingOnOutput ring = ring_on_output(config, plan, out_element, fused.ring);
  std::vector<Program> programs = fused.programs();
  for (int g = 0; g < config.gpus; ++g) {
    Program& program = programs[static_cast<std::size_t>(g)];
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
  plan.rotation.sign = fused.ring.direction == RingDirection::Descending ? 1 : -1;
  plan.rotation.tags_per_chunk = static_cast<std::uint32_t>(fused.tiles_per_chunk);
}

// C lies at the same offset of every GPU's window in n equal chunks (require_equal_chunks), so
// GPU g's chunk positions are GPU 0's moved by g; the planners above set sign and tags.
void set_rotation_band(const SystemConfig& config, ScenarioPlan& plan) {
  plan.rotation.gpus = static_cast<int>(config.gpus);
  plan.rotation.band_offset = plan.gemm.gpus.front().buffers.c - hbm_base(config, 0);
  plan.rotation.chunk_bytes = plan.output_bytes / static_cast<std::uint64_t>(config.gpus);
  for (int g = 0; g < config.gpus; ++g) {
    if (plan.gemm.gpus[static_cast<std::size_t>(g)].buffers.c - hbm_base(config, g) !=
        plan.rotation.band_offset) {
      throw std::logic_error("scenario: GPU " + std::to_string(g) +
                             "'s output is not at GPU 0's offset, so GPUs are not rotations of "
                             "one another");
    }
  }
}

}  // namespace

std::vector<Scenario> all_scenarios() {
  return kScenarios;
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
      break;
  }
  return "ideal-rs-nmc";
}

Scenario parse_scenario(const std::string& name) {
  std::string names;
  for (Scenario scenario : kScenarios) {
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
      break;
  }
  return "all_gather";
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
                           ElementCode element, ElementCode out_element) {
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
  }
  set_rotation_band(config, plan);
  return plan;
}

}  // namespace t3
