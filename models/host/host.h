// The host (driver) of one GPU: executes a Program (protocol/program.h) command by command
// through MMIO, waits for its dispatcher's interrupt, and meets the other hosts at barriers.
// The first failure stops it with a message naming the GPU, the command's note and the address.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <tlm_utils/simple_initiator_socket.h>
#include <systemc>
#include <tlm>

#include "models/host/barrier.h"
#include "protocol/program.h"
#include "tlm_interconnect/payload.h"

namespace t3 {

class Host : public sc_core::sc_module {
 public:
  tlm_utils::simple_initiator_socket<Host> socket;  // MMIO, through the GPU's router
  sc_core::sc_vector<sc_core::sc_in<bool>> irq;     // from the GPU's dispatcher, one per queue
  // The group's barrier; may stay unbound if the program has no Barrier command.
  sc_core::sc_port<BarrierIf, 1, sc_core::SC_ZERO_OR_MORE_BOUND> barrier;

  sc_core::sc_event finished;  // notified when the program ended (done or failed)

  Host(sc_core::sc_module_name name, int gpu);

  // The program to run from time 0; call before sc_start.
  void load(const Program& program);

  int gpu() const { return gpu_; }
  bool done() const { return done_; }  // every command completed
  bool failed() const { return !error_.empty(); }
  const std::string& error() const { return error_; }
  // Completion time of each command executed so far (index = command index).
  const std::vector<sc_core::sc_time>& finish_times() const { return finish_times_; }
  // The command it is still in, e.g. "group.host1 waits in command 7 of 12 (barrier: end of
  // gemm)"; empty once its program ended (done or failed).
  std::string describe_pending() const;

 private:
  void run();
  // One 32-bit MMIO access; returns the response and waits out the annotated delay.
  tlm::tlm_response_status access(bool write, std::uint64_t address, std::uint32_t& value);
  // Each returns an error message, empty on success.
  std::string execute(const HostCommand& command);
  std::string write_register(const HostCommand& command);
  std::string expect_register(const HostCommand& command);
  std::string poll_register(const HostCommand& command);
  std::string wait_kernel(const HostCommand& command);
  std::string meet_barrier(const HostCommand& command);
  // Why the dispatcher failed the launch: its ERROR, and the address of a memory fault.
  std::string launch_failure(const HostCommand& command);
  void wait_for_irq(int queue, bool level);  // until the queue's interrupt line is at `level`
  std::string where(const char* what, const HostCommand& command) const;

  int gpu_;
  Program program_;
  PayloadPool pool_;
  bool done_ = false;
  std::string error_;
  std::vector<sc_core::sc_time> finish_times_;
};

}  // namespace t3
