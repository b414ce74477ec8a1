// A run's timeline in Chrome trace-event JSON (ui.perfetto.dev and chrome://tracing open it).
// One process per GPU (pid = GPU index, "gpu N") with these tracks, top to bottom:
//   "SMs a-b"      one complete event per workgroup, dispatch to completion, SMs grouped so a GPU
//                  shows about ten groups; overlapping workgroups of a group go on extra lanes
//                  ("SMs a-b #2", ...), since events of one track must nest
//   "dma"          one complete event per DMA transfer (start to last acknowledgement), lanes
//   "link a->b"    wire busy spans of each link direction this GPU sends on, back-to-back packets
//                  merged into one span
//   "tracker"      an instant event per tracker fire
//   "hbm queue"    counter: memory-controller queue entries by traffic class, over all channels
// A switch (if any) is one more process holding the links it sends on, and phases added with
// add_phase() are a last process "tp group" with a "phases" track.
// Records are read from the blocks after the run; only the queue counter and the link spans are
// observed while it runs. Same run, same bytes: nothing depends on the wall clock or on hashing.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <systemc>

namespace t3 {

class TpGroup;

class Timeline {
 public:
  // Registers observers on the group's memory controllers and links: construct after the group
  // and before sc_start, and keep it alive while the simulation runs. The queue counter keeps one
  // sample per `counter_interval` of simulated time at most (the value each such stretch ended
  // with), plus the exact start and end of every idle stretch at least that long, so its size
  // follows the simulated time, not the traffic.
  explicit Timeline(TpGroup& group,
                    sc_core::sc_time counter_interval = sc_core::sc_time(250, sc_core::SC_NS));
  Timeline(const Timeline&) = delete;  // the observers hold `this`
  Timeline& operator=(const Timeline&) = delete;

  // A whole-group span on the "phases" track (e.g. "gemm", "reduce-scatter").
  void add_phase(const std::string& name, sc_core::sc_time start, sc_core::sc_time end);

  // After the run: {"displayTimeUnit":"ns","traceEvents":[...],"otherData":{...}}, times in us.
  nlohmann::json chrome_trace() const;
  // chrome_trace() with one event per line; throws std::runtime_error naming `path` on failure.
  void write(const std::string& path) const;

 private:
  struct Span {
    sc_core::sc_time start;
    sc_core::sc_time end;
    std::uint64_t bytes = 0;
    std::uint64_t packets = 0;
  };
  struct Sample {
    sc_core::sc_time time;
    std::array<int, 2> value;  // compute, communication
  };
  // One GPU's queue occupancy summed over its channels, thinned as it changes.
  struct QueueCounter {
    std::vector<std::array<int, 2>> channels;
    std::array<int, 2> total{};
    std::vector<Sample> samples{Sample{sc_core::SC_ZERO_TIME, {0, 0}}};
    bool has_pending = false;
    Sample pending{};  // the latest change not yet shown
    sc_core::sc_time idle_since;

    void change(sc_core::sc_time time, int channel, int compute, int communication,
                sc_core::sc_time interval);
    void emit(const Sample& sample);
  };
  struct Phase {
    std::string name;
    sc_core::sc_time start;
    sc_core::sc_time end;
  };
  // One direction of a built link: what `from` sends to `to` (node numbers).
  struct Send {
    int link;
    int direction;
    int from;
    int to;
  };
  class Builder;

  std::vector<Send> sends(int node) const;

  void add_workgroups(Builder& out, int gpu) const;
  void add_dma(Builder& out, int gpu) const;
  void add_links(Builder& out, int node) const;
  void add_tracker(Builder& out, int gpu) const;
  void add_queue(Builder& out, int gpu) const;
  void add_phases(Builder& out) const;
  std::string node_name(int node) const;
  int node_pid(int node) const;

  TpGroup& group_;
  sc_core::sc_time counter_interval_;
  std::vector<QueueCounter> queues_;                    // per GPU
  std::vector<std::array<std::vector<Span>, 2>> wire_;  // per link, per direction
  std::vector<Phase> phases_;
};

}  // namespace t3
