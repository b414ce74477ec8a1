// Loading, overriding, checking and printing a SystemConfig. Every error names the offending path.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/system_config.h"

namespace t3 {

// Names of the built-in presets (configs/*.json compiled into the library), sorted.
std::vector<std::string> preset_names();

// A preset by name, or a JSON file by path, applied over the built-in defaults and validated.
SystemConfig load_system(const std::string& name_or_path);

// Applies a (partial) nested JSON document; `source` names it in errors.
void apply_json(SystemConfig& config, const nlohmann::json& document, const std::string& source);

// Applies one `path=value` override (value parsed according to the path's type).
void apply_override(SystemConfig& config, const std::string& assignment);

// Whether T3's and ideal-rs-nmc's DMA + NMC reduce-scatter go straight to each chunk's owner
// (workload.collective, auto: not on a ring topology).
bool direct_collective(const SystemConfig& config);
// Whether the SM ring collectives spread over several rings (workload.sm_rings, auto: on a
// fully-connected topology of 3 GPUs or more).
bool several_sm_rings(const SystemConfig& config);

// Why rotational symmetry cannot stand for an every-GPU run of `config` (empty if it can): the
// sweep picks it only where this is empty, and validate() refuses it otherwise.
std::string rotational_symmetry_refusal(const SystemConfig& config);

// Cross-field checks that single ranges cannot express; throws ConfigError naming the paths.
// (Overlap of the address windows is checked by AddressMap::check when a system is built.)
void validate(const SystemConfig& config);

// The effective configuration as nested JSON (enumerations as their names).
nlohmann::json to_json(const SystemConfig& config);

// One row per leaf: path, type, unit, default, range or choices, description (Markdown table).
std::string parameter_table(const SystemConfig& config);

}  // namespace t3
