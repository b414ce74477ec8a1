#include "experiments/energy.h"

#include <algorithm>

#include "config/dram_timing.h"
#include "models/system/tp_group.h"

namespace t3 {

namespace {

constexpr double kJoulesPerPicojoule = 1e-12;

std::uint64_t sum(const L2Stats::PerClass& by_class) {
  std::uint64_t total = 0;
  for (std::uint64_t v : by_class) total += v;
  return total;
}

// Bytes the L2's arrays read or wrote: the sectors the SMs' and the DMA's cached accesses touched,
// fills from memory and write-backs to it. Uncached accesses and updates pass by the arrays.
std::uint64_t l2_array_bytes(const L2Stats& s, std::int64_t sector_bytes) {
  const std::uint64_t sectors = sum(s.read_hit_sectors) + sum(s.read_miss_sectors) +
                                sum(s.write_hit_sectors) + sum(s.write_miss_sectors);
  return sectors * static_cast<std::uint64_t>(sector_bytes) + sum(s.fill_bytes) +
         sum(s.writeback_bytes);
}

double pseudo_channels(const SystemConfig& config) {
  return static_cast<double>(config.gpus * config.hbm.channels * config.hbm.bank.pseudo_channels);
}

nlohmann::json dram_bank_energy(const SystemConfig& config, const EnergyActivity& moved,
                                double elapsed_ns) {
  const DramCommandEnergy e = dram_command_energy(config);
  constexpr int kRead = static_cast<int>(Op::Read), kWrite = static_cast<int>(Op::Write);
  const double total_ns = elapsed_ns * pseudo_channels(config);
  const double open_ns = std::min(moved.bank_open_ns, total_ns);
  const double background_pJ =
      open_ns * e.active_standby_mW + (total_ns - open_ns) * e.precharged_standby_mW;
  const double refi_ns = dram_timing_ns(config.hbm).refi;  // 0: no refresh
  const double refreshes = refi_ns > 0 ? total_ns / refi_ns : 0.0;
  const auto joules = [](double count, double pJ) { return count * pJ * kJoulesPerPicojoule; };
  return {{"activate", joules(static_cast<double>(moved.activations), e.activate_pJ)},
          {"read", joules(static_cast<double>(moved.bursts[kRead]), e.read_pJ)},
          {"write", joules(static_cast<double>(moved.bursts[kWrite]), e.write_pJ)},
          {"refresh", joules(refreshes, e.refresh_pJ)},
          {"background", background_pJ * kJoulesPerPicojoule}};
}

nlohmann::json dram_simple_energy(const SystemConfig& config, const EnergyActivity& moved) {
  const double per_byte_J = config.energy.hbm.simple_pJ_per_bit * 8.0 * kJoulesPerPicojoule;
  return {
      {"activate", 0.0},
      {"read", static_cast<double>(moved.dram_bytes[static_cast<int>(Op::Read)]) * per_byte_J},
      {"write", static_cast<double>(moved.dram_bytes[static_cast<int>(Op::Write)]) * per_byte_J},
      {"refresh", 0.0},
      {"background", 0.0}};
}

// An update's bank work beside the ALU: each burst read and written in the bank (bank model), or
// its bits twice at the per-bit energy (simple model).
double nmc_column_J(const SystemConfig& config, const EnergyActivity& moved) {
  constexpr int kUpdate = static_cast<int>(Op::Update);
  if (config.hbm.model == HbmModel::Simple) {
    return 2.0 * static_cast<double>(moved.dram_bytes[kUpdate]) * 8.0 *
           config.energy.hbm.simple_pJ_per_bit * kJoulesPerPicojoule;
  }
  const DramCommandEnergy e = dram_command_energy(config);
  return static_cast<double>(moved.bursts[kUpdate]) * (e.read_pJ + e.write_pJ) *
         kJoulesPerPicojoule;
}

double sum_of(const nlohmann::json& components) {
  double total = 0;
  for (const auto& [name, value] : components.items()) total += value.get<double>();
  return total;
}

}  // namespace

EnergyActivity EnergyActivity::operator-(const EnergyActivity& earlier) const {
  EnergyActivity delta = *this;
  delta.activations -= earlier.activations;
  for (int op = 0; op < kOps; ++op) {
    delta.bursts[op] -= earlier.bursts[op];
    delta.dram_bytes[op] -= earlier.dram_bytes[op];
  }
  delta.bank_open_ns -= earlier.bank_open_ns;
  delta.l2_bytes -= earlier.l2_bytes;
  delta.link_wire_bytes -= earlier.link_wire_bytes;
  return delta;
}

EnergyActivity energy_activity(TpGroup& group) {
  EnergyActivity a;
  const std::int64_t sector_bytes = group.config().l2.sector_bytes;
  for (int g = 0; g < group.gpus(); ++g) {
    const HbmStats& memory = group.gpu(g).memory.stats();
    a.activations += memory.row_misses;  // every bank access that missed opened its row
    a.bank_open_ns += memory.bank_open_ns;
    for (int op = 0; op < kOps; ++op) {
      a.bursts[op] += memory.column_bursts[op];
      for (std::uint64_t bytes : memory.bytes[op]) a.dram_bytes[op] += bytes;
    }
    a.l2_bytes += l2_array_bytes(group.gpu(g).l2.stats(), sector_bytes);
  }
  for (int l = 0; l < group.links(); ++l) {
    for (int direction = 0; direction < 2; ++direction) {
      a.link_wire_bytes += group.link(l).stats(direction).wire_bytes;
    }
  }
  const auto n = static_cast<std::uint64_t>(group.replicas());
  a.activations *= n;
  a.bank_open_ns *= static_cast<double>(n);
  for (int op = 0; op < kOps; ++op) {
    a.bursts[op] *= n;
    a.dram_bytes[op] *= n;
  }
  a.l2_bytes *= n;
  a.link_wire_bytes *= n;
  return a;
}

DramCommandEnergy dram_command_energy(const SystemConfig& config) {
  const HbmEnergyConfig& c = config.energy.hbm;
  const DramTimingNs t = dram_timing_ns(config.hbm);
  // A pseudo-channel is bus_bits of the spec's bus: its banks, rows and bursts are that share.
  const double share =
      static_cast<double>(config.hbm.bank.bus_bits) / static_cast<double>(c.spec_bus_bits);
  const double vdd = c.vdd_V * share;  // mA x ns x V = pJ; mA x V = mW
  DramCommandEnergy e;
  e.activate_pJ = (c.idd0_mA * t.rc - c.idd3n_mA * t.ras - c.idd2n_mA * (t.rc - t.ras)) * vdd;
  e.read_pJ = (c.idd4r_mA - c.idd3n_mA) * t.burst * vdd;
  e.write_pJ = (c.idd4w_mA - c.idd3n_mA) * t.burst * vdd;
  e.refresh_pJ = (c.idd5_mA - c.idd3n_mA) * t.rfc * vdd;
  e.active_standby_mW = c.idd3n_mA * vdd;
  e.precharged_standby_mW = c.idd2n_mA * vdd;
  return e;
}

nlohmann::json energy_estimate(const SystemConfig& config, const EnergyActivity& moved,
                               double elapsed_ns, double flops) {
  const EnergyConfig& e = config.energy;
  const bool banked = config.hbm.model == HbmModel::Bank;
  const nlohmann::json dram =
      banked ? dram_bank_energy(config, moved, elapsed_ns) : dram_simple_energy(config, moved);
  // One fp16 add per two bytes updated.
  const double alu_ops = static_cast<double>(moved.dram_bytes[static_cast<int>(Op::Update)]) / 2.0;
  const nlohmann::json nmc = {{"column", nmc_column_J(config, moved)},
                              {"alu", alu_ops * e.nmc_alu_pJ_per_op * kJoulesPerPicojoule}};
  const double link =
      static_cast<double>(moved.link_wire_bytes) * 8.0 * e.link_pJ_per_bit * kJoulesPerPicojoule;
  const double sm = flops * e.sm_pJ_per_flop * kJoulesPerPicojoule;
  const double l2 = static_cast<double>(moved.l2_bytes) * e.l2_pJ_per_byte * kJoulesPerPicojoule;
  return {{"unit", "J"},
          {"dram", dram},
          {"nmc", nmc},
          {"link", link},
          {"sm", sm},
          {"l2", l2},
          {"total", sum_of(dram) + sum_of(nmc) + link + sm + l2}};
}

}  // namespace t3
