// Arbitration policies: which queued request a free channel serves next.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>

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
};

class ArbitrationPolicy {
 public:
  virtual ~ArbitrationPolicy() = default;
  virtual const char* name() const = 0;
  // Index into `queue` (arrival order, never empty) of the request to serve now; nullopt leaves
  // the channel idle until the next arrival or until retry_after() has passed.
  virtual std::optional<std::size_t> pick(const std::deque<QueuedRequest>& queue,
                                          sc_core::sc_time now) = 0;
  // How long to wait before asking again after pick() declined; SC_ZERO_TIME means "only on the
  // next arrival".
  virtual sc_core::sc_time retry_after() const { return sc_core::SC_ZERO_TIME; }
};

// Serves strictly in arrival order.
class FcfsPolicy : public ArbitrationPolicy {
 public:
  const char* name() const override { return "fcfs"; }
  std::optional<std::size_t> pick(const std::deque<QueuedRequest>& queue,
                                  sc_core::sc_time now) override;
};

// Serves the oldest request of the favoured traffic class, then the oldest of the other.
class PriorityPolicy : public ArbitrationPolicy {
 public:
  explicit PriorityPolicy(TrafficClass favoured) : favoured_(favoured) {}
  const char* name() const override { return "priority"; }
  std::optional<std::size_t> pick(const std::deque<QueuedRequest>& queue,
                                  sc_core::sc_time now) override;

 private:
  TrafficClass favoured_;
};

// One policy instance per channel (policies may keep per-channel state).
// Throws ConfigError naming hbm.arbitration for a policy not built yet.
std::unique_ptr<ArbitrationPolicy> make_policy(const HbmConfig& config);

}  // namespace t3
