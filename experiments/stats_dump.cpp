#include "experiments/stats_dump.h"

#include <fstream>
#include <sstream>
#include <stdexcept>

#include "models/gpu/gpu.h"
#include "protocol/to_size.h"

namespace t3 {

namespace {

double ns(sc_core::sc_time time) {
  return time.to_seconds() * 1e9;
}

// Appends statistics under one prefix ("gpu0.hbm.").
class Collector {
 public:
  explicit Collector(Statistics& out) : out_(out) {}
  void count(const std::string& name, std::uint64_t value, const char* description) {
    out_.push_back({name, description, true, value, 0.0});
  }
  void real(const std::string& name, double value, const char* description) {
    out_.push_back({name, description, false, 0, value});
  }

 private:
  Statistics& out_;
};

void collect_hbm(Collector& c, const std::string& gpu, const MemoryController& memory) {
  const HbmStats& stats = memory.stats();
  const std::string hbm = gpu + ".hbm.";
  double busy = 0;
  for (std::size_t ch = 0; ch < stats.channel_bytes.size(); ++ch) {
    const std::string channel = hbm + "ch" + std::to_string(ch) + ".";
    c.count(channel + "bytes", stats.channel_bytes[ch], "bytes the channel served");
    c.real(channel + "busy_ns", stats.channel_busy_ns[ch], "data-bus busy time (ns)");
    c.count(channel + "row_hits", stats.channel_row_hits[ch],
            "bank accesses that found their row open (bank model)");
    c.count(channel + "row_misses", stats.channel_row_misses[ch],
            "bank accesses that opened their row (bank model)");
    busy += stats.channel_busy_ns[ch];
  }
  for (Op op : {Op::Read, Op::Write, Op::Update}) {
    for (TrafficClass tc : {TrafficClass::Compute, TrafficClass::Communication}) {
      const std::string key = std::string(to_string(op)) + "." + to_string(tc);
      const auto o = static_cast<std::size_t>(op);
      const auto t = static_cast<std::size_t>(tc);
      c.count(hbm + "bytes." + key, stats.bytes[o][t], "bytes served, by op and traffic class");
      c.count(hbm + "requests." + key, stats.requests[o][t],
              "requests answered, by op and traffic class");
    }
  }
  std::uint64_t bytes = 0;
  for (std::uint64_t b : stats.channel_bytes) bytes += b;
  c.count(hbm + "bytes", bytes, "bytes served, all channels");
  c.real(hbm + "busy_ns", busy, "data-bus busy time summed over the channels (ns)");
  c.count(hbm + "row_hits", stats.row_hits, "bank accesses that found their row open");
  c.count(hbm + "row_misses", stats.row_misses, "bank accesses that opened their row");
  c.real(hbm + "queue.compute_entry_ns", stats.occupancy_integral_ns[0],
         "compute entries waiting x time, all channels (ns)");
  c.real(hbm + "queue.communication_entry_ns", stats.occupancy_integral_ns[1],
         "communication entries waiting x time, all channels (ns)");
  c.count(hbm + "rejected", stats.rejected, "requests answered with an error");
  const nlohmann::json report = memory.report();
  if (report.contains("mca")) {
    const nlohmann::json& mca = report["mca"];
    c.count(hbm + "mca.held_back", mca["held_back"].get<std::uint64_t>(),
            "MCA picks at which communication was queued and the gate was shut");
    c.count(hbm + "mca.starvation_overrides", mca["starvation_overrides"].get<std::uint64_t>(),
            "MCA picks a starved communication request opened the gate");
    c.count(hbm + "mca.urgent_releases", mca["urgent_releases"].get<std::uint64_t>(),
            "MCA picks an urgent communication request kept the gate open");
  }
}

void collect_l2(Collector& c, const std::string& gpu, const L2Stats& stats) {
  const std::pair<const char*, const L2Stats::PerClass*> counters[] = {
      {"read_hit_sectors", &stats.read_hit_sectors},
      {"read_miss_sectors", &stats.read_miss_sectors},
      {"write_hit_sectors", &stats.write_hit_sectors},
      {"write_miss_sectors", &stats.write_miss_sectors},
      {"bypass_bytes", &stats.bypass_bytes},
      {"fill_bytes", &stats.fill_bytes},
      {"writeback_bytes", &stats.writeback_bytes},
      {"evictions", &stats.evictions},
      {"unallocated_bytes", &stats.unallocated_bytes}};
  for (const auto& [name, per_class] : counters) {
    for (TrafficClass tc : {TrafficClass::Compute, TrafficClass::Communication}) {
      c.count(gpu + ".l2." + name + "." + to_string(tc), (*per_class)[static_cast<std::size_t>(tc)],
              "L2 counter by the requester's traffic class (models/l2/l2_cache.h, L2Stats)");
    }
  }
}

void collect_sms(Collector& c, const std::string& gpu, const Gpu& device) {
  SmStats sum;
  for (int s = 0; s < device.sms(); ++s) {
    const SmStats& stats = device.sm(s).stats();
    sum.wgs += stats.wgs;
    sum.pipe_busy += stats.pipe_busy;
    sum.bytes_read += stats.bytes_read;
    sum.bytes_written += stats.bytes_written;
    sum.reads += stats.reads;
    sum.writes += stats.writes;
    sum.faults += stats.faults;
    sum.budget_wait += stats.budget_wait;
    sum.read_latency += stats.read_latency;
    sum.gemm_load_wait += stats.gemm_load_wait;
    sum.fence_wait += stats.fence_wait;
    sum.collective_bytes_read += stats.collective_bytes_read;
    sum.collective_bytes_written += stats.collective_bytes_written;
    sum.flag_polls += stats.flag_polls;
    sum.flag_writes += stats.flag_writes;
    sum.flag_wait += stats.flag_wait;
  }
  const std::string sm = gpu + ".sm.";
  c.count(sm + "workgroups", sum.wgs, "workgroups finished, all SMs");
  c.real(sm + "busy_ns", ns(sum.pipe_busy), "math-pipe busy time summed over the SMs (ns)");
  c.count(sm + "bytes_read", sum.bytes_read, "bytes of read requests answered");
  c.count(sm + "bytes_written", sum.bytes_written, "bytes of write and update requests answered");
  c.count(sm + "reads", sum.reads, "read transactions");
  c.count(sm + "writes", sum.writes, "write and update transactions");
  c.count(sm + "faults", sum.faults, "transactions answered with an error");
  c.real(sm + "budget_wait_ns", ns(sum.budget_wait),
         "time workgroups waited for request capacity (ns)");
  c.real(sm + "read_latency_ns", ns(sum.read_latency),
         "issue-to-data time summed over the read transactions (ns)");
  c.real(sm + "gemm_load_wait_ns", ns(sum.gemm_load_wait),
         "time GEMM workgroups waited for a K-step's operands (ns)");
  c.real(sm + "fence_wait_ns", ns(sum.fence_wait),
         "time finished workgroups waited for their stores' acknowledgements (ns)");
  c.count(sm + "collective_bytes_read", sum.collective_bytes_read,
          "data bytes the collective kernels read");
  c.count(sm + "collective_bytes_written", sum.collective_bytes_written,
          "data bytes the collective kernels stored");
  c.count(sm + "flag_polls", sum.flag_polls, "collective flag reads");
  c.count(sm + "flag_writes", sum.flag_writes, "collective READY and ACK stores");
  c.real(sm + "flag_wait_ns", ns(sum.flag_wait), "time channels spent polling flags (ns)");
}

void collect_dma(Collector& c, const std::string& gpu, const DmaStats& stats) {
  const std::string dma = gpu + ".dma0.";  // one DMA engine per GPU
  c.count(dma + "transfers", stats.transfers, "transfers completed");
  c.count(dma + "triggered", stats.triggered, "transfers the tracker triggered");
  c.count(dma + "doorbells", stats.doorbells, "transfers started by MMIO descriptors");
  c.count(dma + "pieces", stats.pieces, "pieces moved");
  c.count(dma + "bytes", stats.bytes_read, "bytes moved (read from the source)");
  c.count(dma + "bytes_written", stats.bytes_written, "bytes stored at the destination");
  c.count(dma + "bytes_updated", stats.bytes_updated, "bytes added at the destination");
  c.count(dma + "errors", stats.errors, "pieces answered with an error");
  c.count(dma + "urgent_reads", stats.urgent_reads, "piece reads issued urgent");
  c.count(dma + "urgent_writes", stats.urgent_writes, "piece writes and updates issued urgent");
  c.real(dma + "buffer_wait_ns", ns(stats.buffer_wait),
         "time transfers waited for read-ahead buffer room (ns)");
  c.real(dma + "read_latency_ns", ns(stats.read_latency),
         "piece read latencies summed over the pieces (ns)");
  c.real(dma + "write_latency_ns", ns(stats.write_latency),
         "piece write latencies summed over the pieces (ns)");
}

void collect_tracker(Collector& c, const std::string& gpu, const TrackerStats& stats) {
  const std::string tracker = gpu + ".tracker.";
  c.count(tracker + "fired", stats.fired, "tiles whose count reached its threshold");
  c.count(tracker + "refused", stats.refused, "accesses refused for want of an entry");
  c.count(tracker + "errors", stats.errors, "accesses in no enabled region");
  c.count(tracker + "overcount", stats.overcount, "conservation errors");
  c.count(tracker + "counted_bytes", stats.counted_bytes, "bytes counted into entries");
}

// A node's name in the topology: "gpu<g>" or "switch".
std::string node_name(const TpGroup& group, int node) {
  return node == group.topology().switch_node() ? "switch" : "gpu" + std::to_string(node);
}

void collect_links(Collector& c, const TpGroup& group, std::uint64_t& payload, double& busy) {
  for (int l = 0; l < group.links(); ++l) {
    const LinkEnds& ends = group.link_ends(l);
    for (int direction = 0; direction < 2; ++direction) {
      const int from = direction == 0 ? ends.a : ends.b;
      const int to = direction == 0 ? ends.b : ends.a;
      const LinkDirectionStats& stats = group.link(l).stats(direction);
      const std::string link = node_name(group, from) + ".link.to_" + node_name(group, to) + ".";
      c.count(link + "transactions", stats.transactions, "requests that crossed");
      c.count(link + "packets", stats.packets, "packets sent");
      c.count(link + "payload_bytes", stats.payload_bytes, "data bytes carried");
      c.count(link + "wire_bytes", stats.wire_bytes, "bytes on the wire, headers included");
      c.real(link + "busy_ns", stats.busy_ns, "serialiser busy time (ns)");
      payload += stats.payload_bytes;
      busy += stats.busy_ns;
    }
  }
}

}  // namespace

Statistics collect_statistics(const TpGroup& group) {
  Statistics out;
  Collector c(out);
  const auto replicas = static_cast<std::uint64_t>(group.replicas());
  c.real("sim.time_ns", ns(sc_core::sc_time_stamp()), "simulated time (ns)");
  c.count("sim.gpus_simulated", static_cast<std::uint64_t>(group.gpus()),
          "GPUs simulated (1 under sim.symmetry = rotational)");
  c.count("sim.replicas", replicas, "group GPUs each simulated GPU stands for");
  std::uint64_t dram = 0;
  double hbm_busy = 0;
  for (int g = 0; g < group.gpus(); ++g) {
    const Gpu& gpu = group.gpu(g);
    const std::string name = "gpu" + std::to_string(g);
    collect_hbm(c, name, gpu.memory);
    collect_l2(c, name, gpu.l2.stats());
    collect_sms(c, name, gpu);
    collect_dma(c, name, gpu.dma.stats());
    collect_tracker(c, name, gpu.tracker.stats());
    for (std::uint64_t b : gpu.memory.stats().channel_bytes) dram += b;
    for (double b : gpu.memory.stats().channel_busy_ns) hbm_busy += b;
  }
  std::uint64_t payload = 0;
  double link_busy = 0;
  collect_links(c, group, payload, link_busy);
  // The group's: what the result document reports (dram_bytes.total, link_bytes.payload).
  c.count("group.hbm.bytes", dram * replicas, "HBM bytes served by every GPU of the group");
  c.real("group.hbm.busy_ns", hbm_busy * static_cast<double>(replicas),
         "HBM data-bus busy time summed over every channel of the group (ns)");
  c.count("group.link.payload_bytes", payload * replicas,
          "link data bytes, every direction of every link of the group");
  c.real("group.link.busy_ns", link_busy * static_cast<double>(replicas),
         "link serialiser busy time summed over every direction of the group (ns)");
  return out;
}

Statistics difference(const Statistics& later, const Statistics& earlier) {
  if (later.size() != earlier.size()) {
    throw std::logic_error("statistics: snapshots of different groups");
  }
  Statistics delta = later;
  for (std::size_t i = 0; i < delta.size(); ++i) {
    const bool same = later[i].name == earlier[i].name;
    if (!same)
      throw std::logic_error("statistics: " + later[i].name + " is not " + earlier[i].name);
    // Replica and GPU counts are the group's whatever the window.
    if (delta[i].name == "sim.gpus_simulated" || delta[i].name == "sim.replicas") continue;
    delta[i].count -= earlier[i].count;
    delta[i].value -= earlier[i].value;
  }
  return delta;
}

namespace {

nlohmann::json values_json(const Statistics& statistics) {
  nlohmann::json values = nlohmann::json::object();
  for (const Statistic& s : statistics) {
    if (s.integral) {
      values[s.name] = s.count;
    } else {
      values[s.name] = s.value;
    }
  }
  return values;
}

}  // namespace

nlohmann::json stats_section(const Statistics& start, const Statistics& end,
                             const std::vector<PhaseEnd>& phases) {
  nlohmann::json by_phase = nlohmann::json::object();
  const Statistics* begin = &start;
  for (const auto& [name, phase_end] : phases) {
    by_phase[name] = values_json(difference(phase_end, *begin));
    begin = &phase_end;
  }
  nlohmann::json descriptions = nlohmann::json::object();
  for (const Statistic& s : start) descriptions[s.name] = s.description;
  return {{"total", values_json(difference(end, start))},
          {"phases", by_phase},
          {"descriptions", descriptions}};
}

namespace {

// "1234" for an integer, the shortest exact decimal for a real.
std::string number_text(const nlohmann::json& value) {
  return value.dump();
}

void text_lines(std::ostringstream& out, const std::string& prefix, const nlohmann::json& values,
                const nlohmann::json& descriptions) {
  for (const auto& [name, value] : values.items()) {
    out << prefix << name << ' ' << number_text(value) << " # "
        << descriptions.value(name, std::string()) << '\n';
  }
}

}  // namespace

std::string stats_text(const nlohmann::json& sections) {
  std::ostringstream out;
  for (const auto& [run, section] : sections.items()) {
    const nlohmann::json& descriptions = section["descriptions"];
    text_lines(out, run + ".total.", section["total"], descriptions);
    for (const auto& [phase, values] : section["phases"].items()) {
      text_lines(out, run + ".phase." + phase + ".", values, descriptions);
    }
  }
  return out.str();
}

void write_stats(const std::string& path, const nlohmann::json& sections) {
  std::ofstream out(path);
  if (!out) throw std::runtime_error("cannot write statistics '" + path + "'");
  const bool text = path.size() >= 4 && path.compare(path.size() - 4, 4, ".txt") == 0;
  if (text) {
    out << stats_text(sections);
  } else {
    out << nlohmann::json{{"format", "t3sim-stats-1"}, {"runs", sections}}.dump(1) << '\n';
  }
  if (!out) throw std::runtime_error("cannot write statistics '" + path + "'");
}

}  // namespace t3
