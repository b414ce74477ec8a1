// The error of a run that can never finish.
#pragma once

#include <stdexcept>

namespace t3 {

// A run that can never finish: work is left and nothing completes, whether every process waits
// for an event that will never come (a deadlock: the kernel runs out of events) or some keep
// polling for a change that will never come (a livelock, stopped by sim.stall_timeout_ns). The
// message is one line naming every block still holding work. The command line exits 2 on it.
class StallError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace t3
