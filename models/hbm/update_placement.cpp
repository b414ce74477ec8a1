#include "models/hbm/update_placement.h"

#include "protocol/to_size.h"

namespace t3 {

namespace {

// HBM-PIM style (Lee et al., ISCA 2021; Kwon et al., ISSCC 2021): a processing unit beside the
// banks, fed from the row buffer. Only the operand crosses the data bus.
class BankPlacement final : public UpdatePlacement {
 public:
  const char* name() const override { return "bank"; }
  void serve(UpdatePhases& phases, std::uint64_t alu, std::vector<std::uint64_t>&) const override {
    phases.add_in_bank(alu);
  }
};

// Beside the controller on the base die: the bank's data comes out over the bus, the adder sums
// it with the operand, and the sums go back in; each write waits for its own burst's sum.
class BaseDiePlacement final : public UpdatePlacement {
 public:
  const char* name() const override { return "base-die"; }
  void serve(UpdatePhases& phases, std::uint64_t alu,
             std::vector<std::uint64_t>& ready) const override {
    ready.resize(to_size(phases.bursts()));
    phases.read_out(ready.data());
    for (std::uint64_t& at : ready) at += alu;
    phases.write_in(ready.data());
  }
};

}  // namespace

std::shared_ptr<const UpdatePlacement> make_update_placement(NmcPlacement placement) {
  if (placement == NmcPlacement::BaseDie) return std::make_shared<BaseDiePlacement>();
  return std::make_shared<BankPlacement>();
}

}  // namespace t3
