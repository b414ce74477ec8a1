// The end-to-end suite and its files (see model_sweep.h).
#include "experiments/model_sweep.h"

#include <fstream>

#include "config/system_config.h"
#include "experiments/summary_table.h"
#include "workloads/model_zoo.h"

namespace t3 {

namespace {

const char* const kClasses[] = {"gemm", "attention", "memory_bound", "communication_exposed"};

const nlohmann::json& entry_of(const nlohmann::json& document, Scenario scenario) {
  for (const auto& entry : document.at("scenarios")) {
    if (entry.at("scenario") == to_string(scenario)) return entry;
  }
  throw std::runtime_error("model sweep: no " + std::string(to_string(scenario)) + " result for " +
                           document.value("model", std::string("?")));
}

// Speedups of every scenario but sequential, one row per document of `phase`, then geomean, max.
void write_speedups(std::ostream& out, const ModelSuite& suite,
                    const std::vector<nlohmann::json>& documents, LayerPhase phase) {
  const std::vector<Scenario> shown(suite.scenarios.begin() + 1, suite.scenarios.end());
  out << "| model | TP | batch x seq | layers | sequential model ms |";
  for (Scenario s : shown) out << " " << to_string(s) << " speedup |";
  out << "\n|---|---|---|---|---|";
  for (std::size_t i = 0; i < shown.size(); ++i) out << "---|";
  out << "\n";
  std::vector<std::vector<double>> speedups(shown.size());
  for (const nlohmann::json& document : documents) {
    if (document.at("phase") != to_string(phase)) continue;
    out << "| " << document["model"].get<std::string>() << " | " << document["tp"] << " | "
        << document["batch"] << " x " << document["seq"] << " | " << document["layers"] << " | "
        << fixed(entry_of(document, Scenario::Sequential)["model_time_ns"].get<double>() / 1e6, 1)
        << " |";
    for (std::size_t s = 0; s < shown.size(); ++s) {
      speedups[s].push_back(entry_of(document, shown[s])["speedup_vs_sequential"].get<double>());
      out << " " << fixed(speedups[s].back(), 3) << " |";
    }
    out << "\n";
  }
  if (speedups.empty() || speedups.front().empty()) return;
  out << "| **geomean** | | | | |" << geomean_cells(speedups);
  out << "\n| **max** | | | | |" << max_cells(speedups);
  out << "\n\n";
}

// Each document's model energy under sequential and every other scenario's saving against it.
void write_energy(std::ostream& out, const ModelSuite& suite,
                  const std::vector<nlohmann::json>& documents) {
  const std::vector<Scenario> shown(suite.scenarios.begin() + 1, suite.scenarios.end());
  out << "| model | TP | phase | sequential model J |";
  for (Scenario s : shown) out << " " << to_string(s) << " saved |";
  out << "\n|---|---|---|---|";
  for (std::size_t i = 0; i < shown.size(); ++i) out << "---|";
  out << "\n";
  for (const nlohmann::json& document : documents) {
    out << "| " << document["model"].get<std::string>() << " | " << document["tp"] << " | "
        << document["phase"].get<std::string>() << " | "
        << fixed(entry_of(document, Scenario::Sequential)["model_energy_J"].get<double>(), 1)
        << " |";
    for (Scenario s : shown) {
      out << " "
          << fixed(100 * entry_of(document, s)["energy_saving_vs_sequential"].get<double>(), 1)
          << "% |";
    }
    out << "\n";
  }
  out << "\n";
}

// Where a sequential layer's time goes, by kernel class, as shares of the layer.
void write_breakdown(std::ostream& out, const std::vector<nlohmann::json>& documents) {
  out << "| model | TP | phase | layer us | gemm | attention | memory-bound | communication "
         "exposed |\n|---|---|---|---|---|---|---|---|\n";
  for (const nlohmann::json& document : documents) {
    const auto& entry = entry_of(document, Scenario::Sequential);
    const double layer = entry["layer_time_ns"];
    out << "| " << document["model"].get<std::string>() << " | " << document["tp"] << " | "
        << document["phase"].get<std::string>() << " | " << fixed(layer / 1e3, 1) << " |";
    for (const char* kind : kClasses) {
      out << " " << fixed(100 * entry["breakdown_ns"][kind].get<double>() / layer, 1) << "% |";
    }
    out << "\n";
  }
  out << "\n";
}

void write_summary(const std::string& path, const ModelSuite& suite, const std::string& system,
                   const std::vector<nlohmann::json>& documents) {
  std::ofstream out = open_summary(path, suite.name, system);
  out << "End-to-end: one transformer layer run kernel by kernel (each kernel a simulation of its "
         "own; the all-reduced GEMMs as their scenario's sublayer runs), the model = layers x the "
         "layer. Speedup = sequential model time / scenario model time. "
      << kSummaryFiguresNote << "Simulated: "
      << (documents.empty() || documents.front().value("symmetry", "none") == "rotational"
              ? "sublayer runs on one GPU under rotational symmetry (`sim.symmetry`); other "
                "kernels on one GPU (they do not communicate)"
              : "sublayer runs on every GPU of the group; other kernels on one GPU")
      << ".\n\n## Training\n\n";
  write_speedups(out, suite, documents, LayerPhase::Training);
  out << "## Inference (prompt phase)\n\n";
  write_speedups(out, suite, documents, LayerPhase::Inference);
  out << "## Where a sequential layer's time goes\n\n";
  write_breakdown(out, documents);
  out << "## Energy (first-order estimate, docs/energy.md): the model's, all GPUs, and each "
         "scenario's saving against sequential\n\n";
  write_energy(out, suite, documents);
  if (!suite.left_out.empty()) {
    out << "## Left out\n\n";
    for (const auto& why : suite.left_out) out << "- " << why << "\n";
    out << "\n";
  }
}

void write_csv(const std::string& path, const std::vector<nlohmann::json>& documents) {
  std::ofstream out(path);
  if (!out) throw std::runtime_error("cannot write '" + path + "'");
  out << "model,tp,phase,batch,seq,layers,scenario,layer_time_ns,gemm_ns,attention_ns,"
         "memory_bound_ns,communication_exposed_ns,model_time_ns,speedup_vs_sequential,"
         "model_energy_J,energy_saving_vs_sequential\n";
  for (const nlohmann::json& document : documents) {
    for (const auto& entry : document["scenarios"]) {
      out << document["model"].get<std::string>() << "," << document["tp"] << ","
          << document["phase"].get<std::string>() << "," << document["batch"] << ","
          << document["seq"] << "," << document["layers"] << ","
          << entry["scenario"].get<std::string>() << ","
          << fixed(entry["layer_time_ns"].get<double>(), 1);
      for (const char* kind : kClasses) {
        out << "," << fixed(entry["breakdown_ns"][kind].get<double>(), 1);
      }
      out << "," << fixed(entry["model_time_ns"].get<double>(), 1) << ","
          << fixed(entry["speedup_vs_sequential"].get<double>(), 6) << ","
          << fixed(entry["model_energy_J"].get<double>(), 6) << ","
          << fixed(entry["energy_saving_vs_sequential"].get<double>(), 6) << "\n";
    }
  }
}

}  // namespace

ModelSuite e2e_suite() {
  ModelSuite suite;
  suite.name = "e2e";
  suite.scenarios = all_scenarios();
  std::vector<ModelPoint> inference;
  for (const std::string& name : model_names()) {
    const ModelSpec spec = model(name);
    for (int tp : spec.paper_tp) {
      try {
        transformer_layer(spec, tp, {1, spec.seq}, LayerPhase::Training);
        if (spec.hidden % tp != 0) {
          throw ConfigError(name + " at tp " + std::to_string(tp) + ": hidden " +
                            std::to_string(spec.hidden) + " is not divisible by tp " +
                            std::to_string(tp));
        }
      } catch (const ConfigError& error) {
        suite.left_out.push_back(error.what());
        continue;
      }
      suite.points.push_back({name, tp, LayerPhase::Training});
      inference.push_back({name, tp, LayerPhase::Inference});
    }
  }
  suite.points.insert(suite.points.end(), inference.begin(), inference.end());
  return suite;
}

void write_model_sweep(const std::string& dir, const ModelSuite& suite, const std::string& system,
                       const std::vector<nlohmann::json>& documents) {
  {
    std::ofstream out(dir + "/results.json");
    if (!out) throw std::runtime_error("cannot write '" + dir + "/results.json'");
    nlohmann::json records = nlohmann::json::array();
    for (nlohmann::json document : documents) {
      document.erase("simulation_wall_time_s");  // results.json holds simulated figures only
      records.push_back(document);
    }
    out << records.dump(1) << "\n";
  }
  write_csv(dir + "/results.csv", documents);
  write_summary(dir + "/summary.md", suite, system, documents);
}

}  // namespace t3
