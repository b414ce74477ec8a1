// Builds the host program that launches one memory-streaming kernel (an element-wise or
// normalisation kernel of a transformer layer: dispatcher KERNEL = kStream) on one GPU, and plans
// where its input and output lie. Plain C++, no SystemC.
#pragma once

#include <cstdint>
#include <string>

#include "config/system_config.h"
#include "protocol/program.h"
#include "workloads/gemm_program.h"

namespace t3 {

struct StreamLaunch {
  std::uint64_t dispatcher = 0;  // the dispatcher's MMIO block base address
  std::uint64_t src = 0;         // input range [src, src + read_bytes)
  std::uint64_t read_bytes = 0;
  std::uint64_t dst = 0;  // output range [dst, dst + write_bytes)
  std::uint64_t write_bytes = 0;
  std::int64_t workgroups = 1;
  std::uint32_t ops_per_element = 1;  // vector-ALU operations per element read
  std::uint64_t flops = 0;            // matrix FLOPs (a fused attention kernel), else 0
  ElementType element = ElementType::Fp16;
  // Streaming stores bypass the L2 (dispatcher OutFlags kUncached): the output goes to HBM as it
  // is produced, as the next kernel of a layer reads it from there.
  bool uncached_output = true;
  // Input bytes a workgroup reads per step, the reads it keeps in flight (STREAM_STEP_BYTES);
  // 0: its SM slot's part of sm.max_inflight_bytes.
  std::uint64_t step_bytes = 0;
  std::string label = "stream";
  int queue = 0;     // the dispatcher's hardware queue it runs on
  bool wait = true;  // the program waits for it here (false: later, with wait_kernel())
};

// Appends the descriptor writes, the doorbell of `queue` and (if `wait`) a WaitKernel. Throws
// std::invalid_argument for no bytes and no FLOPs at all, byte counts that are not whole elements,
// workgroups outside [1, dispatcher::kMaxStreamWorkgroups].
void append_stream(Program& program, const StreamLaunch& launch);

// A streaming kernel on GPU `gpu` of `config`: input at the start of its HBM window, output after
// it (4 KiB aligned), one workgroup per SM slot (sm.count x sm.occupancy: one wave).
StreamLaunch plan_stream(const SystemConfig& config, int gpu, std::uint64_t read_bytes,
                         std::uint64_t write_bytes, std::uint64_t flops = 0,
                         const std::string& label = "stream");

}  // namespace t3
