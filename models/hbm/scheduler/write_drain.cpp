#include "models/hbm/scheduler/write_drain.h"

#include <algorithm>
#include <cmath>

namespace t3 {

WriteDrain::WriteDrain(const HbmConfig& config)
    : high_(std::max(1, static_cast<int>(std::ceil(config.bank.write_high *
                                                   static_cast<double>(config.queue_depth))))),
      low_(static_cast<int>(
          std::floor(config.bank.write_low * static_cast<double>(config.queue_depth)))) {
  check(config);
}

void WriteDrain::check(const HbmConfig& config) {
  if (!(config.bank.write_low < config.bank.write_high)) {
    throw ConfigError("hbm.bank.write_low: must be below hbm.bank.write_high");
  }
}

}  // namespace t3
