#include "config/config_io.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "config/suggestion.h"
#include "protocol/hex.h"

namespace t3 {

const std::map<std::string, std::string>& embedded_presets();  // generated from configs/*.json

namespace {

using nlohmann::json;

std::string describe_range(const ParamInfo& info) {
  std::ostringstream text;
  text << "[" << info.min << ", " << info.max << "]";
  return text.str();
}

// A value as errors show it; bytes that are not UTF-8 (a --set value is any argv text) are
// replaced, where a plain dump() would throw instead of reporting.
std::string printable(const json& value) {
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string join(const std::vector<std::string>& items) {
  std::string text;
  for (const auto& item : items) text += (text.empty() ? "" : ", ") + item;
  return text;
}

// Shared checks for every way a value arrives (JSON, --set): range and choices.
class Checker {
 public:
  explicit Checker(std::string source) : source_(std::move(source)) {}

  [[noreturn]] void fail(const std::string& path, const std::string& what) const {
    throw ConfigError(source_ + ": " + path + ": " + what);
  }
  template <typename T>
  void in_range(const std::string& path, T value, const ParamInfo& info) const {
    const auto as_double = static_cast<double>(value);
    if (!(as_double >= info.min && as_double <= info.max)) {
      std::ostringstream shown;
      shown << value;
      fail(path, shown.str() + " is out of range " + describe_range(info));
    }
  }
  void in_choices(const std::string& path, const std::string& value, const ParamInfo& info) const {
    if (!info.choices.empty() &&
        std::find(info.choices.begin(), info.choices.end(), value) == info.choices.end()) {
      fail(path, "'" + value + "' is not one of " + join(info.choices));
    }
  }

 private:
  std::string source_;
};

// Every parameter's path, in description order: the names an unknown key is compared with.
class PathCollector : public ParamVisitor {
 public:
  void visit(const std::string& path, std::int64_t&, const ParamInfo&) override { add(path); }
  void visit(const std::string& path, std::uint64_t&, const ParamInfo&) override { add(path); }
  void visit(const std::string& path, double&, const ParamInfo&) override { add(path); }
  void visit(const std::string& path, bool&, const ParamInfo&) override { add(path); }
  void visit(const std::string& path, std::string&, const ParamInfo&) override { add(path); }
  std::vector<std::string> paths;

 private:
  void add(const std::string& path) { paths.push_back(path); }
};

std::vector<std::string> parameter_paths() {
  SystemConfig config;
  PathCollector collector;
  describe(config, collector);
  return collector.paths;
}

// " (did you mean ...)" for an unknown key: among the keys of its own section if that section
// exists ("link.speed" is compared with link.* only), else among all keys ("hmb.channels").
std::string key_suggestion(const std::string& path) {
  const std::vector<std::string> paths = parameter_paths();
  const auto dot = path.rfind('.');
  std::vector<std::string> section;
  if (dot != std::string::npos) {
    const std::string prefix = path.substr(0, dot + 1);
    for (const auto& known : paths) {
      if (known.compare(0, prefix.size(), prefix) == 0) section.push_back(known);
    }
  }
  return did_you_mean(path, section.empty() ? paths : section);
}

void flatten(const json& node, const std::string& prefix, std::map<std::string, json>& leaves) {
  for (const auto& [key, value] : node.items()) {
    const std::string path = prefix.empty() ? key : prefix + "." + key;
    if (value.is_object()) {
      flatten(value, path, leaves);
    } else {
      leaves[path] = value;
    }
  }
}

// Applies flattened JSON leaves to the parameters they name; what is left over is unknown.
class JsonApplier : public ParamVisitor {
 public:
  JsonApplier(std::map<std::string, json> leaves, const std::string& source)
      : leaves_(std::move(leaves)), check_(source) {}

  void visit(const std::string& path, std::int64_t& value, const ParamInfo& info) override {
    if (const json* given = take(path)) {
      if (!given->is_number_integer())
        check_.fail(path, "expected an integer, got " + printable(*given));
      if (given->is_number_unsigned() && given->get<std::uint64_t>() > INT64_MAX) {
        check_.fail(path, printable(*given) + " is out of range " + describe_range(info));
      }
      const auto parsed = given->get<std::int64_t>();
      check_.in_range(path, parsed, info);
      value = parsed;
    }
  }
  void visit(const std::string& path, std::uint64_t& value, const ParamInfo& info) override {
    if (const json* given = take(path)) {
      std::uint64_t parsed = 0;
      if (given->is_number_unsigned()) {
        parsed = given->get<std::uint64_t>();
      } else if (given->is_string() && parse_unsigned(given->get<std::string>(), parsed)) {
      } else {
        check_.fail(path, "expected a non-negative integer or a \"0x...\" string, got " +
                              printable(*given));
      }
      check_.in_range(path, parsed, info);
      value = parsed;
    }
  }
  void visit(const std::string& path, double& value, const ParamInfo& info) override {
    if (const json* given = take(path)) {
      if (!given->is_number()) check_.fail(path, "expected a number, got " + printable(*given));
      const auto parsed = given->get<double>();
      check_.in_range(path, parsed, info);
      value = parsed;
    }
  }
  void visit(const std::string& path, bool& value, const ParamInfo&) override {
    if (const json* given = take(path)) {
      if (!given->is_boolean())
        check_.fail(path, "expected true or false, got " + printable(*given));
      value = given->get<bool>();
    }
  }
  void visit(const std::string& path, std::string& value, const ParamInfo& info) override {
    if (const json* given = take(path)) {
      if (!given->is_string()) check_.fail(path, "expected a string, got " + printable(*given));
      // Results are JSON documents: a name they cannot carry is refused here, not at the end.
      try {
        (void)given->dump();
      } catch (const json::type_error&) {
        check_.fail(path, printable(*given) + " is not valid UTF-8");
      }
      check_.in_choices(path, given->get<std::string>(), info);
      value = given->get<std::string>();
    }
  }

  void reject_leftovers() const {
    if (leaves_.empty()) return;
    const std::string& path = leaves_.begin()->first;
    check_.fail(path, "unknown key" + key_suggestion(path));
  }

  static bool parse_unsigned(const std::string& text, std::uint64_t& out) {
    if (text.empty() || text[0] == '-') return false;
    std::size_t used = 0;
    try {
      out = std::stoull(text, &used, 0);
    } catch (const std::exception&) {
      return false;
    }
    return used == text.size();
  }

 private:
  const json* take(const std::string& path) {
    auto found = leaves_.find(path);
    if (found == leaves_.end()) return nullptr;
    taken_ = found->second;
    leaves_.erase(found);
    return &taken_;
  }
  std::map<std::string, json> leaves_;
  json taken_;
  Checker check_;
};

// Turns the text of a `--set path=value` into the JSON value the path's type expects, so that
// --set and JSON files share one set of checks.
class OverrideParser : public ParamVisitor {
 public:
  OverrideParser(std::string path, std::string text)
      : path_(std::move(path)), text_(std::move(text)) {}

  void visit(const std::string& path, std::int64_t&, const ParamInfo&) override {
    if (path != path_) return;
    found_ = true;
    std::size_t used = 0;
    try {
      value_ = std::stoll(text_, &used, 0);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != text_.size() || text_.empty()) value_ = text_;  // rejected as "expected an integer"
  }
  void visit(const std::string& path, std::uint64_t&, const ParamInfo&) override {
    if (path != path_) return;
    found_ = true;
    value_ = text_;  // the JSON applier accepts decimal or 0x strings for these
  }
  void visit(const std::string& path, double&, const ParamInfo&) override {
    if (path != path_) return;
    found_ = true;
    std::size_t used = 0;
    try {
      value_ = std::stod(text_, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != text_.size() || text_.empty()) value_ = text_;
  }
  void visit(const std::string& path, bool&, const ParamInfo&) override {
    if (path != path_) return;
    found_ = true;
    if (text_ == "true" || text_ == "1") {
      value_ = true;
    } else if (text_ == "false" || text_ == "0") {
      value_ = false;
    } else {
      value_ = text_;
    }
  }
  void visit(const std::string& path, std::string&, const ParamInfo&) override {
    if (path != path_) return;
    found_ = true;
    value_ = text_;
  }

  bool found() const { return found_; }
  const json& value() const { return value_; }

 private:
  std::string path_;
  std::string text_;
  bool found_ = false;
  json value_;
};

class JsonWriter : public ParamVisitor {
 public:
  void visit(const std::string& path, std::int64_t& value, const ParamInfo&) override {
    put(path, value);
  }
  void visit(const std::string& path, std::uint64_t& value, const ParamInfo&) override {
    put(path, value);
  }
  void visit(const std::string& path, double& value, const ParamInfo&) override {
    put(path, value);
  }
  void visit(const std::string& path, bool& value, const ParamInfo&) override { put(path, value); }
  void visit(const std::string& path, std::string& value, const ParamInfo&) override {
    put(path, value);
  }
  json document = json::object();

 private:
  void put(const std::string& path, json value) {
    document[json::json_pointer("/" + replace_dots(path))] = std::move(value);
  }
  static std::string replace_dots(std::string path) {
    std::replace(path.begin(), path.end(), '.', '/');
    return path;
  }
};

class TableWriter : public ParamVisitor {
 public:
  void visit(const std::string& path, std::int64_t& value, const ParamInfo& info) override {
    row(path, "integer", std::to_string(value), info);
  }
  void visit(const std::string& path, std::uint64_t& value, const ParamInfo& info) override {
    row(path, "unsigned", value >= 65536 ? hex(value) : std::to_string(value), info);
  }
  void visit(const std::string& path, double& value, const ParamInfo& info) override {
    std::ostringstream shown;
    shown << value;
    row(path, "number", shown.str(), info);
  }
  void visit(const std::string& path, bool& value, const ParamInfo& info) override {
    row(path, "boolean", value ? "true" : "false", info);
  }
  void visit(const std::string& path, std::string& value, const ParamInfo& info) override {
    row(path, info.choices.empty() ? "string" : "choice", value, info);
  }
  std::string text =
      "| key | type | unit | default | range | meaning |\n|---|---|---|---|---|---|\n";

 private:
  void row(const std::string& path, const char* type, const std::string& value,
           const ParamInfo& info) {
    std::string range;
    if (!info.choices.empty()) {
      range = join(info.choices);
    } else if (std::string(type) != "boolean" && std::string(type) != "string") {
      range = describe_range(info);
    }
    text += "| `" + path + "` | " + type + " | " + info.unit + " | `" + value + "` | " + range +
            " | " + info.doc + " |\n";
  }
};

json parse_document(const std::string& text, const std::string& source) {
  try {
    return json::parse(text);
  } catch (const json::exception& error) {  // parse_error, or out_of_range for 1e999
    throw ConfigError(source + ": not valid JSON: " + error.what());
  }
}

}  // namespace

std::vector<std::string> preset_names() {
  std::vector<std::string> names;
  for (const auto& [name, text] : embedded_presets()) names.push_back(name);
  return names;
}

void apply_json(SystemConfig& config, const json& document, const std::string& source) {
  if (!document.is_object()) throw ConfigError(source + ": the document must be a JSON object");
  std::map<std::string, json> leaves;
  flatten(document, "", leaves);
  JsonApplier applier(std::move(leaves), source);
  describe(config, applier);
  applier.reject_leftovers();
}

void apply_override(SystemConfig& config, const std::string& assignment) {
  const auto equals = assignment.find('=');
  if (equals == std::string::npos || equals == 0) {
    throw ConfigError("--set " + assignment + ": expected path=value");
  }
  const std::string path = assignment.substr(0, equals);
  OverrideParser parser(path, assignment.substr(equals + 1));
  describe(config, parser);
  if (!parser.found()) {
    throw ConfigError("--set: " + path + ": unknown key" + key_suggestion(path));
  }
  json document;
  document[json::json_pointer("/" + [&] {
    std::string pointer = path;
    std::replace(pointer.begin(), pointer.end(), '.', '/');
    return pointer;
  }())] = parser.value();
  apply_json(config, document, "--set");
}

void validate(const SystemConfig& config) {
  const auto fail = [&](const std::string& what) {
    throw ConfigError("system '" + config.name + "': " + what);
  };
  const auto interleave = static_cast<std::uint64_t>(config.hbm.interleave_bytes);
  if ((interleave & (interleave - 1)) != 0) {
    fail("hbm.interleave_bytes: " + std::to_string(interleave) + " is not a power of two");
  }
  if (config.workload.collective == CollectivePattern::Direct &&
      config.topology.kind == TopologyKind::Ring) {
    fail(
        "workload.collective: direct needs topology.kind = fully-connected or switch (on a ring "
        "a direct send crosses other GPUs' links)");
  }
  if (config.topology.switch_reductions && config.topology.kind != TopologyKind::Switch) {
    fail(
        "topology.switch_reductions: true needs topology.kind = switch (there is no switch to "
        "reduce in)");
  }
  if (config.topology.kind == TopologyKind::FullyConnected && config.gpus > 16) {
    fail("topology.kind: fully-connected is limited to 16 GPUs (" + std::to_string(config.gpus) +
         " asked); use switch");
  }
  if (config.hbm.capacity_bytes > config.address_map.hbm_stride) {
    fail("hbm.capacity_bytes (" + std::to_string(config.hbm.capacity_bytes) +
         ") exceeds address_map.hbm_stride (" + std::to_string(config.address_map.hbm_stride) +
         ")");
  }
  if (config.address_map.mmio_size > config.address_map.mmio_stride) {
    fail("address_map.mmio_size exceeds address_map.mmio_stride");
  }
  // Register blocks, flags and buffers are laid out at 4 KiB-aligned offsets from each window's
  // base; a window that is not 4 KiB-aligned misplaces them (faults or rejected kernels mid-run).
  const auto& map = config.address_map;
  for (const auto& [path, value] :
       {std::pair<const char*, std::uint64_t>{"address_map.hbm_base", map.hbm_base},
        {"address_map.hbm_stride", map.hbm_stride},
        {"address_map.mmio_base", map.mmio_base},
        {"address_map.mmio_stride", map.mmio_stride},
        {"address_map.mmio_size", map.mmio_size}}) {
    if (value % 4096 != 0)
      fail(std::string(path) + ": " + std::to_string(value) + " is not a multiple of 4096");
  }
  if (config.sim.symmetry == Symmetry::Rotational) {
    const std::string why = rotational_symmetry_refusal(config);
    if (!why.empty()) fail("sim.symmetry: rotational " + why);
  }
}

bool direct_collective(const SystemConfig& config) {
  switch (config.workload.collective) {
    case CollectivePattern::Ring:
      return false;
    case CollectivePattern::Direct:
      return true;
    case CollectivePattern::Auto:
      break;
  }
  return config.topology.kind != TopologyKind::Ring;
}

bool several_sm_rings(const SystemConfig& config) {
  return config.workload.sm_rings == SmRings::Auto &&
         config.topology.kind == TopologyKind::FullyConnected && config.gpus >= 3;
}

std::string rotational_symmetry_refusal(const SystemConfig& config) {
  if (config.sim.mode == SimMode::Functional) {
    return "needs sim.mode = timing (functional data differs per GPU, so no GPU stands for "
           "another)";
  }
  // Each refusal below was measured against every-GPU runs at TP 4 and 8 with the hashed DRAM map
  // and the links' two virtual channels (docs/studies/symmetry, Where it is refused).
  // Behind a switch the group's GPUs are not rotations of one another. On h100-8 at TP 8 their
  // GEMMs now end together (Mega-GPT-2 OP) or within 0.21% (T-NLG FC-2), and with flags and link
  // bookings free of tie order a small ring reduce-scatter ends together too, but where each
  // GPU's chunks meet other addresses the phases part: Mega-GPT-2 OP's ring reduce-scatter 1.33%,
  // its NVLS one 1.56%, T3's fused phase 2.24% (docs/studies/symmetry, Behind a switch).
  if (config.topology.kind == TopologyKind::Switch) {
    return "is not supported behind a switch (topology.kind = switch): there the group's GPUs do "
           "not run as rotations of one another (h100-8 at TP 8, Mega-GPT-2 OP: their ring "
           "reduce-scatters end up to 1.3% apart, T3's fused phases 2.2%, so no one GPU stands "
           "for all of them); set sim.symmetry=none";
  }
  if (config.gpus < 3) {
    return "needs at least 3 GPUs (gpus = " + std::to_string(config.gpus) +
           "): on 2 it does not match an every-GPU run";
  }
  // On a mesh the direct fused phase is exact with hbm.model = simple; with the bank-level HBM
  // the group's GPUs end it apart (Mega-GPT-2 OP, 2048 tokens, TP 4: 194.2 to 196.5 us), the one
  // GPU with the first (0.85% short in all). Rotated, the direct collective run alone (the
  // `ideal` scenario's) also stalls at TP 8: its flags never arrive.
  if (direct_collective(config)) {
    return "does not match an every-GPU run for direct collectives yet (workload.collective = "
           "direct, the default on fully-connected and switch topologies: with the bank-level "
           "HBM the group's 4 fully-connected GPUs end T3's fused phase 1.2% apart and one GPU "
           "with the first); "
           "set "
           "workload.collective=ring or sim.symmetry=none";
  }
  // On several rings the one GPU's SM reduce-scatter ends before every GPU of the group
  // (Mega-GPT-2 FC-2, 2048 tokens: 5.8% at TP 8 with the bank-level HBM, reading 1.8% less DRAM;
  // 1.8% at TP 4 even on the bandwidth pipe).
  if (several_sm_rings(config)) {
    return "does not match an every-GPU run for SM ring collectives on several rings yet "
           "(workload.sm_rings = auto, on a fully-connected topology: one GPU came out up to 5.8% "
           "short of the group's reduce-scatter at TP 8); set workload.sm_rings=one or "
           "sim.symmetry=none";
  }
  return {};
}

SystemConfig load_system(const std::string& name_or_path) {
  SystemConfig config;
  const auto& presets = embedded_presets();
  const auto preset = presets.find(name_or_path);
  if (preset != presets.end()) {
    apply_json(config, parse_document(preset->second, "preset " + name_or_path),
               "preset " + name_or_path);
  } else {
    // Only regular files: a device such as /dev/zero would be read forever.
    std::ifstream file;
    std::error_code error;
    if (std::filesystem::is_regular_file(name_or_path, error)) file.open(name_or_path);
    if (!file.is_open()) {
      throw ConfigError("system '" + name_or_path + "': not a preset (" + join(preset_names()) +
                        ") and not a readable file" + did_you_mean(name_or_path, preset_names()));
    }
    std::stringstream text;
    text << file.rdbuf();
    apply_json(config, parse_document(text.str(), name_or_path), name_or_path);
  }
  validate(config);
  return config;
}

json to_json(const SystemConfig& config) {
  SystemConfig copy = config;
  JsonWriter writer;
  describe(copy, writer);
  return writer.document;
}

std::string parameter_table(const SystemConfig& config) {
  SystemConfig copy = config;
  TableWriter writer;
  describe(copy, writer);
  return writer.text;
}

}  // namespace t3
