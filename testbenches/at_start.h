// Runs an action at the start of simulation, once every socket is bound and before time 0: how a
// testbench preloads memory or registers through debug transport.
#pragma once

#include <functional>
#include <utility>

#include <systemc>

namespace t3 {

class AtStart : public sc_core::sc_module {
 public:
  AtStart(sc_core::sc_module_name name, std::function<void()> action)
      : sc_module(name), action_(std::move(action)) {}
  void start_of_simulation() override { action_(); }

 private:
  std::function<void()> action_;
};

}  // namespace t3
