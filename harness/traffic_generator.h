// A reusable initiator that streams accesses into any socket (bind it to a GPU's router.in):
// patterns run one after another, each with several concurrent streams.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <tlm_utils/simple_initiator_socket.h>
#include <systemc>
#include <tlm>

#include "tlm_interconnect/payload.h"

namespace t3 {

struct TrafficPattern {
  std::uint64_t address = 0;  // first byte
  std::uint64_t bytes = 0;    // total, cut into transactions
  std::uint32_t transaction_bytes = 4096;
  T3Extension extension;  // op, element type, traffic class, tag, ...
  int streams = 1;        // transactions in flight at once
  // Functional mode: fills write/update data of the transaction at `address` (else zeros).
  std::function<void(std::uint64_t address, unsigned char* data, std::size_t bytes)> fill;
  // Optional: the address and op of the transaction at `offset` (its place in the pattern's
  // bytes); by default address + offset and extension.op. Random and mixed traffic set these.
  std::function<std::uint64_t(std::uint64_t offset)> address_of;
  std::function<Op(std::uint64_t offset)> op_of;
};

struct TrafficResult {
  std::uint64_t transactions = 0;
  std::uint64_t bytes = 0;
  sc_core::sc_time start;  // first issue
  sc_core::sc_time end;    // last completion
  sc_core::sc_time max_latency;
  sc_core::sc_time total_latency;
  std::vector<std::string> errors;  // one per failed transaction, naming its address (bounded)

  double bandwidth_GBps() const;  // bytes / (end - start)
  sc_core::sc_time mean_latency() const;
};

class TrafficGenerator : public sc_core::sc_module {
 public:
  tlm_utils::simple_initiator_socket<TrafficGenerator> socket;

  TrafficGenerator(sc_core::sc_module_name name, Origin origin);

  // Before sc_start: queue a pattern. Optionally start it no earlier than `not_before`.
  void add(const TrafficPattern& pattern, sc_core::sc_time not_before = sc_core::SC_ZERO_TIME);

  const std::vector<TrafficResult>& results() const { return results_; }
  bool done() const { return done_; }
  const sc_core::sc_event& started() const { return started_; }  // first pattern begins
  const sc_core::sc_event& finished() const { return finished_; }
  std::uint64_t transactions() const;

 private:
  void run();
  void stream(std::size_t pattern, std::uint64_t& next_offset, int& active,
              sc_core::sc_event& stream_done);

  Origin origin_;
  PayloadPool pool_;
  std::vector<TrafficPattern> patterns_;
  std::vector<sc_core::sc_time> not_before_;
  std::vector<TrafficResult> results_;
  bool done_ = false;
  sc_core::sc_event started_;
  sc_core::sc_event finished_;
};

}  // namespace t3
