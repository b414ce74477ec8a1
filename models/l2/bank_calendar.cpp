#include "models/l2/bank_calendar.h"

namespace t3::l2 {

namespace {

double units_per_byte(const L2Config& config) {
  const double resolution_ns = sc_core::sc_get_time_resolution().to_seconds() * 1e9;
  return 1.0 / (config.bank_bytes_per_clock * config.clock_GHz) / resolution_ns;
}

}  // namespace

BankCalendar::BankCalendar(const Geometry& geometry, const L2Config& config)
    : line_bytes_(geometry.bank_line_bytes),
      line_shift_(geometry.bank_line_shift),
      banks_(geometry.banks),
      units_per_byte_(units_per_byte(config)),
      line_units_(units(line_bytes_)),
      free_(banks_, 0) {}

}  // namespace t3::l2
