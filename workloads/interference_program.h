// The host programs of the compute-memory interference experiment (experiments/interference.h):
// a GEMM on hardware queue 0 confined to the SMs a background kernel on queue 1 leaves it, the
// background confined to the first K SMs (the dispatcher's SM_FIRST / SM_COUNT). The background
// is a memory-streaming kernel (reads a[i], writes b[i] = a[i] + 1 in fp32 over buffers far
// larger than the L2) or a compute-only kernel that takes the same SMs and touches no memory.
// Plain C++, no SystemC.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "config/system_config.h"
#include "protocol/program.h"
#include "workloads/gemm_program.h"
#include "workloads/stream_program.h"

namespace t3 {

// SMs [first, first + count) of one GPU; count 0: from `first` to the last SM.
struct SmRange {
  int first = 0;
  int count = 0;
};

// Appends the writes of SM_FIRST and SM_COUNT: the next launches use `range` until it is written
// again. Throws std::invalid_argument for a negative first or count.
void append_sm_range(Program& program, std::uint64_t dispatcher, const SmRange& range,
                     const std::string& label);

// The streaming background on SMs [0, sms): one workgroup per SM (the measured kernel ran one
// thread block per SM), reading `bytes` of fp32 from `base` and writing as many after them
// (4 KiB aligned), one vector add per element, through the L2 like ordinary stores. Queue 1, not
// waited for where it is launched.
StreamLaunch background_stream(const SystemConfig& config, std::uint64_t base, std::uint64_t bytes,
                               int sms);

// The compute-only background on SMs [0, sms): one workgroup per SM, each busy on its SM's math
// pipe for `seconds` (sm.flops_per_clock x sm.clock_GHz x sm.efficiency per second), no memory
// access. Queue 1, not waited for where it is launched.
StreamLaunch background_compute(const SystemConfig& config, double seconds, int sms);

// `gemm` on queue 0 confined to SMs [background_sms, sm.count), after `background` (if any) on
// queue 1 confined to [0, background_sms); the program then waits for both. Without a
// background and with background_sms 0 the GEMM has every SM. Throws std::invalid_argument for
// background_sms outside [0, sm.count - 1].
Program interference_program(const SystemConfig& config, GemmLaunch gemm,
                             const std::optional<StreamLaunch>& background, int background_sms);

}  // namespace t3
