// One streaming multiprocessor: `occupancy` workgroup slots sharing one math pipe, issuing its
// memory traffic through one TLM initiator socket. Memory requests are issued as a GPU issues
// them: a workgroup keeps several loads in flight and posts its stores (a fence waits for them),
// bounded by the SM's request capacity (sm.max_inflight_bytes) and paced by its port
// (sm.issue_bytes_per_clock); request threads (MSHR-like lanes) carry them. Work arrives from the
// dispatcher through an sc_fifo; each finished workgroup is reported back through another. A
// workgroup is a GEMM output tile, a share of a memory-streaming kernel or one channel of a ring
// collective (reduce-scatter / all-gather with flag polling, as RCCL runs them on CUs; the protocol
// is in protocol/ring.h).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <tlm_utils/simple_initiator_socket.h>
#include <nlohmann/json.hpp>
#include <systemc>
#include <tlm>

#include "config/system_config.h"
#include "models/common/lane_pool.h"
#include "models/sm/collectives/channel.h"
#include "models/sm/work_item.h"
#include "tlm_interconnect/error_log.h"
#include "tlm_interconnect/payload.h"

namespace t3 {

struct SmStats {
  std::uint64_t wgs = 0;                 // workgroups finished
  sc_core::sc_time pipe_busy;            // math pipe reserved for compute
  std::uint64_t bytes_read = 0;          // bytes of read requests answered OK
  std::uint64_t bytes_written = 0;       // bytes of write and update requests answered OK
  std::uint64_t reads = 0;               // read transactions
  std::uint64_t writes = 0;              // write and update transactions
  std::uint64_t faults = 0;              // transactions answered with an error response
  std::uint64_t max_inflight_bytes = 0;  // most request bytes in flight at once
  sc_core::sc_time budget_wait;          // time workgroups waited for request capacity
  sc_core::sc_time read_latency;         // summed over reads: issue to data back
  sc_core::sc_time gemm_load_wait;       // time GEMM workgroups waited for a K-step's operands
  sc_core::sc_time
      fence_wait;  // time finished workgroups waited for their stores' acknowledgements
  // Collective kernels (their data bytes are also in bytes_read / bytes_written; flag accesses
  // are counted in reads / writes and their 8 bytes each in bytes_read / bytes_written).
  std::uint64_t collective_bytes_read = 0;     // data read: own chunks, FIFO, received chunks
  std::uint64_t collective_bytes_written = 0;  // data stored: to the next GPU and the final chunk
  std::uint64_t flag_polls = 0;                // reads of a flag word
  std::uint64_t flag_writes = 0;               // READY and ACK stores
  sc_core::sc_time flag_wait;                  // time channels spent polling for flags
};

class Sm : public sc_core::sc_module {
 public:
  tlm_utils::simple_initiator_socket<Sm> socket;            // to the GPU's router (or L2)
  sc_core::sc_port<sc_core::sc_fifo_in_if<WorkItem>> work;  // from the dispatcher
  sc_core::sc_port<sc_core::sc_fifo_out_if<WgDone>> done;   // to the dispatcher

  Sm(sc_core::sc_module_name name, const SmConfig& config, SimMode mode, int gpu, int sm_index);
  ~Sm() override;

  int index() const { return index_; }
  const SmStats& stats() const { return stats_; }
  nlohmann::json report() const;
  // Rises whenever a workgroup or one of its memory accesses completes; flag polls do not count,
  // so a channel polling a flag nobody sets makes no progress (the stall watchdog's view).
  std::uint64_t progress() const {
    return stats_.wgs + stats_.reads + stats_.writes - stats_.flag_polls;
  }
  // What each busy workgroup slot is doing, one entry per slot, e.g. "group.gpu0.sm3 channel 2
  // waits for the flag at 0x... to reach count 5 of sequence 1 (reads count 4)"; empty if idle.
  std::vector<std::string> describe_pending() const;

  // Seconds of math-pipe time of one GEMM step of h x w outputs over k_step (first principles:
  // 2 h w k FLOPs at flops_per_clock x clock x efficiency).
  double step_seconds(std::int64_t h, std::int64_t w, std::int64_t k_step) const;
  // Seconds of math-pipe time of a GEMM step of h x w outputs over k_step, a step of a tile of
  // `gemm`: with sm.gemm_edge_math = full-tile a tile overhanging the matrix edge (h < tile_m,
  // w < tile_n or k_step < tile_k) still costs the whole tile's step.
  double gemm_step_seconds(const GemmKernel& gemm, std::int64_t h, std::int64_t w,
                           std::int64_t k_step) const;
  // Seconds of math-pipe time a collective spends adding `elements` element pairs:
  // elements / (flops_per_clock x clock x efficiency x kReduceRate).
  double reduce_seconds(std::int64_t elements) const;
  // Element-wise adds run on the vector ALUs, not the matrix pipe that flops_per_clock describes:
  // one add per lane per clock, 64 lanes per CU (CDNA2) against 1024 matrix FLOPs per clock.
  static constexpr double kReduceRate = 1.0 / 16;

 private:
  // Requests a workgroup waits for together: a K-step's loads, a collective piece's reads.
  struct Ticket {
    std::uint32_t outstanding = 0;
    sc_core::sc_event done;
  };
  // Per-slot buffers (functional mode), reused from workgroup to workgroup.
  struct Slot {
    Ticket loads;                                 // a streaming step's reads
    std::vector<std::unique_ptr<Ticket>> stages;  // a GEMM's K-steps in flight, step % stages
    Ticket all;                                   // every request in flight: the fence
    std::vector<std::unique_ptr<Ticket>> pieces;  // a ring step's reads, one per piece
    WgDone* result = nullptr;                     // where a fault is recorded
    sc_core::sc_time flags_acked;       // when the last posted flag store's acknowledgement arrives
    std::vector<unsigned char> a, out;  // a streaming step's input; the output tile
    std::vector<std::vector<unsigned char>> stage_a, stage_b;  // a GEMM's K-steps, step % stages
    std::vector<float> a_values, b_values, acc;
    std::vector<unsigned char> received, local;  // one piece of a collective
    // What the slot is doing, for describe_pending (a few stores per workgroup and flag wait).
    int kind = -1;               // dispatcher::kGemm or kCollective while busy, -1 when idle
    std::int64_t tile = 0;       // GEMM tile or collective channel
    std::uint64_t flag = 0;      // flag being polled, if polling
    std::uint64_t expected = 0;  // the value it waits for
    const std::uint64_t* seen = nullptr;  // the value last read; null when not polling
  };
  struct Lane;  // what a request thread carries: one request at a time (an MSHR)
  void slot_thread(int slot);
  void serve(Lane& lane);  // one request, in its lane's thread
  // Issues [address, address + bytes) in requests of at most request_bytes (element-aligned),
  // each counted in `ticket` (if any) and in the slot's fence; waits only for request capacity.
  // Reads land in `into` (functional mode); writes take their data from `from` at once.
  void issue(Slot& slot, std::uint64_t address, std::uint64_t bytes, const T3Extension& extension,
             unsigned char* into, const unsigned char* from, Ticket* ticket);
  // Whether a request of `bytes` would be admitted now without waiting.
  bool has_room(std::uint64_t bytes) const;
  // Waits until every request of `ticket` completed; false if the workgroup has faulted.
  bool await(Slot& slot, Ticket& ticket);
  // The fence: waits until every request of the slot completed (its posted stores and flag
  // stores acknowledged).
  bool fence(Slot& slot);
  // Returns false after a fault (recorded in `result`).
  bool run_gemm(Slot& slot, const GemmKernel& gemm, std::int64_t tile, WgDone& result);
  // One workgroup of a memory-streaming kernel: its share of the input read and of the output
  // written step by step, each step's vector operations (and matrix FLOPs) on the math pipe.
  bool run_stream(Slot& slot, const StreamKernel& stream, std::int64_t wg, WgDone& result);
  // One channel of a collective, run by the algorithm its descriptor names
  // (models/sm/collectives/); false after a fault (recorded in `result`).
  class SlotOps;  // the slot's services an algorithm uses (ChannelOps)
  RingChannel make_ring_channel(const CollectiveKernel& kernel, int channel) const;
  bool run_collective(Slot& slot, const CollectiveKernel& kernel, int channel, WgDone& result);
  // The data movers the algorithms share (ChannelOps::direct_move and move_pieces).
  bool direct_move(Slot& slot, RingChannel& channel, const std::vector<DirectSource>& sources,
                   std::uint64_t destination, std::int64_t count);
  void sum_sources(Slot& slot, const RingChannel& channel, std::size_t sources,
                   std::uint64_t step_bytes, std::uint64_t offset, std::int64_t elements);
  bool move_pieces(Slot& slot, RingChannel& channel, const RingMove& move, std::uint32_t ack,
                   WgDone& result);
  void issue_piece_reads(Slot& slot, RingChannel& channel, const RingMove& move,
                         std::int64_t piece);
  // local += received for `elements` elements from byte `offset` of the step's buffers.
  void reduce_piece(Slot& slot, const RingChannel& channel, std::int64_t elements,
                    std::uint64_t offset);
  // A GEMM's read extension for `element` data.
  T3Extension gemm_read(ElementType element) const;
  // `posted`: the caller does not wait for the acknowledgement (the annotated delay).
  bool transport(tlm::tlm_generic_payload& payload, WgDone& result, bool posted = false);
  // Counts and reports a transaction answered with an error; the first marks `result` faulted.
  void record_fault(const tlm::tlm_generic_payload& payload, WgDone& result);
  // A posted 8-byte flag store of `value`; the slot's fence waits for its acknowledgement.
  bool post_flag(Slot& slot, std::uint64_t address, std::uint64_t value,
                 const T3Extension& extension);
  // Reads the 8-byte flag at `address` every `interval` until it is at least `expected`; `seen`
  // caches the last value read (a wait it already satisfies costs no access).
  bool wait_flag(Slot& slot, std::uint64_t address, std::uint64_t expected, std::uint64_t& seen,
                 const T3Extension& extension, sc_core::sc_time interval, WgDone& result);
  // Reserves the math pipe for `duration` from max(now, pipe free); returns the end time.
  sc_core::sc_time reserve_pipe(sc_core::sc_time duration);
  // Reserves the load or store port for `bytes`; returns when the request starts issuing.
  sc_core::sc_time reserve_port(bool load, std::uint64_t bytes);

  SmConfig config_;
  SimMode mode_;
  int gpu_;
  int index_;
  double flops_per_second_;
  PayloadPool pool_;
  sc_core::sc_time pipe_free_;
  sc_core::sc_time load_port_free_, store_port_free_;
  double ns_per_issue_byte_ = 0;
  std::uint64_t inflight_bytes_ = 0;  // of requests issued and not yet completed
  sc_core::sc_event room_;            // request capacity freed
  LanePool<Lane> lanes_;
  SmStats stats_;
  ErrorLog faults_;                           // transactions answered with an error response
  std::vector<std::unique_ptr<Slot>> slots_;  // stable: lanes point at them
};

}  // namespace t3
