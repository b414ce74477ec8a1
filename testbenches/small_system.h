// A small group for tests and examples: the t3-paper preset shrunk to 4 SMs per GPU, 32 x 16 x 8
// tiles and a 64 KiB L2, so a whole scenario simulates in a fraction of a second while every
// block (SMs, L2, HBM channels, links, tracker, DMA engine) still takes part.
#pragma once

#include "config/system_config.h"

namespace t3 {

SystemConfig small_system(int gpus, SimMode mode = SimMode::Functional);

}  // namespace t3
