#include "models/l2/line_locks.h"

namespace t3::l2 {

LineLocks::LineLocks(const Geometry& geometry)
    : geometry_(geometry), lists_(geometry.sets), locked_sets_((geometry.sets + 63) / 64, 0) {}

}  // namespace t3::l2
