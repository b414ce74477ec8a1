// Configuration: presets, JSON and --set overrides, and the error for each kind of bad input.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "config/config_io.h"
#include "config/suggestion.h"
#include "tlm_interconnect/address_map.h"

using namespace t3;
using Catch::Contains;

namespace {
std::string error_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const ConfigError& error) {
    return error.what();
  }
  return "no error";
}
}  // namespace

TEST_CASE("every preset loads, validates and has a valid address map") {
  const auto names = preset_names();
  REQUIRE(names ==
          std::vector<std::string>{"a100-8", "dramsys-hbm2", "h100-8", "mi300x-8", "t3-paper"});
  for (const auto& name : names) {
    const SystemConfig config = load_system(name);
    CHECK(config.name == name);
    AddressMap(config.address_map, static_cast<int>(config.gpus), config.hbm.capacity_bytes)
        .check();
  }
}

TEST_CASE("presets carry the published figures they are named after") {
  const SystemConfig paper = load_system("t3-paper");
  CHECK(paper.hbm.bandwidth_GBps == 1000.0);      // 1 TB/s HBM2
  CHECK(paper.link.bandwidth_GBps * 2 == 150.0);  // 150 GB/s bidirectional per link
  CHECK(paper.link.latency_ns == 500.0);
  CHECK(paper.topology.kind == TopologyKind::Ring);
  const SystemConfig a100 = load_system("a100-8");
  CHECK(a100.gpus == 8);
  CHECK(a100.hbm.channels == 40);
  CHECK(a100.link.bandwidth_GBps == 12 * 25.0);  // NVLink3: 12 links x 25 GB/s per direction
  CHECK(a100.topology.kind == TopologyKind::Switch);
  const SystemConfig h100 = load_system("h100-8");
  CHECK(h100.hbm.channels == 80);
  CHECK(h100.link.bandwidth_GBps == 450.0);
  const SystemConfig mi300x = load_system("mi300x-8");
  CHECK(mi300x.gpus == 8);
  CHECK(mi300x.topology.kind == TopologyKind::FullyConnected);  // Infinity Fabric mesh
  CHECK(mi300x.sm.count == 304);                                // CUs
  CHECK(mi300x.hbm.channels == 128);
  CHECK(mi300x.hbm.bandwidth_GBps == 5300.0);
  // 304 CUs x 2048 FLOP/clk x 2.1 GHz: the published 1307 TF dense FP16 (clock uncertain).
  CHECK(mi300x.sm.count * mi300x.sm.flops_per_clock * mi300x.sm.clock_GHz / 1e3 ==
        Approx(1307.0).epsilon(0.001));
  // Seven links of 128 GB/s, taken as bidirectional: 64 per direction to each peer.
  CHECK(mi300x.link.bandwidth_GBps * 2 == 128.0);
}

TEST_CASE("the built-in default is the t3-paper machine") {
  CHECK(to_json(SystemConfig{}) == to_json(load_system("t3-paper")));
}

TEST_CASE("a path=value override sets any leaf with its own type") {
  SystemConfig config;
  apply_override(config, "hbm.channels=16");
  apply_override(config, "link.latency_ns=250.5");
  apply_override(config, "topology.kind=fully-connected");
  apply_override(config, "address_map.mmio_base=0xfe00000000000000");
  apply_override(config, "sim.mode=functional");
  CHECK(config.hbm.channels == 16);
  CHECK(config.link.latency_ns == 250.5);
  CHECK(config.topology.kind == TopologyKind::FullyConnected);
  CHECK(config.address_map.mmio_base == 0xfe00000000000000ull);
  CHECK(config.sim.mode == SimMode::Functional);
}

TEST_CASE("to_json and apply_json round-trip every parameter") {
  SystemConfig changed;
  apply_override(changed, "hbm.arbitration=priority");
  apply_override(changed, "gpus=8");
  SystemConfig reloaded;
  apply_json(reloaded, to_json(changed), "round trip");
  CHECK(to_json(reloaded) == to_json(changed));
  CHECK(reloaded.hbm.arbitration == Arbitration::Priority);
}

TEST_CASE("an unknown key names its path") {
  SystemConfig config;
  CHECK_THAT(error_of([&] {
               apply_json(config, {{"hbm", {{"chanels", 4}}}}, "my.json");
             }),
             Contains("my.json: hbm.chanels: unknown key"));
  CHECK_THAT(error_of([&] { apply_override(config, "link.speed=3"); }),
             Contains("link.speed: unknown key"));
  CHECK_THAT(error_of([&] { apply_override(config, "novalue"); }), Contains("expected path=value"));
}

TEST_CASE("a wrong type names the path and the value") {
  SystemConfig config;
  CHECK_THAT(error_of([&] {
               apply_json(config, {{"hbm", {{"channels", "many"}}}}, "f.json");
             }),
             Contains("f.json: hbm.channels: expected an integer, got \"many\""));
  CHECK_THAT(error_of([&] {
               apply_json(config, {{"hbm", {{"channels", 2.5}}}}, "f.json");
             }),
             Contains("hbm.channels: expected an integer"));
  CHECK_THAT(error_of([&] { apply_override(config, "link.latency_ns=fast"); }),
             Contains("link.latency_ns: expected a number, got \"fast\""));
  CHECK_THAT(error_of([&] { apply_override(config, "topology.kind=torus"); }),
             Contains("topology.kind: 'torus' is not one of ring, fully-connected, switch"));
  CHECK_THAT(error_of([&] { apply_override(config, "address_map.hbm_base=-1"); }),
             Contains("address_map.hbm_base: expected a non-negative integer"));
}

// Found by test_fuzz: bytes that are not UTF-8 in a --set value made the error message itself
// throw (nlohmann's dump), and a name results could not carry was taken.
TEST_CASE("a value that is not UTF-8 is reported, and refused for a string") {
  SystemConfig config;
  CHECK_THAT(error_of([&] { apply_override(config, "sm.count=\xff\xfe"); }),
             Contains("sm.count: expected an integer, got"));
  CHECK_THAT(error_of([&] { apply_override(config, "name=gpu\xff"); }),
             Contains("name: \"gpu\xef\xbf\xbd\" is not valid UTF-8"));
  CHECK(config.name == "t3-paper");
}

// Found by test_fuzz: windows off 4 KiB misplace the register blocks and buffers mid-run.
TEST_CASE("address windows must be 4 KiB-aligned") {
  SystemConfig config = load_system("t3-paper");
  apply_override(config, "address_map.hbm_base=256");
  CHECK_THAT(error_of([&] { validate(config); }),
             Contains("address_map.hbm_base: 256 is not a multiple of 4096"));
}

TEST_CASE("an out-of-range value names the path and the range") {
  SystemConfig config;
  CHECK_THAT(error_of([&] { apply_override(config, "hbm.channels=0"); }),
             Contains("hbm.channels: 0 is out of range [1, 1024]"));
  CHECK_THAT(error_of([&] { apply_override(config, "link.bandwidth_GBps=-5"); }),
             Contains("link.bandwidth_GBps: -5 is out of range"));
  CHECK_THAT(error_of([&] { apply_override(config, "gpus=65"); }),
             Contains("gpus: 65 is out of range"));
  CHECK_THAT(error_of([&] { apply_override(config, "dma.urgent_fill=1.5"); }),
             Contains("dma.urgent_fill: 1.5 is out of range [0, 1]"));
}

TEST_CASE("cross-field checks name the parameters involved") {
  SystemConfig config;
  apply_override(config, "hbm.interleave_bytes=384");
  CHECK_THAT(error_of([&] { validate(config); }),
             Contains("hbm.interleave_bytes: 384 is not a power of two"));
  SystemConfig big;
  apply_override(big, "hbm.capacity_bytes=0x20000000000");  // 2 TiB in a 1 TiB stride
  CHECK_THAT(error_of([&] { validate(big); }), Contains("exceeds address_map.hbm_stride"));
}

TEST_CASE("overlapping address windows are rejected with both bases") {
  SystemConfig config;
  apply_override(config, "address_map.mmio_base=0x20000000000");  // inside GPU 2's HBM window
  AddressMap map(config.address_map, 4, config.hbm.capacity_bytes);
  CHECK_THAT(error_of([&] { map.check(); }), Contains("overlap"));
}

TEST_CASE("a system file that is missing or malformed is named") {
  CHECK_THAT(
      error_of([] { load_system("no-such-system"); }),
      Contains(
          "'no-such-system': not a preset (a100-8, dramsys-hbm2, h100-8, mi300x-8, t3-paper)"));
  const std::string path = "bad_config_test.json";
  std::ofstream(path) << "{ \"hbm\": { \"channels\": 4, } }";
  CHECK_THAT(error_of([&] { load_system(path); }), Contains(path + ": not valid JSON"));
  std::ofstream(path) << "[1, 2]";
  CHECK_THAT(error_of([&] { load_system(path); }), Contains("must be a JSON object"));
  std::ofstream(path) << R"({"name": "mine", "gpus": 2, "hbm": {"channels": 8}})";
  const SystemConfig mine = load_system(path);
  CHECK(mine.gpus == 2);
  CHECK(mine.hbm.channels == 8);
  CHECK(mine.hbm.bandwidth_GBps == SystemConfig{}.hbm.bandwidth_GBps);  // defaults fill the rest
}

TEST_CASE("the parameter table lists every leaf once") {
  const std::string table = parameter_table(SystemConfig{});
  for (const char* path : {"`hbm.channels`", "`link.credits`", "`topology.kind`",
                           "`address_map.mmio_base`", "`sim.mode`"}) {
    CHECK_THAT(table, Contains(path));
  }
  CHECK_THAT(table, Contains("ring, fully-connected, switch"));
}

TEST_CASE("docs/configuration.md carries the current parameter table") {
  std::ifstream file(std::string(T3SIM_SOURCE_DIR) + "/docs/configuration.md");
  REQUIRE(file);
  std::stringstream text;
  text << file.rdbuf();
  const std::string expected =
      "<!-- table: begin -->\n" + parameter_table(SystemConfig{}) + "<!-- table: end -->";
  INFO("regenerate with scripts/update-config-doc");
  CHECK_THAT(text.str(), Contains(expected));
}

TEST_CASE("did you mean: the nearest names by edit distance, none if nothing is near",
          "[config][suggestion]") {
  const std::vector<std::string> commands = {"bandwidth", "compare", "config", "run", "sweep"};
  CHECK(t3::nearest_names("compar", commands) == std::vector<std::string>{"compare"});
  CHECK(t3::nearest_names("swep", commands) == std::vector<std::string>{"sweep"});
  CHECK(t3::nearest_names("frobnicate", commands).empty());
  CHECK(t3::nearest_names("", commands).empty());
  CHECK(t3::nearest_names("run", commands).empty());  // an exact name needs no suggestion
  // Ties are all given, in the candidates' order; only the nearest distance counts.
  CHECK(t3::nearest_names("fc3", {"op", "fc2", "fc1", "ip"}) ==
        std::vector<std::string>{"fc2", "fc1"});
  CHECK(t3::nearest_names("t-nig", {"t-nlg", "gpt-3", "palm"}) ==
        std::vector<std::string>{"t-nlg"});
  // A two-letter word two edits from another is a different word, not a misspelling.
  CHECK(t3::nearest_names("xx", {"op", "ip"}).empty());
  CHECK(t3::did_you_mean("compar", commands) == " (did you mean 'compare'?)");
  CHECK(t3::did_you_mean("fc3", {"fc2", "fc1"}) == " (did you mean 'fc2' or 'fc1'?)");
  CHECK(t3::did_you_mean("cnfg", {"config", "cnf", "cnfgs"}) ==
        " (did you mean 'cnf' or 'cnfgs'?)");
  CHECK(t3::did_you_mean("frobnicate", commands).empty());
}

TEST_CASE("an unknown key suggests the nearest key, within its own section if that exists",
          "[config][suggestion]") {
  t3::SystemConfig config;
  const auto message = [&](const std::string& assignment) {
    try {
      t3::apply_override(config, assignment);
    } catch (const t3::ConfigError& error) {
      return std::string(error.what());
    }
    return std::string("no error");
  };
  CHECK(message("hbm.bandwith_GBps=2000") ==
        "--set: hbm.bandwith_GBps: unknown key (did you mean 'hbm.bandwidth_GBps'?)");
  CHECK(message("hmb.channels=4") ==
        "--set: hmb.channels: unknown key (did you mean 'hbm.channels'?)");
  CHECK(message("link.speed=1") == "--set: link.speed: unknown key");
  try {
    t3::apply_json(config, {{"hbm", {{"chanels", 4}}}}, "file.json");
    FAIL("an unknown key was accepted");
  } catch (const t3::ConfigError& error) {
    CHECK(std::string(error.what()) ==
          "file.json: hbm.chanels: unknown key (did you mean 'hbm.channels'?)");
  }
}

TEST_CASE("DRAM timing keys are clocks: a key in ns is unknown and names its clock key",
          "[config][suggestion][timing]") {
  SystemConfig config;
  // The ns keys the timing once had: each must fail and point at its clock-count successor.
  for (const std::string key : {"ccd_s", "rcd_rd", "faw", "refi"}) {
    CHECK(error_of([&] { apply_override(config, "hbm.bank.timing." + key + "_ns=2"); }) ==
          "--set: hbm.bank.timing." + key + "_ns: unknown key (did you mean 'hbm.bank.timing." +
              key + "'?)");
  }
  apply_override(config, "hbm.bank.timing.ccd_s=3");
  CHECK(config.hbm.bank.timing.ccd_s == 3);
  // A count of clocks is a whole number.
  CHECK_THAT(error_of([&] { apply_override(config, "hbm.bank.timing.cl=14.5"); }),
             Contains("hbm.bank.timing.cl"));
}
