#include "models/sm/dispatcher.h"

#include <algorithm>
#include <string>

#include "models/sm/sm.h"
#include "protocol/collective_fields.h"
#include "protocol/to_size.h"

namespace t3 {

using namespace dispatcher;

namespace {

std::uint32_t collective_reset(std::uint64_t offset) {
  if (offset == kCollSliceBytes) return kDefaultSliceBytes;
  if (offset == kCollFifoDepth) return kDefaultFifoDepth;
  if (offset == kCollPollNs) return kDefaultPollNs;
  if (offset == kCollRings || offset == kCollStride) return 1;
  const bool ring_table = offset >= kCollRing && offset < ring_register(kMaxRings, 0);
  if (ring_table && (offset - kCollRing) % kCollRingStride == kRingStride) return 1;
  return 0;
}

}  // namespace

int gemm_residency(const SmConfig& sm, const GemmKernel& gemm) {
  const auto occupancy = static_cast<int>(sm.occupancy);
  if (!sm.gemm_smem_residency) return occupancy;
  // The A (tile_m x tile_k) and B (tile_k x tile_n) sub-tiles of every stage.
  const std::uint64_t stage_bytes = static_cast<std::uint64_t>(gemm.tile_m + gemm.tile_n) *
                                    static_cast<std::uint64_t>(gemm.tile_k) *
                                    element_bytes(gemm.element);
  const std::uint64_t footprint = static_cast<std::uint64_t>(sm.gemm_stages) * stage_bytes;
  const std::uint64_t fit = static_cast<std::uint64_t>(sm.max_inflight_bytes) / footprint;
  return static_cast<int>(std::clamp<std::uint64_t>(fit, 1, static_cast<std::uint64_t>(occupancy)));
}

int gemm_slots(const SmConfig& sm, const GemmKernel& gemm) {
  const int resident = gemm_residency(sm, gemm);
  return (static_cast<int>(sm.occupancy) + resident - 1) / resident;
}

Dispatcher::Dispatcher(sc_core::sc_module_name name, const SmConfig& config, const AddressMap& map,
                       int gpu, sc_core::sc_time mmio_latency)
    : RegisterBlock(name, mmio_latency),
      irq("irq", kQueues),
      work("work"),
      done("done"),
      config_(config),
      map_(map),
      gpu_(gpu) {
  if (config.count < 1) throw ConfigError("sm.count: must be at least 1");
  if (config.occupancy < 1) throw ConfigError("sm.occupancy: must be at least 1");
  if (config.launch_latency_ns < 0) throw ConfigError("sm.launch_latency_ns: must be >= 0");
  if (config.dispatch_ns < 0) throw ConfigError("sm.dispatch_ns: must be >= 0");

  auto ro = [this](std::uint64_t offset, const char* reg, const char* doc, const std::uint32_t& f) {
    add_ro(offset, reg, doc, f);
  };
  auto rw = [this](std::uint64_t offset, const std::string& reg, const std::string& doc,
                   std::uint32_t& f) { add_rw(offset, reg, doc, f); };
  auto rw64 = [this](std::uint64_t offset, const std::string& reg, const std::string& doc,
                     std::uint64_t& f) { add_rw64(offset, reg, doc, f); };
  Descriptor& d = descriptor_;
  // A COLL_* register: a word of d.collective, at its reset value (the tunables' defaults, one
  // ring of stride 1, 0 otherwise).
  const auto coll = [this, &d](std::uint64_t offset, const std::string& reg,
                               const std::string& doc) {
    add_rw(offset, reg, doc, d.collective[offset] = collective_reset(offset));
  };
  const auto coll64 = [&coll](std::uint64_t offset, const std::string& reg,
                              const std::string& doc) {
    coll(offset, reg + "_LO", doc + ", bits 31:0");
    coll(offset + 4, reg + "_HI", doc + ", bits 63:32");
  };
  // The register map, one line a register: alike in shape by nature, each names its own field.
  Queue& first = queues_[0];
  ro(kStatus, "STATUS", "0 idle, 1 running, 2 done, 3 failed", first.status);
  ro(kError, "ERROR", "LaunchError of the last doorbell (0 none)", first.error);
  add_register(
      kDoorbell, "DOORBELL", "write 1: validate the descriptor and launch it (reads 0)",
      [] { return 0u; }, [this](std::uint32_t v) { doorbell(0, v); });
  add_register(
      kIrqAck, "IRQ_ACK", "write 1: drop the interrupt line (reads 0)", [] { return 0u; },
      [this](std::uint32_t v) { irq_ack(0, v); });
  rw(kKernel, "KERNEL", "KernelKind: 1 GEMM, 2 collective, 3 stream", d.kernel);
  rw(kM, "M", "rows of A and C", d.m);
  rw(kN, "N", "columns of B and C", d.n);
  rw(kK, "K", "columns of A, rows of B", d.k);
  rw(kTileM, "TILE_M", "tile rows (A, C)", d.tile_m);
  rw(kTileN, "TILE_N", "tile columns (B, C)", d.tile_n);
  rw(kTileK, "TILE_K", "K step (A tile columns, B tile rows)", d.tile_k);
  rw(kElement, "ELEMENT", "element type of A and B: 0 fp32, 1 fp16, 2 bf16", d.element);
  rw(kOutElement, "OUT_ELEMENT", "element type of the output: 0 fp32, 1 fp16, 2 bf16",
     d.out_element);
  rw(kWgOrder, "WG_ORDER", "0 row-major, 1 column-major, 2 chunk-staggered", d.order);
  rw(kChunks, "CHUNKS", "output chunks, 1..64 (resets to 1)", d.chunks);
  rw(kFirstChunk, "FIRST_CHUNK", "chunk dispatched first (chunk-staggered order)", d.first_chunk);
  rw64(kALow, "A", "base address of A (M x K, tiles TILE_M x TILE_K)", d.a);
  rw64(kBLow, "B", "base address of B (K x N, tiles TILE_K x TILE_N)", d.b);
  rw(kSmFirst, "SM_FIRST", "first SM the launch may use (resets to 0)", d.sm_first);
  rw(kSmCount, "SM_COUNT", "SMs the launch may use from SM_FIRST (0: to the last SM; resets to 0)",
     d.sm_count);
  ro(kCompletedWgs, "COMPLETED_WGS", "workgroups finished, this launch", first.completed_wgs);
  ro(kLaunches, "LAUNCHES", "kernels run to completion since reset", launches_completed_);
  ro(kDispatchedWgs, "DISPATCHED_WGS", "workgroups dispatched, this launch", first.dispatched_wgs);
  add_register(kFaultLow, "FAULT_LO", "first faulting address of the last launch, bits 31:0",
               [&first] { return static_cast<std::uint32_t>(first.fault_address); });
  add_register(kFaultHigh, "FAULT_HI", "first faulting address of the last launch, bits 63:32",
               [&first] { return static_cast<std::uint32_t>(first.fault_address >> 32); });
  for (int q = 0; q < kQueues; ++q) add_queue_registers(q);
  for (int c = 0; c < kMaxChunks; ++c) {
    const std::uint64_t entry = kOutMap + static_cast<std::uint64_t>(c) * kOutMapStride;
    const std::string reg = "OUT" + std::to_string(c);
    const std::string chunk = "output chunk " + std::to_string(c);
    auto& out = d.out[to_size(c)];
    rw64(entry + kOutBaseLow, reg + "_BASE", chunk + ": buffer base address", out.base);
    rw(entry + kOutOp, reg + "_OP", chunk + ": 0 store, 1 update (add)", out.op);
    rw(entry + kOutFlags, reg + "_FLAGS", chunk + ": bit 0 uncached, bit 1 tagged", out.flags);
  }
  coll(kCollOp, "COLL_OP",
       "collective: 0 reduce-scatter, 1 all-gather, 2 direct reduce-scatter, 3 direct all-gather, "
       "4 add (BUFFER += NEXT_BUFFER), 5 NVLS reduce-scatter, 6 NVLS all-gather");
  coll(kCollRanks, "COLL_RANKS", "collective: ring size n (2..256)");
  coll(kCollRank, "COLL_RANK", "collective: this GPU's ring position (0..n-1)");
  coll(kCollChannels, "COLL_CHANNELS", "collective: workgroups (channels), 1..64");
  coll64(kCollBufferLow, "COLL_BUFFER", "collective: local buffer base (n chunks)");
  coll64(kCollNextBufferLow, "COLL_NEXT_BUFFER", "collective: next ring GPU's buffer base");
  coll64(kCollFlagsLow, "COLL_FLAGS", "collective: local flag area base (16 bytes per channel)");
  coll64(kCollNextFlagsLow, "COLL_NEXT_FLAGS", "collective: next ring GPU's flag area base");
  coll64(kCollPrevFlagsLow, "COLL_PREV_FLAGS", "collective: previous ring GPU's flag area base");
  coll64(kCollBytesLow, "COLL_BYTES",
         "collective: buffer bytes (n chunks, any whole number of elements)");
  coll(kCollElement, "COLL_ELEMENT", "collective: element type: 0 fp32, 1 fp16, 2 bf16");
  coll(kCollSequence, "COLL_SEQUENCE", "collective: launch sequence number (>= 1, growing)");
  coll(kCollSliceBytes, "COLL_SLICE_BYTES",
       "collective: bytes per flag and FIFO entry, per channel (multiple of 4; resets to 128 KiB)");
  coll(kCollFifoDepth, "COLL_FIFO_DEPTH",
       "collective: receive FIFO entries per channel (resets to 8)");
  coll(kCollPollNs, "COLL_POLL_NS", "collective: ns between flag polls (>= 1; resets to 100)");
  coll64(kCollGateLow, "COLL_GATE",
         "collective: gate word reduce-scatter steps wait on (0: none; resets to 0)");
  coll64(kCollPeerStrideLow, "COLL_PEER_STRIDE",
         "direct collective: rank p + 1's buffer minus rank p's (two's complement)");
  coll64(kCollPeerFlagStrideLow, "COLL_PEER_FLAG_STRIDE",
         "direct collective: rank p + 1's flag area minus rank p's (two's complement)");
  coll(kCollMulticast, "COLL_MULTICAST",
       "NVLS collective: the switch's multicast group of the ranks (from 1)");
  coll(kCollRings, "COLL_RINGS",
       "ring collective: rings the channels are spread over, channel c on ring c mod RINGS "
       "(1..8, at most COLL_CHANNELS; resets to 1)");
  coll(kCollStride, "COLL_STRIDE",
       "ring collective: ring 0's stride, data flows rank r -> r + stride (coprime with "
       "COLL_RANKS; resets to 1)");
  for (int i = 1; i < static_cast<int>(kMaxRings); ++i) {
    const std::string reg = "COLL_RING" + std::to_string(i) + "_";
    const std::string ring = "ring collective: ring " + std::to_string(i) + "'s ";
    coll(ring_register(i, kRingStride), reg + "STRIDE",
         ring + "stride (coprime with COLL_RANKS; resets to 1)");
    coll64(ring_register(i, kRingNextBufferLow), reg + "NEXT_BUFFER",
           ring + "next GPU's (rank r + stride) buffer base");
    coll64(ring_register(i, kRingNextFlagsLow), reg + "NEXT_FLAGS",
           ring + "next GPU's flag area base");
    coll64(ring_register(i, kRingPrevFlagsLow), reg + "PREV_FLAGS",
           ring + "previous GPU's (rank r - stride) flag area base");
  }
  // The register map, one line a register: alike in shape by nature, each names its own field.
  rw64(kStreamSrcLow, "STREAM_SRC", "stream: input base address", d.src);
  rw64(kStreamReadBytesLow, "STREAM_READ_BYTES", "stream: input bytes", d.read_bytes);
  rw64(kStreamDstLow, "STREAM_DST", "stream: output base address", d.dst);
  rw64(kStreamWriteBytesLow, "STREAM_WRITE_BYTES", "stream: output bytes", d.write_bytes);
  rw(kStreamWorkgroups, "STREAM_WORKGROUPS", "stream: workgroups, 1..2^20", d.stream_workgroups);
  rw(kStreamOps, "STREAM_OPS", "stream: vector-ALU operations per element read (resets to 1)",
     d.stream_ops);
  rw64(kStreamFlopsLow, "STREAM_FLOPS", "stream: matrix FLOPs of the kernel (resets to 0)",
       d.stream_flops);
  rw(kStreamOutFlags, "STREAM_OUT_FLAGS", "stream: output flags, bit 0 uncached",
     d.stream_out_flags);
  rw(kStreamStepBytes, "STREAM_STEP_BYTES",
     "stream: input bytes a workgroup reads per step (0: the SM slot's share; each doorbell "
     "on an idle queue resets it to 0 once read)",
     d.stream_step_bytes);
  for (int w = 0; w < kMailboxWords; ++w) {
    MailboxWord& word = mailbox_[to_size(w)];
    add_register(
        kMailbox + 4 * static_cast<std::uint64_t>(w), "MAILBOX" + std::to_string(w),
        "mailbox word " + std::to_string(w) +
            " (collective flags; resets to 0; a store is seen from the next instant on)",
        [&word] { return word.read(); }, [&word](std::uint32_t v) { word.write(v); });
  }

  SC_HAS_PROCESS(Dispatcher);
  SC_THREAD(run);
  SC_METHOD(drive_irq);
  sensitive << irq_event_;
  dont_initialize();
}

void Dispatcher::add_queue_registers(int q) {
  Queue& queue = queues_[to_size(q)];
  const std::string reg = "Q" + std::to_string(q) + "_";
  const std::string of = "queue " + std::to_string(q) + ": ";
  const auto at = [q](std::uint64_t field) { return queue_register(q, field); };
  add_ro(at(kQueueStatus), reg + "STATUS", of + "0 idle, 1 running, 2 done, 3 failed",
         queue.status);
  add_ro(at(kQueueError), reg + "ERROR", of + "LaunchError of its last doorbell", queue.error);
  add_register(
      at(kQueueDoorbell), reg + "DOORBELL", of + "write 1: launch the descriptor here (reads 0)",
      [] { return 0u; }, [this, q](std::uint32_t v) { doorbell(q, v); });
  add_register(
      at(kQueueIrqAck), reg + "IRQ_ACK", of + "write 1: drop its interrupt line (reads 0)",
      [] { return 0u; }, [this, q](std::uint32_t v) { irq_ack(q, v); });
  add_ro(at(kQueueCompletedWgs), reg + "COMPLETED_WGS", of + "workgroups finished, this launch",
         queue.completed_wgs);
  add_ro(at(kQueueDispatchedWgs), reg + "DISPATCHED_WGS", of + "workgroups dispatched, this launch",
         queue.dispatched_wgs);
  add_rw(at(kQueuePriority), reg + "PRIORITY", of + "dispatch priority, higher first (resets to 0)",
         queue.priority);
  add_register(at(kQueueFaultLow), reg + "FAULT_LO", of + "first faulting address, bits 31:0",
               [&queue] { return static_cast<std::uint32_t>(queue.fault_address); });
  add_register(at(kQueueFaultHigh), reg + "FAULT_HI", of + "first faulting address, bits 63:32",
               [&queue] { return static_cast<std::uint32_t>(queue.fault_address >> 32); });
}

void Dispatcher::connect(Sm& sm) {
  const std::size_t index = work_fifos_.size();
  if (sm.index() != static_cast<int>(index)) {
    SC_REPORT_ERROR(name(),
                    (std::string(sm.name()) + " has SM index " + std::to_string(sm.index()) +
                     " but is connected as SM " + std::to_string(index))
                        .c_str());
  }
  const auto depth = static_cast<int>(config_.occupancy);
  const std::string prefix = std::string(basename()) + "_sm" + std::to_string(index);
  work_fifos_.push_back(
      std::make_unique<sc_core::sc_fifo<WorkItem>>((prefix + "_work").c_str(), depth));
  done_fifos_.push_back(
      std::make_unique<sc_core::sc_fifo<WgDone>>((prefix + "_done").c_str(), depth));
  work(*work_fifos_.back());
  sm.work(*work_fifos_.back());
  done(*done_fifos_.back());
  sm.done(*done_fifos_.back());
  free_slots_.push_back(depth);
}

void Dispatcher::end_of_elaboration() {
  if (work.size() != config_.count || done.size() != config_.count) {
    SC_REPORT_ERROR(name(), ("sm.count is " + std::to_string(config_.count) + " but " +
                             std::to_string(work.size()) + " SMs are connected")
                                .c_str());
  }
}

bool Dispatcher::mapped(std::uint64_t address, std::uint64_t elements,
                        std::uint64_t element_bytes) const {
  std::uint64_t bytes;
  if (__builtin_mul_overflow(elements, element_bytes, &bytes)) return false;
  const auto decoded = map_.decode(address, bytes);
  return decoded && decoded->window == Window::Hbm;
}

bool Dispatcher::mapped_bytes(std::uint64_t address, std::uint64_t bytes, bool allow_mmio,
                              bool* in_hbm) const {
  const auto decoded = map_.decode(address, bytes);
  if (!decoded) return false;
  if (in_hbm && decoded->window == Window::Hbm) *in_hbm = true;
  return decoded->window == Window::Hbm || (allow_mmio && decoded->window == Window::Mmio);
}

LaunchError Dispatcher::validate(Kernel& kernel) const {
  LaunchError error = kBadKernel;
  switch (descriptor_.kernel) {
    case kGemm:
      error = validate_gemm(kernel);
      break;
    case kCollective:
      error = validate_collective(kernel);
      break;
    case kStream:
      error = validate_stream(kernel);
      break;
    default:
      break;
  }
  return error == kNoError ? validate_sm_range(kernel) : error;
}

LaunchError Dispatcher::validate_sm_range(Kernel& kernel) const {
  const std::uint64_t sms = config_.count;
  const std::uint64_t first = descriptor_.sm_first;
  const std::uint64_t count =
      descriptor_.sm_count == 0 ? sms - std::min(first, sms) : descriptor_.sm_count;
  if (first >= sms || count == 0 || first + count > sms) return kBadSmRange;
  kernel.sm_first = static_cast<int>(first);
  kernel.sm_end = static_cast<int>(first + count);
  return kNoError;
}

LaunchError Dispatcher::validate_collective(Kernel& kernel) const {
  CollectiveDescriptor c;
  try {
    c = from_registers([this](std::uint64_t offset) { return descriptor_.collective.at(offset); });
  } catch (const CollectiveDecodeError& error) {
    return error.kind() == CollectiveDecodeError::Kind::UnknownCode ? kBadKernel : kBadCollective;
  }
  if (c.bytes == 0 || c.channels == 0) return kZeroSize;
  const std::uint64_t eb = element_bytes(c.element);
  // The host's planner checks the same field limits (protocol/collective_fields.h).
  const bool fields_valid = collective_field_problem(c.ranks, c.channels, c.bytes, c.element,
                                                     c.slice_bytes, c.fifo_depth, c.poll_ns)
                                .empty();
  if (!fields_valid || c.rank < 0 || c.rank >= c.ranks || c.sequence == 0) return kBadCollective;
  // Every send of a channel is counted in the 32 bits of a flag. The buffer must lie in one HBM
  // window (checked below), so its element count fits an int64 here.
  const auto elements =
      static_cast<std::int64_t>(std::min<std::uint64_t>(c.bytes / eb, 1ull << 62));
  const auto slice_elements = static_cast<std::int64_t>(c.slice_bytes / eb);
  for (int channel = 0; channel < c.channels; ++channel) {
    const std::int64_t slices =
        channel_slices(elements, c.ranks, c.channels, channel, slice_elements);
    if (static_cast<std::uint64_t>(slices) * static_cast<std::uint64_t>(c.ranks - 1) >=
        (1ull << 32)) {
      return kBadCollective;
    }
  }

  const CollectiveAlgorithm algorithm = c.algorithm();
  // A gate opens chunks in the order of one ring's steps, which differs from ring to ring.
  if (algorithm == CollectiveAlgorithm::Ring &&
      (!rings_valid(c) || (c.gate != 0 && c.ring_count() > 1))) {
    return kBadCollective;
  }
  bool hbm_flags = false;
  bool mapped = false;
  switch (algorithm) {
    case CollectiveAlgorithm::Ring:
      mapped = ring_areas_mapped(c, &hbm_flags);
      break;
    case CollectiveAlgorithm::Direct:
    case CollectiveAlgorithm::Nvls:
    case CollectiveAlgorithm::DirectNmc:
      mapped = direct_areas_mapped(c, &hbm_flags);
      break;
    case CollectiveAlgorithm::Add:
      mapped =
          mapped_bytes(c.buffer, c.bytes, false) && mapped_bytes(c.next_buffer, c.bytes, false);
      break;
  }
  if (!mapped) return kUnmappedBuffer;

  kernel.kind = kCollective;
  kernel.collective = CollectiveKernel(std::move(c), hbm_flags);
  return kNoError;
}

bool Dispatcher::rings_valid(const CollectiveDescriptor& c) {
  if (c.ring_count() > c.channels) return false;
  for (int ring = 0; ring < c.ring_count(); ++ring) {
    if (!hamiltonian_stride(c.ring(ring).stride, c.ranks)) return false;
  }
  return true;
}

bool Dispatcher::ring_areas_mapped(const CollectiveDescriptor& c, bool* hbm_flags) const {
  const bool reduce_scatter = c.op == CollectiveOp::ReduceScatter;
  const std::uint64_t fifo_bytes = receive_area_bytes(c.channels, c.fifo_depth, c.slice_bytes);
  const std::uint64_t flag_bytes = flag_area_bytes(c.channels);
  const auto flags_ok = [&](std::uint64_t flags) {
    return mapped_bytes(flags, flag_bytes, true, hbm_flags) && flags % 8 == 0;
  };
  // Every ring's neighbours (the rings' validity is checked before this).
  for (int index = 0; index < c.ring_count(); ++index) {
    const RingRoute ring = c.ring(index);
    if (!mapped_bytes(ring.next_buffer, c.bytes, false) ||
        (reduce_scatter &&
         !mapped_bytes(receive_area(ring.next_buffer, c.bytes), fifo_bytes, false)) ||
        !flags_ok(ring.next_flags) || !flags_ok(ring.prev_flags)) {
      return false;
    }
  }
  return mapped_bytes(c.buffer, c.bytes, false) &&
         (!reduce_scatter || mapped_bytes(receive_area(c.buffer, c.bytes), fifo_bytes, false)) &&
         flags_ok(c.flags) &&
         (c.gate == 0 || (mapped_bytes(c.gate, 8, true, hbm_flags) && c.gate % 8 == 0));
}

// Every rank's buffer and direct flag area, as the strides place them (protocol/ring.h, Direct).
bool Dispatcher::direct_areas_mapped(const CollectiveDescriptor& c, bool* hbm_flags) const {
  const std::uint64_t flag_bytes = direct_flag_area_bytes(c.channels, c.ranks);
  for (int p = 0; p < c.ranks; ++p) {
    const std::uint64_t flags = c.peer_flags(p);
    if (!mapped_bytes(c.peer_buffer(p), c.bytes, false) ||
        !mapped_bytes(flags, flag_bytes, true, hbm_flags) || flags % 8 != 0) {
      return false;
    }
  }
  return true;
}

LaunchError Dispatcher::validate_stream(Kernel& kernel) const {
  const Descriptor& d = descriptor_;
  if (!is_element_code(d.element) || d.stream_out_flags > kUncached) return kBadKernel;
  // A kernel that moves no bytes must compute: a compute-only kernel (STREAM_FLOPS only).
  const bool no_bytes = d.read_bytes == 0 && d.write_bytes == 0;
  if ((no_bytes && d.stream_flops == 0) || d.stream_workgroups == 0) return kZeroSize;
  const auto element = element_from_code(d.element);
  const std::uint64_t eb = element_bytes(element);
  if (d.stream_workgroups > kMaxStreamWorkgroups || d.read_bytes % eb != 0 ||
      d.write_bytes % eb != 0 || d.stream_step_bytes % eb != 0) {
    return kBadKernel;
  }
  if ((d.read_bytes > 0 && !mapped_bytes(d.src, d.read_bytes, false)) ||
      (d.write_bytes > 0 && !mapped_bytes(d.dst, d.write_bytes, false))) {
    return kUnmappedBuffer;
  }
  // Copies the descriptor's stream fields into the kernel, one line a field.
  kernel.kind = kStream;
  StreamKernel& k = kernel.stream;
  k.src = d.src;
  k.read_bytes = d.read_bytes;
  k.dst = d.dst;
  k.write_bytes = d.write_bytes;
  k.workgroups = d.stream_workgroups;
  k.ops_per_element = d.stream_ops;
  k.flops = d.stream_flops;
  k.element = element;
  k.out_hint = (d.stream_out_flags & kUncached) ? CacheHint::Uncached : CacheHint::Cached;
  k.step_bytes = d.stream_step_bytes;
  return kNoError;
}

LaunchError Dispatcher::validate_gemm(Kernel& kernel) const {
  const Descriptor& d = descriptor_;
  if (d.m == 0 || d.n == 0 || d.k == 0 || d.tile_m == 0 || d.tile_n == 0 || d.tile_k == 0) {
    return kZeroSize;
  }
  if (!is_element_code(d.element) || !is_element_code(d.out_element) || d.order > 2)
    return kBadKernel;
  const std::int64_t grid_rows = (std::int64_t{d.m} + d.tile_m - 1) / d.tile_m;
  if (d.chunks == 0 || d.chunks > static_cast<std::uint32_t>(kMaxChunks) || d.chunks > grid_rows ||
      d.first_chunk >= d.chunks) {
    return kBadChunks;
  }
  for (std::uint32_t c = 0; c < d.chunks; ++c) {
    if (d.out[c].op > 1) return kBadKernel;
  }
  const auto element = element_from_code(d.element);
  const auto out_element = element_from_code(d.out_element);
  const std::uint64_t eb = element_bytes(element);
  const std::uint64_t ob = element_bytes(out_element);
  if (!mapped(d.a, std::uint64_t{d.m} * d.k, eb) || !mapped(d.b, std::uint64_t{d.k} * d.n, eb)) {
    return kUnmappedBuffer;
  }
  const ChunkSplit split(grid_rows, d.chunks);
  for (std::uint32_t c = 0; c < d.chunks; ++c) {
    const std::int64_t first_row = split.first_tile_row(c) * d.tile_m;
    const std::int64_t end_row =
        std::min<std::int64_t>(d.m, split.first_tile_row(c + 1) * d.tile_m);
    if (!mapped(d.out[c].base, static_cast<std::uint64_t>(end_row - first_row) * d.n, ob)) {
      return kUnmappedBuffer;
    }
  }

  kernel.kind = kGemm;
  GemmKernel& g = kernel.gemm;
  g.m = d.m, g.n = d.n, g.k = d.k;
  g.tile_m = d.tile_m, g.tile_n = d.tile_n, g.tile_k = d.tile_k;
  g.element = element;
  g.out_element = out_element;
  g.a = d.a, g.b = d.b;
  g.split.emplace(split);
  g.order = static_cast<WgOrder>(d.order);
  g.first_chunk = d.first_chunk;
  g.outputs.clear();
  for (std::uint32_t c = 0; c < d.chunks; ++c) {
    OutputTarget out;
    out.base = d.out[c].base;
    out.op = d.out[c].op == 1 ? Op::Update : Op::Write;
    out.cache_hint = (d.out[c].flags & kUncached) ? CacheHint::Uncached : CacheHint::Cached;
    out.tagged = (d.out[c].flags & kTagged) != 0;
    g.outputs.push_back(out);
  }
  return kNoError;
}

void Dispatcher::doorbell(int q, std::uint32_t value) {
  if (value != 1) return;
  Queue& queue = queues_[to_size(q)];
  const sc_core::sc_time now = sc_core::sc_time_stamp();
  LaunchRecord record{next_launch_++, now, now, now, kIdle, kNoError, 0};
  record.queue = q;
  if (queue.busy) {
    // The running kernel goes on (and sets STATUS again when it ends); this doorbell failed.
    record.error = kBusy;
    record.status = kFailed;
    launches_.push_back(record);
    reject(q, kBusy);
    return;
  }
  auto kernel = std::make_shared<Kernel>();
  kernel->launch = record.launch;
  const LaunchError error = validate(*kernel);
  // STREAM_STEP_BYTES holds for one launch: a program that does not write it gets the default.
  descriptor_.stream_step_bytes = 0;
  if (error != kNoError) {
    record.error = error;
    record.status = kFailed;
    launches_.push_back(record);
    reject(q, error);
    return;
  }
  record.status = kRunning;
  record.workgroups = kernel->workgroups();
  record.kind = kernel->kind;
  launches_.push_back(record);
  queue.busy = true;
  queue.status = kRunning;
  queue.error = kNoError;
  queue.completed_wgs = 0;
  queue.dispatched_wgs = 0;
  queue.fault_address = 0;
  queue.pending = std::move(kernel);
  const sc_core::sc_time latency(config_.launch_latency_ns, sc_core::SC_NS);
  queue.ready = now + latency;
  launch_event_.notify(latency);
}

void Dispatcher::reject(int q, LaunchError error) {
  Queue& queue = queues_[to_size(q)];
  queue.status = kFailed;
  queue.error = error;
  raise_irq(q);
}

void Dispatcher::irq_ack(int q, std::uint32_t value) {
  if (value != 1) return;
  queues_[to_size(q)].irq_level = false;
  irq_event_.notify(sc_core::SC_ZERO_TIME);
}

void Dispatcher::raise_irq(int q) {
  queues_[to_size(q)].irq_level = true;
  irq_event_.notify(sc_core::SC_ZERO_TIME);
}

void Dispatcher::drive_irq() {
  for (int q = 0; q < kQueues; ++q) irq[q].write(queues_[to_size(q)].irq_level);
}

void Dispatcher::finish_record(std::uint64_t launch, std::int64_t tile) {
  const auto it = running_records_.find({launch, tile});
  if (it == running_records_.end()) return;
  dispatched_[it->second].end = sc_core::sc_time_stamp();
  running_records_.erase(it);
}

void Dispatcher::run() {
  const sc_core::sc_time spacing(config_.dispatch_ns, sc_core::SC_NS);
  sc_core::sc_event_or_list wake;
  for (int s = 0; s < work.size(); ++s) wake |= done[s]->data_written_event();
  wake |= launch_event_;
  for (;;) {
    start_ready_launches();
    take_completions();
    end_finished_launches();
    const auto [q, sm] = next_dispatch();
    if (sm < 0) {
      wait(wake);
      continue;
    }
    // Dispatches are sm.dispatch_ns apart; completions may come while the next one waits.
    const sc_core::sc_time at = last_dispatch_ + spacing;
    if (dispatched_any_ && at > sc_core::sc_time_stamp()) {
      wait(at - sc_core::sc_time_stamp());
      continue;
    }
    dispatch(q, sm);
  }
}

void Dispatcher::start_ready_launches() {
  const sc_core::sc_time now = sc_core::sc_time_stamp();
  for (int q = 0; q < kQueues; ++q) {
    Queue& queue = queues_[to_size(q)];
    if (!queue.pending) continue;
    if (queue.ready <= now) {
      begin_launch(q);
    } else {
      launch_event_.notify(queue.ready - now);  // the earliest pending start wins
    }
  }
}

void Dispatcher::begin_launch(int q) {
  Queue& queue = queues_[to_size(q)];
  queue.launch = std::make_unique<Launch>();
  Launch& launch = *queue.launch;
  launch.kernel = std::move(queue.pending);
  // launches_ may grow while this launch runs (busy doorbells): keep an index, not a pointer.
  launch.record = launches_.size();
  while (launch.record-- > 0 && launches_[launch.record].launch != launch.kernel->launch) {
  }
  sc_assert(launch.record < launches_.size());
  launches_[launch.record].start = sc_core::sc_time_stamp();
  const Kernel& kernel = *launch.kernel;
  launch.first_sm = kernel.sm_first;
  if (kernel.kind == kGemm) launch.slots_per_wg = gemm_slots(config_, kernel.gemm);
  if (kernel.kind == kCollective || kernel.kind == kStream) {
    for (std::int64_t w = 0; w < kernel.workgroups(); ++w) launch.order.push_back(w);
  } else {
    const GemmKernel& g = kernel.gemm;
    launch.order =
        wg_order(g.grid_rows(), g.grid_cols(), g.order, g.split->chunks(), g.first_chunk);
  }
}

void Dispatcher::take_completions() {
  for (int s = 0; s < work.size(); ++s) {
    while (done[s]->num_available() > 0) {
      const WgDone finished = done[s]->read();
      finish_record(finished.launch, finished.tile);
      for (Queue& queue : queues_) {
        if (!queue.launch || queue.launch->kernel->launch != finished.launch) continue;
        Launch& launch = *queue.launch;
        free_slots_[to_size(s)] += launch.slots_per_wg;
        ++launch.completed;
        ++queue.completed_wgs;
        if (finished.fault && !launch.fault) {
          launch.fault = true;
          queue.fault_address = finished.fault_address;
        }
      }
    }
  }
}

void Dispatcher::end_finished_launches() {
  for (int q = 0; q < kQueues; ++q) {
    const Queue& queue = queues_[to_size(q)];
    if (queue.launch && queue.launch->completed == queue.launch->total()) end_launch(q);
  }
}

std::pair<int, int> Dispatcher::next_dispatch() const {
  int pick = -1, pick_sm_index = -1;
  for (int q = 0; q < kQueues; ++q) {
    const Queue& queue = queues_[to_size(q)];
    if (!queue.launch || queue.launch->next == queue.launch->total()) continue;
    if (pick >= 0 && queue.priority <= queues_[to_size(pick)].priority) continue;
    const int sm = pick_sm(*queue.launch);
    if (sm >= 0) pick = q, pick_sm_index = sm;
  }
  return {pick, pick_sm_index};
}

int Dispatcher::pick_sm(const Launch& launch) const {
  // Breadth first: the SM of the launch's range with the most free slots takes the next
  // workgroup; ties go round-robin from the SM after the last one the launch picked.
  const int first = launch.kernel->sm_first;
  const int sms = launch.kernel->sm_end - first;
  int pick = -1;
  for (int i = 0; i < sms; ++i) {
    const int s = first + (launch.first_sm - first + i) % sms;
    const int free = free_slots_[to_size(s)];
    if (free >= launch.slots_per_wg && (pick < 0 || free > free_slots_[to_size(pick)])) pick = s;
  }
  return pick;
}

void Dispatcher::dispatch(int q, int sm) {
  Queue& queue = queues_[to_size(q)];
  Launch& launch = *queue.launch;
  const std::int64_t tile = launch.order[to_size(launch.next)];
  const bool written = work[sm]->nb_write(WorkItem{launch.kernel, tile});
  sc_assert(written);
  (void)written;
  last_dispatch_ = sc_core::sc_time_stamp();
  dispatched_any_ = true;
  running_records_[{launch.kernel->launch, tile}] = dispatched_.size();
  dispatched_.push_back({launch.kernel->launch, tile, sm, last_dispatch_, {}});
  free_slots_[to_size(sm)] -= launch.slots_per_wg;
  ++queue.dispatched_wgs;
  ++launch.next;
  const int first = launch.kernel->sm_first;
  launch.first_sm = first + (sm - first + 1) % (launch.kernel->sm_end - first);
}

void Dispatcher::end_launch(int q) {
  Queue& queue = queues_[to_size(q)];
  const Launch& launch = *queue.launch;
  queue.busy = false;
  queue.status = launch.fault ? kFailed : kDone;
  queue.error = launch.fault ? kMemoryFault : kNoError;
  ++launches_completed_;
  LaunchRecord& record = launches_[launch.record];
  record.end = sc_core::sc_time_stamp();
  record.status = queue.status;
  record.error = queue.error;
  queue.launch.reset();
  raise_irq(q);
}

}  // namespace t3
