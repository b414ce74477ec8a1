// A memory access the L2 has in flight (a Transit), and the pools that recycle the L2's
// per-access objects so the steady state allocates nothing. Internal to models/l2.
#pragma once

#include <cstdint>
#include <vector>

#include <systemc>
#include <tlm>

namespace t3::l2 {

struct Transit {
  enum class Kind : std::uint8_t { Fill, Writeback, Direct, Bypass };

  sc_core::sc_event done;  // notified when the memory access is complete and the locks dropped
  Kind kind = Kind::Fill;
  bool write = false;                // direct accesses: towards memory
  std::uint64_t begin = 0, end = 0;  // window offsets
  sc_core::sc_time ready;            // completion of its memory access
  int waiters = 0;                   // accesses waiting on `done`; they read `ready` when they wake
  bool retired = false;              // finished; back to the pool once the last waiter has woken
  std::vector<unsigned char> buffer;  // functional: write-back data, fill staging
  tlm::tlm_generic_payload payload;   // the memory request, reused
};

}  // namespace t3::l2
