#include "models/host/barrier.h"

#include <string>
#include <utility>

#include "config/system_config.h"

namespace t3 {

HostBarrier::HostBarrier(sc_core::sc_module_name name, int parties)
    : sc_core::sc_module(name), parties_(parties) {
  if (parties < 1) {
    throw ConfigError(std::string(this->name()) + ": a barrier needs at least one party, got " +
                      std::to_string(parties));
  }
}

void HostBarrier::arrive_and_wait(std::uint32_t id) {
  auto& slot = states_[id];
  if (!slot) slot = std::make_unique<State>();
  State& state = *slot;
  const std::uint64_t generation = state.generation;
  for (const ReleaseObserver& observer : arrival_observers_) observer(sc_core::sc_time_stamp(), id);
  if (++state.arrived == parties_) {
    state.arrived = 0;
    ++state.generation;
    for (const ReleaseObserver& observer : observers_) observer(sc_core::sc_time_stamp(), id);
    state.released.notify(sc_core::SC_ZERO_TIME);  // the others resume in the next delta
    sc_core::wait(state.released);                 // so does the last one: all in the same delta
    return;
  }
  while (state.generation == generation) sc_core::wait(state.released);
}

void HostBarrier::observe_release(ReleaseObserver observer) {
  observers_.push_back(std::move(observer));
}

void HostBarrier::observe_arrival(ReleaseObserver observer) {
  arrival_observers_.push_back(std::move(observer));
}

int HostBarrier::waiting(std::uint32_t id) const {
  const auto found = states_.find(id);
  return found == states_.end() ? 0 : found->second->arrived;
}

std::uint64_t HostBarrier::releases(std::uint32_t id) const {
  const auto found = states_.find(id);
  return found == states_.end() ? 0 : found->second->generation;
}

}  // namespace t3
