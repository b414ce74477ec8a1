// Streaming kernel launch programs (see stream_program.h).
#include "workloads/stream_program.h"

#include <limits>

#include "protocol/dispatcher_registers.h"
#include "protocol/mmio_map.h"
#include "workloads/gemm_plan.h"
#include "workloads/plan_util.h"

namespace t3 {

void append_stream(Program& program, const StreamLaunch& launch) {
  namespace d = dispatcher;
  const std::string& label = launch.label;
  const char* element = to_string(launch.element);
  const std::uint64_t eb = bytes_of(launch.element, 1);
  if (launch.read_bytes == 0 && launch.write_bytes == 0 && launch.flops == 0) {
    bad_plan(label +
             ": a streaming kernel must read or write some bytes (or, compute only, have "
             "matrix FLOPs)");
  }
  if (launch.read_bytes % eb != 0 || launch.write_bytes % eb != 0) {
    bad_plan(label + ": " + std::to_string(launch.read_bytes) + " bytes read and " +
             std::to_string(launch.write_bytes) + " written must be whole " + element +
             " elements");
  }
  if (launch.step_bytes % eb != 0 ||
      launch.step_bytes > std::numeric_limits<std::uint32_t>::max()) {
    bad_plan(label + ": step bytes = " + std::to_string(launch.step_bytes) + " must be whole " +
             element + " elements below 4 GiB");
  }
  if (launch.workgroups < 1 || launch.workgroups > d::kMaxStreamWorkgroups) {
    bad_plan(label + ": workgroups = " + std::to_string(launch.workgroups) + " must be in [1, " +
             std::to_string(d::kMaxStreamWorkgroups) + "]");
  }
  if (launch.queue < 0 || launch.queue >= d::kQueues) {
    bad_plan(label + ": queue = " + std::to_string(launch.queue) + " must be in [0, " +
             std::to_string(d::kQueues) + ")");
  }
  auto write = [&](std::uint64_t offset, std::uint32_t value, const std::string& what) {
    program.commands.push_back(HostCommand{HostCommand::Kind::WriteRegister,
                                           launch.dispatcher + offset, value, label + ": " + what});
  };
  auto write64 = [&](std::uint64_t offset, std::uint64_t value, const std::string& what) {
    write(offset, static_cast<std::uint32_t>(value & 0xffffffffu), what + " bits 31:0");
    write(offset + 4, static_cast<std::uint32_t>(value >> 32), what + " bits 63:32");
  };
  write(d::kKernel, d::kStream, "kernel = stream");
  write(d::kElement, element_code(launch.element), std::string("element = ") + element);
  write64(d::kStreamSrcLow, launch.src, "input base");
  write64(d::kStreamReadBytesLow, launch.read_bytes,
          "input bytes = " + std::to_string(launch.read_bytes));
  write64(d::kStreamDstLow, launch.dst, "output base");
  write64(d::kStreamWriteBytesLow, launch.write_bytes,
          "output bytes = " + std::to_string(launch.write_bytes));
  write(d::kStreamWorkgroups, static_cast<std::uint32_t>(launch.workgroups),
        "workgroups = " + std::to_string(launch.workgroups));
  write(d::kStreamOps, launch.ops_per_element,
        "ops per element = " + std::to_string(launch.ops_per_element));
  write64(d::kStreamFlopsLow, launch.flops, "matrix FLOPs = " + std::to_string(launch.flops));
  write(d::kStreamOutFlags, launch.uncached_output ? d::kUncached : 0u,
        launch.uncached_output ? "output uncached" : "output cached");
  // Written only when set: the doorbell resets it to 0, the default, after every launch.
  if (launch.step_bytes > 0) {
    write(d::kStreamStepBytes, static_cast<std::uint32_t>(launch.step_bytes),
          "step bytes = " + std::to_string(launch.step_bytes));
  }
  write(d::doorbell_register(launch.queue), 1, "doorbell (launch)");
  if (launch.wait) program.commands.push_back(wait_kernel(launch.dispatcher, launch.queue, label));
}

StreamLaunch plan_stream(const SystemConfig& config, int gpu, std::uint64_t read_bytes,
                         std::uint64_t write_bytes, std::uint64_t flops, const std::string& label) {
  StreamLaunch launch;
  launch.dispatcher = mmio_block(config, gpu, mmio_map::kDispatcher);
  launch.src = align_up(hbm_base(config, gpu), kBufferAlignment);
  launch.read_bytes = read_bytes;
  launch.dst = align_up(launch.src + read_bytes, kBufferAlignment);
  launch.write_bytes = write_bytes;
  launch.workgroups = config.sm.count * config.sm.occupancy;
  launch.flops = flops;
  launch.label = label;
  return launch;
}

}  // namespace t3
