// The global 64-bit address space: each GPU owns one HBM window and one MMIO window.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "config/system_config.h"

namespace t3 {

enum class Window { Hbm, Mmio };

struct Decoded {
  int gpu;
  Window window;
  std::uint64_t offset;  // from the start of the window
};

class AddressMap {
 public:
  AddressMap(const AddressMapConfig& config, int gpus, std::uint64_t hbm_capacity);

  std::uint64_t hbm_base(int gpu) const;
  std::uint64_t mmio_base(int gpu) const;
  std::uint64_t hbm_size() const { return hbm_size_; }
  std::uint64_t mmio_size() const { return config_.mmio_size; }
  int gpus() const { return gpus_; }

  // Who owns [address, address + bytes): nullopt if nobody, or if the range leaves its window.
  std::optional<Decoded> decode(std::uint64_t address, std::uint64_t bytes = 1) const;

  // Throws ConfigError if windows overlap or do not fit in 64 bits.
  void check() const;

 private:
  std::optional<Decoded> in_window(std::uint64_t address, std::uint64_t bytes, std::uint64_t base,
                                   std::uint64_t stride, std::uint64_t size, Window window) const;
  AddressMapConfig config_;
  int gpus_;
  std::uint64_t hbm_size_;
};

}  // namespace t3
