#define SC_INCLUDE_DYNAMIC_PROCESSES
#include "models/sm/sm.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "tlm_interconnect/address_map.h"
#include "tlm_interconnect/element.h"

namespace t3 {

namespace {

constexpr const char* kMsgType = "t3/sm";
constexpr std::uint64_t kReportedFaults = 16;

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
      index_(sm_index) {
  if (config.occupancy < 1) throw ConfigError("sm.occupancy: must be at least 1");
  if (config.request_bytes < 4) throw ConfigError("sm.request_bytes: must be at least 4");
  flops_per_second_ = config.flops_per_clock * config.clock_GHz * 1e9 * config.efficiency;
  if (!(flops_per_second_ > 0)) {
    throw ConfigError("sm.flops_per_clock, sm.clock_GHz, sm.efficiency: must be positive");
  }
  slots_.resize(static_cast<std::size_t>(config.occupancy));
  for (int slot = 0; slot < config.occupancy; ++slot) {
    sc_core::sc_spawn([this, slot] { slot_thread(slot); },
                      ("slot_" + std::to_string(slot)).c_str());
  }
}

double Sm::step_seconds(std::int64_t h, std::int64_t w, std::int64_t k_step) const {
  return 2.0 * static_cast<double>(h) * static_cast<double>(w) * static_cast<double>(k_step) /
         flops_per_second_;
}

sc_core::sc_time Sm::reserve_pipe(sc_core::sc_time duration) {
  const sc_core::sc_time start = std::max(sc_core::sc_time_stamp(), pipe_free_);
  pipe_free_ = start + duration;
  stats_.pipe_busy += duration;
  return pipe_free_;
}

void Sm::slot_thread(int slot_index) {
  Slot& slot = slots_[static_cast<std::size_t>(slot_index)];
  for (;;) {
    const WorkItem item = work->read();
    WgDone result;
    result.tile = item.tile;
    result.sm = index_;
    switch (item.kernel->kind) {
      case dispatcher::kGemm:
        run_gemm(slot, item.kernel->gemm, item.tile, result);
        break;
      // Collective kernels (read/reduce/write loops with flag polling) get their case here.
      default:
        SC_REPORT_ERROR(name(), ("kernel kind " + std::to_string(item.kernel->kind) +
                                 " has no implementation in the SM")
                                    .c_str());
        break;
    }
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
  if (functional) slot.acc.assign(static_cast<std::size_t>(h * w), 0.0f);

  auto k_width = [&](std::int64_t step) {
    return std::min(gemm.tile_k, gemm.k - step * gemm.tile_k);
  };
  // Reads step `step`'s A sub-tile (h x kw) and B sub-tile (kw x w), each one contiguous range.
  auto load = [&](std::int64_t step) {
    const std::int64_t kw = k_width(step);
    const std::uint64_t a_bytes = static_cast<std::uint64_t>(h * kw * eb);
    const std::uint64_t b_bytes = static_cast<std::uint64_t>(kw * w * eb);
    if (functional) {
      slot.a.resize(a_bytes);
      slot.b.resize(b_bytes);
    }
    const std::uint64_t a_address =
        gemm.a + static_cast<std::uint64_t>(a_layout.tile_offset(r, step) * eb);
    const std::uint64_t b_address =
        gemm.b + static_cast<std::uint64_t>(b_layout.tile_offset(step, c) * eb);
    return read(a_address, a_bytes, gemm.element, functional ? slot.a.data() : nullptr, result) &&
           read(b_address, b_bytes, gemm.element, functional ? slot.b.data() : nullptr, result);
  };
  // Functional: acc += A_step x B_step from the bytes that were read.
  auto accumulate = [&](std::int64_t kw) {
    slot.a_values.resize(static_cast<std::size_t>(h * kw));
    slot.b_values.resize(static_cast<std::size_t>(kw * w));
    for (std::size_t i = 0; i < slot.a_values.size(); ++i) {
      slot.a_values[i] = load_element(slot.a.data(), i, gemm.element);
    }
    for (std::size_t i = 0; i < slot.b_values.size(); ++i) {
      slot.b_values[i] = load_element(slot.b.data(), i, gemm.element);
    }
    for (std::int64_t i = 0; i < h; ++i) {
      float* acc_row = slot.acc.data() + i * w;
      for (std::int64_t kk = 0; kk < kw; ++kk) {
        const float a = slot.a_values[static_cast<std::size_t>(i * kw + kk)];
        const float* b_row = slot.b_values.data() + kk * w;
        for (std::int64_t j = 0; j < w; ++j) acc_row[j] += a * b_row[j];
      }
    }
  };

  // Double buffering: step s + 1 is read while step s computes on the shared math pipe.
  if (!load(0)) return false;
  for (std::int64_t step = 0; step < steps; ++step) {
    const std::int64_t kw = k_width(step);
    if (functional) accumulate(kw);
    const sc_core::sc_time end =
        reserve_pipe(sc_core::sc_time(step_seconds(h, w, kw), sc_core::SC_SEC));
    if (step + 1 < steps && !load(step + 1)) return false;
    const sc_core::sc_time now = sc_core::sc_time_stamp();
    if (end > now) wait(end - now);
  }

  // The output tile goes to its chunk's buffer: the chunk is a (band rows x n) tile-contiguous
  // matrix of its own.
  const std::int64_t chunk = gemm.split->chunk_of(r);
  const OutputTarget& out = gemm.outputs[static_cast<std::size_t>(chunk)];
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
  return write(address, bytes, extension, functional ? slot.out.data() : nullptr, result);
}

bool Sm::transport(tlm::tlm_generic_payload& payload, WgDone& result) {
  sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
  socket->b_transport(payload, delay);
  if (delay > sc_core::SC_ZERO_TIME) wait(delay);
  if (payload.is_response_ok()) return true;
  if (stats_.faults++ < kReportedFaults) {
    SC_REPORT_INFO(kMsgType,
                   (std::string(name()) + ": " + (payload.is_read() ? "read" : "write") + " of " +
                    std::to_string(payload.get_data_length()) + " bytes at " +
                    hex(payload.get_address()) + " failed: " + payload.get_response_string())
                       .c_str());
  }
  if (!result.fault) {
    result.fault = true;
    result.fault_address = payload.get_address();
  }
  return false;
}

bool Sm::read(std::uint64_t address, std::uint64_t bytes, ElementType element, unsigned char* into,
              WgDone& result) {
  T3Extension extension;
  extension.op = Op::Read;
  extension.element = element;
  extension.traffic_class = TrafficClass::Compute;
  extension.origin = {static_cast<std::uint16_t>(gpu_), static_cast<std::uint16_t>(index_)};
  extension.unit_kind = UnitKind::Sm;
  extension.tag = kNoTag;
  extension.cache_hint = CacheHint::Cached;
  const std::uint64_t eb = element_bytes(element);
  const std::uint64_t piece_max =
      std::max<std::uint64_t>(eb, static_cast<std::uint64_t>(config_.request_bytes) / eb * eb);
  for (std::uint64_t done_bytes = 0; done_bytes < bytes;) {
    const std::uint64_t piece = std::min(piece_max, bytes - done_bytes);
    tlm::tlm_generic_payload* payload =
        make_payload(pool_, address + done_bytes, static_cast<std::size_t>(piece), extension);
    const bool ok = transport(*payload, result);
    if (ok) {
      if (into) std::memcpy(into + done_bytes, payload->get_data_ptr(), piece);
      stats_.bytes_read += piece;
      ++stats_.reads;
    }
    payload->release();
    if (!ok) return false;
    done_bytes += piece;
  }
  return true;
}

bool Sm::write(std::uint64_t address, std::uint64_t bytes, const T3Extension& extension,
               const unsigned char* from, WgDone& result) {
  const std::uint64_t eb = element_bytes(extension.element);
  const std::uint64_t piece_max =
      std::max<std::uint64_t>(eb, static_cast<std::uint64_t>(config_.request_bytes) / eb * eb);
  for (std::uint64_t done_bytes = 0; done_bytes < bytes;) {
    const std::uint64_t piece = std::min(piece_max, bytes - done_bytes);
    tlm::tlm_generic_payload* payload =
        make_payload(pool_, address + done_bytes, static_cast<std::size_t>(piece), extension);
    if (from) std::memcpy(payload->get_data_ptr(), from + done_bytes, piece);
    const bool ok = transport(*payload, result);
    payload->release();
    if (!ok) return false;
    stats_.bytes_written += piece;
    ++stats_.writes;
    done_bytes += piece;
  }
  return true;
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
          {"faults", stats_.faults}};
}

}  // namespace t3
