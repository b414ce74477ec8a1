#define SC_INCLUDE_DYNAMIC_PROCESSES
#include "models/sm/sm.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>

#include "protocol/hex.h"
#include "protocol/to_size.h"
#include "tlm_interconnect/address_map.h"
#include "tlm_interconnect/element.h"

namespace t3 {

namespace {

constexpr const char* kMsgType = "t3/sm";
// Faults are reported one by one up to this many, then only counted.
constexpr std::size_t kReportedFaults = 16;

std::int64_t ceil_div(std::int64_t a, std::int64_t b) {
  return (a + b - 1) / b;
}

}  // namespace

Sm::Sm(sc_core::sc_module_name name, const SmConfig& config, SimMode mode, int gpu, int sm_index)
    : sc_core::sc_module(name),
      socket("socket"),
      work("work"),
      done("done"),
      config_(config),
      mode_(mode),
      gpu_(gpu),
      index_(sm_index),
      lanes_(basename(), [this](Lane& lane) { serve(lane); }),
      faults_(kMsgType, kReportedFaults) {
  if (config.occupancy < 1) throw ConfigError("sm.occupancy: must be at least 1");
  if (config.request_bytes < 4) throw ConfigError("sm.request_bytes: must be at least 4");
  flops_per_second_ = config.flops_per_clock * config.clock_GHz * 1e9 * config.efficiency;
  if (!(flops_per_second_ > 0)) {
    throw ConfigError("sm.flops_per_clock, sm.clock_GHz, sm.efficiency: must be positive");
  }
  if (config.max_inflight_bytes < 1) {
    throw ConfigError("sm.max_inflight_bytes: must be at least 1");
  }
  if (!(config.issue_bytes_per_clock > 0)) {
    throw ConfigError("sm.issue_bytes_per_clock: must be positive");
  }
  ns_per_issue_byte_ = 1.0 / (config.issue_bytes_per_clock * config.clock_GHz);
  for (int slot = 0; slot < config.occupancy; ++slot) slots_.push_back(std::make_unique<Slot>());
  for (int slot = 0; slot < config.occupancy; ++slot) {
    sc_core::sc_spawn([this, slot] { slot_thread(slot); },
                      ("slot_" + std::to_string(slot)).c_str());
  }
}

double Sm::step_seconds(std::int64_t h, std::int64_t w, std::int64_t k_step) const {
  return 2.0 * static_cast<double>(h) * static_cast<double>(w) * static_cast<double>(k_step) /
         flops_per_second_;
}

double Sm::reduce_seconds(std::int64_t elements) const {
  return static_cast<double>(elements) / (flops_per_second_ * kReduceRate);
}

sc_core::sc_time Sm::reserve_pipe(sc_core::sc_time duration) {
  const sc_core::sc_time start = std::max(sc_core::sc_time_stamp(), pipe_free_);
  pipe_free_ = start + duration;
  stats_.pipe_busy += duration;
  return pipe_free_;
}

void Sm::slot_thread(int slot_index) {
  Slot& slot = *slots_[to_size(slot_index)];
  for (;;) {
    const WorkItem item = work->read();
    WgDone result;
    result.launch = item.kernel->launch;
    result.tile = item.tile;
    result.sm = index_;
    slot.kind = static_cast<int>(item.kernel->kind);
    slot.tile = item.tile;
    slot.result = &result;
    switch (item.kernel->kind) {
      case dispatcher::kGemm:
        run_gemm(slot, item.kernel->gemm, item.tile, result);
        break;
      case dispatcher::kCollective:
        run_collective(slot, item.kernel->collective, static_cast<int>(item.tile), result);
        break;
      case dispatcher::kStream:
        run_stream(slot, item.kernel->stream, item.tile, result);
        break;
      default:
        SC_REPORT_ERROR(name(), ("kernel kind " + std::to_string(item.kernel->kind) +
                                 " has no implementation in the SM")
                                    .c_str());
        break;
    }
    // The workgroup ends when its posted stores are acknowledged (and, after a fault, when what
    // it still had in flight has come back).
    const sc_core::sc_time fenced_from = sc_core::sc_time_stamp();
    fence(slot);
    stats_.fence_wait += sc_core::sc_time_stamp() - fenced_from;
    slot.result = nullptr;
    slot.kind = -1;
    ++stats_.wgs;
    done->write(result);
  }
}

bool Sm::run_gemm(Slot& slot, const GemmKernel& gemm, std::int64_t tile, WgDone& result) {
  const bool functional = mode_ == SimMode::Functional;
  const std::int64_t grid_cols = gemm.grid_cols();
  const std::int64_t r = tile / grid_cols;
  const std::int64_t c = tile % grid_cols;
  const std::int64_t r0 = r * gemm.tile_m;
  const std::int64_t c0 = c * gemm.tile_n;
  const std::int64_t h = std::min(gemm.tile_m, gemm.m - r0);
  const std::int64_t w = std::min(gemm.tile_n, gemm.n - c0);
  const std::int64_t steps = ceil_div(gemm.k, gemm.tile_k);
  const auto eb = static_cast<std::int64_t>(element_bytes(gemm.element));
  // Tile-contiguous layouts: A (m x k) in tiles tile_m x tile_k, B (k x n) in tiles
  // tile_k x tile_n; tile (r, s) of A starts at r0 * k + h * s0, tile (s, c) of B at
  // s0 * n + kw * c0 (gemm_layout.h).
  const TiledLayout a_layout(gemm.m, gemm.k, gemm.tile_m, gemm.tile_k);
  const TiledLayout b_layout(gemm.k, gemm.n, gemm.tile_k, gemm.tile_n);
  if (functional) slot.acc.assign(to_size(h * w), 0.0f);

  auto k_width = [&](std::int64_t step) {
    return std::min(gemm.tile_k, gemm.k - step * gemm.tile_k);
  };
  // Operand buffers and tickets, one per stage: step s uses stage s % stages.
  const auto stages = static_cast<std::size_t>(config_.gemm_stages);
  while (slot.stages.size() < stages) slot.stages.push_back(std::make_unique<Ticket>());
  if (functional) {
    slot.stage_a.resize(stages);
    slot.stage_b.resize(stages);
  }
  const auto stage_of = [&](std::int64_t step) { return static_cast<std::size_t>(step) % stages; };
  // Reads step `step`'s A sub-tile (h x kw) and B sub-tile (kw x w), each one contiguous range.
  auto load = [&](std::int64_t step) {
    const std::int64_t kw = k_width(step);
    const std::uint64_t a_bytes = static_cast<std::uint64_t>(h * kw * eb);
    const std::uint64_t b_bytes = static_cast<std::uint64_t>(kw * w * eb);
    const std::size_t stage = stage_of(step);
    unsigned char* a_into = nullptr;
    unsigned char* b_into = nullptr;
    if (functional) {
      slot.stage_a[stage].resize(a_bytes);
      slot.stage_b[stage].resize(b_bytes);
      a_into = slot.stage_a[stage].data();
      b_into = slot.stage_b[stage].data();
    }
    const std::uint64_t a_address =
        gemm.a + static_cast<std::uint64_t>(a_layout.tile_offset(r, step) * eb);
    const std::uint64_t b_address =
        gemm.b + static_cast<std::uint64_t>(b_layout.tile_offset(step, c) * eb);
    const T3Extension extension = gemm_read(gemm.element);
    Ticket* ticket = slot.stages[stage].get();
    issue(slot, a_address, a_bytes, extension, a_into, nullptr, ticket);
    issue(slot, b_address, b_bytes, extension, b_into, nullptr, ticket);
  };
  // Functional: acc += A_step x B_step from the bytes that were read.
  auto accumulate = [&](std::int64_t kw, std::size_t stage) {
    slot.a_values.resize(to_size(h * kw));
    slot.b_values.resize(to_size(kw * w));
    for (std::size_t i = 0; i < slot.a_values.size(); ++i) {
      slot.a_values[i] = load_element(slot.stage_a[stage].data(), i, gemm.element);
    }
    for (std::size_t i = 0; i < slot.b_values.size(); ++i) {
      slot.b_values[i] = load_element(slot.stage_b[stage].data(), i, gemm.element);
    }
    for (std::int64_t i = 0; i < h; ++i) {
      float* acc_row = slot.acc.data() + i * w;
      for (std::int64_t kk = 0; kk < kw; ++kk) {
        const float a = slot.a_values[to_size(i * kw + kk)];
        const float* b_row = slot.b_values.data() + kk * w;
        for (std::int64_t j = 0; j < w; ++j) acc_row[j] += a * b_row[j];
      }
    }
  };

  // A software pipeline of `stages` K-steps (sm.gemm_stages): steps s + 1 .. s + stages - 1 are
  // read while step s computes on the shared math pipe (2: double buffering); a step's reads are
  // all in flight at once, as far as the SM's request capacity allows.
  const auto ahead = static_cast<std::int64_t>(stages) - 1;
  for (std::int64_t step = 0; step < std::min(ahead, steps); ++step) load(step);
  for (std::int64_t step = 0; step < steps; ++step) {
    const sc_core::sc_time waited_from = sc_core::sc_time_stamp();
    if (!await(slot, *slot.stages[stage_of(step)])) return false;
    stats_.gemm_load_wait += sc_core::sc_time_stamp() - waited_from;
    const std::int64_t kw = k_width(step);
    if (functional) accumulate(kw, stage_of(step));
    const sc_core::sc_time end =
        reserve_pipe(sc_core::sc_time(step_seconds(h, w, kw), sc_core::SC_SEC));
    if (step + ahead < steps) load(step + ahead);
    const sc_core::sc_time now = sc_core::sc_time_stamp();
    if (end > now) wait(end - now);
  }

  // The output tile goes to its chunk's buffer: the chunk is a (band rows x n) tile-contiguous
  // matrix of its own.
  const std::int64_t chunk = gemm.split->chunk_of(r);
  const OutputTarget& out = gemm.outputs[to_size(chunk)];
  const std::int64_t band_r0 = gemm.split->first_tile_row(chunk) * gemm.tile_m;
  const auto ob = static_cast<std::int64_t>(element_bytes(gemm.out_element));
  const std::uint64_t address =
      out.base + static_cast<std::uint64_t>(((r0 - band_r0) * gemm.n + h * c0) * ob);
  const auto bytes = static_cast<std::uint64_t>(h * w * ob);
  if (functional) {
    slot.out.resize(bytes);
    for (std::size_t i = 0; i < slot.acc.size(); ++i) {
      store_element(slot.out.data(), i, gemm.out_element, slot.acc[i]);
    }
  }
  T3Extension extension;
  extension.op = out.op;
  extension.element = gemm.out_element;
  extension.traffic_class = TrafficClass::Compute;
  extension.origin = {static_cast<std::uint16_t>(gpu_), static_cast<std::uint16_t>(index_)};
  extension.unit_kind = UnitKind::Sm;
  extension.tag = out.tagged ? static_cast<std::uint32_t>(tile) : kNoTag;
  extension.cache_hint = out.cache_hint;
  // Posted: the workgroup's end (the fence in slot_thread) waits for the acknowledgements.
  issue(slot, address, bytes, extension, nullptr, functional ? slot.out.data() : nullptr, nullptr);
  return !result.fault;
}

bool Sm::run_stream(Slot& slot, const StreamKernel& stream, std::int64_t wg, WgDone& result) {
  const bool functional = mode_ == SimMode::Functional;
  const std::uint64_t eb = element_bytes(stream.element);
  const auto [in_begin, in_end] = StreamKernel::share(stream.read_bytes, eb, stream.workgroups, wg);
  const auto [out_begin, out_end] =
      StreamKernel::share(stream.write_bytes, eb, stream.workgroups, wg);
  const std::uint64_t in_bytes = in_end - in_begin;
  const std::uint64_t out_bytes = out_end - out_begin;
  // Steps of the kernel's STREAM_STEP_BYTES, or of half the slot's fair part of the SM's request
  // capacity (the other half for the posted stores). One step's reads are in flight at a time:
  // the next step's leave when this step's have arrived, while it computes. The output share is
  // cut into as many steps.
  const std::uint64_t step_bytes =
      stream.step_bytes > 0
          ? stream.step_bytes
          : std::max<std::uint64_t>(
                static_cast<std::uint64_t>(config_.request_bytes),
                static_cast<std::uint64_t>(config_.max_inflight_bytes / config_.occupancy / 2));
  const auto steps = static_cast<std::int64_t>(
      std::max<std::uint64_t>(1, (std::max(in_bytes, out_bytes) + step_bytes - 1) / step_bytes));
  // Part s of `bytes`, whole elements.
  const auto part = [&](std::uint64_t bytes, std::int64_t s) {
    return StreamKernel::share(bytes, eb, steps, s);
  };
  const T3Extension read = gemm_read(stream.element);
  const auto load = [&](std::int64_t s) {
    const auto [begin, end] = part(in_bytes, s);
    if (end == begin) return;
    if (functional) slot.a.resize(end - begin);
    issue(slot, stream.src + in_begin + begin, end - begin, read,
          functional ? slot.a.data() : nullptr, nullptr, &slot.loads);
  };
  T3Extension write = read;
  write.op = Op::Write;
  write.cache_hint = stream.out_hint;
  const double flops_per_byte =
      stream.read_bytes > 0 ? static_cast<double>(stream.flops) / stream.read_bytes : 0.0;

  // Double buffering as in a GEMM: step s + 1 is read while step s computes.
  load(0);
  for (std::int64_t s = 0; s < steps; ++s) {
    if (!await(slot, slot.loads)) return false;
    const auto [in_first, in_last] = part(in_bytes, s);
    const std::uint64_t read_now = in_last - in_first;
    if (functional) {
      // The data are a stand-in: the output repeats what was read (the model times these
      // kernels; it does not compute layer norms).
      const auto [first, last] = part(out_bytes, s);
      slot.out.assign(last - first, 0);
      for (std::size_t i = 0; i < slot.out.size() && read_now > 0; ++i) {
        slot.out[i] = slot.a[i % read_now];
      }
    }
    // Matrix FLOPs are spread over the input; a kernel that reads nothing (compute only) gives
    // each workgroup an equal share, in its one step.
    const double matrix_s = stream.read_bytes > 0
                                ? flops_per_byte * static_cast<double>(read_now) / flops_per_second_
                                : static_cast<double>(stream.flops) /
                                      static_cast<double>(stream.workgroups * steps) /
                                      flops_per_second_;
    const double compute_s =
        reduce_seconds(static_cast<std::int64_t>(read_now / eb * stream.ops_per_element)) +
        matrix_s;
    const sc_core::sc_time end = reserve_pipe(sc_core::sc_time(compute_s, sc_core::SC_SEC));
    if (s + 1 < steps) load(s + 1);
    const sc_core::sc_time now = sc_core::sc_time_stamp();
    if (end > now) wait(end - now);
    const auto [first, last] = part(out_bytes, s);
    // Posted: the workgroup's end (the fence in slot_thread) waits for the acknowledgements.
    if (last > first) {
      issue(slot, stream.dst + out_begin + first, last - first, write, nullptr,
            functional ? slot.out.data() : nullptr, nullptr);
    }
  }
  return !result.fault;
}

bool Sm::transport(tlm::tlm_generic_payload& payload, WgDone& result, bool posted) {
  sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
  socket->b_transport(payload, delay);
  if (!posted && delay > sc_core::SC_ZERO_TIME) wait(delay);
  if (payload.is_response_ok()) return true;
  record_fault(payload, result);
  return false;
}

void Sm::record_fault(const tlm::tlm_generic_payload& payload, WgDone& result) {
  ++stats_.faults;
  faults_.add(std::string(name()) + ": " + (payload.is_read() ? "read" : "write") + " of " +
              std::to_string(payload.get_data_length()) + " bytes at " +
              hex(payload.get_address()) + " failed: " + payload.get_response_string());
  if (!result.fault) {
    result.fault = true;
    result.fault_address = payload.get_address();
  }
}

T3Extension Sm::gemm_read(ElementType element) const {
  T3Extension extension;
  extension.op = Op::Read;
  extension.element = element;
  extension.traffic_class = TrafficClass::Compute;
  extension.origin = {static_cast<std::uint16_t>(gpu_), static_cast<std::uint16_t>(index_)};
  extension.unit_kind = UnitKind::Sm;
  extension.tag = kNoTag;
  extension.cache_hint = CacheHint::Cached;
  return extension;
}

// ---- Requests in flight -------------------------------------------------------------------------

// A request thread's request: one at a time, from its issue to its completion (an MSHR with the
// thread that waits for it). Lanes are spawned on demand and reused (LanePool), so an SM has as
// many as it ever had requests in flight at once.
struct Sm::Lane {
  tlm::tlm_generic_payload* payload = nullptr;
  sc_core::sc_time issued;        // when the request was admitted (capacity granted)
  sc_core::sc_time arrival;       // when the request has passed the SM's port
  unsigned char* into = nullptr;  // a read's destination (functional mode)
  Slot* slot = nullptr;
  Ticket* ticket = nullptr;
};

Sm::~Sm() = default;

sc_core::sc_time Sm::reserve_port(bool load, std::uint64_t bytes) {
  sc_core::sc_time& port = load ? load_port_free_ : store_port_free_;
  const sc_core::sc_time start = std::max(sc_core::sc_time_stamp(), port);
  port = start + sc_core::sc_time(static_cast<double>(bytes) * ns_per_issue_byte_, sc_core::SC_NS);
  return port;
}

bool Sm::has_room(std::uint64_t bytes) const {
  return inflight_bytes_ == 0 ||
         inflight_bytes_ + bytes <= static_cast<std::uint64_t>(config_.max_inflight_bytes);
}

void Sm::issue(Slot& slot, std::uint64_t address, std::uint64_t bytes, const T3Extension& extension,
               unsigned char* into, const unsigned char* from, Ticket* ticket) {
  const std::uint64_t eb = element_bytes(extension.element);
  const std::uint64_t piece_max =
      std::max<std::uint64_t>(eb, static_cast<std::uint64_t>(config_.request_bytes) / eb * eb);
  const bool load = extension.op == Op::Read;
  for (std::uint64_t done_bytes = 0; done_bytes < bytes;) {
    const std::uint64_t piece = std::min(piece_max, bytes - done_bytes);
    if (!has_room(piece)) {
      const sc_core::sc_time start = sc_core::sc_time_stamp();
      while (!has_room(piece)) wait(room_);
      stats_.budget_wait += sc_core::sc_time_stamp() - start;
    }
    inflight_bytes_ += piece;
    stats_.max_inflight_bytes = std::max(stats_.max_inflight_bytes, inflight_bytes_);
    tlm::tlm_generic_payload* payload =
        make_payload(pool_, address + done_bytes, static_cast<std::size_t>(piece), extension);
    if (from) std::memcpy(payload->get_data_ptr(), from + done_bytes, piece);
    Lane& lane = lanes_.acquire();
    lane.payload = payload;
    lane.issued = sc_core::sc_time_stamp();
    lane.arrival = reserve_port(load, piece);
    lane.into = into ? into + done_bytes : nullptr;
    lane.slot = &slot;
    lane.ticket = ticket;
    ++slot.all.outstanding;
    if (ticket) ++ticket->outstanding;
    lanes_.start(lane);
    done_bytes += piece;
  }
}

void Sm::serve(Lane& lane) {
  const auto complete = [](Ticket& ticket) {
    if (--ticket.outstanding == 0) ticket.done.notify();
  };
  tlm::tlm_generic_payload& payload = *lane.payload;
  const sc_core::sc_time now = sc_core::sc_time_stamp();
  sc_core::sc_time delay = lane.arrival > now ? lane.arrival - now : sc_core::SC_ZERO_TIME;
  socket->b_transport(payload, delay);
  if (delay > sc_core::SC_ZERO_TIME) wait(delay);
  const std::uint64_t bytes = payload.get_data_length();
  Slot& slot = *lane.slot;
  if (!payload.is_response_ok()) {
    record_fault(payload, *slot.result);
  } else if (payload.is_read()) {
    if (lane.into) std::memcpy(lane.into, payload.get_data_ptr(), bytes);
    stats_.bytes_read += bytes;
    ++stats_.reads;
    stats_.read_latency += sc_core::sc_time_stamp() - lane.issued;
  } else {
    stats_.bytes_written += bytes;
    ++stats_.writes;
  }
  payload.release();
  inflight_bytes_ -= bytes;
  room_.notify();
  Ticket* ticket = lane.ticket;
  lanes_.release(lane);
  if (ticket) complete(*ticket);
  complete(slot.all);
}

bool Sm::await(Slot& slot, Ticket& ticket) {
  while (ticket.outstanding > 0) wait(ticket.done);
  return !slot.result->fault;
}

bool Sm::fence(Slot& slot) {
  const bool ok = await(slot, slot.all);
  const sc_core::sc_time now = sc_core::sc_time_stamp();
  if (slot.flags_acked > now) wait(slot.flags_acked - now);
  return ok;
}

bool Sm::post_flag(Slot& slot, std::uint64_t address, std::uint64_t value,
                   const T3Extension& extension) {
  tlm::tlm_generic_payload* payload = make_payload(pool_, address, sizeof value, extension);
  std::memcpy(payload->get_data_ptr(), &value, sizeof value);
  sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
  socket->b_transport(*payload, delay);
  slot.flags_acked = std::max(slot.flags_acked, sc_core::sc_time_stamp() + delay);
  const bool ok = payload->is_response_ok();
  if (!ok) record_fault(*payload, *slot.result);
  payload->release();
  if (!ok) return false;
  stats_.bytes_written += sizeof value;
  ++stats_.writes;
  ++stats_.flag_writes;
  return true;
}

bool Sm::wait_flag(Slot& slot, std::uint64_t address, std::uint64_t expected, std::uint64_t& seen,
                   const T3Extension& extension, sc_core::sc_time interval, WgDone& result) {
  if (seen >= expected) return true;
  const sc_core::sc_time start = sc_core::sc_time_stamp();
  slot.flag = address;
  slot.expected = expected;
  slot.seen = &seen;
  for (;;) {
    tlm::tlm_generic_payload* payload = make_payload(pool_, address, sizeof seen, extension);
    const bool ok = transport(*payload, result);
    if (ok) std::memcpy(&seen, payload->get_data_ptr(), sizeof seen);
    payload->release();
    if (!ok) {
      slot.seen = nullptr;
      return false;
    }
    stats_.bytes_read += sizeof seen;
    ++stats_.reads;
    ++stats_.flag_polls;
    if (seen >= expected) break;
    wait(interval);
  }
  slot.seen = nullptr;
  stats_.flag_wait += sc_core::sc_time_stamp() - start;
  return true;
}

// ---- Ring collectives ---------------------------------------------------------------------------

// The slot's services a collective algorithm uses, bound to the workgroup it runs.
class Sm::SlotOps : public ChannelOps {
 public:
  SlotOps(Sm& sm, Slot& slot, WgDone& result) : sm_(sm), slot_(slot), result_(result) {}
  bool post_flag(std::uint64_t address, std::uint64_t value,
                 const T3Extension& extension) override {
    return sm_.post_flag(slot_, address, value, extension);
  }
  bool wait_flag(std::uint64_t address, std::uint64_t expected, std::uint64_t& seen,
                 const T3Extension& extension, sc_core::sc_time interval) override {
    return sm_.wait_flag(slot_, address, expected, seen, extension, interval, result_);
  }
  bool fence() override { return sm_.fence(slot_); }
  bool move_pieces(RingChannel& channel, const RingMove& move, std::uint32_t ack) override {
    return sm_.move_pieces(slot_, channel, move, ack, result_);
  }
  bool direct_move(RingChannel& channel, const std::vector<DirectSource>& sources,
                   std::uint64_t destination, std::int64_t count) override {
    return sm_.direct_move(slot_, channel, sources, destination, count);
  }
  bool faulted() const override { return result_.fault; }

 private:
  Sm& sm_;
  Slot& slot_;
  WgDone& result_;
};

RingChannel Sm::make_ring_channel(const CollectiveKernel& k, int channel) const {
  RingChannel c(k);
  c.channel = channel;
  c.functional = mode_ == SimMode::Functional;
  c.reduce_scatter = is_reduce_scatter(k.op);
  c.eb = static_cast<std::int64_t>(element_bytes(k.element));
  c.elements = static_cast<std::int64_t>(k.bytes) / c.eb;
  c.slice_elements = k.slice_bytes / c.eb;
  c.slices = channel_slices(c.elements, k.ranks, k.channels, channel, c.slice_elements);
  c.piece_elements =
      std::max<std::int64_t>(1, static_cast<std::int64_t>(config_.request_bytes) / c.eb);
  c.interval = sc_core::sc_time(static_cast<double>(k.poll_ns), sc_core::SC_NS);

  T3Extension base;
  base.element = k.element;
  base.traffic_class = TrafficClass::Communication;
  base.origin = {static_cast<std::uint16_t>(gpu_), static_cast<std::uint16_t>(index_)};
  base.unit_kind = UnitKind::Sm;
  base.tag = kNoTag;
  const auto with = [&](Op op, CacheHint hint) {
    T3Extension e = base;
    e.op = op;
    e.cache_hint = hint;
    return e;
  };
  c.local_read = with(Op::Read, CacheHint::Cached);
  c.local_write = with(Op::Write, CacheHint::Cached);
  c.remote_write = with(Op::Write, CacheHint::Uncached);
  c.flag_read = with(Op::Read, CacheHint::Uncached);
  c.flag_write = c.remote_write;
  c.flag_write.link_channel = LinkChannel::Response;  // a control word never waits behind data

  c.ready = ready_flag(k.flags, channel);
  c.ack = ack_flag(k.flags, channel);
  c.next_ready = ready_flag(k.next_flags, channel);
  c.prev_ack = ack_flag(k.prev_flags, channel);
  if (k.algorithm() == CollectiveAlgorithm::Ring) {  // its channel's ring
    const RingRoute ring = k.ring_of(channel);
    c.stride = ring.stride;
    c.next_buffer = ring.next_buffer;
    c.next_receive = receive_area(ring.next_buffer, k.bytes);
    c.next_ready = ready_flag(ring.next_flags, channel);
    c.prev_ack = ack_flag(ring.prev_flags, channel);
  }
  return c;
}

// One channel of a collective: the algorithm its op names runs it (models/sm/collectives/).
bool Sm::run_collective(Slot& slot, const CollectiveKernel& k, int channel, WgDone& result) {
  if (k.hbm_flags && mode_ != SimMode::Functional) {
    SC_REPORT_ERROR(name(),
                    "collective flags in HBM need functional mode (timing mode stores no data, so "
                    "a flag could never be seen): put the flag areas in the dispatcher mailbox");
    result.fault = true;
    result.fault_address = k.flags;
    return false;
  }
  RingChannel c = make_ring_channel(k, channel);
  SlotOps ops(*this, slot, result);
  return channel_algorithm(k.algorithm()).run(ops, c);
}

// Loads `count` elements from every source piece by piece (reads run ahead as far as the SM's
// request capacity allows), adds them when there are several (in float, rounded once) and stores
// each piece at `destination` as soon as it is complete.
bool Sm::direct_move(Slot& slot, RingChannel& c, const std::vector<DirectSource>& sources,
                     std::uint64_t destination, std::int64_t count) {
  const std::int64_t pieces = ceil_div(count, c.piece_elements);
  const auto step_bytes = static_cast<std::uint64_t>(count * c.eb);
  if (c.functional) {
    slot.local.resize(step_bytes);
    slot.received.resize(step_bytes * sources.size());
  }
  while (static_cast<std::int64_t>(slot.pieces.size()) < pieces) {
    slot.pieces.push_back(std::make_unique<Ticket>());
  }
  const auto piece_bytes = [&](std::int64_t piece) {
    const std::int64_t first = piece * c.piece_elements;
    return static_cast<std::uint64_t>(std::min(c.piece_elements, count - first) * c.eb);
  };
  const auto piece_offset = [&](std::int64_t piece) {
    return static_cast<std::uint64_t>(piece * c.piece_elements * c.eb);
  };
  const auto issue_reads = [&](std::int64_t piece) {
    const std::uint64_t offset = piece_offset(piece);
    for (std::size_t i = 0; i < sources.size(); ++i) {
      unsigned char* into = c.functional ? slot.received.data() + i * step_bytes + offset : nullptr;
      issue(slot, sources[i].address + offset, piece_bytes(piece), *sources[i].extension, into,
            nullptr, slot.pieces[to_size(piece)].get());
    }
  };
  const bool reduce = sources.size() > 1;
  std::int64_t issued = 0;
  for (std::int64_t piece = 0; piece < pieces; ++piece) {
    for (; issued < pieces && (issued == piece || has_room(piece_bytes(issued) * sources.size()));
         ++issued) {
      issue_reads(issued);
    }
    if (!await(slot, *slot.pieces[to_size(piece)])) return false;
    const std::uint64_t bytes = piece_bytes(piece);
    const std::uint64_t offset = piece_offset(piece);
    const std::int64_t elements = static_cast<std::int64_t>(bytes) / c.eb;
    stats_.collective_bytes_read += bytes * sources.size();
    if (c.functional) sum_sources(slot, c, sources.size(), step_bytes, offset, elements);
    if (reduce) {
      const sc_core::sc_time end = reserve_pipe(
          sc_core::sc_time(reduce_seconds(elements * static_cast<std::int64_t>(sources.size() - 1)),
                           sc_core::SC_SEC));
      const sc_core::sc_time now = sc_core::sc_time_stamp();
      if (end > now) wait(end - now);
    }
    issue(slot, destination + offset, bytes, c.local_write, nullptr,
          c.functional ? slot.local.data() + offset : nullptr, nullptr);
    stats_.collective_bytes_written += bytes;
  }
  return !slot.result->fault;
}

// local = the sum of every source's piece (functional mode), in float, rounded once.
void Sm::sum_sources(Slot& slot, const RingChannel& c, std::size_t sources,
                     std::uint64_t step_bytes, std::uint64_t offset, std::int64_t elements) {
  const ElementType type = c.k.element;
  for (std::int64_t i = 0; i < elements; ++i) {
    const auto e = static_cast<std::size_t>(i);
    float sum = 0;
    for (std::size_t s = 0; s < sources; ++s) {
      sum += load_element(slot.received.data() + s * step_bytes + offset, e, type);
    }
    store_element(slot.local.data() + offset, e, type, sum);
  }
}

// Moves a step's data in pieces of at most request_bytes: reads run ahead as far as the SM's
// request capacity allows, each piece is reduced once its reads are back and its store posted.
// `ack` > 0: the received slice is send ack - 1, acknowledged to prev once its last piece has been
// read, so prev may refill the FIFO entry while this one stores.
bool Sm::move_pieces(Slot& slot, RingChannel& c, const RingMove& move, std::uint32_t ack,
                     WgDone& result) {
  const std::int64_t pieces = ceil_div(move.count, c.piece_elements);
  if (c.functional) {
    const auto step_bytes = static_cast<std::size_t>(move.count * c.eb);
    slot.local.resize(step_bytes);
    slot.received.resize(step_bytes);
  }
  while (static_cast<std::int64_t>(slot.pieces.size()) < pieces) {
    slot.pieces.push_back(std::make_unique<Ticket>());
  }
  const auto piece_read_bytes =
      static_cast<std::uint64_t>(c.piece_elements * c.eb) * (move.reduce ? 2 : 1);
  std::int64_t issued = 0;
  for (std::int64_t piece = 0; piece < pieces; ++piece) {
    // This piece's reads are issued in any case; later pieces' only while there is room.
    for (; issued < pieces && (issued == piece || has_room(piece_read_bytes)); ++issued) {
      issue_piece_reads(slot, c, move, issued);
    }
    if (!await(slot, *slot.pieces[to_size(piece)])) return false;
    const std::int64_t first = piece * c.piece_elements;
    const std::int64_t elements = std::min(c.piece_elements, move.count - first);
    const auto bytes = static_cast<std::uint64_t>(elements * c.eb);
    const auto offset = static_cast<std::uint64_t>(first * c.eb);
    stats_.collective_bytes_read += move.reduce ? 2 * bytes : bytes;
    if (move.reduce) reduce_piece(slot, c, elements, offset);
    if (ack > 0 && piece + 1 == pieces && !post_flag(slot, c.prev_ack, c.flag(ack), c.flag_write)) {
      return false;
    }
    issue(slot, move.destination + offset, bytes, *move.store, nullptr,
          c.functional ? slot.local.data() + offset : nullptr, nullptr);
    stats_.collective_bytes_written += bytes;
  }
  return !result.fault;
}

void Sm::issue_piece_reads(Slot& slot, RingChannel& c, const RingMove& move, std::int64_t piece) {
  const std::int64_t first = piece * c.piece_elements;
  const std::int64_t elements = std::min(c.piece_elements, move.count - first);
  const auto bytes = static_cast<std::uint64_t>(elements * c.eb);
  const auto offset = static_cast<std::uint64_t>(first * c.eb);
  Ticket& ticket = *slot.pieces[to_size(piece)];
  if (move.reduce) {
    issue(slot, move.received + offset, bytes, c.local_read,
          c.functional ? slot.received.data() + offset : nullptr, nullptr, &ticket);
  }
  issue(slot, move.source + offset, bytes, c.local_read,
        c.functional ? slot.local.data() + offset : nullptr, nullptr, &ticket);
}

// local += received for one piece (functional mode: in float, rounded to the element type), and
// the time the adds take on the shared math pipe.
void Sm::reduce_piece(Slot& slot, const RingChannel& c, std::int64_t elements,
                      std::uint64_t offset) {
  if (c.functional) {
    const ElementType type = c.k.element;
    unsigned char* local = slot.local.data() + offset;
    const unsigned char* received = slot.received.data() + offset;
    for (std::int64_t i = 0; i < elements; ++i) {
      const auto e = static_cast<std::size_t>(i);
      store_element(local, e, type, load_element(local, e, type) + load_element(received, e, type));
    }
  }
  const sc_core::sc_time end =
      reserve_pipe(sc_core::sc_time(reduce_seconds(elements), sc_core::SC_SEC));
  const sc_core::sc_time now = sc_core::sc_time_stamp();
  if (end > now) wait(end - now);
}

std::vector<std::string> Sm::describe_pending() const {
  // Flag words are (sequence << 32) | count (protocol/ring.h).
  const auto count = [](std::uint64_t value) { return std::to_string(value & 0xffffffffu); };
  const auto sequence = [](std::uint64_t value) { return std::to_string(value >> 32); };
  std::vector<std::string> busy;
  for (const auto& owned : slots_) {
    const Slot& slot = *owned;
    if (slot.kind < 0) continue;
    const char* unit = slot.kind == dispatcher::kCollective ? " channel "
                       : slot.kind == dispatcher::kStream   ? " stream workgroup "
                                                            : " GEMM tile ";
    std::string what = std::string(name()) + unit + std::to_string(slot.tile);
    if (slot.seen != nullptr) {
      what += " waits for the flag at " + hex(slot.flag) + " to reach count " +
              count(slot.expected) + " of sequence " + sequence(slot.expected) + " (reads count " +
              count(*slot.seen) + " of sequence " + sequence(*slot.seen) + ")";
    } else {
      what += " is running";
    }
    busy.push_back(std::move(what));
  }
  return busy;
}

nlohmann::json Sm::report() const {
  const double elapsed_s = sc_core::sc_time_stamp().to_seconds();
  const double busy_s = stats_.pipe_busy.to_seconds();
  return {{"name", name()},
          {"wgs", stats_.wgs},
          {"pipe_busy_ns", busy_s * 1e9},
          {"pipe_utilisation", elapsed_s > 0 ? busy_s / elapsed_s : 0.0},
          {"bytes_read", stats_.bytes_read},
          {"bytes_written", stats_.bytes_written},
          {"reads", stats_.reads},
          {"writes", stats_.writes},
          {"faults", stats_.faults},
          {"max_inflight_bytes", stats_.max_inflight_bytes},
          {"budget_wait_ns", stats_.budget_wait.to_seconds() * 1e9},
          {"read_latency_ns", stats_.read_latency.to_seconds() * 1e9},
          {"gemm_load_wait_ns", stats_.gemm_load_wait.to_seconds() * 1e9},
          {"fence_wait_ns", stats_.fence_wait.to_seconds() * 1e9},
          {"lanes", lanes_.size()},
          {"collective_bytes_read", stats_.collective_bytes_read},
          {"collective_bytes_written", stats_.collective_bytes_written},
          {"flag_polls", stats_.flag_polls},
          {"flag_writes", stats_.flag_writes},
          {"flag_wait_ns", stats_.flag_wait.to_seconds() * 1e9}};
}

}  // namespace t3
