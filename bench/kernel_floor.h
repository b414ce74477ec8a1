// The SystemC kernel's floor, measured in the benchmark's own process and simulation: an
// initiator calling a trivial target (a) under a quantum keeper with no wait ("decoupled") and
// (b) with one wait per transaction ("synchronised"). It runs first, at time zero, and finishes
// long before `done_by`, so the phases that follow can start at done_by and run alone.
#pragma once

#include <chrono>
#include <cstdint>

#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>
#include <tlm_utils/tlm_quantumkeeper.h>
#include <systemc>
#include <tlm>

namespace t3::bench {

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

class KernelFloor : public sc_core::sc_module {
 public:
  static constexpr double kNsPerTransaction = 1.0;

  KernelFloor(sc_core::sc_module_name name, std::uint64_t transactions)
      : sc_module(name), socket_("socket"), target_("target"), count_(transactions) {
    socket_.bind(target_);
    target_.register_b_transport(this, &KernelFloor::b_transport);
    SC_HAS_PROCESS(KernelFloor);
    SC_THREAD(run);
  }

  // Simulated time the floors take; start other work after this.
  sc_core::sc_time done_by() const {
    return sc_core::sc_time(4 * kNsPerTransaction * static_cast<double>(count_), sc_core::SC_NS);
  }
  double decoupled_rate() const { return static_cast<double>(count_) / decoupled_s_; }
  double synchronised_rate() const { return static_cast<double>(count_) / synchronised_s_; }

 private:
  void b_transport(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay) {
    delay += sc_core::sc_time(kNsPerTransaction, sc_core::SC_NS);
    if (synchronise_) {
      wait(delay);
      delay = sc_core::SC_ZERO_TIME;
    }
    payload.set_response_status(tlm::TLM_OK_RESPONSE);
  }

  double loop(bool synchronise) {
    synchronise_ = synchronise;
    tlm_utils::tlm_quantumkeeper keeper;
    keeper.reset();
    tlm::tlm_generic_payload payload;
    unsigned char data[64] = {};
    payload.set_data_ptr(data);
    payload.set_data_length(64);
    payload.set_command(tlm::TLM_READ_COMMAND);
    const auto start = Clock::now();
    for (std::uint64_t i = 0; i < count_; ++i) {
      sc_core::sc_time delay = keeper.get_local_time();
      socket_->b_transport(payload, delay);
      keeper.set(delay);
      if (keeper.need_sync()) keeper.sync();
    }
    keeper.sync();
    return seconds_since(start);
  }

  void run() {
    decoupled_s_ = loop(false);
    synchronised_s_ = loop(true);
  }

  tlm_utils::simple_initiator_socket<KernelFloor> socket_;
  tlm_utils::simple_target_socket<KernelFloor> target_;
  std::uint64_t count_;
  bool synchronise_ = false;
  double decoupled_s_ = 0;
  double synchronised_s_ = 0;
};

}  // namespace t3::bench
