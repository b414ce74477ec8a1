// Bank schedulers chosen by name: the registry holds the ones the configuration names, a scheduler
// registered here (newest-first, always the youngest admitted entry) is selected through
// hbm.bank.scheduler and orders a memory controller's service, and an unknown name is refused.
// Each case builds its own design and runs sc_start once (ctest runs every case in its process).
#define SC_INCLUDE_DYNAMIC_PROCESSES
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <tlm_utils/simple_initiator_socket.h>
#include <systemc>
#include <tlm>

#include "config/config_io.h"
#include "models/hbm/memory_controller.h"
#include "models/hbm/scheduler/bank_scheduler.h"

using namespace t3;
using Catch::Matchers::Contains;
using sc_core::SC_NS;
using sc_core::sc_time;

namespace {

// Serves the youngest entry of an admitted class, whatever rows are open and however many writes
// wait: the opposite of every built-in scheduler's order.
class NewestFirst : public BankScheduler {
 public:
  const char* name() const override { return "newest-first"; }
  std::size_t choose(const RequestQueue& queue, const Admissible& allowed) override {
    ++choices;
    for (std::size_t i = queue.size(); i-- > 0;) {
      if (allowed.allows(queue[i].traffic_class)) return i;
    }
    return kNoChoice;
  }
  static inline int choices = 0;  // over every instance: decisions taken
};

const bool kRegistered = [] {
  register_bank_scheduler("newest-first",
                          [](const HbmConfig&) { return std::make_unique<NewestFirst>(); });
  return true;
}();

struct Bench : sc_core::sc_module {
  tlm_utils::simple_initiator_socket<Bench> socket;
  MemoryController mc;
  std::vector<int> completed;  // indices of the reads, in the order they completed

  Bench(sc_core::sc_module_name name, const HbmConfig& config)
      : sc_core::sc_module(name), socket("socket"), mc("mc", config, SimMode::Timing, 0) {
    socket.bind(mc.socket);
  }

  // Read k of `bytes` at `offset`, arriving at `at_ns`, from its own thread.
  void read(int k, std::uint64_t offset, unsigned bytes, double at_ns) {
    sc_core::sc_spawn([this, k, offset, bytes, at_ns] {
      T3Extension extension;
      extension.op = Op::Read;
      tlm::tlm_generic_payload payload;
      payload.set_address(offset);
      payload.set_data_length(bytes);
      payload.set_streaming_width(bytes);
      T3Extension::set(payload, extension);
      sc_time delay(at_ns, SC_NS);
      socket->b_transport(payload, delay);
      REQUIRE(payload.get_response_status() == tlm::TLM_OK_RESPONSE);
      completed.push_back(k);
    });
  }
};

// One pseudo-channel (one channel of one, 16 GB/s), no refresh: granule 256 B, then 16 columns,
// then 4 banks, then the row (as in test_bank). Offset 1024 is a later column of row 0 of bank 0;
// offset 16 KiB is row 1 of bank 0.
HbmConfig one_pseudo_channel(const std::string& scheduler) {
  HbmConfig config;
  config.channels = 1;
  config.bank.pseudo_channels = 1;
  config.bandwidth_GBps = 16;
  config.bank.timing.refi = 0;
  config.bank.address_hash = AddressHash::Plain;  // offsets name banks and rows as above
  config.bank.scheduler = scheduler;
  return config;
}

// A read opening row 0 of bank 0 (t = 0, 256 B, so the others queue behind it), a hit to row 0
// (t = 1 ns) and a conflict in bank 0 (t = 2 ns), on a controller of each scheduler at once.
std::vector<std::unique_ptr<Bench>> hit_then_conflict(const std::vector<std::string>& schedulers) {
  std::vector<std::unique_ptr<Bench>> benches;
  for (const std::string& scheduler : schedulers) {
    benches.push_back(
        std::make_unique<Bench>(("bench_" + scheduler).c_str(), one_pseudo_channel(scheduler)));
    Bench& bench = *benches.back();
    bench.read(0, 0, 256, 0);
    bench.read(1, 1024, 32, 1);
    bench.read(2, 16 * 1024, 32, 2);
  }
  sc_core::sc_start();
  return benches;
}

}  // namespace

TEST_CASE("The registry holds the schedulers the configuration names", "[bank][scheduler]") {
  REQUIRE(kRegistered);
  const std::vector<std::string> names = bank_scheduler_names();
  REQUIRE(names.size() >= kBankSchedulers.size());
  for (std::size_t i = 0; i < kBankSchedulers.size(); ++i) {
    CHECK(names[i] == kBankSchedulers[i]);
    HbmConfig config;
    config.bank.scheduler = kBankSchedulers[i];
    CHECK(std::string(make_bank_scheduler(config)->name()) == kBankSchedulers[i]);
    SystemConfig system;
    apply_override(system, std::string("hbm.bank.scheduler=") + kBankSchedulers[i]);
    CHECK(system.hbm.bank.scheduler == kBankSchedulers[i]);
  }
  CHECK(std::find(names.begin(), names.end(), "newest-first") != names.end());
}

TEST_CASE("An unknown scheduler name is refused naming the key and the choices",
          "[bank][scheduler]") {
  HbmConfig config;
  config.bank.scheduler = "lifo";
  CHECK_THROWS_WITH(make_bank_scheduler(config),
                    Contains("hbm.bank.scheduler: 'lifo' is not one of frfcfs, fcfs"));
  SystemConfig system;
  CHECK_THROWS_WITH(apply_override(system, "hbm.bank.scheduler=lifo"),
                    Contains("hbm.bank.scheduler: 'lifo' is not one of frfcfs, fcfs"));
}

TEST_CASE("A registered scheduler selected by hbm.bank.scheduler orders the service",
          "[bank][scheduler]") {
  const auto benches = hit_then_conflict({"frfcfs", "fcfs", "newest-first"});
  const Bench& frfcfs = *benches[0];
  const Bench& fcfs = *benches[1];
  const Bench& newest = *benches[2];
  // FR-FCFS and FCFS both serve the hit before the younger conflict; newest-first serves the
  // conflict first, closing row 0, so the hit becomes a miss.
  CHECK(frfcfs.completed == std::vector<int>{0, 1, 2});
  CHECK(fcfs.completed == std::vector<int>{0, 1, 2});
  CHECK(newest.completed == std::vector<int>{0, 2, 1});
  CHECK(frfcfs.mc.stats().row_hits == 1);
  CHECK(newest.mc.stats().row_hits == 0);
  CHECK(newest.mc.stats().row_misses == frfcfs.mc.stats().row_misses + 1);
  CHECK(NewestFirst::choices == 3);  // one decision per read served
}
