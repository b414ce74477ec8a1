// A program: what one GPU's host (driver) does, as plain data. The workload layer writes
// programs; the host model executes them through MMIO. No SystemC here.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace t3 {

struct HostCommand {
  enum class Kind {
    WriteRegister,   // 32-bit MMIO write of `value` at `address`
    ExpectRegister,  // 32-bit MMIO read at `address`; a value other than `value` fails the run
    PollRegister,    // 32-bit MMIO reads at `address` every `interval_ns` until it reads `value`;
                     // not within `timeout_ns` of simulated time fails the run (no endless poll)
    PollAtLeast,     // the same until it reads `value` or more (a counter that may pass it
                     // between two reads, e.g. a collective's flag count)
    WaitKernel,      // wait for queue `value` of the dispatcher at MMIO `address` (its block
                     // base) to interrupt; then read the queue's status, fail the run if the
                     // launch failed, acknowledge
    Barrier,         // wait until every host of the group reached its Barrier with this `value`
    Delay,           // idle for `value` nanoseconds
  };
  Kind kind;
  std::uint64_t address = 0;
  std::uint32_t value = 0;
  std::string note;                          // what this step is for: shown in errors and traces
  std::uint32_t interval_ns = 500;           // PollRegister, PollAtLeast: time between reads
  std::uint64_t timeout_ns = 1'000'000'000;  // PollRegister, PollAtLeast: give up after this long
};

struct Program {
  std::vector<HostCommand> commands;
};

}  // namespace t3
