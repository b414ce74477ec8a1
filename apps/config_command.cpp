#include <iostream>

#include "apps/cli.h"
#include "config/config_io.h"
#include "tlm_interconnect/address_map.h"

namespace t3::cli {

int config_command(const std::vector<std::string>& args) {
  po::options_description options = system_options();
  options.add_options()("table", "print every parameter with unit, default and range (Markdown)");
  const auto values = parse(args, options);
  if (print_help_if_asked(
          values, options,
          "usage: t3sim config [OPTIONS]\nPrints the effective configuration as JSON "
          "(--system with --tp and every --set\napplied), or with --table every parameter "
          "with its unit, default and range.\n")) {
    return 0;
  }
  const SystemConfig config = system_from(values);
  AddressMap(config.address_map, static_cast<int>(config.gpus), config.hbm.capacity_bytes).check();
  if (values.count("table")) {
    std::cout << parameter_table(config);
  } else {
    std::cout << to_json(config).dump(2) << "\n";
  }
  return 0;
}

}  // namespace t3::cli
