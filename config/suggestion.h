// "Did you mean": the valid names nearest a misspelt one, for error messages about unknown
// commands, options, configuration keys, presets, models, sublayers and scenarios.
#pragma once

#include <string>
#include <vector>

namespace t3 {

// The candidates nearest `given` by edit distance (insertions, deletions, substitutions), in the
// candidates' order: those at the smallest distance, if it is at most max(2, length / 3) edits
// and fewer than `given` has characters (so a wholly different word suggests nothing).
std::vector<std::string> nearest_names(const std::string& given,
                                       const std::vector<std::string>& candidates);

// " (did you mean 'a'?)", " (did you mean 'a' or 'b'?)", or "" if no candidate is near: appended
// to an error message naming `given`.
std::string did_you_mean(const std::string& given, const std::vector<std::string>& candidates);

}  // namespace t3
