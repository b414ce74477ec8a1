// What the sweep summaries (sweep.cpp, model_sweep.cpp) share: number formats, the closing rows of
// a speedup table and the opening of the summary file.
#pragma once

#include <fstream>
#include <string>
#include <vector>

namespace t3 {

// `value` with `digits` decimals.
std::string fixed(double value, int digits);
// The geometric mean of `values`; 0 for none.
double geomean(const std::vector<double>& values);

// One bold table cell " **x.xxx** |" per column: its geomean, or its largest value.
std::string geomean_cells(const std::vector<std::vector<double>>& columns);
std::string max_cells(const std::vector<std::vector<double>>& columns);

// Opens `path` for writing (std::runtime_error naming it if it cannot) and writes the heading
// "# Sweep summary: suite <suite>, system <system>" and a blank line.
std::ofstream open_summary(const std::string& path, const std::string& suite,
                           const std::string& system);

// Ends every summary's opening paragraph: what the geomean and max rows cover, and that every
// figure comes from the sweep itself.
constexpr const char* kSummaryFiguresNote =
    "Geomean and max are over the rows of each table. Every figure is measured by this sweep; none "
    "is a published one.\n\n";

}  // namespace t3
