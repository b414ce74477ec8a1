#include "experiments/summary_table.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

namespace t3 {

std::string fixed(double value, int digits) {
  std::ostringstream text;
  text.setf(std::ios::fixed);
  text.precision(digits);
  text << value;
  return text.str();
}

double geomean(const std::vector<double>& values) {
  double sum = 0;
  for (double value : values) sum += std::log(value);
  return values.empty() ? 0 : std::exp(sum / static_cast<double>(values.size()));
}

std::string geomean_cells(const std::vector<std::vector<double>>& columns) {
  std::string cells;
  for (const auto& values : columns) cells += " **" + fixed(geomean(values), 3) + "** |";
  return cells;
}

std::string max_cells(const std::vector<std::vector<double>>& columns) {
  std::string cells;
  for (const auto& values : columns) {
    cells += " **" + fixed(*std::max_element(values.begin(), values.end()), 3) + "** |";
  }
  return cells;
}

std::ofstream open_summary(const std::string& path, const std::string& suite,
                           const std::string& system) {
  std::ofstream out(path);
  if (!out) throw std::runtime_error("cannot write '" + path + "'");
  out << "# Sweep summary: suite " << suite << ", system " << system << "\n\n";
  return out;
}

}  // namespace t3
