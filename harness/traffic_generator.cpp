// sc_spawn: each pattern runs its streams as dynamic threads.
#define SC_INCLUDE_DYNAMIC_PROCESSES
#include "harness/traffic_generator.h"

#include <algorithm>
#include <cstring>

#include "protocol/hex.h"
#include "tlm_interconnect/address_map.h"

namespace t3 {

double TrafficResult::bandwidth_GBps() const {
  const double seconds = (end - start).to_seconds();
  return seconds > 0 ? static_cast<double>(bytes) / seconds / 1e9 : 0.0;
}

sc_core::sc_time TrafficResult::mean_latency() const {
  return transactions ? total_latency / static_cast<double>(transactions) : sc_core::SC_ZERO_TIME;
}

TrafficGenerator::TrafficGenerator(sc_core::sc_module_name name, Origin origin)
    : sc_module(name), socket("socket"), origin_(origin) {
  SC_HAS_PROCESS(TrafficGenerator);
  SC_THREAD(run);
}

void TrafficGenerator::add(const TrafficPattern& pattern, sc_core::sc_time not_before) {
  sc_assert(pattern.transaction_bytes > 0 && pattern.streams > 0);
  patterns_.push_back(pattern);
  not_before_.push_back(not_before);
}

std::uint64_t TrafficGenerator::transactions() const {
  std::uint64_t total = 0;
  for (const auto& result : results_) total += result.transactions;
  return total;
}

void TrafficGenerator::run() {
  results_.resize(patterns_.size());
  for (std::size_t p = 0; p < patterns_.size(); ++p) {
    if (sc_core::sc_time_stamp() < not_before_[p]) wait(not_before_[p] - sc_core::sc_time_stamp());
    results_[p].start = sc_core::sc_time_stamp();
    if (p == 0) started_.notify(sc_core::SC_ZERO_TIME);
    std::uint64_t next_offset = 0;
    int active = patterns_[p].streams;
    sc_core::sc_event all_done;
    for (int s = 0; s < patterns_[p].streams; ++s) {
      sc_core::sc_spawn([this, p, &next_offset, &active, &all_done] {
        stream(p, next_offset, active, all_done);
      });
    }
    wait(all_done);
  }
  done_ = true;
  finished_.notify(sc_core::SC_ZERO_TIME);
}

// Streams share one cursor, so whichever stream is free takes the next transaction.
void TrafficGenerator::stream(std::size_t p, std::uint64_t& next_offset, int& active,
                              sc_core::sc_event& stream_done) {
  const TrafficPattern& pattern = patterns_[p];
  TrafficResult& result = results_[p];
  T3Extension extension = pattern.extension;
  extension.origin = origin_;
  extension.unit_kind = UnitKind::TrafficGenerator;
  while (next_offset < pattern.bytes) {
    const std::uint64_t offset = next_offset;
    const auto bytes = static_cast<std::size_t>(
        std::min<std::uint64_t>(pattern.transaction_bytes, pattern.bytes - offset));
    next_offset += bytes;
    const std::uint64_t address =
        pattern.address_of ? pattern.address_of(offset) : pattern.address + offset;
    if (pattern.op_of) extension.op = pattern.op_of(offset);
    tlm::tlm_generic_payload* payload = make_payload(pool_, address, bytes, extension);
    if (extension.op != Op::Read) {
      if (pattern.fill) {
        pattern.fill(address, payload->get_data_ptr(), bytes);
      } else {
        std::memset(payload->get_data_ptr(), 0, bytes);
      }
    }
    const sc_core::sc_time issued = sc_core::sc_time_stamp();
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    socket->b_transport(*payload, delay);
    if (delay > sc_core::SC_ZERO_TIME) wait(delay);
    const sc_core::sc_time latency = sc_core::sc_time_stamp() - issued;
    if (payload->is_response_error()) {
      if (result.errors.size() < 64) {
        result.errors.push_back(std::string(name()) + ": " + to_string(extension.op) + " of " +
                                std::to_string(bytes) + " bytes at " + hex(address) + ": " +
                                payload->get_response_string());
      }
    } else {
      ++result.transactions;
      result.bytes += bytes;
    }
    result.max_latency = std::max(result.max_latency, latency);
    result.total_latency += latency;
    result.end = std::max(result.end, sc_core::sc_time_stamp());
    payload->release();
  }
  if (--active == 0) stream_done.notify(sc_core::SC_ZERO_TIME);
}

}  // namespace t3
