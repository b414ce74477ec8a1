#include "models/l2/l2_cache.h"

#include <algorithm>
#include <cassert>
#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

#include "models/common/lane_pool.h"
#include "models/l2/bank_calendar.h"
#include "models/l2/data_store.h"
#include "models/l2/geometry.h"
#include "models/l2/line_locks.h"
#include "models/l2/tag_array.h"
#include "models/l2/transit.h"
#include "protocol/hex.h"
#include "tlm_interconnect/address_map.h"
#include "tlm_interconnect/error_log.h"
#include "tlm_interconnect/key_turns.h"
#include "tlm_interconnect/object_pool.h"

namespace t3 {

namespace {

using l2::BankCalendar;
using l2::Cursor;
using l2::Frame;
using l2::Transit;
using Kind = l2::Transit::Kind;

constexpr const char* kMsgType = "t3/l2";
// Rejections are reported one by one up to this many, then only counted.
constexpr std::size_t kReportedRejections = 16;

int index(TrafficClass traffic_class) {
  return static_cast<int>(traffic_class);
}

// What an access waits on while parts of it are in lanes of their own: memory accesses on the
// concurrent miss path, pieces at their homes with two partitions.
struct Join {
  int remaining = 0;                                      // parts not done yet
  sc_core::sc_time latest;                                // the latest completion so far
  tlm::tlm_response_status error = tlm::TLM_OK_RESPONSE;  // the first error response
  sc_core::sc_event done;                                 // notified when `remaining` reaches 0
  void add(sc_core::sc_time completion, tlm::tlm_response_status status) {
    latest = std::max(latest, completion);
    if (error == tlm::TLM_OK_RESPONSE) error = status;
  }
};

}  // namespace

// The L2 in parts, as a memory controller is split into its scheduler, bank machines and
// refresh: a TagArray (tags, sector state, LRU replacement), LineLocks (the sectors of the
// memory accesses in flight), a BankCalendar (bank reservations) and a DataStore (functional
// line data), all over one Geometry. The Impl composes them into the TLM flow: wait for
// conflicts, plan, write back, fill, and the debug path.
//
// Concurrency: a b_transport runs in its caller's thread and may wait inside the memory
// controller, so other callers run meanwhile. On the concurrent miss path (l2.miss_path), an
// access with more than one memory access hands
// all but its first to lanes (LanePool: a thread each, reused), so they are in flight together,
// as an L2's MSHRs keep a line's misses outstanding together; posted write-backs run in lanes
// too and outlive the access. Every memory access the L2 has in flight is a
// Transit that locks the sectors it covers; an access first waits (holding nothing) until no
// lock overlaps its sectors, then plans everything in one atomic step (no wait: lookup, bank
// reservation, replacement, data that needs no memory, lock registration), then performs its
// memory accesses, which only ever wait in the memory controller. So nothing holds a lock while
// waiting for one: no deadlock, and memory sees every sector's accesses in a coherent order.
//
// Timing: an access arriving at T (time stamp + annotated delay) reserves each touched line's
// bank from max(T, bank free) for bytes touched / bank bandwidth; its lookup is done at the
// latest bank end + hit latency, when a hit completes. With l2.miss_path = serial (the
// default) its memory accesses are issued from then on, one after another in the caller's thread
// (write-backs first, then one read per contiguous run of missing sectors), so a miss costs
// memory's latency on top of a hit and a dirty eviction one more memory round trip, and no lanes
// or write-back buffer are used. With l2.miss_path = concurrent its memory accesses (one read per
// contiguous run of missing sectors, and the direct accesses) all leave then, together, and the
// access completes when the last returns: a miss costs memory's latency on top of a hit, however
// many runs it has. The dirty victims it evicts go to the write-back buffer
// (l2.writeback_buffer_entries lines) and drain to memory from then on without delaying the
// access; only when they do not fit does the access wait, until enough earlier write-backs have
// reached memory. A write-back keeps its sectors locked until memory has them, so a later access
// to them waits for it and then reads what was written. An access that waited for another's fill
// keeps its bank slot from T and completes at max(lookup done, that fill's completion): no
// second fetch. b_transport returns the time from sc_time_stamp() to completion as the delay.
//
// Granularity: see geometry.h; a "line" here is a block of l2.block_lines hardware lines.
struct L2Cache::Impl {
  // Scratch of one b_transport, pooled (callers interleave at their waits).
  struct Access {
    std::vector<Transit*> writebacks;
    std::vector<Transit*> reads;  // fills and direct accesses, address order
  };
  // A cached access being planned and performed.
  struct Request {
    std::uint64_t offset, end;  // window offsets
    bool write;
    unsigned char* data;  // functional: the payload's bytes; nullptr in timing mode
    int cls;
  };
  // Sectors an access looked up; added to the stats once it is planned.
  struct Lookups {
    std::uint64_t hits = 0, misses = 0;
  };
  // What an access waits on while its memory accesses are in lanes.
  // One memory access in a lane's thread, from its issue to its completion.
  struct MemoryLane {
    Transit* transit = nullptr;
    T3Extension requester;
    unsigned char* data = nullptr;     // functional: the bytes to write or the place to read into
    sc_core::sc_time start;            // when it leaves the L2
    Join* join = nullptr;              // the access waiting for it; nullptr: a posted write-back
    const Request* request = nullptr;  // fills: the access that installs them
  };
  // Write-back buffer: hardware lines of dirty victims on their way to memory. Accesses that
  // must wait for room are served first come, first served (tickets).
  struct WritebackBuffer {
    std::uint64_t capacity = 0;
    std::uint64_t used = 0;
    std::uint64_t in_flight = 0;  // write-backs (memory accesses) posted and not complete
    std::uint64_t next_ticket = 0, serving = 0;
    sc_core::sc_event room;  // notified when entries free up or a waiter has been served
    std::uint64_t max_used = 0;
    std::uint64_t stalls = 0;  // accesses that waited for room
    sc_core::sc_time stall_time;
  };

  // Partition `partition` of the L2, configured by `config` (its share), counting into `stats`.
  Impl(L2Cache& owner, const L2Config& config, SimMode mode, std::uint64_t base, std::uint64_t size,
       int partition, L2Stats& stats, unsigned granule_shift)
      : owner(owner),
        functional(mode == SimMode::Functional),
        base(base),
        size(size),
        partition(partition),
        granule_shift(granule_shift),
        fabric_latency(config.fabric_latency_ns, sc_core::SC_NS),
        stats(stats),
        geometry(config),
        tags(geometry, size),
        locks(geometry),
        calendar(geometry, config),
        store(geometry, tags.frames(), functional),
        hit_latency(config.hit_latency_ns, sc_core::SC_NS),
        concurrent(config.miss_path == L2MissPath::Concurrent),
        lanes(lane_prefix(owner.name(), partition), [this](MemoryLane& lane) { serve(lane); }),
        rejections(kMsgType, kReportedRejections),
        lost_writebacks(kMsgType, kReportedRejections) {
    writebacks.capacity = static_cast<std::uint64_t>(config.writeback_buffer_entries);
  }

  // Lanes are spawned in whichever thread calls the L2 (an SM's, a DMA engine's, another GPU's),
  // so their names carry the L2's whole name to stay unique under that thread.
  static std::string lane_prefix(std::string name, int partition) {
    std::replace(name.begin(), name.end(), '.', '_');
    return partition == 0 ? name : name + "_p" + std::to_string(partition);
  }

  // ---- partitions -------------------------------------------------------------------------

  // The partition homing window offset `offset`: the parity of its granule index's bits, so
  // that consecutive granules alternate and every set holds lines of both homes. 0 with one
  // partition.
  int home_of(std::uint64_t offset) const {
    return far ? static_cast<int>(l2::popcount(offset >> granule_shift) & 1u) : 0;
  }
  // Whether `transit`'s memory access goes to the other partition over the fabric.
  bool over_fabric(const Transit& transit) const {
    return far && home_of(transit.begin) != partition;
  }

  // ---- transits ---------------------------------------------------------------------------

  Transit& acquire_transit(Kind kind, std::uint64_t begin, std::uint64_t end) {
    Transit& transit = transits.acquire();
    transit.kind = kind;
    transit.write = false;
    transit.begin = begin;
    transit.end = end;
    transit.ready = sc_core::SC_ZERO_TIME;
    transit.waiters = 0;
    transit.retired = false;
    transit.buffer.clear();
    return transit;
  }
  Access& acquire_access() {
    Access& access = accesses.acquire();
    access.writebacks.clear();
    access.reads.clear();
    return access;
  }
  // Drops the transit's locks, wakes its waiters and returns it to the pool.
  void finish(Transit& transit) {
    locks.unlock(transit);
    transit.done.notify();  // immediate: the waiters become runnable in this evaluation phase
    transit.retired = true;
    if (transit.waiters == 0) transits.release(transit);
  }
  // Waits, holding nothing, until no transit of another access locks a sector of [begin, end)
  // (see LineLocks::first_conflict). `ready` becomes the latest completion of the transits
  // waited for. Returns whether it waited.
  bool wait_for_conflicts(std::uint64_t begin, std::uint64_t end, bool bypass,
                          sc_core::sc_time& ready) {
    bool waited = false;
    while (Transit* blocking = locks.first_conflict(begin, end, bypass)) {
      waited = true;
      ++conflict_waits;
      ++blocking->waiters;
      sc_core::wait(blocking->done);
      ready = std::max(ready, blocking->ready);
      if (--blocking->waiters == 0 && blocking->retired) transits.release(*blocking);
    }
    return waited;
  }
  // wait_for_conflicts, and then, if it waited, a turn in key order among the accesses that
  // resume at this instant (KeyTurns): they wake when the memory accesses they waited for
  // complete, which is in the simulation kernel's order of timed events, not a fixed one, and
  // the first to plan takes the banks first. Returns whether the caller holds a turn, to end
  // (turns.end_turn) once its plan is made and locked, before it waits anywhere.
  bool settle(std::uint64_t begin, std::uint64_t end, bool bypass, sc_core::sc_time& ready,
              const T3Extension& extension) {
    const TurnKey key{requester_key(extension), begin};
    while (wait_for_conflicts(begin, end, bypass, ready)) {
      turns.take_turn(key);
      if (!locks.first_conflict(begin, end, bypass)) return true;
      turns.end_turn();  // another access locked these sectors meanwhile: wait for it too
    }
    return false;
  }
  // The GPU in the key is the requester's own index: peers' accesses at one instant go in GPU
  // order, the same run to run, though not rotated with the GPU that serves them.
  static std::uint64_t requester_key(const T3Extension& extension) {
    return std::uint64_t{static_cast<std::uint8_t>(extension.unit_kind)} << 32 |
           std::uint64_t{extension.origin.gpu} << 16 | extension.origin.unit;
  }

  // ---- planning (atomic) ------------------------------------------------------------------

  void copy_sectors(const Frame& frame, std::uint64_t mask, std::uint64_t lo, std::uint64_t hi,
                    unsigned char* buffer, std::uint64_t buffer_begin, bool into_frame) {
    store.copy(tags.index_of(frame), frame.line, mask, lo, hi, buffer, buffer_begin, into_frame);
  }

  // Queues the dirty sectors of `frame` among `mask` for write-back. With `merge` (a bypass's
  // write-backs, sent one after another), runs contiguous with the previous one merge into one
  // memory write; a victim's stay apart, as a write-back buffer frees each line's entry when
  // that line is written, not when a whole merged run is.
  void add_writeback(Access& access, const Frame& frame, std::uint64_t mask, int cls, bool merge) {
    const std::uint64_t start = frame.line << geometry.line_shift;
    const unsigned sector_shift = geometry.sector_shift;
    l2::for_each_run(frame.dirty & mask, [&](unsigned first, unsigned count) {
      const std::uint64_t b = start + (std::uint64_t{first} << sector_shift);
      const std::uint64_t e = b + (std::uint64_t{count} << sector_shift);
      Transit* transit = nullptr;
      if (merge && !access.writebacks.empty() && access.writebacks.back()->end == b) {
        transit = access.writebacks.back();
      } else {
        transit = &acquire_transit(Kind::Writeback, b, b);
        access.writebacks.push_back(transit);
      }
      if (functional) {
        const unsigned char* from =
            store.line(tags.index_of(frame)) + (std::uint64_t{first} << sector_shift);
        transit->buffer.insert(transit->buffer.end(), from, from + (e - b));
      }
      transit->end = e;
      stats.writeback_bytes[cls] += e - b;
    });
  }

  // Queues a memory read (fill or direct) or a direct write of [b, e), merged with the previous
  // one if contiguous and of the same kind.
  void add_read(Access& access, Kind kind, std::uint64_t b, std::uint64_t e, bool write) {
    Transit* transit = nullptr;
    if (!access.reads.empty()) {
      Transit* last = access.reads.back();
      if (last->kind == kind && last->write == write && last->end == b &&
          home_of(last->begin) == home_of(b)) {
        transit = last;
      }
    }
    if (!transit) {
      transit = &acquire_transit(kind, b, b);
      transit->write = write;
      access.reads.push_back(transit);
    }
    transit->end = e;
    if (functional && kind == Kind::Fill) transit->buffer.resize(e - transit->begin);
  }

  // A frame for `c.line` chosen by the tag array (its dirty sectors queued for write-back);
  // nullptr if every way has a fill in flight.
  Frame* allocate(Access& access, const Cursor& c, int cls) {
    const std::uint64_t way = tags.victim(c.set);
    if (way == geometry.ways) return nullptr;
    Frame& victim = tags.frame(c.set, way);
    if (victim.valid != 0) {
      stats.evictions[cls] += geometry.lines_holding(victim.valid);
      // serial: a victim's runs merge like a bypass's, as they go one after another too
      if (victim.dirty != 0) add_writeback(access, victim, geometry.full_line, cls, !concurrent);
    }
    tags.reassign(c, way);
    return &victim;
  }

  // ---- memory accesses --------------------------------------------------------------------

  // Sends `transit`'s memory access at `cursor` (or now, if later), in the caller's thread;
  // `cursor` becomes its completion. The first error response is kept in `error`.
  void issue(Transit& transit, const T3Extension& requester, bool write, unsigned char* data,
             sc_core::sc_time& cursor, tlm::tlm_response_status& error) {
    T3Extension extension = requester;
    extension.op = write ? Op::Write : Op::Read;
    extension.cache_hint = CacheHint::Cached;
    extension.tag = kNoTag;  // the L2's own traffic is not the requester's tracked store
    tlm::tlm_generic_payload& m = transit.payload;
    const auto length = static_cast<unsigned>(transit.end - transit.begin);
    m.set_address(base + transit.begin);
    m.set_data_ptr(data);
    m.set_data_length(length);
    m.set_streaming_width(length);
    m.set_byte_enable_ptr(nullptr);
    m.set_byte_enable_length(0);
    m.set_dmi_allowed(false);
    m.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    T3Extension::set(m, extension);
    const sc_core::sc_time now = sc_core::sc_time_stamp();
    sc_core::sc_time delay = cursor > now ? cursor - now : sc_core::SC_ZERO_TIME;
    if (over_fabric(transit)) {
      // Copies here are clean: only fills and direct reads go to the home partition.
      // It reaches the other partition after the hop, and waits for that time here: the other
      // partition reserves its banks from an access's arrival, and an arrival annotated into the
      // future would hold its banks from then on against accesses of the present (and delay them,
      // and with them their own fills from this partition, in turn).
      assert(!write);
      sc_core::wait(delay + fabric_latency);
      delay = sc_core::SC_ZERO_TIME;
      far->serve_checked(m, delay, true);
      delay += fabric_latency;
    } else {
      owner.out->b_transport(m, delay);
    }
    transit.ready = sc_core::sc_time_stamp() + delay;
    cursor = transit.ready;
    if (m.is_response_error() && error == tlm::TLM_OK_RESPONSE) error = m.get_response_status();
  }

  // A bypass's write-backs, one after another in this thread: they must reach memory before the
  // bypass itself does, which may overwrite or update the same bytes.
  void write_back(Access& access, const T3Extension& requester, sc_core::sc_time& cursor,
                  tlm::tlm_response_status& error) {
    for (Transit* transit : access.writebacks) {
      issue(*transit, requester, true, functional ? transit->buffer.data() : nullptr, cursor,
            error);
      finish(*transit);
    }
  }

  // ---- b_transport ------------------------------------------------------------------------

  void reject(tlm::tlm_generic_payload& payload, tlm::tlm_response_status status,
              const std::string& why) {
    payload.set_response_status(status);
    rejections.add(std::string(owner.name()) + ": " + why);
  }

  void transport(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay) {
    if (admit(payload)) serve_checked(payload, delay);
  }

  // Rejects an access the L2 cannot serve (answering it with an error response); returns
  // whether it is admitted. An empty access is answered at once.
  bool admit(tlm::tlm_generic_payload& payload) {
    const std::uint64_t address = payload.get_address();
    const std::uint64_t length = payload.get_data_length();
    const std::uint64_t offset = address - base;
    if (address < base || offset >= size || length > size - offset) {
      reject(payload, tlm::TLM_ADDRESS_ERROR_RESPONSE,
             "access of " + std::to_string(length) + " bytes at " + hex(address) +
                 " leaves the L2 window [" + hex(base) + ", " + hex(base + size) + ")");
      return false;
    }
    if (const auto error = memory_payload_error(payload)) {
      reject(payload, error->status, error->reason + " at " + hex(address));
      return false;
    }
    if (functional && length > 0 && payload.get_data_ptr() == nullptr) {
      reject(payload, tlm::TLM_GENERIC_ERROR_RESPONSE, "functional access without data");
      return false;
    }
    if (length == 0) {
      payload.set_response_status(tlm::TLM_OK_RESPONSE);
      return false;
    }
    return true;
  }

  // Serves an admitted access in this partition; `forwarded`: a fill or direct read the other
  // partition sends over the fabric (see cached()).
  void serve_checked(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay,
                     bool forwarded = false) {
    const sc_core::sc_time arrival = sc_core::sc_time_stamp() + delay;
    const std::uint64_t length = payload.get_data_length();
    const std::uint64_t offset = payload.get_address() - base;
    const T3Extension extension = T3Extension::get(payload);
    ++inside;
    if (extension.op == Op::Update || extension.cache_hint == CacheHint::Uncached) {
      bypass(payload, delay, extension, offset, length, arrival);
    } else {
      cached(payload, delay, extension, offset, length, arrival, forwarded);
    }
    --inside;
  }

  // Uncached accesses and updates: write back and invalidate the lines they overlap, then
  // forward the payload unchanged. They use no bank and add no latency of their own.
  void bypass(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay,
              const T3Extension& extension, std::uint64_t offset, std::uint64_t length,
              sc_core::sc_time arrival) {
    const int cls = index(extension.traffic_class);
    const std::uint64_t end = offset + length;
    sc_core::sc_time ready = sc_core::SC_ZERO_TIME;
    const bool in_turn = settle(offset, end, true, ready, extension);

    Access& access = acquire_access();
    Transit& self = acquire_transit(Kind::Bypass, offset, end);
    invalidate(access, offset, end, cls);
    locks.lock(self);
    for (Transit* transit : access.writebacks) locks.lock(*transit);
    if (in_turn) turns.end_turn();
    stats.bypass_bytes[cls] += length;

    sc_core::sc_time cursor = std::max(arrival, ready);
    tlm::tlm_response_status error = tlm::TLM_OK_RESPONSE;
    write_back(access, extension, cursor, error);
    const sc_core::sc_time now = sc_core::sc_time_stamp();
    delay = cursor > now ? cursor - now : sc_core::SC_ZERO_TIME;
    owner.out->b_transport(payload, delay);
    self.ready = sc_core::sc_time_stamp() + delay;
    finish(self);
    if (error != tlm::TLM_OK_RESPONSE && !payload.is_response_error()) {
      payload.set_response_status(error);
    }
    accesses.release(access);
  }

  // Invalidates the hardware lines [offset, end) overlaps, queueing their dirty sectors for
  // write-back; a block left without valid sectors frees its way.
  void invalidate(Access& access, std::uint64_t offset, std::uint64_t end, int cls) {
    const std::uint64_t last = geometry.last_line(end);
    for (Cursor c = geometry.cursor(geometry.first_line(offset)); c.line <= last;
         geometry.advance(c)) {
      Frame* frame = tags.find(c);
      if (!frame) continue;
      const std::uint64_t mask = geometry.line_mask_of(c.line, offset, end);
      // wait_for_conflicts waited for every fill of these lines
      assert((frame->pending & mask) == 0);
      if ((frame->dirty & mask) != 0) add_writeback(access, *frame, mask, cls, true);
      frame->valid &= ~mask;
      frame->dirty &= ~mask;
      if (frame->valid == 0 && frame->pending == 0) tags.release(c.set, *frame);
      tags.sync(c.set, *frame);
    }
  }

  // A store to (or a bypass of) [offset, end) at its home partition: this partition's copy of
  // those sectors (of the hardware lines they overlap, for a bypass) is stale. It is clean, so it
  // is only invalidated, once the fills in flight into it are in.
  void drop(std::uint64_t offset, std::uint64_t end, bool whole_lines,
            const T3Extension& extension) {
    sc_core::sc_time ready = sc_core::SC_ZERO_TIME;
    const bool in_turn = settle(offset, end, whole_lines, ready, extension);
    const std::uint64_t last = geometry.last_line(end);
    for (Cursor c = geometry.cursor(geometry.first_line(offset)); c.line <= last;
         geometry.advance(c)) {
      Frame* frame = tags.find(c);
      if (!frame) continue;
      const std::uint64_t mask = whole_lines ? geometry.line_mask_of(c.line, offset, end)
                                             : geometry.mask_of(c.line, offset, end);
      assert((frame->pending & mask) == 0 && (frame->dirty & mask) == 0);
      dropped_sectors += l2::popcount(frame->valid & mask);
      frame->valid &= ~mask;
      if (frame->valid == 0 && frame->pending == 0) tags.release(c.set, *frame);
      tags.sync(c.set, *frame);
    }
    if (in_turn) turns.end_turn();
  }

  // A cached access. One `forwarded` from the other partition is charged the home's banks (its
  // data time) but not l2.hit_latency_ns: the hit latency stands for a load's trip through the L2
  // as a whole, and the H100's measured one includes the partitions (REFERENCES.md section 6: an
  // SM's pointer chase over 256 MiB, whose lines are homed on both sides, misses in 352 ns on
  // average). The requesting partition has charged the hit latency already; the far copy adds the
  // fabric both ways (issue()) and the home's banks, not a second whole trip.
  void cached(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay,
              const T3Extension& extension, std::uint64_t offset, std::uint64_t length,
              sc_core::sc_time arrival, bool forwarded) {
    const Request request{offset, offset + length, extension.op == Op::Write,
                          functional ? payload.get_data_ptr() : nullptr,
                          index(extension.traffic_class)};
    sc_core::sc_time ready = sc_core::SC_ZERO_TIME;
    const bool in_turn = settle(request.offset, request.end, false, ready, extension);

    // Plan: atomic from here to the lock registration.
    Access& access = acquire_access();
    const BankCalendar::Units bank_done = plan(access, request, arrival.value());
    for (Transit* transit : access.writebacks) locks.lock(*transit);
    for (Transit* transit : access.reads) locks.lock(*transit);
    if (in_turn) turns.end_turn();

    // Memory: write-backs first, then fills and direct accesses in address order, issued once
    // the lookup is done (a miss costs the hit latency plus memory's).
    const sc_core::sc_time lookup_done =
        sc_core::sc_time::from_value(bank_done) + (forwarded ? sc_core::SC_ZERO_TIME : hit_latency);
    sc_core::sc_time cursor = std::max(lookup_done, ready);
    const tlm::tlm_response_status error = perform(access, extension, request, cursor);
    accesses.release(access);

    const sc_core::sc_time completion = std::max({lookup_done, ready, cursor});
    const sc_core::sc_time now = sc_core::sc_time_stamp();
    delay = completion > now ? completion - now : sc_core::SC_ZERO_TIME;
    payload.set_response_status(error);
  }

  // Looks up, reserves banks for and replaces into every line of `request`, queueing the memory
  // accesses it needs in `access`; returns the latest bank reservation end.
  BankCalendar::Units plan(Access& access, const Request& request,
                           BankCalendar::Units arrival_units) {
    BankCalendar::Sweep banks = calendar.sweep(request.offset, arrival_units);
    const std::uint64_t first = geometry.first_line(request.offset);
    const std::uint64_t last = geometry.last_line(request.end);
    const bool fast_reads = !request.write && !request.data && tags.fast();
    // Lines [whole_begin, whole_end) are touched whole.
    const std::uint64_t line_mask = geometry.line_bytes - 1;
    const std::uint64_t whole_begin = (request.offset & line_mask) == 0 ? first : first + 1;
    const std::uint64_t whole_end = (request.end & line_mask) == 0 ? last + 1 : last;
    Lookups lookups;
    for (Cursor c = geometry.cursor(first); c.line <= last; geometry.advance(c)) {
      if (fast_reads && c.line >= whole_begin && c.line < whole_end) {
        lookups.hits += plan_complete_hits(c, whole_end, banks);
        if (c.line > last) break;
      }
      plan_line(access, request, c, banks, fast_reads, lookups);
    }
    const int cls = request.cls;
    (request.write ? stats.write_hit_sectors : stats.read_hit_sectors)[cls] += lookups.hits;
    (request.write ? stats.write_miss_sectors : stats.read_miss_sectors)[cls] += lookups.misses;
    return banks.done;
  }

  // Plans the timing reads of whole lines from `c` on, up to line `stop`, while they hit lines
  // with every sector valid: the common case, kept tight (as plan_line would: bank reservation,
  // LRU stamp, hits). `c` and `banks` end at the first line left to plan_line. Returns the
  // sectors hit. Needs tags.fast(). The tag walk and the bank reservations are two loops: the
  // banks of consecutive whole lines do not depend on what the tags hold.
  std::uint64_t plan_complete_hits(Cursor& c, std::uint64_t stop, BankCalendar::Sweep& banks) {
    const std::uint64_t lines = tags.touch_complete_run(c, stop);
    banks.reserve_lines(lines * geometry.bank_lines);
    return lines * geometry.sectors_per_line;
  }

  // Plans line `c` of `request`: bank reservation, lookup, replacement, the data that needs no
  // memory, and the memory accesses that do.
  T3_L2_INLINE void plan_line(Access& access, const Request& request, const Cursor& c,
                              BankCalendar::Sweep& banks, bool fast_reads, Lookups& lookups) {
    const std::uint64_t start = c.line << geometry.line_shift;
    const std::uint64_t lo = std::max(request.offset, start) - start;
    const std::uint64_t hi = std::min(request.end - start, geometry.line_bytes);
    const bool whole = lo == 0 && hi == geometry.line_bytes;
    const std::uint64_t touched =
        whole ? geometry.full_line
              : l2::sector_range(static_cast<unsigned>(lo >> geometry.sector_shift),
                                 static_cast<unsigned>((hi - 1) >> geometry.sector_shift));
    const unsigned touched_count = whole ? geometry.sectors_per_line : l2::popcount(touched);
    // The banks move the bytes touched; the calendar orders reservations as they are made.
    calendar.reserve(banks, start + lo, start + hi);

    const std::uint64_t way = tags.find_way(c);
    if (way < geometry.ways && fast_reads && tags.complete(c.set, way)) {
      // A timing read of a line with every sector valid: all hits, nothing else changes.
      tags.touch(c.set, way);
      lookups.hits += touched_count;
      return;
    }
    Frame* frame = way < geometry.ways ? &tags.frame(c.set, way) : nullptr;
    const bool allocated = !frame;
    if (allocated) frame = allocate(access, c, request.cls);
    if (!frame) {
      // Every way has a fill in flight (only with more callers than ways on one set):
      // serve these bytes from memory without allocating rather than wait for a way.
      lookups.misses += touched_count;
      stats.unallocated_bytes[request.cls] += hi - lo;
      add_read(access, Kind::Direct, start + lo, start + hi, request.write);
      return;
    }
    tags.touch(c.set, tags.way_of(c.set, *frame));
    const std::uint64_t hits = touched & frame->valid;
    const unsigned hit_sectors = hits == touched ? touched_count : l2::popcount(hits);
    lookups.hits += hit_sectors;
    lookups.misses += touched_count - hit_sectors;
    const std::uint64_t fetch = request.write ? write_into(*frame, request, touched, lo, hi)
                                              : read_from(*frame, request, touched, hits, lo, hi);
    if (fetch != 0) {
      frame->pending |= fetch;
      l2::for_each_run(fetch, [&](unsigned first_sector, unsigned count) {
        add_read(access, Kind::Fill, start + (std::uint64_t{first_sector} << geometry.sector_shift),
                 start + (std::uint64_t{first_sector + count} << geometry.sector_shift), false);
      });
    }
    if (allocated || request.write || fetch != 0) tags.sync(c.set, *frame);
  }

  // A read of sectors `touched` ([lo, hi) of the line) of `frame`: takes the sectors it hits
  // and returns those to fetch.
  std::uint64_t read_from(const Frame& frame, const Request& request, std::uint64_t touched,
                          std::uint64_t hits, std::uint64_t lo, std::uint64_t hi) {
    if (request.data) copy_sectors(frame, hits, lo, hi, request.data, request.offset, false);
    return touched & ~frame.valid;
  }

  // A write of sectors `touched` ([lo, hi) of the line) into `frame`, write-allocate: sectors
  // written whole need no fetch and become valid and dirty; returns the partial ones to fetch
  // first.
  std::uint64_t write_into(Frame& frame, const Request& request, std::uint64_t touched,
                           std::uint64_t lo, std::uint64_t hi) {
    const unsigned sector_shift = geometry.sector_shift;
    const std::uint64_t first_full = (lo + geometry.sector_bytes - 1) >> sector_shift;
    const std::uint64_t end_full = hi >> sector_shift;
    const std::uint64_t full = end_full > first_full
                                   ? l2::sector_range(static_cast<unsigned>(first_full),
                                                      static_cast<unsigned>(end_full - 1))
                                   : 0;
    const std::uint64_t fetch = touched & ~frame.valid & ~full;
    const std::uint64_t written = touched & ~fetch;
    if (request.data) copy_sectors(frame, written, lo, hi, request.data, request.offset, true);
    frame.valid |= written;
    frame.dirty |= written;
    return fetch;
  }

  // Issues the planned memory accesses of `request` at `cursor` (or, if the write-back buffer
  // has no room for its victims, once it has): every read and direct access at once, the first
  // in this thread and the others in lanes, and the write-backs posted to lanes. Returns when the
  // reads and direct accesses are complete, `cursor` at the latest completion, with memory's
  // first error response, or TLM_OK_RESPONSE.
  tlm::tlm_response_status perform(Access& access, const T3Extension& extension,
                                   const Request& request, sc_core::sc_time& cursor) {
    if (!concurrent) return perform_serially(access, extension, request, cursor);
    if (access.reads.empty() && access.writebacks.empty()) return tlm::TLM_OK_RESPONSE;  // hits
    if (!access.writebacks.empty()) {
      wait_for_writeback_room(access);
      cursor = std::max(cursor, sc_core::sc_time_stamp());
    }
    Join join;
    join.latest = cursor;
    // Lanes run once this thread waits in memory: its own read reaches memory first, the others
    // after it in address order, the write-backs last.
    for (std::size_t k = 1; k < access.reads.size(); ++k) {
      Transit& transit = *access.reads[k];
      start_lane(transit, extension, data_of(transit, request), cursor, &join, &request);
    }
    for (Transit* transit : access.writebacks) {
      start_lane(*transit, extension, functional ? transit->buffer.data() : nullptr, cursor,
                 nullptr, nullptr);
    }
    if (!access.reads.empty()) {
      Transit& transit = *access.reads.front();
      ++join.remaining;
      carry(transit, extension, data_of(transit, request), cursor, &join, &request);
    }
    while (join.remaining > 0) sc_core::wait(join.done);
    cursor = join.latest;
    return join.error;
  }

  // l2.miss_path = serial: issues the planned memory accesses of `request` from `cursor` on, one
  // after another in this thread: write-backs, then fills and direct accesses. The pieces of one
  // run split only by their homes (two partitions) go together (issue_pieces). Returns the first
  // error response of memory, or TLM_OK_RESPONSE.
  tlm::tlm_response_status perform_serially(Access& access, const T3Extension& extension,
                                            const Request& request, sc_core::sc_time& cursor) {
    tlm::tlm_response_status error = tlm::TLM_OK_RESPONSE;
    write_back(access, extension, cursor, error);
    const std::vector<Transit*>& reads = access.reads;
    for (std::size_t k = 0; k < reads.size();) {
      std::size_t next = k + 1;
      while (next < reads.size() && split_by_home(*reads[next - 1], *reads[next])) ++next;
      if (next > k + 1) {
        issue_pieces(access, k, next, extension, request, cursor, error);
        k = next;
        continue;
      }
      Transit* transit = reads[k++];
      if (transit->kind == Kind::Direct) {
        issue(*transit, extension, transit->write, data_of(*transit, request), cursor, error);
      } else {
        tlm::tlm_response_status fill_error = tlm::TLM_OK_RESPONSE;
        issue(*transit, extension, false, data_of(*transit, request), cursor, fill_error);
        install(*transit, fill_error == tlm::TLM_OK_RESPONSE, request);
        if (error == tlm::TLM_OK_RESPONSE) error = fill_error;
      }
      finish(*transit);
    }
    return error;
  }

  // Whether `second` continues `first`'s run and was kept apart only for its other home
  // (add_read merges everything else that is contiguous, so never with one partition).
  static bool split_by_home(const Transit& first, const Transit& second) {
    return first.kind == second.kind && first.write == second.write && first.end == second.begin;
  }

  // The serial path's reads [k, next) of `access`, pieces of one run in alternating homes, all at
  // `cursor` (the first in this thread, the others in lanes); `cursor` becomes the last one's
  // completion. With one partition the run would be one memory access; the hardware moves 32 B
  // sectors, each to its own home, so the coarse request's split costs no extra round trips.
  void issue_pieces(Access& access, std::size_t k, std::size_t next, const T3Extension& extension,
                    const Request& request, sc_core::sc_time& cursor,
                    tlm::tlm_response_status& error) {
    Join join;
    join.latest = cursor;
    for (std::size_t j = k + 1; j < next; ++j) {
      Transit& transit = *access.reads[j];
      start_lane(transit, extension, data_of(transit, request), cursor, &join, &request);
    }
    Transit& first = *access.reads[k];
    ++join.remaining;
    carry(first, extension, data_of(first, request), cursor, &join, &request);
    while (join.remaining > 0) sc_core::wait(join.done);
    cursor = join.latest;
    if (error == tlm::TLM_OK_RESPONSE) error = join.error;
  }

  // Where a read or direct access's bytes come from or go: the fill's staging copy, or the
  // request's bytes for a direct access; nullptr in timing mode.
  unsigned char* data_of(Transit& transit, const Request& request) const {
    if (transit.kind == Kind::Direct) {
      return request.data ? request.data + (transit.begin - request.offset) : nullptr;
    }
    return functional ? transit.buffer.data() : nullptr;
  }

  // Hands `transit`'s memory access to a lane of its own.
  void start_lane(Transit& transit, const T3Extension& requester, unsigned char* data,
                  sc_core::sc_time start, Join* join, const Request* request) {
    MemoryLane& lane = lanes.acquire();
    lane.transit = &transit;
    lane.requester = requester;
    lane.data = data;
    lane.start = start;
    lane.join = join;
    lane.request = request;
    if (join) ++join->remaining;
    if (!join) ++writebacks.in_flight;
    lanes.start(lane);
  }

  void serve(MemoryLane& lane) {
    Transit& transit = *lane.transit;
    const T3Extension requester = lane.requester;
    unsigned char* data = lane.data;
    const sc_core::sc_time start = lane.start;
    Join* join = lane.join;
    const Request* request = lane.request;
    // With one partition the lane may take the next request while this one is in memory (it
    // takes it once this one is done). With two, a lane of each partition may wait in the other
    // for a lane of that one, which must then not be a lane still carrying a request of its own.
    if (!far) lanes.release(lane);
    carry(transit, requester, data, start, join, request);
    if (far) lanes.release(lane);
  }

  // Sends `transit`'s memory access at `start` and waits for it in this thread; then installs a
  // fill, frees a write-back's buffer entries, and tells `join` (if any) it is back.
  void carry(Transit& transit, const T3Extension& requester, unsigned char* data,
             sc_core::sc_time start, Join* join, const Request* request) {
    tlm::tlm_response_status error = tlm::TLM_OK_RESPONSE;
    const bool write = transit.kind == Kind::Writeback || transit.write;
    issue(transit, requester, write, data, start, error);
    if (transit.kind == Kind::Fill) install(transit, error == tlm::TLM_OK_RESPONSE, *request);
    if (transit.kind == Kind::Writeback) {
      release_writeback(transit, error);
    } else if (join) {
      join->add(transit.ready, error);
    }
    finish(transit);
    if (join && --join->remaining == 0) join->done.notify();
  }

  // ---- write-back buffer ------------------------------------------------------------------

  // Hardware lines of a write-back: the buffer's entries it takes.
  std::uint64_t entries_of(const Transit& transit) const {
    return ((transit.end - 1) >> geometry.bank_line_shift) -
           (transit.begin >> geometry.bank_line_shift) + 1;
  }

  // Takes the buffer entries of `access`'s write-backs, waiting (behind the accesses already
  // waiting) until they fit; a write-back larger than the whole buffer goes when it is empty.
  void wait_for_writeback_room(const Access& access) {
    std::uint64_t need = 0;
    for (const Transit* transit : access.writebacks) need += entries_of(*transit);
    const std::uint64_t ticket = writebacks.next_ticket++;
    const auto fits = [&] {
      return ticket == writebacks.serving &&
             (writebacks.used == 0 || writebacks.used + need <= writebacks.capacity);
    };
    if (!fits()) {
      const sc_core::sc_time from = sc_core::sc_time_stamp();
      ++writebacks.stalls;
      while (!fits()) sc_core::wait(writebacks.room);
      writebacks.stall_time += sc_core::sc_time_stamp() - from;
    }
    ++writebacks.serving;
    writebacks.used += need;
    writebacks.max_used = std::max(writebacks.max_used, writebacks.used);
    writebacks.room.notify();  // the next waiter may fit as well
  }

  // A posted write-back is complete: its entries are free again. Memory refusing it loses the
  // data, with nobody waiting to be told: it is counted and reported.
  void release_writeback(const Transit& transit, tlm::tlm_response_status error) {
    writebacks.used -= entries_of(transit);
    --writebacks.in_flight;
    writebacks.room.notify();
    if (error != tlm::TLM_OK_RESPONSE) {
      lost_writebacks.add(std::string(owner.name()) + ": memory refused the write-back of " +
                          std::to_string(transit.end - transit.begin) + " bytes at " +
                          hex(base + transit.begin));
    }
  }

  // A fill came back: its sectors become valid (or, on error, stay invalid) and the access that
  // issued it takes its bytes (read) or merges its partial sectors (write).
  void install(Transit& fill, bool ok, const Request& request) {
    if (ok) {
      // fill_bytes counts what memory delivered; a fill from the other partition crossed the
      // fabric instead
      auto& bytes = over_fabric(fill) ? fabric_fill_bytes : stats.fill_bytes;
      bytes[request.cls] += fill.end - fill.begin;
    }
    const std::uint64_t last = geometry.last_line(fill.end);
    for (Cursor c = geometry.cursor(geometry.first_line(fill.begin)); c.line <= last;
         geometry.advance(c)) {
      Frame* frame = tags.find(c);
      assert(frame && "a frame with a fill in flight is never replaced");
      const std::uint64_t mask = geometry.mask_of(c.line, fill.begin, fill.end);
      frame->pending &= ~mask;
      if (ok) frame->valid |= mask;
      tags.sync(c.set, *frame);
      if (ok) install_line(fill, *frame, mask, request);
    }
    if (ok && !request.write && request.data) {
      const std::uint64_t b = std::max(fill.begin, request.offset);
      const std::uint64_t e = std::min(fill.end, request.end);
      std::memcpy(request.data + (b - request.offset), fill.buffer.data() + (b - fill.begin),
                  e - b);
    }
  }

  // The sectors `mask` of `frame` that `fill` brought in: their data, and the write's on top.
  void install_line(Transit& fill, Frame& frame, std::uint64_t mask, const Request& request) {
    if (functional) {
      copy_sectors(frame, mask, 0, geometry.line_bytes, fill.buffer.data(), fill.begin, true);
    }
    if (!request.write) return;
    if (request.data) {
      const std::uint64_t start = frame.line << geometry.line_shift;
      const std::uint64_t lo = std::max(request.offset, start) - start;
      const std::uint64_t hi = std::min(request.end, start + geometry.line_bytes) - start;
      copy_sectors(frame, mask, lo, hi, request.data, request.offset, true);
    }
    frame.dirty |= mask;
  }

  // ---- debug ------------------------------------------------------------------------------

  // Which lines a partition's debug overlay covers: a read takes the lines' other copies first
  // and their home's last, so the home's (possibly dirty) data wins.
  enum class Homes { All, Homed, NotHomed };

  unsigned debug(tlm::tlm_generic_payload& payload) {
    const std::uint64_t address = payload.get_address();
    if (address < base || address - base >= size) return 0;
    const unsigned bytes = owner.out->transport_dbg(payload);
    overlay(payload, bytes, Homes::All);
    return bytes;
  }

  // Puts the L2's data over (read) or into (write) the `bytes` of `payload` memory has served,
  // for the lines `homes` selects.
  void overlay(tlm::tlm_generic_payload& payload, unsigned bytes, Homes homes) {
    if (!functional || bytes == 0 || payload.get_data_ptr() == nullptr) return;
    const bool write = payload.is_write();
    if (!write && !payload.is_read()) return;
    const std::uint64_t address = payload.get_address();
    const std::uint64_t offset = address - base;
    const std::uint64_t end = std::min(offset + bytes, size);
    unsigned char* data = payload.get_data_ptr();
    const std::uint64_t last = geometry.last_line(end);
    for (Cursor c = geometry.cursor(geometry.first_line(offset)); c.line <= last;
         geometry.advance(c)) {
      const std::uint64_t start = c.line << geometry.line_shift;
      const std::uint64_t lo = std::max(offset, start);
      const std::uint64_t hi = std::min(end, start + geometry.line_bytes);
      if (homes != Homes::All && (home_of(start) == partition) != (homes == Homes::Homed)) {
        continue;
      }
      debug_in_flight(c, lo, hi, data, offset, write);
      if (Frame* frame = tags.find(c); frame && frame->valid != 0) {
        copy_sectors(*frame, frame->valid, lo - start, hi - start, data, offset, write);
      }
    }
  }

  // Data on its way to memory is not in memory yet; a fill's staging copy must not bring back
  // what a debug write has just replaced. [lo, hi) are window offsets in line `c.line`; `data`
  // holds window bytes from `offset` on.
  void debug_in_flight(const Cursor& c, std::uint64_t lo, std::uint64_t hi, unsigned char* data,
                       std::uint64_t offset, bool write) {
    locks.for_each(c.set, [&](const l2::Lock& lock) {
      Transit& t = *lock.transit;
      if (lock.line != c.line || !(t.kind == Kind::Writeback || (write && t.kind == Kind::Fill))) {
        return;
      }
      const std::uint64_t b = std::max(lo, t.begin), e = std::min(hi, t.end);
      if (b >= e) return;
      if (write) {
        std::memcpy(t.buffer.data() + (b - t.begin), data + (b - offset), e - b);
      } else {
        std::memcpy(data + (b - offset), t.buffer.data() + (b - t.begin), e - b);
      }
    });
  }

  L2Cache& owner;
  const bool functional;
  const std::uint64_t base;
  const std::uint64_t size;
  const int partition;
  const unsigned granule_shift;  // log2(l2.partition_granule_bytes)
  const sc_core::sc_time fabric_latency;
  Impl* far = nullptr;  // the other partition; nullptr with one
  L2Stats& stats;
  L2Stats::PerClass fabric_fill_bytes{};  // bytes filled from the other partition
  std::uint64_t dropped_sectors = 0;      // valid sectors invalidated by a store at their home
  const l2::Geometry geometry;
  l2::TagArray tags;
  l2::LineLocks locks;
  BankCalendar calendar;
  l2::DataStore store;
  const sc_core::sc_time hit_latency;
  const bool concurrent;  // l2.miss_path = concurrent
  ObjectPool<Transit> transits;
  ObjectPool<Access> accesses;
  LanePool<MemoryLane> lanes;
  WritebackBuffer writebacks;
  KeyTurns turns;  // accesses resuming from a conflict wait at one instant plan in key order
  std::size_t inside = 0;            // b_transport calls in progress
  std::uint64_t conflict_waits = 0;  // times an access waited for another's memory access
  ErrorLog rejections;               // accesses answered with an error response
  ErrorLog lost_writebacks;          // posted write-backs memory answered with an error
};

// One home's share of an access spanning both homes, served in a lane of its own.
struct L2Cache::Piece {
  tlm::tlm_generic_payload payload;
  Span span;
  sc_core::sc_time arrival;
  PieceJoin* join = nullptr;
};

// What an access spanning both homes waits on while its other pieces are in lanes.
struct L2Cache::PieceJoin : Join {};

L2Cache::L2Cache(sc_core::sc_module_name name, const L2Config& config, SimMode mode,
                 std::uint64_t window_base, std::uint64_t window_size, std::uint16_t gpu)
    : sc_core::sc_module(name),
      in("in"),
      out("out"),
      gpu_(gpu),
      sm_group_(config.partition_sm_group),
      granule_shift_(static_cast<unsigned>(
          __builtin_ctzll(static_cast<std::uint64_t>(config.partition_granule_bytes)))) {
  l2::validate(config);
  if (window_size == 0) {
    throw ConfigError(std::string(this->name()) + ": the cached window is empty");
  }
  if (config.partitions == 1) {
    parts_.push_back(std::make_unique<Impl>(*this, config, mode, window_base, window_size, 0,
                                            stats_, granule_shift_));
  } else {
    const L2Config part = l2::partition_config(config);
    l2::validate(part);
    part_stats_.resize(static_cast<std::size_t>(config.partitions));
    for (int p = 0; p < config.partitions; ++p) {
      parts_.push_back(std::make_unique<Impl>(*this, part, mode, window_base, window_size, p,
                                              part_stats_[static_cast<std::size_t>(p)],
                                              granule_shift_));
    }
    parts_[0]->far = parts_[1].get();
    parts_[1]->far = parts_[0].get();
    pieces_ = std::make_unique<LanePool<Piece>>(Impl::lane_prefix(this->name(), 0) + "_pieces",
                                                [this](Piece& piece) { serve_piece(piece); });
  }
  in.register_b_transport(this, &L2Cache::b_transport);
  in.register_transport_dbg(this, &L2Cache::transport_dbg);
}

L2Cache::~L2Cache() = default;

int L2Cache::home_of(std::uint64_t address) const {
  return parts_[0]->home_of(address - parts_[0]->base);
}

int L2Cache::partition_of(const T3Extension& extension, std::uint64_t address) const {
  if (extension.unit_kind == UnitKind::Sm && extension.origin.gpu == gpu_) {
    return static_cast<int>((extension.origin.unit / sm_group_) % partitions());
  }
  return home_of(address);
}

void L2Cache::b_transport(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay) {
  Impl& first = *parts_[0];
  if (partitions() == 1) {
    first.transport(payload, delay);
    return;
  }
  if (!first.admit(payload)) return;
  const T3Extension extension = T3Extension::get(payload);
  if (extension.op == Op::Read && extension.cache_hint == CacheHint::Cached) {
    // A cached read is served where its requester reaches the L2 (one not attached to a side at
    // the home of its first byte); that partition fills the lines homed in the other from there,
    // all in flight together, as one partition's misses are.
    parts_[static_cast<std::size_t>(partition_of(extension, payload.get_address()))]->serve_checked(
        payload, delay);
    return;
  }
  to_homes(payload, delay);
}

// Stores, updates and uncached accesses go to the home partition of each granule they touch
// (consecutive granules of one home as one piece). The pieces all leave at the access's arrival,
// together: the first in this thread, the others in lanes of their own, and the access completes
// with the last. The hardware's requests are 32 B sectors, each sent to its own home at once; the
// model's coarse requests (up to 64 KiB) are split at the granules, and their pieces must not
// queue one behind the other.
void L2Cache::to_homes(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay) {
  const sc_core::sc_time arrival = sc_core::sc_time_stamp() + delay;
  const std::uint64_t base = parts_[0]->base;
  const std::uint64_t begin = payload.get_address() - base;
  const std::uint64_t end = begin + payload.get_data_length();
  const std::uint64_t granule = std::uint64_t{1} << granule_shift_;
  std::vector<Span> spans;
  for (std::uint64_t b = begin; b < end;) {
    const int home = parts_[0]->home_of(b);
    std::uint64_t e = std::min(end, (b | (granule - 1)) + 1);
    while (e < end && parts_[0]->home_of(e) == home) e = std::min(end, e + granule);
    spans.push_back({b, e, home});
    b = e;
  }
  PieceJoin join;
  join.latest = arrival;
  if (spans.size() == 1) {
    const sc_core::sc_time completion = serve_at_home(payload, spans.front(), arrival);
    join.add(completion, payload.get_response_status());
  } else {
    for (std::size_t k = 1; k < spans.size(); ++k) {
      Piece& piece = pieces_->acquire();
      shape_piece(piece.payload, payload, spans[k]);
      piece.span = spans[k];
      piece.arrival = arrival;
      piece.join = &join;
      ++join.remaining;
      pieces_->start(piece);
    }
    tlm::tlm_generic_payload first;
    shape_piece(first, payload, spans.front());
    const sc_core::sc_time completion = serve_at_home(first, spans.front(), arrival);
    join.add(completion, first.get_response_status());
    while (join.remaining > 0) sc_core::wait(join.done);
  }
  const sc_core::sc_time now = sc_core::sc_time_stamp();
  delay = join.latest > now ? join.latest - now : sc_core::SC_ZERO_TIME;
  payload.set_response_status(join.error);
}

// `piece` becomes the part `span` of `whole`, with its extension.
void L2Cache::shape_piece(tlm::tlm_generic_payload& piece, const tlm::tlm_generic_payload& whole,
                          const Span& span) const {
  const std::uint64_t begin = whole.get_address() - parts_[0]->base;
  unsigned char* data = whole.get_data_ptr();
  const auto length = static_cast<unsigned>(span.end - span.begin);
  piece.set_address(whole.get_address() + (span.begin - begin));
  piece.set_data_ptr(data ? data + (span.begin - begin) : nullptr);
  piece.set_data_length(length);
  piece.set_streaming_width(length);
  piece.set_byte_enable_ptr(nullptr);
  piece.set_byte_enable_length(0);
  piece.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  T3Extension::set(piece, T3Extension::get(whole));
}

// Serves `piece` (the part `span` of an access arriving at `arrival`) at its home and, for a
// store or bypass, drops the other partition's copy of it; returns the piece's completion.
sc_core::sc_time L2Cache::serve_at_home(tlm::tlm_generic_payload& piece, const Span& span,
                                        sc_core::sc_time arrival) {
  const T3Extension extension = T3Extension::get(piece);
  const bool bypass = extension.op == Op::Update || extension.cache_hint == CacheHint::Uncached;
  const bool invalidates = extension.op != Op::Read || bypass;
  const sc_core::sc_time now = sc_core::sc_time_stamp();
  sc_core::sc_time delay = arrival > now ? arrival - now : sc_core::SC_ZERO_TIME;
  parts_[static_cast<std::size_t>(span.home)]->serve_checked(piece, delay);
  const sc_core::sc_time completion = sc_core::sc_time_stamp() + delay;
  if (invalidates) {
    parts_[static_cast<std::size_t>(1 - span.home)]->drop(span.begin, span.end, bypass, extension);
  }
  return completion;
}

// A lane's piece: served, added to its access's join, which it wakes if it was the last.
void L2Cache::serve_piece(Piece& piece) {
  PieceJoin& join = *piece.join;
  const sc_core::sc_time completion = serve_at_home(piece.payload, piece.span, piece.arrival);
  join.add(completion, piece.payload.get_response_status());
  pieces_->release(piece);
  if (--join.remaining == 0) join.done.notify();
}

unsigned L2Cache::transport_dbg(tlm::tlm_generic_payload& payload) {
  if (partitions() == 1) return parts_[0]->debug(payload);
  Impl& first = *parts_[0];
  const std::uint64_t address = payload.get_address();
  if (address < first.base || address - first.base >= first.size) return 0;
  const unsigned bytes = out->transport_dbg(payload);
  for (const auto& part : parts_) part->overlay(payload, bytes, Impl::Homes::NotHomed);
  for (const auto& part : parts_) part->overlay(payload, bytes, Impl::Homes::Homed);
  return bytes;
}

const L2Stats& L2Cache::stats() const {
  if (partitions() == 1) return stats_;
  stats_ = L2Stats{};
  const auto add = [](L2Stats::PerClass& sum, const L2Stats::PerClass& part) {
    for (std::size_t k = 0; k < sum.size(); ++k) sum[k] += part[k];
  };
  for (const L2Stats& part : part_stats_) {
    add(stats_.read_hit_sectors, part.read_hit_sectors);
    add(stats_.read_miss_sectors, part.read_miss_sectors);
    add(stats_.write_hit_sectors, part.write_hit_sectors);
    add(stats_.write_miss_sectors, part.write_miss_sectors);
    add(stats_.bypass_bytes, part.bypass_bytes);
    add(stats_.fill_bytes, part.fill_bytes);
    add(stats_.writeback_bytes, part.writeback_bytes);
    add(stats_.evictions, part.evictions);
    add(stats_.unallocated_bytes, part.unallocated_bytes);
  }
  return stats_;
}

std::size_t L2Cache::pending() const {
  std::size_t sum = 0;
  for (const auto& part : parts_) sum += part->inside + part->writebacks.in_flight;
  return sum;
}

std::uint64_t L2Cache::sets() const {
  return parts_[0]->geometry.sets;
}

int L2Cache::bank_of(std::uint64_t address) const {
  const int home = home_of(address);
  const Impl& part = *parts_[static_cast<std::size_t>(home)];
  return home * static_cast<int>(part.geometry.banks) + part.calendar.bank_of(address - part.base);
}

nlohmann::json L2Cache::report() const {
  const Impl& impl = *parts_[0];
  const L2Stats& all = stats();
  nlohmann::json j;
  j["mode"] = impl.functional ? "functional" : "timing";
  j["sets"] = impl.geometry.sets;
  j["ways"] = impl.geometry.ways;
  j["block_lines"] = impl.geometry.bank_lines;
  nlohmann::json total = nlohmann::json::object();
  std::uint64_t hits = 0, lookups = 0;
  for (TrafficClass c : {TrafficClass::Compute, TrafficClass::Communication}) {
    const int k = index(c);
    nlohmann::json o;
    o["read_hit_sectors"] = all.read_hit_sectors[k];
    o["read_miss_sectors"] = all.read_miss_sectors[k];
    o["write_hit_sectors"] = all.write_hit_sectors[k];
    o["write_miss_sectors"] = all.write_miss_sectors[k];
    o["bypass_bytes"] = all.bypass_bytes[k];
    o["fill_bytes"] = all.fill_bytes[k];
    o["writeback_bytes"] = all.writeback_bytes[k];
    o["evictions"] = all.evictions[k];
    o["unallocated_bytes"] = all.unallocated_bytes[k];
    const std::uint64_t h = all.read_hit_sectors[k] + all.write_hit_sectors[k];
    const std::uint64_t n = h + all.read_miss_sectors[k] + all.write_miss_sectors[k];
    o["hit_rate"] = n > 0 ? static_cast<double>(h) / static_cast<double>(n) : 0.0;
    for (auto it = o.begin(); it != o.end(); ++it) {
      if (it.key() == "hit_rate") continue;
      total[it.key()] = total.value(it.key(), std::uint64_t{0}) + it->get<std::uint64_t>();
    }
    hits += h;
    lookups += n;
    j["classes"][to_string(c)] = o;
  }
  total["hit_rate"] = lookups > 0 ? static_cast<double>(hits) / static_cast<double>(lookups) : 0.0;
  j["total"] = total;
  j["hit_rate"] = total["hit_rate"];
  std::uint64_t rejected = 0, conflict_waits = 0, entries = 0, max_used = 0, stalls = 0;
  std::uint64_t lost = 0;
  double stall_ns = 0;
  for (const auto& part : parts_) {
    rejected += part->rejections.count();
    conflict_waits += part->conflict_waits;
    entries += part->writebacks.capacity;
    max_used = std::max(max_used, part->writebacks.max_used);
    stalls += part->writebacks.stalls;
    stall_ns += part->writebacks.stall_time.to_seconds() * 1e9;
    lost += part->lost_writebacks.count();
  }
  j["rejected"] = rejected;
  j["conflict_waits"] = conflict_waits;
  j["writeback_buffer"] = {
      {"entries", entries}, {"max_used", max_used}, {"stalls", stalls}, {"stall_ns", stall_ns}};
  j["lost_writebacks"] = lost;
  j["pending"] = pending();
  if (partitions() > 1) j["partitions"] = partitions_report();
  return j;
}

// Per partition: the lookups and fills each served, what crossed the fabric and the copies
// stores invalidated.
nlohmann::json L2Cache::partitions_report() const {
  nlohmann::json parts = nlohmann::json::array();
  for (std::size_t p = 0; p < parts_.size(); ++p) {
    const L2Stats& s = part_stats_[p];
    const Impl& part = *parts_[p];
    std::uint64_t hit = 0, miss = 0, fill = 0, fabric = 0;
    for (int k = 0; k < kTrafficClasses; ++k) {
      hit += s.read_hit_sectors[k] + s.write_hit_sectors[k];
      miss += s.read_miss_sectors[k] + s.write_miss_sectors[k];
      fill += s.fill_bytes[k];
      fabric += part.fabric_fill_bytes[k];
    }
    parts.push_back({{"hit_sectors", hit},
                     {"miss_sectors", miss},
                     {"memory_fill_bytes", fill},
                     {"fabric_fill_bytes", fabric},
                     {"dropped_copy_sectors", part.dropped_sectors}});
  }
  return parts;
}

}  // namespace t3
