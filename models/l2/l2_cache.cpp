#include "models/l2/l2_cache.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

#include "tlm_interconnect/address_map.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#if defined(__GNUC__)
#define T3_L2_INLINE __attribute__((always_inline)) inline
#else
#define T3_L2_INLINE inline
#endif

namespace t3 {

namespace {

constexpr const char* kMsgType = "t3/l2";
constexpr std::uint64_t kNoLine = ~0ull;
// Tag-array entry of an empty way (and of the padding after the last way of a set).
constexpr std::uint32_t kEmptyTag = ~0u;
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

// Set bits of `mask`. SWAR: without -mpopcnt, __builtin_popcountll is a call into libgcc.
inline unsigned popcount(std::uint64_t mask) {
  mask = mask - ((mask >> 1) & 0x5555555555555555ull);
  mask = (mask & 0x3333333333333333ull) + ((mask >> 2) & 0x3333333333333333ull);
  mask = (mask + (mask >> 4)) & 0x0f0f0f0f0f0f0f0full;
  return static_cast<unsigned>((mask * 0x0101010101010101ull) >> 56);
}

// log2 of a power of two.
unsigned log2_of(std::uint64_t power_of_two) {
  return static_cast<unsigned>(__builtin_ctzll(power_of_two));
}

void validate(const L2Config& c) {
  if (c.line_bytes < 1 || (c.line_bytes & (c.line_bytes - 1)) != 0) {
    throw ConfigError("l2.line_bytes: " + std::to_string(c.line_bytes) + " is not a power of two");
  }
  if (c.sector_bytes < 1 || c.sector_bytes > c.line_bytes || c.line_bytes % c.sector_bytes != 0) {
    throw ConfigError("l2.sector_bytes: " + std::to_string(c.sector_bytes) +
                      " does not divide l2.line_bytes (" + std::to_string(c.line_bytes) + ")");
  }
  if (c.line_bytes / c.sector_bytes > 64) {  // valid/dirty state is one 64-bit mask per block,
                                             // and a block is at least a line
    throw ConfigError("l2.sector_bytes: " + std::to_string(c.sector_bytes) + " gives " +
                      std::to_string(c.line_bytes / c.sector_bytes) +
                      " sectors per line; at most 64 are supported");
  }
  if (c.block_lines < 1 || (c.block_lines & (c.block_lines - 1)) != 0) {
    throw ConfigError("l2.block_lines: " + std::to_string(c.block_lines) +
                      " is not a power of two");
  }
  const std::int64_t block_bytes = c.line_bytes * c.block_lines;
  if (block_bytes / c.sector_bytes > 64) {
    throw ConfigError("l2.block_lines: " + std::to_string(c.block_lines) + " lines of " +
                      std::to_string(c.line_bytes / c.sector_bytes) + " sectors make a block of " +
                      std::to_string(block_bytes / c.sector_bytes) +
                      " sectors; at most 64 are supported");
  }
  if (c.ways < 1) throw ConfigError("l2.ways: must be at least 1");
  const auto set_bytes = static_cast<std::uint64_t>(block_bytes * c.ways);
  if (c.size_bytes < set_bytes || c.size_bytes % set_bytes != 0) {
    throw ConfigError("l2.size_bytes: " + std::to_string(c.size_bytes) +
                      " is not a positive multiple of l2.line_bytes x l2.block_lines x l2.ways (" +
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
//
// Granularity: the tag array, replacement and locks work on blocks of l2.block_lines lines (in
// this Impl a "line" is such a block; with block_lines = 1 it is the hardware line). Banks are
// reserved per hardware line, and an uncached access invalidates only the hardware lines it
// overlaps, so a block is a bookkeeping unit, not a longer line.
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
  // Lock lists are per set, in registration order; a removal moves the last lock into the hole
  // (as erasing from a vector by swapping with the back would). They are doubly linked through
  // a pool of nodes: few locks are held at once, so the pool stays in the host's caches.
  static constexpr std::uint32_t kNil = ~0u;
  struct LockNode {
    Lock lock;
    std::uint32_t prev, next;
  };
  struct LockList {
    std::uint32_t head = kNil, tail = kNil;
  };
  // One way of one set. Its tag is also in `tags` and its LRU stamp in `used`, packed per set.
  struct Frame {
    std::uint64_t line = kNoLine;  // line index in the window (the tag)
    std::uint64_t valid = 0, dirty = 0;
    std::uint64_t pending = 0;  // sectors a fill is bringing in; pins the frame
  };
  // Ways of one set (bit = way) with a fill in flight, with valid sectors, with all sectors
  // valid: replacement and read hits look at these instead of the frames. Kept when ways <= 64.
  static constexpr std::uint64_t kNoWay = ~0ull;
  struct SetState {
    std::uint64_t pinned = 0, filled = 0;
    std::uint64_t complete = 0;
    // The way stamped last, so holding the set's newest stamp (kNoWay: unknown). Only the order
    // of a set's stamps matters, so touching it again needs no new stamp.
    std::uint64_t newest = kNoWay;
  };
  // Scratch of one b_transport, pooled (callers interleave at their waits).
  struct Access {
    std::vector<Transit*> writebacks;
    std::vector<Transit*> reads;  // fills and direct accesses, address order
  };
  // A line with its set and tag (line / sets); consecutive lines walk consecutive sets, so
  // stepping needs no division.
  struct Cursor {
    std::uint64_t line, set, tag;
  };

  Impl(L2Cache& owner, const L2Config& config, SimMode mode, std::uint64_t base, std::uint64_t size)
      : owner(owner),
        config(config),
        functional(mode == SimMode::Functional),
        base(base),
        size(size),
        stats(owner.stats_),
        line_bytes(static_cast<std::uint64_t>(config.line_bytes * config.block_lines)),
        sector_bytes(static_cast<std::uint64_t>(config.sector_bytes)),
        line_shift(log2_of(line_bytes)),
        sector_shift(log2_of(sector_bytes)),  // divides a power of two: a power of two
        sectors_per_line(static_cast<unsigned>(line_bytes / sector_bytes)),
        bank_line_bytes(static_cast<std::uint64_t>(config.line_bytes)),
        bank_line_shift(log2_of(bank_line_bytes)),
        bank_lines(static_cast<std::uint64_t>(config.block_lines)),
        ways(static_cast<std::uint64_t>(config.ways)),
        sets(config.size_bytes / (line_bytes * ways)),
        banks(static_cast<std::uint64_t>(config.banks)),
        // 16 ways are compared at once, fewer 4 at a time.
        tag_stride(ways > 8 ? (ways + 15) & ~std::uint64_t{15} : (ways + 3) & ~std::uint64_t{3}),
        way_mask(ways >= 64 ? ~0ull : (1ull << ways) - 1),
        // Tags are line / sets in 32 bits. When every line of the window has a tag below
        // kEmptyTag (any realistic geometry), a tag match is a hit; otherwise a match is
        // confirmed against the frame's line.
        exact_tags(((size - 1) >> line_shift) / sets < kEmptyTag) {
    const double resolution_ns = sc_core::sc_get_time_resolution().to_seconds() * 1e9;
    units_per_byte = 1.0 / (config.bank_bytes_per_clock * config.clock_GHz) / resolution_ns;
    hit_latency = sc_core::sc_time(config.hit_latency_ns, sc_core::SC_NS);
    line_units = bank_units(bank_line_bytes);
    full_line = sector_range(0, sectors_per_line - 1);
    frames.resize(sets * ways);
    used.assign(sets * ways, 0);
    if (ways <= 64) set_state.resize(sets);
    // Each set's tags start on a 64-byte boundary: 16 ways are one host cache line.
    tag_storage.assign(sets * tag_stride + 16, kEmptyTag);
    const auto address = reinterpret_cast<std::uintptr_t>(tag_storage.data());
    tags = tag_storage.data() + ((64 - address % 64) % 64) / sizeof(std::uint32_t);
    lock_lists.resize(sets);
    locked_sets.assign((sets + 63) / 64, 0);
    bank_free.assign(banks, 0);
    // Line data exists only in functional mode; the OS commits the pages as lines are used.
    if (functional) data.reset(new unsigned char[sets * ways * line_bytes]);
  }

  // ---- geometry helpers -------------------------------------------------------------------

  // Bank time of `bytes`, in time-resolution units.
  sc_core::sc_time::value_type bank_units(std::uint64_t bytes) const {
    return static_cast<sc_core::sc_time::value_type>(
        std::llround(static_cast<double>(bytes) * units_per_byte));
  }
  // Sectors of `line` that overlap [begin, end) (window offsets).
  std::uint64_t mask_of(std::uint64_t line, std::uint64_t begin, std::uint64_t end) const {
    const std::uint64_t start = line << line_shift;
    if (begin <= start && end - start >= line_bytes) return full_line;
    const std::uint64_t lo = std::max(begin, start) - start;
    const std::uint64_t hi = std::min(end, start + line_bytes) - start;
    return sector_range(static_cast<unsigned>(lo >> sector_shift),
                        static_cast<unsigned>((hi - 1) >> sector_shift));
  }
  Cursor cursor(std::uint64_t line) const { return {line, line % sets, line / sets}; }
  void advance(Cursor& c) const {
    ++c.line;
    if (++c.set == sets) {
      c.set = 0;
      ++c.tag;
    }
  }
  std::uint64_t first_line(std::uint64_t begin) const { return begin >> line_shift; }
  std::uint64_t last_line(std::uint64_t end) const { return (end - 1) >> line_shift; }
  // Reserves, from `arrival_units` on, the bank of every hardware line [b, e) (window offsets)
  // touches for the bytes it touches; `bank_index` is the bank of b's line and ends at the next.
  // `done_units` becomes the latest reservation end.
  void reserve_banks(std::uint64_t b, std::uint64_t e, std::uint64_t& bank_index,
                     sc_core::sc_time::value_type arrival_units,
                     sc_core::sc_time::value_type& done_units) {
    while (b < e) {
      const std::uint64_t line_end = ((b >> bank_line_shift) + 1) << bank_line_shift;
      const std::uint64_t piece_end = std::min(e, line_end);
      const bool whole = piece_end - b == bank_line_bytes;
      sc_core::sc_time::value_type& bank = bank_free[bank_index];
      bank = std::max(bank, arrival_units) + (whole ? line_units : bank_units(piece_end - b));
      done_units = std::max(done_units, bank);
      if (++bank_index == banks) bank_index = 0;
      b = piece_end;
    }
  }
  // Sectors of block `line` in the hardware lines that [begin, end) overlaps: what an uncached
  // access invalidates.
  std::uint64_t line_mask_of(std::uint64_t line, std::uint64_t begin, std::uint64_t end) const {
    const std::uint64_t round = bank_line_bytes - 1;
    return mask_of(line, begin & ~round, (end + round) & ~round);
  }

  // Entries of a tag row of `stride` (<= 64) entries that hold `tag` (bit = entry; the padding
  // after the last way included).
  static T3_L2_INLINE std::uint64_t row_matches(const std::uint32_t* row, std::uint64_t stride,
                                                std::uint32_t tag) {
    std::uint64_t matches = 0;
#if defined(__SSE2__)
    const __m128i key = _mm_set1_epi32(static_cast<int>(tag));
    const auto equal = [&](std::uint64_t k) {
      return _mm_cmpeq_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(row + k)), key);
    };
    const auto sixteen = [&](std::uint64_t k) {  // entries k .. k + 15
      const __m128i lo = _mm_packs_epi32(equal(k), equal(k + 4));
      const __m128i hi = _mm_packs_epi32(equal(k + 8), equal(k + 12));
      return static_cast<std::uint64_t>(
          static_cast<unsigned>(_mm_movemask_epi8(_mm_packs_epi16(lo, hi))));
    };
    if (stride == 16) {
      matches = sixteen(0);
    } else if (stride % 16 == 0) {
      for (std::uint64_t k = 0; k < stride; k += 16) matches |= sixteen(k) << k;
    } else {
      for (std::uint64_t k = 0; k < stride; k += 4) {
        matches |= static_cast<std::uint64_t>(
                       static_cast<unsigned>(_mm_movemask_ps(_mm_castsi128_ps(equal(k)))))
                   << k;
      }
    }
#else
    for (std::uint64_t k = 0; k < stride; ++k) matches |= std::uint64_t{row[k] == tag} << k;
#endif
    return matches;
  }
  // Ways of `set` whose packed tag is `tag` (bit = way); only when ways <= 64.
  T3_L2_INLINE std::uint64_t tag_matches(std::uint64_t set, std::uint32_t tag) const {
    return row_matches(tags + set * tag_stride, tag_stride, tag) & way_mask;
  }
  // The way of `c.set` holding `c.line` (the lowest, should there be several), or `ways`.
  T3_L2_INLINE std::uint64_t find_way(const Cursor& c) const {
    const auto tag = static_cast<std::uint32_t>(c.tag);
    if (ways <= 64) {
      std::uint64_t matches = tag_matches(c.set, tag);
      if (exact_tags) {
        return matches != 0 ? static_cast<std::uint64_t>(__builtin_ctzll(matches)) : ways;
      }
      const Frame* set = &frames[c.set * ways];
      for (; matches != 0; matches &= matches - 1) {
        const auto way = static_cast<std::uint64_t>(__builtin_ctzll(matches));
        if (set[way].line == c.line) return way;
      }
      return ways;
    }
    const std::uint32_t* row = tags + c.set * tag_stride;
    const Frame* set = &frames[c.set * ways];
    for (std::uint64_t k = 0; k < ways; ++k) {
      if (row[k] == tag && (exact_tags || set[k].line == c.line)) return k;
    }
    return ways;
  }
  // The frame holding `c.line`, or nullptr.
  T3_L2_INLINE Frame* find(const Cursor& c) {
    const std::uint64_t way = find_way(c);
    return way < ways ? &frames[c.set * ways + way] : nullptr;
  }
  std::uint64_t index_of(const Frame& frame) const {
    return static_cast<std::uint64_t>(&frame - frames.data());
  }
  // Brings the set's way masks up to date with `frame` after its pending or valid sectors changed.
  void sync(std::uint64_t set, const Frame& frame) {
    if (ways > 64) return;
    SetState& state = set_state[set];
    const std::uint64_t bit = 1ull << static_cast<std::uint64_t>(&frame - &frames[set * ways]);
    state.pinned = (state.pinned & ~bit) | (frame.pending != 0 ? bit : 0);
    state.filled = (state.filled & ~bit) | (frame.valid != 0 ? bit : 0);
    state.complete = (state.complete & ~bit) | (frame.valid == full_line ? bit : 0);
  }
  // Gives way `way` of `set` the LRU stamp `stamp`, newer than any other.
  void touch(std::uint64_t set, std::uint64_t way, std::uint64_t stamp) {
    if (ways <= 64) {
      if (set_state[set].newest == way) return;
      set_state[set].newest = way;
    }
    used[set * ways + way] = stamp;
  }
  // Points way `way` of set `set` at `line` (kNoLine: empty) in the frame and the tag array.
  void retag(Frame& frame, std::uint64_t set, std::uint64_t way, std::uint64_t line,
             std::uint64_t tag) {
    frame.line = line;
    tags[set * tag_stride + way] = line == kNoLine ? kEmptyTag : static_cast<std::uint32_t>(tag);
  }
  unsigned char* data_of(const Frame& frame) const {
    return data.get() + index_of(frame) * line_bytes;
  }
  // Copies the bytes of sector runs `mask` of `frame` that fall in [lo, hi) of the line between
  // the frame and `buffer`, which holds window bytes from `buffer_begin` on.
  void copy_sectors(Frame& frame, std::uint64_t mask, std::uint64_t lo, std::uint64_t hi,
                    unsigned char* buffer, std::uint64_t buffer_begin, bool into_frame) {
    const std::uint64_t start = frame.line << line_shift;
    for_each_run(mask, [&](unsigned first, unsigned count) {
      const std::uint64_t b = std::max<std::uint64_t>(lo, std::uint64_t{first} << sector_shift);
      const std::uint64_t e =
          std::min<std::uint64_t>(hi, std::uint64_t{first + count} << sector_shift);
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

  // `locked_sets` has a bit per set whose lock list is not empty, so a lookup skips the
  // unlocked sets of its range a word at a time.
  void push_lock(std::uint64_t set, const Lock& lock) {
    std::uint32_t n;
    if (free_lock_node != kNil) {
      n = free_lock_node;
      free_lock_node = lock_nodes[n].next;
    } else {
      n = static_cast<std::uint32_t>(lock_nodes.size());
      lock_nodes.emplace_back();
    }
    LockList& list = lock_lists[set];
    lock_nodes[n] = {lock, list.tail, kNil};
    if (list.tail == kNil) {
      list.head = n;
      locked_sets[set / 64] |= 1ull << (set % 64);
    } else {
      lock_nodes[list.tail].next = n;
    }
    list.tail = n;
  }
  // Removes the last lock of `set`'s list.
  void pop_lock(std::uint64_t set) {
    LockList& list = lock_lists[set];
    const std::uint32_t n = list.tail;
    list.tail = lock_nodes[n].prev;
    if (list.tail == kNil) {
      list.head = kNil;
      locked_sets[set / 64] &= ~(1ull << (set % 64));
    } else {
      lock_nodes[list.tail].next = kNil;
    }
    lock_nodes[n].next = free_lock_node;
    free_lock_node = n;
  }
  void lock(Transit& transit) {
    const std::uint64_t last = last_line(transit.end);
    for (Cursor c = cursor(first_line(transit.begin)); c.line <= last; advance(c)) {
      push_lock(c.set, {c.line, mask_of(c.line, transit.begin, transit.end), &transit});
    }
  }
  // Drops the transit's locks, wakes its waiters and returns it to the pool.
  void finish(Transit& transit) {
    const std::uint64_t last = last_line(transit.end);
    for (Cursor c = cursor(first_line(transit.begin)); c.line <= last; advance(c)) {
      for (std::uint32_t n = lock_lists[c.set].head; n != kNil;) {
        LockNode& node = lock_nodes[n];
        if (node.lock.transit != &transit || node.lock.line != c.line) {
          n = node.next;
          continue;
        }
        const std::uint32_t tail = lock_lists[c.set].tail;
        if (n != tail) node.lock = lock_nodes[tail].lock;  // then look at this position again
        pop_lock(c.set);
        if (n == tail) break;
      }
    }
    transit.done.notify();  // immediate: the waiters become runnable in this evaluation phase
    transit.retired = true;
    if (transit.waiters == 0) free_transits.push_back(&transit);
  }
  // Sets to step from `set` (wrapping) to the next set with locks; `limit` or more if there is
  // none within `limit` steps.
  std::uint64_t distance_to_locked(std::uint64_t set, std::uint64_t limit) const {
    std::uint64_t distance = 0;
    for (;;) {
      const std::uint64_t bits = locked_sets[set / 64] >> (set % 64);  // no bits past `sets`
      if (bits != 0) return distance + static_cast<std::uint64_t>(__builtin_ctzll(bits));
      const std::uint64_t step = std::min(64 - set % 64, sets - set);
      distance += step;
      if (distance >= limit) return distance;
      set += step;
      if (set == sets) set = 0;
    }
  }

  // Waits, holding nothing, until no transit of another access locks a sector of
  // [begin, end) -- whole hardware lines if `bypass`, since a bypass invalidates them. Bypasses do
  // not order among themselves: they meet at memory, like two initiators' stores.
  // `ready` becomes the latest completion of the transits waited for.
  void wait_for_conflicts(std::uint64_t begin, std::uint64_t end, bool bypass,
                          sc_core::sc_time& ready) {
    const std::uint64_t first = first_line(begin), last = last_line(end);
    const std::uint64_t first_set = first % sets;
    for (;;) {
      // The first conflicting lock in line order, and in list order within the line's set.
      Transit* blocking = nullptr;
      std::uint64_t line = first, set = first_set;
      while (!blocking) {
        const std::uint64_t skip = distance_to_locked(set, last - line + 1);
        if (skip > last - line) break;
        line += skip;
        set += skip;  // skip < sets: a locked set is found within one lap
        if (set >= sets) set -= sets;
        const std::uint64_t mask =
            bypass ? line_mask_of(line, begin, end) : mask_of(line, begin, end);
        for (std::uint32_t n = lock_lists[set].head; n != kNil; n = lock_nodes[n].next) {
          const Lock& lock = lock_nodes[n].lock;
          if (lock.line == line && (lock.mask & mask) != 0 &&
              !(bypass && lock.transit->kind == Kind::Bypass)) {
            blocking = lock.transit;
            break;
          }
        }
        if (line == last) break;
        ++line;
        if (++set == sets) set = 0;
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

  // Queues the dirty sectors of `frame` among `mask` for write-back; runs contiguous with the
  // previous one merge into one memory write.
  void add_writeback(Access& access, const Frame& frame, std::uint64_t mask, int cls) {
    const std::uint64_t start = frame.line << line_shift;
    for_each_run(frame.dirty & mask, [&](unsigned first, unsigned count) {
      const std::uint64_t b = start + (std::uint64_t{first} << sector_shift);
      const std::uint64_t e = b + (std::uint64_t{count} << sector_shift);
      Transit* transit = nullptr;
      if (!access.writebacks.empty() && access.writebacks.back()->end == b) {
        transit = access.writebacks.back();
      } else {
        transit = &acquire_transit(Kind::Writeback, b, b);
        access.writebacks.push_back(transit);
      }
      if (functional) {
        const unsigned char* from = data_of(frame) + (std::uint64_t{first} << sector_shift);
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

  // Hardware lines of a block with a sector in `mask`.
  unsigned lines_holding(std::uint64_t mask) const {
    const std::uint64_t per_line = sectors_per_line / bank_lines;  // shifts below stay < 64
    const std::uint64_t line_sectors = sector_range(0, static_cast<unsigned>(per_line) - 1);
    unsigned lines = 0;
    for (std::uint64_t k = 0; k < bank_lines; ++k) {
      lines += (mask >> (k * per_line) & line_sectors) != 0 ? 1 : 0;
    }
    return lines;
  }

  // A frame for `c.line`: an empty way, else the least recently used way without a fill in
  // flight (its dirty sectors queued for write-back). nullptr if every way has a fill in flight.
  Frame* allocate(Access& access, const Cursor& c, int cls) {
    Frame* set = &frames[c.set * ways];
    const std::uint64_t* stamps = &used[c.set * ways];
    std::uint64_t way = ways;  // none
    if (ways <= 64) {
      const SetState& state = set_state[c.set];
      const std::uint64_t candidates = way_mask & ~state.pinned;
      if (candidates == 0) return nullptr;
      if (const std::uint64_t empty = candidates & ~state.filled; empty != 0) {
        way = static_cast<std::uint64_t>(__builtin_ctzll(empty));
      } else if (candidates == way_mask) {
        // Every way valid and unpinned: the first of the oldest stamps.
        way = 0;
        std::uint64_t oldest = stamps[0];
        for (std::uint64_t k = 1; k < ways; ++k) {
          if (stamps[k] < oldest) {
            oldest = stamps[k];
            way = k;
          }
        }
      } else {
        std::uint64_t rest = candidates;
        way = static_cast<std::uint64_t>(__builtin_ctzll(rest));
        std::uint64_t oldest = stamps[way];
        for (rest &= rest - 1; rest != 0; rest &= rest - 1) {
          const auto k = static_cast<std::uint64_t>(__builtin_ctzll(rest));
          if (stamps[k] < oldest) {
            oldest = stamps[k];
            way = k;
          }
        }
      }
    } else {
      for (std::uint64_t k = 0; k < ways; ++k) {
        const Frame& frame = set[k];
        if (frame.pending != 0) continue;
        if (frame.valid == 0) {
          way = k;
          break;
        }
        if (way == ways || stamps[k] < stamps[way]) way = k;
      }
      if (way == ways) return nullptr;
    }
    Frame* victim = &set[way];
    if (victim->valid != 0) {
      stats.evictions[cls] += lines_holding(victim->valid);
      if (victim->dirty != 0) add_writeback(access, *victim, full_line, cls);
    }
    retag(*victim, c.set, way, c.line, c.tag);
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
    if (const auto error = memory_payload_error(payload)) {
      reject(payload, error->status, error->reason + " at " + hex(address));
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
    const std::uint64_t last = last_line(end);
    for (Cursor c = cursor(first_line(offset)); c.line <= last; advance(c)) {
      Frame* frame = find(c);
      if (!frame) continue;
      const std::uint64_t mask = line_mask_of(c.line, offset, end);
      // wait_for_conflicts waited for every fill of these lines
      assert((frame->pending & mask) == 0);
      if ((frame->dirty & mask) != 0) add_writeback(access, *frame, mask, cls);
      frame->valid &= ~mask;
      frame->dirty &= ~mask;
      if (frame->valid == 0 && frame->pending == 0) {
        *frame = Frame{};
        const std::uint64_t way = index_of(*frame) - c.set * ways;
        used[index_of(*frame)] = 0;
        if (ways <= 64 && set_state[c.set].newest == way) set_state[c.set].newest = kNoWay;
        retag(*frame, c.set, way, kNoLine, 0);
      }
      sync(c.set, *frame);
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
    // Bank calendar arithmetic in time-resolution units (what sc_time computes in).
    const sc_core::sc_time::value_type arrival_units = arrival.value();
    sc_core::sc_time::value_type bank_done_units = arrival_units;
    const std::uint64_t first = first_line(offset), last = last_line(end);
    std::uint64_t bank_index = (offset >> bank_line_shift) % banks;
    std::uint64_t hit_count = 0, miss_count = 0;  // sectors; added to the stats after the plan
    std::uint64_t stamp = clock;
    const bool fast_reads = !write && !data && ways <= 64 && exact_tags;
    // Lines [whole_begin, whole_end) are touched whole.
    const std::uint64_t whole_begin = (offset & (line_bytes - 1)) == 0 ? first : first + 1;
    const std::uint64_t whole_end = (end & (line_bytes - 1)) == 0 ? last + 1 : last;
    for (Cursor c = cursor(first); c.line <= last; advance(c)) {
      if (fast_reads && c.line >= whole_begin && c.line < whole_end) {
        plan_complete_hits(c, bank_index, whole_end, arrival_units, bank_done_units, stamp,
                           hit_count);
        if (c.line > last) break;
      }
      const std::uint64_t line = c.line;
      const std::uint64_t start = line << line_shift;
      const std::uint64_t lo = line == first ? offset - start : 0;
      const std::uint64_t hi = line == last ? end - start : line_bytes;
      const bool whole = lo == 0 && hi == line_bytes;
      const std::uint64_t touched =
          whole ? full_line
                : sector_range(static_cast<unsigned>(lo >> sector_shift),
                               static_cast<unsigned>((hi - 1) >> sector_shift));
      const unsigned touched_count = whole ? sectors_per_line : popcount(touched);
      // The banks move the bytes touched; the calendar orders reservations as they are made.
      reserve_banks(start + lo, start + hi, bank_index, arrival_units, bank_done_units);

      const std::uint64_t way = find_way(c);
      if (way < ways && fast_reads && (set_state[c.set].complete >> way & 1) != 0) {
        // A timing read of a line with every sector valid: all hits, nothing else changes.
        touch(c.set, way, ++stamp);
        hit_count += touched_count;
        continue;
      }
      Frame* frame = way < ways ? &frames[c.set * ways + way] : nullptr;
      const bool allocated = !frame;
      if (allocated) frame = allocate(access, c, cls);
      if (!frame) {
        // Every way has a fill in flight (only with more callers than ways on one set):
        // serve these bytes from memory without allocating rather than wait for a way.
        miss_count += touched_count;
        stats.unallocated_bytes[cls] += hi - lo;
        add_read(access, Kind::Direct, start + lo, start + hi, write);
        continue;
      }
      touch(c.set, index_of(*frame) - c.set * ways, ++stamp);
      const std::uint64_t hits = touched & frame->valid;
      const unsigned hit_sectors = hits == touched ? touched_count : popcount(hits);
      hit_count += hit_sectors;
      miss_count += touched_count - hit_sectors;
      std::uint64_t fetch;
      if (!write) {
        fetch = touched & ~frame->valid;
        if (data) copy_sectors(*frame, hits, lo, hi, data, offset, false);
      } else {
        // Write-allocate: sectors written whole need no fetch; a partial one is fetched first.
        const std::uint64_t first_full = (lo + sector_bytes - 1) >> sector_shift;
        const std::uint64_t end_full = hi >> sector_shift;
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
        for_each_run(fetch, [&](unsigned first_sector, unsigned count) {
          add_read(access, Kind::Fill, start + (std::uint64_t{first_sector} << sector_shift),
                   start + (std::uint64_t{first_sector + count} << sector_shift), false);
        });
      }
      if (allocated || write || fetch != 0) sync(c.set, *frame);
    }
    clock = stamp;
    (write ? stats.write_hit_sectors : stats.read_hit_sectors)[cls] += hit_count;
    (write ? stats.write_miss_sectors : stats.read_miss_sectors)[cls] += miss_count;
    for (Transit* transit : access.writebacks) lock(*transit);
    for (Transit* transit : access.reads) lock(*transit);

    // Memory: write-backs first, then fills and direct accesses in address order, issued once
    // the lookup is done (a miss costs the hit latency plus memory's).
    const sc_core::sc_time lookup_done =
        sc_core::sc_time::from_value(bank_done_units) + hit_latency;
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

  // Plans the timing reads of whole lines from `c` on, up to line `stop`, while they hit lines
  // with every sector valid: the common case, kept tight (as the general path would: bank
  // reservation, LRU stamp, hits). `c` and `bank_index` end at the first line left to the
  // general path. Needs exact tags and ways <= 64.
  void plan_complete_hits(Cursor& c, std::uint64_t& bank_index, std::uint64_t stop,
                          sc_core::sc_time::value_type arrival_units,
                          sc_core::sc_time::value_type& bank_done_units, std::uint64_t& stamp,
                          std::uint64_t& hit_count) {
    // Locals: the stores below would otherwise make the compiler reload every member.
    const std::uint64_t n_sets = sets, n_ways = ways, n_banks = banks, stride = tag_stride;
    const std::uint64_t mask = way_mask, per_line = sectors_per_line, per_block = bank_lines;
    const sc_core::sc_time::value_type line_time = line_units;
    const std::uint32_t* const tag_base = tags;
    SetState* const states = set_state.data();
    std::uint64_t* const stamps = used.data();
    sc_core::sc_time::value_type* const calendar = bank_free.data();
    std::uint64_t line = c.line, set = c.set, tag = c.tag, bank = bank_index;
    std::uint64_t next = stamp, hits = hit_count;
    sc_core::sc_time::value_type done = bank_done_units;
    const std::uint32_t* row = tag_base + set * stride;
    while (line < stop) {
      const std::uint64_t matches =
          row_matches(row, stride, static_cast<std::uint32_t>(tag)) & mask;
      if (matches == 0) break;
      const auto way = static_cast<std::uint64_t>(__builtin_ctzll(matches));
      if ((states[set].complete >> way & 1) == 0) break;
      for (std::uint64_t k = 0; k < per_block; ++k) {
        calendar[bank] = std::max(calendar[bank], arrival_units) + line_time;
        done = std::max(done, calendar[bank]);
        if (++bank == n_banks) bank = 0;
      }
      ++next;
      if (states[set].newest != way) {
        stamps[set * n_ways + way] = next;
        states[set].newest = way;
      }
      hits += per_line;
      ++line;
      row += stride;
      if (++set == n_sets) {
        set = 0;
        ++tag;
        row = tag_base;
      }
    }
    c = {line, set, tag};
    bank_index = bank;
    bank_done_units = done;
    stamp = next;
    hit_count = hits;
  }

  // A fill came back: its sectors become valid (or, on error, stay invalid) and the access that
  // issued it takes its bytes (read) or merges its partial sectors (write).
  void install(Transit& fill, bool ok, bool write, unsigned char* data, std::uint64_t offset,
               std::uint64_t end, int cls) {
    if (ok) stats.fill_bytes[cls] += fill.end - fill.begin;
    const std::uint64_t last = last_line(fill.end);
    for (Cursor c = cursor(first_line(fill.begin)); c.line <= last; advance(c)) {
      const std::uint64_t line = c.line;
      Frame* frame = find(c);
      assert(frame && "a frame with a fill in flight is never replaced");
      const std::uint64_t mask = mask_of(line, fill.begin, fill.end);
      frame->pending &= ~mask;
      if (ok) frame->valid |= mask;
      sync(c.set, *frame);
      if (!ok) continue;
      const std::uint64_t start = line << line_shift;
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
    const std::uint64_t last = last_line(end);
    for (Cursor c = cursor(first_line(offset)); c.line <= last; advance(c)) {
      const std::uint64_t line = c.line;
      const std::uint64_t start = line << line_shift;
      const std::uint64_t lo = std::max(offset, start), hi = std::min(end, start + line_bytes);
      // Data on its way to memory is not in memory yet; a fill's staging copy must not bring
      // back what a debug write has just replaced.
      for (std::uint32_t n = lock_lists[c.set].head; n != kNil; n = lock_nodes[n].next) {
        const Lock& lock = lock_nodes[n].lock;
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
      if (Frame* frame = find(c); frame && frame->valid != 0) {
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
  const unsigned line_shift;    // log2(line_bytes)
  const unsigned sector_shift;  // log2(sector_bytes)
  const unsigned sectors_per_line;
  const std::uint64_t bank_line_bytes;  // the hardware line: the unit of bank interleaving
  const unsigned bank_line_shift;
  const std::uint64_t bank_lines;  // hardware lines per block (l2.block_lines)
  const std::uint64_t ways;
  const std::uint64_t sets;
  const std::uint64_t banks;
  const std::uint64_t tag_stride;  // tag-array entries per set: ways rounded up to 4 or 16
  const std::uint64_t way_mask;    // a bit per way (all 64 if more)
  const bool exact_tags;           // a tag match is a hit without checking the frame's line
  std::uint64_t full_line = 0;
  double units_per_byte = 0;  // time-resolution units of bank time per byte
  sc_core::sc_time hit_latency;
  sc_core::sc_time::value_type line_units = 0;  // bank time of a whole hardware line

  std::vector<Frame> frames;               // [set * ways + way]
  std::vector<std::uint64_t> used;         // [set * ways + way]: LRU stamp
  std::vector<SetState> set_state;         // per set, when ways <= 64
  std::vector<std::uint32_t> tag_storage;  // backs `tags`
  std::uint32_t* tags = nullptr;           // [set * tag_stride + way]: line / sets, or kEmptyTag
  std::unique_ptr<unsigned char[]> data;   // functional only, line_bytes per frame
  std::vector<LockList> lock_lists;        // per set
  std::vector<LockNode> lock_nodes;        // pool
  std::uint32_t free_lock_node = kNil;     // free nodes, linked through `next`
  std::vector<std::uint64_t> locked_sets;  // bit per set: its lock list is not empty
  std::vector<sc_core::sc_time::value_type> bank_free;  // reservation calendar per bank (units)
  std::uint64_t clock = 0;                              // LRU stamps
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
  return static_cast<int>(((address - impl_->base) / impl_->bank_line_bytes) % impl_->banks);
}

nlohmann::json L2Cache::report() const {
  const Impl& impl = *impl_;
  nlohmann::json j;
  j["mode"] = impl.functional ? "functional" : "timing";
  j["sets"] = impl.sets;
  j["ways"] = impl.ways;
  j["block_lines"] = impl.bank_lines;
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
