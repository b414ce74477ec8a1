// The dispatcher's hardware queues (protocol/dispatcher_registers.h): kernels on different queues
// run at once and share the SM slots, a queue's priority decides who takes a free slot, each
// queue has its own status and interrupt, and a queue refuses a second kernel while it runs one.
// Each case builds at most one design (the side-by-side timing runs in child processes).
#include <catch2/catch.hpp>

#include <set>
#include <string>
#include <vector>

#include "config/config_io.h"
#include "experiments/isolated.h"
#include "models/system/simulation.h"
#include "models/system/tp_group.h"
#include "testbenches/small_system.h"
#include "workloads/gemm_plan.h"
#include "workloads/interference_program.h"

using namespace t3;
using Catch::Contains;

namespace {

// Two GEMMs on GPU 0 of a small group: the second's output goes after the first's C.
struct TwoGemms {
  SystemConfig config = small_system(2, SimMode::Timing);
  GemmShape shape{256, 128, 64};
  GemmLaunch first, second;
  TwoGemms() {
    const GroupGemmPlan plan = plan_group_gemm(config, shape);
    first = second = plan.gpus[0].launch;
    first.label = "first";
    second.label = "second";
    const std::uint64_t c_bytes = static_cast<std::uint64_t>(shape.m * shape.n * 2);
    for (auto& out : second.outputs) out.base += c_bytes;
  }
  // Runs `program` on GPU 0 and returns the dispatcher's records.
  std::vector<LaunchRecord> run(const Program& program, std::vector<DispatchRecord>* dispatched) {
    TpGroup group("group", config);
    group.load({program, Program{}});
    simulate(group);  // throws naming a host error
    if (dispatched) *dispatched = group.gpu(0).dispatcher.dispatched();
    return group.gpu(0).dispatcher.launches();
  }
};

double ns(sc_core::sc_time time) {
  return time.to_seconds() * 1e9;
}

}  // namespace

TEST_CASE("kernels on two queues run at once and finish sooner than one after the other",
          "[queues]") {
  const auto end_of = [](bool concurrent) {
    TwoGemms two;
    Program program;
    if (concurrent) {
      two.first.wait = false;
      two.second.queue = 1;
    }
    append_gemm(program, two.first);
    append_gemm(program, two.second);
    if (concurrent) program.commands.push_back(wait_kernel(two.first.dispatcher, 0, "first"));
    const auto launches = two.run(program, nullptr);
    REQUIRE(launches.size() == 2);
    nlohmann::json result = {{"overlap", launches[1].start < launches[0].end},
                             {"end", ns(std::max(launches[0].end, launches[1].end))},
                             {"queues", {launches[0].queue, launches[1].queue}}};
    for (const auto& launch : launches) CHECK(launch.status == dispatcher::kDone);
    return result;
  };
  const auto results =
      run_isolated({[&] { return end_of(false); }, [&] { return end_of(true); }}, 1);
  const auto& serial = results.at(0);
  const auto& concurrent = results.at(1);
  REQUIRE(!serial.contains("error"));
  REQUIRE(!concurrent.contains("error"));
  CHECK(serial["overlap"] == false);
  CHECK(concurrent["overlap"] == true);
  CHECK(concurrent["queues"] == nlohmann::json{0, 1});
  // The second kernel fills the slots the first leaves idle at its tail and its launch latency
  // hides behind the first's run.
  CHECK(concurrent["end"].get<double>() < serial["end"].get<double>());
}

TEST_CASE("a queue of higher priority takes every free slot first", "[queues]") {
  TwoGemms two;
  Program program;
  two.first.wait = false;
  two.second.queue = 2;
  program.commands.push_back(
      {HostCommand::Kind::WriteRegister,
       two.first.dispatcher + dispatcher::queue_register(2, dispatcher::kQueuePriority), 1,
       "queue 2 first"});
  append_gemm(program, two.first);
  append_gemm(program, two.second);
  program.commands.push_back(wait_kernel(two.first.dispatcher, 0, "first"));
  std::vector<DispatchRecord> dispatched;
  const auto launches = two.run(program, &dispatched);
  REQUIRE(launches.size() == 2);
  CHECK(launches[1].queue == 2);
  // Once the second launch dispatches, the first gets no slot until the second has all of its.
  std::size_t first_of_second = dispatched.size(), last_of_second = 0;
  for (std::size_t i = 0; i < dispatched.size(); ++i) {
    if (dispatched[i].launch != launches[1].launch) continue;
    first_of_second = std::min(first_of_second, i);
    last_of_second = i;
  }
  REQUIRE(first_of_second < dispatched.size());
  for (std::size_t i = first_of_second; i <= last_of_second; ++i) {
    CHECK(dispatched[i].launch == launches[1].launch);
  }
  // And the first was still dispatching when the second started: priority, not order, decided.
  CHECK(dispatched.back().launch == launches[0].launch);
}

TEST_CASE("a busy queue refuses a second kernel while another queue takes it", "[queues]") {
  TwoGemms two;
  Program program;
  two.first.wait = false;
  append_gemm(program, two.first);
  GemmLaunch again = two.second;
  again.wait = false;
  append_gemm(program, again);  // queue 0 again: refused
  program.commands.push_back(wait_kernel(two.first.dispatcher, 0, "first"));
  two.second.queue = 3;
  append_gemm(program, two.second);
  TpGroup group("group", two.config);
  group.load({program, Program{}});
  // The refusal raised queue 0's interrupt before the first kernel ended: the host's wait saw it.
  CHECK_THROWS_WITH(simulate(group), Contains("dispatcher rejected the kernel: busy"));
  const auto& launches = group.gpu(0).dispatcher.launches();
  REQUIRE(launches.size() == 2);
  CHECK(launches[0].status == dispatcher::kDone);
  CHECK(launches[1].error == dispatcher::kBusy);
  CHECK(group.gpu(0).dispatcher.status(0) == dispatcher::kDone);
}

TEST_CASE("queue numbers out of range are refused naming the queue", "[queues]") {
  TwoGemms two;
  Program program;
  two.first.queue = dispatcher::kQueues;
  CHECK_THROWS_WITH(append_gemm(program, two.first),
                    Contains("first: queue = 4 must be in [0, 4)"));
  TwoGemms bad;
  Program wait;
  wait.commands.push_back(wait_kernel(bad.first.dispatcher, 7, "nowhere"));
  TpGroup group("group", bad.config);
  group.load({wait, Program{}});
  CHECK_THROWS_WITH(simulate(group), Contains("no queue 7"));
}

TEST_CASE("two launches confined to SM ranges use only their own SMs and run side by side",
          "[queues][sm-range]") {
  TwoGemms two;  // 4 SMs
  Program program;
  two.first.wait = false;
  two.second.queue = 1;
  append_sm_range(program, two.first.dispatcher, SmRange{0, 1}, "first");
  append_gemm(program, two.first);
  append_sm_range(program, two.first.dispatcher, SmRange{1, 0}, "second");  // 1 to the last
  append_gemm(program, two.second);
  program.commands.push_back(wait_kernel(two.first.dispatcher, 0, "first"));
  std::vector<DispatchRecord> dispatched;
  const auto launches = two.run(program, &dispatched);
  REQUIRE(launches.size() == 2);
  std::set<int> first_sms, second_sms;
  for (const DispatchRecord& record : dispatched) {
    (record.launch == launches[0].launch ? first_sms : second_sms).insert(record.sm);
  }
  CHECK(first_sms == std::set<int>{0});
  CHECK(second_sms == std::set<int>{1, 2, 3});
  // The first, on one SM, is still running when the second (on three) starts and ends.
  CHECK(launches[1].start < launches[0].end);
  CHECK(launches[1].end < launches[0].end);
}

TEST_CASE("an SM range past the last SM fails the doorbell with bad SM range",
          "[queues][sm-range]") {
  // Each range in a process of its own (one elaboration per process).
  const auto refusal = [](SmRange range) {
    TwoGemms two;  // 4 SMs
    Program program;
    append_sm_range(program, two.first.dispatcher, range, "first");
    append_gemm(program, two.first);
    TpGroup group("group", two.config);
    group.load({program, Program{}});
    std::string message;
    try {
      simulate(group);
    } catch (const std::exception& error) {
      message = error.what();
    }
    return nlohmann::json{{"message", message}, {"code", group.gpu(0).dispatcher.error()}};
  };
  const std::vector<SmRange> ranges = {{4, 0}, {2, 3}, {5, 1}, {3, 1}};
  std::vector<IsolatedJob> jobs;
  for (const SmRange& range : ranges) jobs.push_back([=] { return refusal(range); });
  const auto results = run_isolated(jobs, 1);
  for (std::size_t i = 0; i + 1 < ranges.size(); ++i) {
    INFO("SM_FIRST " << ranges[i].first << ", SM_COUNT " << ranges[i].count);
    CHECK_THAT(results[i]["message"].get<std::string>(), Contains("bad SM range (error 8)"));
    CHECK(results[i]["code"] == dispatcher::kBadSmRange);
  }
  // The last SM alone is a valid range.
  CHECK(results.back()["message"] == "");
  CHECK(results.back()["code"] == dispatcher::kNoError);
}
