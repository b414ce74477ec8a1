#include "models/l2/l2_cache.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "tlm_interconnect/address_map.h"

namespace t3 {

namespace {

constexpr const char* kMsgType = "t3/l2";
constexpr std::uint64_t kNoLine = ~0ull;
// Rejections are reported one by one up to this many, then only counted.
constexpr std::uint64_t kReportedRejections = 16;

int index(TrafficClass traffic_class) {
  return static_cast<int>(traffic_class);
}

// Sectors first..last (inclusive) as a mask.
std::uint64_t sector_range(unsigned first, unsigned last) {
  const unsigned count = last - first + 1;
  const std::uint64_t ones = count >= 64 ? ~0ull : (1ull << count) - 1;
  return ones << first;
}

// Calls fn(first, count) for every run of set bits of `mask`, lowest first.
template <typename Fn>
void for_each_run(std::uint64_t mask, Fn&& fn) {
  while (mask != 0) {
    const auto first = static_cast<unsigned>(__builtin_ctzll(mask));
    const std::uint64_t shifted = ~(mask >> first);
    const unsigned count =
        shifted == 0 ? 64 - first : static_cast<unsigned>(__builtin_ctzll(shifted));
    fn(first, count);
    mask &= ~sector_range(first, first + count - 1);
  }
}

unsigned popcount(std::uint64_t mask) {
  return static_cast<unsigned>(__builtin_popcountll(mask));
}

void validate(const L2Config& c) {
  if (c.line_bytes < 1 || (c.line_bytes & (c.line_bytes - 1)) != 0) {
    throw ConfigError("l2.line_bytes: " + std::to_string(c.line_bytes) + " is not a power of two");
  }
  if (c.sector_bytes < 1 || c.sector_bytes > c.line_bytes || c.line_bytes % c.sector_bytes != 0) {
    throw ConfigError("l2.sector_bytes: " + std::to_string(c.sector_bytes) +
                      " does not divide l2.line_bytes (" + std::to_string(c.line_bytes) + ")");
  }
  if (c.line_bytes / c.sector_bytes > 64) {  // valid/dirty state is one 64-bit mask per line
    throw ConfigError("l2.sector_bytes: " + std::to_string(c.sector_bytes) + " gives " +
                      std::to_string(c.line_bytes / c.sector_bytes) +
                      " sectors per line; at most 64 are supported");
  }
  if (c.ways < 1) throw ConfigError("l2.ways: must be at least 1");
  const auto set_bytes = static_cast<std::uint64_t>(c.line_bytes * c.ways);
  if (c.size_bytes < set_bytes || c.size_bytes % set_bytes != 0) {
    throw ConfigError("l2.size_bytes: " + std::to_string(c.size_bytes) +
                      " is not a positive multiple of l2.line_bytes x l2.ways (" +
                      std::to_string(set_bytes) + ")");
  }
  if (c.banks < 1) throw ConfigError("l2.banks: must be at least 1");
  if (!(c.bank_bytes_per_clock > 0)) throw ConfigError("l2.bank_bytes_per_clock: must be positive");
  if (!(c.clock_GHz > 0)) throw ConfigError("l2.clock_GHz: must be positive");
  if (!(c.hit_latency_ns >= 0) || !std::isfinite(c.hit_latency_ns)) {
    throw ConfigError("l2.hit_latency_ns: must be a finite non-negative number");
  }
}

}  // namespace

// Concurrency: a b_transport runs in its caller's thread and may wait inside the memory
// controller, so other callers run meanwhile. Every memory access the L2 has in flight is a
// Transit that locks the sectors it covers; an access first waits (holding nothing) until no
// lock overlaps its sectors, then plans everything in one atomic step (no wait: lookup, bank
// reservation, replacement, data that needs no memory, lock registration), then performs its
// memory accesses, which only ever wait in the memory controller. So nothing holds a lock while
// waiting for one: no deadlock, and memory sees every sector's accesses in a coherent order.
//
// Timing: an access arriving at T (time stamp + annotated delay) reserves each touched line's
// bank from max(T, bank free) for bytes touched / bank bandwidth; its lookup is done at the
// latest bank end + hit latency, when a hit completes. Memory accesses are issued from then on,
// one after another in the caller's thread (write-backs first, then one read per contiguous run
// of missing sectors), so a miss costs memory's latency on top of a hit and a dirty eviction one
// more memory round trip. An access that waited for another's fill keeps its bank slot from T
// and completes at max(lookup done, that fill's completion): no second fetch. b_transport returns
// the time from sc_time_stamp() to completion as the delay.
struct L2Cache::Impl {
  enum class Kind : std::uint8_t { Fill, Writeback, Direct, Bypass };

  struct Transit {
    sc_core::sc_event done;  // notified when the memory access is complete and the locks dropped
    Kind kind = Kind::Fill;
    bool write = false;                // direct accesses: towards memory
    std::uint64_t begin = 0, end = 0;  // window offsets
    sc_core::sc_time ready;            // completion of its memory access
    int waiters = 0;       // accesses waiting on `done`; they read `ready` when they wake
    bool retired = false;  // finished; back to the pool once the last waiter has woken
    std::vector<unsigned char> buffer;  // functional: write-back data, fill staging
    tlm::tlm_generic_payload payload;   // the memory request, reused
  };
  struct Lock {
    std::uint64_t line;
    std::uint64_t mask;  // sectors
    Transit* transit;
  };
  struct Frame {
    std::uint64_t line = kNoLine;  // line index in the window (the tag)
    std::uint64_t valid = 0, dirty = 0;
    std::uint64_t pending = 0;  // sectors a fill is bringing in; pins the frame
    std::uint64_t used = 0;     // LRU stamp
  };
  // Scratch of one b_transport, pooled (callers interleave at their waits).
  struct Access {
    std::vector<Transit*> writebacks;
    std::vector<Transit*> reads;  // fills and direct accesses, address order
  };

  Impl(L2Cache& owner, const L2Config& config, SimMode mode, std::uint64_t base, std::uint64_t size)
      : owner(owner),
        config(config),
        functional(mode == SimMode::Functional),
        base(base),
        size(size),
        stats(owner.stats_),
        line_bytes(static_cast<std::uint64_t>(config.line_bytes)),
        sector_bytes(static_cast<std::uint64_t>(config.sector_bytes)),
        sectors_per_line(static_cast<unsigned>(config.line_bytes / config.sector_bytes)),
        ways(static_cast<std::uint64_t>(config.ways)),
        sets(config.size_bytes / (line_bytes * ways)),
        banks(static_cast<std::uint64_t>(config.banks)) {
    const double resolution_ns = sc_core::sc_get_time_resolution().to_seconds() * 1e9;
    units_per_byte = 1.0 / (config.bank_bytes_per_clock * config.clock_GHz) / resolution_ns;
    hit_latency = sc_core::sc_time(config.hit_latency_ns, sc_core::SC_NS);
    full_line = sector_range(0, sectors_per_line - 1);
    frames.resize(sets * ways);
    locks.resize(sets);
    bank_free.resize(banks);
    // Line data exists only in functional mode; the OS commits the pages as lines are used.
    if (functional) data.reset(new unsigned char[sets * ways * line_bytes]);
  }

  // ---- geometry helpers -------------------------------------------------------------------

  sc_core::sc_time bank_time(std::uint64_t bytes) const {
    return sc_core::sc_time::from_value(static_cast<sc_core::sc_time::value_type>(
        std::llround(static_cast<double>(bytes) * units_per_byte)));
  }
  // Sectors of `line` that overlap [begin, end) (window offsets).
  std::uint64_t mask_of(std::uint64_t line, std::uint64_t begin, std::uint64_t end) const {
    const std::uint64_t start = line * line_bytes;
    const std::uint64_t lo = std::max(begin, start) - start;
    const std::uint64_t hi = std::min(end, start + line_bytes) - start;
    return sector_range(static_cast<unsigned>(lo / sector_bytes),
                        static_cast<unsigned>((hi - 1) / sector_bytes));
  }
  Frame* find(std::uint64_t line) {
    Frame* set = &frames[(line % sets) * ways];
    for (std::uint64_t k = 0; k < ways; ++k) {
      if (set[k].line == line) return &set[k];
    }
    return nullptr;
  }
  unsigned char* data_of(const Frame& frame) const {
    return data.get() + static_cast<std::uint64_t>(&frame - frames.data()) * line_bytes;
  }
  // Copies the bytes of sector runs `mask` of `frame` that fall in [lo, hi) of the line between
  // the frame and `buffer`, which holds window bytes from `buffer_begin` on.
  void copy_sectors(Frame& frame, std::uint64_t mask, std::uint64_t lo, std::uint64_t hi,
                    unsigned char* buffer, std::uint64_t buffer_begin, bool into_frame) {
    const std::uint64_t start = frame.line * line_bytes;
    for_each_run(mask, [&](unsigned first, unsigned count) {
      const std::uint64_t b = std::max<std::uint64_t>(lo, first * sector_bytes);
      const std::uint64_t e = std::min<std::uint64_t>(hi, (first + count) * sector_bytes);
      if (b >= e) return;
      unsigned char* line_data = data_of(frame) + b;
      unsigned char* other = buffer + (start + b - buffer_begin);
      if (into_frame) {
        std::memcpy(line_data, other, e - b);
      } else {
        std::memcpy(other, line_data, e - b);
      }
    });
  }

  // ---- pools and locks --------------------------------------------------------------------

  Transit& acquire_transit(Kind kind, std::uint64_t begin, std::uint64_t end) {
    Transit* transit;
    if (free_transits.empty()) {
      transits.push_back(std::make_unique<Transit>());
      transit = transits.back().get();
    } else {
      transit = free_transits.back();
      free_transits.pop_back();
    }
    transit->kind = kind;
    transit->write = false;
    transit->begin = begin;
    transit->end = end;
    transit->ready = sc_core::SC_ZERO_TIME;
    transit->waiters = 0;
    transit->retired = false;
    transit->buffer.clear();
    return *transit;
  }
  Access& acquire_access() {
    Access* access;
    if (free_accesses.empty()) {
      accesses.push_back(std::make_unique<Access>());
      access = accesses.back().get();
    } else {
      access = free_accesses.back();
      free_accesses.pop_back();
    }
    access->writebacks.clear();
    access->reads.clear();
    return *access;
  }

  void lock(Transit& transit) {
    for (std::uint64_t line = transit.begin / line_bytes; line <= (transit.end - 1) / line_bytes;
         ++line) {
      locks[line % sets].push_back({line, mask_of(line, transit.begin, transit.end), &transit});
    }
  }
  // Drops the transit's locks, wakes its waiters and returns it to the pool.
  void finish(Transit& transit) {
    for (std::uint64_t line = transit.begin / line_bytes; line <= (transit.end - 1) / line_bytes;
         ++line) {
      auto& set = locks[line % sets];
      for (std::size_t k = 0; k < set.size();) {
        if (set[k].transit == &transit && set[k].line == line) {
          set[k] = set.back();
          set.pop_back();
        } else {
          ++k;
        }
      }
    }
    transit.done.notify();  // immediate: the waiters become runnable in this evaluation phase
    transit.retired = true;
    if (transit.waiters == 0) free_transits.push_back(&transit);
  }

  // Waits, holding nothing, until no transit of another access locks a sector of
  // [begin, end) -- whole lines if `bypass`, since a bypass invalidates whole lines. Bypasses do
  // not order among themselves: they meet at memory, like two initiators' stores.
  // `ready` becomes the latest completion of the transits waited for.
  void wait_for_conflicts(std::uint64_t begin, std::uint64_t end, bool bypass,
                          sc_core::sc_time& ready) {
    for (;;) {
      Transit* blocking = nullptr;
      for (std::uint64_t line = begin / line_bytes; line <= (end - 1) / line_bytes && !blocking;
           ++line) {
        const std::uint64_t mask = bypass ? full_line : mask_of(line, begin, end);
        for (const Lock& lock : locks[line % sets]) {
          if (lock.line == line && (lock.mask & mask) != 0 &&
              !(bypass && lock.transit->kind == Kind::Bypass)) {
            blocking = lock.transit;
            break;
          }
        }
      }
      if (!blocking) return;
      ++conflict_waits;
      ++blocking->waiters;
      sc_core::wait(blocking->done);
      ready = std::max(ready, blocking->ready);
      if (--blocking->waiters == 0 && blocking->retired) free_transits.push_back(blocking);
    }
  }

  // ---- planning (atomic) ------------------------------------------------------------------

  // Queues the dirty sectors of `frame` for write-back; runs contiguous with the previous one
  // merge into one memory write.
  void add_writeback(Access& access, const Frame& frame, int cls) {
    const std::uint64_t start = frame.line * line_bytes;
    for_each_run(frame.dirty, [&](unsigned first, unsigned count) {
      const std::uint64_t b = start + first * sector_bytes;
      const std::uint64_t e = b + count * sector_bytes;
      Transit* transit = nullptr;
      if (!access.writebacks.empty() && access.writebacks.back()->end == b) {
        transit = access.writebacks.back();
      } else {
        transit = &acquire_transit(Kind::Writeback, b, b);
        access.writebacks.push_back(transit);
      }
      if (functional) {
        const unsigned char* from = data_of(frame) + first * sector_bytes;
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
      if (last->kind == kind && last->write == write && last->end == b) transit = last;
    }
    if (!transit) {
      transit = &acquire_transit(kind, b, b);
      transit->write = write;
      access.reads.push_back(transit);
    }
    transit->end = e;
    if (functional && kind == Kind::Fill) transit->buffer.resize(e - transit->begin);
  }

  // A frame for `line`: an empty way, else the least recently used way without a fill in
  // flight (its dirty sectors queued for write-back). nullptr if every way has a fill in flight.
  Frame* allocate(Access& access, std::uint64_t line, int cls) {
    Frame* set = &frames[(line % sets) * ways];
    Frame* victim = nullptr;
    for (std::uint64_t k = 0; k < ways; ++k) {
      Frame& frame = set[k];
      if (frame.pending != 0) continue;
      if (frame.valid == 0) {
        victim = &frame;
        break;
      }
      if (!victim || frame.used < victim->used) victim = &frame;
    }
    if (!victim) return nullptr;
    if (victim->valid != 0) {
      ++stats.evictions[cls];
      if (victim->dirty != 0) add_writeback(access, *victim, cls);
    }
    victim->line = line;
    victim->valid = victim->dirty = 0;
    return victim;
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
    owner.out->b_transport(m, delay);
    transit.ready = sc_core::sc_time_stamp() + delay;
    cursor = transit.ready;
    if (m.is_response_error() && error == tlm::TLM_OK_RESPONSE) error = m.get_response_status();
  }

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
    if (rejected++ < kReportedRejections) {
      SC_REPORT_INFO(kMsgType, (std::string(owner.name()) + ": " + why).c_str());
    }
  }

  void transport(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay) {
    const sc_core::sc_time arrival = sc_core::sc_time_stamp() + delay;
    const std::uint64_t address = payload.get_address();
    const std::uint64_t length = payload.get_data_length();
    const std::uint64_t offset = address - base;
    if (address < base || offset >= size || length > size - offset) {
      reject(payload, tlm::TLM_ADDRESS_ERROR_RESPONSE,
             "access of " + std::to_string(length) + " bytes at " + hex(address) +
                 " leaves the L2 window [" + hex(base) + ", " + hex(base + size) + ")");
      return;
    }
    if (const std::string reason = T3Extension::check(payload); !reason.empty()) {
      reject(payload, tlm::TLM_COMMAND_ERROR_RESPONSE, reason + " at " + hex(address));
      return;
    }
    if (payload.get_byte_enable_ptr() != nullptr) {
      reject(payload, tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE, "byte enables are not supported");
      return;
    }
    if (payload.get_streaming_width() != length) {
      reject(payload, tlm::TLM_BURST_ERROR_RESPONSE, "streaming width differs from data length");
      return;
    }
    if (functional && length > 0 && payload.get_data_ptr() == nullptr) {
      reject(payload, tlm::TLM_GENERIC_ERROR_RESPONSE, "functional access without data");
      return;
    }
    if (length == 0) {
      payload.set_response_status(tlm::TLM_OK_RESPONSE);
      return;
    }
    const T3Extension extension = T3Extension::get(payload);
    ++inside;
    if (extension.op == Op::Update || extension.cache_hint == CacheHint::Uncached) {
      bypass(payload, delay, extension, offset, length, arrival);
    } else {
      cached(payload, delay, extension, offset, length, arrival);
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
    wait_for_conflicts(offset, end, true, ready);

    Access& access = acquire_access();
    Transit& self = acquire_transit(Kind::Bypass, offset, end);
    for (std::uint64_t line = offset / line_bytes; line <= (end - 1) / line_bytes; ++line) {
      Frame* frame = find(line);
      if (!frame) continue;
      assert(frame->pending == 0);  // wait_for_conflicts waited for every fill of the line
      if (frame->dirty != 0) add_writeback(access, *frame, cls);
      *frame = Frame{};
    }
    lock(self);
    for (Transit* transit : access.writebacks) lock(*transit);
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
    free_accesses.push_back(&access);
  }

  void cached(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay,
              const T3Extension& extension, std::uint64_t offset, std::uint64_t length,
              sc_core::sc_time arrival) {
    const bool write = extension.op == Op::Write;
    const int cls = index(extension.traffic_class);
    const std::uint64_t end = offset + length;
    unsigned char* data = functional ? payload.get_data_ptr() : nullptr;
    sc_core::sc_time ready = sc_core::SC_ZERO_TIME;
    wait_for_conflicts(offset, end, false, ready);

    // Plan: atomic from here to the lock registration.
    Access& access = acquire_access();
    sc_core::sc_time bank_done = arrival;
    for (std::uint64_t line = offset / line_bytes; line <= (end - 1) / line_bytes; ++line) {
      const std::uint64_t start = line * line_bytes;
      const std::uint64_t lo = std::max(offset, start) - start;
      const std::uint64_t hi = std::min(end, start + line_bytes) - start;
      const std::uint64_t touched = sector_range(static_cast<unsigned>(lo / sector_bytes),
                                                 static_cast<unsigned>((hi - 1) / sector_bytes));
      // The bank moves the bytes touched; the calendar orders reservations as they are made.
      sc_core::sc_time& bank = bank_free[line % banks];
      bank = std::max(bank, arrival) + bank_time(hi - lo);
      bank_done = std::max(bank_done, bank);

      Frame* frame = find(line);
      if (!frame) frame = allocate(access, line, cls);
      auto& hit_sectors = write ? stats.write_hit_sectors : stats.read_hit_sectors;
      auto& miss_sectors = write ? stats.write_miss_sectors : stats.read_miss_sectors;
      if (!frame) {
        // Every way has a fill in flight (only with more callers than ways on one set):
        // serve these bytes from memory without allocating rather than wait for a way.
        miss_sectors[cls] += popcount(touched);
        stats.unallocated_bytes[cls] += hi - lo;
        add_read(access, Kind::Direct, start + lo, start + hi, write);
        continue;
      }
      frame->used = ++clock;
      const std::uint64_t hits = touched & frame->valid;
      hit_sectors[cls] += popcount(hits);
      miss_sectors[cls] += popcount(touched & ~frame->valid);
      std::uint64_t fetch;
      if (!write) {
        fetch = touched & ~frame->valid;
        if (data) copy_sectors(*frame, hits, lo, hi, data, offset, false);
      } else {
        // Write-allocate: sectors written whole need no fetch; a partial one is fetched first.
        const std::uint64_t first_full = (lo + sector_bytes - 1) / sector_bytes;
        const std::uint64_t end_full = hi / sector_bytes;
        const std::uint64_t full = end_full > first_full
                                       ? sector_range(static_cast<unsigned>(first_full),
                                                      static_cast<unsigned>(end_full - 1))
                                       : 0;
        fetch = touched & ~frame->valid & ~full;
        const std::uint64_t written = touched & ~fetch;
        if (data) copy_sectors(*frame, written, lo, hi, data, offset, true);
        frame->valid |= written;
        frame->dirty |= written;
      }
      if (fetch != 0) {
        frame->pending |= fetch;
        for_each_run(fetch, [&](unsigned first, unsigned count) {
          add_read(access, Kind::Fill, start + first * sector_bytes,
                   start + (first + count) * sector_bytes, false);
        });
      }
    }
    for (Transit* transit : access.writebacks) lock(*transit);
    for (Transit* transit : access.reads) lock(*transit);

    // Memory: write-backs first, then fills and direct accesses in address order, issued once
    // the lookup is done (a miss costs the hit latency plus memory's).
    const sc_core::sc_time lookup_done = bank_done + hit_latency;
    sc_core::sc_time cursor = std::max(lookup_done, ready);
    tlm::tlm_response_status error = tlm::TLM_OK_RESPONSE;
    write_back(access, extension, cursor, error);
    for (Transit* transit : access.reads) {
      if (transit->kind == Kind::Direct) {
        issue(*transit, extension, transit->write,
              data ? data + (transit->begin - offset) : nullptr, cursor, error);
      } else {
        tlm::tlm_response_status fill_error = tlm::TLM_OK_RESPONSE;
        issue(*transit, extension, false, functional ? transit->buffer.data() : nullptr, cursor,
              fill_error);
        install(*transit, fill_error == tlm::TLM_OK_RESPONSE, write, data, offset, end, cls);
        if (error == tlm::TLM_OK_RESPONSE) error = fill_error;
      }
      finish(*transit);
    }
    free_accesses.push_back(&access);

    const sc_core::sc_time completion = std::max({lookup_done, ready, cursor});
    const sc_core::sc_time now = sc_core::sc_time_stamp();
    delay = completion > now ? completion - now : sc_core::SC_ZERO_TIME;
    payload.set_response_status(error);
  }

  // A fill came back: its sectors become valid (or, on error, stay invalid) and the access that
  // issued it takes its bytes (read) or merges its partial sectors (write).
  void install(Transit& fill, bool ok, bool write, unsigned char* data, std::uint64_t offset,
               std::uint64_t end, int cls) {
    if (ok) stats.fill_bytes[cls] += fill.end - fill.begin;
    for (std::uint64_t line = fill.begin / line_bytes; line <= (fill.end - 1) / line_bytes;
         ++line) {
      Frame* frame = find(line);
      assert(frame && "a frame with a fill in flight is never replaced");
      const std::uint64_t mask = mask_of(line, fill.begin, fill.end);
      frame->pending &= ~mask;
      if (!ok) continue;
      frame->valid |= mask;
      const std::uint64_t start = line * line_bytes;
      if (functional) {
        copy_sectors(*frame, mask, 0, line_bytes, fill.buffer.data(), fill.begin, true);
      }
      if (write) {
        if (data) {
          const std::uint64_t lo = std::max(offset, start) - start;
          const std::uint64_t hi = std::min(end, start + line_bytes) - start;
          copy_sectors(*frame, mask, lo, hi, data, offset, true);
        }
        frame->dirty |= mask;
      }
    }
    if (ok && !write && data) {
      const std::uint64_t b = std::max(fill.begin, offset);
      const std::uint64_t e = std::min(fill.end, end);
      std::memcpy(data + (b - offset), fill.buffer.data() + (b - fill.begin), e - b);
    }
  }

  // ---- debug ------------------------------------------------------------------------------

  unsigned debug(tlm::tlm_generic_payload& payload) {
    const std::uint64_t address = payload.get_address();
    if (address < base || address - base >= size) return 0;
    const unsigned bytes = owner.out->transport_dbg(payload);
    if (!functional || bytes == 0 || payload.get_data_ptr() == nullptr) return bytes;
    const bool write = payload.is_write();
    if (!write && !payload.is_read()) return bytes;
    const std::uint64_t offset = address - base;
    const std::uint64_t end = std::min(offset + bytes, size);
    unsigned char* data = payload.get_data_ptr();
    for (std::uint64_t line = offset / line_bytes; line <= (end - 1) / line_bytes; ++line) {
      const std::uint64_t start = line * line_bytes;
      const std::uint64_t lo = std::max(offset, start), hi = std::min(end, start + line_bytes);
      // Data on its way to memory is not in memory yet; a fill's staging copy must not bring
      // back what a debug write has just replaced.
      for (const Lock& lock : locks[line % sets]) {
        Transit& t = *lock.transit;
        if (lock.line != line || !(t.kind == Kind::Writeback || (write && t.kind == Kind::Fill))) {
          continue;
        }
        const std::uint64_t b = std::max(lo, t.begin), e = std::min(hi, t.end);
        if (b >= e) continue;
        if (write) {
          std::memcpy(t.buffer.data() + (b - t.begin), data + (b - offset), e - b);
        } else {
          std::memcpy(data + (b - offset), t.buffer.data() + (b - t.begin), e - b);
        }
      }
      if (Frame* frame = find(line); frame && frame->valid != 0) {
        copy_sectors(*frame, frame->valid, lo - start, hi - start, data, offset, write);
      }
    }
    return bytes;
  }

  L2Cache& owner;
  const L2Config config;
  const bool functional;
  const std::uint64_t base;
  const std::uint64_t size;
  L2Stats& stats;
  const std::uint64_t line_bytes;
  const std::uint64_t sector_bytes;
  const unsigned sectors_per_line;
  const std::uint64_t ways;
  const std::uint64_t sets;
  const std::uint64_t banks;
  std::uint64_t full_line = 0;
  double units_per_byte = 0;  // time-resolution units of bank time per byte
  sc_core::sc_time hit_latency;

  std::vector<Frame> frames;                // [set * ways + way]
  std::unique_ptr<unsigned char[]> data;    // functional only, line_bytes per frame
  std::vector<std::vector<Lock>> locks;     // per set
  std::vector<sc_core::sc_time> bank_free;  // reservation calendar per bank
  std::uint64_t clock = 0;                  // LRU stamps
  std::vector<std::unique_ptr<Transit>> transits;
  std::vector<Transit*> free_transits;
  std::vector<std::unique_ptr<Access>> accesses;
  std::vector<Access*> free_accesses;
  std::size_t inside = 0;
  std::uint64_t conflict_waits = 0;  // times an access waited for another's memory access
  std::uint64_t rejected = 0;
};

L2Cache::L2Cache(sc_core::sc_module_name name, const L2Config& config, SimMode mode,
                 std::uint64_t window_base, std::uint64_t window_size)
    : sc_core::sc_module(name), in("in"), out("out") {
  validate(config);
  if (window_size == 0) {
    throw ConfigError(std::string(this->name()) + ": the cached window is empty");
  }
  impl_ = std::make_unique<Impl>(*this, config, mode, window_base, window_size);
  in.register_b_transport(this, &L2Cache::b_transport);
  in.register_transport_dbg(this, &L2Cache::transport_dbg);
}

L2Cache::~L2Cache() = default;

void L2Cache::b_transport(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay) {
  impl_->transport(payload, delay);
}

unsigned L2Cache::transport_dbg(tlm::tlm_generic_payload& payload) {
  return impl_->debug(payload);
}

std::size_t L2Cache::pending() const {
  return impl_->inside;
}

std::uint64_t L2Cache::sets() const {
  return impl_->sets;
}

int L2Cache::bank_of(std::uint64_t address) const {
  return static_cast<int>(((address - impl_->base) / impl_->line_bytes) % impl_->banks);
}

nlohmann::json L2Cache::report() const {
  const Impl& impl = *impl_;
  nlohmann::json j;
  j["mode"] = impl.functional ? "functional" : "timing";
  j["sets"] = impl.sets;
  j["ways"] = impl.ways;
  nlohmann::json total = nlohmann::json::object();
  std::uint64_t hits = 0, lookups = 0;
  for (TrafficClass c : {TrafficClass::Compute, TrafficClass::Communication}) {
    const int k = index(c);
    nlohmann::json o;
    o["read_hit_sectors"] = stats_.read_hit_sectors[k];
    o["read_miss_sectors"] = stats_.read_miss_sectors[k];
    o["write_hit_sectors"] = stats_.write_hit_sectors[k];
    o["write_miss_sectors"] = stats_.write_miss_sectors[k];
    o["bypass_bytes"] = stats_.bypass_bytes[k];
    o["fill_bytes"] = stats_.fill_bytes[k];
    o["writeback_bytes"] = stats_.writeback_bytes[k];
    o["evictions"] = stats_.evictions[k];
    o["unallocated_bytes"] = stats_.unallocated_bytes[k];
    const std::uint64_t h = stats_.read_hit_sectors[k] + stats_.write_hit_sectors[k];
    const std::uint64_t n = h + stats_.read_miss_sectors[k] + stats_.write_miss_sectors[k];
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
  j["rejected"] = impl.rejected;
  j["conflict_waits"] = impl.conflict_waits;
  j["pending"] = pending();
  return j;
}

}  // namespace t3
