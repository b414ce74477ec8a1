#include "tlm_interconnect/nvlink.h"

#include <algorithm>
#include <iterator>
#include <stdexcept>
#include <string>
#include <utility>

#include "tlm_interconnect/payload.h"

// Timing model (loosely timed, no wait()): each direction carries two virtual channels, requests
// (with their data) and responses (acknowledgements, read data, flags), and each channel is a
// reservation calendar with its own credit loop. A packet of w wire bytes holds the serialiser for
// w / bandwidth, arrives `latency` after its last bit left, and holds one receive-buffer credit of
// its channel until `latency` after that (the receiver drains into its router on arrival; the
// credit travels back). A packet starts at the earliest time >= its ready time when its channel's
// wire is idle for it and a credit of its channel is free for its whole round trip without
// starving a packet already reserved. Idle stretches left before the frontier (typically by a
// packet reserved ahead in time) are filled by packets ready earlier, whatever the order of the
// calls, so the two directions of a full-duplex link stay independent.
//
// The serialiser serves responses first, per packet: a response waits for the request packet on
// the wire when it becomes ready, and for the responses ahead of it, never for request packets
// queued behind that one. The model books a request packet's time when its transaction is
// issued, and has already promised that time to the sender; a response that overtakes booked
// request packets therefore leaves their times as they are, and takes its wire time from the
// request channel's next bookings instead (the first idle stretch at or after it, or the end of
// what is booked). Over any stretch longer than what is booked ahead, the wire carries no more
// than its line rate; inside it, a response's few bytes overlap request packets already booked.
//
// Bookings made at one simulated time go in a fixed key order (KeyTurns), not in the order the
// threads call: a link's calendar gives the first booking the earlier wire time, and threads woken
// at one time run in the order of the simulation kernel's queue of timed events, which holds
// every GPU's events and leaves equal times in no fixed order. Two SMs' acknowledgements ready at
// one instant on one link would otherwise leave in an order of the kernel's choosing, different
// from GPU to GPU, and GPUs running the same program rotated would part there. The key counts the
// requester's GPU from the link's owner (set_turn_owner), so a rotated group keys alike.
//
// Within a channel, serialised packets never overlap, so in time order both their starts and their
// credit returns rise: the packets in flight at any instant are a contiguous run of the timeline,
// and the credit a packet needs is the one freed by the packet `credits` places before it in time
// order. Packets whose credit is back by "now" are forgotten, so the cost per packet stays
// O(log n) in the packets reserved ahead of the current time.

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

void check_direction(int direction, const char* what) {
  if (direction != 0 && direction != 1) {
    throw std::out_of_range(std::string("NvLink::") + what + ": direction must be 0 or 1");
  }
}

void add(LinkDirectionStats& sum, const LinkDirectionStats& part) {
  sum.transactions += part.transactions;
  sum.packets += part.packets;
  sum.payload_bytes += part.payload_bytes;
  sum.wire_bytes += part.wire_bytes;
  sum.busy_ns += part.busy_ns;
  sum.max_packets_in_flight += part.max_packets_in_flight;
}

}  // namespace

std::uint64_t packet_count(std::uint64_t bytes, std::uint64_t max_payload) {
  return bytes == 0 ? 1 : (bytes + max_payload - 1) / max_payload;
}

std::uint64_t packet_wire_bytes(std::uint64_t bytes, std::uint64_t max_payload,
                                std::uint64_t header) {
  return bytes + packet_count(bytes, max_payload) * header;
}

double payload_efficiency(std::uint64_t bytes, std::uint64_t max_payload, std::uint64_t header) {
  return static_cast<double>(bytes) /
         static_cast<double>(packet_wire_bytes(bytes, max_payload, header));
}

std::uint64_t max_payload_for(const LinkConfig& config, UnitKind unit) {
  const auto link_max = static_cast<std::uint64_t>(config.max_payload_bytes);
  if (unit != UnitKind::Sm) return link_max;
  return std::min(link_max, static_cast<std::uint64_t>(config.sm_max_payload_bytes));
}

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
  require(config.sm_max_payload_bytes >= 1, "link.sm_max_payload_bytes", "must be at least 1");
  require(config.header_bytes >= 0, "link.header_bytes", "must not be negative");
  require(config.credits >= 1, "link.credits", "must be at least 1");
  require(config.response_credits >= 1, "link.response_credits", "must be at least 1");

  for (Direction& dir : directions_) {
    dir.channel(LinkChannel::Request).credits = static_cast<std::size_t>(config.credits);
    dir.channel(LinkChannel::Response).credits = static_cast<std::size_t>(config.response_credits);
  }
  latency_ = sc_time(config.latency_ns, SC_NS);
  round_trip_extra_ = 2 * latency_;
  full_packet_time_ =
      wire_time(static_cast<std::uint64_t>(config.max_payload_bytes + config.header_bytes));
  sm_packet_time_ = wire_time(max_payload_for(config, UnitKind::Sm) +
                              static_cast<std::uint64_t>(config.header_bytes));
  header_packet_time_ = wire_time(static_cast<std::uint64_t>(config.header_bytes));
  min_gap_ = std::max(header_packet_time_, sc_time(1, sc_core::SC_PS));

  from_a.register_b_transport(this, &NvLink::b_transport_from_a);
  from_b.register_b_transport(this, &NvLink::b_transport_from_b);
  from_a.register_transport_dbg(this, &NvLink::dbg_from_a);
  from_b.register_transport_dbg(this, &NvLink::dbg_from_b);
  from_a.register_get_direct_mem_ptr(this, &NvLink::get_direct_mem_ptr);
  from_b.register_get_direct_mem_ptr(this, &NvLink::get_direct_mem_ptr);
}

const LinkDirectionStats& NvLink::channel_stats(const Channel& channel) const {
  // Packets that start after "now" may still get company before them; count them as they stand.
  channel.shown = channel.stats;
  std::size_t low = channel.settled_low;
  for (std::size_t k = channel.settled; k < channel.timeline.size(); ++k) {
    const sc_time start = channel.timeline[k].start;
    while (low < k && channel.timeline[low].credit_return <= start) ++low;
    channel.shown.max_packets_in_flight =
        std::max<std::uint64_t>(channel.shown.max_packets_in_flight, k - low + 1);
  }
  return channel.shown;
}

const LinkDirectionStats& NvLink::stats(int direction, LinkChannel channel) const {
  check_direction(direction, "stats");
  return channel_stats(directions_[direction].channels[static_cast<int>(channel)]);
}

const LinkDirectionStats& NvLink::stats(int direction) const {
  check_direction(direction, "stats");
  const Direction& dir = directions_[direction];
  dir.shown = LinkDirectionStats{};
  for (const Channel& channel : dir.channels) add(dir.shown, channel_stats(channel));
  return dir.shown;
}

std::uint64_t NvLink::credits(LinkChannel channel) const {
  return directions_[0].channels[static_cast<int>(channel)].credits;
}

std::uint64_t NvLink::credits_free(int direction, LinkChannel channel) const {
  check_direction(direction, "credits_free");
  const Channel& ch = directions_[direction].channels[static_cast<int>(channel)];
  const sc_time now = sc_core::sc_time_stamp();
  // Credit returns rise along the timeline: the held ones are its tail.
  const auto held = static_cast<std::size_t>(
      ch.timeline.end() -
      std::partition_point(ch.timeline.begin(), ch.timeline.end(),
                           [&](const Packet& packet) { return packet.credit_return <= now; }));
  return ch.credits - std::min(held, ch.credits);
}

void NvLink::record_packets(bool on) {
  record_ = on;
}

const std::vector<PacketRecord>& NvLink::packets(int direction) const {
  check_direction(direction, "packets");
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

void NvLink::advance(Channel& channel, const sc_time& now) {
  auto& timeline = channel.timeline;
  // Nothing can be reserved before `now` any more, so the in-flight count at the start of every
  // packet that started by now is final.
  while (channel.settled < timeline.size() && timeline[channel.settled].start <= now) {
    const sc_time start = timeline[channel.settled].start;
    while (channel.settled_low < channel.settled &&
           timeline[channel.settled_low].credit_return <= start) {
      ++channel.settled_low;
    }
    channel.stats.max_packets_in_flight = std::max<std::uint64_t>(
        channel.stats.max_packets_in_flight, channel.settled - channel.settled_low + 1);
    ++channel.settled;
  }
  // A settled packet whose credit is back can neither delay nor count against a later one.
  while (channel.settled > 0 && timeline.front().credit_return <= now) {
    timeline.pop_front();
    --channel.settled;
    if (channel.settled_low > 0) --channel.settled_low;
  }
  while (!channel.gaps.empty() && channel.gaps.front().end <= now) channel.gaps.pop_front();
}

void NvLink::advance_all(const sc_time& now) {
  for (Direction& dir : directions_) {
    for (Channel& channel : dir.channels) advance(channel, now);
  }
}

bool NvLink::fits_in_gap(const Channel& channel, std::deque<Gap>::iterator gap,
                         const sc_time& ready, const sc_time& duration, sc_time& start,
                         std::size_t& rank) const {
  const auto& timeline = channel.timeline;
  const std::size_t credits = channel.credits;
  start = std::max(ready, gap->start);
  if (start + duration > gap->end) return false;
  // Its place in time order: no packet starts inside the gap, so this holds for any start in it.
  rank = static_cast<std::size_t>(
      std::partition_point(timeline.begin(), timeline.end(),
                           [&](const Packet& packet) { return packet.start < start; }) -
      timeline.begin());
  // Its credit: the one freed by the packet `credits` places earlier in time order.
  if (rank >= credits) {
    start = std::max(start, timeline[rank - credits].credit_return);
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
  if ((rank - low) + (after - rank) + 1 <= credits) return true;  // cannot reach the limit
  std::size_t first_in_flight = low;
  for (std::size_t k = rank; k < after; ++k) {
    const sc_time at = timeline[k].start;
    while (first_in_flight < k && timeline[first_in_flight].credit_return <= at) {
      ++first_in_flight;
    }
    if (k - first_in_flight + 1 >= credits) return false;
  }
  return true;
}

void NvLink::take_from_gap(Channel& channel, std::deque<Gap>::iterator gap, const sc_time& start,
                           const sc_time& duration) {
  const Gap whole = *gap;
  const sc_time end = start + duration;
  const bool left = start - whole.start >= min_gap_;
  const bool right = whole.end - end >= min_gap_;
  if (left && right) {
    gap->end = start;
    channel.gaps.insert(gap + 1, Gap{end, whole.end});
  } else if (left) {
    gap->end = start;
  } else if (right) {
    gap->start = end;
  } else {
    channel.gaps.erase(gap);
  }
}

sc_time NvLink::place(Channel& channel, const sc_time& ready, const sc_time& duration) {
  // Idle stretches left before the frontier (by packets reserved for a later time, such as a
  // response) are used by packets ready earlier, whatever the order of the calls.
  if (ready < channel.frontier) {
    auto gap = std::partition_point(channel.gaps.begin(), channel.gaps.end(),
                                    [&](const Gap& candidate) { return candidate.end <= ready; });
    for (int scanned = 0; gap != channel.gaps.end() && scanned < kMaxGapScan; ++gap, ++scanned) {
      sc_time start;
      std::size_t rank = 0;
      if (!fits_in_gap(channel, gap, ready, duration, start, rank)) continue;
      channel.timeline.insert(channel.timeline.begin() + static_cast<std::ptrdiff_t>(rank),
                              Packet{start, start + duration + round_trip_extra_});
      take_from_gap(channel, gap, start, duration);
      return start;
    }
  }
  // At the frontier: after the wire is free and the credit of the packet `credits` back returned.
  const std::size_t rank = channel.timeline.size();
  sc_time start = std::max(ready, channel.frontier);
  if (rank >= channel.credits) {
    start = std::max(start, channel.timeline[rank - channel.credits].credit_return);
  }
  if (start > channel.frontier && start - channel.frontier >= min_gap_) {
    channel.gaps.push_back(Gap{channel.frontier, start});
  }
  channel.timeline.push_back(Packet{start, start + duration + round_trip_extra_});
  channel.frontier = start + duration;
  return start;
}

sc_time NvLink::after_packet_on_wire(const Channel& requests, const sc_time& at) const {
  const auto& timeline = requests.timeline;
  const auto next = std::partition_point(timeline.begin(), timeline.end(),
                                         [&](const Packet& packet) { return packet.start <= at; });
  if (next == timeline.begin()) return at;
  const sc_time end = std::prev(next)->credit_return - round_trip_extra_;
  return std::max(at, end);
}

void NvLink::yield_wire(Channel& requests, const sc_time& start, const sc_time& duration) {
  if (start >= requests.frontier) {  // the request wire is idle from its frontier on
    if (start - requests.frontier >= min_gap_)
      requests.gaps.push_back(Gap{requests.frontier, start});
    requests.frontier = start + duration;
    return;
  }
  auto gap = std::partition_point(requests.gaps.begin(), requests.gaps.end(),
                                  [&](const Gap& candidate) { return candidate.end <= start; });
  for (int scanned = 0; gap != requests.gaps.end() && scanned < kMaxGapScan; ++gap, ++scanned) {
    const sc_time from = std::max(start, gap->start);
    if (from + duration > gap->end) continue;
    take_from_gap(requests, gap, from, duration);
    return;
  }
  requests.frontier += duration;  // the next request packet booked starts that much later
}

sc_time NvLink::place_response(Direction& dir, const sc_time& ready, const sc_time& duration) {
  Channel& requests = dir.channel(LinkChannel::Request);
  const sc_time start =
      place(dir.channel(LinkChannel::Response), after_packet_on_wire(requests, ready), duration);
  yield_wire(requests, start, duration);
  return start;
}

sc_time NvLink::send(int direction, LinkChannel channel, const sc_time& ready,
                     std::uint64_t data_bytes, std::uint64_t max_payload) {
  Direction& dir = lane(direction);
  LinkDirectionStats& stats = dir.channel(channel).stats;
  const auto header = static_cast<std::uint64_t>(config_.header_bytes);
  const std::uint64_t count = packet_count(data_bytes, max_payload);
  const sc_time full_packet_time =
      max_payload == static_cast<std::uint64_t>(config_.max_payload_bytes) ? full_packet_time_
      : max_payload == max_payload_for(config_, UnitKind::Sm)              ? sm_packet_time_
                                                              : wire_time(max_payload + header);

  sc_time next_ready = ready;  // a transaction's packets leave in order
  sc_time arrival;
  std::uint64_t remaining = data_bytes;
  for (std::uint64_t k = 0; k < count; ++k) {
    const std::uint64_t payload = std::min(remaining, max_payload);
    remaining -= payload;
    const std::uint64_t wire = payload + header;
    const sc_time duration = payload == max_payload ? full_packet_time
                             : payload == 0         ? header_packet_time_
                                                    : wire_time(wire);
    const sc_time start = channel == LinkChannel::Response
                              ? place_response(dir, next_ready, duration)
                              : place(dir.channel(LinkChannel::Request), next_ready, duration);
    next_ready = start + duration;
    arrival = next_ready + latency_;  // the receiver drains into its router on arrival

    ++stats.packets;
    stats.payload_bytes += payload;
    stats.wire_bytes += wire;
    stats.busy_ns += duration.to_seconds() * 1e9;
    if (record_) {
      dir.records.push_back(
          PacketRecord{start, arrival, static_cast<std::uint32_t>(wire), channel});
    }
    for (const WireObserver& observer : wire_observers_) {
      observer(direction, start, next_ready, wire);
    }
  }
  return arrival;
}

void NvLink::set_turn_owner(int owner, int gpus) {
  if (gpus < 1 || owner < 0 || owner >= gpus) {
    throw std::out_of_range(std::string(name()) + ": turn owner " + std::to_string(owner) +
                            " outside a group of " + std::to_string(gpus) + " GPUs");
  }
  turn_owner_ = owner;
  turn_gpus_ = gpus;
}

TurnKey NvLink::turn_key(int direction, LinkChannel channel, bool answer,
                         const T3Extension& extension) const {
  const auto gpu = static_cast<std::uint64_t>(
      ((static_cast<int>(extension.origin.gpu) - turn_owner_) % turn_gpus_ + turn_gpus_) %
      turn_gpus_);
  const std::uint64_t requester = (static_cast<std::uint64_t>(extension.unit_kind) << 48) |
                                  (static_cast<std::uint64_t>(extension.origin.unit) << 16) | gpu;
  const std::uint64_t booking =
      static_cast<std::uint64_t>(direction) * 4 + static_cast<std::uint64_t>(channel) * 2 + answer;
  return TurnKey{requester, booking};
}

void NvLink::transport(int direction, tlm::tlm_generic_payload& payload, sc_time& delay) {
  // What crosses each way: writes and updates carry their data forward and an ack back; a read
  // sends a header-only request and its data comes back. The request travels in the channel its
  // extension names (flags: Response), every answer in the response channel.
  const bool ignore = payload.get_command() == tlm::TLM_IGNORE_COMMAND &&
                      payload.get_extension<T3Extension>() == nullptr;
  const T3Extension extension = ignore ? T3Extension{} : T3Extension::get(payload);
  const bool read = !ignore && extension.op == Op::Read;
  const LinkChannel request_channel = extension.link_channel;
  const std::uint64_t length = ignore ? 0 : payload.get_data_length();

  // An SM's accesses cross in smaller packets than a copy engine's (link.sm_max_payload_bytes);
  // a read's data comes back in packets of the size its requester asks for.
  const std::uint64_t max_payload = max_payload_for(config_, extension.unit_kind);

  turns_.take_turn(turn_key(direction, request_channel, false, extension));
  const sc_time entry = sc_core::sc_time_stamp();
  advance_all(entry);
  ++lane(direction).channel(request_channel).stats.transactions;
  const sc_time request_arrival =
      send(direction, request_channel, entry + delay, read ? 0 : length, max_payload);
  delay = request_arrival - entry;
  turns_.end_turn();

  // Until the receiver answers, the request is in its hands: what describe_pending reports.
  Channel& pending = directions_[direction].channel(request_channel);
  const std::uint64_t sent = packet_count(read ? 0 : length, max_payload);
  ++pending.undrained;
  pending.undrained_packets += sent;
  auto& target = direction == 0 ? to_b : to_a;
  target->b_transport(payload, delay);
  --pending.undrained;
  pending.undrained_packets -= sent;

  // The target may have waited; its response is ready at the (new) local time plus its delay.
  turns_.take_turn(turn_key(1 - direction, LinkChannel::Response, true, extension));
  const sc_time now = sc_core::sc_time_stamp();
  advance_all(now);
  const bool data_back = read && payload.is_response_ok();
  const sc_time response_arrival =
      send(1 - direction, LinkChannel::Response, now + delay, data_back ? length : 0, max_payload);
  delay = response_arrival - now;
  turns_.end_turn();
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
    for (int c = 0; c < kLinkChannels; ++c) {
      const Channel& channel = directions_[d].channels[c];
      if (channel.undrained == 0) continue;
      const std::string name = to_string(static_cast<LinkChannel>(c));
      what += (what.empty() ? "" : "; ") + std::string(this->name()) + " " + direction_name(d) +
              " " + name + " channel: " + std::to_string(channel.undrained) + " transactions (" +
              std::to_string(channel.undrained_packets) +
              " packets) delivered and not drained by the receiver, " +
              std::to_string(std::min<std::uint64_t>(channel.undrained_packets, channel.credits)) +
              " of " + std::to_string(channel.credits) + " " + name + " credits";
    }
  }
  return what;
}

namespace {

nlohmann::json stats_json(const LinkDirectionStats& s, double elapsed_ns) {
  return {
      {"transactions", s.transactions},
      {"packets", s.packets},
      {"payload_bytes", s.payload_bytes},
      {"wire_bytes", s.wire_bytes},
      {"busy_ns", s.busy_ns},
      {"utilisation", elapsed_ns > 0 ? s.busy_ns / elapsed_ns : 0.0},
      {"efficiency", s.wire_bytes > 0 ? static_cast<double>(s.payload_bytes) / s.wire_bytes : 0.0},
      {"max_packets_in_flight", s.max_packets_in_flight}};
}

}  // namespace

nlohmann::json NvLink::report() const {
  sc_time elapsed = sc_core::sc_time_stamp();
  for (const auto& dir : directions_) {
    for (const auto& channel : dir.channels) elapsed = std::max(elapsed, channel.frontier);
  }
  const double elapsed_ns = elapsed.to_seconds() * 1e9;

  nlohmann::json directions = nlohmann::json::array();
  for (int d = 0; d < 2; ++d) {
    nlohmann::json direction = {{"direction", direction_name(d)}};
    direction.update(stats_json(stats(d), elapsed_ns));
    nlohmann::json channels = nlohmann::json::array();
    for (int c = 0; c < kLinkChannels; ++c) {
      const auto channel = static_cast<LinkChannel>(c);
      nlohmann::json one = {{"channel", to_string(channel)}};
      one.update(stats_json(stats(d, channel), elapsed_ns));
      channels.push_back(one);
    }
    direction["channels"] = channels;
    directions.push_back(direction);
  }
  return {{"name", name()},
          {"elapsed_ns", elapsed_ns},
          {"bandwidth_GBps", config_.bandwidth_GBps},
          {"latency_ns", config_.latency_ns},
          {"max_payload_bytes", config_.max_payload_bytes},
          {"sm_max_payload_bytes", max_payload_for(config_, UnitKind::Sm)},
          {"header_bytes", config_.header_bytes},
          {"credits", config_.credits},
          {"response_credits", config_.response_credits},
          {"directions", directions}};
}

}  // namespace t3
