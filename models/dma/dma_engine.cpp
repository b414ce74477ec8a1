#define SC_INCLUDE_DYNAMIC_PROCESSES
#include "models/dma/dma_engine.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "protocol/hex.h"
#include "protocol/to_size.h"
#include "tlm_interconnect/address_map.h"

namespace t3 {

using namespace dma;

namespace {

constexpr const char* kMsgType = "t3/dma";

}  // namespace

// A running transfer's count of outstanding pieces; a finished piece notifies `done`.
struct DmaEngine::Slot {
  std::uint32_t outstanding = 0;
  bool error = false;
  sc_core::sc_event done;
};

// A piece mover: one thread, one piece at a time (read, then write or update).
struct DmaEngine::Lane {
  std::uint64_t source = 0, destination = 0;
  std::uint32_t bytes = 0;
  Op op = Op::Write;
  ElementType element = ElementType::Fp32;
  std::uint32_t tag = kNoTag;
  std::uint32_t descriptor = 0;
  Slot* slot = nullptr;
};

DmaEngine::DmaEngine(sc_core::sc_module_name name, const DmaConfig& config,
                     sc_core::sc_time mmio_latency, int gpu)
    : RegisterBlock(name, mmio_latency),
      out("out"),
      trigger_export("trigger_export"),
      config_(config),
      gpu_(gpu),
      prefix_("gpu" + std::to_string(gpu) + " dma: "),
      descriptors_(kDescriptors),
      lanes_(basename(), [this](Lane& lane) { serve(lane); }),
      errors_(kMsgType, kMaxErrorMessages) {
  if (config.outstanding_bytes < 1) {
    throw ConfigError("dma.outstanding_bytes: must be at least 1");
  }
  if (config.in_flight < 1) throw ConfigError("dma.in_flight: must be at least 1");
  if (config.chunk_bytes < 4) throw ConfigError("dma.chunk_bytes: must be at least 4");
  trigger_export.bind(*this);
  piece_bytes_ = static_cast<std::uint64_t>(config.chunk_bytes) & ~std::uint64_t{3};
  if (!(config.urgent_fill >= 0 && config.urgent_fill <= 1)) {
    throw ConfigError("dma.urgent_fill: " + std::to_string(config.urgent_fill) +
                      " is outside [0, 1]");
  }
  urgent_above_ = static_cast<std::uint64_t>(
      std::floor(config.urgent_fill * static_cast<double>(config.outstanding_bytes)));

  auto ro = [this](std::uint64_t offset, const std::string& reg, const std::string& doc,
                   Reader read) { add_register(offset, reg, doc, std::move(read)); };
  ro(kStatus, "STATUS", "0 idle, 1 busy (requests queued or running)",
     [this] { return pending() > 0 ? 1u : 0u; });
  ro(kQueued, "QUEUED", "requests waiting to start", [this] { return saturate(queue_.size()); });
  ro(kRunning, "RUNNING", "transfers in progress", [this] { return saturate(running_); });
  ro(kCompleted, "COMPLETED", "transfers finished since clear (failed ones included)",
     [this] { return saturate(stats_.transfers); });
  ro(kBytesLow, "BYTES_LO", "bytes written or updated at destinations since clear, bits 31:0",
     [this] { return static_cast<std::uint32_t>(stats_.bytes_written + stats_.bytes_updated); });
  ro(kBytesHigh, "BYTES_HI", "bytes written or updated at destinations since clear, bits 63:32",
     [this] {
       return static_cast<std::uint32_t>((stats_.bytes_written + stats_.bytes_updated) >> 32);
     });
  ro(kErrors, "ERRORS", "pieces answered with an error response since clear",
     [this] { return saturate(stats_.errors); });
  ro(kRejected, "REJECTED", "doorbells (invalid or busy descriptor) and triggers refused",
     [this] { return saturate(stats_.rejected); });
  ro(kInFlight, "IN_FLIGHT", "transfers run at once (dma.in_flight)",
     [this] { return saturate(static_cast<std::uint64_t>(config_.in_flight)); });
  ro(kTriggered, "TRIGGERED", "requests received from the tracker since clear",
     [this] { return saturate(stats_.triggered); });
  add_register(
      kClear, "CLEAR", "write 1: zero the counters and statistics; reads 0", [] { return 0u; },
      [this](std::uint32_t v) { clear(v); });

  for (int d = 0; d < kDescriptors; ++d) {
    Descriptor& x = descriptors_[to_size(d)];
    const std::string reg = "DESC" + std::to_string(d) + "_";
    const std::string what = "descriptor " + std::to_string(d) + ": ";
    auto rw64 = [&](std::uint64_t offset, const std::string& field, const std::string& doc,
                    std::uint64_t& f) {
      add_rw64(descriptor_register(d, offset), reg + field, what + doc, f);
    };
    auto rw = [&](std::uint64_t offset, const std::string& field, const std::string& doc,
                  std::uint32_t& f) {
      add_rw(descriptor_register(d, offset), reg + field, what + doc, f);
    };
    // The register map, one line a register: alike in shape by nature, each names its own field.
    rw64(kSrcLow, "SRC", "source (global address)", x.src);
    rw64(kDstLow, "DST", "destination (global address)", x.dst);
    rw64(kSizeLow, "SIZE", "bytes to move", x.size);
    rw(kOp, "OP", "1 store, 2 update (add)", x.op);
    rw(kElement, "ELEMENT", "element type: 0 fp32, 1 fp16, 2 bf16", x.element);
    rw(kTag, "TAG", "tag the writes/updates carry (0xffffffff untracked, the reset value)", x.tag);
    add_register(
        descriptor_register(d, kDoorbell), reg + "DOORBELL",
        what + "write 1: queue a copy of the descriptor; reads 0", [] { return 0u; },
        [this, d](std::uint32_t v) { doorbell(d, v); });
    ro(descriptor_register(d, kState), reg + "STATE",
       what + "0 idle, 1 queued, 2 running, 3 done, 4 failed", [&x] { return x.state; });
  }

  for (std::int64_t i = 0; i < config.in_flight; ++i) {
    sc_core::sc_spawn([this] { worker(); }, ("worker" + std::to_string(i)).c_str());
  }
}

DmaEngine::~DmaEngine() = default;

void DmaEngine::clear(std::uint32_t value) {
  if (value != 1) return;
  stats_ = DmaStats{};
}

void DmaEngine::doorbell(int d, std::uint32_t value) {
  if (value != 1) return;
  Descriptor& x = descriptors_[to_size(d)];
  const std::string which = prefix_ + "descriptor " + std::to_string(d);
  if (x.state == kStateQueued || x.state == kStateRunning) {
    ++stats_.rejected;
    errors_.add(which + " rung while queued or running; refused");
    return;
  }
  const bool valid =
      x.size > 0 && (x.op == kOpStore || x.op == kOpUpdate) && is_element_code(x.element) &&
      (x.op != kOpUpdate || x.size % element_bytes(element_from_code(x.element)) == 0) &&
      x.src + x.size >= x.src && x.dst + x.size >= x.dst;
  if (!valid) {
    x.state = kStateFailed;
    ++stats_.rejected;
    errors_.add(which + " is invalid (SIZE " + std::to_string(x.size) + ", OP " +
                std::to_string(x.op) + ", ELEMENT " + std::to_string(x.element) + "); refused");
    return;
  }
  x.state = kStateQueued;
  ++stats_.doorbells;
  enqueue(DmaRequest{x.src, x.dst, x.size, x.op == kOpStore ? Op::Write : Op::Update,
                     element_from_code(x.element), x.tag, static_cast<std::uint32_t>(d)},
          true);
}

void DmaEngine::trigger(const DmaRequest& request) {
  if (request.bytes == 0 || request.op == Op::Read ||
      request.source + request.bytes < request.source ||
      request.destination + request.bytes < request.destination) {
    ++stats_.rejected;
    errors_.add(prefix_ + "trigger from region " + std::to_string(request.descriptor) + " (tag " +
                std::to_string(request.tag) + ", " + std::to_string(request.bytes) + " bytes, " +
                to_string(request.op) + ") is invalid; refused");
    return;
  }
  ++stats_.triggered;
  enqueue(request, false);
}

void DmaEngine::enqueue(const DmaRequest& request, bool doorbell) {
  queue_.push_back(Job{request, doorbell, sc_core::sc_time_stamp()});
  queue_event_.notify(sc_core::SC_ZERO_TIME);
}

void DmaEngine::worker() {
  Slot slot;
  for (;;) {
    while (queue_.empty()) wait(queue_event_);
    const Job job = queue_.front();
    queue_.pop_front();
    ++running_;
    stats_.max_running = std::max<std::uint64_t>(stats_.max_running, running_);
    run(job, slot);
    --running_;
    if (pending() == 0) idle_event_.notify(sc_core::SC_ZERO_TIME);
  }
}

void DmaEngine::run(const Job& job, Slot& slot) {
  const DmaRequest& request = job.request;
  const std::size_t record = transfers_.size();
  const sc_core::sc_time begin = sc_core::sc_time_stamp();
  transfers_.push_back(DmaTransfer{request.descriptor, job.doorbell, request.tag, request.op,
                                   request.source, request.destination, request.bytes, job.queued,
                                   begin, begin, false});
  Descriptor* descriptor = job.doorbell ? &descriptors_[to_size(request.descriptor)] : nullptr;
  if (descriptor) descriptor->state = kStateRunning;
  slot.error = false;
  for (std::uint64_t offset = 0; offset < request.bytes;) {
    const auto bytes = static_cast<std::uint32_t>(std::min(piece_bytes_, request.bytes - offset));
    // Room in the read-ahead buffer (a piece larger than the whole buffer goes alone).
    const auto room = [&] {
      return buffer_bytes_ == 0 ||
             buffer_bytes_ + bytes <= static_cast<std::uint64_t>(config_.outstanding_bytes);
    };
    if (!room()) {
      const sc_core::sc_time start = sc_core::sc_time_stamp();
      while (!room()) wait(buffer_freed_);
      stats_.buffer_wait += sc_core::sc_time_stamp() - start;
    }
    buffer_bytes_ += bytes;
    stats_.max_buffer_bytes = std::max(stats_.max_buffer_bytes, buffer_bytes_);
    Lane& lane = lanes_.acquire();
    lane.source = request.source + offset;
    lane.destination = request.destination + offset;
    lane.bytes = bytes;
    lane.op = request.op;
    lane.element = request.element;
    lane.tag = request.tag;
    lane.descriptor = request.descriptor;
    lane.slot = &slot;
    ++slot.outstanding;
    ++pieces_in_flight_;
    stats_.max_pieces_in_flight = std::max(stats_.max_pieces_in_flight, pieces_in_flight_);
    lanes_.start(lane);
    offset += bytes;
  }
  while (slot.outstanding > 0) wait(slot.done);
  DmaTransfer& done = transfers_[record];
  done.end = sc_core::sc_time_stamp();
  done.error = slot.error;
  ++stats_.transfers;
  if (descriptor) descriptor->state = slot.error ? kStateFailed : kStateDone;
}

void DmaEngine::serve(Lane& lane) {
  move(lane);
  buffer_bytes_ -= lane.bytes;
  buffer_freed_.notify();
  Slot& slot = *lane.slot;
  lanes_.release(lane);
  --pieces_in_flight_;
  --slot.outstanding;
  slot.done.notify();
}

void DmaEngine::move(Lane& lane) {
  T3Extension extension;
  extension.op = Op::Read;
  extension.element = lane.element;
  extension.traffic_class = TrafficClass::Communication;
  extension.origin = Origin{static_cast<std::uint16_t>(gpu_), 0};
  extension.unit_kind = UnitKind::Dma;
  extension.tag = kNoTag;
  extension.cache_hint = CacheHint::Uncached;
  extension.urgent = urgent();
  if (extension.urgent) ++stats_.urgent_reads;
  tlm::tlm_generic_payload* payload = make_payload(pool_, lane.source, lane.bytes, extension);
  sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
  const sc_core::sc_time read_start = sc_core::sc_time_stamp();
  out->b_transport(*payload, delay);
  if (delay > sc_core::SC_ZERO_TIME) wait(delay);
  const sc_core::sc_time write_start = sc_core::sc_time_stamp();
  if (!payload->is_response_ok()) {
    ++stats_.errors;
    lane.slot->error = true;
    errors_.add(prefix_ + "read of " + std::to_string(lane.bytes) + " bytes at " +
                hex(lane.source) + " failed: " + payload->get_response_string() + " (tag " +
                std::to_string(lane.tag) + ")");
    payload->release();
    return;
  }
  stats_.bytes_read += lane.bytes;
  // The data just read is the operand of the write or update.
  extension.op = lane.op;
  extension.tag = lane.tag;
  extension.urgent = urgent();
  if (extension.urgent) ++stats_.urgent_writes;
  T3Extension::set(*payload, extension);
  payload->set_address(lane.destination);
  payload->set_data_length(lane.bytes);
  payload->set_streaming_width(lane.bytes);
  payload->set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  delay = sc_core::SC_ZERO_TIME;
  out->b_transport(*payload, delay);
  if (delay > sc_core::SC_ZERO_TIME) wait(delay);
  if (!payload->is_response_ok()) {
    ++stats_.errors;
    lane.slot->error = true;
    errors_.add(prefix_ + to_string(lane.op) + " of " + std::to_string(lane.bytes) + " bytes at " +
                hex(lane.destination) + " failed: " + payload->get_response_string() + " (tag " +
                std::to_string(lane.tag) + ")");
  } else {
    ++stats_.pieces;
    (lane.op == Op::Update ? stats_.bytes_updated : stats_.bytes_written) += lane.bytes;
    stats_.read_latency += write_start - read_start;
    stats_.write_latency += sc_core::sc_time_stamp() - write_start;
  }
  payload->release();
}

nlohmann::json DmaEngine::report() const {
  nlohmann::json j;
  j["transfers"] = stats_.transfers;
  j["triggered"] = stats_.triggered;
  j["doorbells"] = stats_.doorbells;
  j["rejected"] = stats_.rejected;
  j["errors"] = stats_.errors;
  j["pieces"] = stats_.pieces;
  j["bytes"] = {{"read", stats_.bytes_read},
                {"write", stats_.bytes_written},
                {"update", stats_.bytes_updated}};
  j["max_buffer_bytes"] = stats_.max_buffer_bytes;
  j["urgent"] = {{"reads", stats_.urgent_reads}, {"writes", stats_.urgent_writes}};
  j["buffer_wait_ns"] = stats_.buffer_wait.to_seconds() * 1e9;
  const double pieces = static_cast<double>(std::max<std::uint64_t>(stats_.pieces, 1));
  j["mean_read_ns"] = stats_.read_latency.to_seconds() * 1e9 / pieces;
  j["mean_write_ns"] = stats_.write_latency.to_seconds() * 1e9 / pieces;
  j["max_running"] = stats_.max_running;
  j["max_pieces_in_flight"] = stats_.max_pieces_in_flight;
  j["lanes"] = lanes_.size();
  j["pending"] = pending();
  return j;
}

}  // namespace t3
