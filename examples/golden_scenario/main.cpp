// A golden-model run (docs/verification.md walks through it): T3's fused GEMM + reduce-scatter
// on 4 GPUs, on the small configuration of testbenches/small_system.h, in functional
// mode. ScenarioCheck loads integer-valued fp32 operands into every GPU and checks the
// reduce-scattered chunks and the all-gathered output bit for bit against the reference GEMM.
// Prints the checks, the sublayer time and the DRAM bytes; exit status 1 on a mismatch.
// Optional argument: a file to write the whole result JSON to.
#include <fstream>
#include <iomanip>
#include <iostream>
#include <string>

#include <systemc>

#include "config/config_io.h"
#include "experiments/scenario_run.h"
#include "harness/scenario_check.h"
#include "workloads/scenario.h"

int sc_main(int argc, char* argv[]) {
  // As in the test suites: any SystemC warning or error is a failure.
  sc_core::sc_report_handler::set_actions(sc_core::SC_WARNING,
                                          sc_core::SC_DISPLAY | sc_core::SC_THROW);
  sc_core::sc_report_handler::set_actions(sc_core::SC_ERROR,
                                          sc_core::SC_DISPLAY | sc_core::SC_THROW);

  t3::SystemConfig config = t3::load_system("t3-paper");
  for (const char* assignment : {"gpus=4", "sim.mode=functional", "sm.count=4", "gemm.tile_m=32",
                                 "gemm.tile_n=16", "gemm.tile_k=8", "l2.size_bytes=65536"}) {
    t3::apply_override(config, assignment);
  }
  t3::validate(config);
  const t3::GemmShape shape{64 * 4, 40, 24};  // two tile rows per chunk, a ragged last column
  const t3::ScenarioPlan plan = t3::plan_scenario(config, shape, t3::Scenario::T3,
                                                  t3::ElementType::Fp32, t3::ElementType::Fp32);

  t3::ScenarioRun run(config, plan);         // builds the group, loads the host programs
  sc_core::sc_start(sc_core::SC_ZERO_TIME);  // finish elaboration: sockets are bound
  const t3::ScenarioCheck check(run.group(), plan, /*seed=*/7);  // loads A and B
  run.run();  // sc_start() to the end; throws on a host error or a deadlock

  const std::string reduce_scatter = check.check_reduce_scattered();
  const std::string all_gather = check.check_all_gathered();
  const nlohmann::json result = run.result();
  std::cout << "golden_scenario: " << result["scenario"].get<std::string>() << ", "
            << run.group().gpus() << " GPUs, M=" << shape.m << " N=" << shape.n << " K=" << shape.k
            << ", fp32\n"
            << "  reduce-scatter  " << (reduce_scatter.empty() ? "exact" : reduce_scatter) << "\n"
            << "  all-gather      " << (all_gather.empty() ? "exact" : all_gather) << "\n"
            << "  time_ns         " << std::fixed << std::setprecision(1)
            << result["time_ns"].get<double>() << "\n"
            << "  dram_bytes      " << result["dram_bytes"].dump() << "\n";
  if (argc > 1) std::ofstream(argv[1]) << result.dump(2) << "\n";
  const bool passed = reduce_scatter.empty() && all_gather.empty();
  std::cout << "golden_scenario: " << (passed ? "PASS" : "FAIL") << "\n";
  return passed ? 0 : 1;
}
