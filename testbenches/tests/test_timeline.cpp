// The Chrome-trace timeline and the VCD waveform of a T3 fused GEMM + reduce-scatter: every record
// of the blocks appears once, with the blocks' own times, in a file Perfetto accepts.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config_io.h"
#include "models/system/timeline.h"
#include "models/system/tp_group.h"
#include "models/system/vcd_trace.h"
#include "testbenches/child_process.h"
#include "testbenches/small_system.h"
#include "workloads/t3_plan.h"

using namespace t3;
using nlohmann::json;

namespace {

constexpr int kGpus = 4;

T3GemmRsPlan small_plan(const SystemConfig& config) {
  return plan_t3_gemm_rs(config, GemmShape{64 * kGpus, 32, 24}, ElementType::Fp32,
                         ElementType::Fp32);
}

// Runs the fused GEMM + reduce-scatter on `group` to its end.
void run(TpGroup& group, const T3GemmRsPlan& plan) {
  group.load(plan.programs());
  sc_core::sc_start();
  REQUIRE(group.host_error().empty());
  REQUIRE(group.hosts_done());
  group.check_drained();
}

std::string read_text(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

std::string traced_run_text() {
  const SystemConfig config = small_system(kGpus, SimMode::Timing);
  TpGroup group("group", config);
  Timeline timeline(group);
  run(group, small_plan(config));
  timeline.add_phase("run", sc_core::SC_ZERO_TIME, sc_core::sc_time_stamp());
  const std::string path = "timeline_child_" + std::to_string(getpid()) + ".json";
  timeline.write(path);
  std::string text = read_text(path);
  std::remove(path.c_str());
  return text;
}

double us(const sc_core::sc_time& t) {
  return t.to_seconds() * 1e6;
}

// Events of one category, by pid.
std::map<int, std::vector<json>> by_pid(const json& events, const std::string& ph,
                                        const std::string& category) {
  std::map<int, std::vector<json>> out;
  for (const json& e : events) {
    if (e["ph"] == ph && e.value("cat", "") == category) out[e["pid"].get<int>()].push_back(e);
  }
  return out;
}

}  // namespace

TEST_CASE("timeline of a T3 GEMM + reduce-scatter holds every record, once, at its time",
          "[timeline]") {
  // Determinism first: two identical runs in fresh processes give the same bytes.
  const std::string first = run_in_child(traced_run_text);
  const std::string second = run_in_child(traced_run_text);
  REQUIRE(!first.empty());
  CHECK(first == second);
  CHECK(json::parse(first)["traceEvents"].size() > 0);

  const SystemConfig config = small_system(kGpus, SimMode::Timing);
  TpGroup group("group", config);
  Timeline timeline(group);
  run(group, small_plan(config));
  const sc_core::sc_time end = sc_core::sc_time_stamp();
  timeline.add_phase("run", sc_core::SC_ZERO_TIME, end);
  const json trace = timeline.chrome_trace();
  CHECK(trace["displayTimeUnit"] == "ns");
  const json& events = trace["traceEvents"];

  // The format: every event placed, complete events not negative, every track named.
  std::set<int> named_processes;
  std::set<std::pair<int, int>> named_threads;
  for (const json& e : events) {
    if (e["ph"] != "M") continue;
    if (e["name"] == "process_name") named_processes.insert(e["pid"].get<int>());
    if (e["name"] == "thread_name") named_threads.emplace(e["pid"].get<int>(), e["tid"].get<int>());
  }
  double latest = 0;
  for (const json& e : events) {
    INFO(e.dump());
    REQUIRE(e.contains("ph"));
    REQUIRE(e.contains("pid"));
    REQUIRE(e.contains("tid"));
    REQUIRE(e.contains("ts"));
    CHECK(named_processes.count(e["pid"].get<int>()) == 1);
    if (e["ph"] == "M") continue;
    CHECK(named_threads.count({e["pid"].get<int>(), e["tid"].get<int>()}) == 1);
    double event_end = e["ts"].get<double>();
    if (e["ph"] == "X") {
      REQUIRE(e.contains("dur"));
      CHECK(e["dur"].get<double>() >= 0);
      event_end += e["dur"].get<double>();
    }
    latest = std::max(latest, event_end);
  }
  CHECK(latest <= us(end) + 1e-9);

  // Workgroups: one event per dispatched workgroup, from dispatch to its completion.
  const auto workgroups = by_pid(events, "X", "workgroup");
  std::size_t dispatched = 0;
  for (int g = 0; g < kGpus; ++g) {
    const auto& records = group.gpu(g).dispatcher.dispatched();
    dispatched += records.size();
    CHECK(workgroups.count(g) == 1);
    if (workgroups.count(g) == 0) continue;
    CHECK(workgroups.at(g).size() == records.size());
    for (const DispatchRecord& r : records) CHECK(r.end > r.time);
  }
  std::size_t wg_events = 0;
  for (const auto& [pid, list] : workgroups) wg_events += list.size();
  CHECK(wg_events == dispatched);
  CHECK(dispatched > 0);

  // DMA transfers and tracker fires: the blocks' own records, same times.
  const auto dma = by_pid(events, "X", "dma");
  const auto fires = by_pid(events, "i", "tracker");
  std::size_t transfers = 0;
  for (int g = 0; g < kGpus; ++g) {
    INFO("gpu " << g);
    std::vector<std::pair<double, double>> expected, got;
    for (const DmaTransfer& t : group.gpu(g).dma.transfers()) {
      expected.emplace_back(us(t.start), us(t.end));
    }
    transfers += expected.size();
    if (dma.count(g) != 0) {
      for (const json& e : dma.at(g)) {
        got.emplace_back(e["ts"].get<double>(), e["ts"].get<double>() + e["dur"].get<double>());
      }
    }
    std::sort(expected.begin(), expected.end());
    std::sort(got.begin(), got.end());
    REQUIRE(got.size() == expected.size());
    for (std::size_t i = 0; i < got.size(); ++i) {
      CHECK(got[i].first == Approx(expected[i].first).margin(1e-9));
      CHECK(got[i].second == Approx(expected[i].second).margin(1e-6));
    }

    const auto& tracker_fires = group.gpu(g).tracker.fires();
    const std::size_t instants = fires.count(g) != 0 ? fires.at(g).size() : 0;
    CHECK(instants == tracker_fires.size());
    for (std::size_t i = 0; i < std::min(instants, tracker_fires.size()); ++i) {
      CHECK(fires.at(g)[i]["ts"].get<double>() == Approx(us(tracker_fires[i].time)).margin(1e-9));
    }
  }
  CHECK(transfers > 0);

  // Links: the busy spans of each direction add up to the link's own serialiser occupancy.
  std::map<std::pair<int, int>, double> busy_us;
  std::size_t spans = 0;
  for (const json& e : events) {
    if (e["ph"] != "X" || e["cat"] != "link") continue;
    busy_us[{e["args"]["link"].get<int>(), e["args"]["direction"].get<int>()}] +=
        e["dur"].get<double>();
    ++spans;
  }
  std::uint64_t packets = 0;
  for (int l = 0; l < group.links(); ++l) {
    for (int d = 0; d < 2; ++d) {
      INFO("link " << l << " direction " << d);
      const LinkDirectionStats& s = group.link(l).stats(d);
      packets += s.packets;
      CHECK(busy_us[{l, d}] * 1e3 == Approx(s.busy_ns).epsilon(1e-9).margin(1e-3));
    }
  }
  CHECK(spans > 0);
  CHECK(spans <= packets);

  // The queue counter and the phase.
  const auto counters = by_pid(events, "C", "");
  for (int g = 0; g < kGpus; ++g) {
    REQUIRE(counters.count(g) == 1);
    CHECK(counters.at(g).front()["name"] == "hbm queue");
    CHECK(counters.at(g).front()["args"].contains("communication"));
  }
  const auto phases = by_pid(events, "X", "phase");
  REQUIRE(phases.size() == 1);
  CHECK(phases.begin()->second.front()["name"] == "run");

  // Writing: the file is the same trace; an unwritable path names itself.
  const std::string path = "timeline_test.json";
  timeline.write(path);
  CHECK(json::parse(read_text(path)) == trace);
  std::remove(path.c_str());
  CHECK_THROWS_WITH(timeline.write("/nonexistent-dir/trace.json"),
                    Catch::Contains("/nonexistent-dir/trace.json"));
}

TEST_CASE("timeline VCD waveform names the queue and link signals", "[timeline][vcd]") {
  const SystemConfig config = small_system(kGpus, SimMode::Timing);
  TpGroup group("group", config);
  const std::string path = "timeline_test_" + std::to_string(getpid()) + ".vcd";
  {
    VcdTrace vcd("vcd", group, path);
    run(group, small_plan(config));
  }
  const std::string text = read_text(path);
  std::remove(path.c_str());
  REQUIRE(!text.empty());
  CHECK(text.find("$enddefinitions") != std::string::npos);
  CHECK(text.find("gpu0_hbm_queue_compute") != std::string::npos);
  CHECK(text.find("gpu3_hbm_queue_communication") != std::string::npos);
  CHECK(text.find("link0_gpu0_to_gpu1_busy") != std::string::npos);
  CHECK(text.find("_busy") != std::string::npos);
  // Something moved: value changes after time zero.
  CHECK(text.find("\n#1") != std::string::npos);
}

// Not run by default: writes the trace that the plot-timeline ctest draws (path in
// T3SIM_TIMELINE_OUT).
TEST_CASE("timeline fixture for the plot script", "[.plot]") {
  const char* out = std::getenv("T3SIM_TIMELINE_OUT");
  REQUIRE(out != nullptr);
  const SystemConfig config = small_system(kGpus, SimMode::Timing);
  TpGroup group("group", config);
  Timeline timeline(group);
  run(group, small_plan(config));
  timeline.add_phase("gemm + reduce-scatter", sc_core::SC_ZERO_TIME, sc_core::sc_time_stamp());
  timeline.write(out);
}
