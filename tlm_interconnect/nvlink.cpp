#include "tlm_interconnect/nvlink.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

#include "tlm_interconnect/payload.h"

// Timing model (loosely timed, no wait()): each direction is a reservation calendar. A packet of
// w wire bytes holds the serialiser for w / bandwidth, arrives `latency` after its last bit left,
// and holds one receive-buffer credit until `latency` after that (the receiver drains into its
// router on arrival; the credit travels back). A packet starts at the earliest time >= its ready
// time when the wire is idle for it and a credit is free for its whole round trip without
// starving a packet already reserved. Idle stretches left before the frontier (typically by an
// ack or read response reserved ahead in time) are filled by packets ready earlier, whatever the
// order of the calls, so the two directions of a full-duplex link stay independent.
//
// Serialised packets never overlap, so in time order both their starts and their credit returns
// rise: the packets in flight at any instant are a contiguous run of the timeline, and the credit
// a packet needs is the one freed by the packet `credits` places before it in time order. Packets
// whose credit is back by "now" are forgotten, so the cost per packet stays O(log n) in the
// packets reserved ahead of the current time.

namespace t3 {

using sc_core::SC_NS;
using sc_core::sc_time;

namespace {

void require(bool ok, const std::string& path, const std::string& what) {
  if (!ok) throw ConfigError(path + ": " + what);
}

const char* direction_name(int direction) {
  return direction == 0 ? "a_to_b" : "b_to_a";
}

}  // namespace

NvLink::NvLink(sc_core::sc_module_name name, const LinkConfig& config, bool folded)
    : sc_core::sc_module(name),
      from_a("from_a"),
      from_b("from_b"),
      to_a("to_a"),
      to_b("to_b"),
      config_(config),
      folded_(folded) {
  require(config.bandwidth_GBps > 0, "link.bandwidth_GBps", "must be positive");
  require(config.latency_ns >= 0, "link.latency_ns", "must not be negative");
  require(config.max_payload_bytes >= 1, "link.max_payload_bytes", "must be at least 1");
  require(config.header_bytes >= 0, "link.header_bytes", "must not be negative");
  require(config.credits >= 1, "link.credits", "must be at least 1");

  credits_ = static_cast<std::size_t>(config.credits);
  latency_ = sc_time(config.latency_ns, SC_NS);
  round_trip_extra_ = 2 * latency_;
  full_packet_time_ =
      wire_time(static_cast<std::uint64_t>(config.max_payload_bytes + config.header_bytes));
  header_packet_time_ = wire_time(static_cast<std::uint64_t>(config.header_bytes));
  min_gap_ = std::max(header_packet_time_, sc_time(1, sc_core::SC_PS));

  from_a.register_b_transport(this, &NvLink::b_transport_from_a);
  from_b.register_b_transport(this, &NvLink::b_transport_from_b);
  from_a.register_transport_dbg(this, &NvLink::dbg_from_a);
  from_b.register_transport_dbg(this, &NvLink::dbg_from_b);
  from_a.register_get_direct_mem_ptr(this, &NvLink::get_direct_mem_ptr);
  from_b.register_get_direct_mem_ptr(this, &NvLink::get_direct_mem_ptr);
}

const LinkDirectionStats& NvLink::stats(int direction) const {
  if (direction != 0 && direction != 1) {
    throw std::out_of_range("NvLink::stats: direction must be 0 or 1");
  }
  // Packets that start after "now" may still get company before them; count them as they stand.
  const Direction& dir = directions_[direction];
  dir.shown = dir.stats;
  std::size_t low = dir.settled_low;
  for (std::size_t k = dir.settled; k < dir.timeline.size(); ++k) {
    const sc_time start = dir.timeline[k].start;
    while (low < k && dir.timeline[low].credit_return <= start) ++low;
    dir.shown.max_packets_in_flight =
        std::max<std::uint64_t>(dir.shown.max_packets_in_flight, k - low + 1);
  }
  return dir.shown;
}

void NvLink::record_packets(bool on) {
  record_ = on;
}

const std::vector<PacketRecord>& NvLink::packets(int direction) const {
  if (direction != 0 && direction != 1) {
    throw std::out_of_range("NvLink::packets: direction must be 0 or 1");
  }
  return directions_[direction].records;
}

void NvLink::observe_wire(WireObserver observer) {
  wire_observers_.push_back(std::move(observer));
}

sc_time NvLink::wire_time(std::uint64_t wire_bytes) const {
  // bytes / (GB/s) is nanoseconds.
  return sc_time(static_cast<double>(wire_bytes) / config_.bandwidth_GBps, SC_NS);
}

// At most this many idle stretches are tried for one packet before it queues at the frontier; it
// bounds the cost per packet when many small gaps precede the ready time.
constexpr int kMaxGapScan = 4096;

void NvLink::advance(Direction& dir, const sc_time& now) {
  auto& timeline = dir.timeline;
  // Nothing can be reserved before `now` any more, so the in-flight count at the start of every
  // packet that started by now is final.
  while (dir.settled < timeline.size() && timeline[dir.settled].start <= now) {
    const sc_time start = timeline[dir.settled].start;
    while (dir.settled_low < dir.settled && timeline[dir.settled_low].credit_return <= start) {
      ++dir.settled_low;
    }
    dir.stats.max_packets_in_flight =
        std::max<std::uint64_t>(dir.stats.max_packets_in_flight, dir.settled - dir.settled_low + 1);
    ++dir.settled;
  }
  // A settled packet whose credit is back can neither delay nor count against a later one.
  while (dir.settled > 0 && timeline.front().credit_return <= now) {
    timeline.pop_front();
    --dir.settled;
    if (dir.settled_low > 0) --dir.settled_low;
  }
  while (!dir.gaps.empty() && dir.gaps.front().end <= now) dir.gaps.pop_front();
}

bool NvLink::fits_in_gap(const Direction& dir, std::deque<Gap>::iterator gap, const sc_time& ready,
                         const sc_time& duration, sc_time& start, std::size_t& rank) const {
  const auto& timeline = dir.timeline;
  start = std::max(ready, gap->start);
  if (start + duration > gap->end) return false;
  // Its place in time order: no packet starts inside the gap, so this holds for any start in it.
  rank = static_cast<std::size_t>(
      std::partition_point(timeline.begin(), timeline.end(),
                           [&](const Packet& packet) { return packet.start < start; }) -
      timeline.begin());
  // Its credit: the one freed by the packet `credits` places earlier in time order.
  if (rank >= credits_) {
    start = std::max(start, timeline[rank - credits_].credit_return);
    if (start + duration > gap->end) return false;
  }
  // It must not take a credit that a packet already reserved after it relies on: every packet
  // starting while this one holds its credit must have had one to spare.
  const sc_time credit_return = start + duration + round_trip_extra_;
  const auto begin = timeline.begin();
  const auto low = static_cast<std::size_t>(
      std::partition_point(begin, begin + rank,
                           [&](const Packet& packet) { return packet.credit_return <= start; }) -
      begin);
  const auto after = static_cast<std::size_t>(
      std::partition_point(begin + rank, timeline.end(),
                           [&](const Packet& packet) { return packet.start < credit_return; }) -
      begin);
  if ((rank - low) + (after - rank) + 1 <= credits_) return true;  // cannot reach the limit
  std::size_t first_in_flight = low;
  for (std::size_t k = rank; k < after; ++k) {
    const sc_time at = timeline[k].start;
    while (first_in_flight < k && timeline[first_in_flight].credit_return <= at) {
      ++first_in_flight;
    }
    if (k - first_in_flight + 1 >= credits_) return false;
  }
  return true;
}

sc_time NvLink::place(Direction& dir, const sc_time& ready, const sc_time& duration) {
  // Idle stretches left before the frontier (by packets reserved for a later time, such as a
  // response) are used by packets ready earlier, whatever the order of the calls.
  if (ready < dir.frontier) {
    auto gap = std::partition_point(dir.gaps.begin(), dir.gaps.end(),
                                    [&](const Gap& candidate) { return candidate.end <= ready; });
    for (int scanned = 0; gap != dir.gaps.end() && scanned < kMaxGapScan; ++gap, ++scanned) {
      sc_time start;
      std::size_t rank = 0;
      if (!fits_in_gap(dir, gap, ready, duration, start, rank)) continue;
      dir.timeline.insert(dir.timeline.begin() + static_cast<std::ptrdiff_t>(rank),
                          Packet{start, start + duration + round_trip_extra_});
      const Gap whole = *gap;
      const sc_time end = start + duration;
      const bool left = start - whole.start >= min_gap_;
      const bool right = whole.end - end >= min_gap_;
      if (left && right) {
        gap->end = start;
        dir.gaps.insert(gap + 1, Gap{end, whole.end});
      } else if (left) {
        gap->end = start;
      } else if (right) {
        gap->start = end;
      } else {
        dir.gaps.erase(gap);
      }
      return start;
    }
  }
  // At the frontier: after the wire is free and the credit of the packet `credits` back returned.
  const std::size_t rank = dir.timeline.size();
  sc_time start = std::max(ready, dir.frontier);
  if (rank >= credits_) start = std::max(start, dir.timeline[rank - credits_].credit_return);
  if (start > dir.frontier && start - dir.frontier >= min_gap_) {
    dir.gaps.push_back(Gap{dir.frontier, start});
  }
  dir.timeline.push_back(Packet{start, start + duration + round_trip_extra_});
  dir.frontier = start + duration;
  return start;
}

sc_time NvLink::send(int direction, const sc_time& ready, std::uint64_t data_bytes) {
  Direction& dir = lane(direction);
  LinkDirectionStats& stats = dir.stats;
  const auto max_payload = static_cast<std::uint64_t>(config_.max_payload_bytes);
  const auto header = static_cast<std::uint64_t>(config_.header_bytes);
  const std::uint64_t count = data_bytes == 0 ? 1 : (data_bytes + max_payload - 1) / max_payload;

  sc_time next_ready = ready;  // a transaction's packets leave in order
  sc_time arrival;
  std::uint64_t remaining = data_bytes;
  for (std::uint64_t k = 0; k < count; ++k) {
    const std::uint64_t payload = std::min(remaining, max_payload);
    remaining -= payload;
    const std::uint64_t wire = payload + header;
    const sc_time duration = payload == max_payload ? full_packet_time_
                             : payload == 0         ? header_packet_time_
                                                    : wire_time(wire);
    const sc_time start = place(dir, next_ready, duration);
    next_ready = start + duration;
    arrival = next_ready + latency_;  // the receiver drains into its router on arrival

    ++stats.packets;
    stats.payload_bytes += payload;
    stats.wire_bytes += wire;
    stats.busy_ns += duration.to_seconds() * 1e9;
    if (record_) {
      dir.records.push_back(PacketRecord{start, arrival, static_cast<std::uint32_t>(wire)});
    }
    for (const WireObserver& observer : wire_observers_) {
      observer(direction, start, next_ready, wire);
    }
  }
  return arrival;
}

void NvLink::transport(int direction, tlm::tlm_generic_payload& payload, sc_time& delay) {
  // What crosses each way: writes and updates carry their data forward and an ack back; a read
  // sends a header-only request and its data comes back.
  const bool ignore = payload.get_command() == tlm::TLM_IGNORE_COMMAND &&
                      payload.get_extension<T3Extension>() == nullptr;
  const bool read = !ignore && T3Extension::get(payload).op == Op::Read;
  const std::uint64_t length = ignore ? 0 : payload.get_data_length();

  const sc_time entry = sc_core::sc_time_stamp();
  advance(directions_[0], entry);
  advance(directions_[1], entry);
  ++lane(direction).stats.transactions;
  const sc_time request_arrival = send(direction, entry + delay, read ? 0 : length);
  delay = request_arrival - entry;

  // Until the receiver answers, the request is in its hands: what describe_pending reports.
  Direction& dir = directions_[direction];
  const std::uint64_t max_payload = static_cast<std::uint64_t>(config_.max_payload_bytes);
  const std::uint64_t sent = read || length == 0 ? 1 : (length + max_payload - 1) / max_payload;
  ++dir.undrained;
  dir.undrained_packets += sent;
  auto& target = direction == 0 ? to_b : to_a;
  target->b_transport(payload, delay);
  --dir.undrained;
  dir.undrained_packets -= sent;

  // The target may have waited; its response is ready at the (new) local time plus its delay.
  const sc_time now = sc_core::sc_time_stamp();
  advance(directions_[0], now);
  advance(directions_[1], now);
  const bool data_back = read && payload.is_response_ok();
  const sc_time response_arrival = send(1 - direction, now + delay, data_back ? length : 0);
  delay = response_arrival - now;
}

void NvLink::b_transport_from_a(tlm::tlm_generic_payload& payload, sc_time& delay) {
  transport(0, payload, delay);
}

void NvLink::b_transport_from_b(tlm::tlm_generic_payload& payload, sc_time& delay) {
  transport(1, payload, delay);
}

unsigned NvLink::dbg_from_a(tlm::tlm_generic_payload& payload) {
  return to_b->transport_dbg(payload);
}

unsigned NvLink::dbg_from_b(tlm::tlm_generic_payload& payload) {
  return to_a->transport_dbg(payload);
}

bool NvLink::get_direct_mem_ptr(tlm::tlm_generic_payload& /*payload*/, tlm::tlm_dmi& dmi) {
  // A pointer across the link would bypass its timing: never granted, for any address.
  dmi.allow_none();
  dmi.set_start_address(0);
  dmi.set_end_address(~0ull);
  return false;
}

std::string NvLink::describe_pending() const {
  std::string what;
  for (int d = 0; d < 2; ++d) {
    const Direction& dir = directions_[d];
    if (dir.undrained == 0) continue;
    what += (what.empty() ? "" : "; ") + std::string(name()) + " " + direction_name(d) + ": " +
            std::to_string(dir.undrained) + " transactions (" +
            std::to_string(dir.undrained_packets) +
            " packets) delivered and not drained by the receiver, " +
            std::to_string(std::min<std::uint64_t>(dir.undrained_packets, credits_)) + " of " +
            std::to_string(credits_) + " credits";
  }
  return what;
}

nlohmann::json NvLink::report() const {
  sc_time elapsed = sc_core::sc_time_stamp();
  for (const auto& dir : directions_) elapsed = std::max(elapsed, dir.frontier);
  const double elapsed_ns = elapsed.to_seconds() * 1e9;

  nlohmann::json directions = nlohmann::json::array();
  for (int d = 0; d < 2; ++d) {
    const LinkDirectionStats& s = stats(d);
    directions.push_back(
        {{"direction", direction_name(d)},
         {"transactions", s.transactions},
         {"packets", s.packets},
         {"payload_bytes", s.payload_bytes},
         {"wire_bytes", s.wire_bytes},
         {"busy_ns", s.busy_ns},
         {"utilisation", elapsed_ns > 0 ? s.busy_ns / elapsed_ns : 0.0},
         {"efficiency",
          s.wire_bytes > 0 ? static_cast<double>(s.payload_bytes) / s.wire_bytes : 0.0},
         {"max_packets_in_flight", s.max_packets_in_flight}});
  }
  return {{"name", name()},
          {"elapsed_ns", elapsed_ns},
          {"bandwidth_GBps", config_.bandwidth_GBps},
          {"latency_ns", config_.latency_ns},
          {"max_payload_bytes", config_.max_payload_bytes},
          {"header_bytes", config_.header_bytes},
          {"credits", config_.credits},
          {"directions", directions}};
}

}  // namespace t3
