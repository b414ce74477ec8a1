// The dispatcher (command processor) of one GPU: a register block holding a kernel descriptor
// (dispatcher_registers.h): a GEMM (one workgroup per output tile), a ring collective (one
// workgroup per channel, channel order) or a memory-streaming kernel (STREAM_WORKGROUPS
// workgroups, in order), and dispatcher::kQueues hardware queues. A doorbell of
// queue q validates the descriptor; a valid launch, after sm.launch_latency_ns, hands its
// workgroups in wg_order(...) to free SM slots (sm.count SMs x sm.occupancy; a GEMM workgroup
// takes gemm_slots of them), sm.dispatch_ns apart, wave after wave as slots free up. Launches on
// different queues run at once and share the slots: a free slot takes the next workgroup of the
// running launch of highest queue PRIORITY (ties: the lower queue) among the launches whose SM
// range (SM_FIRST, SM_COUNT) holds a free slot, so a launch confined to busy SMs does not hold back
// one whose SMs are free. Completion or rejection raises the queue's line `irq[q]` until its
// IRQ_ACK. A doorbell while the queue runs a kernel is rejected (STATUS failed, ERROR busy, irq);
// the running kernel goes on and sets STATUS again when it ends. The block also holds the mailbox
// (plain words that collectives use as flags; any GPU reaches them through MMIO).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <systemc>

#include "config/system_config.h"
#include "models/sm/work_item.h"
#include "protocol/collective_descriptor.h"
#include "protocol/dispatcher_registers.h"
#include "tlm_interconnect/address_map.h"
#include "tlm_interconnect/register_block.h"

namespace t3 {

class Sm;

// GEMM workgroups of `gemm` an SM holds at once: sm.occupancy, or, with sm.gemm_smem_residency,
// as many as the shared memory holds (sm.max_inflight_bytes over gemm_stages stages of a tile_m x
// tile_k A sub-tile and a tile_k x tile_n B sub-tile), at least 1 and at most sm.occupancy. A
// kernel's shared memory bounds its blocks per SM this way (CUDA occupancy); CUTLASS's SM90
// kernels size their stages to fill it (StageCountAutoCarveout).
int gemm_residency(const SmConfig& sm, const GemmKernel& gemm);
// Slots of an SM's sm.occupancy each GEMM workgroup takes, so that at most gemm_residency of
// them run on one SM: ceil(occupancy / residency).
int gemm_slots(const SmConfig& sm, const GemmKernel& gemm);

// One workgroup handed to an SM.
struct DispatchRecord {
  std::uint64_t launch;  // launch sequence number (0 for the first doorbell accepted)
  std::int64_t tile;     // tile id: tile_row * grid_cols + tile_col
  int sm;
  sc_core::sc_time time;
  // When the dispatcher took the workgroup's completion back (zero until then). The SM finished at
  // most sm.dispatch_ns earlier: completions wait while the dispatcher paces a dispatch.
  sc_core::sc_time end;
};

// One doorbell: accepted or rejected, and when it finished.
struct LaunchRecord {
  std::uint64_t launch;
  sc_core::sc_time doorbell;  // when the doorbell was written
  sc_core::sc_time start;     // first workgroup dispatched (accepted launches)
  sc_core::sc_time end;       // last workgroup finished, or the rejection
  std::uint32_t status;       // dispatcher::Status at the end
  std::uint32_t error;        // dispatcher::LaunchError
  std::int64_t workgroups;
  std::uint32_t kind = dispatcher::kNone;  // KernelKind of an accepted launch
  int queue = 0;
};

class Dispatcher : public RegisterBlock {
 public:
  // Per queue: high from its completion/failure until its IRQ_ACK.
  sc_core::sc_vector<sc_core::sc_out<bool>> irq;
  // One port per SM, in SM order (bind with connect(), or bind your own sc_fifo channels).
  sc_core::sc_port<sc_core::sc_fifo_out_if<WorkItem>, 0> work;
  sc_core::sc_port<sc_core::sc_fifo_in_if<WgDone>, 0> done;

  Dispatcher(sc_core::sc_module_name name, const SmConfig& config, const AddressMap& map, int gpu,
             sc_core::sc_time mmio_latency);

  // Creates the work and completion fifos of `sm` (owned by the dispatcher) and binds both
  // sides. Call once per SM, in SM index order, during elaboration.
  void connect(Sm& sm);

  const std::vector<DispatchRecord>& dispatched() const { return dispatched_; }
  const std::vector<LaunchRecord>& launches() const { return launches_; }
  std::uint32_t status(int queue = 0) const { return queues_.at(queue).status; }
  std::uint32_t error(int queue = 0) const { return queues_.at(queue).error; }

 private:
  struct Descriptor {
    std::uint32_t kernel = dispatcher::kNone;
    std::uint32_t m = 0, n = 0, k = 0, tile_m = 0, tile_n = 0, tile_k = 0;
    std::uint32_t element = 0, out_element = 0, order = 0, chunks = 1, first_chunk = 0;
    std::uint64_t a = 0, b = 0;
    struct Out {
      std::uint64_t base = 0;
      std::uint32_t op = 0, flags = 0;
    };
    std::vector<Out> out = std::vector<Out>(dispatcher::kMaxChunks);
    // Collective (KERNEL = kCollective): the COLL_* registers by offset, as written; a doorbell
    // reads them with from_registers (protocol/collective_descriptor.h).
    std::map<std::uint64_t, std::uint32_t> collective;
    // Streaming kernel (KERNEL = kStream).
    std::uint64_t src = 0, read_bytes = 0, dst = 0, write_bytes = 0, stream_flops = 0;
    std::uint32_t stream_workgroups = 0, stream_ops = dispatcher::kDefaultStreamOps;
    std::uint32_t stream_out_flags = 0, stream_step_bytes = 0;
    std::uint32_t sm_first = 0, sm_count = 0;  // the launch's SM range (0, 0: every SM)
  };

  void add_queue_registers(int queue);
  void doorbell(int queue, std::uint32_t value);
  void irq_ack(int queue, std::uint32_t value);
  // Checks the descriptor; on success fills `kernel`.
  dispatcher::LaunchError validate(Kernel& kernel) const;
  dispatcher::LaunchError validate_gemm(Kernel& kernel) const;
  dispatcher::LaunchError validate_collective(Kernel& kernel) const;
  // Whether a collective's buffers, FIFOs and flag areas lie in mapped memory; `hbm_flags` is set
  // if a flag area lies in HBM.
  bool ring_areas_mapped(const CollectiveDescriptor& c, bool* hbm_flags) const;
  bool direct_areas_mapped(const CollectiveDescriptor& c, bool* hbm_flags) const;
  // Every ring of a ring op within COLL_CHANNELS, and every stride coprime with COLL_RANKS.
  static bool rings_valid(const CollectiveDescriptor& c);
  dispatcher::LaunchError validate_stream(Kernel& kernel) const;
  // SM_FIRST and SM_COUNT inside [0, sm.count); on success sets the kernel's SM range.
  dispatcher::LaunchError validate_sm_range(Kernel& kernel) const;
  bool mapped(std::uint64_t address, std::uint64_t elements, std::uint64_t element_bytes) const;
  // [address, address + bytes) inside one GPU's HBM window, or (allow_mmio) its MMIO window.
  bool mapped_bytes(std::uint64_t address, std::uint64_t bytes, bool allow_mmio,
                    bool* in_hbm = nullptr) const;
  void reject(int queue, dispatcher::LaunchError error);
  void raise_irq(int queue);
  void drive_irq();  // SC_METHOD: the only writer of `irq`

  // One accepted kernel while it runs.
  struct Launch {
    std::shared_ptr<const Kernel> kernel;
    std::size_t record = 0;           // its index in launches_
    std::vector<std::int64_t> order;  // its workgroups (tiles or channels) in dispatch order
    std::int64_t next = 0;            // index in `order` of the next workgroup to dispatch
    std::int64_t completed = 0;
    bool fault = false;
    int first_sm = 0;      // ties between SMs go round-robin from here
    int slots_per_wg = 1;  // SM slots each workgroup takes (gemm_slots for a GEMM)
    std::int64_t total() const { return static_cast<std::int64_t>(order.size()); }
  };
  // One hardware queue: its control registers and the launch it holds.
  struct Queue {
    std::uint32_t status = dispatcher::kIdle;
    std::uint32_t error = dispatcher::kNoError;
    std::uint32_t completed_wgs = 0;
    std::uint32_t dispatched_wgs = 0;
    std::uint32_t priority = 0;
    std::uint64_t fault_address = 0;
    bool busy = false;  // a launch accepted and not ended
    bool irq_level = false;
    std::shared_ptr<const Kernel> pending;  // accepted, waiting for the launch latency
    sc_core::sc_time ready;                 // when `pending` starts
    std::unique_ptr<Launch> launch;         // running
  };
  void run();  // SC_THREAD: runs accepted launches, several queues at once
  void start_ready_launches();
  void begin_launch(int queue);
  // Takes the completions the SMs have posted, each to its launch.
  void take_completions();
  void end_finished_launches();
  // The queue to dispatch from next and the SM its workgroup goes to; {-1, -1} if no running
  // launch has a workgroup left and a free slot in its SM range.
  std::pair<int, int> next_dispatch() const;
  int pick_sm(const Launch& launch) const;  // -1 if no SM of its range has a free slot
  void dispatch(int queue, int sm);         // its launch's next workgroup, to `sm`
  void end_launch(int queue);
  // Stamps the end of the running workgroup's record.
  void finish_record(std::uint64_t launch, std::int64_t tile);
  void end_of_elaboration() override;

  SmConfig config_;
  AddressMap map_;
  int gpu_;
  Descriptor descriptor_;
  // A mailbox word: a flag stored at one instant is seen from the next instant on. The store
  // crosses a link and cannot have arrived at the instant it leaves; a reader polling at that
  // instant would otherwise see it or not by the order the simulation kernel runs the two threads
  // (the writer is another GPU's), so GPUs running the same program would part at such ties.
  struct MailboxWord {
    std::uint32_t value = 0;
    std::uint32_t before = 0;  // the value readers see at the instant of the last store
    sc_core::sc_time stored_at;
    bool stored = false;
    std::uint32_t read() const {
      return stored && stored_at == sc_core::sc_time_stamp() ? before : value;
    }
    void write(std::uint32_t v) {
      const sc_core::sc_time now = sc_core::sc_time_stamp();
      if (!stored || stored_at != now) before = value;
      stored = true;
      stored_at = now;
      value = v;
    }
  };
  std::vector<MailboxWord> mailbox_ = std::vector<MailboxWord>(dispatcher::kMailboxWords);

  std::array<Queue, dispatcher::kQueues> queues_;
  std::uint32_t launches_completed_ = 0;
  std::uint64_t next_launch_ = 0;
  std::vector<int> free_slots_;  // per SM, shared by every queue
  sc_core::sc_time last_dispatch_;
  bool dispatched_any_ = false;  // dispatches are sm.dispatch_ns apart

  sc_core::sc_event launch_event_;
  sc_core::sc_event irq_event_;
  std::vector<std::unique_ptr<sc_core::sc_fifo<WorkItem>>> work_fifos_;
  std::vector<std::unique_ptr<sc_core::sc_fifo<WgDone>>> done_fifos_;

  std::vector<DispatchRecord> dispatched_;
  std::vector<LaunchRecord> launches_;
  // (launch, tile) -> dispatched_ index of a running workgroup
  std::map<std::pair<std::uint64_t, std::int64_t>, std::size_t> running_records_;
};

}  // namespace t3
