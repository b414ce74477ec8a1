#include "models/hbm/policy/fcfs.h"

namespace t3 {

std::optional<std::size_t> FcfsPolicy::pick(QueueView /*queue*/, sc_core::sc_time /*now*/) {
  return 0;  // the queue is kept in arrival order
}

}  // namespace t3
