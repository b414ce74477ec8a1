// KeyTurns: threads that reach a shared resource at one instant go in the order of a fixed key,
// whatever order the simulation kernel runs them in.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#define SC_INCLUDE_DYNAMIC_PROCESSES
#include <systemc>

#include "tlm_interconnect/key_turns.h"

using namespace t3;

namespace {

// Threads, spawned in the order given, that each wake at `at` (plus `deltas` delta cycles), take
// a turn with their key and write their name down during it.
struct Contenders : sc_core::sc_module {
  struct Contender {
    std::string name;
    std::uint64_t requester;
    int deltas = 0;
  };

  Contenders(sc_core::sc_module_name name, const std::vector<Contender>& contenders)
      : sc_core::sc_module(name) {
    for (const Contender& c : contenders) {
      sc_core::sc_spawn([this, c] { contend(c); }, c.name.c_str());
    }
  }

  void contend(const Contender& c) {
    sc_core::wait(10, sc_core::SC_NS);
    for (int d = 0; d < c.deltas; ++d) sc_core::wait(sc_core::SC_ZERO_TIME);
    turns.take_turn({c.requester, 0});
    served.push_back(c.name);
    turns.end_turn();
  }

  KeyTurns turns;
  std::vector<std::string> served;
};

}  // namespace

TEST_CASE("KeyTurns: same-instant askers go in key order in either process order") {
  // The two groups spawn theirs in opposite orders, and the kernel runs threads woken at one time
  // in an order that follows their spawning: without the turns one group writes its names out of
  // key order (checked: the forward one, with take_turn and end_turn doing nothing).
  Contenders forward("forward", {{"sm1", 1}, {"sm2", 2}, {"sm3", 3}});
  Contenders backward("backward", {{"sm3", 3}, {"sm2", 2}, {"sm1", 1}});
  sc_core::sc_start();
  const std::vector<std::string> key_order{"sm1", "sm2", "sm3"};
  CHECK(forward.served == key_order);
  CHECK(backward.served == key_order);
  CHECK(sc_core::sc_time_stamp() == sc_core::sc_time(10, sc_core::SC_NS));  // no time passes
}

TEST_CASE("KeyTurns: an asker of a later delta cycle goes after the earlier ones") {
  // sm0 has the smallest key but asks one delta cycle later: the instant's first askers have
  // been gathered without it.
  Contenders late("late", {{"sm2", 2}, {"sm0", 0, 1}, {"sm1", 1}});
  sc_core::sc_start();
  CHECK(late.served == std::vector<std::string>{"sm1", "sm2", "sm0"});
}
