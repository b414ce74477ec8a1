// Bank calendar of the L2: hardware lines are interleaved over the banks, and each bank is a
// reservation calendar, busy for bytes moved / bank bandwidth per access. Arithmetic is in
// time-resolution units (what sc_time computes in). Internal to models/l2.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include <systemc>

#include "config/system_config.h"
#include "models/l2/geometry.h"

namespace t3::l2 {

class BankCalendar {
 public:
  using Units = sc_core::sc_time::value_type;

  // The reservations of one access, made line after line from the first line it touches. Holds
  // what reserving a whole line needs, so reserve_lines() reads no member of the calendar.
  struct Sweep {
    // Reserves the next `lines` hardware lines whole.
    void reserve_lines(std::uint64_t lines) {
      // Locals: the stores into the calendar would otherwise make the compiler reload the rest.
      Units* const calendar = free;
      const std::uint64_t n_banks = banks;
      const Units from = arrival, length = line_units;
      std::uint64_t next = bank;
      Units latest = done;
      for (std::uint64_t k = 0; k < lines; ++k) {
        calendar[next] = std::max(calendar[next], from) + length;
        latest = std::max(latest, calendar[next]);
        if (++next == n_banks) next = 0;
      }
      bank = next;
      done = latest;
    }

    Units* free;  // the calendar
    std::uint64_t banks;
    Units line_units;
    std::uint64_t bank;  // of the next line
    Units arrival;
    Units done;  // the latest reservation end so far
  };

  BankCalendar(const Geometry& geometry, const L2Config& config);

  // Reservations from `arrival` on, starting at the line of window offset `begin`.
  Sweep sweep(std::uint64_t begin, Units arrival) {
    return {free_.data(), banks_, line_units_, (begin >> line_shift_) % banks_, arrival, arrival};
  }
  // Reserves the bank of every hardware line [b, e) (window offsets, from the sweep's next line
  // on) touches, for the bytes it touches.
  void reserve(Sweep& sweep, std::uint64_t b, std::uint64_t e) const {
    while (b < e) {
      const std::uint64_t line_end = ((b >> line_shift_) + 1) << line_shift_;
      const std::uint64_t piece_end = std::min(e, line_end);
      const bool whole = piece_end - b == line_bytes_;
      Units& bank = sweep.free[sweep.bank];
      bank = std::max(bank, sweep.arrival) + (whole ? line_units_ : units(piece_end - b));
      sweep.done = std::max(sweep.done, bank);
      if (++sweep.bank == banks_) sweep.bank = 0;
      b = piece_end;
    }
  }
  int bank_of(std::uint64_t offset) const {
    return static_cast<int>((offset >> line_shift_) % banks_);
  }

 private:
  // Bank time of `bytes`.
  Units units(std::uint64_t bytes) const {
    return static_cast<Units>(std::llround(static_cast<double>(bytes) * units_per_byte_));
  }

  const std::uint64_t line_bytes_;  // the hardware line: the unit of interleaving
  const unsigned line_shift_;
  const std::uint64_t banks_;
  const double units_per_byte_;
  const Units line_units_;   // bank time of a whole hardware line
  std::vector<Units> free_;  // per bank: when its last reservation ends
};

}  // namespace t3::l2
