// Simulation speed of the platform: TLM transactions per wall-clock second for (a) HBM streaming
// through a GPU's router and (b) a link stream from one GPU into the next GPU's HBM, each beside
// the kernel's floors measured in the same process and run (bench/kernel_floor.h).
// Usage: bench_platform [transactions per phase, default 200000]
#include <cstdio>
#include <cstdlib>

#include "bench/kernel_floor.h"
#include "config/config_io.h"
#include "harness/traffic_generator.h"
#include "models/system/tp_group.h"

namespace {

using t3::bench::Clock;

// Waits for each generator in turn and times it; they start far apart, so each runs alone and
// the jump in simulated time between them costs no wall time.
struct PhaseTimer : sc_core::sc_module {
  std::vector<t3::TrafficGenerator*> generators;
  std::vector<double> seconds;
  PhaseTimer(sc_core::sc_module_name name, std::vector<t3::TrafficGenerator*> list)
      : sc_module(name), generators(std::move(list)) {
    SC_HAS_PROCESS(PhaseTimer);
    SC_THREAD(run);
  }
  void run() {
    for (auto* generator : generators) {
      wait(generator->started());
      const auto start = Clock::now();
      wait(generator->finished());
      seconds.push_back(t3::bench::seconds_since(start));
    }
  }
};

}  // namespace

int sc_main(int argc, char* argv[]) {
  const std::uint64_t count = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 200000;
  t3::SystemConfig config = t3::load_system("t3-paper");
  t3::apply_override(config, "gpus=2");
  t3::TpGroup group("group", config);
  t3::bench::KernelFloor floor("floor", count);

  // 64 B uncached reads: the finest granularity, straight to the memory controller.
  auto pattern = [&](std::uint64_t address) {
    t3::TrafficPattern p;
    p.address = address;
    p.bytes = count * 64;
    p.transaction_bytes = 64;
    p.extension.op = t3::Op::Read;
    p.extension.cache_hint = t3::CacheHint::Uncached;
    p.streams = 32;
    return p;
  };
  t3::TrafficGenerator hbm("hbm", t3::Origin{0, 0});
  t3::TrafficGenerator link("link", t3::Origin{0, 1});
  hbm.socket.bind(group.gpu(0).router.in);
  link.socket.bind(group.gpu(0).router.in);
  const sc_core::sc_time later = floor.done_by();
  hbm.add(pattern(group.address_map().hbm_base(0)), later);
  link.add(pattern(group.address_map().hbm_base(1)),
           2 * later + sc_core::sc_time(1, sc_core::SC_MS));
  PhaseTimer timer("timer", {&hbm, &link});

  const auto start = Clock::now();
  sc_core::sc_start();
  const double total = t3::bench::seconds_since(start);
  group.check_drained();

  const double decoupled = floor.decoupled_rate();
  const double synchronised = floor.synchronised_rate();
  const double hbm_rate = static_cast<double>(hbm.transactions()) / timer.seconds.at(0);
  const double link_rate = static_cast<double>(link.transactions()) / timer.seconds.at(1);
  std::printf("bench_platform: %llu transactions per phase, 64 B each, t3-paper with 2 GPUs\n",
              static_cast<unsigned long long>(count));
  std::printf("%-34s %14s %12s %14s\n", "phase", "txn/s", "vs decoupled", "vs synchronised");
  std::printf("%-34s %14.3e %12s %14s\n", "floor: decoupled b_transport", decoupled, "1", "");
  std::printf("%-34s %14.3e %12.3f %14s\n", "floor: b_transport + wait", synchronised,
              synchronised / decoupled, "1");
  std::printf("%-34s %14.3e %12.3f %14.3f\n", "hbm stream via router", hbm_rate,
              hbm_rate / decoupled, hbm_rate / synchronised);
  std::printf("%-34s %14.3e %12.3f %14.3f\n", "link stream gpu0 -> gpu1 hbm", link_rate,
              link_rate / decoupled, link_rate / synchronised);
  std::printf("total wall time %.2f s\n", total);
  return 0;
}
