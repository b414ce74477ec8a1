// Compute-memory interference on one GPU: how much a GEMM slows beside a memory-streaming kernel
// that runs on K SMs of a second hardware queue, against the same GEMM beside a compute-only
// kernel on the same K SMs. The compute kernel takes the SMs and no memory bandwidth, so the
// ratio of the two GEMM times is the memory system's share of the slowdown alone (SM theft and
// memory interference told apart, as the measurement on a real H100 does it; docs/correlation.md).
//
// Per background size K (workloads/interference_program.h for the programs):
//   - stream alone: the streaming kernel on SMs [0, K), its rate (bytes read + written / time);
//   - with compute: the GEMM on SMs [K, sm.count) beside the compute kernel on [0, K), which runs
//     for longer than the GEMM;
//   - with stream: the GEMM on [K, sm.count) beside the streaming kernel on [0, K), whose buffers
//     are sized from its rate alone to outlast the GEMM (doubled and run again if they do not).
// and once, the GEMM alone on every SM. GEMM times are doorbell to last workgroup, as t3sim gemm
// reports them. One GPU is simulated: nothing here leaves it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/system_config.h"
#include "experiments/isolated.h"
#include "protocol/gemm_layout.h"

namespace t3 {

struct InterferenceRequest {
  SystemConfig config;  // run with one GPU (gpus = 1) whatever its TP degree
  GemmShape shape;
  std::string workload;  // what the GEMM is, for the document ("t-nlg fc2", "custom 64,64,64")
  std::vector<int> background_sms;  // K values, each in [0, sm.count - 1]
  bool stream = true;               // run the streaming background
  bool compute = true;              // run the compute-only background
  // Bytes of each streaming buffer (a and b) of the rate run, and the least of the runs beside
  // the GEMM: 256 MiB, as the measured kernel's, five times the H100's 50 MB L2.
  std::uint64_t stream_buffer_bytes = 256ull << 20;
  // Set: the runs beside the GEMM stream exactly this many bytes per buffer (0: no streaming
  // kernel at all, the GEMM still on SMs [K, sm.count)), without sizing or a second try.
  std::optional<std::uint64_t> stream_bytes;
  // Input bytes each streaming workgroup reads per step, the reads it keeps in flight
  // (STREAM_STEP_BYTES, whole fp32 elements); 0: its SM slot's part of sm.max_inflight_bytes.
  std::uint64_t stream_step_bytes = 0;
};

// Throws std::invalid_argument naming the value for a K outside [0, sm.count - 1], no K, no
// background kind, or a buffer or step size that is not whole fp32 elements.
void check_interference_request(const InterferenceRequest& request);

// Runs every simulation the request needs (each in its own process, at most `jobs` at once) and
// returns {"job": "interference", "workload", "shape", "system", "gemm_alone_ns", "points":
// [{"background_sms", "background_GBps", "background_alone_read_latency_ns", "gemm_alone_ns",
// "gemm_with_stream_ns", "gemm_with_compute_ns", "interference", "with_stream_detail",
// "with_compute_detail"}, ...], "config"}: interference = with stream / with compute - 1; a figure
// whose run was not asked for
// (--background) is null. A detail is that run's memory view: the GEMM's SMs' mean read latency
// and, per workgroup, their wait for operands and for their stores' acknowledgements at its end;
// the background SMs' bytes and mean read latency; the L2's totals, the HBM's row-hit rate, bytes
// and entry latency (the background's traffic included). background_alone_read_latency_ns is the
// streaming kernel's mean read latency in its run alone.
nlohmann::json run_interference(const InterferenceRequest& request, int jobs,
                                const Progress& progress = {});

}  // namespace t3
