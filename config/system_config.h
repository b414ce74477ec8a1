// Typed configuration of a TP group. Every leaf has a dotted path, a unit, a default and a range;
// describe() lists them once, and loading, overriding, printing and documenting all walk that list.
#pragma once

#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace t3 {

class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class SimMode { Timing, Functional };
// none: every GPU is simulated; rotational: GPU 0 alone, its traffic to GPU d delivered back to
// it as arriving from GPU -d (protocol/rotation.h).
enum class Symmetry { None, Rotational };
enum class Arbitration { Fcfs, Priority, Mca };
enum class TopologyKind { Ring, FullyConnected, Switch };
enum class PriorityClass { Compute, Communication };
// bank: banks, rows, command timing and refresh per pseudo-channel; simple: a bandwidth pipe per
// channel with a fixed latency (kept for comparison).
enum class HbmModel { Bank, Simple };
// Where the bank model applies a near-memory update's add: bank, a processing unit beside the
// banks fed from the row buffer (HBM-PIM); base-die, beside the controller, the data read out over
// the pseudo-channel's bus and the sum written back (models/hbm/update_placement.h).
enum class NmcPlacement { Bank, BaseDie };
// The bank schedulers hbm.bank.scheduler may name (beneath the arbitration policy): frfcfs, row
// hits first, then the oldest; fcfs, the oldest. Each is one file of models/hbm/scheduler/,
// registered there against its name here.
inline constexpr std::array<const char*, 2> kBankSchedulers{"frfcfs", "fcfs"};
// How the bank model scrambles the channel, pseudo-channel, bank and bank-group digits of
// hbm.bank.address_map (models/hbm/address_hash.h): plain leaves them as the map slices them; xor
// XORs each with the folded row (Zhang et al., MICRO 2000); ipoly XORs each with the remainder of
// the address bits above it divided by an irreducible polynomial (Rau, ISCA 1991).
enum class AddressHash { Plain, Xor, Ipoly };
// T3's ring: descending is the paper's GPU0 -> GPU(n-1) -> ... -> GPU1; ascending is GPU0 -> GPU1.
enum class RingDirection { Descending, Ascending };
// How T3's fused reduce-scatter (and the DMA + NMC one of ideal-rs-nmc) reach a chunk's owner:
// auto is ring on a ring topology and direct on fully-connected and switch fabrics.
enum class CollectivePattern { Auto, Ring, Direct };
// What moves CommFuse's reduce-scatter sends: the SMs (a resident ring kernel that adds and sends)
// or the copy (DMA) engine, with only the adds on the SMs.
enum class CommFuseEngine { Sm, Copy };
// The rings the SM ring collectives spread their channels over: auto is every ring of a stride
// coprime with the GPU count on a fully-connected topology (protocol/ring.h, Several rings) and
// the one ring g -> g + 1 elsewhere; one keeps the one ring everywhere.
enum class SmRings { Auto, One };

struct SimConfig {
  SimMode mode = SimMode::Timing;
  Symmetry symmetry = Symmetry::None;
  double quantum_ns = 1000.0;
  std::int64_t seed = 1;
  // Simulated time without forward progress after which a run stops with a stall diagnosis
  // (models/system/simulation.h); 0 never stops a run that livelocks.
  double stall_timeout_ns = 1e6;
};

struct AddressMapConfig {
  std::uint64_t hbm_base = 0;
  std::uint64_t hbm_stride = 1ull << 40;  // GPU g's HBM window starts at hbm_base + g * stride
  std::uint64_t mmio_base = 0xff00000000000000ull;
  std::uint64_t mmio_stride = 1ull << 24;
  std::uint64_t mmio_size = 1ull << 24;
};

struct McaConfig {
  std::int64_t threshold = 0;     // comm held back at this compute occupancy; 0 = derive
  double starvation_ns = 2000.0;  // longest a communication request waits
  double window_ns = 5000.0;      // first-stage window the threshold is derived from
  bool row_hits_first = true;     // bank model: held-back row hits go before compute misses
  bool release_backlog = true;    // the gate opens once `threshold` communication requests wait
  bool release_urgent = true;     // the gate opens while urgent communication waits
};

// DRAM command timing of the bank model in clocks of tCK, as memspecs give it (DRAMSys'
// memtimingspec, Ramulator2's timing presets). tCK follows from the pins' data rate, which
// hbm.bandwidth_GBps sets (two beats a clock: a burst of burst_length beats takes burst_length / 2
// clocks), so every timing scales with it: the same part clocked faster. config/dram_timing.h turns
// the clocks into ns once, at elaboration. Defaults: Ramulator2's HBM2 2 Gb/s table (tCK = 1 ns
// there), REFERENCES.md section 5 and docs/calibration.md.
struct DramTimingConfig {
  std::int64_t cl = 14;      // read command to first data
  std::int64_t cwl = 5;      // write command to first data
  std::int64_t rcd_rd = 14;  // activate to read
  std::int64_t rcd_wr = 12;  // activate to write
  std::int64_t rp = 14;      // precharge to activate
  std::int64_t ras = 34;     // activate to precharge
  std::int64_t rc = 48;      // activate to activate, same bank
  std::int64_t ccd_s = 2;    // column to column, different bank group
  std::int64_t ccd_l = 4;    // column to column, same bank group
  std::int64_t rrd_s = 4;    // activate to activate, different bank group
  std::int64_t rrd_l = 4;    // activate to activate, same bank group
  std::int64_t faw = 15;     // window holding at most four activates
  std::int64_t wtr_s = 6;    // end of write data to read, different bank group
  std::int64_t wtr_l = 8;    // end of write data to read, same bank group
  std::int64_t rtw = 13;     // read command to write command (Ramulator2: CL + BL + 2 - CWL)
  std::int64_t wr = 16;      // end of write data to precharge (write recovery)
  std::int64_t rtp = 5;      // read to precharge
  std::int64_t refi = 3900;  // refresh interval
  std::int64_t rfc = 350;    // refresh cycle time (8 Gb die)
};

// The bank model keeps per-bank-group scratch on the stack; this bounds hbm.bank.bank_groups.
constexpr std::int64_t kMaxBankGroups = 64;

struct BankConfig {
  std::int64_t pseudo_channels = 2;  // per channel, each with its own data bus and banks
  std::int64_t bus_bits = 64;        // data bus of one pseudo-channel
  std::int64_t burst_length = 4;     // beats per column command (BL4: 32 B on 64 bits)
  std::int64_t bank_groups = 4;      // per pseudo-channel, at most kMaxBankGroups
  std::int64_t banks_per_group = 4;
  std::int64_t page_bytes = 1024;  // row size of one bank
  // Order of the address fields above the interleave granule, most significant first.
  std::string address_map = "row,bank,column,pseudochannel,channel";
  AddressHash address_hash = AddressHash::Ipoly;  // docs/calibration.md says why
  std::string scheduler = kBankSchedulers[0];     // one of kBankSchedulers (or one registered)
  double write_high = 0.8;  // write drain starts when writes fill this fraction of the queue
  double write_low = 0.2;   // and stops when they fall to this fraction
  double controller_latency_ns = 70;  // controller, PHY and return path, beside the DRAM timing
  // A bank closes its row as soon as it may once its queue holds another row's request and none of
  // its own (its PRE takes the row-command bus in the order it is ready); off, the PRE is issued
  // with the next row's ACT. docs/correlation.md ("Early precharge") says why it is not the
  // default.
  bool early_precharge = false;
  DramTimingConfig timing;
};

struct NmcConfig {
  NmcPlacement placement = NmcPlacement::Bank;
};

struct HbmConfig {
  HbmModel model = HbmModel::Bank;
  std::uint64_t capacity_bytes = 32ull << 30;
  std::int64_t channels = 32;
  double bandwidth_GBps = 1000.0;  // aggregate over all channels, 1 GB = 1e9 bytes
  std::int64_t interleave_bytes = 256;
  double latency_ns = 100.0;  // unloaded access latency before the first byte moves
  std::int64_t queue_depth = 64;
  Arbitration arbitration = Arbitration::Fcfs;
  PriorityClass priority_class = PriorityClass::Compute;
  double nmc_update_occupancy = 2.0;  // bank time of an update relative to a write of its size
  double nmc_alu_latency_ns = 4.0;
  NmcConfig nmc;
  McaConfig mca;
  BankConfig bank;
};

struct LinkConfig {
  double bandwidth_GBps = 75.0;  // per direction
  double latency_ns = 500.0;
  std::int64_t max_payload_bytes = 256;
  // Largest payload of a packet that carries an SM's access (capped by max_payload_bytes too):
  // an SM's stores and loads reach the link as cache-line requests, a copy engine's as larger ones.
  std::int64_t sm_max_payload_bytes = 256;
  std::int64_t header_bytes = 16;
  // Receive-buffer slots of each direction's virtual channels, one packet each: requests with
  // their data; responses, acknowledgements and flags.
  std::int64_t credits = 512;
  std::int64_t response_credits = 512;
};

struct TopologyConfig {
  TopologyKind kind = TopologyKind::Ring;
  double switch_latency_ns = 100.0;
  // The switch reduces in the fabric (NVLink SHARP, third-generation NVSwitch): multicast groups,
  // ld_reduce reads and multicast stores (tlm_interconnect/multicast.h). Switch topology only.
  bool switch_reductions = false;
};

struct RouterConfig {
  double latency_ns = 2.0;
};

struct MmioConfig {
  double latency_ns = 200.0;
};

// How much matrix math a GEMM tile that overhangs the matrix edge (the last tile row or column, or
// the last K-step when K is not a multiple of tile_k) costs: extent, only its elements inside the
// matrix; full-tile, the whole tile_m x tile_n x tile_k of every step, as tensor cores execute
// fixed-shape MMA instructions on the zero-filled overhang (NVIDIA's "tile quantization").
enum class GemmEdgeMath { Extent, FullTile };

struct SmConfig {
  std::int64_t count = 80;
  double clock_GHz = 1.4;
  double flops_per_clock = 1024;       // dense FP16 matrix FLOPs per SM per clock
  double efficiency = 0.8;             // fraction of peak matrix throughput a GEMM step reaches
  std::int64_t occupancy = 2;          // workgroups resident per SM
  std::int64_t request_bytes = 16384;  // largest memory request an SM issues (granularity only)
  // Bytes of loads and stores an SM keeps in flight at once (its miss/request capacity).
  std::int64_t max_inflight_bytes = 65536;
  double issue_bytes_per_clock = 64;  // load data and store data an SM moves per clock, each
  // K-steps of operands a GEMM workgroup holds at once, the one it computes on included (its
  // software pipeline's stages): 2 is double buffering, s reads s - 1 steps ahead.
  std::int64_t gemm_stages = 2;
  double launch_latency_ns = 2000.0;  // doorbell to first workgroup
  double dispatch_ns = 5.0;           // per workgroup, dispatcher to SM
  // Whether the shared memory (max_inflight_bytes) bounds the GEMM workgroups an SM holds at once,
  // each keeping gemm_stages stages of A and B sub-tiles in it (gemm_residency); false: only
  // occupancy bounds them.
  bool gemm_smem_residency = false;
  GemmEdgeMath gemm_edge_math = GemmEdgeMath::Extent;
};

// How the L2 performs an access's memory accesses (docs/architecture.md, models/l2/l2_cache.cpp):
// serial: write-backs, then fills, one after another in the requester's thread; concurrent: the
// fills in flight together, dirty victims posted through the write-back buffer.
enum class L2MissPath { Serial, Concurrent };

struct L2Config {
  std::uint64_t size_bytes = 16ull << 20;
  std::int64_t ways = 16;
  std::int64_t line_bytes = 128;
  std::int64_t sector_bytes = 32;
  std::int64_t block_lines = 8;
  std::int64_t banks = 32;
  double bank_bytes_per_clock = 64;
  double clock_GHz = 1.4;
  double hit_latency_ns = 120.0;
  // Dirty lines on their way to memory at once (docs/calibration.md): 128 per bank, the queues
  // a write-back passes in GPGPU-Sim from its L2 slice to DRAM, x the default 32 banks.
  std::int64_t writeback_buffer_entries = 4096;
  // serial by default: the concurrent path is opt-in until its correlation is understood
  // (docs/correlation.md, interference).
  L2MissPath miss_path = L2MissPath::Serial;
  // Partitions of the L2 (docs/calibration.md, "L2 partitions"): 1, one shared pool; 2, as the
  // A100 and H100 whitepapers describe, each serving half the SMs, an address homed in one of
  // them (its point of coherence) and copied into the other when that side's SMs read it.
  std::int64_t partitions = 1;
  // Latency added each way when a partition fetches a line from the other over the L2 fabric.
  // Assumed (no published figure): a fraction of a hit's latency.
  double fabric_latency_ns = 20.0;
  // Bytes of consecutive addresses homed in one partition (assumed; addresses hash onto channels,
  // docs/calibration.md).
  std::int64_t partition_granule_bytes = 4096;
  // Consecutive SM indices attached to one partition before the next group goes to the other
  // (assumed: SM numbering goes round robin over the GPCs, two SMs per TPC, and half the GPCs sit
  // on each side: 2 SMs x 4 GPCs).
  std::int64_t partition_sm_group = 8;
};

// The order a plain GEMM's workgroups are dispatched in: row-major over the tile grid, or as
// CUTLASS's persistent SM90 tile scheduler rasterises it (along M when the grid has more tile
// columns than tile rows, along N otherwise; workloads/gemm_plan.h).
enum class GemmRaster { RowMajor, Cutlass };

struct GemmConfig {
  std::int64_t tile_m = 256;
  std::int64_t tile_n = 128;
  std::int64_t tile_k = 64;
  GemmRaster raster = GemmRaster::RowMajor;
};

struct TrackerConfig {
  std::int64_t entries = 256;  // tags tracked at once (published: 256 entries, ~19 KB)
};

struct DmaConfig {
  std::int64_t outstanding_bytes = 1048576;  // read-ahead buffer: bytes read and not yet delivered
  std::int64_t in_flight = 4;                // transfers in progress at once
  std::int64_t chunk_bytes = 16384;          // largest request the engine issues
  double urgent_fill = 0.5;  // requests are urgent while the buffer holds more than this share
};

struct WorkloadConfig {
  std::int64_t tokens = 8192;
  RingDirection ring = RingDirection::Descending;
  CollectivePattern collective = CollectivePattern::Auto;
  std::int64_t split = 1;  // slicing: n x split slices of the output rows
  CommFuseEngine commfuse_engine = CommFuseEngine::Sm;
  SmRings sm_rings = SmRings::Auto;
};

// Energy estimate of a run (experiments/energy.h; docs/energy.md gives each default's source).
// HBM currents are DRAMsim3's HBM2 power table (configs/HBM2_8Gb_x128.ini), for a 128-bit channel.
struct HbmEnergyConfig {
  double vdd_V = 1.2;
  double idd0_mA = 65;               // one bank activating and precharging every tRC
  double idd2n_mA = 40;              // precharged standby
  double idd3n_mA = 55;              // active standby
  double idd4r_mA = 390;             // reading (burst after burst)
  double idd4w_mA = 500;             // writing
  double idd5_mA = 250;              // refreshing
  std::int64_t spec_bus_bits = 128;  // data bus the currents are given for
  double simple_pJ_per_bit = 3.9;    // simple model: HBM2, O'Connor et al., MICRO 2017
};

struct EnergyConfig {
  HbmEnergyConfig hbm;
  double nmc_alu_pJ_per_op = 0.4;  // one fp16 add (Horowitz, ISSCC 2014, 45 nm)
  double link_pJ_per_bit = 1.3;    // assumption: an NVLink-class serial link
  double sm_pJ_per_flop = 0.75;    // fp16 FMA / 2 (Horowitz, ISSCC 2014, 45 nm)
  double l2_pJ_per_byte = 12.5;    // 64-bit read of a 1 MB SRAM / 8 (Horowitz, ISSCC 2014)
};

struct SystemConfig {
  std::string name = "t3-paper";
  std::int64_t gpus = 4;
  SimConfig sim;
  AddressMapConfig address_map;
  HbmConfig hbm;
  LinkConfig link;
  TopologyConfig topology;
  RouterConfig router;
  MmioConfig mmio;
  SmConfig sm;
  L2Config l2;
  GemmConfig gemm;
  TrackerConfig tracker;
  DmaConfig dma;
  WorkloadConfig workload;
  EnergyConfig energy;
};

// What a parameter is, for checking and for docs/configuration.md.
struct ParamInfo {
  const char* unit;
  const char* doc;
  double min;
  double max;
  std::vector<std::string> choices = {};  // non-empty for enumerations
};

// Walks every leaf of a configuration. Enumerations are visited as strings with their choices.
class ParamVisitor {
 public:
  virtual ~ParamVisitor() = default;
  virtual void visit(const std::string& path, std::int64_t& value, const ParamInfo& info) = 0;
  virtual void visit(const std::string& path, std::uint64_t& value, const ParamInfo& info) = 0;
  virtual void visit(const std::string& path, double& value, const ParamInfo& info) = 0;
  virtual void visit(const std::string& path, bool& value, const ParamInfo& info) = 0;
  virtual void visit(const std::string& path, std::string& value, const ParamInfo& info) = 0;
};

void describe(SystemConfig& config, ParamVisitor& visitor);

}  // namespace t3
