#include "harness/trace_recorder.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "harness/stl_trace.h"

namespace t3 {

TraceRecorder::TraceRecorder(const std::string& path, int gpu, const SystemConfig& config)
    : path_(path),
      out_(path),
      granule_(static_cast<std::uint32_t>(config.hbm.interleave_bytes)),
      default_length_(
          static_cast<std::uint32_t>(config.hbm.bank.bus_bits * config.hbm.bank.burst_length / 8)),
      with_data_(config.sim.mode == SimMode::Functional) {
  if (gpu < 0 || gpu >= config.gpus) {
    throw ConfigError("--gpu " + std::to_string(gpu) + ": the system has GPUs 0.." +
                      std::to_string(config.gpus - 1));
  }
  if (!out_) throw std::runtime_error(path + ": cannot write the trace");
  out_ << "# t3sim memory trace of GPU " << gpu
       << "'s memory controller: timestamps in ns (play with --clock-MHz 1000), addresses from "
          "the start of its HBM, default length "
       << default_length_ << " bytes; 'update' is t3sim's near-memory add of "
       << "the data's elements\n";
  request_ = std::make_unique<MemoryTap::Request>(
      gpu, [this](const TappedAccess& access) { record(access); });
}

TraceRecorder::~TraceRecorder() = default;

void TraceRecorder::record(const TappedAccess& access) {
  StlRecord line;
  // Arrivals reach the tap in order of their callers' calls, each annotated with its own delay,
  // so an arrival may precede the one recorded before it; the trace keeps the order of the tap and
  // never steps back in time.
  const auto ns = static_cast<std::uint64_t>(std::floor(access.at.to_seconds() * 1e9 + 1e-6));
  last_time_ = std::max(last_time_, ns);
  line.time = last_time_;
  line.command = access.op == Op::Read    ? StlCommand::Read
                 : access.op == Op::Write ? StlCommand::Write
                                          : StlCommand::Update;
  const std::uint64_t begin = access.offset;
  const std::uint64_t end = begin + access.bytes;
  for (std::uint64_t at = begin; at < end;) {
    const std::uint64_t next = std::min(end, (at / granule_ + 1) * granule_);
    line.address = at;
    line.length = static_cast<std::uint32_t>(next - at);
    line.data.clear();
    if (line.command != StlCommand::Read && with_data_ && access.data != nullptr) {
      const unsigned char* from = access.data + (at - begin);
      line.data.assign(from, from + line.length);
    }
    out_ << stl_line(line, line.length != default_length_);
    ++lines_;
    at = next;
  }
}

void TraceRecorder::close() {
  request_.reset();
  out_.close();
  if (!out_) throw std::runtime_error(path_ + ": writing the trace failed");
}

}  // namespace t3
