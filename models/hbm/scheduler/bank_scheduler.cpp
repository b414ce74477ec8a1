// The registry of bank schedulers by name.
#include <utility>

#include "models/hbm/scheduler/bank_scheduler.h"
#include "models/hbm/scheduler/fcfs.h"
#include "models/hbm/scheduler/frfcfs.h"

namespace t3 {

namespace {

template <class Scheduler>
std::unique_ptr<BankScheduler> make(const HbmConfig& config) {
  return std::make_unique<Scheduler>(config);
}

using Registry = std::vector<std::pair<std::string, BankSchedulerFactory>>;

// The built-in schedulers, one per name of kBankSchedulers (config/system_config.h, the choices
// hbm.bank.scheduler accepts), in its order: a new one is its own file, its line here and its
// name there.
Registry built_in() {
  Registry registry = {{"frfcfs", make<FrFcfs>}, {"fcfs", make<Fcfs>}};
  bool same = registry.size() == kBankSchedulers.size();
  for (std::size_t i = 0; same && i < registry.size(); ++i) {
    same = registry[i].first == kBankSchedulers[i];
  }
  if (!same) throw std::logic_error("bank schedulers: the registry and kBankSchedulers differ");
  return registry;
}

Registry& registry() {
  static Registry schedulers = built_in();
  return schedulers;
}

}  // namespace

void register_bank_scheduler(const std::string& name, BankSchedulerFactory factory) {
  for (auto& [known, make] : registry()) {
    if (known == name) {
      make = std::move(factory);
      return;
    }
  }
  registry().emplace_back(name, std::move(factory));
}

std::vector<std::string> bank_scheduler_names() {
  std::vector<std::string> names;
  for (const auto& entry : registry()) names.push_back(entry.first);
  return names;
}

std::unique_ptr<BankScheduler> make_bank_scheduler(const HbmConfig& config) {
  for (const auto& [name, make] : registry()) {
    if (name == config.bank.scheduler) return make(config);
  }
  std::string known;
  for (const auto& name : bank_scheduler_names()) known += (known.empty() ? "" : ", ") + name;
  throw ConfigError("hbm.bank.scheduler: '" + config.bank.scheduler + "' is not one of " + known);
}

}  // namespace t3
