// The trigger/DMA engine of one GPU: moves data from a source to a destination anywhere in the
// global address space, as stores or near-memory updates. Requests come from the tracker
// (DmaTriggerIf::trigger, through `trigger_export`) or from MMIO descriptors rung by the host.
//
// Model:
// - Requests wait in one FIFO. Up to dma.in_flight of them run at once (one SC_THREAD each).
// - A transfer is cut into pieces of at most dma.chunk_bytes (rounded down to 4 bytes so updates
//   stay whole elements). Each piece reads the source (traffic class Communication, Uncached, no
//   tag) and then writes or updates the destination with the data it read (Communication,
//   Uncached, the request's tag and element type), through `out` (bind it to the GPU's
//   router, which reaches every GPU's HBM).
// - Read-ahead, no pacing rate: the engine holds the data it has read in one buffer of
//   dma.outstanding_bytes. A piece takes its bytes of the buffer when its read is issued and gives
//   them back when its write or update is acknowledged at the destination, so reads run as far
//   ahead as the buffer allows (they reach memory in bursts, as in hardware) and are otherwise held
//   back only by the path: memory, the link's serialiser and its credits.
// - Urgency: a read, write or update issued while the buffer holds more than dma.urgent_fill of
//   its bytes (the issuing piece's included) carries T3Extension::urgent. The engine then runs
//   near the limit of what it may have in flight, paced by the path rather than by its producer,
//   which a communication-aware memory controller needs to know before it holds the engine's
//   traffic back.
// - Functional mode: real data moves (the read's payload buffer is the write's operand). Timing
//   mode moves the same (pooled) buffers, and memory ignores them.
// - A piece answered with an error response is counted (ERRORS), described in errors() and marks
//   its transfer failed; the rest of the transfer still runs.
//
// Register map (offsets in t3::dma below; docs/registers.md): global STATUS, QUEUED, RUNNING,
// COMPLETED, BYTES_LO/HI, ERRORS, REJECTED, IN_FLIGHT, TRIGGERED, CLEAR, and kDescriptors doorbell
// descriptors {SRC, DST, SIZE, OP, ELEMENT, TAG, DOORBELL, STATE}. Writing 1 to a descriptor's
// DOORBELL queues a copy of it (SIZE > 0, OP 1 or 2, ELEMENT <= 2, an update a whole number of
// elements, no wrap past 2^64; otherwise STATE = failed). A doorbell while the descriptor is queued
// or running is refused (REJECTED counts it; STATE unchanged). A host waits for the engine to drain
// by polling STATUS until 0, or on idle_event().
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include <tlm_utils/simple_initiator_socket.h>
#include <nlohmann/json.hpp>
#include <systemc>
#include <tlm>

#include "config/system_config.h"
#include "models/common/lane_pool.h"
#include "protocol/dma_registers.h"
#include "tlm_interconnect/error_log.h"
#include "tlm_interconnect/memory_events.h"
#include "tlm_interconnect/payload.h"
#include "tlm_interconnect/register_block.h"

namespace t3 {

// One transfer, for tests and traces.
struct DmaTransfer {
  std::uint32_t descriptor;  // doorbell descriptor index, or the tracker region that fired
  bool doorbell;             // true: MMIO descriptor, false: tracker trigger
  std::uint32_t tag;
  Op op;
  std::uint64_t source;
  std::uint64_t destination;
  std::uint64_t bytes;
  sc_core::sc_time queued;
  sc_core::sc_time start;
  sc_core::sc_time end;  // last piece acknowledged
  bool error;
};

struct DmaStats {
  std::uint64_t transfers = 0;  // completed
  std::uint64_t triggered = 0;  // from the tracker
  std::uint64_t doorbells = 0;  // from MMIO descriptors
  std::uint64_t rejected = 0;
  std::uint64_t errors = 0;  // pieces answered with an error
  std::uint64_t pieces = 0;  // pieces moved
  std::uint64_t bytes_read = 0;
  std::uint64_t bytes_written = 0;  // stores
  std::uint64_t bytes_updated = 0;  // updates
  std::uint64_t max_running = 0;
  std::uint64_t max_pieces_in_flight = 0;
  std::uint64_t max_buffer_bytes = 0;  // most bytes held in the read-ahead buffer at once
  std::uint64_t urgent_reads = 0;      // of the pieces' reads, those issued urgent
  std::uint64_t urgent_writes = 0;     // of their writes and updates, those issued urgent
  sc_core::sc_time buffer_wait;        // time transfers waited for room in the buffer
  // Summed over the pieces moved: from a piece's read request to its data (read), and from its
  // write or update request to the acknowledgement (write). With the link rate they give the
  // bandwidth-delay product the buffer must cover (docs/calibration.md, dma.outstanding_bytes).
  sc_core::sc_time read_latency;
  sc_core::sc_time write_latency;
};

class DmaEngine : public RegisterBlock, public DmaTriggerIf {
 public:
  // Memory side: bind to the GPU's router (router.in). The register file's target socket is
  // RegisterBlock::socket, bound to the MMIO bus like every register block's.
  tlm_utils::simple_initiator_socket<DmaEngine> out;
  sc_core::sc_export<DmaTriggerIf> trigger_export;  // bind Tracker::dma here

  DmaEngine(sc_core::sc_module_name name, const DmaConfig& config, sc_core::sc_time mmio_latency,
            int gpu);
  ~DmaEngine() override;

  // DmaTriggerIf: queues the request (FIFO).
  void trigger(const DmaRequest& request) override;

  const DmaStats& stats() const { return stats_; }
  std::size_t queued() const { return queue_.size(); }
  std::size_t running() const { return running_; }
  std::size_t pending() const { return queue_.size() + running_; }  // queued + running
  // Notified (delta) whenever the engine becomes idle: nothing queued, nothing running.
  const sc_core::sc_event& idle_event() const { return idle_event_; }
  const std::vector<DmaTransfer>& transfers() const { return transfers_; }
  // Error messages, the first kMaxErrorMessages of them.
  const std::vector<std::string>& errors() const { return errors_.messages(); }
  int gpu() const { return gpu_; }
  nlohmann::json report() const;

  static constexpr std::size_t kMaxErrorMessages = 64;

 private:
  struct Descriptor {
    std::uint64_t src = 0, dst = 0, size = 0;
    std::uint32_t op = 0, element = 0, tag = kNoTag, state = dma::kStateIdle;
  };
  struct Job {
    DmaRequest request;
    bool doorbell;
    sc_core::sc_time queued;
  };
  struct Slot;  // one running transfer's outstanding pieces
  struct Lane;  // a thread that moves one piece at a time

  void doorbell(int descriptor, std::uint32_t value);
  void clear(std::uint32_t value);
  void enqueue(const DmaRequest& request, bool doorbell);
  void worker();  // SC_THREAD x in_flight: runs transfers
  void run(const Job& job, Slot& slot);
  void serve(Lane& lane);  // one piece, in its lane's thread
  void move(Lane& lane);   // reads then writes/updates one piece
  // A request issued now is urgent (T3Extension::urgent): the buffer, the issuing piece's bytes
  // included, holds more than dma.urgent_fill of its capacity.
  bool urgent() const { return buffer_bytes_ > urgent_above_; }

  DmaConfig config_;
  int gpu_;
  std::string prefix_;  // "gpuN dma: "
  std::uint64_t piece_bytes_;
  std::uint64_t buffer_bytes_ = 0;  // of the read-ahead buffer in use
  std::uint64_t urgent_above_ = 0;  // buffer bytes held above which requests are urgent
  sc_core::sc_event buffer_freed_;
  std::vector<Descriptor> descriptors_;
  std::deque<Job> queue_;
  std::size_t running_ = 0;
  std::uint64_t pieces_in_flight_ = 0;
  sc_core::sc_event queue_event_;
  sc_core::sc_event idle_event_;
  LanePool<Lane> lanes_;
  PayloadPool pool_;
  DmaStats stats_;
  std::vector<DmaTransfer> transfers_;
  ErrorLog errors_;
};

}  // namespace t3
