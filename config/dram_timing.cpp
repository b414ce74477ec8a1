#include "config/dram_timing.h"

#include <algorithm>
#include <cstdio>
#include <utility>
#include <vector>

namespace t3 {

double dram_pin_Gbps(const HbmConfig& config) {
  const double pins =
      static_cast<double>(config.channels * config.bank.pseudo_channels * config.bank.bus_bits);
  return config.bandwidth_GBps * 8.0 / pins;
}

double dram_clock_ns(const HbmConfig& config) {
  return 2.0 / dram_pin_Gbps(config);
}

DramTimingNs dram_timing_ns(const HbmConfig& config) {
  const DramTimingConfig& c = config.bank.timing;
  const double tck = dram_clock_ns(config);
  const auto ns = [tck](std::int64_t clocks) { return static_cast<double>(clocks) * tck; };
  const double burst_clocks = static_cast<double>(config.bank.burst_length) / 2.0;
  const double rtw_gap_clocks =
      std::max(0.0, static_cast<double>(c.rtw + c.cwl - c.cl) - burst_clocks);
  return {
      tck,        ns(c.cl),    ns(c.cwl),         ns(c.rcd_rd),         ns(c.rcd_wr), ns(c.rp),
      ns(c.ras),  ns(c.rc),    ns(c.ccd_s),       ns(c.ccd_l),          ns(c.rrd_s),  ns(c.rrd_l),
      ns(c.faw),  ns(c.wtr_s), ns(c.wtr_l),       rtw_gap_clocks * tck, ns(c.wr),     ns(c.rtp),
      ns(c.refi), ns(c.rfc),   burst_clocks * tck};
}

namespace {

// A spacing between commands and the key it comes from.
using Spacing = std::pair<double, const char*>;

// The widest of the spacings, ties to the first.
Spacing widest(const std::vector<Spacing>& spacings) {
  return *std::max_element(spacings.begin(), spacings.end(),
                           [](const Spacing& a, const Spacing& b) { return a.first < b.first; });
}

}  // namespace

DramPeak dram_reachable_peak(const HbmConfig& config) {
  const DramTimingNs t = dram_timing_ns(config);
  const BankConfig& b = config.bank;
  const double pseudo_channels = static_cast<double>(config.channels * b.pseudo_channels);
  const double burst_bytes = static_cast<double>(b.bus_bits * b.burst_length) / 8.0;
  // A granule's bursts alternate over the bank groups (models/hbm/dram_bank.h), so a group sees
  // every groups-th burst of a stream.
  const double bursts_per_granule =
      std::max(1.0, static_cast<double>(config.interleave_bytes) / burst_bytes);
  const double groups = std::min(static_cast<double>(b.bank_groups), bursts_per_granule);
  const Spacing column = widest({{t.burst, ""},
                                 {t.ccd_s, "hbm.bank.timing.ccd_s"},
                                 {t.ccd_l / groups, "hbm.bank.timing.ccd_l"}});
  // A stream reads a page of every row it opens, one activate per page.
  const double banks = static_cast<double>(b.bank_groups * b.banks_per_group);
  const Spacing activate =
      widest({{t.rrd_s, "hbm.bank.timing.rrd_s"},
              {t.rrd_l / static_cast<double>(b.bank_groups), "hbm.bank.timing.rrd_l"},
              {t.faw / 4.0, "hbm.bank.timing.faw"},
              {t.rc / banks, "hbm.bank.timing.rc"}});
  const double column_GBps = pseudo_channels * burst_bytes / column.first;  // B/ns = GB/s
  const double activate_GBps = pseudo_channels * static_cast<double>(b.page_bytes) / activate.first;
  DramPeak peak;
  peak.pins_GBps = config.bandwidth_GBps;
  peak.reachable_GBps = config.bandwidth_GBps;
  // 1e-9 relative: the column spacing equal to a burst is the pins' rate, up to rounding.
  if (column_GBps < peak.reachable_GBps * (1 - 1e-9)) {
    peak.reachable_GBps = column_GBps;
    peak.limited_by = column.second;
  }
  if (activate_GBps < peak.reachable_GBps * (1 - 1e-9)) {
    peak.reachable_GBps = activate_GBps;
    peak.limited_by = activate.second;
  }
  return peak;
}

std::string dram_peak_warning(const HbmConfig& config) {
  if (config.model != HbmModel::Bank) return "";
  const DramPeak peak = dram_reachable_peak(config);
  if (peak.limited_by.empty()) return "";
  char line[320];
  std::snprintf(line, sizeof line,
                "%s caps the bank model's peak at %.1f GB/s, below hbm.bandwidth_GBps = %.1f "
                "(tCK %.3f ns at %.3f Gb/s per pin; docs/calibration.md, Peak and "
                "hbm.bandwidth_GBps)",
                peak.limited_by.c_str(), peak.reachable_GBps, peak.pins_GBps, dram_clock_ns(config),
                dram_pin_Gbps(config));
  return line;
}

}  // namespace t3
