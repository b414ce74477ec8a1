// Ring collectives on the SMs, as nccl-tests would report them: for each system preset, each op
// (reduce-scatter, all-gather, all-reduce) and each buffer size, `t3sim collective` with its
// default channels, and on a system whose switch reduces (topology.switch_reductions) the NVLS
// collective (`--impl nvls`) beside it, printing time, algbw, busbw, busbw per channel, the share
// of the rate a link delivers, how busy each direction of the links was (through a switch the NVLS
// reduce-scatter loads GPU -> switch, its all-gather switch -> GPU, its all-reduce both at once)
// and the simulation's wall time. With --baseline OTHER_T3SIM the same ring runs of another binary
// are printed beside them with the ratio of their busbw and of their wall time. With --markdown yes
// the rows are printed as docs/calibration.md's collective table holds them.
//
// Usage: bench_collective T3SIM [--baseline T3SIM] [--systems t3-paper,a100-8,h100-8]
//          [--ops reduce-scatter,all-gather,all-reduce] [--sizes 1MiB,16MiB,256MiB,1GiB] [--tp 8]
//          [--markdown yes]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace {

struct Run {
  double wall_s = 0;
  nlohmann::json result;
};

std::vector<std::string> split(const std::string& list) {
  std::vector<std::string> items;
  std::stringstream stream(list);
  for (std::string item; std::getline(stream, item, ',');) {
    if (!item.empty()) items.push_back(item);
  }
  return items;
}

// "1MiB" -> 1048576; plain numbers are bytes.
std::uint64_t parse_size(const std::string& text) {
  std::size_t used = 0;
  const std::uint64_t value = std::stoull(text, &used);
  const std::string unit = text.substr(used);
  if (unit.empty()) return value;
  if (unit == "KiB") return value << 10;
  if (unit == "MiB") return value << 20;
  if (unit == "GiB") return value << 30;
  std::fprintf(stderr, "bench_collective: unknown size unit in %s (KiB, MiB, GiB)\n", text.c_str());
  std::exit(2);
}

Run collective(const std::string& binary, const std::string& args, const std::string& json) {
  const std::string command = binary + " " + args + " --json " + json + " > " + json + ".log 2>&1";
  const auto start = std::chrono::steady_clock::now();
  if (std::system(command.c_str()) != 0) {
    std::fprintf(stderr, "bench_collective: failed (see %s.log): %s\n", json.c_str(),
                 command.c_str());
    std::exit(1);
  }
  Run run;
  run.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::ifstream file(json);
  run.result = nlohmann::json::parse(file);
  return run;
}

// The rate one link direction delivers behind packet headers to an SM's stores, which cross in
// packets of at most link.sm_max_payload_bytes (what busbw is compared with).
double link_GBps(const nlohmann::json& config) {
  const auto& link = config["link"];
  const double payload =
      std::min(link["max_payload_bytes"].get<double>(), link.value("sm_max_payload_bytes", 1e300));
  return link["bandwidth_GBps"].get<double>() * payload /
         (payload + link["header_bytes"].get<double>());
}

// Each link direction's serialiser busy time over the run, averaged over the links: {from the
// link's end a, from its end b}. A link's end a is the lower node, so on a switch topology a->b is
// GPU -> switch and b->a switch -> GPU (stats.links[].directions[], in `--json`).
std::pair<double, double> link_busy(const nlohmann::json& result) {
  double busy[2] = {0, 0};
  const nlohmann::json& links = result["stats"]["links"];
  for (const auto& link : links) {
    for (int d = 0; d < 2; ++d) busy[d] += link["directions"][d]["utilisation"].get<double>();
  }
  const double count = links.empty() ? 1.0 : static_cast<double>(links.size());
  return {busy[0] / count, busy[1] / count};
}

// The implementations benchmarked on `system`: the ring, and NVLS where its switch reduces.
std::vector<std::string> impls_of(const std::string& binary, const std::string& system) {
  const std::string json = "bench-collective-" + system + "-config.json";
  const std::string command =
      binary + " config --system " + system + " > " + json + " 2> " + json + ".log";
  if (std::system(command.c_str()) != 0) {
    std::fprintf(stderr, "bench_collective: failed (see %s.log): %s\n", json.c_str(),
                 command.c_str());
    std::exit(1);
  }
  std::ifstream file(json);
  const nlohmann::json config = nlohmann::json::parse(file);
  if (config["topology"].value("switch_reductions", false)) return {"ring", "nvls"};
  return {"ring"};
}

}  // namespace

int main(int argc, char* argv[]) {
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: bench_collective T3SIM [--baseline T3SIM] [--systems A,B] [--ops A,B] "
                 "[--sizes 1MiB,...] [--tp N] [--markdown yes]\n");
    return 2;
  }
  const std::string binary = argv[1];
  std::string baseline, systems = "t3-paper,a100-8,h100-8",
                        ops = "reduce-scatter,all-gather,all-reduce",
                        sizes = "1MiB,16MiB,256MiB,1GiB", tp = "8", markdown = "no";
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    std::string* value = flag == "--baseline"   ? &baseline
                         : flag == "--systems"  ? &systems
                         : flag == "--ops"      ? &ops
                         : flag == "--sizes"    ? &sizes
                         : flag == "--tp"       ? &tp
                         : flag == "--markdown" ? &markdown
                                                : nullptr;
    if (!value) {
      std::fprintf(stderr, "bench_collective: unknown option %s\n", flag.c_str());
      return 2;
    }
    *value = argv[i + 1];
  }

  const bool as_markdown = markdown == "yes";
  std::printf(
      "bench_collective: ring collectives on the SMs (and NVLS where the switch reduces), TP %s, "
      "fp32, default channels\n",
      tp.c_str());
  if (as_markdown) {
    std::printf(
        "| system | impl | op | MiB | channels | time us | busbw GB/s | busbw per channel | %% "
        "link | link busy a->b / b->a | command "
        "|\n|---|---|---|---|---|---|---|---|---|---|---|\n");
  } else {
    std::printf("%-9s %-7s %-15s %8s %6s %11s %9s %9s %10s %7s %6s %6s %8s", "system", "impl", "op",
                "MiB", "chans", "time us", "algbw", "busbw", "busbw/ch", "%link", "a->b", "b->a",
                "wall s");
    if (!baseline.empty()) std::printf(" %9s %7s %8s", "base bus", "ratio", "wall x");
    std::printf("\n");
  }
  for (const std::string& system : split(systems)) {
    for (const std::string& op : split(ops)) {
      for (const std::string& size : split(sizes)) {
        for (const std::string& impl : impls_of(binary, system)) {
          const std::uint64_t bytes = parse_size(size);
          const std::string args = "collective --system " + system + " --op " + op + " --tp " + tp +
                                   " --bytes " + std::to_string(bytes) +
                                   (impl == "ring" ? "" : " --impl " + impl);
          const std::string json =
              "bench-collective-" + system + "-" + impl + "-" + op + "-" + size + ".json";
          const Run run = collective(binary, args, json);
          const nlohmann::json& r = run.result;
          const double busbw = r["busbw_GBps"].get<double>();
          const int channels = r["channels"].get<int>();
          const double mib = static_cast<double>(bytes) / (1 << 20);
          const double link_share = 100 * busbw / link_GBps(r["config"]);
          const auto [busy_ab, busy_ba] = link_busy(r);
          if (as_markdown) {
            std::printf(
                "| %s | %s | %s | %.0f | %d | %.1f | %.1f | %.2f | %.0f%% | %.1f%% / %.1f%% | "
                "`t3sim %s` "
                "|\n",
                system.c_str(), impl.c_str(), op.c_str(), mib, channels,
                r["time_ns"].get<double>() / 1e3, busbw, busbw / channels, link_share,
                100 * busy_ab, 100 * busy_ba, args.c_str());
            std::fflush(stdout);
            continue;
          }
          std::printf(
              "%-9s %-7s %-15s %8.0f %6d %11.1f %9.1f %9.1f %10.2f %6.0f%% %5.1f%% %5.1f%% %8.2f",
              system.c_str(), impl.c_str(), op.c_str(), mib, channels,
              r["time_ns"].get<double>() / 1e3, r["algbw_GBps"].get<double>(), busbw,
              busbw / channels, link_share, 100 * busy_ab, 100 * busy_ba, run.wall_s);
          if (!baseline.empty() && impl == "ring") {  // an older binary may have no NVLS
            const Run base = collective(baseline, args, "base-" + json);
            const double base_busbw = base.result["busbw_GBps"].get<double>();
            std::printf(" %9.1f %6.2fx %7.2fx", base_busbw, busbw / base_busbw,
                        run.wall_s / base.wall_s);
          }
          std::printf("   # t3sim %s\n", args.c_str());
          std::fflush(stdout);
        }
      }
    }
  }
  return 0;
}
