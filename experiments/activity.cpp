#include "experiments/activity.h"

#include <algorithm>

namespace t3 {

namespace {

// The union of `intervals` clipped to `window`, as disjoint intervals in time order.
std::vector<Interval> merged(std::vector<Interval> intervals, Interval window) {
  for (Interval& i : intervals) {
    i.begin = std::max(i.begin, window.begin);
    i.end = std::min(i.end, window.end);
  }
  intervals.erase(std::remove_if(intervals.begin(), intervals.end(),
                                 [](const Interval& i) { return i.end <= i.begin; }),
                  intervals.end());
  std::sort(intervals.begin(), intervals.end(),
            [](const Interval& a, const Interval& b) { return a.begin < b.begin; });
  std::vector<Interval> out;
  for (const Interval& i : intervals) {
    if (!out.empty() && i.begin <= out.back().end) {
      out.back().end = std::max(out.back().end, i.end);
    } else {
      out.push_back(i);
    }
  }
  return out;
}

}  // namespace

double uncovered_ns(std::vector<Interval> active, std::vector<Interval> covered, Interval window) {
  const std::vector<Interval> a = merged(std::move(active), window);
  const std::vector<Interval> c = merged(std::move(covered), window);
  double total = 0;
  std::size_t k = 0;  // first covering interval that may overlap the current active one
  for (const Interval& i : a) {
    double at = i.begin;
    while (k < c.size() && c[k].end <= at) ++k;
    for (std::size_t j = k; j < c.size() && c[j].begin < i.end; ++j) {
      if (c[j].begin > at) total += c[j].begin - at;
      at = std::max(at, c[j].end);
    }
    if (i.end > at) total += i.end - at;
  }
  return total;
}

}  // namespace t3
