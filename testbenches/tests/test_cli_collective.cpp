// `t3sim collective` end to end: the binary runs a collective (the SM ring or the DMA + NMC ring)
// and writes its JSON document, and the figures in it are checked against the nccl-tests
// definitions (algbw = bytes / time, busbw = algbw x 2(n-1)/n for all-reduce, x (n-1)/n for
// reduce-scatter) and against the first-principles floor of a ring: every GPU sends factor x
// bytes over its link at the link's delivered rate.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <sys/wait.h>

#include "testbenches/tests/cli_testing.h"

namespace {

// Runs `t3sim collective ARGS --json <binary dir>/NAME` and returns the document it wrote.
nlohmann::json run_collective(const std::string& args, const std::string& name) {
  return t3::cli_testing::run_json("collective", args, name);
}

// The checks every collective document must pass; `factor` is busbw / algbw for its op.
void check_figures(const nlohmann::json& doc, int n, std::uint64_t bytes, double factor,
                   const std::string& impl = "ring-sm") {
  CHECK(doc.at("job") == "collective");
  CHECK(doc.at("impl") == impl);
  CHECK(doc.at("tp").get<int>() == n);
  CHECK(doc.at("bytes").get<std::uint64_t>() == bytes);
  CHECK(doc.at("config").at("gpus").get<int>() == n);
  REQUIRE(doc.at("stats").is_object());

  const double time_ns = doc.at("time_ns").get<double>();
  const double algbw = doc.at("algbw_GBps").get<double>();
  const double busbw = doc.at("busbw_GBps").get<double>();
  INFO("time " << time_ns << " ns, algbw " << algbw << " GB/s, busbw " << busbw << " GB/s");
  REQUIRE(time_ns > 0);
  CHECK(time_ns <= doc.at("simulated_ns").get<double>());
  // algbw = bytes / time (bytes per ns is GB/s), busbw = algbw x factor, to 1e-9 relative.
  CHECK(algbw == Approx(static_cast<double>(bytes) / time_ns).epsilon(1e-9));
  CHECK(busbw == Approx(algbw * factor).epsilon(1e-9));

  // Floor: each GPU pushes factor x bytes through its outgoing link, and a link delivers at most
  // bandwidth x payload / (payload + header).
  const auto& link = doc.at("config").at("link");
  const double payload = link.at("max_payload_bytes").get<double>();
  const double header = link.at("header_bytes").get<double>();
  const double delivered_GBps =
      link.at("bandwidth_GBps").get<double>() * payload / (payload + header);
  const double floor_ns = factor * static_cast<double>(bytes) / delivered_GBps;
  INFO("link floor " << floor_ns << " ns at " << delivered_GBps << " GB/s");
  CHECK(time_ns >= floor_ns);
  CHECK(busbw <= delivered_GBps);  // the same floor, as nccl-tests' busbw

  // The links carried at least the ring data: factor x bytes from each of the n GPUs, one link
  // each on the t3-paper ring. Uneven chunks too: per op every GPU sends every chunk but one,
  // and each chunk is the unsent one of exactly one GPU, so the sum is (n - 1) x bytes per op.
  const auto ring_data = static_cast<std::uint64_t>(factor * static_cast<double>(bytes) * n + 0.5);
  CHECK(doc.at("link_bytes").at("ring_data").get<std::uint64_t>() == ring_data);
  std::uint64_t payload_bytes = 0;
  for (const auto& l : doc.at("stats").at("links")) {
    for (const auto& direction : l.at("directions")) {
      payload_bytes += direction.at("payload_bytes").get<std::uint64_t>();
    }
  }
  CHECK(doc.at("link_bytes").at("payload").get<std::uint64_t>() == payload_bytes);
  CHECK(payload_bytes >= ring_data);
}

}  // namespace

TEST_CASE("cli collective all-reduce TP 4: busbw = algbw x 2(n-1)/n, no faster than the links",
          "[cli][collective]") {
  const std::uint64_t bytes = 4194304;
  const auto doc = run_collective("--op all-reduce --tp 4 --bytes 4194304", "collective.json");
  CHECK(doc.at("op") == "all-reduce");
  check_figures(doc, 4, bytes, 2.0 * 3 / 4);
}

TEST_CASE("cli collective reduce-scatter TP 4: busbw = algbw x (n-1)/n, no faster than the links",
          "[cli][collective]") {
  const std::uint64_t bytes = 1048576;
  const auto doc = run_collective("--op reduce-scatter --tp 4 --bytes 1048576 --channels 8",
                                  "collective_rs.json");
  CHECK(doc.at("op") == "reduce-scatter");
  CHECK(doc.at("channels").get<int>() == 8);
  check_figures(doc, 4, bytes, 3.0 / 4);
}

TEST_CASE("cli collective --impl ring-dma-nmc all-reduce TP 4: the same figures, no flags",
          "[cli][collective]") {
  const std::uint64_t bytes = 4194304;
  const auto doc = run_collective("--op all-reduce --impl ring-dma-nmc --tp 4 --bytes 4194304",
                                  "collective_dma_nmc.json");
  CHECK(doc.at("op") == "all-reduce");
  CHECK(doc.at("slices").get<int>() == 16);
  check_figures(doc, 4, bytes, 2.0 * 3 / 4, "ring-dma-nmc");
  // The DMA ring moves the data and nothing else over the links.
  CHECK(doc.at("link_bytes").at("payload") == doc.at("link_bytes").at("ring_data"));
  // Every GPU's DMA engine sent its slices and forwarded the rest; nothing failed.
  REQUIRE(doc.at("stats").at("gpus").size() == 4);
  for (const auto& gpu : doc.at("stats").at("gpus")) {
    INFO("GPU " << gpu.at("gpu"));
    CHECK(gpu.at("dma").at("doorbells").get<std::uint64_t>() == 2 * 16);
    CHECK(gpu.at("dma").at("triggered").get<std::uint64_t>() == 2 * 2 * 16);
    CHECK(gpu.at("dma").at("errors").get<std::uint64_t>() == 0);
    CHECK(gpu.at("tracker").at("fired").get<std::uint64_t>() == 2 * 3 * 16);
    CHECK(gpu.at("tracker").at("errors").get<std::uint64_t>() == 0);
    CHECK(gpu.at("tracker").at("overcount").get<std::uint64_t>() == 0);
  }
}

TEST_CASE("cli collective --impl ring-dma-nmc rejects --channels (exit 2) naming --slices",
          "[cli][collective]") {
  const auto output = t3::cli_testing::run_output(
      "collective --op all-reduce --impl ring-dma-nmc --tp 4 --bytes 4194304 --channels 8",
      "collective_dma_nmc_usage.log");
  CHECK(output.exit_code == 2);
  CHECK_THAT(
      output.text,
      Catch::Contains("--channels applies to --impl ring-sm, direct-sm and direct-sm-nmc only"));
}

TEST_CASE("cli collective --omit-rank stalls: exit 2 with a one-line diagnosis naming the flags",
          "[cli][collective][stall]") {
  // Rank 3 never launches, so the others' channels poll flags nobody sets until the watchdog
  // (sim.stall_timeout_ns, 20 us here) stops the run.
  const auto output = t3::cli_testing::run_output(
      "collective --op all-reduce --tp 4 --bytes 65536 --omit-rank 3 "
      "--set sim.stall_timeout_ns=20000",
      "collective_omit_rank.log");
  CHECK(output.exit_code == 2);
  std::istringstream text(output.text);
  std::vector<std::string> lines;
  for (std::string line; std::getline(text, line);) lines.push_back(line);
  REQUIRE(lines.size() == 1);
  INFO(lines[0]);
  CHECK_THAT(lines[0], Catch::StartsWith("t3sim: stall: nothing completed from "));
  CHECK_THAT(lines[0], Catch::Contains("(sim.stall_timeout_ns = 20000)"));
  CHECK_THAT(lines[0], Catch::Contains("group.gpu0.sm0 channel 0 waits for the flag at 0x"));
  CHECK_THAT(lines[0], Catch::Contains("group.host2 waits in command"));
  CHECK_THAT(lines[0], !Catch::Contains("group.host3"));  // it had nothing to do
}

TEST_CASE("cli collective of any size: one element, an uneven buffer, both rings",
          "[cli][collective]") {
  // nccl-tests' smallest all-reduce: 8 bytes at TP 4 are 2 fp32 elements, chunks of 0, 1, 0 and
  // 1 element. The figures still use the whole byte count.
  const auto one = run_collective("--op all-reduce --tp 4 --bytes 8", "collective_8.json");
  check_figures(one, 4, 8, 2.0 * 3 / 4);
  CHECK(one.at("link_bytes").at("ring_data").get<std::uint64_t>() == 2 * 3 * 8);
  const auto dma = run_collective("--op all-reduce --impl ring-dma-nmc --tp 4 --bytes 8",
                                  "collective_dma_8.json");
  check_figures(dma, 4, 8, 2.0 * 3 / 4, "ring-dma-nmc");
  CHECK(dma.at("slices").get<int>() == 1);
  CHECK(dma.at("link_bytes").at("payload") == dma.at("link_bytes").at("ring_data"));
  for (const auto& gpu : dma.at("stats").at("gpus")) {
    CHECK(gpu.at("tracker").at("errors").get<std::uint64_t>() == 0);
    CHECK(gpu.at("dma").at("errors").get<std::uint64_t>() == 0);
  }
  // One element past 4 MiB: chunks of 262144 and 262145 elements, as fast as the even size within
  // a few percent (a larger chunk's extra element is one more small request per ring step).
  const auto even =
      run_collective("--op reduce-scatter --tp 4 --bytes 4194304", "collective_even.json");
  const auto uneven =
      run_collective("--op reduce-scatter --tp 4 --bytes 4194308", "collective_uneven.json");
  check_figures(uneven, 4, 4194308, 3.0 / 4);
  const double ratio = uneven.at("time_ns").get<double>() / even.at("time_ns").get<double>();
  INFO("uneven / even time " << ratio);
  CHECK(ratio >= 1.0);
  CHECK(ratio < 1.15);
}
