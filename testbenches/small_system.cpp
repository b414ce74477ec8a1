#include "testbenches/small_system.h"

#include <string>

#include "config/config_io.h"

namespace t3 {

SystemConfig small_system(int gpus, SimMode mode) {
  SystemConfig config = load_system("t3-paper");
  for (const char* assignment :
       {"sm.count=4", "gemm.tile_m=32", "gemm.tile_n=16", "gemm.tile_k=8", "l2.size_bytes=65536"}) {
    apply_override(config, assignment);
  }
  config.sim.mode = mode;
  apply_override(config, "gpus=" + std::to_string(gpus));
  validate(config);
  return config;
}

}  // namespace t3
