// Sublayer names and per-GPU GEMM shapes (see sublayer.h).
#include "workloads/sublayer.h"

#include "config/suggestion.h"
#include "config/system_config.h"

namespace t3 {

std::vector<Sublayer> all_sublayers() {
  return {Sublayer::OutputProjection, Sublayer::Fc2, Sublayer::Fc1Backward,
          Sublayer::InputProjectionBackward};
}

std::vector<Sublayer> known_sublayers() {
  std::vector<Sublayer> known = all_sublayers();
  known.push_back(Sublayer::Fc1AllGather);
  return known;
}

bool gathers_input(Sublayer sublayer) {
  return sublayer == Sublayer::Fc1AllGather;
}

const char* to_string(Sublayer sublayer) {
  switch (sublayer) {
    case Sublayer::OutputProjection:
      return "op";
    case Sublayer::Fc2:
      return "fc2";
    case Sublayer::Fc1Backward:
      return "fc1";
    case Sublayer::InputProjectionBackward:
      return "ip";
    case Sublayer::Fc1AllGather:
      return "fc1-ag";
  }
  return "?";
}

Sublayer parse_sublayer(const std::string& name) {
  std::string known;
  std::vector<std::string> list;
  for (const Sublayer sublayer : known_sublayers()) {
    if (name == to_string(sublayer)) return sublayer;
    known += (known.empty() ? "" : ", ") + std::string(to_string(sublayer));
    list.emplace_back(to_string(sublayer));
  }
  throw ConfigError("'" + name + "': not a sublayer" + did_you_mean(name, list) +
                    "; known sublayers: " + known);
}

std::int64_t k_factor(Sublayer sublayer) {
  switch (sublayer) {
    case Sublayer::OutputProjection:
      return 1;
    case Sublayer::Fc2:
      return 4;
    case Sublayer::Fc1Backward:
    case Sublayer::Fc1AllGather:
      return 4;
    case Sublayer::InputProjectionBackward:
      return 3;
  }
  throw ConfigError("unknown sublayer " + std::to_string(static_cast<int>(sublayer)));
}

GemmShape sublayer_gemm(const ModelSpec& model, Sublayer sublayer, int tp, std::int64_t tokens) {
  const std::string what = model.name + " " + to_string(sublayer) + " at tp " + std::to_string(tp);
  if (tp < 1) throw ConfigError(what + ": tp must be at least 1");
  if (tokens < 1) {
    throw ConfigError(what + ": tokens must be at least 1, got " + std::to_string(tokens));
  }
  if (model.hidden < 1) throw ConfigError(what + ": hidden size must be positive");
  const std::int64_t total_k = k_factor(sublayer) * model.hidden;
  if (total_k % tp != 0) {
    throw ConfigError(what + ": K = " + std::to_string(k_factor(sublayer)) + " * " +
                      std::to_string(model.hidden) + " = " + std::to_string(total_k) +
                      " is not divisible by tp " + std::to_string(tp));
  }
  if (gathers_input(sublayer)) return GemmShape{tokens, total_k / tp, model.hidden};
  return GemmShape{tokens, model.hidden, total_k / tp};
}

}  // namespace t3
