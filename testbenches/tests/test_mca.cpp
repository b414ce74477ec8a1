// Communication-aware memory-controller arbitration (MCA): the policy's rule checked pick by pick
// on hand-built queues, and one controller-level run against FCFS. Each case builds its own
// design and runs sc_start at most once (ctest runs every case in its own process).
#define SC_INCLUDE_DYNAMIC_PROCESSES
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <deque>
#include <functional>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include <tlm_utils/simple_initiator_socket.h>
#include <systemc>
#include <tlm>

#include "models/hbm/arbitration.h"
#include "models/hbm/memory_controller.h"

using namespace t3;
using sc_core::SC_NS;
using sc_core::sc_time;
using sc_core::sc_time_stamp;
using sc_core::SC_ZERO_TIME;

namespace {

sc_time ns(double value) {
  return sc_time(value, SC_NS);
}

QueuedRequest compute(std::uint64_t sequence, double arrival_ns) {
  return {sequence, ns(arrival_ns), Op::Read, TrafficClass::Compute, 64};
}

QueuedRequest communication(std::uint64_t sequence, double arrival_ns) {
  return {sequence, ns(arrival_ns), Op::Update, TrafficClass::Communication, 64};
}

using Pick = std::optional<std::size_t>;

// Asks the policy at `now`; if it picks, removes the pick from the queue as the controller does.
Pick serve(McaPolicy& policy, std::deque<QueuedRequest>& queue, double now_ns) {
  const Pick pick = policy.pick(queue, ns(now_ns));
  if (pick) queue.erase(queue.begin() + static_cast<std::ptrdiff_t>(*pick));
  return pick;
}

// Feeds `arrivals` compute requests (one per pick, each served at once) arriving at the given
// times, starting at sequence `sequence`.
void feed_compute(McaPolicy& policy, const std::vector<double>& arrivals_ns,
                  std::uint64_t& sequence) {
  for (double at : arrivals_ns) {
    std::deque<QueuedRequest> queue = {compute(sequence++, at)};
    REQUIRE(serve(policy, queue, at) == Pick(0));
  }
}

}  // namespace

TEST_CASE("MCA serves compute before older communication", "[mca]") {
  McaConfig config;  // starvation 2000 ns
  for (std::int64_t threshold : {std::int64_t{0}, std::int64_t{1}}) {
    config.threshold = threshold;
    INFO("threshold " << threshold);
    McaPolicy policy(config);
    std::deque<QueuedRequest> queue = {communication(0, 0), compute(1, 10), compute(2, 20)};
    // Communication has waited 100 ns < starvation_ns: the oldest compute request goes first.
    CHECK(serve(policy, queue, 100) == Pick(1));
    CHECK(serve(policy, queue, 110) == Pick(1));  // then the next compute request
    CHECK(policy.stats().compute_served == 2);
    CHECK(policy.stats().starvation_overrides == 0);
    CHECK(std::string(policy.name()) == "mca");
  }
}

TEST_CASE("MCA picks the oldest by arrival when arrivals are not in sequence order", "[mca]") {
  McaConfig config;
  config.threshold = 1;
  McaPolicy policy(config);
  // In order at first: the first request of each class is its oldest.
  std::deque<QueuedRequest> queue = {compute(0, 10), compute(1, 20)};
  CHECK(serve(policy, queue, 30) == Pick(0));
  // A request arrives earlier than one seen before it (a queue built by another controller):
  // from now on age is compared, not position.
  queue.push_back(compute(2, 15));
  queue.push_back(communication(3, 40));
  queue.push_back(communication(4, 5));
  CHECK(serve(policy, queue, 2005) == Pick(3));  // communication 4 (arrived 5) has starved
  CHECK(serve(policy, queue, 2006) == Pick(1));  // compute 2, arrived 15 < 20
  CHECK(serve(policy, queue, 2007) == Pick(0));  // compute 1
}

TEST_CASE("MCA finds each class's oldest request wherever it is queued", "[mca]") {
  McaConfig config;
  config.threshold = 1;
  McaPolicy policy(config);
  std::uint64_t sequence = 0;
  std::deque<QueuedRequest> queue;
  // Ten communication requests, then compute behind them (a queue MCA has let fill up).
  for (int k = 0; k < 10; ++k) queue.push_back(communication(sequence++, k));
  queue.push_back(compute(sequence++, 10));
  queue.push_back(compute(sequence++, 11));
  CHECK(serve(policy, queue, 20) == Pick(10));
  CHECK(serve(policy, queue, 21) == Pick(10));
  // Only communication is left; compute arrived in the window, so it waits until it starves.
  CHECK(serve(policy, queue, 22) == std::nullopt);
  CHECK(serve(policy, queue, 2000) == Pick(0));
  // Requests that leave the queue other than by a pick (here dropped by hand) are not looked for.
  queue.clear();
  queue.push_back(communication(sequence++, 3000));
  queue.push_back(communication(sequence++, 3001));
  queue.push_back(compute(sequence++, 3002));
  CHECK(serve(policy, queue, 3010) == Pick(2));
  CHECK(serve(policy, queue, 3011) == std::nullopt);
  CHECK(serve(policy, queue, 3000 + config.starvation_ns) == Pick(0));
  CHECK(queue.front().sequence == 13);
  CHECK(policy.stats().compute_served == 3);
  CHECK(policy.stats().communication_served == 2);
}

TEST_CASE("MCA serves communication at low compute intensity and declines at high", "[mca]") {
  McaConfig config;
  config.threshold = 3;
  config.window_ns = 1000;
  config.starvation_ns = 2000;
  McaPolicy policy(config);
  std::uint64_t sequence = 0;

  // One compute arrival in the window: 1 < 3, communication is served although compute ran.
  feed_compute(policy, {100}, sequence);
  std::deque<QueuedRequest> queue = {communication(sequence++, 150)};
  CHECK(serve(policy, queue, 200) == Pick(0));
  CHECK(policy.stats().declines == 0);

  // Three more compute arrivals, queued together and served oldest first.
  queue = {compute(sequence, 300), compute(sequence + 1, 310), compute(sequence + 2, 320)};
  sequence += 3;
  CHECK(serve(policy, queue, 320) == Pick(0));
  CHECK(serve(policy, queue, 330) == Pick(0));
  CHECK(serve(policy, queue, 340) == Pick(0));
  CHECK(queue.empty());

  // Only communication queued, 4 compute arrivals (100, 300, 310, 320) in (400 - 1000, 400]:
  // 4 >= 3, declined.
  const double comm_arrival = 400;
  queue = {communication(sequence++, comm_arrival)};
  CHECK(serve(policy, queue, 400) == std::nullopt);
  CHECK(policy.window_compute_arrivals() == 4);
  CHECK(policy.stats().declines == 1);
  // The gate opens when the count drops to threshold - 1 = 2, i.e. once the arrivals at 100 and
  // 300 have left the window: at 300 + window_ns. That is before starvation (400 + 2000).
  const double gate_opens = std::min(300 + config.window_ns, comm_arrival + config.starvation_ns);
  CHECK(policy.retry_after() == ns(gate_opens - 400));
  CHECK(policy.retry_after() > SC_ZERO_TIME);

  // One nanosecond before, 300 is still inside (299, 1299]: declined, retry in exactly 1 ns.
  CHECK(serve(policy, queue, gate_opens - 1) == std::nullopt);
  CHECK(policy.window_compute_arrivals() == 3);
  CHECK(policy.retry_after() == ns(1));
  CHECK(policy.stats().declines == 2);
  // At the retry time the window holds 310 and 320 only: 2 < 3, served.
  CHECK(serve(policy, queue, gate_opens) == Pick(0));
  CHECK(policy.window_compute_arrivals() == 2);
  CHECK(policy.retry_after() == SC_ZERO_TIME);
  CHECK(policy.stats().starvation_overrides == 0);
  CHECK(policy.stats().communication_served == 2);
  CHECK(policy.stats().compute_served == 4);
}

TEST_CASE("MCA starvation limit serves old communication over compute", "[mca]") {
  McaConfig config;
  config.threshold = 1;
  config.starvation_ns = 2000;
  config.window_ns = 5000;

  SECTION("over queued compute") {
    McaPolicy policy(config);
    std::deque<QueuedRequest> queue = {communication(0, 0), communication(1, 50), compute(2, 1000),
                                       compute(3, 1500)};
    // Communication 0 has waited 1999 ns: compute first.
    CHECK(serve(policy, queue, config.starvation_ns - 1) == Pick(2));
    // At 2000 ns it has waited starvation_ns: the oldest starved communication request wins.
    CHECK(serve(policy, queue, config.starvation_ns) == Pick(0));
    CHECK(policy.stats().starvation_overrides == 1);
    // Communication 1 (arrived 50) is not starved until 2050: compute again.
    CHECK(serve(policy, queue, 2010) == Pick(1));
    CHECK(serve(policy, queue, 2050) == Pick(0));
    CHECK(policy.stats().starvation_overrides == 2);
    CHECK(queue.empty());
  }

  SECTION("through a closed gate, at the retry time the policy asked for") {
    McaPolicy policy(config);
    std::uint64_t sequence = 0;
    feed_compute(policy, {0}, sequence);  // 1 arrival in the window >= threshold 1
    std::deque<QueuedRequest> queue = {communication(sequence++, 100)};
    CHECK(serve(policy, queue, 100) == std::nullopt);
    // Gate opens at 0 + 5000, starvation at 100 + 2000: the earlier one.
    const double starves = 100 + config.starvation_ns;
    CHECK(policy.retry_after() == ns(starves - 100));
    CHECK(serve(policy, queue, starves) == Pick(0));
    CHECK(policy.stats().starvation_overrides == 1);
    CHECK(policy.stats().declines == 1);
  }
}

TEST_CASE("MCA derives its threshold from the first window's compute arrivals", "[mca]") {
  McaConfig config;
  config.threshold = 0;
  config.window_ns = 1000;
  config.starvation_ns = 1e6;  // out of the way

  SECTION("odd count rounds up") {
    McaPolicy policy(config);
    std::uint64_t sequence = 0;
    // First compute arrival t0 = 500; the first window is [500, 1500).
    const std::vector<double> first_window = {500, 600, 700, 800, 900, 1000, 1100};
    feed_compute(policy, first_window, sequence);
    CHECK(policy.stats().derived);
    CHECK(policy.stats().threshold == 0);  // still being measured

    // Before the window closes MCA behaves as priority: communication alone is served even with
    // 7 compute arrivals in the last window.
    std::deque<QueuedRequest> queue = {communication(sequence++, 1200)};
    CHECK(serve(policy, queue, 1200) == Pick(0));
    CHECK(policy.stats().declines == 0);

    // An arrival at t0 + window_ns is outside [t0, t0 + window); the pick at that time closes it.
    feed_compute(policy, {1500}, sequence);
    const auto n = static_cast<std::int64_t>(first_window.size());
    const std::int64_t expected = std::max<std::int64_t>(1, (n + 1) / 2);  // ceil(7 * 0.5) = 4
    CHECK(policy.stats().first_window_compute_arrivals == first_window.size());
    CHECK(policy.stats().threshold == expected);
    CHECK(expected == 4);

    // In (600, 1600]: 700 ... 1100 and 1500, 6 >= 4: declined. Three must age out, the third
    // oldest being 900: the gate opens at 900 + window_ns.
    queue = {communication(sequence++, 1600)};
    CHECK(serve(policy, queue, 1600) == std::nullopt);
    CHECK(policy.window_compute_arrivals() == 6);
    CHECK(policy.retry_after() == ns(900 + config.window_ns - 1600));
    CHECK(serve(policy, queue, 900 + config.window_ns) == Pick(0));  // 1000, 1100, 1500: 3 < 4
    CHECK(policy.stats().threshold == expected);                     // fixed once derived
  }

  SECTION("a single arrival gives the minimum threshold of 1") {
    McaPolicy policy(config);
    std::uint64_t sequence = 0;
    feed_compute(policy, {500}, sequence);  // first window [500, 1500)
    std::deque<QueuedRequest> queue = {communication(sequence++, 1500)};
    // The pick at 1500 closes the window: n = 1, threshold max(1, ceil(0.5)) = 1. The sliding
    // window (500, 1500] no longer holds the arrival at 500: 0 < 1, served.
    CHECK(serve(policy, queue, 1500) == Pick(0));
    CHECK(policy.stats().first_window_compute_arrivals == 1);
    CHECK(policy.stats().threshold == 1);
    CHECK(policy.window_compute_arrivals() == 0);
    // One more compute arrival is enough to hold communication back.
    feed_compute(policy, {1600}, sequence);
    queue = {communication(sequence++, 1700)};
    CHECK(serve(policy, queue, 1700) == std::nullopt);
    CHECK(policy.retry_after() == ns(1600 + config.window_ns - 1700));
  }

  SECTION("no compute at all: communication is never held back") {
    McaPolicy policy(config);
    std::deque<QueuedRequest> queue = {communication(0, 0), communication(1, 10)};
    CHECK(serve(policy, queue, 1e5) == Pick(0));
    CHECK(serve(policy, queue, 2e5) == Pick(0));
    CHECK(policy.stats().threshold == 0);
    CHECK(policy.stats().declines == 0);
  }
}

TEST_CASE("MCA honours an explicit threshold", "[mca]") {
  HbmConfig hbm;
  hbm.arbitration = Arbitration::Mca;
  hbm.mca.threshold = 2;
  hbm.mca.window_ns = 1000;
  hbm.mca.starvation_ns = 1e6;
  const std::unique_ptr<ArbitrationPolicy> made = make_policy(hbm);
  REQUIRE(std::string(made->name()) == "mca");
  auto* policy = dynamic_cast<McaPolicy*>(made.get());
  REQUIRE(policy != nullptr);
  CHECK(policy->stats().threshold == hbm.mca.threshold);  // in force from the start
  CHECK_FALSE(policy->stats().derived);

  std::uint64_t sequence = 0;
  // One compute arrival in the window: 1 < 2, served (no priority-only first phase).
  std::deque<QueuedRequest> one = {compute(sequence++, 0)};
  CHECK(serve(*policy, one, 0) == Pick(0));
  std::deque<QueuedRequest> queue = {communication(sequence++, 10)};
  CHECK(serve(*policy, queue, 10) == Pick(0));
  // A second compute arrival: 2 >= 2, declined.
  std::deque<QueuedRequest> two = {compute(sequence++, 20)};
  CHECK(serve(*policy, two, 20) == Pick(0));
  queue = {communication(sequence++, 30)};
  CHECK(serve(*policy, queue, 30) == std::nullopt);
  CHECK(policy->retry_after() == ns(0 + hbm.mca.window_ns - 30));  // once 0 leaves the window
  // Many arrivals over more than a window do not change an explicit threshold.
  std::vector<double> later;
  for (int i = 0; i < 50; ++i) later.push_back(2000 + 10.0 * i);
  feed_compute(*policy, later, sequence);
  CHECK(policy->stats().threshold == hbm.mca.threshold);
  CHECK(policy->stats().first_window_compute_arrivals == 0);

  HbmConfig bad = hbm;
  bad.mca.window_ns = 0;
  CHECK_THROWS_WITH(make_policy(bad), Catch::Contains("hbm.mca.window_ns"));
  bad = hbm;
  bad.mca.threshold = -1;
  CHECK_THROWS_WITH(make_policy(bad), Catch::Contains("hbm.mca.threshold"));
}

namespace {

struct Bench : sc_core::sc_module {
  tlm_utils::simple_initiator_socket<Bench> socket;
  MemoryController mc;

  Bench(sc_core::sc_module_name name, const HbmConfig& config)
      : sc_core::sc_module(name), socket("socket"), mc("mc", config, SimMode::Timing, 0) {
    socket.bind(mc.socket);
  }

  // One blocking access issued now (it reaches the controller now); returns its latency.
  sc_time access(Op op, TrafficClass traffic_class, std::uint64_t offset, unsigned bytes) {
    T3Extension extension;
    extension.op = op;
    extension.traffic_class = traffic_class;
    tlm::tlm_generic_payload payload;
    payload.set_address(offset);
    payload.set_data_ptr(nullptr);
    payload.set_data_length(bytes);
    payload.set_streaming_width(bytes);
    payload.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    T3Extension::set(payload, extension);
    const sc_time start = sc_time_stamp();
    sc_time delay = SC_ZERO_TIME;
    socket->b_transport(payload, delay);
    REQUIRE(payload.get_response_status() == tlm::TLM_OK_RESPONSE);
    return sc_time_stamp() - start;
  }
};

// The traffic one controller is given, and the latencies it saw.
struct Run {
  std::vector<sc_time> compute, communication;
  std::vector<sc_time> communication_issued;  // issue time of each communication request
  sc_time high_end;                           // when the high-intensity compute phase ended
};

// Pattern (closed loop, each thread one request in flight):
//  - high-intensity compute phase: `compute_threads` threads, `high` 256 B reads each;
//  - then a low-intensity phase: thread 0 alone, `low` reads with `think` between them;
//  - `comm_threads` threads issue `comm` 256 B updates each back to back from time 0.
struct Pattern {
  int compute_threads = 16, high = 150, low = 40;
  double think_ns = 400;
  int comm_threads = 2, comm = 60;
  unsigned bytes = 256;
};

void drive(Bench& bench, const Pattern& p, Run& run) {
  for (int t = 0; t < p.compute_threads; ++t) {
    sc_core::sc_spawn([&bench, &run, p, t] {
      std::uint64_t offset = static_cast<std::uint64_t>(t) << 20;
      for (int i = 0; i < p.high; ++i, offset += p.bytes) {
        run.compute.push_back(bench.access(Op::Read, TrafficClass::Compute, offset, p.bytes));
      }
      run.high_end = std::max(run.high_end, sc_time_stamp());
      if (t != 0) return;
      for (int i = 0; i < p.low; ++i, offset += p.bytes) {
        sc_core::wait(ns(p.think_ns));
        run.compute.push_back(bench.access(Op::Read, TrafficClass::Compute, offset, p.bytes));
      }
    });
  }
  for (int t = 0; t < p.comm_threads; ++t) {
    sc_core::sc_spawn([&bench, &run, p, t] {
      std::uint64_t offset = (64ull + static_cast<std::uint64_t>(t)) << 20;
      for (int i = 0; i < p.comm; ++i, offset += p.bytes) {
        run.communication_issued.push_back(sc_time_stamp());
        run.communication.push_back(
            bench.access(Op::Update, TrafficClass::Communication, offset, p.bytes));
      }
    });
  }
}

double mean_ns(const std::vector<sc_time>& values) {
  double sum = 0;
  for (const sc_time& v : values) sum += v.to_seconds() * 1e9;
  return values.empty() ? 0.0 : sum / static_cast<double>(values.size());
}

}  // namespace

TEST_CASE("MCA controller bounds communication latency and speeds up compute vs FCFS", "[mca]") {
  HbmConfig config;
  config.model = HbmModel::Simple;  // the policy alone, over the bandwidth-pipe model
  config.channels = 1;
  config.bandwidth_GBps = 32;  // 32 B/ns: a 256 B read holds the bus 8 ns, an update 16 ns
  config.latency_ns = 100;
  config.mca.threshold = 0;  // derived from the first window
  config.mca.starvation_ns = 2000;
  config.mca.window_ns = 5000;
  HbmConfig fcfs_config = config;
  fcfs_config.arbitration = Arbitration::Fcfs;
  HbmConfig mca_config = config;
  mca_config.arbitration = Arbitration::Mca;

  Bench fcfs("fcfs", fcfs_config);
  Bench mca("mca", mca_config);
  const Pattern pattern;
  Run fcfs_run, mca_run;
  drive(fcfs, pattern, fcfs_run);
  drive(mca, pattern, mca_run);
  sc_core::sc_start();

  const std::size_t compute_requests =
      static_cast<std::size_t>(pattern.compute_threads * pattern.high + pattern.low);
  const std::size_t comm_requests = static_cast<std::size_t>(pattern.comm_threads * pattern.comm);
  const int update = static_cast<int>(Op::Update);
  const int comm_class = static_cast<int>(TrafficClass::Communication);
  for (const Bench* bench : {&fcfs, &mca}) {
    INFO(bench->name());
    CHECK(bench->mc.pending() == 0);
    CHECK(bench->mc.stats().requests[update][comm_class] == comm_requests);
  }
  REQUIRE(mca_run.compute.size() == compute_requests);
  REQUIRE(mca_run.communication.size() == comm_requests);  // every communication request done
  REQUIRE(fcfs_run.compute.size() == compute_requests);
  REQUIRE(fcfs_run.communication.size() == comm_requests);
  CHECK(mca.mc.report()["policy"] == "mca");

  // Bound on a communication request's latency under MCA, from the rule: it is served at the
  // latest once it has starved (starvation_ns), the bus has finished the one request in service
  // (at most the longest bus time, an update's), and the older communication requests (at most
  // comm_threads - 1, one per other thread) have been served; then latency + its own bus time +
  // the near-memory adder.
  const double read_bus_ns = pattern.bytes / config.bandwidth_GBps;
  const double update_bus_ns = config.nmc_update_occupancy * read_bus_ns;
  const double bound_ns = config.mca.starvation_ns + std::max(read_bus_ns, update_bus_ns) +
                          (pattern.comm_threads - 1) * update_bus_ns + config.latency_ns +
                          update_bus_ns + config.nmc_alu_latency_ns;
  const sc_time max_comm =
      *std::max_element(mca_run.communication.begin(), mca_run.communication.end());
  const sc_time min_comm =
      *std::min_element(mca_run.communication.begin(), mca_run.communication.end());
  const double fcfs_compute = mean_ns(fcfs_run.compute), mca_compute = mean_ns(mca_run.compute);
  INFO("bound " << bound_ns << " ns; MCA communication latency " << min_comm << " .. " << max_comm
                << ", mean " << mean_ns(mca_run.communication) << " ns; FCFS "
                << mean_ns(fcfs_run.communication) << " ns; compute mean MCA " << mca_compute
                << " ns, FCFS " << fcfs_compute << " ns");
  CHECK(max_comm <= ns(bound_ns));
  // The compute-heavy phase really held communication back to the starvation limit ...
  CHECK(max_comm >= ns(config.mca.starvation_ns));
  // ... and the low-intensity phase lets it through. From window_ns after the high phase ended,
  // the window holds only the low phase's compute arrivals (at most one per think time), far
  // below the derived threshold (half the saturated first window's count), so the gate is open:
  // a communication request waits only for the request in service, at most one compute request
  // (one thread left) and the other communication threads' requests.
  const double open_bound_ns = std::max(read_bus_ns, update_bus_ns) + read_bus_ns +
                               (pattern.comm_threads - 1) * update_bus_ns + config.latency_ns +
                               update_bus_ns + config.nmc_alu_latency_ns;
  const sc_time low_phase = mca_run.high_end + ns(config.mca.window_ns);
  std::size_t low_phase_comm = 0;
  for (std::size_t i = 0; i < mca_run.communication.size(); ++i) {
    if (mca_run.communication_issued[i] < low_phase) continue;
    ++low_phase_comm;
    CHECK(mca_run.communication[i] <= ns(open_bound_ns));
  }
  INFO("high phase ended at " << mca_run.high_end << "; bound with the gate open " << open_bound_ns
                              << " ns");
  CHECK(low_phase_comm > 0);
  CHECK(min_comm <= ns(open_bound_ns));
  CHECK(mca_compute < fcfs_compute);
}
