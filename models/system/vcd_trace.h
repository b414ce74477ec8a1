// A VCD waveform of a run's key signals (GTKWave, Surfer): per GPU the memory-controller queue
// entries by traffic class summed over its channels (gpuN_hbm_queue_compute,
// gpuN_hbm_queue_communication), and per link direction a bit that is high while a packet holds
// the wire (linkL_gpuA_to_gpuB_busy; the switch is "switch"). For cycle-level questions about one
// window of a run; the Chrome-trace Timeline is the overview.
#pragma once

#include <array>
#include <map>
#include <string>
#include <vector>

#include <systemc>

namespace t3 {

class TpGroup;

class VcdTrace : public sc_core::sc_module {
 public:
  // Opens `path` (".vcd" is appended unless it ends so) and registers observers on the group's
  // memory controllers and links: create after the group and before sc_start; the file is
  // complete when this is destroyed.
  VcdTrace(sc_core::sc_module_name name, TpGroup& group, const std::string& path);
  ~VcdTrace() override;
  VcdTrace(const VcdTrace&) = delete;
  VcdTrace& operator=(const VcdTrace&) = delete;

 private:
  // One link direction: wire edges reserved ahead of time (+1 a packet starts, -1 it ends).
  struct Direction {
    std::map<sc_core::sc_time, int> edges;
    int active = 0;
    bool busy = false;  // traced
  };
  struct Queue {
    std::vector<std::array<int, 2>> channels;
    int compute = 0;        // traced
    int communication = 0;  // traced
  };

  void update_links();  // SC_METHOD: applies the edges that are due, wakes for the next one

  sc_core::sc_trace_file* file_ = nullptr;
  std::vector<Queue> queues_;          // per GPU
  std::vector<Direction> directions_;  // link * 2 + direction
  sc_core::sc_event wake_;
};

}  // namespace t3
