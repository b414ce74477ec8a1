#include "models/system/timeline.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <numeric>
#include <stdexcept>
#include <tuple>
#include <utility>

#include "models/system/tp_group.h"
#include "protocol/to_size.h"

namespace t3 {

using nlohmann::json;
using sc_core::sc_time;

namespace {

// The format's timestamps are microseconds; displayTimeUnit only changes how they are shown.
double us(const sc_time& t) {
  return t.to_seconds() * 1e6;
}

// SM groups per GPU: few enough to read at a glance, enough to see waves move across the GPU.
constexpr int kSmGroups = 10;

// Gives each span, taken in the order of `order` (rising start), the first lane free at its start,
// so no two spans of a lane overlap and every lane obeys the format's nesting rule.
std::vector<int> allocate_lanes(const std::vector<std::pair<sc_time, sc_time>>& spans,
                                const std::vector<std::size_t>& order) {
  std::vector<int> lane(spans.size(), 0);
  std::vector<sc_time> lane_end;
  for (std::size_t i : order) {
    const auto free = std::find_if(lane_end.begin(), lane_end.end(),
                                   [&](const sc_time& end) { return end <= spans[i].first; });
    lane[i] = static_cast<int>(free - lane_end.begin());
    if (free == lane_end.end()) {
      lane_end.push_back(spans[i].second);
    } else {
      *free = spans[i].second;
    }
  }
  return lane;
}

// Indices of `spans` by rising start, then end, then index: a total order, so ties are stable.
std::vector<std::size_t> by_start(const std::vector<std::pair<sc_time, sc_time>>& spans) {
  std::vector<std::size_t> order(spans.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
    return std::tie(spans[x].first, spans[x].second, x) <
           std::tie(spans[y].first, spans[y].second, y);
  });
  return order;
}

std::string lane_name(const std::string& track, int lane) {
  return lane == 0 ? track : track + " #" + std::to_string(lane + 1);
}

}  // namespace

// Collects events and the names of the processes and threads they use; thread ids are handed out
// per process in first-use order, which is also the order the tracks are shown in.
class Timeline::Builder {
 public:
  int thread(int pid, const std::string& process, const std::string& name) {
    processes_.emplace(pid, process);
    const auto key = std::make_pair(pid, name);
    const auto found = tids_.find(key);
    if (found != tids_.end()) return found->second;
    const int tid = ++last_tid_[pid];
    tids_.emplace(key, tid);
    threads_.push_back({pid, tid, name});
    return tid;
  }

  void complete(int pid, int tid, const std::string& name, const char* category, sc_time start,
                sc_time end, json args) {
    events_.push_back({{"ph", "X"},
                       {"name", name},
                       {"cat", category},
                       {"pid", pid},
                       {"tid", tid},
                       {"ts", us(start)},
                       {"dur", us(end - start)},
                       {"args", std::move(args)}});
  }

  void instant(int pid, int tid, const std::string& name, const char* category, sc_time at,
               json args) {
    events_.push_back({{"ph", "i"},
                       {"s", "t"},
                       {"name", name},
                       {"cat", category},
                       {"pid", pid},
                       {"tid", tid},
                       {"ts", us(at)},
                       {"args", std::move(args)}});
  }

  void counter(int pid, int tid, const std::string& name, sc_time at, json args) {
    events_.push_back({{"ph", "C"},
                       {"name", name},
                       {"pid", pid},
                       {"tid", tid},
                       {"ts", us(at)},
                       {"args", std::move(args)}});
  }

  // Metadata first (names and display order), then the events in the order they were added.
  json events() const {
    json all = json::array();
    for (const auto& [pid, name] : processes_) {
      all.push_back(metadata(pid, 0, "process_name", {{"name", name}}));
      all.push_back(metadata(pid, 0, "process_sort_index", {{"sort_index", pid}}));
    }
    for (const Thread& t : threads_) {
      all.push_back(metadata(t.pid, t.tid, "thread_name", {{"name", t.name}}));
      all.push_back(metadata(t.pid, t.tid, "thread_sort_index", {{"sort_index", t.tid}}));
    }
    for (const json& event : events_) all.push_back(event);
    return all;
  }

 private:
  struct Thread {
    int pid;
    int tid;
    std::string name;
  };
  static json metadata(int pid, int tid, const char* name, json args) {
    // ts is not needed by the format, but every event having one keeps readers simple.
    return {{"ph", "M"},  {"name", name}, {"pid", pid},
            {"tid", tid}, {"ts", 0},      {"args", std::move(args)}};
  }

  std::map<int, std::string> processes_;
  std::map<std::pair<int, std::string>, int> tids_;
  std::map<int, int> last_tid_;
  std::vector<Thread> threads_;
  std::vector<json> events_;
};

Timeline::Timeline(TpGroup& group, sc_time counter_interval)
    : group_(group), counter_interval_(counter_interval) {
  const auto channels = static_cast<std::size_t>(group.config().hbm.channels);
  queues_.resize(to_size(group.gpus()));
  for (int g = 0; g < group.gpus(); ++g) {
    QueueCounter& queue = queues_[to_size(g)];
    queue.channels.assign(channels, {0, 0});
    group.gpu(g).memory.observe_occupancy(
        [this, &queue](sc_time time, int channel, int compute, int communication) {
          queue.change(time, channel, compute, communication, counter_interval_);
        });
  }
  wire_.resize(to_size(group.links()));
  for (int l = 0; l < group.links(); ++l) {
    auto& directions = wire_[to_size(l)];
    group.link(l).observe_wire(
        [&directions](int direction, sc_time start, sc_time end, std::uint64_t bytes) {
          // Merge with the previous packet if back to back; the rest is merged at the end, since
          // packets can be placed out of time order.
          auto& spans = directions[to_size(direction)];
          if (!spans.empty() && spans.back().end == start) {
            spans.back().end = end;
            spans.back().bytes += bytes;
            ++spans.back().packets;
          } else {
            spans.push_back(Span{start, end, bytes, 1});
          }
        });
  }
}

void Timeline::QueueCounter::emit(const Sample& sample) {
  Sample& last = samples.back();
  if (sample.time <= last.time) {
    last.value = sample.value;  // a later value at the same instant wins
  } else if (sample.value != last.value) {
    samples.push_back(sample);
  }
}

void Timeline::QueueCounter::change(sc_time time, int channel, int compute, int communication,
                                    sc_time interval) {
  auto& entry = channels.at(to_size(channel));
  const bool was_idle = total == std::array<int, 2>{0, 0};
  total[0] += compute - entry[0];
  total[1] += communication - entry[1];
  entry = {compute, communication};
  // Time is cut into stretches of `interval`; each shows the last value it ended with, at the time
  // of that change. The end of a long idle stretch is shown exactly, and so its start (pending).
  const auto stretch = [&](const sc_time& t) {
    return interval.value() == 0 ? t.value() : t.value() / interval.value();
  };
  const Sample now{time, total};
  const bool idle_ends = was_idle && time - idle_since >= interval;
  if (has_pending && (idle_ends || stretch(pending.time) != stretch(time))) emit(pending);
  has_pending = !idle_ends;
  if (idle_ends) {
    emit(now);
  } else {
    pending = now;
  }
  if (total == std::array<int, 2>{0, 0}) idle_since = time;
}

void Timeline::add_phase(const std::string& name, sc_time start, sc_time end) {
  if (end < start) throw std::invalid_argument("Timeline::add_phase: '" + name + "' ends first");
  phases_.push_back({name, start, end});
}

std::string Timeline::node_name(int node) const {
  const Topology& topology = group_.topology();
  return topology.has_switch() && node == topology.switch_node() ? "switch" : std::to_string(node);
}

int Timeline::node_pid(int node) const {
  return node;  // GPUs 0..n-1, the switch is node n
}

void Timeline::add_workgroups(Builder& out, int gpu) const {
  const Gpu& device = group_.gpu(gpu);
  const int sms = device.sms();
  const int group_size = (sms + kSmGroups - 1) / kSmGroups;
  const std::string process = "gpu " + std::to_string(gpu);
  const auto& records = device.dispatcher.dispatched();
  const sc_time now = sc_core::sc_time_stamp();
  for (int first = 0; first < sms; first += group_size) {
    const int last = std::min(sms, first + group_size) - 1;
    const std::string track = first == last
                                  ? "SM " + std::to_string(first)
                                  : "SMs " + std::to_string(first) + "-" + std::to_string(last);
    std::vector<std::size_t> members;
    std::vector<std::pair<sc_time, sc_time>> spans;
    for (std::size_t i = 0; i < records.size(); ++i) {
      const DispatchRecord& r = records[i];
      if (r.sm < first || r.sm > last) continue;
      members.push_back(i);
      spans.emplace_back(r.time, r.end >= r.time ? r.end : now);  // unfinished: up to now
    }
    const std::vector<std::size_t> order = by_start(spans);
    const std::vector<int> lanes = allocate_lanes(spans, order);
    for (std::size_t k : order) {
      const DispatchRecord& r = records[members[k]];
      const int tid = out.thread(gpu, process, lane_name(track, lanes[k]));
      json args = {{"launch", r.launch}, {"tile", r.tile}, {"sm", r.sm}};
      if (r.end < r.time) args["unfinished"] = true;
      out.complete(gpu, tid, "launch " + std::to_string(r.launch), "workgroup", spans[k].first,
                   spans[k].second, std::move(args));
    }
  }
}

void Timeline::add_dma(Builder& out, int gpu) const {
  const std::string process = "gpu " + std::to_string(gpu);
  const auto& transfers = group_.gpu(gpu).dma.transfers();
  std::vector<std::pair<sc_time, sc_time>> spans;
  for (const DmaTransfer& t : transfers) spans.emplace_back(t.start, t.end);
  const std::vector<std::size_t> order = by_start(spans);
  const std::vector<int> lanes = allocate_lanes(spans, order);
  for (std::size_t k : order) {
    const DmaTransfer& t = transfers[k];
    const auto owner =
        group_.address_map().decode(t.destination, std::max<std::uint64_t>(1, t.bytes));
    const int destination = owner ? owner->gpu : -1;
    const int tid = out.thread(gpu, process, lane_name("dma", lanes[k]));
    json args = {{"bytes", t.bytes},           {"destination_gpu", destination},
                 {"op", to_string(t.op)},      {"tag", t.tag},
                 {"queued_us", us(t.queued)},  {"trigger", t.doorbell ? "doorbell" : "tracker"},
                 {"descriptor", t.descriptor}, {"error", t.error}};
    out.complete(gpu, tid, std::string(to_string(t.op)) + " to gpu " + std::to_string(destination),
                 "dma", t.start, t.end, std::move(args));
  }
}

// The link directions `node` sends on. Under rotational symmetry
// only GPU 0's links exist, and both their directions are GPU 0's: side A carries what GPU 0
// sends towards h, side B what it sends towards -h (TpGroup::wire_symmetric_links). Both are named
// as an every-GPU run names them ("0->-h", not "h->0"); the B side of a folded link (h = -h)
// sends nothing and is left out.
std::vector<Timeline::Send> Timeline::sends(int node) const {
  const bool symmetric = group_.replicas() > 1;
  const int n = static_cast<int>(group_.config().gpus);
  std::vector<Send> sends;
  for (int l = 0; l < group_.links(); ++l) {
    const LinkEnds& ends = group_.link_ends(l);
    if (symmetric) {
      if (node != 0) continue;
      const int mirror = (n - ends.b) % n;  // ends = {0, h}
      sends.push_back({l, 0, 0, ends.b});
      if (mirror != ends.b) sends.push_back({l, 1, 0, mirror});
    } else if (ends.a == node) {
      sends.push_back({l, 0, ends.a, ends.b});
    } else if (ends.b == node) {
      sends.push_back({l, 1, ends.b, ends.a});
    }
  }
  // An every-GPU run lists GPU 0's links by far end (the topology's order); so does GPU 0 alone.
  if (symmetric) {
    std::stable_sort(sends.begin(), sends.end(),
                     [](const Send& x, const Send& y) { return x.to < y.to; });
  }
  return sends;
}

// Each link direction on the track of the node it leaves, its back-to-back packets merged.
void Timeline::add_links(Builder& out, int node) const {
  for (const Send& send : sends(node)) {
    // Packets may have been placed out of order: sort, then merge what touches.
    std::vector<Span> spans = wire_[to_size(send.link)][to_size(send.direction)];
    std::sort(spans.begin(), spans.end(), [](const Span& x, const Span& y) {
      return std::tie(x.start, x.end) < std::tie(y.start, y.end);
    });
    std::vector<Span> merged;
    for (const Span& s : spans) {
      if (!merged.empty() && s.start <= merged.back().end) {
        merged.back().end = std::max(merged.back().end, s.end);
        merged.back().bytes += s.bytes;
        merged.back().packets += s.packets;
      } else {
        merged.push_back(s);
      }
    }
    const std::string name = node_name(node);
    const std::string process = name == "switch" ? name : "gpu " + name;
    const int tid = out.thread(node_pid(node), process,
                               "link " + node_name(send.from) + "->" + node_name(send.to));
    for (const Span& s : merged) {
      out.complete(node_pid(node), tid, "busy", "link", s.start, s.end,
                   {{"packets", s.packets},
                    {"wire_bytes", s.bytes},
                    {"link", send.link},
                    {"direction", send.direction}});
    }
  }
}

void Timeline::add_tracker(Builder& out, int gpu) const {
  const auto& fires = group_.gpu(gpu).tracker.fires();
  if (fires.empty()) return;
  const int tid = out.thread(gpu, "gpu " + std::to_string(gpu), "tracker");
  for (const TrackerFire& f : fires) {
    const auto owner = group_.address_map().decode(f.destination);
    out.instant(gpu, tid, "fire", "tracker", f.time,
                {{"tag", f.tag},
                 {"region", f.region},
                 {"bytes", f.bytes},
                 {"destination_gpu", owner ? owner->gpu : -1}});
  }
}

void Timeline::add_queue(Builder& out, int gpu) const {
  const QueueCounter& queue = queues_[to_size(gpu)];
  const int tid = out.thread(gpu, "gpu " + std::to_string(gpu), "hbm queue");
  auto sample = [&](const Sample& s) {
    out.counter(gpu, tid, "hbm queue", s.time,
                {{"compute", s.value[0]}, {"communication", s.value[1]}});
  };
  for (const Sample& s : queue.samples) sample(s);
  // The value that stood at the end, if it was still waiting for its stretch to close.
  if (queue.has_pending && queue.pending.value != queue.samples.back().value) {
    sample(queue.pending);
  }
}

void Timeline::add_phases(Builder& out) const {
  if (phases_.empty()) return;
  const int pid = group_.gpus() + 1;  // after the GPUs and the switch
  std::vector<std::pair<sc_time, sc_time>> spans;
  for (const Phase& p : phases_) spans.emplace_back(p.start, p.end);
  const std::vector<std::size_t> order = by_start(spans);
  const std::vector<int> lanes = allocate_lanes(spans, order);
  for (std::size_t k : order) {
    const int tid = out.thread(pid, "tp group", lane_name("phases", lanes[k]));
    out.complete(pid, tid, phases_[k].name, "phase", phases_[k].start, phases_[k].end,
                 json::object());
  }
}

json Timeline::chrome_trace() const {
  Builder out;
  for (int g = 0; g < group_.gpus(); ++g) {
    add_workgroups(out, g);
    add_dma(out, g);
    add_links(out, g);
    add_tracker(out, g);
    add_queue(out, g);
  }
  if (group_.topology().has_switch()) add_links(out, group_.topology().switch_node());
  add_phases(out);
  return {{"displayTimeUnit", "ns"},
          {"otherData",
           {{"generator", "t3sim"},
            {"gpus", group_.gpus()},
            {"simulated_end_us", us(sc_core::sc_time_stamp())}}},
          {"traceEvents", out.events()}};
}

void Timeline::write(const std::string& path) const {
  const json trace = chrome_trace();
  std::ofstream file(path, std::ios::binary);
  if (!file) throw std::runtime_error("cannot write timeline '" + path + "'");
  // One event per line: diffs and grep stay usable on large traces.
  file << "{\"displayTimeUnit\":" << trace["displayTimeUnit"].dump()
       << ",\"otherData\":" << trace["otherData"].dump() << ",\"traceEvents\":[\n";
  const json& events = trace["traceEvents"];
  for (std::size_t i = 0; i < events.size(); ++i) {
    file << events[i].dump() << (i + 1 < events.size() ? ",\n" : "\n");
  }
  file << "]}\n";
  file.flush();
  if (!file) throw std::runtime_error("cannot write timeline '" + path + "': write failed");
}

}  // namespace t3
