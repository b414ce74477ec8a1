// Where a near-memory update's add happens, as a small strategy the bank model's pseudo-channel
// timer asks to time each update (hbm.nmc.placement). A placement composes the column phases the
// timer offers; it keeps no state, so one instance serves every pseudo-channel.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "config/system_config.h"

namespace t3 {

// The column phases of one update entry on one pseudo-channel, as its timer offers them: each
// issues the entry's bursts at the earliest time every constraint allows.
class UpdatePhases {
 public:
  virtual ~UpdatePhases() = default;
  virtual int bursts() const = 0;
  // Reads the bursts out over the data bus; data_end[i] receives when burst i's data is off it.
  virtual void read_out(std::uint64_t* data_end) = 0;
  // Writes the bursts in over the data bus, burst i's data starting no earlier than data_from[i].
  virtual void write_in(const std::uint64_t* data_from) = 0;
  // Writes the operand in over the data bus as a write does, while each burst's bank reads the
  // column, adds after `alu` and writes the sum back into the same row.
  virtual void add_in_bank(std::uint64_t alu) = 0;
};

class UpdatePlacement {
 public:
  virtual ~UpdatePlacement() = default;
  virtual const char* name() const = 0;
  // Times one update whose add takes `alu` (time-resolution units); `scratch` is the caller's, to
  // spare an allocation per update.
  virtual void serve(UpdatePhases& phases, std::uint64_t alu,
                     std::vector<std::uint64_t>& scratch) const = 0;
};

// The placement hbm.nmc.placement names.
std::shared_ptr<const UpdatePlacement> make_update_placement(NmcPlacement placement);

}  // namespace t3
