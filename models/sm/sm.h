// One streaming multiprocessor: `occupancy` workgroup slots sharing one math pipe, issuing its
// memory traffic through one TLM initiator socket. Work arrives from the dispatcher through an
// sc_fifo; each finished workgroup is reported back through another. A workgroup is a GEMM output
// tile or one channel of a ring collective (reduce-scatter / all-gather with flag polling, as
// RCCL runs them on CUs; the protocol is in protocol/ring.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <tlm_utils/simple_initiator_socket.h>
#include <nlohmann/json.hpp>
#include <systemc>
#include <tlm>

#include "config/system_config.h"
#include "models/sm/work_item.h"
#include "tlm_interconnect/error_log.h"
#include "tlm_interconnect/payload.h"

namespace t3 {

struct SmStats {
  std::uint64_t wgs = 0;            // workgroups finished
  sc_core::sc_time pipe_busy;       // math pipe reserved for compute
  std::uint64_t bytes_read = 0;     // bytes of read requests answered OK
  std::uint64_t bytes_written = 0;  // bytes of write and update requests answered OK
  std::uint64_t reads = 0;          // read transactions
  std::uint64_t writes = 0;         // write and update transactions
  std::uint64_t faults = 0;         // transactions answered with an error response
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
  // Seconds of math-pipe time a collective spends adding `elements` element pairs:
  // elements / (flops_per_clock x clock x efficiency x kReduceRate).
  double reduce_seconds(std::int64_t elements) const;
  // Element-wise adds run on the vector ALUs, not the matrix pipe that flops_per_clock describes:
  // one add per lane per clock, 64 lanes per CU (CDNA2) against 1024 matrix FLOPs per clock.
  static constexpr double kReduceRate = 1.0 / 16;

 private:
  // Per-slot buffers (functional mode), reused from workgroup to workgroup.
  struct Slot {
    std::vector<unsigned char> a, b, out;  // one K-step's A and B sub-tiles; the output tile
    std::vector<float> a_values, b_values, acc;
    std::vector<unsigned char> received, local;  // one piece of a collective
    // What the slot is doing, for describe_pending (a few stores per workgroup and flag wait).
    int kind = -1;               // dispatcher::kGemm or kCollective while busy, -1 when idle
    std::int64_t tile = 0;       // GEMM tile or collective channel
    std::uint64_t flag = 0;      // flag being polled, if polling
    std::uint64_t expected = 0;  // the value it waits for
    const std::uint64_t* seen = nullptr;  // the value last read; null when not polling
  };
  void slot_thread(int slot);
  // Returns false after a fault (recorded in `result`).
  bool run_gemm(Slot& slot, const GemmKernel& gemm, std::int64_t tile, WgDone& result);
  // One channel of a ring collective; false after a fault (recorded in `result`). Its steps:
  struct RingChannel;  // the channel's ranges, extensions and flags (sm.cpp)
  struct RingMove;     // what one ring step reads, reduces and stores
  RingChannel make_ring_channel(const CollectiveKernel& kernel, int channel) const;
  bool run_collective(Slot& slot, const CollectiveKernel& kernel, int channel, WgDone& result);
  bool ring_step(Slot& slot, RingChannel& channel, std::int64_t slice, int step, WgDone& result);
  bool move_pieces(Slot& slot, RingChannel& channel, const RingMove& move, std::uint32_t ack,
                   WgDone& result);
  void reduce_piece(Slot& slot, const RingChannel& channel, std::int64_t elements);
  // Reads [address, address + bytes) in requests of at most request_bytes (element-aligned);
  // in functional mode the data lands in `into`.
  bool read(std::uint64_t address, std::uint64_t bytes, ElementType element, unsigned char* into,
            WgDone& result);
  bool read(std::uint64_t address, std::uint64_t bytes, const T3Extension& extension,
            unsigned char* into, WgDone& result);
  bool write(std::uint64_t address, std::uint64_t bytes, const T3Extension& extension,
             const unsigned char* from, WgDone& result);
  // `posted`: the caller does not wait for the acknowledgement (the annotated delay).
  bool transport(tlm::tlm_generic_payload& payload, WgDone& result, bool posted = false);
  // A posted 8-byte flag store of `value`.
  bool post_flag(std::uint64_t address, std::uint64_t value, const T3Extension& extension,
                 WgDone& result);
  // Reads the 8-byte flag at `address` every `interval` until it is at least `expected`; `seen`
  // caches the last value read (a wait it already satisfies costs no access).
  bool wait_flag(Slot& slot, std::uint64_t address, std::uint64_t expected, std::uint64_t& seen,
                 const T3Extension& extension, sc_core::sc_time interval, WgDone& result);
  // Reserves the math pipe for `duration` from max(now, pipe free); returns the end time.
  sc_core::sc_time reserve_pipe(sc_core::sc_time duration);

  SmConfig config_;
  SimMode mode_;
  int gpu_;
  int index_;
  double flops_per_second_;
  PayloadPool pool_;
  sc_core::sc_time pipe_free_;
  SmStats stats_;
  ErrorLog faults_;  // transactions answered with an error response
  std::vector<Slot> slots_;
};

}  // namespace t3
