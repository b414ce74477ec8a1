// A first-order energy estimate of a run from what the blocks counted: the bank-level HBM's
// commands (ACT, RD, WR, refresh) and standby time billed as DRAMPower bills them from a memspec's
// currents, near-memory updates (a column read and a column write in the bank plus an fp16 add
// per element), link bits, GEMM FLOPs and L2 bytes at a published energy each. Formulas, sources
// and an example: docs/energy.md. It reads statistics; it is no block of the model.
#pragma once

#include <array>
#include <cstdint>

#include <nlohmann/json.hpp>

#include "config/system_config.h"
#include "tlm_interconnect/payload.h"

namespace t3 {

class TpGroup;

// What the estimate counts, summed over the group at one instant (a symmetric run's simulated
// GPUs times the group's replicas).
struct EnergyActivity {
  std::uint64_t activations = 0;                 // ACTs (each with its PRE)
  std::array<std::uint64_t, kOps> bursts{};      // column bursts by op (bank model)
  double bank_open_ns = 0;                       // pseudo-channel time with some row open
  std::array<std::uint64_t, kOps> dram_bytes{};  // by op, both traffic classes
  std::uint64_t l2_bytes = 0;                    // read or written in the L2's arrays
  std::uint64_t link_wire_bytes = 0;             // over every link and direction, headers included
  EnergyActivity operator-(const EnergyActivity& earlier) const;
};

EnergyActivity energy_activity(TpGroup& group);

// One pseudo-channel's energy per command (pJ) and standby power (mW), from energy.hbm's currents
// scaled to hbm.bank.bus_bits and hbm.bank.timing's tRC, tRAS and tRFC:
//   activate  = (IDD0 tRC - IDD3N tRAS - IDD2N (tRC - tRAS)) VDD   (the ACT and its PRE)
//   read      = (IDD4R - IDD3N) tBURST VDD, write likewise with IDD4W
//   refresh   = (IDD5 - IDD3N) tRFC VDD, every tREFI of every pseudo-channel's time
//   standby   = IDD3N VDD with a row open, IDD2N VDD with every bank precharged
struct DramCommandEnergy {
  double activate_pJ = 0, read_pJ = 0, write_pJ = 0, refresh_pJ = 0;
  double active_standby_mW = 0, precharged_standby_mW = 0;
};
DramCommandEnergy dram_command_energy(const SystemConfig& config);

// The estimate, in joules, for `moved` over `elapsed_ns` of the group's `config.gpus` GPUs doing
// `flops` matrix FLOPs: {"unit": "J", "dram": {activate, read, write, refresh, background},
// "nmc": {column, alu}, "link", "sm", "l2", "total"}. Refresh and background (standby) are billed
// by time, as the DRAM refreshes whether or not it is accessed. The simple HBM model bills
// energy.hbm.simple_pJ_per_bit for every bit read or written, an update's twice, under "read",
// "write" and "nmc.column", and no refresh or background of its own.
nlohmann::json energy_estimate(const SystemConfig& config, const EnergyActivity& moved,
                               double elapsed_ns, double flops);

}  // namespace t3
