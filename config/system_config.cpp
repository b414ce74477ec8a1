#include "config/system_config.h"

#include <array>
#include <limits>
#include <utility>

#include "protocol/to_size.h"

namespace t3 {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kMaxU64 = 18446744073709551615.0;

// Visits an enumeration as its name; `names` lists the choices in enumerator order.
template <typename E, std::size_t N>
void visit_enum(ParamVisitor& visitor, const std::string& path, E& value,
                const std::array<const char*, N>& names, const char* doc) {
  std::string text = names[to_size(value)];
  ParamInfo info{"", doc, 0, 0, std::vector<std::string>(names.begin(), names.end())};
  visitor.visit(path, text, info);
  for (std::size_t i = 0; i < N; ++i) {
    if (text == names[i]) value = static_cast<E>(i);
  }
}

}  // namespace

// The parameter table, one visit a key: its lines are alike in shape, each names its own key.
void describe(SystemConfig& c, ParamVisitor& v) {
  v.visit("name", c.name, {"", "label of this system, written into results", 0, 0});
  v.visit("gpus", c.gpus, {"", "GPUs in the tensor-parallel group", 1, 64});

  visit_enum(v, "sim.mode", c.sim.mode, std::array{"timing", "functional"},
             "timing: no tensor storage; functional: real data in a sparse backing store");
  visit_enum(v, "sim.symmetry", c.sim.symmetry, std::array{"none", "rotational"},
             "none: simulate every GPU; rotational: simulate GPU 0 alone and deliver what it sends "
             "to GPU d back into it as arriving from GPU -d, addresses rotated by the plan "
             "(timing mode, plans whose GPUs are rotations of one another; results are group "
             "totals)");
  v.visit("sim.quantum_ns", c.sim.quantum_ns,
          {"ns",
           "global TLM quantum (tlm_global_quantum) for initiators that decouple with a "
           "quantum keeper, e.g. a virtual platform's CPU model; t3sim's own blocks synchronise "
           "on every access and do not use it",
           0, 1e9});
  v.visit("sim.seed", c.sim.seed, {"", "seed of every random choice in a run", 0, 9.0e18});
  v.visit("sim.stall_timeout_ns", c.sim.stall_timeout_ns,
          {"ns",
           "a run in which no workgroup, memory access of a kernel, DMA transfer, tracker count "
           "or host command completes for this long stops with an error naming every block "
           "still holding work (detected within twice this); 0 lets a livelock run forever",
           0, 1e12});

  auto& a = c.address_map;
  v.visit("address_map.hbm_base", a.hbm_base, {"byte", "start of GPU 0's HBM window", 0, kMaxU64});
  v.visit("address_map.hbm_stride", a.hbm_stride,
          {"byte", "distance between consecutive GPUs' HBM windows", 1, kMaxU64});
  v.visit("address_map.mmio_base", a.mmio_base,
          {"byte", "start of GPU 0's MMIO window", 0, kMaxU64});
  v.visit("address_map.mmio_stride", a.mmio_stride,
          {"byte", "distance between consecutive GPUs' MMIO windows", 1, kMaxU64});
  v.visit("address_map.mmio_size", a.mmio_size,
          {"byte", "size of each MMIO window (at least the 4 register blocks of 0x1000)", 16384,
           kMaxU64});

  auto& h = c.hbm;
  visit_enum(v, "hbm.model", h.model, std::array{"bank", "simple"},
             "bank: bank groups, banks, open rows, DRAM command timing and refresh per "
             "pseudo-channel under FR-FCFS; simple: a bandwidth pipe per channel with a fixed "
             "latency (hbm.latency_ns, hbm.nmc_update_occupancy)");
  v.visit("hbm.capacity_bytes", h.capacity_bytes, {"byte", "HBM capacity per GPU", 4096, kMaxU64});
  v.visit("hbm.channels", h.channels, {"", "independent (pseudo-)channels per GPU", 1, 1024});
  v.visit("hbm.bandwidth_GBps", h.bandwidth_GBps,
          {"GB/s",
           "aggregate peak bandwidth of all channels (1 GB = 1e9 B); for hbm.model = bank it "
           "sets the data rate per pin (bandwidth / (channels x pseudo_channels x bus_bits / 8)), "
           "hence tCK (two beats a clock) and every hbm.bank.timing.* in ns",
           1e-3, 1e6});
  v.visit("hbm.interleave_bytes", h.interleave_bytes,
          {"byte", "address interleaving granule across channels (power of two)", 32, 1 << 24});
  v.visit("hbm.latency_ns", h.latency_ns,
          {"ns", "simple model: unloaded access latency, before the data transfer", 0, 1e6});
  v.visit("hbm.queue_depth", h.queue_depth,
          {"", "request-queue entries per channel; a full queue back-pressures", 1, 1 << 20});
  visit_enum(v, "hbm.arbitration", h.arbitration, std::array{"fcfs", "priority", "mca"},
             "order in which a channel serves its queue");
  visit_enum(v, "hbm.priority_class", h.priority_class, std::array{"compute", "communication"},
             "traffic class served first by the priority policy");
  v.visit("hbm.nmc_update_occupancy", h.nmc_update_occupancy,
          {"",
           "simple model: channel time of a near-memory update relative to a write of the same "
           "size (the bank model times updates by hbm.nmc.placement instead)",
           1, 100});
  v.visit("hbm.nmc_alu_latency_ns", h.nmc_alu_latency_ns,
          {"ns", "near-bank adder latency added to an update", 0, 1e6});
  visit_enum(v, "hbm.nmc.placement", h.nmc.placement, std::array{"bank", "base-die"},
             "bank model: where an update's add happens. bank: a near-bank unit fed from the row "
             "buffer (HBM-PIM); the operand crosses the data bus as a write does and the bank "
             "reads, adds and writes the column back. base-die: beside the controller; the data "
             "is read out over the bus and the sum written back, with the bus turnarounds. The "
             "simple model keeps hbm.nmc_update_occupancy either way");

  v.visit("hbm.mca.threshold", h.mca.threshold,
          {"",
           "MCA: communication is held back while this many compute requests or more are "
           "queued at a queue (channel, or pseudo-channel for hbm.model = bank); 0 derives it "
           "as the mean compute occupancy of the first window (the first stage's memory "
           "intensity), rounded up, at least 1",
           0, 1 << 20});
  v.visit("hbm.mca.starvation_ns", h.mca.starvation_ns,
          {"ns",
           "MCA: the most a communication request waits beyond arrival order (counted once no "
           "older compute request is queued); then it is served regardless (bank model: the "
           "gate opens and FR-FCFS orders it)",
           0, 1e9});
  v.visit("hbm.mca.window_ns", h.mca.window_ns,
          {"ns",
           "MCA: length of the first-stage window the threshold is derived from, from the "
           "first compute request a queue sees",
           1, 1e9});
  v.visit("hbm.mca.row_hits_first", h.mca.row_hits_first,
          {"",
           "MCA on the bank model: while communication is held back its row hits still go "
           "after compute's row hits and before compute's misses (FR-FCFS first-ready above "
           "MCA's ranking); false holds every communication request back",
           0, 0});
  v.visit("hbm.mca.release_backlog", h.mca.release_backlog,
          {"",
           "MCA: the gate opens once as many communication requests wait in a queue as the "
           "threshold (communication falling behind the GEMM); false holds communication back "
           "however many wait",
           0, 0});
  v.visit("hbm.mca.release_urgent", h.mca.release_urgent,
          {"",
           "MCA: the gate opens while an urgent communication request waits in the queue (one "
           "whose DMA engine's read-ahead buffer is filled past dma.urgent_fill: the path, not "
           "the GEMM, paces it); false ignores urgency",
           0, 0});

  auto& b = h.bank;
  v.visit("hbm.bank.pseudo_channels", b.pseudo_channels,
          {"", "pseudo-channels per channel, each with its own data bus, banks and queue", 1, 16});
  v.visit("hbm.bank.bus_bits", b.bus_bits, {"bit", "data bus width of a pseudo-channel", 8, 1024});
  v.visit("hbm.bank.burst_length", b.burst_length,
          {"beat", "data beats per column command", 1, 64});
  v.visit("hbm.bank.bank_groups", b.bank_groups,
          {"", "bank groups per pseudo-channel; bursts of a granule alternate over them", 1,
           kMaxBankGroups});
  v.visit("hbm.bank.banks_per_group", b.banks_per_group, {"", "banks in a bank group", 1, 64});
  v.visit("hbm.bank.page_bytes", b.page_bytes,
          {"byte", "row (page) size of one bank", 32, 1 << 20});
  v.visit("hbm.bank.address_map", b.address_map,
          {"",
           "address fields above the interleave granule, most significant first, each once: "
           "row, bank, column, pseudochannel, channel (within a granule, bursts alternate "
           "bank groups, then columns)",
           0, 0});
  visit_enum(v, "hbm.bank.address_hash", b.address_hash, std::array{"plain", "xor", "ipoly"},
             "bank model: how the channel, pseudo-channel, bank and bank-group digits of "
             "hbm.bank.address_map are scrambled (each keeps its column and row): plain, as "
             "sliced; xor, each XORed with the folded row (Zhang et al., MICRO 2000); ipoly, each "
             "XORed with the address above it modulo an irreducible polynomial (Rau, ISCA 1991; "
             "GPGPU-Sim's memory partitions); the bank group is rotated by the row's hash. A "
             "digit of a count that is not a power of two hashes its largest power-of-two "
             "factor and keeps the rest a modulo interleave");
  v.visit("hbm.bank.scheduler", b.scheduler,
          {"",
           "order among the requests the arbitration policy allows: frfcfs serves row hits "
           "first, then the oldest; fcfs the oldest",
           0, 0, std::vector<std::string>(kBankSchedulers.begin(), kBankSchedulers.end())});
  v.visit("hbm.bank.write_high", b.write_high,
          {"", "write drain starts when writes and updates fill this fraction of a queue", 0, 1});
  v.visit("hbm.bank.write_low", b.write_low,
          {"", "write drain stops when writes and updates fall to this fraction of a queue", 0, 1});
  v.visit(
      "hbm.bank.controller_latency_ns", b.controller_latency_ns,
      {"ns", "controller, PHY and return-path latency added to the DRAM command timing", 0, 1e6});
  v.visit("hbm.bank.early_precharge", b.early_precharge,
          {"",
           "a bank precharges as soon as it may once its queue needs another of its rows and "
           "not the open one, the PRE taking the row-command bus in the order it is ready; off, "
           "the PRE goes with the next row's ACT",
           0, 1});
  auto& t = b.timing;
  // Clock counts of tCK = 2 / (data rate per pin); config/dram_timing.h converts them to ns.
  const auto timing = [&](const char* key, std::int64_t& value, const char* doc) {
    v.visit(std::string("hbm.bank.timing.") + key, value, {"tCK", doc, 0, 1e7});
  };
  timing("cl", t.cl, "CL (memspec RL): read command to first data");
  timing("cwl", t.cwl, "CWL (memspec WL): write command to first data");
  timing("rcd_rd", t.rcd_rd, "tRCDRD: activate to read command");
  timing("rcd_wr", t.rcd_wr, "tRCDWR: activate to write command");
  timing("rp", t.rp, "tRP: precharge to activate");
  timing("ras", t.ras, "tRAS: activate to precharge");
  timing("rc", t.rc, "tRC: activate to activate in one bank");
  timing("ccd_s", t.ccd_s, "tCCD_S: column to column, different bank groups");
  timing("ccd_l", t.ccd_l, "tCCD_L: column to column, same bank group");
  timing("rrd_s", t.rrd_s, "tRRD_S: activate to activate, different bank groups");
  timing("rrd_l", t.rrd_l, "tRRD_L: activate to activate, same bank group");
  timing("faw", t.faw, "tFAW: window in which at most four activates issue");
  timing("wtr_s", t.wtr_s, "tWTR_S: end of write data to read, different bank groups");
  timing("wtr_l", t.wtr_l, "tWTR_L: end of write data to read, same bank group");
  timing("rtw", t.rtw,
         "tRTW: read command to write command (the write's data then starts rtw + cwl - cl - "
         "burst_length / 2 clocks after the read's data ends, at least 0)");
  timing("wr", t.wr, "tWR: end of write data to precharge");
  timing("rtp", t.rtp, "tRTP: read to precharge");
  timing("refi", t.refi, "tREFI: refresh interval (0: no refresh)");
  timing("rfc", t.rfc, "tRFC: all-bank refresh cycle time");

  auto& l = c.link;
  v.visit("link.bandwidth_GBps", l.bandwidth_GBps,
          {"GB/s", "line rate of one link direction (1 GB = 1e9 B)", 1e-3, 1e6});
  v.visit("link.latency_ns", l.latency_ns, {"ns", "one-way latency of a link", 0, 1e9});
  v.visit("link.max_payload_bytes", l.max_payload_bytes,
          {"byte", "largest payload one packet carries", 1, 1 << 20});
  v.visit("link.sm_max_payload_bytes", l.sm_max_payload_bytes,
          {"byte",
           "largest payload of a packet carrying an SM's access (an SM's stores and loads cross as "
           "cache-line requests; max_payload_bytes caps it too)",
           1, 1 << 20});
  v.visit("link.header_bytes", l.header_bytes,
          {"byte", "header and framing bytes every packet adds on the wire", 0, 1 << 20});
  v.visit("link.credits", l.credits,
          {"packet",
           "receive-buffer slots of a direction's request channel (requests and their data); "
           "bounds its packets in flight",
           1, 1 << 24});
  v.visit("link.response_credits", l.response_credits,
          {"packet",
           "receive-buffer slots of a direction's response channel (acknowledgements, read data, "
           "flags); bounds its packets in flight",
           1, 1 << 24});

  visit_enum(v, "topology.kind", c.topology.kind, std::array{"ring", "fully-connected", "switch"},
             "how GPUs are linked: bidirectional ring, a link per pair, or one switch");
  v.visit("topology.switch_latency_ns", c.topology.switch_latency_ns,
          {"ns", "traversal latency of the switch (switch topology only)", 0, 1e9});
  v.visit("topology.switch_reductions", c.topology.switch_reductions,
          {"",
           "the switch reduces in the fabric (NVLink SHARP: multicast ld_reduce and stores; "
           "third-generation NVSwitch, H100); switch topology only",
           0, 1});

  v.visit("router.latency_ns", c.router.latency_ns,
          {"ns", "in-GPU router traversal latency per transaction", 0, 1e6});
  v.visit("mmio.latency_ns", c.mmio.latency_ns,
          {"ns", "latency of one MMIO register access", 0, 1e9});

  auto& s = c.sm;
  v.visit("sm.count", s.count, {"", "streaming multiprocessors (compute units) per GPU", 1, 4096});
  v.visit("sm.clock_GHz", s.clock_GHz, {"GHz", "SM clock", 1e-3, 100});
  v.visit("sm.flops_per_clock", s.flops_per_clock,
          {"FLOP/clk", "dense matrix FLOPs per SM per clock at the GEMM's element type", 1, 1e7});
  v.visit("sm.efficiency", s.efficiency,
          {"", "fraction of peak matrix throughput a GEMM step reaches", 0.01, 1});
  v.visit("sm.occupancy", s.occupancy, {"", "workgroups resident per SM at once", 1, 64});
  v.visit("sm.request_bytes", s.request_bytes,
          {"byte", "largest memory request an SM issues (simulation granularity)", 64, 1 << 24});
  v.visit("sm.max_inflight_bytes", s.max_inflight_bytes,
          {"byte",
           "loads and stores an SM keeps in flight at once, over its workgroups (its miss/request "
           "capacity); a workgroup waits for room when they are used up",
           64, 1 << 30});
  v.visit("sm.issue_bytes_per_clock", s.issue_bytes_per_clock,
          {"byte/clk",
           "load data and store data an SM moves per clock, each (its port to the memory system)",
           1, 1e6});
  v.visit("sm.gemm_stages", s.gemm_stages,
          {"",
           "K-steps of operands a GEMM workgroup holds at once, the one it computes on included: "
           "its loads run stages - 1 steps ahead of its math (2: double buffering)",
           2, 64});
  v.visit("sm.launch_latency_ns", s.launch_latency_ns,
          {"ns", "kernel launch: doorbell to first workgroup dispatch", 0, 1e9});
  v.visit("sm.dispatch_ns", s.dispatch_ns,
          {"ns", "dispatcher time per workgroup handed to an SM", 0, 1e6});
  v.visit("sm.gemm_smem_residency", s.gemm_smem_residency,
          {"",
           "an SM holds only the GEMM workgroups whose sm.gemm_stages stages of A and B sub-tiles "
           "fit its shared memory (sm.max_inflight_bytes): min(sm.occupancy, max(1, "
           "sm.max_inflight_bytes / (stages x (tile_m + tile_n) x tile_k x element bytes))), each "
           "taking ceil(sm.occupancy / that) slots; false: only sm.occupancy bounds them",
           0, 1});
  visit_enum(v, "sm.gemm_edge_math", s.gemm_edge_math, std::array{"extent", "full-tile"},
             "math a GEMM tile overhanging the matrix edge costs: extent, only its elements inside "
             "the matrix; full-tile, every K-step the whole tile_m x tile_n x tile_k, as "
             "fixed-shape tensor-core MMA instructions run on the zero-filled overhang (tile "
             "quantization); its loads and stores stay the elements inside");

  auto& l2 = c.l2;
  v.visit("l2.size_bytes", l2.size_bytes, {"byte", "L2 capacity per GPU", 1024, kMaxU64});
  v.visit("l2.ways", l2.ways, {"", "associativity", 1, 1024});
  v.visit("l2.line_bytes", l2.line_bytes, {"byte", "line size (power of two)", 16, 4096});
  v.visit("l2.sector_bytes", l2.sector_bytes,
          {"byte", "sector size: the unit of fill and of valid/dirty state", 4, 4096});
  v.visit("l2.block_lines", l2.block_lines,
          {"line",
           "lines the model tags and replaces as one unit (power of two; simulation granularity, "
           "not hardware: 1 is exact). Banks stay line-interleaved and uncached accesses "
           "invalidate only the lines they overlap",
           1, 64});
  v.visit("l2.banks", l2.banks, {"", "independent banks, line-interleaved", 1, 1024});
  v.visit("l2.bank_bytes_per_clock", l2.bank_bytes_per_clock,
          {"byte/clk", "bandwidth of one bank", 1, 4096});
  v.visit("l2.clock_GHz", l2.clock_GHz, {"GHz", "L2 clock", 1e-3, 100});
  v.visit("l2.hit_latency_ns", l2.hit_latency_ns, {"ns", "latency of a hit", 0, 1e6});
  v.visit("l2.writeback_buffer_entries", l2.writeback_buffer_entries,
          {"line",
           "write-back buffer: dirty lines evicted and not yet written to memory; an access "
           "whose victims do not fit waits, the others do not wait for their write-backs",
           1, 1 << 20});
  visit_enum(v, "l2.miss_path", l2.miss_path, std::array{"serial", "concurrent"},
             "serial: an access's write-backs, then its fills, one after another in the "
             "requester's thread; concurrent: its fills in flight together and its dirty victims "
             "posted through the write-back buffer (l2.writeback_buffer_entries)");
  v.visit(
      "l2.partitions", l2.partitions,
      {"",
       "1: one shared L2; 2: two partitions, each attached to half the SMs (l2.partition_sm_group) "
       "and home of half the addresses (l2.partition_granule_bytes); an SM's read of an address "
       "homed in the other partition is cached in its own partition too, filled over the "
       "fabric (l2.fabric_latency_ns); stores go to the home partition and invalidate the "
       "other's copy. Each partition has half of l2.size_bytes, l2.banks and "
       "l2.writeback_buffer_entries",
       1, 2});
  v.visit("l2.fabric_latency_ns", l2.fabric_latency_ns,
          {"ns", "added each way to a fill one partition takes from the other (assumed)", 0, 1e6});
  v.visit("l2.partition_granule_bytes", l2.partition_granule_bytes,
          {"byte",
           "consecutive bytes homed in one partition (power of two, at least l2.line_bytes x "
           "l2.block_lines); the home of a granule is the parity of its index's bits",
           16, 1ll << 40});
  v.visit(
      "l2.partition_sm_group", l2.partition_sm_group,
      {"SM", "consecutive SM indices attached to one partition; the groups alternate", 1, 65536});

  v.visit("gemm.tile_m", c.gemm.tile_m,
          {"element", "rows of the output tile a workgroup owns", 1, 65536});
  v.visit("gemm.tile_n", c.gemm.tile_n,
          {"element", "columns of the output tile a workgroup owns", 1, 65536});
  v.visit("gemm.tile_k", c.gemm.tile_k,
          {"element", "K step a workgroup reads and multiplies at a time", 1, 65536});
  visit_enum(v, "gemm.raster", c.gemm.raster, std::array{"row-major", "cutlass"},
             "order a plain GEMM's workgroups are dispatched in: row-major over the tile grid, or "
             "cutlass (CUTLASS's SM90 persistent tile scheduler heuristic: along M, i.e. "
             "column-major, when the grid has more tile columns than tile rows, else row-major); "
             "T3's fused GEMM keeps its chunk-staggered order");
  v.visit("tracker.entries", c.tracker.entries,
          {"", "output tiles the tracker counts at once; a full table back-pressures", 1, 1 << 20});
  v.visit("dma.outstanding_bytes", c.dma.outstanding_bytes,
          {"byte",
           "the DMA engine's read-ahead buffer: bytes read and not yet acknowledged at the "
           "destination; reads issue as far ahead as it allows",
           64, 1 << 30});
  v.visit("dma.in_flight", c.dma.in_flight, {"", "transfers the DMA engine runs at once", 1, 1024});
  v.visit("dma.chunk_bytes", c.dma.chunk_bytes,
          {"byte", "largest memory request the DMA engine issues", 64, 1 << 24});
  v.visit("dma.urgent_fill", c.dma.urgent_fill,
          {"",
           "share of the read-ahead buffer above which the engine marks its requests urgent "
           "(MCA does not hold them back); 1 marks none but a piece larger than the whole buffer",
           0, 1});
  v.visit("workload.tokens", c.workload.tokens,
          {"token", "tokens per batch: the M dimension of every sublayer GEMM", 1, 1 << 24});
  visit_enum(v, "workload.ring", c.workload.ring, std::array{"descending", "ascending"},
             "direction of T3's ring: descending is the paper's GPU0 -> GPU(n-1) -> ... -> GPU1");
  v.visit("workload.split", c.workload.split,
          {"", "slicing cuts the GEMM into tp x split slices of output rows", 1, 64});
  visit_enum(v, "workload.collective", c.workload.collective, std::array{"auto", "ring", "direct"},
             "how T3's and ideal-rs-nmc's DMA + NMC reduce-scatter reach a chunk's owner: ring "
             "(forwarded hop by hop) or direct (straight to the owner; fully-connected or switch "
             "only); auto: ring on a ring topology, direct otherwise");
  visit_enum(v, "workload.commfuse_engine", c.workload.commfuse_engine, std::array{"sm", "copy"},
             "what moves commfuse's reduce-scatter sends: sm (a ring kernel on the SMs adds and "
             "sends) or copy (the DMA engine copies each step's partial sum to the next GPU; only "
             "the adds run on the SMs)");
  visit_enum(v, "workload.sm_rings", c.workload.sm_rings, std::array{"auto", "one"},
             "rings the SM ring collectives spread their channels over: auto is every ring of a "
             "stride coprime with gpus on a fully-connected topology (strides 1, 3, 5, 7 at 8 "
             "GPUs, each on its own link directions) and one ring elsewhere; one keeps the one "
             "ring g -> g + 1 everywhere");

  // Energy estimate (docs/energy.md): HBM currents per command as DRAMPower bills them.
  auto& e = c.energy.hbm;
  v.visit("energy.hbm.vdd_V", e.vdd_V, {"V", "HBM core supply VDD", 0, 10});
  v.visit("energy.hbm.idd0_mA", e.idd0_mA,
          {"mA", "IDD0: one bank activating and precharging every tRC", 0, 1e5});
  v.visit("energy.hbm.idd2n_mA", e.idd2n_mA,
          {"mA", "IDD2N: precharged standby (no bank has a row open)", 0, 1e5});
  v.visit("energy.hbm.idd3n_mA", e.idd3n_mA,
          {"mA", "IDD3N: active standby (some bank has a row open)", 0, 1e5});
  v.visit("energy.hbm.idd4r_mA", e.idd4r_mA, {"mA", "IDD4R: reading burst after burst", 0, 1e5});
  v.visit("energy.hbm.idd4w_mA", e.idd4w_mA, {"mA", "IDD4W: writing burst after burst", 0, 1e5});
  v.visit("energy.hbm.idd5_mA", e.idd5_mA, {"mA", "IDD5: all-bank refresh", 0, 1e5});
  v.visit("energy.hbm.spec_bus_bits", e.spec_bus_bits,
          {"bit",
           "data bus the currents are given for; a pseudo-channel of hbm.bank.bus_bits draws "
           "bus_bits / spec_bus_bits of them",
           1, 4096});
  v.visit("energy.hbm.simple_pJ_per_bit", e.simple_pJ_per_bit,
          {"pJ/bit",
           "simple HBM model (no commands): energy per bit read or written, an update's bits "
           "counted twice",
           0, 1e6});
  v.visit("energy.nmc.alu_pJ_per_op", c.energy.nmc_alu_pJ_per_op,
          {"pJ", "near-memory ALU: one fp16 add (an update of b bytes is b / 2 adds)", 0, 1e6});
  v.visit("energy.link.pJ_per_bit", c.energy.link_pJ_per_bit,
          {"pJ/bit", "GPU-GPU link: energy per bit on the wire (headers included)", 0, 1e6});
  v.visit("energy.sm.pJ_per_flop", c.energy.sm_pJ_per_flop,
          {"pJ", "SM: energy per fp16 matrix FLOP of the GEMM", 0, 1e6});
  v.visit(
      "energy.l2.pJ_per_byte", c.energy.l2_pJ_per_byte,
      {"pJ/byte", "L2: energy per byte read or written in the L2 by the SMs and the DMA", 0, 1e6});
}

}  // namespace t3
