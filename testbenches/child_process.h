// Runs a piece of work in a forked child process and returns what it produced: SystemC elaborates
// one design per process, so a test that compares two simulations (determinism, timing against
// functional mode) runs each in a child. Fork before any SystemC object exists in the caller.
#pragma once

#include <functional>
#include <string>

namespace t3 {

// The bytes `job` returned in the child. Throws std::runtime_error if the child could not be
// started, `job` threw, or the child did not exit normally.
std::string run_in_child(const std::function<std::string()>& job);

}  // namespace t3
