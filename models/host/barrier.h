// Barrier between the hosts of a TP group: a host's Barrier command blocks until every host
// reached the barrier with the same id.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <vector>

#include <systemc>

namespace t3 {

struct BarrierIf : virtual sc_core::sc_interface {
  // Blocks the calling thread until `parties` callers arrived with this id (then all resume in
  // the same delta). An id can be reused once it released.
  virtual void arrive_and_wait(std::uint32_t id) = 0;
};

class HostBarrier : public sc_core::sc_module, public BarrierIf {
 public:
  HostBarrier(sc_core::sc_module_name name, int parties);

  void arrive_and_wait(std::uint32_t id) override;

  int parties() const { return parties_; }
  // Threads waiting at barrier `id` now.
  int waiting(std::uint32_t id) const;
  // Times barrier `id` released its parties.
  std::uint64_t releases(std::uint32_t id) const;

  // Called at every release (the simulated time it happens, the barrier id), in the order the
  // observers were added: how phase boundaries reach statistics without a host knowing of them.
  using ReleaseObserver = std::function<void(sc_core::sc_time, std::uint32_t id)>;
  void observe_release(ReleaseObserver observer);
  // Called at every arrival, before a release it completes (same arguments): when each party
  // finished what the barrier closes.
  void observe_arrival(ReleaseObserver observer);

 private:
  struct State {
    int arrived = 0;
    std::uint64_t generation = 0;
    sc_core::sc_event released;
  };
  int parties_;
  std::vector<ReleaseObserver> observers_;
  std::vector<ReleaseObserver> arrival_observers_;
  std::map<std::uint32_t, std::unique_ptr<State>> states_;
};

}  // namespace t3
