// Records the HBM traffic one GPU's memory controller receives as an STL trace
// (harness/stl_trace.h): one line per interleave granule an access touches, in the order the
// accesses reach the controller, timestamped in ns (play it back with --clock-MHz 1000). Write and
// update lines carry their data in functional mode; updates use our `update` extension.
#pragma once

#include <cstdint>
#include <fstream>
#include <memory>
#include <string>

#include "config/system_config.h"
#include "tlm_interconnect/memory_tap.h"

namespace t3 {

class TraceRecorder {
 public:
  // Observes GPU `gpu` of every system built while this lives (MemoryTap::Request), cutting
  // accesses at `config`'s interleave granules; lines without a "(length)" token are one burst of
  // the bank model (hbm.bank.bus_bits x burst_length). In functional mode (payloads carry data)
  // write and update lines carry their bytes. Throws std::runtime_error if `path` cannot be
  // written, ConfigError for a GPU the system does not have.
  TraceRecorder(const std::string& path, int gpu, const SystemConfig& config);
  ~TraceRecorder();
  TraceRecorder(const TraceRecorder&) = delete;
  TraceRecorder& operator=(const TraceRecorder&) = delete;

  std::uint64_t lines() const { return lines_; }
  // Flushes and closes the file; throws std::runtime_error if writing failed.
  void close();

 private:
  void record(const TappedAccess& access);

  std::string path_;
  std::ofstream out_;
  std::uint32_t granule_;
  std::uint32_t default_length_;
  bool with_data_;
  std::uint64_t lines_ = 0;
  std::uint64_t last_time_ = 0;
  std::unique_ptr<MemoryTap::Request> request_;
};

}  // namespace t3
