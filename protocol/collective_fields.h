// The limits a collective launch's fields must keep: the host's planner reports the rule a plan
// breaks, the dispatcher refuses a descriptor that breaks one (BAD_COLLECTIVE).
#pragma once

#include <cstdint>
#include <string>

#include "protocol/element_type.h"

namespace t3 {

// The first rule the fields break, worded for a message ("ranks = 1 must be in [2, 256]"), or ""
// if they keep every one. Chunks and channel ranges may be uneven or empty (protocol/ring.h): the
// buffer need only hold whole elements.
std::string collective_field_problem(int ranks, int channels, std::uint64_t bytes,
                                     ElementType element, std::uint32_t slice_bytes,
                                     std::uint32_t fifo_depth, std::uint32_t poll_ns);

}  // namespace t3
