#include "models/hbm/arbitration.h"

#include <array>

#include "models/hbm/policy/fcfs.h"
#include "models/hbm/policy/mca.h"
#include "models/hbm/policy/priority.h"

namespace t3 {

namespace {

// One row per policy: a new policy is its file in policy/, its value and name in hbm.arbitration
// (config/system_config) and its row here.
struct PolicyRow {
  Arbitration arbitration;
  std::unique_ptr<ArbitrationPolicy> (*make)(const HbmConfig& config);
};

constexpr std::array kPolicies{
    PolicyRow{Arbitration::Fcfs,
              [](const HbmConfig&) -> std::unique_ptr<ArbitrationPolicy> {
                return std::make_unique<FcfsPolicy>();
              }},
    PolicyRow{Arbitration::Priority,
              [](const HbmConfig& config) -> std::unique_ptr<ArbitrationPolicy> {
                return std::make_unique<PriorityPolicy>(
                    config.priority_class == PriorityClass::Compute ? TrafficClass::Compute
                                                                    : TrafficClass::Communication);
              }},
    PolicyRow{Arbitration::Mca,
              [](const HbmConfig& config) -> std::unique_ptr<ArbitrationPolicy> {
                return std::make_unique<McaPolicy>(config.mca);
              }},
};

}  // namespace

std::unique_ptr<ArbitrationPolicy> make_policy(const HbmConfig& config) {
  for (const PolicyRow& row : kPolicies) {
    if (row.arbitration == config.arbitration) return row.make(config);
  }
  throw ConfigError("hbm.arbitration: no policy has this value");
}

}  // namespace t3
