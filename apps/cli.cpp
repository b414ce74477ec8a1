#include "apps/cli.h"

#include <fstream>

#include "config/config_io.h"

namespace t3::cli {

po::options_description system_options() {
  po::options_description options("System");
  options.add_options()("system", po::value<std::string>()->default_value("t3-paper"),
                        "preset name or JSON file (presets: t3-paper, a100-8, h100-8)")(
      "tp", po::value<int>(), "GPUs in the tensor-parallel group (sets gpus)")(
      "set", po::value<std::vector<std::string>>()->composing(),
      "override one parameter, path=value (repeatable), e.g. --set hbm.channels=16")(
      "help,h", "show this help");
  return options;
}

SystemConfig system_from(const po::variables_map& options) {
  SystemConfig config = load_system(options["system"].as<std::string>());
  if (options.count("tp"))
    apply_override(config, "gpus=" + std::to_string(options["tp"].as<int>()));
  if (options.count("set")) {
    for (const auto& assignment : options["set"].as<std::vector<std::string>>()) {
      apply_override(config, assignment);
    }
  }
  validate(config);
  return config;
}

po::variables_map parse(const std::vector<std::string>& args,
                        const po::options_description& description) {
  po::variables_map options;
  try {
    po::store(po::command_line_parser(args).options(description).run(), options);
    po::notify(options);
  } catch (const po::error& error) {
    throw UsageError(error.what());
  }
  return options;
}

void write_json(const std::string& path, const nlohmann::json& document) {
  std::ofstream file(path);
  if (!file) throw std::runtime_error("cannot write '" + path + "'");
  file << document.dump(2) << "\n";
  if (!file) throw std::runtime_error("error writing '" + path + "'");
}

}  // namespace t3::cli
