// Arbitration policies: which queued request a free channel serves next. The interface and the
// factory; each policy is one file in policy/ and one row of make_policy's table.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>
#include <systemc>

#include "config/system_config.h"
#include "tlm_interconnect/payload.h"

namespace t3 {

// What a policy may look at of one queued request.
struct QueuedRequest {
  std::uint64_t sequence;  // arrival order at this controller, unique
  sc_core::sc_time arrival;
  Op op;
  TrafficClass traffic_class;
  std::uint32_t bytes;
  bool urgent = false;  // T3Extension::urgent: its issuer waits on it
};

// The queue a policy looks at, read-only, in arrival order. The memory controller keeps each
// request beside its own bookkeeping in one ring of entries (one container to push and erase, not
// two in step), so a view steps over entries by a stride rather than needing requests alone.
class QueueView {
 public:
  // A plain array of requests (the tests' queues). Implicit, so they pass a vector as it is.
  QueueView(const std::vector<QueuedRequest>& requests)  // NOLINT(google-explicit-constructor)
      : QueueView(requests.data(), sizeof(QueuedRequest), 0, ~std::size_t{0}, requests.size()) {}
  // `size` requests in a ring: the i-th at byte (head + i) & mask times `stride` from `first`.
  QueueView(const QueuedRequest* first, std::size_t stride, std::size_t head, std::size_t mask,
            std::size_t size)
      : first_(reinterpret_cast<const unsigned char*>(first)),
        stride_(stride),
        head_(head),
        mask_(mask),
        size_(size) {}
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const QueuedRequest& operator[](std::size_t i) const {
    return *reinterpret_cast<const QueuedRequest*>(first_ + ((head_ + i) & mask_) * stride_);
  }

 private:
  const unsigned char* first_;
  std::size_t stride_;
  std::size_t head_;
  std::size_t mask_;
  std::size_t size_;
};

// What a policy lets the bank scheduler (FR-FCFS beneath every policy) choose from: the entries
// of the allowed traffic classes; nothing allowed declines, like a nullopt pick().
struct Admissible {
  bool compute = true;
  bool communication = true;
  // A class held back may still have its row hits served after the admitted classes' row hits
  // and before their misses (FR-FCFS's first-ready rule above the policy's ranking).
  bool held_row_hits = false;
  bool allows(TrafficClass traffic_class) const {
    return traffic_class == TrafficClass::Compute ? compute : communication;
  }
  bool none() const { return !compute && !communication; }
};

class ArbitrationPolicy {
 public:
  virtual ~ArbitrationPolicy() = default;
  virtual const char* name() const = 0;
  // The bank model's question (the simple model asks pick()): which queued requests may go now.
  // Same contract on `queue`, `now` and retry_after() as pick().
  virtual Admissible admissible(QueueView queue, sc_core::sc_time now) = 0;
  // Index into `queue` (arrival order, never empty) of the request to serve now; nullopt leaves
  // the channel idle until the next arrival or until retry_after() has passed.
  virtual std::optional<std::size_t> pick(QueueView queue, sc_core::sc_time now) = 0;
  // How long to wait before asking again after pick() declined; SC_ZERO_TIME means "only on the
  // next arrival".
  virtual sc_core::sc_time retry_after() const { return sc_core::SC_ZERO_TIME; }
  // True if admissible() admits every request whatever is queued, so the bank model need not ask
  // (asking touches the policy's object, a cache miss per choice).
  virtual bool admits_everything() const { return false; }
  // Adds what this instance decided to the controller's report: called on each queue's instance in
  // queue order, all on one object, so a policy sums its queues there. Without statistics to show,
  // adds nothing.
  virtual void add_to_report(nlohmann::json& /*report*/) const {}
};

// One policy instance per channel (policies may keep per-channel state). Throws ConfigError naming
// hbm.mca.* for an invalid MCA configuration.
std::unique_ptr<ArbitrationPolicy> make_policy(const HbmConfig& config);

}  // namespace t3
