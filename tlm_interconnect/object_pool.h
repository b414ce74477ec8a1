// Objects handed out last-in first-out and never freed before the pool: a run allocates as many
// as were ever in use at once, and a released object keeps its buffers' capacity for the next
// user. The L2's transits and accesses, the memory controller's transactions and KeyTurns use it.
#pragma once

#include <memory>
#include <vector>

namespace t3 {

template <typename T>
class ObjectPool {
 public:
  T& acquire() {
    if (free_.empty()) {
      all_.push_back(std::make_unique<T>());
      return *all_.back();
    }
    T* object = free_.back();
    free_.pop_back();
    return *object;
  }
  void release(T& object) { free_.push_back(&object); }

 private:
  std::vector<std::unique_ptr<T>> all_;
  std::vector<T*> free_;
};

}  // namespace t3
