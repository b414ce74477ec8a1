// The model zoo: transformer models the T3 paper evaluates, and BERT-Large, one JSON file each
// under workloads/models/, compiled into the library. Plain C++, no SystemC.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace t3 {

struct ModelSpec {
  std::string name;
  std::int64_t hidden = 0;  // H, the model dimension
  std::int64_t layers = 0;
  std::int64_t heads = 0;
  std::int64_t seq = 0;       // tokens per sequence (its context length)
  std::vector<int> paper_tp;  // TP degrees the T3 paper evaluates it at (none: not in the paper)
  std::string source;         // where the figures come from
};

// Names of the built-in models, in order of increasing hidden size (the paper's table order).
std::vector<std::string> model_names();

// A built-in model by name; an unknown name throws ConfigError listing the known names.
ModelSpec model(const std::string& name);

// Parses and checks one model document (the format of workloads/models/*.json: the keys name,
// hidden, layers, heads, seq, paper_tp and source, nothing else). `origin` names it in errors.
// Throws ConfigError for malformed JSON, a missing or unknown key, a wrong type, a non-positive
// size or a hidden size the head count does not divide.
ModelSpec parse_model(const std::string& json_text, const std::string& origin);

}  // namespace t3
