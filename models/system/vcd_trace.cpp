#include "models/system/vcd_trace.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "models/system/tp_group.h"
#include "protocol/to_size.h"

namespace t3 {

using sc_core::sc_time;

VcdTrace::VcdTrace(sc_core::sc_module_name name, TpGroup& group, const std::string& path)
    : sc_core::sc_module(name) {
  // SystemC appends ".vcd" itself.
  const std::string suffix = ".vcd";
  const bool has_suffix = path.size() >= suffix.size() &&
                          path.compare(path.size() - suffix.size(), suffix.size(), suffix) == 0;
  file_ = sc_core::sc_create_vcd_trace_file(
      (has_suffix ? path.substr(0, path.size() - suffix.size()) : path).c_str());
  if (file_ == nullptr) throw std::runtime_error("cannot write VCD '" + path + "'");
  file_->set_time_unit(1, sc_core::SC_PS);  // the kernel's resolution; said, not assumed

  // The traced values are plain members updated by observers: no signal, no extra delta cycle.
  queues_.resize(to_size(group.gpus()));
  for (int g = 0; g < group.gpus(); ++g) {
    Queue& queue = queues_[to_size(g)];
    queue.channels.assign(to_size(group.config().hbm.channels), {0, 0});
    const std::string prefix = "gpu" + std::to_string(g) + "_hbm_queue_";
    sc_core::sc_trace(file_, queue.compute, prefix + "compute");
    sc_core::sc_trace(file_, queue.communication, prefix + "communication");
    group.gpu(g).memory.observe_occupancy(
        [&queue](sc_time, int channel, int compute, int communication) {
          auto& entry = queue.channels.at(to_size(channel));
          queue.compute += compute - entry[0];
          queue.communication += communication - entry[1];
          entry = {compute, communication};
        });
  }

  // Packets are reserved ahead of the current time, so a process raises and drops the bits when
  // their time comes.
  directions_.resize(2 * static_cast<std::size_t>(group.links()));
  const auto& ends = group.topology().links();
  auto node = [&](int n) { return n < group.gpus() ? "gpu" + std::to_string(n) : "switch"; };
  for (int l = 0; l < group.links(); ++l) {
    const LinkEnds& e = ends[to_size(l)];
    const std::string link = "link" + std::to_string(l) + "_";
    sc_core::sc_trace(file_, directions_[2 * l].busy,
                      link + node(e.a) + "_to_" + node(e.b) + "_busy");
    sc_core::sc_trace(file_, directions_[2 * l + 1].busy,
                      link + node(e.b) + "_to_" + node(e.a) + "_busy");
    group.link(l).observe_wire([this, l](int direction, sc_time start, sc_time end, std::uint64_t) {
      if (end <= start) return;
      Direction& d = directions_[to_size(2 * l + direction)];
      ++d.edges[start];
      --d.edges[end];
      const sc_time now = sc_core::sc_time_stamp();
      wake_.notify(start > now ? start - now : sc_core::SC_ZERO_TIME);
    });
  }

  SC_HAS_PROCESS(VcdTrace);
  SC_METHOD(update_links);
  sensitive << wake_;
  dont_initialize();
}

VcdTrace::~VcdTrace() {
  if (file_ != nullptr) sc_core::sc_close_vcd_trace_file(file_);
}

void VcdTrace::update_links() {
  const sc_time now = sc_core::sc_time_stamp();
  bool pending = false;
  sc_time next;
  for (Direction& d : directions_) {
    // Back-to-back packets meet at one instant: their edges cancel and the bit stays high.
    while (!d.edges.empty() && d.edges.begin()->first <= now) {
      d.active += d.edges.begin()->second;
      d.edges.erase(d.edges.begin());
    }
    d.busy = d.active > 0;
    if (d.edges.empty()) continue;
    next = pending ? std::min(next, d.edges.begin()->first) : d.edges.begin()->first;
    pending = true;
  }
  if (pending) wake_.notify(next - now);
}

}  // namespace t3
