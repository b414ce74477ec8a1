// GEMM launch programs and buffer plans (see gemm_program.h).
#include "workloads/gemm_program.h"

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "protocol/dispatcher_registers.h"
#include "protocol/hex.h"
#include "protocol/to_size.h"
#include "workloads/plan_util.h"

namespace t3 {
namespace {

const char* order_name(WgOrder order) {
  switch (order) {
    case WgOrder::RowMajor:
      return "row-major";
    case WgOrder::ColumnMajor:
      return "column-major";
    case WgOrder::ChunkStaggered:
      return "chunk-staggered";
  }
  return nullptr;
}

std::uint32_t reg32(const std::string& label, const char* name, std::int64_t value) {
  if (value < 1 || value > std::numeric_limits<std::uint32_t>::max()) {
    bad_plan(label + ": " + name + " = " + std::to_string(value) +
             " must be in [1, 2^32 - 1] (a 32-bit register)");
  }
  return static_cast<std::uint32_t>(value);
}

}  // namespace

std::vector<OutputChunk> single_output(std::uint64_t c) {
  return {OutputChunk{c, OutputOp::Store, 0}};
}

void append_gemm(Program& program, const GemmLaunch& launch) {
  namespace d = dispatcher;
  const std::string& label = launch.label;
  const GemmShape& s = launch.shape;
  const std::uint32_t m = reg32(label, "M", s.m);
  const std::uint32_t n = reg32(label, "N", s.n);
  const std::uint32_t k = reg32(label, "K", s.k);
  const std::uint32_t tile_m = reg32(label, "tile_m", launch.tiles.tile_m);
  const std::uint32_t tile_n = reg32(label, "tile_n", launch.tiles.tile_n);
  const std::uint32_t tile_k = reg32(label, "tile_k", launch.tiles.tile_k);
  const char* in_name = to_string(launch.element);
  const char* out_name = to_string(launch.out_element);
  const char* order = order_name(launch.order);
  if (order == nullptr) {
    bad_plan(label + ": unknown WG order " + std::to_string(static_cast<int>(launch.order)));
  }
  if (launch.queue < 0 || launch.queue >= dispatcher::kQueues) {
    bad_plan(label + ": queue = " + std::to_string(launch.queue) + " must be in [0, " +
             std::to_string(dispatcher::kQueues) + ")");
  }

  const std::int64_t tile_rows = (s.m + launch.tiles.tile_m - 1) / launch.tiles.tile_m;
  const std::int64_t max_chunks = std::min<std::int64_t>(d::kMaxChunks, tile_rows);
  if (launch.chunks < 1 || launch.chunks > max_chunks) {
    bad_plan(label + ": chunks = " + std::to_string(launch.chunks) + " must be in [1, " +
             std::to_string(max_chunks) + "] (at most " + std::to_string(d::kMaxChunks) +
             " and at most the output's " + std::to_string(tile_rows) + " tile rows)");
  }
  if (launch.first_chunk < 0 || launch.first_chunk >= launch.chunks) {
    bad_plan(label + ": first_chunk = " + std::to_string(launch.first_chunk) + " must be in [0, " +
             std::to_string(launch.chunks) + ")");
  }
  if (static_cast<std::int64_t>(launch.outputs.size()) != launch.chunks) {
    bad_plan(label + ": the output map has " + std::to_string(launch.outputs.size()) +
             " entries for " + std::to_string(launch.chunks) + " chunks (one per chunk)");
  }

  auto write = [&](std::uint64_t offset, std::uint32_t value, const std::string& what) {
    program.commands.push_back(HostCommand{HostCommand::Kind::WriteRegister,
                                           launch.dispatcher + offset, value, label + ": " + what});
  };
  auto low = [](std::uint64_t v) { return static_cast<std::uint32_t>(v & 0xffffffffu); };
  auto high = [](std::uint64_t v) { return static_cast<std::uint32_t>(v >> 32); };

  write(d::kKernel, d::kGemm, "kernel = GEMM");
  write(d::kM, m, "M = " + std::to_string(m));
  write(d::kN, n, "N = " + std::to_string(n));
  write(d::kK, k, "K = " + std::to_string(k));
  write(d::kTileM, tile_m, "tile_m = " + std::to_string(tile_m));
  write(d::kTileN, tile_n, "tile_n = " + std::to_string(tile_n));
  write(d::kTileK, tile_k, "tile_k = " + std::to_string(tile_k));
  write(d::kElement, element_code(launch.element), std::string("A/B element = ") + in_name);
  write(d::kOutElement, element_code(launch.out_element),
        std::string("output element = ") + out_name);
  write(d::kWgOrder, static_cast<std::uint32_t>(launch.order), std::string("WG order = ") + order);
  write(d::kChunks, static_cast<std::uint32_t>(launch.chunks),
        "chunks = " + std::to_string(launch.chunks));
  write(d::kFirstChunk, static_cast<std::uint32_t>(launch.first_chunk),
        "first chunk = " + std::to_string(launch.first_chunk));
  write(d::kALow, low(launch.a), "A base " + hex(launch.a) + " bits 31:0");
  write(d::kAHigh, high(launch.a), "A base " + hex(launch.a) + " bits 63:32");
  write(d::kBLow, low(launch.b), "B base " + hex(launch.b) + " bits 31:0");
  write(d::kBHigh, high(launch.b), "B base " + hex(launch.b) + " bits 63:32");
  for (std::int64_t c = 0; c < launch.chunks; ++c) {
    const OutputChunk& out = launch.outputs[to_size(c)];
    const std::uint64_t entry = d::kOutMap + static_cast<std::uint64_t>(c) * d::kOutMapStride;
    const std::string chunk = "output chunk " + std::to_string(c);
    write(entry + d::kOutBaseLow, low(out.base), chunk + " base " + hex(out.base) + " bits 31:0");
    write(entry + d::kOutBaseHigh, high(out.base),
          chunk + " base " + hex(out.base) + " bits 63:32");
    write(entry + d::kOutOp, static_cast<std::uint32_t>(out.op),
          chunk + (out.op == OutputOp::Update ? " op = update (add)" : " op = store"));
    write(entry + d::kOutFlags, out.flags, chunk + " flags = " + hex(out.flags));
  }
  write(d::doorbell_register(launch.queue), 1, "doorbell (launch)");
  if (launch.wait) program.commands.push_back(wait_kernel(launch.dispatcher, launch.queue, label));
}

HostCommand wait_kernel(std::uint64_t dispatcher, int queue, const std::string& label) {
  return HostCommand{HostCommand::Kind::WaitKernel, dispatcher, static_cast<std::uint32_t>(queue),
                     label + ": wait for the kernel to finish"};
}

Program gemm_program(const GemmLaunch& launch) {
  Program program;
  append_gemm(program, launch);
  return program;
}

GemmBuffers plan_buffers(std::uint64_t hbm_base, const GemmShape& shape,
                         std::uint64_t element_bytes, std::uint64_t out_element_bytes) {
  if (shape.m < 1 || shape.n < 1 || shape.k < 1) {
    bad_plan("plan_buffers: GEMM sizes must be positive, got M = " + std::to_string(shape.m) +
             ", N = " + std::to_string(shape.n) + ", K = " + std::to_string(shape.k));
  }
  if (element_bytes == 0 || out_element_bytes == 0) {
    bad_plan("plan_buffers: element sizes must be positive");
  }
  auto elements = [](std::int64_t rows, std::int64_t cols) {
    return static_cast<std::uint64_t>(rows) * static_cast<std::uint64_t>(cols);
  };
  GemmBuffers buffers;
  buffers.a_bytes = elements(shape.m, shape.k) * element_bytes;
  buffers.b_bytes = elements(shape.k, shape.n) * element_bytes;
  buffers.c_bytes = elements(shape.m, shape.n) * out_element_bytes;
  buffers.a = align_up(hbm_base, kBufferAlignment);
  buffers.b = align_up(buffers.a + buffers.a_bytes, kBufferAlignment);
  buffers.c = align_up(buffers.b + buffers.b_bytes, kBufferAlignment);
  buffers.end = align_up(buffers.c + buffers.c_bytes, kBufferAlignment);
  return buffers;
}

}  // namespace t3
