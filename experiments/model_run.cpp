// Whole-model views (see model_run.h).
#include "experiments/model_run.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <stdexcept>

#include "config/config_io.h"
#include "experiments/energy.h"
#include "experiments/scenario_run.h"
#include "models/system/simulation.h"
#include "protocol/to_size.h"
#include "workloads/gemm_plan.h"
#include "workloads/model_zoo.h"
#include "workloads/stream_program.h"

namespace t3 {

namespace {

// One simulation a layer needs: a kernel alone on one GPU, or a sublayer under a scenario.
struct KernelSim {
  enum class Kind { Gemm, Stream, Sublayer } kind = Kind::Gemm;
  SystemConfig config;
  GemmShape shape;                                           // Gemm, Sublayer
  std::uint64_t read_bytes = 0, write_bytes = 0, flops = 0;  // Stream
  Scenario scenario = Scenario::Sequential;                  // Sublayer
  double cost = 0;  // estimated work, so the costliest start first
};

// Kernels that do not communicate run on one GPU of an otherwise identical system.
SystemConfig one_gpu(SystemConfig config) {
  config.gpus = 1;
  config.sim.symmetry = Symmetry::None;
  return config;
}

// The time from the doorbell to the end of GPU 0's first kernel, what its memory moved and the
// energy estimate of that GPU's run (`flops` matrix FLOPs, standby billed over the kernel's time).
nlohmann::json kernel_record(const SystemConfig& config, TpGroup& group, const RunSummary& run,
                             double flops) {
  const LaunchRecord& launch = group.gpu(0).dispatcher.launches().at(0);
  const ComputeTraffic traffic = compute_traffic(group);
  const double time_ns = (launch.end - launch.doorbell).to_seconds() * 1e9;
  return {{"time_ns", time_ns},
          {"dram_read_bytes", traffic.read_bytes},
          {"dram_write_bytes", traffic.write_bytes},
          {"energy_J", energy_estimate(config, energy_activity(group), time_ns, flops)["total"]},
          {"wall_time_s", run.wall_time_s}};
}

nlohmann::json run_gemm_kernel(const SystemConfig& config, const GemmShape& shape) {
  const GroupGemmPlan plan = plan_group_gemm(config, shape);
  TpGroup group("group", config);
  const RunSummary run = run_to_completion(group, plan.programs());
  return kernel_record(config, group, run, 2.0 * shape.m * shape.n * shape.k);
}

nlohmann::json run_sublayer(const SystemConfig& config, const GemmShape& shape, Scenario scenario) {
  ScenarioRun run(config, plan_scenario(config, shape, scenario));
  run.run();
  nlohmann::json result = run.result();
  // What a model view needs; ideal_result() reads the phases.
  return {{"time_ns", result["time_ns"]},         {"exposed_comm_ns", result["exposed_comm_ns"]},
          {"phases", result["phases"]},           {"dram_bytes", result["dram_bytes"]},
          {"symmetry", result["symmetry"]},       {"wall_time_s", result["wall_time_s"]},
          {"scenario", result["scenario"]},       {"collective", result["collective"]},
          {"energy_J", result["energy"]["total"]}};
}

nlohmann::json run_sim(const KernelSim& sim) {
  switch (sim.kind) {
    case KernelSim::Kind::Gemm:
      return run_gemm_kernel(sim.config, sim.shape);
    case KernelSim::Kind::Stream:
      return run_stream_kernel(sim.config, sim.read_bytes, sim.write_bytes, sim.flops);
    case KernelSim::Kind::Sublayer:
      break;
  }
  return run_sublayer(sim.config, sim.shape, sim.scenario);
}

// The key that makes identical kernels one simulation: the system and what the kernel does.
std::string sim_key(const KernelSim& sim) {
  const auto& s = sim.shape;
  const std::string shape =
      std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
  const std::string system = to_json(sim.config).dump();
  switch (sim.kind) {
    case KernelSim::Kind::Gemm:
      return system + "|gemm|" + shape;
    case KernelSim::Kind::Stream:
      return system + "|stream|" + std::to_string(sim.read_bytes) + "|" +
             std::to_string(sim.write_bytes) + "|" + std::to_string(sim.flops);
    case KernelSim::Kind::Sublayer:
      break;
  }
  return system + "|sublayer|" + to_string(sim.scenario) + "|" + shape;
}

// The simulations one kernel of a layer needs under `scenarios` (ideal is derived, so a sublayer
// needs sequential for it).
std::vector<KernelSim> sims_of(const LayerKernel& kernel, const ModelRequest& request,
                               const std::vector<Scenario>& simulated) {
  std::vector<KernelSim> sims;
  if (kernel.all_reduced) {
    for (Scenario scenario : simulated) {
      KernelSim sim;
      sim.kind = KernelSim::Kind::Sublayer;
      sim.config = request.config;
      // One GPU stands for the group only for scenarios whose programs rotate.
      if (!rotation_invariant(sim.config, scenario)) sim.config.sim.symmetry = Symmetry::None;
      sim.shape = kernel.gemm;
      sim.scenario = scenario;
      sim.cost = 2.0 * kernel.gemm.m * kernel.gemm.n * kernel.gemm.k;
      sims.push_back(sim);
    }
    return sims;
  }
  KernelSim sim;
  sim.config = one_gpu(request.config);
  if (kernel.kind == KernelClass::MemoryBound ||
      (kernel.kind == KernelClass::Attention && request.fused_attention)) {
    sim.kind = KernelSim::Kind::Stream;
    // Whole fp16 elements: a dropout mask's odd byte count is rounded up by one byte.
    sim.read_bytes = (kernel.bytes_read + 1) / 2 * 2;
    sim.write_bytes = (kernel.bytes_written + 1) / 2 * 2;
    if (kernel.batch > 0) {
      sim.flops = static_cast<std::uint64_t>(2.0 * kernel.batch * kernel.gemm.m * kernel.gemm.n *
                                             kernel.gemm.k);
    }
    sim.cost = static_cast<double>(kernel.bytes_read + kernel.bytes_written) * 50;
  } else {
    sim.kind = KernelSim::Kind::Gemm;
    // Batched products stacked along M (model_run.h says what that leaves out).
    sim.shape = {kernel.gemm.m * kernel.batch, kernel.gemm.n, kernel.gemm.k};
    sim.cost = 2.0 * sim.shape.m * sim.shape.n * sim.shape.k / request.config.gpus;
  }
  sims.push_back(sim);
  return sims;
}

// Sequential first; ideal is derived from it, and where ideal_simulated() from its own programs
// (the SM direct reduce-scatter), ideal-rs-nmc's (the DMA one) and ideal-rs-sm-nmc's (the SM push
// with near-memory updates), simulated for it.
std::vector<Scenario> simulated_scenarios(const SystemConfig& config,
                                          const std::vector<Scenario>& scenarios) {
  std::vector<Scenario> wanted = scenarios;
  if (ideal_simulated(config) &&
      std::find(scenarios.begin(), scenarios.end(), Scenario::Ideal) != scenarios.end()) {
    wanted.push_back(Scenario::IdealRsNmc);    // the DMA direct reduce-scatter, for ideal
    wanted.push_back(Scenario::IdealRsSmNmc);  // the SM push with near-memory updates
  }
  std::vector<Scenario> simulated = {Scenario::Sequential};
  for (Scenario scenario : wanted) {
    if ((scenario != Scenario::Ideal || ideal_simulated(config)) &&
        std::find(simulated.begin(), simulated.end(), scenario) == simulated.end()) {
      simulated.push_back(scenario);
    }
  }
  return simulated;
}

std::vector<LayerKernel> kernels_of(const ModelRequest& request) {
  return transformer_layer(model(request.model), static_cast<int>(request.config.gpus),
                           request.shape, request.phase, request.fused_attention);
}

std::int64_t layers_of(const ModelRequest& request) {
  return request.layers > 0 ? request.layers : model(request.model).layers;
}

// Per scenario, the layer's time by class, its model time and speedup; each kernel's times.
nlohmann::json assemble(const ModelRequest& request,
                        const std::vector<std::vector<std::size_t>>& kernel_sims,
                        const std::vector<nlohmann::json>& results) {
  const std::vector<LayerKernel> kernels = kernels_of(request);
  const std::vector<Scenario> simulated = simulated_scenarios(request.config, request.scenarios);
  const ModelSpec spec = model(request.model);
  const std::int64_t layers = layers_of(request);
  // The sublayer result of kernel k under `scenario`.
  const auto sublayer_result = [&](std::size_t k, Scenario scenario) {
    const auto& sims = kernel_sims[k];
    const auto result_of = [&](Scenario s) {
      const auto found = std::find(simulated.begin(), simulated.end(), s);
      return found == simulated.end() ? nlohmann::json()
                                      : results[sims[to_size(found - simulated.begin())]];
    };
    if (scenario == Scenario::Ideal) {
      // Direct candidates only where the system runs them (ideal-rs-nmc is a ring elsewhere).
      if (!ideal_simulated(request.config)) return ideal_result(results[sims[0]]);
      return ideal_result(results[sims[0]],
                          {result_of(Scenario::Ideal), result_of(Scenario::IdealRsNmc),
                           result_of(Scenario::IdealRsSmNmc)});
    }
    return result_of(scenario);
  };

  const auto gpus = static_cast<double>(request.config.gpus);
  nlohmann::json kernel_list = nlohmann::json::array();
  for (std::size_t k = 0; k < kernels.size(); ++k) {
    const LayerKernel& kernel = kernels[k];
    nlohmann::json entry = {{"name", kernel.name},
                            {"class", to_string(kernel.kind)},
                            {"all_reduced", kernel.all_reduced}};
    if (kernel.batch > 0) {
      entry["gemm"] = {{"m", kernel.gemm.m},
                       {"n", kernel.gemm.n},
                       {"k", kernel.gemm.k},
                       {"batch", kernel.batch}};
    }
    if (kernel.bytes_read + kernel.bytes_written > 0) {
      entry["bytes_read"] = kernel.bytes_read;
      entry["bytes_written"] = kernel.bytes_written;
    }
    if (kernel.all_reduced) {
      entry["sublayer"] = to_string(*kernel.sublayer);
      nlohmann::json times, exposed, energy;
      for (Scenario scenario : request.scenarios) {
        const nlohmann::json run = sublayer_result(k, scenario);
        times[to_string(scenario)] = run["time_ns"];
        exposed[to_string(scenario)] = run["exposed_comm_ns"];
        energy[to_string(scenario)] = run["energy_J"];
      }
      entry["time_ns"] = times;
      entry["exposed_comm_ns"] = exposed;
      entry["energy_J"] = energy;
    } else {
      const nlohmann::json& run = results[kernel_sims[k][0]];
      entry["time_ns"] = run["time_ns"];
      entry["energy_J"] = gpus * run["energy_J"].get<double>();  // every GPU runs its own copy
      entry["dram_read_bytes"] = run["dram_read_bytes"];
      entry["dram_write_bytes"] = run["dram_write_bytes"];
    }
    kernel_list.push_back(entry);
  }

  nlohmann::json scenarios = nlohmann::json::array();
  double sequential_layer = 0, sequential_energy = 0;
  for (Scenario scenario : request.scenarios) {
    std::map<std::string, double> by_class = {
        {"gemm", 0}, {"attention", 0}, {"memory_bound", 0}, {"communication_exposed", 0}};
    double energy = 0;  // the group's, J
    for (std::size_t k = 0; k < kernels.size(); ++k) {
      const LayerKernel& kernel = kernels[k];
      if (kernel.all_reduced) {
        const nlohmann::json run = sublayer_result(k, scenario);
        const double exposed = run["exposed_comm_ns"];
        by_class["communication_exposed"] += exposed;
        by_class["gemm"] += run["time_ns"].get<double>() - exposed;
        energy += run["energy_J"].get<double>();
      } else {
        const nlohmann::json& run = results[kernel_sims[k][0]];
        by_class[to_string(kernel.kind)] += run["time_ns"].get<double>();
        energy += gpus * run["energy_J"].get<double>();  // every GPU runs its own copy
      }
    }
    double layer = 0;
    for (const auto& [name, time] : by_class) layer += time;
    if (scenario == Scenario::Sequential) {
      sequential_layer = layer;
      sequential_energy = energy;
    }
    nlohmann::json breakdown;
    for (const auto& [name, time] : by_class) breakdown[name] = time;
    scenarios.push_back({{"scenario", to_string(scenario)},
                         {"layer_time_ns", layer},
                         {"breakdown_ns", breakdown},
                         {"model_time_ns", layer * static_cast<double>(layers)},
                         {"layer_energy_J", energy},
                         {"model_energy_J", energy * static_cast<double>(layers)}});
  }
  for (auto& entry : scenarios) {
    entry["speedup_vs_sequential"] = sequential_layer / entry["layer_time_ns"].get<double>();
    entry["energy_saving_vs_sequential"] =
        (sequential_energy - entry["layer_energy_J"].get<double>()) / sequential_energy;
  }
  double wall = 0;
  std::size_t simulations = 0;
  std::vector<std::size_t> seen;
  for (const auto& sims : kernel_sims) {
    for (std::size_t index : sims) {
      if (std::find(seen.begin(), seen.end(), index) != seen.end()) continue;
      seen.push_back(index);
      wall += results[index].value("wall_time_s", 0.0);
      ++simulations;
    }
  }
  return {{"model", spec.name},
          {"system", request.config.name},
          {"tp", request.config.gpus},
          {"phase", to_string(request.phase)},
          {"batch", request.shape.batch},
          {"seq", request.shape.seq},
          {"tokens", request.shape.tokens()},
          {"layers", layers},
          {"fused_attention", request.fused_attention},
          {"symmetry", request.config.sim.symmetry == Symmetry::Rotational ? "rotational" : "none"},
          {"kernels", kernel_list},
          {"scenarios", scenarios},
          {"simulations", simulations},
          {"simulation_wall_time_s", wall}};
}

}  // namespace

LayerShape model_shape(const SystemConfig& config, const ModelSpec& spec, std::int64_t batch,
                       std::int64_t seq) {
  LayerShape shape;
  shape.seq = seq > 0 ? seq : spec.seq;
  if (batch > 0) {
    shape.batch = batch;
    return shape;
  }
  const std::int64_t tokens = config.workload.tokens;
  if (tokens % shape.seq != 0) {
    throw ConfigError("workload.tokens " + std::to_string(tokens) + " is not a whole number of " +
                      spec.name + " sequences of " + std::to_string(shape.seq) +
                      " tokens (give --batch or --seq)");
  }
  shape.batch = tokens / shape.seq;
  return shape;
}

void check_model_request(const ModelRequest& request) {
  const ModelSpec spec = model(request.model);  // names the unknown model
  const std::string what = spec.name + " at tp " + std::to_string(request.config.gpus);
  if (request.config.gpus < 2) {
    throw ConfigError(what + ": a tensor-parallel model needs a group of at least 2 GPUs");
  }
  if (spec.hidden % request.config.gpus != 0) {
    throw ConfigError(what + ": hidden " + std::to_string(spec.hidden) +
                      " is not divisible by tp " + std::to_string(request.config.gpus));
  }
  if (request.layers < 0) {
    throw ConfigError("layers " + std::to_string(request.layers) + ": must be at least 1");
  }
  const std::vector<LayerKernel> kernels = kernels_of(request);  // heads, batch, seq
  for (const LayerKernel& kernel : kernels) {
    if (!kernel.all_reduced) continue;
    for (Scenario scenario : simulated_scenarios(request.config, request.scenarios)) {
      try {
        plan_scenario(request.config, kernel.gemm, scenario);
      } catch (const std::invalid_argument& error) {
        throw ConfigError(what + ", " + kernel.name + " under " + to_string(scenario) + ": " +
                          error.what());
      }
    }
  }
}

nlohmann::json run_stream_kernel(const SystemConfig& config, std::uint64_t read_bytes,
                                 std::uint64_t write_bytes, std::uint64_t flops) {
  Program program;
  append_stream(program, plan_stream(config, 0, read_bytes, write_bytes, flops));
  TpGroup group("group", config);
  std::vector<Program> programs(to_size(group.gpus()));
  programs[0] = program;
  const RunSummary run = run_to_completion(group, programs);
  return kernel_record(config, group, run, static_cast<double>(flops));
}

std::vector<nlohmann::json> run_models(const std::vector<ModelRequest>& requests, int jobs,
                                       const Progress& progress) {
  for (const ModelRequest& request : requests) check_model_request(request);
  // Every distinct simulation once, in order of first use.
  std::vector<KernelSim> sims;
  std::map<std::string, std::size_t> index_of;
  std::vector<std::vector<std::vector<std::size_t>>> uses;  // request -> kernel -> sims
  for (const ModelRequest& request : requests) {
    const std::vector<Scenario> simulated = simulated_scenarios(request.config, request.scenarios);
    std::vector<std::vector<std::size_t>> per_kernel;
    for (const LayerKernel& kernel : kernels_of(request)) {
      std::vector<std::size_t> indices;
      for (const KernelSim& sim : sims_of(kernel, request, simulated)) {
        const auto [it, added] = index_of.emplace(sim_key(sim), sims.size());
        if (added) sims.push_back(sim);
        indices.push_back(it->second);
      }
      per_kernel.push_back(indices);
    }
    uses.push_back(per_kernel);
  }
  std::vector<IsolatedJob> work;
  std::vector<double> costs;
  for (const KernelSim& sim : sims) {
    work.push_back([sim] { return run_sim(sim); });
    costs.push_back(sim.cost);
  }
  const std::vector<nlohmann::json> results = run_isolated(work, jobs, progress, costs);
  for (std::size_t i = 0; i < results.size(); ++i) {
    if (results[i].contains("error")) {
      const KernelSim& sim = sims[i];
      const std::string shape = std::to_string(sim.shape.m) + " x " + std::to_string(sim.shape.n) +
                                " x " + std::to_string(sim.shape.k);
      const std::string what =
          sim.kind == KernelSim::Kind::Stream
              ? "streaming kernel of " + std::to_string(sim.read_bytes) + " bytes in"
          : sim.kind == KernelSim::Kind::Gemm
              ? "GEMM " + shape
              : std::string("sublayer ") + shape + " under " + to_string(sim.scenario);
      throw std::runtime_error(what + ": " + results[i]["error"].get<std::string>());
    }
  }
  std::vector<nlohmann::json> documents;
  for (std::size_t r = 0; r < requests.size(); ++r) {
    documents.push_back(assemble(requests[r], uses[r], results));
  }
  return documents;
}

}  // namespace t3
