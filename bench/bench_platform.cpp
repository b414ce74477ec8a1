// Simulation speed of the platform: TLM transactions per wall-clock second for (a) HBM streaming
// through a GPU's router and (b) a link stream from one GPU into the next GPU's HBM, each beside
// two kernel floors measured in the same process and run:
//   decoupled floor:    b_transport into a trivial target under a quantum keeper (no wait)
//   synchronised floor: the same with one wait() per transaction, the least any model pays
//                       whose targets keep real queues that the initiator must wait on.
// Usage: bench_platform [transactions per phase, default 200000]
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>
#include <tlm_utils/tlm_quantumkeeper.h>
#include <systemc>
#include <tlm>

#include "config/config_io.h"
#include "models/system/tp_group.h"
#include "testbenches/traffic_generator.h"

namespace {

using Clock = std::chrono::steady_clock;

struct TrivialTarget : sc_core::sc_module {
  tlm_utils::simple_target_socket<TrivialTarget> socket{"socket"};
  bool synchronise = false;
  explicit TrivialTarget(sc_core::sc_module_name name) : sc_module(name) {
    socket.register_b_transport(this, &TrivialTarget::b_transport);
  }
  void b_transport(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay) {
    delay += sc_core::sc_time(1, sc_core::SC_NS);
    if (synchronise) {
      wait(delay);
      delay = sc_core::SC_ZERO_TIME;
    }
    payload.set_response_status(tlm::TLM_OK_RESPONSE);
  }
};

// Runs the phases one after another inside one thread and times each in wall-clock seconds.
struct Bench : sc_core::sc_module {
  tlm_utils::simple_initiator_socket<Bench> socket{"socket"};
  TrivialTarget target{"target"};
  std::uint64_t count;
  t3::TrafficGenerator* hbm;
  t3::TrafficGenerator* link;
  double floor_decoupled = 0, floor_synchronised = 0, hbm_s = 0, link_s = 0;

  Bench(sc_core::sc_module_name name, std::uint64_t transactions, t3::TrafficGenerator* h,
        t3::TrafficGenerator* l)
      : sc_module(name), count(transactions), hbm(h), link(l) {
    socket.bind(target.socket);
    SC_HAS_PROCESS(Bench);
    SC_THREAD(run);
  }

  double floor(bool synchronise) {
    target.synchronise = synchronise;
    tlm_utils::tlm_quantumkeeper keeper;
    keeper.reset();
    tlm::tlm_generic_payload payload;
    unsigned char data[64] = {};
    payload.set_data_ptr(data);
    payload.set_data_length(64);
    payload.set_command(tlm::TLM_READ_COMMAND);
    const auto start = Clock::now();
    for (std::uint64_t i = 0; i < count; ++i) {
      sc_core::sc_time delay = keeper.get_local_time();
      socket->b_transport(payload, delay);
      keeper.set(delay);
      if (keeper.need_sync()) keeper.sync();
    }
    keeper.sync();
    return std::chrono::duration<double>(Clock::now() - start).count();
  }

  // The generators start at fixed far-apart times, so each phase runs alone; the jump in
  // simulated time between phases costs no wall time.
  double timed(const sc_core::sc_event& finished) {
    const auto start = Clock::now();
    wait(finished);
    return std::chrono::duration<double>(Clock::now() - start).count();
  }

  void run() {
    floor_decoupled = floor(false);
    floor_synchronised = floor(true);
    hbm_s = timed(hbm->finished());
    link_s = timed(link->finished());
  }
};

}  // namespace

int sc_main(int argc, char* argv[]) {
  const std::uint64_t count = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 200000;
  t3::SystemConfig config = t3::load_system("t3-paper");
  t3::apply_override(config, "gpus=2");
  t3::TpGroup group("group", config);

  // 64 B accesses: the finest granularity, so the count is what is measured.
  auto pattern = [&](std::uint64_t address) {
    t3::TrafficPattern p;
    p.address = address;
    p.bytes = count * 64;
    p.transaction_bytes = 64;
    p.extension.op = t3::Op::Read;
    p.streams = 32;
    return p;
  };
  t3::TrafficGenerator hbm("hbm", t3::Origin{0, 0});
  t3::TrafficGenerator link("link", t3::Origin{0, 1});
  hbm.socket.bind(group.gpu(0).router.in);
  link.socket.bind(group.gpu(0).router.in);
  Bench bench("bench", count, &hbm, &link);
  const sc_core::sc_time later(1, sc_core::SC_SEC);  // after the floors, however long they take
  hbm.add(pattern(group.address_map().hbm_base(0)), later);
  link.add(pattern(group.address_map().hbm_base(1)), 2 * later);

  const auto start = Clock::now();
  sc_core::sc_start();
  const double total = std::chrono::duration<double>(Clock::now() - start).count();
  group.check_drained();

  const double n = static_cast<double>(count);
  const double decoupled = n / bench.floor_decoupled;
  const double synchronised = n / bench.floor_synchronised;
  const double hbm_rate = static_cast<double>(hbm.transactions()) / bench.hbm_s;
  const double link_rate = static_cast<double>(link.transactions()) / bench.link_s;
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
