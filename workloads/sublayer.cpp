// Sublayer names and per-GPU GEMM shapes (see sublayer.h).
#include "workloads/sublayer.h"

#include <algorithm>
#include <cctype>
#include <limits>

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

GemmShape parse_gemm_shape(const std::string& text) {
  const auto refuse = [&](const std::string& why) {
    throw ConfigError("shape '" + text + "': " + why +
                      "; expected M,N,K, three positive integers (e.g. 8192,4256,2128)");
  };
  std::vector<std::string> sizes;
  for (std::string::size_type start = 0;;) {
    const auto comma = text.find(',', start);
    sizes.push_back(text.substr(start, comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (sizes.size() != 3) refuse(std::to_string(sizes.size()) + " sizes");
  std::int64_t values[3] = {};
  for (int i = 0; i < 3; ++i) {
    const std::string& size = sizes[i];
    const bool digits =
        !size.empty() && size.size() <= 10 &&
        std::all_of(size.begin(), size.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
    if (!digits || std::stoll(size) < 1) refuse("'" + size + "' is not a positive integer");
    // Below 2^31, so the byte counts the planner forms of two sizes stay within 64 bits.
    if (std::stoll(size) > std::numeric_limits<std::int32_t>::max()) {
      refuse("'" + size + "' is not below 2^31");
    }
    values[i] = std::stoll(size);
  }
  return GemmShape{values[0], values[1], values[2]};
}

std::string shape_text(const GemmShape& shape) {
  return std::to_string(shape.m) + "x" + std::to_string(shape.n) + "x" + std::to_string(shape.k);
}

void check_fits(const SystemConfig& config, const GemmShape& shape) {
  const auto bytes = [](std::int64_t rows, std::int64_t cols) {
    return 2.0 * static_cast<double>(rows) * static_cast<double>(cols);  // fp16
  };
  const double needed = bytes(shape.m, shape.k) + bytes(shape.k, shape.n) + bytes(shape.m, shape.n);
  if (needed > static_cast<double>(config.hbm.capacity_bytes)) {
    throw ConfigError("shape " + shape_text(shape) + ": A, B and C take " +
                      std::to_string(static_cast<long long>(needed / 1e6)) +
                      " MB in fp16, more than one GPU's HBM (hbm.capacity_bytes = " +
                      std::to_string(config.hbm.capacity_bytes) + ")");
  }
}

GemmShape workload_gemm(const std::string& model_name, Sublayer sublayer,
                        const std::optional<GemmShape>& custom, int tp, std::int64_t tokens) {
  if (custom) return *custom;
  return sublayer_gemm(model(model_name), sublayer, tp, tokens);
}

}  // namespace t3
