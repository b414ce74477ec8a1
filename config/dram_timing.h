// What the bank model's DRAM timing means at the configured data rate: every hbm.bank.timing.*
// key is a count of clocks of tCK, tCK follows from the pins' data rate (hbm.bandwidth_GBps), and
// here the counts become ns, once, for the model to use; and the rate a stream can reach under
// that timing, which may be below the pins' rate when a timing is long for the data rate.
#pragma once

#include <string>

#include "config/system_config.h"

namespace t3 {

// Data rate of one pin in Gb/s: hbm.bandwidth_GBps over channels x pseudo_channels x bus_bits.
double dram_pin_Gbps(const HbmConfig& config);
// tCK in ns: the pins move two beats a clock (DDR), so tCK = 2 / data rate.
double dram_clock_ns(const HbmConfig& config);

// The timing in ns at the configured data rate (clocks x tCK). rtw_gap is the idle data bus from
// a read's last beat to a following write's first, derived from tRTW (rtw + cwl - cl - one
// burst, at least 0); burst is one burst's bus time (burst_length / 2 clocks).
struct DramTimingNs {
  double tck, cl, cwl, rcd_rd, rcd_wr, rp, ras, rc, ccd_s, ccd_l, rrd_s, rrd_l, faw, wtr_s, wtr_l,
      rtw_gap, wr, rtp, refi, rfc, burst;
};
DramTimingNs dram_timing_ns(const HbmConfig& config);

// The highest rate the timing lets sequential traffic reach over all pseudo-channels, before
// refresh (which every configuration pays: (tRP + tRFC) / tREFI): the pins' rate unless a column
// timing spaces bursts wider than their bus time (tCCD_S between bank groups, tCCD_L within one
// over the groups a granule's bursts alternate between), or an activate timing (tRRD_S, tRRD_L
// over the groups, tFAW / 4, tRC over every bank) opens rows slower than a page's data drains.
struct DramPeak {
  double pins_GBps = 0;       // hbm.bandwidth_GBps
  double reachable_GBps = 0;  // at most pins_GBps
  std::string limited_by;     // the key that caps it below the pins ("" when none does)
};
DramPeak dram_reachable_peak(const HbmConfig& config);

// "" when the timing reaches the pins' rate; else one line naming the key, the reachable peak
// and the stated one, for stderr.
std::string dram_peak_warning(const HbmConfig& config);

}  // namespace t3
