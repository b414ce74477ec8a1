// The bank level of an HBM pseudo-channel: how an address picks channel, pseudo-channel, bank
// group, bank, row and column, and the command timing (ACT, RD, WR, PRE, refresh) of serving one
// queue entry, computed arithmetically from the banks' state rather than one event per command.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <boost/container/small_vector.hpp>

#include "config/system_config.h"
#include "models/hbm/address_hash.h"
#include "models/hbm/refresh.h"
#include "models/hbm/update_placement.h"
#include "protocol/to_size.h"

namespace t3 {

// Where a run of bursts lands. A run never leaves one interleave granule, so it stays in one
// channel, pseudo-channel, bank index and row; its bursts alternate over the bank groups.
struct DramLocation {
  int channel = 0;
  int pseudo_channel = 0;
  int bank = 0;         // index within each bank group
  int first_group = 0;  // bank group of the first burst (the next bursts take the next groups)
  std::uint64_t row = 0;
  int first_burst = 0;  // burst index within the granule
  int bursts = 0;
};

// Address decoding, derived from HbmConfig: offset -> (granule, burst in granule), granule ->
// channel, pseudo-channel, column-high, bank and row as mixed-radix digits in the order of
// hbm.bank.address_map. Within a granule, burst i goes to bank group (i + r) % bank_groups (so a
// sequential stream alternates bank groups and is not held to tCCD_L), column i / bank_groups;
// r is 0 unhashed. hbm.bank.address_hash then XORs the channel, pseudo-channel and bank digits
// with hashes of the digits above them (ipoly) or of the row (xor) and sets r from a hash of the
// row: every hash reads only digits the map leaves as they are or that sit above the one it
// changes, so decoding stays a bijection; the row and column digits are never touched and the
// bank's hash reads the row alone, so the granules of one DRAM row lie in the span of addresses
// the plain map gives that bank and row, and a sequential stream keeps its row hits.
class DramAddressMap {
 public:
  // Throws ConfigError naming the hbm.* path of a geometry that does not fit together.
  explicit DramAddressMap(const HbmConfig& config);
  // [offset, offset + bytes) must lie inside one interleave granule of the window.
  DramLocation locate(std::uint64_t offset, std::uint32_t bytes) const {
    DramLocation where;
    const bool shifts = interleave_shift_ >= 0;
    const std::uint64_t granule = shifts ? offset >> interleave_shift_ : offset / interleave_;
    const std::uint64_t inside = shifts ? offset & (interleave_ - 1) : offset % interleave_;
    where.first_burst = static_cast<int>(inside >> burst_shift_);
    const std::uint64_t last = (inside + bytes - 1) >> burst_shift_;
    where.bursts = static_cast<int>(last) - where.first_burst + 1;
    where.channel = static_cast<int>(channel_.of(granule));
    where.pseudo_channel = static_cast<int>(pseudo_channel_.of(granule));
    where.bank = static_cast<int>(bank_.of(granule));
    where.row = row_.of(granule);
    where.first_group = group_of(where.first_burst);
    if (hashed_) scramble(granule, where);
    return where;
  }
  // The column digit of `offset`'s granule: which slice of its DRAM row the granule is (no hash
  // changes it).
  std::uint64_t column_of(std::uint64_t offset) const { return column_.of(offset / interleave_); }
  int burst_bytes() const { return burst_bytes_; }
  int bank_groups() const { return bank_groups_; }
  int banks_per_group() const { return banks_per_group_; }

 private:
  enum class Field { Row, Bank, Column, PseudoChannel, Channel };
  // One field's digit of the granule number: granule / divisor % radix, by shifts and masks where
  // those are powers of two (the address bits). The most significant field needs no modulo: a
  // granule inside the window is below the product of all radices.
  struct Digit {
    std::uint64_t divisor = 1;
    std::uint64_t radix = 1;
    int shift = -1;     // log2(divisor), or -1 if not a power of two
    bool mask = false;  // radix is a power of two
    bool top = false;   // the most significant field
    bool bits = false;  // the digit is address bits: (granule >> shift) & bit_mask
    std::uint64_t bit_mask = ~std::uint64_t{0};  // radix - 1, or all ones for the top field
    std::uint64_t of(std::uint64_t granule) const {
      if (bits) return (granule >> shift) & bit_mask;
      const std::uint64_t rest = shift >= 0 ? granule >> shift : granule / divisor;
      if (top) return rest;
      return mask ? rest & (radix - 1) : rest % radix;
    }
  };
  // The hash of one digit: `hash` applied to `input`'s value (the row, or every digit above). The
  // last input's hash is kept: an access's granules share the digits above theirs (a 16 KiB access
  // of t3-paper spans the channels and pseudo-channels of one row), so consecutive decodings
  // mostly ask the same, and a table lookup per input byte becomes a compare.
  struct DigitHash {
    Digit input;
    LinearHash hash;
    mutable std::uint64_t last_input = 0;
    mutable int last = 0;
    mutable bool known = false;  // last_input and last hold a hash
    int of(std::uint64_t granule) const {
      const std::uint64_t value = input.of(granule);
      if (!known || value != last_input) {
        last_input = value;
        last = static_cast<int>(hash(value));
        known = true;
      }
      return last;
    }
  };
  // Sets the digits' hashes for hbm.bank.address_hash = kind.
  void hash_digits(AddressHash kind, std::uint64_t last_granule);
  // Applies the hashes. Each reads the plain granule, so the order of the XORs is immaterial.
  void scramble(std::uint64_t granule, DramLocation& where) const {
    where.channel ^= channel_hash_.of(granule);
    where.pseudo_channel ^= pseudo_channel_hash_.of(granule);
    where.bank ^= bank_hash_.of(granule);
    where.first_group = group_of(where.first_burst + group_hash_.of(granule));
  }
  // Bank group of burst i of a granule: i % bank_groups_, by a mask where that is a power of two
  // (a division here would be the slowest instruction of a request's decoding).
  int group_of(int burst) const {
    return group_mask_ >= 0 ? burst & group_mask_ : burst % bank_groups_;
  }
  Digit channel_, pseudo_channel_, bank_, row_, column_;
  bool hashed_ = false;
  DigitHash channel_hash_, pseudo_channel_hash_, bank_hash_, group_hash_;
  std::uint64_t interleave_;
  int interleave_shift_ = -1;  // log2(interleave_), or -1 if not a power of two
  int burst_shift_ = 0;        // log2(burst_bytes_)
  int burst_bytes_;
  int bank_groups_;
  int group_mask_;  // bank_groups_ - 1 if that is a power of two, else -1
  int banks_per_group_;
  std::uint64_t column_high_;  // columns of a row above those inside one granule
  std::uint64_t rows_;         // rows per bank (so the row may sit anywhere in the map)
  int channels_;
  int pseudo_channels_;
};

// The banks an entry touches, as much of its location as PseudoChannelTimer::row_open() reads:
// queue entries keep this, not a DramLocation, since FR-FCFS's scan reads one per entry and a
// smaller entry is fewer cache lines (16 bytes, not 32).
struct DramRowSpan {
  std::uint64_t row = 0;
  std::int32_t bank = 0;         // index within each bank group
  std::uint8_t first_group = 0;  // bank group of the first burst
  std::uint8_t groups = 0;       // bank groups touched: min(bursts, bank groups)
};
static_assert(kMaxBankGroups <= 255, "DramRowSpan keeps bank groups in a byte");

// One DRAM command of the bank model, for a command log (t3sim trace --commands): the issue times
// the timer computed, in the form of DRAMSys's Phases table (ACT, PREPB, RD, WR, PREAB, REFAB).
// An in-bank update's column command (operand in, sum written back) is Update.
struct DramCommand {
  enum class Kind : std::uint8_t {
    Activate,
    Precharge,
    Read,
    Write,
    Update,
    PrechargeAll,
    Refresh
  };
  std::uint64_t time = 0;  // issue, in time-resolution units
  Kind kind = Kind::Activate;
  std::int32_t channel = 0;
  std::int32_t pseudo_channel = 0;
  std::int32_t group = -1;  // -1: every bank (PrechargeAll, Refresh)
  std::int32_t bank = -1;   // index within the group
  std::int64_t row = -1;
};
// DRAMSys's name of a command (its Phases table's PhaseName).
const char* command_name(DramCommand::Kind kind);

// What serving one entry cost and when it is done, in time-resolution units.
struct DramService {
  std::uint64_t data_end = 0;     // last data beat on the bus (write: in the bank)
  std::uint64_t last_column = 0;  // last column command: the next entry's column commands follow
  std::uint64_t bus_busy = 0;     // data-bus time of its bursts
  int row_hits = 0;               // banks found with the row open
  int row_misses = 0;             // banks that needed ACT (and PRE if another row was open)
};

// The command timing of every pseudo-channel, in time-resolution units: one copy the timers share
// (kept apart from each timer's state, it stays in cache while the timers take turns).
struct DramTiming {
  std::uint64_t cl, cwl, rcd_rd, rcd_wr, rp, ras, rc, ccd_s, ccd_l, rrd_s, rrd_l, faw, wtr_s, wtr_l,
      rtw_gap, wr, rtp, refi, rfc, burst;
  // Row-command bus time of an ACT and of a PRE: two clocks and one (JESD235 HBM2: an ACT is a
  // two-cycle row command; DRAMSys's MemSpecHBM2 gives it commandLengthInCycles 2, the others 1).
  std::uint64_t act_command, pre_command;
  DramTiming(const HbmConfig& config, double units_per_ns);
};

// The row-command bus the pseudo-channels of one channel share (JESD235: a channel's pseudo-
// channels share its row and column command buses; DRAMSys's CheckerHBM2 holds every row command
// to the channel's nextCommandOnRasBus). Random traffic needs a PRE and an ACT per access, three
// clocks of this bus, so two pseudo-channels of row misses meet it before tFAW. Bookings are
// intervals in time-resolution units: timers book in nearly, not strictly, rising time (an ACT may
// go back to its entry's arrival), so the bus keeps the latest bookings and finds the first gap.
class PseudoChannelTimer;
class RowCommandBus {
 public:
  // The earliest start at or after `at` of a free stretch of `length`, which it books for a
  // command ready at `at`. The bus grants in the order commands are ready: every proposal (a
  // precharge, an expected activation) ready by `at` takes its stretch first.
  std::uint64_t book(std::uint64_t at, std::uint64_t length) {
    if (!proposed_.empty() && proposed_.front().ready <= at) grant_proposals(at);
    return take(at, length);
  }
  // A precharge of `timer`'s bank `bank` (its index in the timer's banks), ready at `ready` and
  // not needed yet: granted when a command ready no earlier books the bus, or when the timer
  // needs the bank (grant()), whichever comes first, so commands that are decided later but were
  // ready earlier are not held behind it. The timer learns its time (precharged()).
  void propose(std::uint64_t ready, PseudoChannelTimer* timer, int bank);
  // Grants the proposal of `timer`'s bank `bank` now (and the earlier-ready ones first).
  void grant(const PseudoChannelTimer* timer, int bank);
  // Drops `timer`'s precharge proposals (an all-bank precharge closes those banks).
  void withdraw(const PseudoChannelTimer* timer);
  // The activation `timer` expects to issue next, ready at `ready`, for an entry its queue has not
  // decided yet (its data bus is still busy): proposed like a precharge, so a command of another
  // pseudo-channel that is decided first but ready later does not take its stretch. Granted, it
  // holds the stretch tentatively until the timer serves its next entry (release()). Replaces an
  // expectation of `timer` not granted yet (kNoActivation: drops it); one granted stays until
  // released.
  static constexpr std::uint64_t kNoActivation = ~std::uint64_t{0};
  void expect(std::uint64_t ready, PseudoChannelTimer* timer);
  // `timer` now serves an entry: its expectation, granted or not, frees its stretch, and the
  // entry's activations book the bus as any command does.
  void release(const PseudoChannelTimer* timer);

 private:
  struct Proposal {
    std::uint64_t ready;
    PseudoChannelTimer* timer;
    int bank;  // kExpectedActivation: an expected activation, not a precharge
  };
  static constexpr int kExpectedActivation = -1;
  // A granted expectation: its timer's tentative stretch.
  struct Held {
    const PseudoChannelTimer* timer;
    std::uint64_t start;
  };
  // Grants the proposals ready by `at`, earliest first (ties in the order proposed).
  void grant_proposals(std::uint64_t at);
  // Grants `proposal` (removing it): its command takes the first free stretch from its ready time.
  void grant_at(std::vector<Proposal>::iterator proposal);
  // Drops `timer`'s expected activation not granted yet.
  void drop_expected(const PseudoChannelTimer* timer);
  // Frees the booking that starts at `start`, if the bus still keeps it.
  void unbook(std::uint64_t start);
  // The booking at `start` is forgotten: an expectation held there has nothing left to free (a
  // later booking may start there).
  void forget_held(std::uint64_t start);
  std::uint64_t take(std::uint64_t at, std::uint64_t length) {
    if (last_ + 2 > kCapacity) compact();  // room for the new booking and the end's sentinel
    // The first booking starting after `at`, searched from the latest: bookings come in nearly
    // rising time, so the search ends within a step or two. The sentinels before the first
    // booking (starting and ending at 0) and after the last (starting at kNever) end both walks.
    std::size_t next = last_;
    while (starts_[next - 1] > at) --next;
    if (ends_[next - 1] > at) at = ends_[next - 1];
    for (; starts_[next] < at + length; ++next) at = std::max(at, ends_[next]);
    for (std::size_t i = last_; i > next; --i) {  // the later ones move up
      starts_[i] = starts_[i - 1];
      ends_[i] = ends_[i - 1];
    }
    starts_[next] = at;
    ends_[next] = at + length;
    starts_[++last_] = kNever;
    if (last_ - first_ > kKept) {  // forget the earliest
      if (!held_.empty()) forget_held(starts_[first_]);
      starts_[first_] = 0;  // the new sentinel before the first
      ends_[first_] = 0;
      ++first_;
    }
    return at;
  }
  // Moves the bookings, with their sentinels, to the front of the arrays.
  void compact();
  // Bookings kept: older ones lie far behind every timer's next command (each timer's ACTs rise
  // by tRRD), so forgetting them frees nothing a command could still take. They slide up arrays
  // of starts and of ends (a walk reads only the one it tests), moved back to the front when
  // they reach the end: no allocation per command, and forgetting the earliest moves none of the
  // others.
  static constexpr std::size_t kKept = 64;
  static constexpr std::size_t kCapacity = 512;  // room for kKept and their two sentinels
  static_assert(kCapacity > kKept + 2, "RowCommandBus capacity");
  static constexpr std::uint64_t kNever = ~std::uint64_t{0};
  // [first_, last_) by start, disjoint; [first_ - 1] is (0, 0) and starts_[last_] kNever.
  std::array<std::uint64_t, kCapacity> starts_{0, kNever};
  std::array<std::uint64_t, kCapacity> ends_{};
  std::size_t first_ = 1;
  std::size_t last_ = 1;
  std::vector<Proposal> proposed_;  // by ready time, then order proposed (at most one per bank)
  std::vector<Held> held_;          // granted expectations (at most one per timer)
};

// One pseudo-channel's banks and buses. Times are absolute, in time-resolution units; an entry is
// served by computing every command's issue time from the constraints in force, so a request costs
// a handful of max() operations, not a simulation event per command. Row commands of an entry may
// issue as early as its arrival (the controller prepares banks for queued requests while other
// bursts transfer; HBM has separate row and column command buses); its column commands issue no
// earlier than the decision to serve it.
class PseudoChannelTimer {
 public:
  enum class Kind { Read, Write, Update };
  // `timing` must outlive the timer; config.nmc.placement says how it times updates. Throws
  // ConfigError for hbm.bank.bank_groups outside 1..kMaxBankGroups.
  // `row_bus`, if given, is shared with the channel's other pseudo-channels and must outlive it.
  PseudoChannelTimer(const HbmConfig& config, const DramTiming& timing, std::uint64_t refresh_phase,
                     RowCommandBus* row_bus = nullptr);

  // The banks `where` touches.
  DramRowSpan span(const DramLocation& where) const {
    return {where.row, where.bank, static_cast<std::uint8_t>(where.first_group),
            static_cast<std::uint8_t>(std::min(where.bursts, bank_groups_))};
  }
  // True if every bank of the span has its row open, or the row is the one last activated at the
  // span's bank index in any bank group. A granule's bursts alternate over the bank groups, so
  // the banks of one index hold one row of the map between them: once its first ACT is decided,
  // the scheduler counts the row as open in every group and interleaves the groups' bursts at
  // tCCD_S (the others' ACTs follow by tRRD_S, as a controller with a bank machine per bank issues
  // them), instead of serving the opened group's bursts back to back at tCCD_L. Inline: asked at
  // every enqueue.
  bool row_open(const DramRowSpan& span) const {
    if (activated_row_[to_size(span.bank)] == static_cast<std::int64_t>(span.row)) return true;
    int group = span.first_group;
    for (int i = 0; i < span.groups; ++i) {
      if (bank(group, span.bank).open_row != static_cast<std::int64_t>(span.row)) return false;
      if (++group == bank_groups_) group = 0;
    }
    return true;
  }
  // The earliest the first bank of `span` could activate its row for an entry that arrived at
  // `arrival`, were that entry served next: open_row()'s arithmetic without its effects (a
  // precharge after tRAS, tRTP or tWR and then tRP if the bank holds another row; tRC, tRRD,
  // tFAW). FR-FCFS's look-ahead serves the row miss whose bank is ready first, so a miss to a
  // busy bank does not hold up one to an idle bank. Inline: asked per queued miss in a scan.
  std::uint64_t activate_ready(const DramRowSpan& span, std::uint64_t arrival) const {
    const int group = span.first_group;
    const Bank& b = bank(group, span.bank);
    std::uint64_t at = arrival;
    if (b.open_row >= 0 || b.precharge_proposed) at = std::max(arrival, b.pre_ready) + t_.rp;
    const std::uint64_t rrd =
        group == last_act_group_ ? act_same_group_ready_ : act_other_group_ready_;
    return std::max({at, b.act_ready, rrd, faw_ready_[oldest_act_]});
  }
  // FR-FCFS's look-ahead among row misses scanned oldest first: whether a miss whose bank can
  // activate at `at` goes ahead of the older ones, whose earliest activation is `earliest`
  // (kNever: none scanned), because it activates at least tRRD_L before every one of them and so
  // moves none of theirs. Lowers `earliest` to `at`. Inline: asked per queued miss in a scan.
  static constexpr std::uint64_t kNever = ~std::uint64_t{0};
  bool activates_ahead(std::uint64_t at, std::uint64_t& earliest) const {
    const bool ahead = earliest == kNever || at + t_.rrd_l <= earliest;
    earliest = std::min(earliest, at);
    return ahead;
  }
  // Serves one entry decided at `now` that arrived at `arrival`; an update is the placement's to
  // time, alu the time of its add.
  DramService serve(const DramLocation& where, Kind kind, std::uint64_t arrival, std::uint64_t now,
                    std::uint64_t alu);
  // serve() with the bank-group count a constant (kGroups = 4, what serve() takes for a timer of
  // four groups, and only for one) or a variable (kGroups = 0, any count). Both time every entry
  // alike; the tests hold the one to the other.
  template <int kGroups>
  DramService serve_as(const DramLocation& where, Kind kind, std::uint64_t arrival,
                       std::uint64_t now, std::uint64_t alu);
  // Closes the banks `where` touches, which hold its row, as soon as they allow (tRAS, tRTP, tWR),
  // for a queued entry that needs another row there (a bank machine precharging for its next
  // request): the PRE is proposed on the row-command bus, not booked, so it takes the bus in the
  // order it is ready. Without a shared bus, nothing (the PRE stays with the next ACT).
  void precharge_early(const DramLocation& where);
  // The activation this pseudo-channel expects to issue next, ready at `ready`, proposed on the
  // shared row-command bus for an entry not decided yet (RowCommandBus::expect); without a
  // shared bus, nothing.
  void expect_activation(std::uint64_t ready) {
    if (row_bus_ != nullptr) row_bus_->expect(ready, this);
  }
  // Frees the expected activation's stretch: the entry served now books its own.
  void release_expectation() {
    if (row_bus_ != nullptr) row_bus_->release(this);
  }
  // The bus granted bank `bank`'s proposed PRE at `at`.
  void precharged(int bank, std::uint64_t at);
  std::uint64_t precharge_length() const { return t_.pre_command; }
  std::uint64_t activate_length() const { return t_.act_command; }
  std::uint64_t refreshes() const { return refresh_.count(); }
  // Time up to `now` that at least one bank held a row open (DRAM active standby, for the energy
  // estimate): from an activation that found every bank closed to the next refresh.
  std::uint64_t open_time(std::uint64_t now) const {
    return open_time_ + (any_open_ && now > open_since_ ? now - open_since_ : 0);
  }
  // Appends every command from now on to `log` (nullptr: none), in the order entries are served
  // (row commands may precede the last entry's column commands: sort by time to read them).
  void log_commands(std::vector<DramCommand>* log, int channel, int pseudo_channel) {
    log_ = log;
    log_channel_ = channel;
    log_pseudo_channel_ = pseudo_channel;
  }

 private:
  struct Bank {
    std::int64_t open_row = -1;
    std::uint64_t act_ready = 0;  // earliest next ACT (tRC, tRP after a precharge, refresh)
    std::uint64_t activated = 0;  // its open row's ACT: RD and WR follow by tRCD
    std::uint64_t pre_ready = 0;  // earliest PRE (tRAS, tRTP, tWR)
    // Closing early: its PRE is proposed on the row-command bus (closing_row the row it closes),
    // and its next ACT waits for the grant.
    bool precharge_proposed = false;
    std::int64_t closing_row = -1;
  };
  // One update entry's column phases (UpdatePhases) on this timer, for its placement to compose.
  template <int kGroups>
  class Phases;
  // Inline: every entry asks, and few find a refresh due.
  void refresh_until(std::uint64_t now) {
    if (refresh_.due(now)) refresh(now);
  }
  // Closes the banks for the refreshes due by `now` (at least one).
  void refresh(std::uint64_t now);
  // Opens `row` in bank b of `bank_group` (the caller has the bank at hand: finding it again costs
  // an index computation per activation).
  void open_row(Bank& b, int bank_group, std::uint64_t row, std::uint64_t earliest,
                DramService& service);
  // Issues the entry's bursts in one direction, each at the earliest time every constraint allows
  // and no earlier than `earliest`, opening rows (no earlier than `arrival`) where they are not
  // open. For a base-die update's writes (Update and Write) burst i's data also starts no earlier
  // than data_from[i]; for its reads (Update, not Write) burst_end[i] receives burst i's data end.
  template <bool Write, bool Update, int kGroups>
  void columns(const DramLocation& where, std::uint64_t arrival, std::uint64_t earliest,
               const std::uint64_t* data_from, std::uint64_t* burst_end, DramService& service);
  // An update added beside the banks: each burst's operand crosses the bus as a write's data, and
  // its bank reads the column and writes the sum back (UpdatePhases::add_in_bank).
  template <int kGroups>
  void add_in_bank(const DramLocation& where, std::uint64_t arrival, std::uint64_t earliest,
                   std::uint64_t alu, DramService& service);
  // serve() past the refresh.
  template <int kGroups>
  DramService serve_columns(const DramLocation& where, Kind kind, std::uint64_t arrival,
                            std::uint64_t now, std::uint64_t alu);
  // A bank index's banks of every group lie side by side: an entry touches them together.
  Bank& bank(int group, int index) { return banks_[to_size(index * bank_groups_ + group)]; }
  const Bank& bank(int group, int index) const {
    return banks_[to_size(index * bank_groups_ + group)];
  }
  // The index within its group of bank b (for the command log).
  int bank_index(const Bank& b) const {
    return static_cast<int>(&b - banks_.data()) / bank_groups_;
  }
  // Bank b's index in banks_ (its group is slot % bank_groups_, its index slot / bank_groups_).
  int bank_slot(const Bank& b) const { return static_cast<int>(&b - banks_.data()); }

  // The state an entry's service reads comes first and lies in this object (banks and rows
  // inline for up to 16 banks, every preset's 4 x 4): a timer is reached through no pointer of
  // its own, since its lines have mostly left the cache by the time its queue is served again.
  const DramTiming& t_;
  RowCommandBus* row_bus_;  // nullptr: row commands meet no other pseudo-channel's
  int bank_groups_;
  int banks_per_group_;
  // Earliest next ACT: by tFAW, a ring over the last four ACTs (oldest_act_ its oldest entry), and
  // by tRRD_L / tRRD_S after the last ACT in the same / another bank group.
  std::array<std::uint64_t, 4> faw_ready_{};
  int oldest_act_ = 0;
  std::uint64_t act_same_group_ready_ = 0;
  std::uint64_t act_other_group_ready_ = 0;
  int last_act_group_ = -1;
  std::uint64_t last_column_ = 0;
  int last_column_group_ = -1;
  std::uint64_t last_read_ = 0;  // last RD command
  bool any_read_ = false;
  std::uint64_t last_write_end_ = 0;  // end of the last write's data
  int last_write_group_ = -1;
  std::uint64_t bus_free_ = 0;  // data bus free from here
  Refresh refresh_;
  bool any_open_ = false;         // some bank holds a row open
  std::uint64_t open_since_ = 0;  // the activation that ended the last all-closed stretch
  std::uint64_t open_time_ = 0;   // all-open stretches closed by a refresh, summed
  // Per bank index, the row of its last ACT in any bank group (-1: none since the last refresh).
  boost::container::small_vector<std::int64_t, 4> activated_row_;
  boost::container::small_vector<Bank, 16> banks_;
  // Per bank group, after in-bank updates: the next update's column (each burst takes the group's
  // column path twice, its read and its write, tCCD_L each), and any other column (tCCD_L after
  // the last sum's write column).
  std::array<std::uint64_t, kMaxBankGroups> column_ready_after_update_{};
  std::array<std::uint64_t, kMaxBankGroups> update_column_ready_{};
  std::shared_ptr<const UpdatePlacement> placement_;
  std::vector<std::uint64_t> update_ready_;  // scratch of the placement: one time per burst
  std::vector<DramCommand>* log_ = nullptr;  // the command log, if one is kept
  int log_channel_ = 0;
  int log_pseudo_channel_ = 0;
  // Appends one command to the log (the caller checks that there is one).
  void log(std::uint64_t time, DramCommand::Kind kind, int group, int bank, std::int64_t row) {
    log_->push_back({time, kind, log_channel_, log_pseudo_channel_, group, bank, row});
  }
};

}  // namespace t3
