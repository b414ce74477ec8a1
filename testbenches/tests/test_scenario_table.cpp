// The scenario table (workloads/scenario.cpp): what every lookup of a scenario reads. Expectations
// are written out here, not read from the table, so a wrong or missing row fails.
#include <catch2/catch.hpp>

#include <map>
#include <string>
#include <vector>

#include "config/config_io.h"
#include "config/system_config.h"
#include "workloads/scenario.h"
#include "workloads/sublayer.h"

using namespace t3;

TEST_CASE("every scenario's name parses back to it; the paper's five come first, in order",
          "[scenario_table]") {
  const std::vector<Scenario> paper = {Scenario::Sequential, Scenario::T3, Scenario::T3Mca,
                                       Scenario::Ideal, Scenario::IdealRsNmc};
  CHECK(all_scenarios() == paper);
  const std::vector<std::string> names = {"sequential", "t3",           "t3-mca",
                                          "ideal",      "ideal-rs-nmc", "slicing",
                                          "commfuse",   "commfuse-ag",  "t3-switch",
                                          "ideal-rs-sm-nmc"};
  const std::vector<Scenario> known = known_scenarios();
  REQUIRE(known.size() == names.size());
  for (std::size_t i = 0; i < known.size(); ++i) {
    CHECK(to_string(known[i]) == names[i]);
    CHECK(parse_scenario(names[i]) == known[i]);
  }
  CHECK_THROWS_AS(parse_scenario("t4"), ConfigError);
}

TEST_CASE("t3 forces fcfs arbitration and t3-mca mca; the others keep the configuration's",
          "[scenario_table]") {
  SystemConfig config;
  config.hbm.arbitration = Arbitration::Priority;
  const std::map<Scenario, Arbitration> forced = {{Scenario::T3, Arbitration::Fcfs},
                                                  {Scenario::T3Mca, Arbitration::Mca}};
  for (Scenario scenario : known_scenarios()) {
    INFO(to_string(scenario));
    const auto it = forced.find(scenario);
    const Arbitration expected = it == forced.end() ? Arbitration::Priority : it->second;
    CHECK(scenario_config(config, scenario).hbm.arbitration == expected);
  }
}

TEST_CASE("a scenario applies to the sublayers its planners cover", "[scenario_table]") {
  for (Scenario scenario : known_scenarios()) {
    for (Sublayer sublayer : known_sublayers()) {
      INFO(to_string(scenario) << " on " << to_string(sublayer));
      const bool expected = gathers_input(sublayer) ? scenario == Scenario::Sequential ||
                                                          scenario == Scenario::CommFuseAg
                                                    : scenario != Scenario::CommFuseAg;
      CHECK(applies_to(scenario, sublayer) == expected);
    }
  }
}

TEST_CASE("only commfuse on the copy engine and t3-switch are not rotation invariant",
          "[scenario_table]") {
  SystemConfig config;
  for (CommFuseEngine engine : {CommFuseEngine::Sm, CommFuseEngine::Copy}) {
    config.workload.commfuse_engine = engine;
    for (Scenario scenario : known_scenarios()) {
      INFO(to_string(scenario));
      const bool expected = scenario != Scenario::T3Switch &&
                            (scenario != Scenario::CommFuse || engine != CommFuseEngine::Copy);
      CHECK(rotation_invariant(config, scenario) == expected);
    }
  }
}
