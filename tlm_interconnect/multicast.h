// In-switch reductions (NVLink SHARP on a third-generation NVSwitch; topology.switch_reductions):
// the switch's multicast groups and its adder. A multicast access (T3Extension::multicast, rules
// in docs/protocol.md, "Switch reductions") names a group and an offset in the HBM window: an
// ld_reduce (a Read) reads that offset in every member GPU, adds the members' copies element by
// element and answers the requester once; a multicast store (a Write) writes its data at that
// offset in every member. The member accesses leave the switch at the same time, each through
// the member's own port and link, so their link time and their memory time overlap.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <systemc>
#include <tlm>

#include "tlm_interconnect/address_map.h"
#include "tlm_interconnect/error_log.h"
#include "tlm_interconnect/payload.h"

namespace t3 {

struct MulticastStats {
  std::uint64_t ld_reduces = 0;       // ld_reduce reads answered
  std::uint64_t stores = 0;           // multicast stores delivered
  std::uint64_t member_accesses = 0;  // the accesses they fanned out to
  std::uint64_t reduced_bytes = 0;    // bytes answered by ld_reduce (one member's copy)
  std::uint64_t stored_bytes = 0;     // bytes written by multicast stores (one member's copy)
};

class SwitchReducer : public sc_core::sc_module {
 public:
  // Sends a member access towards GPU `gpu` (the switch's port to it), in the caller's thread.
  using Forward = std::function<void(int gpu, tlm::tlm_generic_payload&, sc_core::sc_time&)>;

  // `functional`: members' data is added (sim.mode = functional); timing mode carries none.
  SwitchReducer(sc_core::sc_module_name name, const AddressMap& map, bool functional,
                Forward forward);
  ~SwitchReducer() override;

  // A multicast group of the given GPUs (each once, inside the map); its number (from 1), which
  // accesses name in T3Extension::multicast. Throws std::invalid_argument for a bad member list.
  std::uint16_t add_group(const std::vector<int>& members);
  const std::vector<int>& members(std::uint16_t group) const;
  int groups() const { return static_cast<int>(groups_.size()); }

  // Serves one multicast access (in the requester's thread; it waits for the members).
  void serve(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay);

  const MulticastStats& stats() const { return stats_; }
  std::uint64_t error_count() const { return errors_.count(); }
  const std::vector<std::string>& errors() const { return errors_.messages(); }
  nlohmann::json report() const;

 private:
  // One member access of a multicast access, run by a worker thread.
  struct Job {
    int gpu = 0;
    tlm::tlm_generic_payload* payload = nullptr;
    sc_core::sc_time start;     // when it leaves the switch
    sc_core::sc_time finished;  // when its answer is back at the switch
    struct Fanout* fanout = nullptr;
  };
  struct Worker;
  // Runs `jobs` at once, one worker each, and waits until every one is back.
  void run_all(std::vector<Job>& jobs);
  void start(Job& job);
  void refuse(tlm::tlm_generic_payload& payload, const std::string& why);
  // The requester's data = the sum of the members' copies, in float, rounded once.
  void add_copies(tlm::tlm_generic_payload& payload, const std::vector<Job>& jobs,
                  ElementType element) const;

  AddressMap map_;
  bool functional_;
  Forward forward_;
  std::vector<std::vector<int>> groups_;
  PayloadPool pool_;
  std::deque<std::unique_ptr<Worker>> workers_;
  std::vector<Worker*> idle_;
  MulticastStats stats_;
  ErrorLog errors_;
};

}  // namespace t3
