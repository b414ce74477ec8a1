// All-bank refresh of one HBM pseudo-channel: when refreshes fall due and how long one keeps the
// banks shut. The timer that owns it closes the banks; this part only keeps the schedule.
#pragma once

#include <cstdint>

namespace t3 {

// A refresh is due every tREFI from its phase; each closes every bank (precharge, tRP) and keeps
// them shut for tRFC. Times are in time-resolution units. tREFI = 0 never refreshes.
class Refresh {
 public:
  Refresh(std::uint64_t refi, std::uint64_t rp, std::uint64_t rfc, std::uint64_t phase)
      : refi_(refi), duration_(rp + rfc), next_(refi > 0 ? phase % refi + refi : 0) {}

  // Inline: asked before every entry, and few find a refresh due.
  bool due(std::uint64_t now) const { return refi_ != 0 && now >= next_; }
  // Takes every refresh due by `now` (at least one: due(now) must hold) as one: those that fell due
  // while the pseudo-channel idled cost nothing more. Returns the slot of the last of them, the
  // earliest its precharge may start.
  std::uint64_t take_due(std::uint64_t now) {
    const std::uint64_t count = (now - next_) / refi_ + 1;
    const std::uint64_t slot = next_ + (count - 1) * refi_;
    next_ += count * refi_;
    taken_ += count;
    return slot;
  }
  // From a refresh's start until the banks may activate again: tRP + tRFC.
  std::uint64_t duration() const { return duration_; }
  std::uint64_t count() const { return taken_; }

 private:
  std::uint64_t refi_;
  std::uint64_t duration_;
  std::uint64_t next_;
  std::uint64_t taken_ = 0;
};

}  // namespace t3
