// Simulation speed of a whole GEMM: T-NLG FC-2 at TP 8 on every GPU of t3-paper (timing-only),
// beside the kernel's floors measured in the same process and run (bench/kernel_floor.h).
// Prints wall time, simulated SM transactions per second and the ratio to the floors.
// Usage: bench_gemm [floor transactions, default 200000]
#include <cstdio>
#include <cstdlib>

#include "bench/kernel_floor.h"
#include "config/config_io.h"
#include "models/system/simulation.h"
#include "workloads/gemm_plan.h"
#include "workloads/model_zoo.h"
#include "workloads/sublayer.h"

namespace {

using t3::bench::Clock;

// Times from the hosts' common start to the last host's end.
struct GemmTimer : sc_core::sc_module {
  t3::TpGroup& group;
  sc_core::sc_time begin;
  double seconds = 0;
  GemmTimer(sc_core::sc_module_name name, t3::TpGroup& g, sc_core::sc_time at)
      : sc_module(name), group(g), begin(at) {
    SC_HAS_PROCESS(GemmTimer);
    SC_THREAD(run);
  }
  void run() {
    wait(begin);
    const auto start = Clock::now();
    for (int g = 0; g < group.gpus(); ++g) {
      if (!group.host(g).done()) wait(group.host(g).finished);
    }
    seconds = t3::bench::seconds_since(start);
  }
};

}  // namespace

int sc_main(int argc, char* argv[]) {
  const std::uint64_t count = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 200000;
  t3::SystemConfig config = t3::load_system("t3-paper");
  t3::apply_override(config, "gpus=8");
  const t3::GemmShape shape =
      t3::sublayer_gemm(t3::model("t-nlg"), t3::Sublayer::Fc2, 8, config.workload.tokens);
  t3::TpGroup group("group", config);
  t3::bench::KernelFloor floor("floor", count);
  // Every host idles until the floors are done, so the GEMM runs alone.
  const auto start_ns = static_cast<std::uint32_t>(floor.done_by().to_seconds() * 1e9);
  std::vector<t3::Program> programs = t3::plan_group_gemm(config, shape).programs();
  for (auto& program : programs) {
    program.commands.insert(program.commands.begin(),
                            {t3::HostCommand::Kind::Delay, 0, start_ns, "wait for the floors"});
  }
  GemmTimer timer("timer", group, floor.done_by());
  const t3::RunSummary run = t3::run_to_completion(group, programs);

  std::uint64_t transactions = 0;
  for (int g = 0; g < group.gpus(); ++g) {
    for (int s = 0; s < group.gpu(g).sms(); ++s) {
      transactions += group.gpu(g).sm(s).stats().reads + group.gpu(g).sm(s).stats().writes;
    }
  }
  const double rate = static_cast<double>(transactions) / timer.seconds;
  std::printf("bench_gemm: t-nlg fc2, TP 8, M=%lld N=%lld K=%lld, t3-paper, every GPU simulated\n",
              static_cast<long long>(shape.m), static_cast<long long>(shape.n),
              static_cast<long long>(shape.k));
  std::printf("  GEMM wall time               %.2f s (whole run %.2f s)\n", timer.seconds,
              run.wall_time_s);
  std::printf("  SM transactions              %llu (%lld B each at most)\n",
              static_cast<unsigned long long>(transactions),
              static_cast<long long>(config.sm.request_bytes));
  std::printf("  SM transactions per second   %.3e\n", rate);
  std::printf("  floor: decoupled b_transport %.3e/s  ratio %.4f\n", floor.decoupled_rate(),
              rate / floor.decoupled_rate());
  std::printf("  floor: b_transport + wait    %.3e/s  ratio %.4f\n", floor.synchronised_rate(),
              rate / floor.synchronised_rate());
  return 0;
}
