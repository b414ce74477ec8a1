#include "config/suggestion.h"

#include <algorithm>

namespace t3 {

namespace {

// Levenshtein distance, one row at a time.
std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace

std::vector<std::string> nearest_names(const std::string& given,
                                       const std::vector<std::string>& candidates) {
  const std::size_t allowed =
      std::min(std::max<std::size_t>(2, given.size() / 3), given.empty() ? 0 : given.size() - 1);
  std::size_t best = allowed;  // the largest distance still taken
  std::vector<std::string> nearest;
  for (const std::string& candidate : candidates) {
    if (candidate == given) continue;
    const std::size_t distance = edit_distance(given, candidate);
    if (distance > best) continue;
    if (distance < best) nearest.clear();
    best = distance;
    if (std::find(nearest.begin(), nearest.end(), candidate) == nearest.end()) {
      nearest.push_back(candidate);
    }
  }
  return nearest;
}

std::string did_you_mean(const std::string& given, const std::vector<std::string>& candidates) {
  const std::vector<std::string> nearest = nearest_names(given, candidates);
  if (nearest.empty()) return {};
  std::string text = " (did you mean ";
  for (std::size_t i = 0; i < nearest.size(); ++i) {
    if (i > 0) text += i + 1 == nearest.size() ? " or " : ", ";
    text += "'" + nearest[i] + "'";
  }
  return text + "?)";
}

}  // namespace t3
