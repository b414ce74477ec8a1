// Programs of the interference experiment (see interference_program.h).
#include "workloads/interference_program.h"

#include <cmath>

#include "protocol/dispatcher_registers.h"
#include "protocol/element_type.h"
#include "protocol/mmio_map.h"
#include "workloads/gemm_plan.h"
#include "workloads/plan_util.h"

namespace t3 {

namespace {

constexpr int kGemmQueue = 0;
constexpr int kBackgroundQueue = 1;

StreamLaunch background_on(const SystemConfig& config, int sms, const std::string& label) {
  StreamLaunch launch;
  launch.dispatcher = mmio_block(config, 0, mmio_map::kDispatcher);
  launch.workgroups = sms;
  launch.element = ElementType::Fp32;
  launch.uncached_output = false;
  launch.label = label;
  launch.queue = kBackgroundQueue;
  launch.wait = false;
  return launch;
}

}  // namespace

void append_sm_range(Program& program, std::uint64_t dispatcher, const SmRange& range,
                     const std::string& label) {
  if (range.first < 0 || range.count < 0) {
    bad_plan(label + ": SM range first " + std::to_string(range.first) + ", count " +
             std::to_string(range.count) + " must not be negative");
  }
  const auto write = [&](std::uint64_t offset, int value, const std::string& what) {
    program.commands.push_back(HostCommand{HostCommand::Kind::WriteRegister, dispatcher + offset,
                                           static_cast<std::uint32_t>(value),
                                           label + ": " + what + " = " + std::to_string(value)});
  };
  write(dispatcher::kSmFirst, range.first, "first SM");
  write(dispatcher::kSmCount, range.count, "SMs");
}

StreamLaunch background_stream(const SystemConfig& config, std::uint64_t base, std::uint64_t bytes,
                               int sms) {
  StreamLaunch launch = background_on(config, sms, "background stream");
  launch.src = align_up(base, kBufferAlignment);
  launch.read_bytes = bytes;
  launch.dst = align_up(launch.src + bytes, kBufferAlignment);
  launch.write_bytes = bytes;
  launch.ops_per_element = 1;  // b[i] = a[i] + 1
  return launch;
}

StreamLaunch background_compute(const SystemConfig& config, double seconds, int sms) {
  StreamLaunch launch = background_on(config, sms, "background compute");
  const double per_sm = static_cast<double>(config.sm.flops_per_clock) * config.sm.clock_GHz * 1e9 *
                        config.sm.efficiency;
  launch.flops =
      static_cast<std::uint64_t>(std::ceil(per_sm * seconds)) * static_cast<std::uint64_t>(sms);
  return launch;
}

Program interference_program(const SystemConfig& config, GemmLaunch gemm,
                             const std::optional<StreamLaunch>& background, int background_sms) {
  const auto sms = static_cast<int>(config.sm.count);
  if (background_sms < 0 || background_sms >= sms) {
    bad_plan("background SMs = " + std::to_string(background_sms) + " must be in [0, " +
             std::to_string(sms - 1) + "] (the GEMM keeps at least one of the " +
             std::to_string(sms) + " SMs)");
  }
  if (background && background_sms == 0) {
    bad_plan(background->label + ": a background kernel needs at least one SM");
  }
  Program program;
  if (background) {
    append_sm_range(program, background->dispatcher, SmRange{0, background_sms}, background->label);
    append_stream(program, *background);
  }
  append_sm_range(program, gemm.dispatcher, SmRange{background_sms, 0}, gemm.label);
  gemm.queue = kGemmQueue;
  gemm.wait = true;
  append_gemm(program, gemm);
  if (background) {
    program.commands.push_back(
        wait_kernel(background->dispatcher, kBackgroundQueue, background->label));
  }
  return program;
}

}  // namespace t3
