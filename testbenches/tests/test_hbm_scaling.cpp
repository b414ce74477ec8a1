// HBM scaling: hbm.bandwidth_GBps sets the pins' rate, hence tCK, hence every DRAM timing given
// in clocks, so the same part clocked slower or faster reaches the same share of its stated peak.
// Each case runs the bandwidth experiment's read pattern (experiments/hbm_characterisation.h) on
// t3-paper once, in its own process.
#include <catch2/catch.hpp>

#include "config/config_io.h"
#include "experiments/hbm_characterisation.h"

using namespace t3;

namespace {

HbmPatternResult read_at(double GBps) {
  SystemConfig config = load_system("t3-paper");
  config.hbm.bandwidth_GBps = GBps;
  return characterise_hbm(hbm_pattern_request(config, "read"));
}

void check_reaches_its_peak(double GBps) {
  const HbmPatternResult read = read_at(GBps);
  INFO(GBps << " GB/s stated, " << read.measured_GBps << " GB/s measured");
  CHECK(read.peak_GBps == GBps);
  CHECK(read.reachable_peak_GBps == GBps);
  CHECK(read.peak_limited_by.empty());
  CHECK(read.bytes == 64ull << 20);
  CHECK(read.measured_GBps >= 0.85 * GBps);
  CHECK(read.measured_GBps <= GBps);
}

}  // namespace

TEST_CASE("HBM scaling: t3-paper's read pattern reaches 85% of 250 GB/s", "[hbm][timing]") {
  check_reaches_its_peak(250);
}

TEST_CASE("HBM scaling: t3-paper's read pattern reaches 85% of 1000 GB/s", "[hbm][timing]") {
  check_reaches_its_peak(1000);
}

TEST_CASE("HBM scaling: t3-paper's read pattern reaches 85% of 2000 GB/s", "[hbm][timing]") {
  check_reaches_its_peak(2000);
}

TEST_CASE("HBM scaling: a timing that caps the peak caps what the read pattern measures",
          "[hbm][timing]") {
  // tCCD_S of 3 clocks between bursts of 2: two thirds of the pins' 1000 GB/s at most.
  SystemConfig config = load_system("t3-paper");
  config.hbm.bank.timing.ccd_s = 3;
  const HbmPatternResult read = characterise_hbm(hbm_pattern_request(config, "read"));
  CHECK(read.peak_limited_by == "hbm.bank.timing.ccd_s");
  CHECK(read.reachable_peak_GBps == Approx(2000.0 / 3));
  CHECK(read.measured_GBps <= read.reachable_peak_GBps);
  CHECK(read.measured_GBps >= 0.85 * read.reachable_peak_GBps);
}
