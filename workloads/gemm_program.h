// Builds the host program that launches one GEMM on one GPU's dispatcher: it writes every kernel
// descriptor register (protocol/dispatcher_registers.h), rings the doorbell and waits for the
// kernel. Also plans where a plain GEMM's matrices lie in a GPU's HBM. Plain C++, no SystemC.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "config/system_config.h"
#include "protocol/element_type.h"
#include "protocol/gemm_layout.h"
#include "protocol/program.h"

namespace t3 {

// How an output chunk reaches memory (the dispatcher's kOutOp register).
enum class OutputOp : std::uint32_t { Store = 0, Update = 1 };

// Where one chunk of the output goes: chunk c's tiles (ChunkSplit over the output's tile rows)
// are written tile-contiguously from `base`, as if that chunk were a matrix of its own.
struct OutputChunk {
  std::uint64_t base = 0;
  OutputOp op = OutputOp::Store;
  std::uint32_t flags = 0;  // dispatcher::OutFlags (kUncached, kTagged)
};

struct GemmLaunch {
  GemmShape shape;
  GemmConfig tiles;
  ElementType element = ElementType::Fp16;      // A and B
  ElementType out_element = ElementType::Fp16;  // the output
  std::uint64_t dispatcher = 0;                 // the dispatcher's MMIO block base address
  std::uint64_t a = 0;                          // A's base address (M x K, tiles tile_m x tile_k)
  std::uint64_t b = 0;                          // B's base address (K x N, tiles tile_k x tile_n)
  WgOrder order = WgOrder::RowMajor;
  std::int64_t chunks = 1;
  std::int64_t first_chunk = 0;
  std::vector<OutputChunk> outputs;  // one per chunk
  std::string label = "gemm";        // prefixes every command's note
  int queue = 0;                     // the dispatcher's hardware queue it runs on
  bool wait = true;  // the program waits for it here (false: later, with wait_kernel())
};

// The WaitKernel command for queue `queue` of the dispatcher at `dispatcher`.
HostCommand wait_kernel(std::uint64_t dispatcher, int queue, const std::string& label);

// Appends the launch to `program`: a WriteRegister for each descriptor register (kernel, sizes,
// tiles, element types, WG order, chunks, first chunk, A and B addresses, then each chunk's output
// map entry: base low/high, op, flags), a WriteRegister of 1 to the queue's doorbell, and (if
// `wait`) a WaitKernel on the dispatcher's block address and queue. Every command carries a note.
// Throws std::invalid_argument for a zero size, a size that does not fit a 32-bit register, an
// unknown WG order, chunks outside [1, min(dispatcher::kMaxChunks, output tile
// rows)], first_chunk >= chunks, or an output map whose size differs from chunks.
void append_gemm(Program& program, const GemmLaunch& launch);

// A program holding just this launch.
Program gemm_program(const GemmLaunch& launch);

// The output map of a plain GEMM whose single chunk is a local store to `c` (cached, untagged).
std::vector<OutputChunk> single_output(std::uint64_t c);

inline constexpr std::uint64_t kBufferAlignment = 4096;

// A, B and C of one GEMM in one GPU's HBM, each at a 4 KiB-aligned address, in that order, not
// overlapping. `end` is the first 4 KiB-aligned address after C (where the next buffer may go).
struct GemmBuffers {
  std::uint64_t a = 0, b = 0, c = 0;
  std::uint64_t a_bytes = 0, b_bytes = 0, c_bytes = 0;
  std::uint64_t end = 0;
};

// Places A (m x k), B (k x n) and C (m x n) from `hbm_base` (rounded up to 4 KiB). Sizes in bytes
// per element; zero sizes throw std::invalid_argument.
GemmBuffers plan_buffers(std::uint64_t hbm_base, const GemmShape& shape,
                         std::uint64_t element_bytes, std::uint64_t out_element_bytes);

}  // namespace t3
