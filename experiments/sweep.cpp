#include "experiments/sweep.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <type_traits>

#include "config/suggestion.h"
#include "config/system_config.h"
#include "experiments/summary_table.h"
#include "workloads/model_zoo.h"
#include "workloads/sublayer.h"

namespace t3 {

namespace {

const char* const kCategories[] = {"gemm_read", "gemm_write", "rs_read", "rs_write",
                                   "rs_update", "ag_read",    "ag_write"};

// A value as errors show it, bytes that are not UTF-8 replaced (a plain dump() would throw).
std::string printable(const nlohmann::json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::vector<std::string> sublayer_names() {
  std::vector<std::string> names;
  for (Sublayer sublayer : all_sublayers()) names.push_back(to_string(sublayer));
  return names;
}

// Appends the cartesian product models x tp x sublayers x tokens x each set-path's values.
void add_product(Suite& suite, const std::vector<std::string>& models, const std::vector<int>& tps,
                 const std::vector<std::string>& sublayers, const std::vector<std::int64_t>& tokens,
                 const std::vector<std::vector<std::string>>& set_lists) {
  std::vector<std::vector<std::string>> sets = {{}};
  for (const auto& choices : set_lists) {
    std::vector<std::vector<std::string>> grown;
    for (const auto& partial : sets) {
      for (const auto& choice : choices) {
        grown.push_back(partial);
        grown.back().push_back(choice);
      }
    }
    sets = std::move(grown);
  }
  for (const auto& model : models) {
    for (int tp : tps) {
      for (const auto& sublayer : sublayers) {
        for (std::int64_t count : tokens) {
          for (const auto& set : sets) {
            suite.points.push_back(
                {model, sublayer, tp, count, set, suite.points.size(), std::nullopt});
          }
        }
      }
    }
  }
}

template <typename T>
std::vector<T> list_of(const nlohmann::json& product, const char* key, const std::string& where,
                       std::vector<T> fallback) {
  if (!product.contains(key)) {
    if (fallback.empty()) throw ConfigError(where + ": key '" + key + "' is required");
    return fallback;
  }
  const nlohmann::json& value = product.at(key);
  if (!value.is_array() || value.empty()) {
    throw ConfigError(where + "." + key + ": expected a non-empty list");
  }
  std::vector<T> items;
  std::set<T> seen;
  for (const auto& item : value) {
    // Exact types: get<int>() would turn true into 1, 2.5 into 2 and 2^32 + 2 into 2.
    bool fits = false;
    if constexpr (std::is_same_v<T, std::string>) {
      fits = item.is_string();
    } else {
      fits = item.is_number_integer() &&
             (item.is_number_unsigned()
                  ? item.get<std::uint64_t>() <=
                        static_cast<std::uint64_t>(std::numeric_limits<T>::max())
                  : item.get<std::int64_t>() >= std::numeric_limits<T>::min() &&
                        item.get<std::int64_t>() <= std::numeric_limits<T>::max());
    }
    if (!fits)
      throw ConfigError(where + "." + key + ": " + printable(item) + " has the wrong type");
    const T parsed = item.get<T>();
    // A value listed twice would run the same workloads twice (a huge list of one value, forever).
    if (!seen.insert(parsed).second) {
      throw ConfigError(where + "." + key + ": " + printable(item) + " is listed twice");
    }
    items.push_back(parsed);
  }
  return items;
}

// The custom GEMMs of product["shapes"]: "M,N,K" texts or [M, N, K] lists, none twice.
std::vector<GemmShape> shapes_of(const nlohmann::json& product, const std::string& where) {
  const nlohmann::json& value = product.at("shapes");
  if (!value.is_array() || value.empty()) {
    throw ConfigError(where + ".shapes: expected a non-empty list");
  }
  for (const char* key : {"models", "sublayers", "tokens"}) {
    if (product.contains(key)) {
      throw ConfigError(where + ": '" + key +
                        "' and 'shapes' exclude each other (a shape is a custom GEMM whose M is "
                        "its tokens)");
    }
  }
  std::vector<GemmShape> shapes;
  for (const auto& item : value) {
    std::string text = item.is_string() ? item.get<std::string>() : "";
    if (item.is_array()) {
      for (const auto& size : item) text += (text.empty() ? "" : ",") + printable(size);
    }
    if (!item.is_string() && !item.is_array()) {
      throw ConfigError(where + ".shapes: " + printable(item) +
                        " has the wrong type (\"M,N,K\" or [M, N, K])");
    }
    try {
      shapes.push_back(parse_gemm_shape(text));
    } catch (const ConfigError& error) {
      throw ConfigError(where + ".shapes: " + error.what());
    }
    if (std::count(shapes.begin(), shapes.end(), shapes.back()) > 1) {
      throw ConfigError(where + ".shapes: " + printable(item) + " is listed twice");
    }
  }
  return shapes;
}

// Appends shapes x tp x each set-path's values, as custom points.
void add_shapes(Suite& suite, const std::vector<GemmShape>& shapes, const std::vector<int>& tps,
                const std::vector<std::vector<std::string>>& set_lists) {
  for (const GemmShape& shape : shapes) {
    const std::size_t first = suite.points.size();
    add_product(suite, {kCustom}, tps, {kCustom}, {shape.m}, set_lists);
    for (std::size_t p = first; p < suite.points.size(); ++p) suite.points[p].shape = shape;
  }
}

// `top`: the suite's top level, which may also hold name, scenarios and groups (a group may not).
void add_group(Suite& suite, const nlohmann::json& product, const std::string& where, bool top) {
  static const std::set<std::string> known = {"models", "tp",  "sublayers",
                                              "tokens", "set", "shapes"};
  if (!product.is_object()) throw ConfigError(where + ": expected an object");
  for (const auto& [key, value] : product.items()) {
    if (!known.count(key) && !(top && (key == "name" || key == "scenarios" || key == "groups"))) {
      std::vector<std::string> keys(known.begin(), known.end());
      if (top) keys.insert(keys.end(), {"scenarios", "name", "groups"});
      throw ConfigError(where + ": unknown key '" + key + "'" + did_you_mean(key, keys) +
                        " (keys: models, tp, sublayers, tokens, shapes, set" +
                        (top ? ", scenarios, name, groups)" : ")"));
    }
  }
  const bool custom = product.contains("shapes");
  const auto shapes = custom ? shapes_of(product, where) : std::vector<GemmShape>{};
  const auto models =
      custom ? std::vector<std::string>{} : list_of<std::string>(product, "models", where, {});
  for (const auto& name : models) model(name);  // an unknown model throws, listing the zoo
  const auto sublayers = list_of<std::string>(product, "sublayers", where, sublayer_names());
  for (const auto& name : sublayers) parse_sublayer(name);
  std::vector<std::vector<std::string>> sets;
  if (product.contains("set")) {
    if (!product["set"].is_object()) throw ConfigError(where + ".set: expected an object");
    for (const auto& [path, values] : product["set"].items()) {
      if (!values.is_array() || values.empty()) {
        throw ConfigError(where + ".set." + path + ": expected a non-empty list of values");
      }
      std::vector<std::string> choices;
      for (const auto& value : values) {
        choices.push_back(path + "=" +
                          (value.is_string() ? value.get<std::string>() : printable(value)));
      }
      sets.push_back(choices);
    }
  }
  const auto tokens = list_of<std::int64_t>(product, "tokens", where, {0});
  // 0 stands for "the system's workload.tokens" when the key is absent; written, it must count.
  if (product.contains("tokens")) {
    for (std::int64_t count : tokens) {
      if (count < 1) {
        throw ConfigError(where + ".tokens: " + std::to_string(count) + " must be at least 1");
      }
    }
  }
  if (custom) {
    add_shapes(suite, shapes, list_of<int>(product, "tp", where, {}), sets);
    return;
  }
  add_product(suite, models, list_of<int>(product, "tp", where, {}), sublayers, tokens, sets);
}

double dram_ratio(const nlohmann::json& result, const nlohmann::json& sequential) {
  return result["dram_bytes"]["total"].get<double>() /
         sequential["dram_bytes"]["total"].get<double>();
}

double energy_ratio(const nlohmann::json& result, const nlohmann::json& sequential) {
  return result["energy"]["total"].get<double>() / sequential["energy"]["total"].get<double>();
}

// Every record has an energy estimate (records of older builds, resumed, have none).
bool all_have_energy(const std::vector<std::vector<nlohmann::json>>& results) {
  for (const auto& point : results) {
    for (const auto& result : point) {
      if (!result.contains("energy")) return false;
    }
  }
  return true;
}

// A reduction against sequential per scenario shown: a column of each, filled row by row.
struct ReductionColumns {
  const char* name;  // heading after the scenario: "DRAM", "energy"
  double (*ratio)(const nlohmann::json& result, const nlohmann::json& sequential);
  std::vector<std::vector<double>> ratios;
};

// Rows of speedups and of DRAM (and energy) reductions over `rows` (indices into results), then
// geomean and max. One row per point of `rows`; `with_model` adds a first column naming each
// row's model (the table of all models).
void write_table(std::ostream& out, const Suite& suite,
                 const std::vector<std::vector<nlohmann::json>>& results,
                 const std::vector<std::size_t>& rows, bool with_model = false) {
  std::vector<Scenario> shown(suite.scenarios.begin() + 1, suite.scenarios.end());
  std::vector<ReductionColumns> reductions = {{"DRAM", dram_ratio, {}}};
  if (all_have_energy(results)) reductions.push_back({"energy", energy_ratio, {}});
  const std::string extra = with_model ? " |" : "";  // the empty cell the model column adds
  out << (with_model ? "| model " : "") << "| TP | sublayer | tokens | sets |";
  for (Scenario s : shown) out << " " << to_string(s) << " speedup |";
  for (auto& reduction : reductions) {
    for (Scenario s : shown) out << " " << to_string(s) << " " << reduction.name << " |";
    reduction.ratios.resize(shown.size());
  }
  out << "\n" << (with_model ? "|---" : "") << "|---|---|---|---|";
  for (std::size_t i = 0; i < (1 + reductions.size()) * shown.size(); ++i) out << "---|";
  out << "\n";
  std::vector<std::vector<double>> speedups(shown.size());
  for (std::size_t row : rows) {
    const SweepPoint& point = suite.points[row];
    std::string sets;
    for (const auto& set : point.sets) sets += (sets.empty() ? "" : " ") + set;
    if (with_model) out << "| " << point.model << " ";
    out << "| " << point.tp << " | " << (point.shape ? shape_text(*point.shape) : point.sublayer)
        << " | " << results[row].front()["tokens"].get<std::int64_t>() << " | "
        << (sets.empty() ? "-" : sets) << " |";
    for (std::size_t s = 0; s < shown.size(); ++s) {
      speedups[s].push_back(results[row][s + 1]["speedup_vs_sequential"].get<double>());
      out << " " << fixed(speedups[s].back(), 3) << " |";
    }
    for (auto& reduction : reductions) {
      for (std::size_t s = 0; s < shown.size(); ++s) {
        auto& ratios = reduction.ratios[s];
        ratios.push_back(reduction.ratio(results[row][s + 1], results[row].front()));
        out << " " << fixed(100 * (1 - ratios.back()), 1) << "% |";
      }
    }
    out << "\n";
  }
  out << "| **geomean** | | | |" << extra << geomean_cells(speedups);
  for (const auto& reduction : reductions) {
    for (const auto& values : reduction.ratios)
      out << " **" << fixed(100 * (1 - geomean(values)), 1) << "%** |";
  }
  out << "\n| **max** | | | |" << extra << max_cells(speedups);
  for (const auto& reduction : reductions) {
    for (const auto& values : reduction.ratios) {
      out << " **" << fixed(100 * (1 - *std::min_element(values.begin(), values.end())), 1)
          << "%** |";
    }
  }
  out << "\n\n";
}

// Every GPU, one GPU under rotational symmetry, or a mix (each record says which).
std::string simulation_mode(const std::vector<std::vector<nlohmann::json>>& results) {
  bool full = false, symmetric = false, banked = false;
  for (const auto& point : results) {
    for (const auto& result : point) {
      const bool rotational = result.value("symmetry", "none") == "rotational";
      (rotational ? symmetric : full) = true;
      if (rotational && result.contains("config") &&
          result["config"]["hbm"].value("model", "") == "bank") {
        banked = true;
      }
    }
  }
  // Bank-level HBM maps each GPU's rotated chunks to other rows, so the group's GPUs drift apart
  // and one GPU does not stand for them exactly (docs/performance.md).
  const std::string caveat =
      banked ? "; on bank-level HBM an approximation: the group's GPUs drift apart and the group "
               "ends with the slowest (`--full` simulates every GPU)"
             : "";
  if (symmetric && full) {
    return "some runs every GPU, some one GPU (each record's `symmetry`)" + caveat;
  }
  if (symmetric) {
    return "one GPU per run under rotational symmetry (`sim.symmetry`), group totals" + caveat;
  }
  return "every GPU of the group";
}

void write_summary(const std::string& path, const Suite& suite, const std::string& system,
                   const std::vector<std::vector<nlohmann::json>>& results,
                   const std::vector<std::string>& missing) {
  std::ofstream out = open_summary(path, suite.name, system);
  out << "Speedup = sequential time / scenario time. DRAM = reduction of the bytes read, written "
         "and updated in HBM by all GPUs, against sequential (positive: less data moved). Energy = "
         "reduction of the first-order energy estimate (DRAM, near-memory updates, links, SM "
         "FLOPs, L2; docs/energy.md) against sequential. "
      << kSummaryFiguresNote << "Simulated: " << simulation_mode(results) << ".\n\n";
  if (!missing.empty()) {
    out << "**Partial sweep**: " << missing.size()
        << " workloads of the suite have no results yet and are left out of every table:\n\n";
    for (const auto& file : missing) out << "- `" << file << "`\n";
    out << "\n";
  }
  std::vector<std::string> models;
  for (const SweepPoint& point : suite.points) {
    if (std::find(models.begin(), models.end(), point.model) == models.end()) {
      models.push_back(point.model);
    }
  }
  std::vector<std::size_t> all;
  for (const std::string& name : models) {
    std::vector<std::size_t> rows;
    for (std::size_t p = 0; p < suite.points.size(); ++p) {
      if (suite.points[p].model == name) rows.push_back(p);
    }
    all.insert(all.end(), rows.begin(), rows.end());
    out << "## " << name << "\n\n";
    write_table(out, suite, results, rows);
  }
  if (models.size() > 1) {
    out << "## All models\n\n";
    write_table(out, suite, results, all, true);
  }
}

// The sublayer column: a custom GEMM's shape ("8192x4256x2128"), so its rows tell apart.
std::string csv_sublayer(const nlohmann::json& record) {
  if (record["model"] != kCustom) return record["sublayer"].get<std::string>();
  const auto& shape = record["shape"];
  return shape_text({shape["m"].get<std::int64_t>(), shape["n"].get<std::int64_t>(),
                     shape["k"].get<std::int64_t>()});
}

void write_csv(const std::string& path, const nlohmann::json& records) {
  std::ofstream out(path);
  if (!out) throw std::runtime_error("cannot write '" + path + "'");
  out << "model,sublayer,tp,tokens,sets,scenario,time_ns,speedup_vs_sequential,gemm_ns,"
         "reduce_scatter_ns,gemm_rs_ns,all_gather_ns,exposed_comm_ns,dram_total";
  for (const char* category : kCategories) out << "," << category;
  out << ",link_payload_bytes,tracker_fired,dma_transfers,transactions,wall_time_s,energy_J\n";
  for (const auto& record : records) {
    std::map<std::string, double> phases;
    for (const auto& phase : record["phases"]) phases[phase["name"]] = phase["time_ns"];
    std::string sets;
    for (const auto& set : record["point"]["sets"])
      sets += (sets.empty() ? "" : ";") + set.get<std::string>();
    out << record["model"].get<std::string>() << "," << csv_sublayer(record) << "," << record["tp"]
        << "," << record["tokens"] << "," << sets << "," << record["scenario"].get<std::string>()
        << "," << record["time_ns"] << "," << record["speedup_vs_sequential"] << ","
        << phases["gemm"] << "," << phases["reduce_scatter"] << "," << phases["gemm_rs"] << ","
        << phases["all_gather"] << "," << record.at("exposed_comm_ns") << ","
        << record["dram_bytes"]["total"];
    for (const char* category : kCategories) out << "," << record["dram_bytes"][category];
    out << "," << record["link_bytes"]["payload"] << "," << record["tracker"]["fired"] << ","
        << record["dma"]["transfers"] << "," << record["transactions"]["total"] << ","
        << record["wall_time_s"] << ","
        << (record.contains("energy") ? record["energy"]["total"] : nlohmann::json()) << "\n";
  }
}

}  // namespace

Suite paper_suite() {
  Suite suite;
  suite.name = "paper";
  suite.scenarios = all_scenarios();
  add_product(suite, {"mega-gpt-2", "t-nlg"}, {8, 16}, sublayer_names(), {0}, {});
  add_product(suite, {"gpt-3", "palm", "mt-nlg"}, {32}, sublayer_names(), {0}, {});
  return suite;
}

Suite load_suite(const std::string& name_or_path) {
  if (name_or_path == "paper") return paper_suite();
  // Only regular files: a device such as /dev/zero would be read forever.
  std::ifstream file;
  std::error_code error;
  if (std::filesystem::is_regular_file(name_or_path, error)) file.open(name_or_path);
  if (!file.is_open()) {
    throw ConfigError("suite '" + name_or_path + "': not 'paper' and not a readable file");
  }
  nlohmann::json document;
  try {
    document = nlohmann::json::parse(file);
  } catch (const nlohmann::json::exception& error) {  // parse_error, or out_of_range for 1e999
    throw ConfigError(name_or_path + ": not valid JSON: " + error.what());
  }
  if (!document.is_object()) throw ConfigError(name_or_path + ": expected a JSON object");
  if (document.contains("name") && !document["name"].is_string()) {
    throw ConfigError(name_or_path + ".name: expected a string, got " +
                      printable(document["name"]));
  }
  Suite suite;
  suite.name = document.value("name", name_or_path);
  suite.scenarios = {Scenario::Sequential};
  for (const auto& name : list_of<std::string>(document, "scenarios", name_or_path, {"all"})) {
    const std::vector<Scenario> named =
        name == "all" ? all_scenarios() : std::vector<Scenario>{parse_scenario(name)};
    for (Scenario scenario : named) {
      if (std::find(suite.scenarios.begin(), suite.scenarios.end(), scenario) ==
          suite.scenarios.end()) {
        suite.scenarios.push_back(scenario);
      }
    }
  }
  if (document.contains("groups")) {
    if (!document["groups"].is_array() || document["groups"].empty())
      throw ConfigError(name_or_path + ".groups: expected a non-empty list");
    for (std::size_t g = 0; g < document["groups"].size(); ++g) {
      add_group(suite, document["groups"][g], name_or_path + ".groups[" + std::to_string(g) + "]",
                false);
    }
  } else {
    add_group(suite, document, name_or_path, true);
  }
  return suite;
}

void write_sweep(const std::string& dir, const Suite& suite, const std::string& system,
                 const std::vector<std::vector<nlohmann::json>>& results,
                 const std::vector<std::string>& missing) {
  nlohmann::json records = nlohmann::json::array();
  for (std::size_t p = 0; p < results.size(); ++p) {
    for (const nlohmann::json& result : results[p]) {
      nlohmann::json record = result;
      record["point"] = {{"index", suite.points[p].index}, {"sets", suite.points[p].sets}};
      records.push_back(std::move(record));
    }
  }
  write_csv(dir + "/results.csv", records);
  // results.json holds only what the simulations computed, so the same suite gives the same file
  // byte for byte however it was run (--jobs, --resume, the cluster path). Wall time, the one
  // thing that differs between equal runs, stays in results.csv.
  for (nlohmann::json& record : records) record.erase("wall_time_s");
  std::ofstream json(dir + "/results.json");
  if (!json) throw std::runtime_error("cannot write '" + dir + "/results.json'");
  json << records.dump(1) << "\n";
  write_summary(dir + "/summary.md", suite, system, results, missing);
}

}  // namespace t3
