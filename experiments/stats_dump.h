// The statistics dump of `t3sim run`, `compare` and `gemm` (--stats FILE): every simulated block's
// cumulative counters under a hierarchical dotted name (gpu0.hbm.ch3.row_hits,
// gpu0.link.to_gpu7.busy_ns, gpu0.dma0.bytes, gpu0.sm.busy_ns), read through the blocks' own
// statistics accessors. Taken at the phase barriers, so a phase's statistics are the differences
// of two snapshots and the total the difference between the sublayer's start and end. Written as
// JSON, or as gem5-like text ("name value # description", one per line) for a path ending in
// ".txt". docs/configuration.md ("Statistics dump") lists the names.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/system/tp_group.h"

namespace t3 {

struct Statistic {
  std::string name;
  const char* description;  // what it counts, unit included
  bool integral;            // a count (count), else a real value (value)
  std::uint64_t count = 0;
  double value = 0;
};
using Statistics = std::vector<Statistic>;

// Every counter of `group`'s simulated blocks now, in a fixed order: the same names for the same
// group at any instant.
Statistics collect_statistics(const TpGroup& group);

// `later` - `earlier`, statistic by statistic (two snapshots of one group).
Statistics difference(const Statistics& later, const Statistics& earlier);

// The end of one phase: its name and the statistics when its barrier released.
using PhaseEnd = std::pair<std::string, Statistics>;

// One run's section of the dump: {"total": {name: value}, "phases": {phase: {name: value}},
// "descriptions": {name: text}}. The total runs from `start` to `end`; each phase from the end of
// the one before it (the first from `start`).
nlohmann::json stats_section(const Statistics& start, const Statistics& end,
                             const std::vector<PhaseEnd>& phases = {});

// Writes the dump of `sections` (by run name: a scenario, or "gemm") to `path`: gem5-like text
// for a path ending in ".txt", JSON otherwise. Throws std::runtime_error naming the file if it
// cannot be written.
void write_stats(const std::string& path, const nlohmann::json& sections);

// The text form alone: "<run>.total.<name> <value> # <description>" and
// "<run>.phase.<phase>.<name> <value> # <description>", one per line.
std::string stats_text(const nlohmann::json& sections);

}  // namespace t3
