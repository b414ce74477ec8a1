#include "models/host/host.h"

#include <cstring>

#include "protocol/dispatcher_registers.h"
#include "protocol/hex.h"
#include "tlm_interconnect/address_map.h"

namespace t3 {

namespace {

std::string response_name(tlm::tlm_response_status status) {
  tlm::tlm_generic_payload payload;
  payload.set_response_status(status);
  return payload.get_response_string();
}

}  // namespace

Host::Host(sc_core::sc_module_name name, int gpu)
    : sc_core::sc_module(name),
      socket("socket"),
      irq("irq", dispatcher::kQueues),
      barrier("barrier"),
      gpu_(gpu) {
  SC_HAS_PROCESS(Host);
  SC_THREAD(run);
}

void Host::load(const Program& program) {
  program_ = program;
}

void Host::run() {
  finish_times_.reserve(program_.commands.size());
  for (const HostCommand& command : program_.commands) {
    std::string failure = execute(command);
    if (!failure.empty()) {
      error_ = std::move(failure);
      SC_REPORT_INFO("t3/host", (std::string(name()) + ": " + error_).c_str());
      finished.notify(sc_core::SC_ZERO_TIME);
      return;
    }
    finish_times_.push_back(sc_core::sc_time_stamp());
  }
  done_ = true;
  finished.notify(sc_core::SC_ZERO_TIME);
}

tlm::tlm_response_status Host::access(bool write, std::uint64_t address, std::uint32_t& value) {
  T3Extension extension;
  extension.op = write ? Op::Write : Op::Read;
  extension.origin = {static_cast<std::uint16_t>(gpu_), 0};
  extension.unit_kind = UnitKind::Host;
  tlm::tlm_generic_payload* payload = make_payload(pool_, address, 4, extension);
  if (write) std::memcpy(payload->get_data_ptr(), &value, 4);
  sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
  socket->b_transport(*payload, delay);
  const tlm::tlm_response_status status = payload->get_response_status();
  if (!write && status == tlm::TLM_OK_RESPONSE) std::memcpy(&value, payload->get_data_ptr(), 4);
  payload->release();
  if (delay > sc_core::SC_ZERO_TIME) wait(delay);
  return status;
}

std::string Host::where(const char* what, const HostCommand& command) const {
  return "gpu" + std::to_string(gpu_) + ": " + what + " '" + command.note + "'";
}

std::string Host::execute(const HostCommand& command) {
  using Kind = HostCommand::Kind;
  switch (command.kind) {
    case Kind::WriteRegister:
      return write_register(command);
    case Kind::ExpectRegister:
      return expect_register(command);
    case Kind::PollRegister:
    case Kind::PollAtLeast:
      return poll_register(command);
    case Kind::WaitKernel:
      return wait_kernel(command);
    case Kind::Barrier:
      return meet_barrier(command);
    case Kind::Delay:
      wait(sc_core::sc_time(static_cast<double>(command.value), sc_core::SC_NS));
      return {};
  }
  return where("command", command) + ": unknown command kind";
}

std::string Host::write_register(const HostCommand& command) {
  std::uint32_t value = command.value;
  const auto status = access(true, command.address, value);
  if (status != tlm::TLM_OK_RESPONSE) {
    return where("write", command) + ": MMIO write of " + hex(command.value) + " at " +
           hex(command.address) + " failed: " + response_name(status);
  }
  return {};
}

std::string Host::expect_register(const HostCommand& command) {
  std::uint32_t value = 0;
  const auto status = access(false, command.address, value);
  if (status != tlm::TLM_OK_RESPONSE) {
    return where("expect", command) + ": MMIO read at " + hex(command.address) +
           " failed: " + response_name(status);
  }
  if (value != command.value) {
    return where("expect", command) + ": register at " + hex(command.address) + " reads " +
           std::to_string(value) + " (" + hex(value) + "), expected " +
           std::to_string(command.value) + " (" + hex(command.value) + ")";
  }
  return {};
}

std::string Host::poll_register(const HostCommand& command) {
  // A driver polling a status register: each read costs its MMIO round trip, so the interval is
  // a floor, not the period.
  const sc_core::sc_time give_up =
      sc_core::sc_time_stamp() +
      sc_core::sc_time(static_cast<double>(command.timeout_ns), sc_core::SC_NS);
  for (;;) {
    std::uint32_t value = 0;
    const auto status = access(false, command.address, value);
    if (status != tlm::TLM_OK_RESPONSE) {
      return where("poll", command) + ": MMIO read at " + hex(command.address) +
             " failed: " + response_name(status);
    }
    if (value == command.value ||
        (command.kind == HostCommand::Kind::PollAtLeast && value > command.value)) {
      return {};
    }
    if (sc_core::sc_time_stamp() >= give_up) {
      return where("poll", command) + ": register at " + hex(command.address) + " still reads " +
             std::to_string(value) + ", not " +
             (command.kind == HostCommand::Kind::PollAtLeast ? "at least " : "") +
             std::to_string(command.value) + ", after " + std::to_string(command.timeout_ns) +
             " ns";
    }
    wait(sc_core::sc_time(static_cast<double>(command.interval_ns), sc_core::SC_NS));
  }
}

std::string Host::wait_kernel(const HostCommand& command) {
  const int queue = static_cast<int>(command.value);
  const std::string at = " [dispatcher at " + hex(command.address) +
                         (queue > 0 ? ", queue " + std::to_string(queue) : std::string()) + "]";
  if (queue >= dispatcher::kQueues) {
    return where("launch", command) + ": no queue " + std::to_string(queue) +
           " (the dispatcher has " + std::to_string(dispatcher::kQueues) + ")";
  }
  const auto reg = [&](std::uint64_t field) {
    return command.address + dispatcher::queue_register(queue, field);
  };
  wait_for_irq(queue, true);
  std::uint32_t status = 0;
  if (access(false, reg(dispatcher::kQueueStatus), status) != tlm::TLM_OK_RESPONSE) {
    return where("launch", command) + ": reading the dispatcher's STATUS failed" + at;
  }
  std::string failure;
  if (status == dispatcher::kFailed) {
    failure = launch_failure(command) + at;
  } else if (status != dispatcher::kDone) {
    return where("launch", command) + ": interrupt with STATUS " + std::to_string(status) +
           " (expected done)" + at;
  }
  std::uint32_t ack = 1;
  if (access(true, reg(dispatcher::kQueueIrqAck), ack) != tlm::TLM_OK_RESPONSE) {
    return failure.empty() ? where("launch", command) + ": IRQ_ACK write failed" + at : failure;
  }
  // The line drops once the dispatcher saw the acknowledgement; the next WaitKernel must not see
  // this interrupt again.
  wait_for_irq(queue, false);
  return failure;
}

std::string Host::launch_failure(const HostCommand& command) {
  const auto reg = [&](std::uint64_t field) {
    return command.address + dispatcher::queue_register(static_cast<int>(command.value), field);
  };
  std::uint32_t error = 0;
  access(false, reg(dispatcher::kQueueError), error);
  const bool fault = error == dispatcher::kMemoryFault;
  std::string failure = where("launch", command) +
                        (fault ? ": the kernel failed: " : ": dispatcher rejected the kernel: ") +
                        dispatcher::launch_error_name(error) + " (error " + std::to_string(error) +
                        ")";
  if (fault) {
    std::uint32_t lo = 0, hi = 0;
    access(false, reg(dispatcher::kQueueFaultLow), lo);
    access(false, reg(dispatcher::kQueueFaultHigh), hi);
    failure += " at " + hex((static_cast<std::uint64_t>(hi) << 32) | lo);
  }
  return failure;
}

void Host::wait_for_irq(int queue, bool level) {
  while (irq[queue].read() != level) wait(irq[queue].value_changed_event());
}

std::string Host::meet_barrier(const HostCommand& command) {
  if (barrier.size() == 0) {
    return where("barrier", command) + ": no barrier is bound to this host (barrier " +
           std::to_string(command.value) + ")";
  }
  barrier->arrive_and_wait(command.value);
  return {};
}

std::string Host::describe_pending() const {
  if (done_ || failed()) return {};
  const std::size_t command = finish_times_.size();
  std::string what = std::string(name()) + " waits in command " + std::to_string(command) + " of " +
                     std::to_string(program_.commands.size());
  if (command < program_.commands.size() && !program_.commands[command].note.empty()) {
    what += " (" + program_.commands[command].note + ")";
  }
  return what;
}

}  // namespace t3
