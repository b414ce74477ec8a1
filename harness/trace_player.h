// Plays an STL trace (harness/stl_trace.h) into a socket: requests issue in trace order, each at
// its timestamp in the player's clock (or, saturating, as soon as one of the bounded in-flight
// slots is free), and the player measures each one's latency. In functional mode it also checks
// every read's data: against the read line's own data field if it has one, else against what the
// trace wrote before (a golden model of the memory).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include <tlm_utils/simple_initiator_socket.h>
#include <systemc>
#include <tlm>

#include <nlohmann/json.hpp>

#include "config/system_config.h"
#include "harness/stl_trace.h"
#include "tlm_interconnect/payload.h"

namespace t3 {

struct TracePlayerOptions {
  sc_core::sc_time period = sc_core::sc_time(1, sc_core::SC_NS);  // one trace time unit
  bool saturate = false;   // ignore timestamps: issue whenever a slot is free
  int outstanding = 64;    // requests in flight at most (slots)
  std::uint64_t base = 0;  // trace address 0 is this global address (the GPU's HBM window)
  CacheHint cache_hint = CacheHint::Cached;
  ElementType element = ElementType::Fp32;  // of update operands
  bool check_data = false;                  // functional mode: the golden check
};

struct TracePlayResult {
  std::uint64_t requests = 0;
  std::uint64_t bytes = 0;
  sc_core::sc_time start;          // first issue
  sc_core::sc_time end;            // last completion
  std::vector<double> latency_ns;  // issue to completion, per request in trace order
  std::uint64_t checked_reads = 0;
  std::vector<std::string> mismatches;  // golden-check failures, naming line and address (bounded)
  std::vector<std::string> errors;      // error responses, naming line and address (bounded)
  double bandwidth_GBps() const;
};

// Per-bank activity of a trace: the read and write bursts each bank receives, decoded with the
// bank model's address map (models/hbm/dram_bank.h) as the controller decodes them; an update is
// a read and a write of its bursts.
struct BankCounts {
  std::uint64_t reads = 0;
  std::uint64_t writes = 0;
  bool operator==(const BankCounts& other) const {
    return reads == other.reads && writes == other.writes;
  }
};
struct BankActivity {
  using Bank = std::tuple<int, int, int, int>;  // channel, pseudo-channel, bank group, bank
  std::map<Bank, BankCounts> banks;             // banks with any activity, in order
};
// Throws ConfigError (from the address map) for an HBM geometry that does not fit together.
BankActivity bank_activity(const std::vector<StlRecord>& records, const HbmConfig& hbm);
nlohmann::json to_json(const BankActivity& activity);

class TracePlayer : public sc_core::sc_module {
 public:
  tlm_utils::simple_initiator_socket<TracePlayer> socket;

  TracePlayer(sc_core::sc_module_name name, std::vector<StlRecord> records,
              const TracePlayerOptions& options);

  const TracePlayResult& result() const { return result_; }
  bool done() const { return done_; }

 private:
  struct InFlight {
    std::uint64_t begin, end;  // trace addresses
    bool writes;
    bool disturbed = false;  // a write overlapping this read completed while it was in flight
  };
  void run();
  void slot();
  void play(std::size_t index);
  void check_read(const StlRecord& record, const unsigned char* data, bool disturbed);
  void apply_to_golden(const StlRecord& record, const unsigned char* data);
  unsigned char* golden_byte(std::uint64_t address);

  std::vector<StlRecord> records_;
  TracePlayerOptions options_;
  PayloadPool pool_;
  TracePlayResult result_;
  std::size_t next_ = 0;
  int active_ = 0;
  bool done_ = false;
  sc_core::sc_event all_done_;
  std::map<std::size_t, InFlight> in_flight_;                   // by trace index
  std::map<std::uint64_t, std::vector<unsigned char>> golden_;  // 4 KiB pages, zero if absent
};

}  // namespace t3
