#include "models/l2/geometry.h"

#include <cmath>
#include <string>

namespace t3::l2 {

namespace {

// log2 of a power of two.
unsigned log2_of(std::uint64_t power_of_two) {
  return static_cast<unsigned>(__builtin_ctzll(power_of_two));
}

void validate_lines(const L2Config& c) {
  if (c.line_bytes < 1 || (c.line_bytes & (c.line_bytes - 1)) != 0) {
    throw ConfigError("l2.line_bytes: " + std::to_string(c.line_bytes) + " is not a power of two");
  }
  if (c.sector_bytes < 1 || c.sector_bytes > c.line_bytes || c.line_bytes % c.sector_bytes != 0) {
    throw ConfigError("l2.sector_bytes: " + std::to_string(c.sector_bytes) +
                      " does not divide l2.line_bytes (" + std::to_string(c.line_bytes) + ")");
  }
  if (c.line_bytes / c.sector_bytes > 64) {  // valid/dirty state is one 64-bit mask per block,
                                             // and a block is at least a line
    throw ConfigError("l2.sector_bytes: " + std::to_string(c.sector_bytes) + " gives " +
                      std::to_string(c.line_bytes / c.sector_bytes) +
                      " sectors per line; at most 64 are supported");
  }
  if (c.block_lines < 1 || (c.block_lines & (c.block_lines - 1)) != 0) {
    throw ConfigError("l2.block_lines: " + std::to_string(c.block_lines) +
                      " is not a power of two");
  }
  const std::int64_t block_bytes = c.line_bytes * c.block_lines;
  if (block_bytes / c.sector_bytes > 64) {
    throw ConfigError("l2.block_lines: " + std::to_string(c.block_lines) + " lines of " +
                      std::to_string(c.line_bytes / c.sector_bytes) + " sectors make a block of " +
                      std::to_string(block_bytes / c.sector_bytes) +
                      " sectors; at most 64 are supported");
  }
}

// l2.partitions and the keys that place addresses and SMs on them; each partition's share must
// be a geometry of its own.
void validate_partitions(const L2Config& c) {
  if (c.partitions != 1 && c.partitions != 2) {
    throw ConfigError("l2.partitions: " + std::to_string(c.partitions) + " must be 1 or 2");
  }
  if (!(c.fabric_latency_ns >= 0) || !std::isfinite(c.fabric_latency_ns)) {
    throw ConfigError("l2.fabric_latency_ns: must be a finite non-negative number");
  }
  if (c.partition_sm_group < 1) throw ConfigError("l2.partition_sm_group: must be at least 1");
  const std::int64_t granule = c.partition_granule_bytes;
  const std::int64_t block_bytes = c.line_bytes * c.block_lines;
  if (granule < block_bytes || (granule & (granule - 1)) != 0) {
    throw ConfigError("l2.partition_granule_bytes: " + std::to_string(granule) +
                      " is not a power of two of at least l2.line_bytes x l2.block_lines (" +
                      std::to_string(block_bytes) + ")");
  }
  if (c.partitions == 1) return;
  if (c.banks % c.partitions != 0) {
    throw ConfigError("l2.banks: " + std::to_string(c.banks) + " do not split over " +
                      std::to_string(c.partitions) + " l2.partitions");
  }
  if (c.writeback_buffer_entries < c.partitions) {
    throw ConfigError("l2.writeback_buffer_entries: " + std::to_string(c.writeback_buffer_entries) +
                      " do not split over " + std::to_string(c.partitions) + " l2.partitions");
  }
  const auto set_bytes = static_cast<std::uint64_t>(c.line_bytes * c.block_lines * c.ways);
  const auto parts = static_cast<std::uint64_t>(c.partitions);
  if (c.size_bytes % (set_bytes * parts) != 0) {
    throw ConfigError("l2.size_bytes: " + std::to_string(c.size_bytes) + " does not split over " +
                      std::to_string(c.partitions) + " l2.partitions in whole sets of " +
                      std::to_string(set_bytes) + " bytes");
  }
}

}  // namespace

L2Config partition_config(const L2Config& c) {
  L2Config part = c;
  part.size_bytes = c.size_bytes / static_cast<std::uint64_t>(c.partitions);
  part.banks = c.banks / c.partitions;
  part.writeback_buffer_entries = c.writeback_buffer_entries / c.partitions;
  part.partitions = 1;
  return part;
}

void validate(const L2Config& c) {
  validate_lines(c);
  if (c.ways < 1) throw ConfigError("l2.ways: must be at least 1");
  const auto set_bytes = static_cast<std::uint64_t>(c.line_bytes * c.block_lines * c.ways);
  if (c.size_bytes < set_bytes || c.size_bytes % set_bytes != 0) {
    throw ConfigError("l2.size_bytes: " + std::to_string(c.size_bytes) +
                      " is not a positive multiple of l2.line_bytes x l2.block_lines x l2.ways (" +
                      std::to_string(set_bytes) + ")");
  }
  if (c.banks < 1) throw ConfigError("l2.banks: must be at least 1");
  if (!(c.bank_bytes_per_clock > 0)) throw ConfigError("l2.bank_bytes_per_clock: must be positive");
  if (!(c.clock_GHz > 0)) throw ConfigError("l2.clock_GHz: must be positive");
  if (!(c.hit_latency_ns >= 0) || !std::isfinite(c.hit_latency_ns)) {
    throw ConfigError("l2.hit_latency_ns: must be a finite non-negative number");
  }
  if (c.writeback_buffer_entries < 1) {
    throw ConfigError("l2.writeback_buffer_entries: " + std::to_string(c.writeback_buffer_entries) +
                      " must be at least 1");
  }
  validate_partitions(c);
}

Geometry::Geometry(const L2Config& config)
    : line_bytes(static_cast<std::uint64_t>(config.line_bytes * config.block_lines)),
      sector_bytes(static_cast<std::uint64_t>(config.sector_bytes)),
      line_shift(log2_of(line_bytes)),
      sector_shift(log2_of(sector_bytes)),  // divides a power of two: a power of two
      sectors_per_line(static_cast<unsigned>(line_bytes / sector_bytes)),
      full_line(sector_range(0, sectors_per_line - 1)),
      bank_line_bytes(static_cast<std::uint64_t>(config.line_bytes)),
      bank_line_shift(log2_of(bank_line_bytes)),
      bank_lines(static_cast<std::uint64_t>(config.block_lines)),
      ways(static_cast<std::uint64_t>(config.ways)),
      sets(config.size_bytes / (line_bytes * ways)),
      banks(static_cast<std::uint64_t>(config.banks)) {}

}  // namespace t3::l2
