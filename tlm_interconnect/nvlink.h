// NVLink-style point-to-point link: full duplex, per-direction line rate, latency, packetisation
// (payload per packet + header bytes), and two virtual channels per direction (requests with their
// data; responses, acknowledgements and flags), each with its own credit-based flow control,
// sharing the direction's serialiser with responses first.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <vector>

#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>
#include <nlohmann/json.hpp>
#include <systemc>
#include <tlm>

#include "config/system_config.h"
#include "tlm_interconnect/key_turns.h"
#include "tlm_interconnect/payload.h"

namespace t3 {

struct LinkDirectionStats {
  std::uint64_t transactions = 0;  // requests that crossed in this direction
  std::uint64_t packets = 0;
  std::uint64_t payload_bytes = 0;          // data carried (write data, read data returned)
  std::uint64_t wire_bytes = 0;             // payload plus headers
  double busy_ns = 0;                       // serialiser occupancy
  std::uint64_t max_packets_in_flight = 0;  // sent and credit not yet returned
};

// Packet arithmetic of a link (docs/protocol.md, "Packets on links"). `bytes` of data cross in
// packets of at most `max_payload` bytes, each `header` bytes larger on the wire; no data is one
// header-only packet.
std::uint64_t packet_count(std::uint64_t bytes, std::uint64_t max_payload);
std::uint64_t packet_wire_bytes(std::uint64_t bytes, std::uint64_t max_payload,
                                std::uint64_t header);
// The share of the wire that is payload when `bytes` cross as above.
double payload_efficiency(std::uint64_t bytes, std::uint64_t max_payload, std::uint64_t header);
// The largest payload of a packet carrying an access issued by `unit`: an SM's accesses cross in
// packets of at most link.sm_max_payload_bytes (and max_payload_bytes), any other unit's (a copy
// engine's, the host's) of max_payload_bytes.
std::uint64_t max_payload_for(const LinkConfig& config, UnitKind unit);

// One packet on the wire, for tests and traces.
struct PacketRecord {
  sc_core::sc_time start;    // first bit leaves
  sc_core::sc_time arrival;  // last bit reaches the far end
  std::uint32_t wire_bytes;
  LinkChannel channel = LinkChannel::Request;
};

class NvLink : public sc_core::sc_module {
 public:
  // Side A's router sends into from_a and receives from to_a; likewise side B.
  tlm_utils::simple_target_socket<NvLink> from_a;
  tlm_utils::simple_target_socket<NvLink> from_b;
  tlm_utils::simple_initiator_socket<NvLink> to_a;
  tlm_utils::simple_initiator_socket<NvLink> to_b;

  // Folded: both directions share one serialiser and credit loop. Under rotational symmetry a link
  // whose two directions are rotations of each other (the one link of a 2-GPU ring, GPU g to
  // g + n/2 in a fully-connected group) carries both through one lane, which then holds the
  // traffic and statistics of one direction of the group's links (direction 1 reports nothing).
  NvLink(sc_core::sc_module_name name, const LinkConfig& config, bool folded = false);

  // Direction 0 is A -> B, direction 1 is B -> A. The in-flight peak includes packets reserved
  // ahead of the current time (cost linear in those), so call it for reports, not per packet.
  // One virtual channel's figures, or (without `channel`) both added; a direction's in-flight
  // peak is then the sum of its channels' peaks, each bounded by its own credits.
  const LinkDirectionStats& stats(int direction, LinkChannel channel) const;
  const LinkDirectionStats& stats(int direction) const;
  // Credits of a channel not held at the current time by a packet sent or reserved whose credit
  // has not come back: every one of them once the link has drained.
  std::uint64_t credits_free(int direction, LinkChannel channel) const;
  std::uint64_t credits(LinkChannel channel) const;
  void record_packets(bool on);
  const std::vector<PacketRecord>& packets(int direction) const;
  nlohmann::json report() const;
  // Transactions delivered to a receiver that has not answered them, per direction and channel,
  // e.g. "group.link0_1 a_to_b request channel: 3 transactions (12 packets) delivered and not
  // drained by the receiver, 12 of 16 request credits"; empty if none. The calendar returns each
  // credit `latency` after its packet arrives (a receiver drains on arrival); a receiver that never
  // answers is a stall, and these packets are what a real receive buffer would be holding, keeping
  // their credits.
  std::string describe_pending() const;

  // Bookings made at one instant take turns by requester (unit kind, unit, then its GPU counted
  // from `owner`, the GPU at side A, modulo `gpus`), not in the order the threads call; see
  // nvlink.cpp. Without a call every GPU counts from 0.
  void set_turn_owner(int owner, int gpus);

  // Called for every packet when it is placed on the wire, with the span it holds the serialiser
  // (end = start + serialisation). Packets are reserved ahead of the current time, and one may
  // fill an idle stretch before packets already reserved, so calls are not in time order; a
  // response may overlap request packets reserved before it (see nvlink.cpp). Any
  // number of observers (traces, waveforms); register before sc_start.
  using WireObserver = std::function<void(int direction, sc_core::sc_time start,
                                          sc_core::sc_time end, std::uint64_t wire_bytes)>;
  void observe_wire(WireObserver observer);

 private:
  void b_transport_from_a(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay);
  void b_transport_from_b(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay);
  unsigned dbg_from_a(tlm::tlm_generic_payload& payload);
  unsigned dbg_from_b(tlm::tlm_generic_payload& payload);

  // A packet's hold on the serialiser and on a receive-buffer credit.
  struct Packet {
    sc_core::sc_time start;          // first bit leaves; the credit is taken
    sc_core::sc_time credit_return;  // start + serialisation + 2 x latency
  };
  struct Gap {
    sc_core::sc_time start;
    sc_core::sc_time end;
  };
  // One virtual channel of one direction: its serialiser calendar and credit loop. Its packets do
  // not overlap on the wire, so in time order both their starts and their credit returns rise:
  // the packets in flight at any instant are a contiguous run of `timeline`. The request
  // channel's gaps and frontier also hold the wire time responses took (see nvlink.cpp).
  struct Channel {
    std::deque<Packet> timeline;  // reserved packets in time order, credit not yet back by "now"
    std::deque<Gap> gaps;         // idle stretches before `frontier`, in time order
    sc_core::sc_time frontier;    // end of the last wire time booked
    std::size_t credits = 0;      // receive-buffer slots at the far end
    std::size_t settled = 0;      // timeline[0, settled) start before "now": in-flight count final
    std::size_t settled_low = 0;  // first packet in flight when timeline[settled - 1] started
    LinkDirectionStats stats;
    std::uint64_t undrained = 0;          // transactions in the receiver's b_transport
    std::uint64_t undrained_packets = 0;  // their packets
    mutable LinkDirectionStats shown;     // stats plus the in-flight peak of packets yet to start
  };
  struct Direction {
    Channel channels[kLinkChannels];
    std::vector<PacketRecord> records;
    mutable LinkDirectionStats shown;  // both channels added
    Channel& channel(LinkChannel which) { return channels[static_cast<int>(which)]; }
  };

  void transport(int direction, tlm::tlm_generic_payload& payload, sc_core::sc_time& delay);
  // The turn of a booking in `direction` on `channel` (`answer`: the response to a request).
  TurnKey turn_key(int direction, LinkChannel channel, bool answer,
                   const T3Extension& extension) const;
  // Serialises `data_bytes` (0: one header-only packet) in `direction` on `channel`, the first
  // packet ready at `ready`; returns when the last packet's last bit arrives at the far end.
  sc_core::sc_time send(int direction, LinkChannel channel, const sc_core::sc_time& ready,
                        std::uint64_t data_bytes, std::uint64_t max_payload);
  // Reserves the earliest start >= ready where the channel's wire is idle for `duration` and a
  // credit is free for the packet's whole round trip without taking one from a packet already
  // reserved.
  sc_core::sc_time place(Channel& channel, const sc_core::sc_time& ready,
                         const sc_core::sc_time& duration);
  // Response first: a response waits only for the request packet on the wire when it is ready
  // and for the responses before it; the request channel's next bookings pay for its wire time.
  sc_core::sc_time place_response(Direction& dir, const sc_core::sc_time& ready,
                                  const sc_core::sc_time& duration);
  // When the request packet on the wire at `at` (if any) ends; `at` otherwise.
  sc_core::sc_time after_packet_on_wire(const Channel& requests, const sc_core::sc_time& at) const;
  // Takes `duration` of wire time from the request channel at or after `start`.
  void yield_wire(Channel& requests, const sc_core::sc_time& start,
                  const sc_core::sc_time& duration);
  // Removes [start, start + duration) from `gap`, keeping the idle rest that can hold a packet.
  void take_from_gap(Channel& channel, std::deque<Gap>::iterator gap, const sc_core::sc_time& start,
                     const sc_core::sc_time& duration);
  bool fits_in_gap(const Channel& channel, std::deque<Gap>::iterator gap,
                   const sc_core::sc_time& ready, const sc_core::sc_time& duration,
                   sc_core::sc_time& start, std::size_t& rank) const;
  // Settles the in-flight peak of packets that started by `now`, then forgets what is over.
  void advance(Channel& channel, const sc_core::sc_time& now);
  void advance_all(const sc_core::sc_time& now);
  const LinkDirectionStats& channel_stats(const Channel& channel) const;
  sc_core::sc_time wire_time(std::uint64_t wire_bytes) const;
  bool get_direct_mem_ptr(tlm::tlm_generic_payload& payload, tlm::tlm_dmi& dmi);

  LinkConfig config_;
  sc_core::sc_time latency_;
  sc_core::sc_time round_trip_extra_;    // 2 x latency: the packet out, its credit back
  sc_core::sc_time full_packet_time_;    // max_payload_bytes + header_bytes
  sc_core::sc_time sm_packet_time_;      // an SM's full packet: its max payload + header_bytes
  sc_core::sc_time header_packet_time_;  // header_bytes only
  sc_core::sc_time min_gap_;             // shorter idle stretches fit no packet
  // The lane a direction's packets use: its own, or lane 0 when folded.
  Direction& lane(int direction) { return directions_[folded_ ? 0 : direction]; }

  Direction directions_[2];
  bool folded_ = false;
  bool record_ = false;
  std::vector<WireObserver> wire_observers_;
  KeyTurns turns_;  // bookings at one instant, in key order
  int turn_owner_ = 0;
  int turn_gpus_ = 1;
};

}  // namespace t3
