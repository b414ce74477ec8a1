// Time a kind of activity runs with no other activity beside it: what a result's
// exposed_comm_ns measures (communication with no compute on the same GPU). Plain arithmetic on
// intervals of simulated time, no SystemC.
#pragma once

#include <vector>

namespace t3 {

struct Interval {
  double begin = 0, end = 0;  // ns; empty if end <= begin
};

// The measure of the union of `active`, minus the union of `covered`, inside `window`.
double uncovered_ns(std::vector<Interval> active, std::vector<Interval> covered, Interval window);

}  // namespace t3
