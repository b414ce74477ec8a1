#include "models/hbm/dram_bank.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>

#include "config/dram_timing.h"
#include "protocol/to_size.h"

namespace t3 {

namespace {

std::uint64_t ticks(double ns, double units_per_ns) {
  return static_cast<std::uint64_t>(std::llround(ns * units_per_ns));
}

bool power_of_two(std::int64_t value) {
  return value > 0 && (value & (value - 1)) == 0;
}

int log2_or_none(std::uint64_t value) {
  if (!power_of_two(static_cast<std::int64_t>(value))) return -1;
  int shift = 0;
  while ((std::uint64_t{1} << shift) < value) ++shift;
  return shift;
}

// Bits needed to write `value`.
int bit_width(std::uint64_t value) {
  int bits = 0;
  while (bits < 64 && (value >> bits) != 0) ++bits;
  return bits;
}

// log2 of the largest power of two dividing `value` (> 0).
int power_of_two_factor(std::uint64_t value) {
  int bits = 0;
  while ((value >> bits & 1) == 0) ++bits;
  return bits;
}

}  // namespace

DramAddressMap::DramAddressMap(const HbmConfig& config)
    : interleave_(static_cast<std::uint64_t>(config.interleave_bytes)),
      burst_bytes_(static_cast<int>(config.bank.bus_bits / 8 * config.bank.burst_length)),
      bank_groups_(static_cast<int>(config.bank.bank_groups)),
      group_mask_(power_of_two(config.bank.bank_groups) ? bank_groups_ - 1 : -1),
      banks_per_group_(static_cast<int>(config.bank.banks_per_group)),
      channels_(static_cast<int>(config.channels)),
      pseudo_channels_(static_cast<int>(config.bank.pseudo_channels)) {
  const BankConfig& b = config.bank;
  if (b.bus_bits % 8 != 0) throw ConfigError("hbm.bank.bus_bits: must be a multiple of 8");
  if (!power_of_two(burst_bytes_)) {
    throw ConfigError("hbm.bank.burst_length: a burst (bus_bits / 8 x burst_length = " +
                      std::to_string(burst_bytes_) + " B) must be a power of two");
  }
  const std::uint64_t per_granule = static_cast<std::uint64_t>(burst_bytes_) * bank_groups_;
  if (interleave_ % per_granule != 0) {
    throw ConfigError("hbm.interleave_bytes: " + std::to_string(interleave_) +
                      " is not a multiple of one burst per bank group (" +
                      std::to_string(per_granule) + " B), as the bank model needs");
  }
  const std::uint64_t columns_in_granule = interleave_ / per_granule;
  const auto columns = static_cast<std::uint64_t>(b.page_bytes) / burst_bytes_;
  if (b.page_bytes % burst_bytes_ != 0 || columns % columns_in_granule != 0) {
    throw ConfigError("hbm.bank.page_bytes: " + std::to_string(b.page_bytes) +
                      " does not hold a whole number of granule slices (interleave_bytes / "
                      "bank_groups = " +
                      std::to_string(interleave_ / bank_groups_) + " B)");
  }
  column_high_ = columns / columns_in_granule;
  const std::uint64_t granules = (config.capacity_bytes + interleave_ - 1) / interleave_;
  const std::uint64_t per_row = static_cast<std::uint64_t>(channels_) * pseudo_channels_ *
                                column_high_ * static_cast<std::uint64_t>(banks_per_group_);
  rows_ = std::max<std::uint64_t>(1, (granules + per_row - 1) / per_row);

  // Parse "row,bank,column,pseudochannel,channel" (most significant first).
  std::vector<Field> msb_first;
  std::stringstream list(b.address_map);
  std::string name;
  while (std::getline(list, name, ',')) {
    name.erase(std::remove(name.begin(), name.end(), ' '), name.end());
    Field field;
    if (name == "row") {
      field = Field::Row;
    } else if (name == "bank") {
      field = Field::Bank;
    } else if (name == "column") {
      field = Field::Column;
    } else if (name == "pseudochannel") {
      field = Field::PseudoChannel;
    } else if (name == "channel") {
      field = Field::Channel;
    } else {
      throw ConfigError("hbm.bank.address_map: unknown field '" + name +
                        "' (row, bank, column, pseudochannel, channel)");
    }
    if (std::find(msb_first.begin(), msb_first.end(), field) != msb_first.end()) {
      throw ConfigError("hbm.bank.address_map: field '" + name + "' given twice");
    }
    msb_first.push_back(field);
  }
  if (msb_first.size() != 5) {
    throw ConfigError("hbm.bank.address_map: '" + b.address_map +
                      "' must name each of row, bank, column, pseudochannel, channel once");
  }
  std::uint64_t divisor = 1;
  for (auto it = msb_first.rbegin(); it != msb_first.rend(); ++it) {
    Digit digit;
    switch (*it) {
      case Field::Row:
        digit.radix = rows_;
        break;
      case Field::Bank:
        digit.radix = static_cast<std::uint64_t>(banks_per_group_);
        break;
      case Field::Column:
        digit.radix = column_high_;
        break;
      case Field::PseudoChannel:
        digit.radix = static_cast<std::uint64_t>(pseudo_channels_);
        break;
      case Field::Channel:
        digit.radix = static_cast<std::uint64_t>(channels_);
        break;
    }
    digit.divisor = divisor;
    digit.shift = log2_or_none(divisor);
    digit.mask = log2_or_none(digit.radix) >= 0;
    digit.top = it + 1 == msb_first.rend();
    digit.bits = digit.shift >= 0 && (digit.top || digit.mask);
    if (!digit.top) digit.bit_mask = digit.radix - 1;
    divisor *= digit.radix;
    switch (*it) {
      case Field::Row:
        row_ = digit;
        break;
      case Field::Bank:
        bank_ = digit;
        break;
      case Field::Column:
        column_ = digit;  // only for column_of(): a granule's bursts are counted from its start
        break;
      case Field::PseudoChannel:
        pseudo_channel_ = digit;
        break;
      case Field::Channel:
        channel_ = digit;
        break;
    }
  }
  interleave_shift_ = log2_or_none(interleave_);
  burst_shift_ = log2_or_none(static_cast<std::uint64_t>(burst_bytes_));

  if (b.address_hash != AddressHash::Plain) hash_digits(b.address_hash, granules - 1);
}

void DramAddressMap::hash_digits(AddressHash kind, std::uint64_t last_granule) {
  // Each hashed digit over its largest power-of-two factor (the rest stays a modulo interleave),
  // with the number the digits above it make. The bank group's rotation reads the row alone: the
  // granules of one DRAM row then start on one bank group, as unhashed, so a stream through the
  // row keeps alternating groups from one granule to the next (a rotation that changed from
  // granule to granule would put a quarter of them on the group just used, at tCCD_L). The XOR
  // fold lays the digits side by side, bank first (Zhang's bank index), so it needs their order
  // and total width.
  struct Hashed {
    DigitHash& hash;
    std::uint64_t radix;
    std::uint64_t above;  // the granule divided by this gives the digits above; 0: the row
  };
  const Hashed hashed[] = {{bank_hash_, bank_.radix, bank_.divisor * bank_.radix},
                           {channel_hash_, channel_.radix, channel_.divisor * channel_.radix},
                           {pseudo_channel_hash_, pseudo_channel_.radix,
                            pseudo_channel_.divisor * pseudo_channel_.radix},
                           {group_hash_, static_cast<std::uint64_t>(bank_groups_), 0}};
  int width = 0;
  for (const Hashed& digit : hashed) width += power_of_two_factor(digit.radix);
  int offset = 0;
  for (const Hashed& digit : hashed) {
    const int degree = power_of_two_factor(digit.radix);
    if (degree == 0) continue;
    if (kind == AddressHash::Xor) {
      digit.hash.input = row_;
      digit.hash.hash = xor_fold_hash(degree, offset, width, bit_width(rows_ - 1));
    } else if (digit.above == 0) {  // the bank group: IPOLY of the row
      digit.hash.input = row_;
      digit.hash.hash = ipoly_hash(degree, bit_width(rows_ - 1));
    } else {
      Digit& above = digit.hash.input;  // granule / above, no modulo
      above.divisor = digit.above;
      above.shift = log2_or_none(digit.above);
      above.top = true;
      above.bits = above.shift >= 0;
      digit.hash.hash = ipoly_hash(degree, bit_width(last_granule / digit.above));
    }
    offset += degree;
  }
  hashed_ = true;
}

const char* command_name(DramCommand::Kind kind) {
  switch (kind) {
    case DramCommand::Kind::Activate:
      return "ACT";
    case DramCommand::Kind::Precharge:
      return "PREPB";
    case DramCommand::Kind::Read:
      return "RD";
    case DramCommand::Kind::Write:
      return "WR";
    case DramCommand::Kind::Update:
      return "UPD";
    case DramCommand::Kind::PrechargeAll:
      return "PREAB";
    case DramCommand::Kind::Refresh:
      break;
  }
  return "REFAB";
}

// The clock counts become ns once, here (config/dram_timing.h), then time-resolution units.
DramTiming::DramTiming(const HbmConfig& config, double units_per_ns) {
  const DramTimingNs t = dram_timing_ns(config);
  const auto u = [&](double ns) { return ticks(ns, units_per_ns); };
  cl = u(t.cl);
  cwl = u(t.cwl);
  rcd_rd = u(t.rcd_rd);
  rcd_wr = u(t.rcd_wr);
  rp = u(t.rp);
  ras = u(t.ras);
  rc = u(t.rc);
  ccd_s = u(t.ccd_s);
  ccd_l = u(t.ccd_l);
  rrd_s = u(t.rrd_s);
  rrd_l = u(t.rrd_l);
  faw = u(t.faw);
  wtr_s = u(t.wtr_s);
  wtr_l = u(t.wtr_l);
  rtw_gap = u(t.rtw_gap);
  wr = u(t.wr);
  rtp = u(t.rtp);
  refi = u(t.refi);
  rfc = u(t.rfc);
  burst = u(t.burst);
  act_command = u(2 * t.tck);
  pre_command = u(t.tck);
}

void RowCommandBus::propose(std::uint64_t ready, PseudoChannelTimer* timer, int bank) {
  auto at = std::upper_bound(proposed_.begin(), proposed_.end(), ready,
                             [](std::uint64_t t, const Proposal& p) { return t < p.ready; });
  proposed_.insert(at, {ready, timer, bank});
}

void RowCommandBus::grant_at(std::vector<Proposal>::iterator proposal) {
  const Proposal p = *proposal;
  proposed_.erase(proposal);
  if (p.bank == kExpectedActivation) {
    held_.push_back({p.timer, take(p.ready, p.timer->activate_length())});
    return;
  }
  p.timer->precharged(p.bank, take(p.ready, p.timer->precharge_length()));
}

void RowCommandBus::grant_proposals(std::uint64_t at) {
  while (!proposed_.empty() && proposed_.front().ready <= at) grant_at(proposed_.begin());
}

void RowCommandBus::grant(const PseudoChannelTimer* timer, int bank) {
  const auto mine = [&](const Proposal& p) { return p.timer == timer && p.bank == bank; };
  const auto found = std::find_if(proposed_.begin(), proposed_.end(), mine);
  if (found == proposed_.end()) return;
  // The proposals ready earlier go first (its own stays: it is ready later than they are).
  const std::uint64_t ready = found->ready;
  while (proposed_.front().ready < ready) grant_at(proposed_.begin());
  grant_at(std::find_if(proposed_.begin(), proposed_.end(), mine));
}

void RowCommandBus::withdraw(const PseudoChannelTimer* timer) {
  proposed_.erase(std::remove_if(proposed_.begin(), proposed_.end(),
                                 [&](const Proposal& p) {
                                   return p.timer == timer && p.bank != kExpectedActivation;
                                 }),
                  proposed_.end());
}

void RowCommandBus::expect(std::uint64_t ready, PseudoChannelTimer* timer) {
  const auto held = [&](const Held& h) { return h.timer == timer; };
  if (std::any_of(held_.begin(), held_.end(), held)) return;
  drop_expected(timer);
  if (ready != kNoActivation) propose(ready, timer, kExpectedActivation);
}

void RowCommandBus::release(const PseudoChannelTimer* timer) {
  drop_expected(timer);
  for (auto h = held_.begin(); h != held_.end(); ++h) {
    if (h->timer == timer) {
      unbook(h->start);
      held_.erase(h);
      return;
    }
  }
}

void RowCommandBus::drop_expected(const PseudoChannelTimer* timer) {
  const auto mine = [&](const Proposal& p) {
    return p.timer == timer && p.bank == kExpectedActivation;
  };
  proposed_.erase(std::remove_if(proposed_.begin(), proposed_.end(), mine), proposed_.end());
}

void RowCommandBus::unbook(std::uint64_t start) {
  std::size_t i = last_;
  while (starts_[i - 1] > start) --i;
  if (i == first_ || starts_[i - 1] != start) return;  // forgotten
  for (--i; i + 1 < last_; ++i) {
    starts_[i] = starts_[i + 1];
    ends_[i] = ends_[i + 1];
  }
  starts_[--last_] = kNever;
}

void RowCommandBus::compact() {
  const std::size_t from = first_ - 1;  // with the sentinels at both ends
  std::copy(starts_.begin() + from, starts_.begin() + last_ + 1, starts_.begin());
  std::copy(ends_.begin() + from, ends_.begin() + last_ + 1, ends_.begin());
  last_ -= from;
  first_ = 1;
}

void RowCommandBus::forget_held(std::uint64_t start) {
  held_.erase(
      std::remove_if(held_.begin(), held_.end(), [&](const Held& h) { return h.start == start; }),
      held_.end());
}

PseudoChannelTimer::PseudoChannelTimer(const HbmConfig& config, const DramTiming& timing,
                                       std::uint64_t refresh_phase, RowCommandBus* row_bus)
    : t_(timing),
      row_bus_(row_bus),
      bank_groups_(static_cast<int>(config.bank.bank_groups)),
      banks_per_group_(static_cast<int>(config.bank.banks_per_group)),
      refresh_(timing.refi, timing.rp, timing.rfc, refresh_phase),
      placement_(make_update_placement(config.nmc.placement)) {
  if (config.bank.bank_groups < 1 || config.bank.bank_groups > kMaxBankGroups) {
    throw ConfigError("hbm.bank.bank_groups: " + std::to_string(config.bank.bank_groups) +
                      " is outside 1.." + std::to_string(kMaxBankGroups));
  }
  banks_.resize(to_size(bank_groups_ * banks_per_group_));
  activated_row_.assign(to_size(banks_per_group_), -1);
}

// All-bank refresh (the schedule is refresh_'s): the banks close once their last access allows a
// precharge and the data bus is free, and stay shut for tRP + tRFC.
void PseudoChannelTimer::refresh(std::uint64_t now) {
  std::uint64_t start = std::max(refresh_.take_due(now), bus_free_);
  for (const Bank& b : banks_) {
    if (b.open_row >= 0 || b.precharge_proposed) start = std::max(start, b.pre_ready);
  }
  if (row_bus_ != nullptr) row_bus_->withdraw(this);  // the PREAB closes them
  for (Bank& b : banks_) b.precharge_proposed = false;
  const std::uint64_t end = start + refresh_.duration();
  if (log_ != nullptr) {
    log(start, DramCommand::Kind::PrechargeAll, -1, -1, -1);
    log(start + t_.rp, DramCommand::Kind::Refresh, -1, -1, -1);
  }
  if (any_open_) {
    open_time_ += start > open_since_ ? start - open_since_ : 0;
    any_open_ = false;
  }
  for (Bank& b : banks_) {
    b.open_row = -1;
    b.act_ready = std::max(b.act_ready, end);
  }
  std::fill(activated_row_.begin(), activated_row_.end(), -1);
}

// Inlined into the burst loop that calls it: a call there would spill the loop's timing state
// (2% of the default job's instructions).
[[gnu::always_inline]] inline void PseudoChannelTimer::open_row(Bank& b, int group,
                                                                std::uint64_t row,
                                                                std::uint64_t earliest,
                                                                DramService& service) {
  std::uint64_t at = earliest;
  if (b.precharge_proposed) row_bus_->grant(this, bank_slot(b));  // sets b.act_ready
  if (b.open_row >= 0) {                                          // PRE, then tRP
    std::uint64_t precharge = std::max(earliest, b.pre_ready);
    if (row_bus_ != nullptr) precharge = row_bus_->book(precharge, t_.pre_command);
    if (log_ != nullptr)
      log(precharge, DramCommand::Kind::Precharge, group, bank_index(b), b.open_row);
    at = precharge + t_.rp;
  }
  at = std::max(at, b.act_ready);
  at = std::max(at, group == last_act_group_ ? act_same_group_ready_ : act_other_group_ready_);
  // faw_ready_[oldest_act_] is tFAW after the fourth ACT back (0 until four have issued).
  at = std::max(at, faw_ready_[oldest_act_]);
  if (row_bus_ != nullptr) at = row_bus_->book(at, t_.act_command);  // later meets all the above
  if (log_ != nullptr) log(at, DramCommand::Kind::Activate, group, bank_index(b), row);
  faw_ready_[oldest_act_] = at + t_.faw;
  oldest_act_ = (oldest_act_ + 1) & 3;
  act_same_group_ready_ = at + t_.rrd_l;
  act_other_group_ready_ = at + t_.rrd_s;
  last_act_group_ = group;
  if (!any_open_) {  // activations issue in time order: tRRD spaces each after the one before
    any_open_ = true;
    open_since_ = at;
  }
  b.open_row = static_cast<std::int64_t>(row);
  b.act_ready = at + t_.rc;
  b.activated = at;
  b.pre_ready = at + t_.ras;
  ++service.row_misses;
}

void PseudoChannelTimer::precharge_early(const DramLocation& where) {
  if (row_bus_ == nullptr) return;
  const auto row = static_cast<std::int64_t>(where.row);
  int group = where.first_group;
  for (int i = 0; i < std::min(where.bursts, bank_groups_); ++i) {
    Bank& b = bank(group, where.bank);
    if (b.open_row == row) {
      b.open_row = -1;
      b.closing_row = row;
      b.precharge_proposed = true;
      row_bus_->propose(b.pre_ready, this, bank_slot(b));
    }
    if (++group == bank_groups_) group = 0;
  }
  if (activated_row_[to_size(where.bank)] == row) activated_row_[to_size(where.bank)] = -1;
}

void PseudoChannelTimer::precharged(int slot, std::uint64_t at) {
  Bank& b = banks_[to_size(slot)];
  b.precharge_proposed = false;
  b.act_ready = std::max(b.act_ready, at + t_.rp);
  if (log_ != nullptr) {
    log(at, DramCommand::Kind::Precharge, slot % bank_groups_, slot / bank_groups_, b.closing_row);
  }
}

// The column phases of one update entry, for its placement (update_placement.h) to compose.
template <int kGroups>
class PseudoChannelTimer::Phases final : public UpdatePhases {
 public:
  Phases(PseudoChannelTimer& timer, const DramLocation& where, std::uint64_t arrival,
         std::uint64_t now, DramService& service)
      : timer_(timer), where_(where), arrival_(arrival), now_(now), service_(service) {}
  int bursts() const override { return where_.bursts; }
  void read_out(std::uint64_t* data_end) override {
    timer_.columns<false, true, kGroups>(where_, arrival_, now_, nullptr, data_end, service_);
  }
  void write_in(const std::uint64_t* data_from) override {
    timer_.columns<true, true, kGroups>(where_, arrival_, now_, data_from, nullptr, service_);
  }
  void add_in_bank(std::uint64_t alu) override {
    timer_.add_in_bank<kGroups>(where_, arrival_, now_, alu, service_);
  }

 private:
  PseudoChannelTimer& timer_;
  const DramLocation& where_;
  std::uint64_t arrival_;
  std::uint64_t now_;
  DramService& service_;
};

// The bursts of one entry in one direction (the hot loop of the model). Each bank group's bank
// opens its row, if needed, at the group's first burst: an ACT's time depends on the earlier ACTs
// and its own bank alone, so opening there is opening all of them first. Past that no bank opens
// and the other direction issues nothing, so each bank's tRCD and, for reads, tWTR after the last
// write are fixed: they make one floor per bank group, and the loop carries only the column
// spacing (tCCD) and the data bus. A bank's precharge waits for its last burst (tRTP after a read
// command, tWR after write data), so it is set at that burst. The timing lives in locals: the
// stores to the banks and to burst_end could alias the members, which would reload them per burst.
// Instantiated per direction and per use (plain access, or an update's read or write phase), so
// the branches of the other uses leave the loops, and for kGroups bank groups (0: any count), so
// the usual count's bank-group arithmetic is constant.
template <bool Write, bool Update, int kGroups>
void PseudoChannelTimer::columns(const DramLocation& where, std::uint64_t arrival,
                                 std::uint64_t earliest, const std::uint64_t* data_from,
                                 std::uint64_t* burst_end, DramService& service) {
  constexpr bool kBurstFloors = Update && Write;  // a base-die update's writes wait for their sums
  constexpr bool kBurstEnds = Update && !Write;   // an update's reads say when each is back
  const int bursts = where.bursts;
  if (bursts == 0) return;
  const int bank_groups = kGroups > 0 ? kGroups : bank_groups_;
  const std::uint64_t latency = Write ? t_.cwl : t_.cl;
  const std::uint64_t burst = t_.burst;
  const std::uint64_t ccd_s = t_.ccd_s;
  const std::uint64_t ccd_l = t_.ccd_l;
  const std::uint64_t precharge_after = Write ? t_.wr : t_.rtp;
  const std::uint64_t rcd = Write ? t_.rcd_wr : t_.rcd_rd;
  std::uint64_t floor = earliest;
  if (Write && any_read_) {  // read-to-write: the write's data starts rtw_gap after the read's
    const std::uint64_t data_from = last_read_ + t_.cl + burst + t_.rtw_gap;
    if (data_from > floor + latency) floor = data_from - latency;
  }
  // A read waits tWTR after the last write's data, longer in that write's bank group.
  const bool after_write = !Write && last_write_group_ >= 0;
  const std::uint64_t wtr_s_from = last_write_end_ + t_.wtr_s;
  const std::uint64_t wtr_l_from = last_write_end_ + t_.wtr_l;
  const int write_group = last_write_group_;
  const int groups = std::min(bursts, bank_groups);
  // The first round meets every constraint; with no per-burst floors and alternating bank groups,
  // a later round's burst finds its bank's floor passed (its group's burst one round earlier met
  // it) and follows the burst before by the larger of tCCD_S and the bus time.
  const int full_rule = kBurstFloors || bank_groups < 2 ? bursts : groups;
  // Bursts at or after last_round are the last of their bank group.
  const int last_round = bursts - bank_groups;
  Bank* const banks = &bank(0, where.bank);          // bank group g's bank: banks[g]
  std::array<std::uint64_t, kMaxBankGroups> floors;  // per bank group: the floor its bursts share
  std::uint64_t last_column = last_column_;
  int last_group = last_column_group_;
  std::uint64_t bus_free = bus_free_;
  std::uint64_t at = 0;
  int group = where.first_group;
  const bool logging = log_ != nullptr;  // a local: the stores below would reload the member
  // Burst i, its column command at `at`, occupies the bus; the last of its bank group sets the
  // bank's precharge floor.
  const auto place = [&](int i) {
    if (logging) {
      log(at, Write ? DramCommand::Kind::Write : DramCommand::Kind::Read, group, where.bank,
          static_cast<std::int64_t>(where.row));
    }
    bus_free = at + latency + burst;
    if (kBurstEnds) burst_end[i] = bus_free;
    if (i >= last_round) {
      Bank& b = banks[group];
      b.pre_ready = std::max(b.pre_ready, (Write ? bus_free : at) + precharge_after);
    }
    last_column = at;
    last_group = group;
    if constexpr (kGroups > 0 && (kGroups & (kGroups - 1)) == 0) {
      group = (group + 1) & (kGroups - 1);
    } else if (++group == bank_groups) {
      group = 0;
    }
  };
  // ... once the data bus is free: one burst at a time.
  const auto issue = [&](int i) {
    if (bus_free > at + latency) at = bus_free - latency;
    place(i);
  };
  int i = 0;
  for (; i < groups; ++i) {  // each group's first burst: its bank's row, tRCD, tWTR
    Bank& b = banks[group];
    if (!kBurstFloors) {  // an update's writes find the rows its reads opened
      if (b.open_row == static_cast<std::int64_t>(where.row)) {
        ++service.row_hits;
      } else {
        open_row(b, group, where.row, arrival, service);
        activated_row_[to_size(where.bank)] = static_cast<std::int64_t>(where.row);
      }
    }
    // An in-bank update's sum-write column holds the bank group's column path (0 if none came).
    std::uint64_t group_floor =
        std::max({floor, b.activated + rcd, column_ready_after_update_[to_size(group)]});
    if (after_write) {
      group_floor = std::max(group_floor, group == write_group ? wtr_l_from : wtr_s_from);
    }
    floors[group] = group_floor;
    at = group_floor;
    if (kBurstFloors && data_from[i] > at + latency) at = data_from[i] - latency;
    if (last_group >= 0) at = std::max(at, last_column + (group == last_group ? ccd_l : ccd_s));
    issue(i);
  }
  for (; i < full_rule; ++i) {  // later rounds under every constraint
    at = floors[group];
    if (kBurstFloors && data_from[i] > at + latency) at = data_from[i] - latency;
    at = std::max(at, last_column + (group == last_group ? ccd_l : ccd_s));
    issue(i);
  }
  const std::uint64_t step = std::max(ccd_s, burst);
  for (; i < bursts; ++i) {  // later rounds: evenly spaced (step >= burst, so the bus is free)
    at += step;
    place(i);
  }
  if (Write) {
    last_write_end_ = bus_free;
    last_write_group_ = last_group;
  } else {
    last_read_ = at;
    any_read_ = true;
  }
  last_column_ = at;
  last_column_group_ = last_group;
  bus_free_ = bus_free;
  service.bus_busy += static_cast<std::uint64_t>(bursts) * burst;
  service.data_end = std::max(service.data_end, bus_free);
  service.last_column = std::max(service.last_column, at);
}

// An update beside the banks (HBM-PIM style), burst by burst under every constraint (updates are
// few beside reads and writes, so no fast path). The column command carries the operand over the
// data bus as a write's data (CWL, then the burst; the read-to-write turnaround before it, tWTR
// after it, as for a write) while the bank reads the column from the open row; the unit has the
// old value tCCD_L after the read and the operand once its burst is in, adds (alu), and writes the
// sum back with a column write in the same row; the bank precharges no earlier than tWR after
// that write's data. The bank group's column path takes each burst's read and write, tCCD_L each:
// the next update's column there follows by 2 x tCCD_L (the unit pipelines: one burst's write
// goes between the next bursts' reads), any other column by tCCD_L after the sum's write.
template <int kGroups>
void PseudoChannelTimer::add_in_bank(const DramLocation& where, std::uint64_t arrival,
                                     std::uint64_t earliest, std::uint64_t alu,
                                     DramService& service) {
  const int bursts = where.bursts;
  if (bursts == 0) return;
  const int bank_groups = kGroups > 0 ? kGroups : bank_groups_;
  const std::uint64_t rcd = std::max(t_.rcd_rd, t_.rcd_wr);  // the column is read, then written
  std::uint64_t floor = earliest;
  if (any_read_) {  // read-to-write on the bus: the operand starts rtw_gap after the read's data
    const std::uint64_t data_from = last_read_ + t_.cl + t_.burst + t_.rtw_gap;
    if (data_from > floor + t_.cwl) floor = data_from - t_.cwl;
  }
  Bank* const banks = &bank(0, where.bank);
  int group = where.first_group;  // the hashed map rotates the groups: columns() starts here too
  std::uint64_t at = 0;
  std::uint64_t bus_free = bus_free_;
  std::uint64_t applied = 0;  // the last sum's write data in the bank
  for (int i = 0; i < bursts; ++i) {
    Bank& b = banks[group];
    if (i < bank_groups) {  // each group's first burst opens its bank's row if needed
      if (b.open_row == static_cast<std::int64_t>(where.row)) {
        ++service.row_hits;
      } else {
        open_row(b, group, where.row, arrival, service);
        activated_row_[to_size(where.bank)] = static_cast<std::int64_t>(where.row);
      }
    }
    const auto g = to_size(group);
    at = std::max({floor, b.activated + rcd, update_column_ready_[g]});
    if (last_column_group_ >= 0) {
      at = std::max(at, last_column_ + (group == last_column_group_ ? t_.ccd_l : t_.ccd_s));
    }
    if (bus_free > at + t_.cwl) at = bus_free - t_.cwl;
    bus_free = at + t_.cwl + t_.burst;
    const std::uint64_t sum_write = std::max(at + t_.ccd_l, bus_free) + alu;
    if (log_ != nullptr) {
      log(at, DramCommand::Kind::Update, group, where.bank, static_cast<std::int64_t>(where.row));
    }
    applied = std::max(applied, sum_write + t_.burst);
    b.pre_ready = std::max(b.pre_ready, sum_write + t_.burst + t_.wr);
    update_column_ready_[g] = at + 2 * t_.ccd_l;
    column_ready_after_update_[g] = std::max(column_ready_after_update_[g], sum_write + t_.ccd_l);
    last_column_ = at;
    last_column_group_ = group;
    if (++group == bank_groups) group = 0;
  }
  last_write_end_ = bus_free;
  last_write_group_ = last_column_group_;
  bus_free_ = bus_free;
  service.bus_busy += static_cast<std::uint64_t>(bursts) * t_.burst;
  service.data_end = std::max(service.data_end, applied);
  service.last_column = std::max(service.last_column, at);
}

DramService PseudoChannelTimer::serve(const DramLocation& where, Kind kind, std::uint64_t arrival,
                                      std::uint64_t now, std::uint64_t alu) {
  refresh_until(now);
  return bank_groups_ == 4 ? serve_columns<4>(where, kind, arrival, now, alu)
                           : serve_columns<0>(where, kind, arrival, now, alu);
}

template <int kGroups>
DramService PseudoChannelTimer::serve_as(const DramLocation& where, Kind kind,
                                         std::uint64_t arrival, std::uint64_t now,
                                         std::uint64_t alu) {
  refresh_until(now);
  return serve_columns<kGroups>(where, kind, arrival, now, alu);
}

template <int kGroups>
DramService PseudoChannelTimer::serve_columns(const DramLocation& where, Kind kind,
                                              std::uint64_t arrival, std::uint64_t now,
                                              std::uint64_t alu) {
  DramService service;
  if (kind == Kind::Read) {
    columns<false, false, kGroups>(where, arrival, now, nullptr, nullptr, service);
    return service;
  }
  if (kind == Kind::Write) {
    columns<true, false, kGroups>(where, arrival, now, nullptr, nullptr, service);
    return service;
  }
  Phases<kGroups> phases(*this, where, arrival, now, service);
  placement_->serve(phases, alu, update_ready_);
  return service;
}

template DramService PseudoChannelTimer::serve_as<0>(const DramLocation&, Kind, std::uint64_t,
                                                     std::uint64_t, std::uint64_t);
template DramService PseudoChannelTimer::serve_as<4>(const DramLocation&, Kind, std::uint64_t,
                                                     std::uint64_t, std::uint64_t);

}  // namespace t3
