#include "tlm_interconnect/address_map.h"

#include "protocol/hex.h"

namespace t3 {

AddressMap::AddressMap(const AddressMapConfig& config, int gpus, std::uint64_t hbm_capacity)
    : config_(config), gpus_(gpus), hbm_size_(hbm_capacity) {}

std::uint64_t AddressMap::hbm_base(int gpu) const {
  return config_.hbm_base + static_cast<std::uint64_t>(gpu) * config_.hbm_stride;
}

std::uint64_t AddressMap::mmio_base(int gpu) const {
  return config_.mmio_base + static_cast<std::uint64_t>(gpu) * config_.mmio_stride;
}

std::optional<Decoded> AddressMap::in_window(std::uint64_t address, std::uint64_t bytes,
                                             std::uint64_t base, std::uint64_t stride,
                                             std::uint64_t size, Window window) const {
  if (address < base) return std::nullopt;
  const std::uint64_t gpu = (address - base) / stride;
  if (gpu >= static_cast<std::uint64_t>(gpus_)) return std::nullopt;
  const std::uint64_t offset = (address - base) % stride;
  if (offset >= size || bytes > size - offset) return std::nullopt;
  return Decoded{static_cast<int>(gpu), window, offset};
}

std::optional<Decoded> AddressMap::decode(std::uint64_t address, std::uint64_t bytes) const {
  if (auto hit =
          in_window(address, bytes, config_.hbm_base, config_.hbm_stride, hbm_size_, Window::Hbm)) {
    return hit;
  }
  return in_window(address, bytes, config_.mmio_base, config_.mmio_stride, config_.mmio_size,
                   Window::Mmio);
}

void AddressMap::check() const {
  auto fail = [](const std::string& what) { throw ConfigError("address_map: " + what); };
  if (hbm_size_ > config_.hbm_stride) {
    fail("hbm.capacity_bytes (" + hex(hbm_size_) + ") exceeds address_map.hbm_stride (" +
         hex(config_.hbm_stride) + ")");
  }
  if (config_.mmio_size > config_.mmio_stride) {
    fail("address_map.mmio_size exceeds address_map.mmio_stride");
  }
  const auto last = static_cast<std::uint64_t>(gpus_ - 1);
  const auto fits = [&](std::uint64_t base, std::uint64_t stride, std::uint64_t size) {
    if (last != 0 && stride > (~0ull - base) / last) return false;
    return base + last * stride <= ~0ull - size + 1;
  };
  if (!fits(config_.hbm_base, config_.hbm_stride, hbm_size_)) fail("HBM windows pass 2^64");
  if (!fits(config_.mmio_base, config_.mmio_stride, config_.mmio_size)) {
    fail("MMIO windows pass 2^64");
  }
  const std::uint64_t hbm_end = hbm_base(gpus_ - 1) + hbm_size_;  // exclusive, may wrap to 0
  const std::uint64_t mmio_end = mmio_base(gpus_ - 1) + config_.mmio_size;
  const bool hbm_first = config_.hbm_base <= config_.mmio_base;
  const bool disjoint = hbm_first ? (hbm_end != 0 && hbm_end <= config_.mmio_base)
                                  : (mmio_end != 0 && mmio_end <= config_.hbm_base);
  if (!disjoint) {
    fail("the HBM windows [" + hex(config_.hbm_base) + ", ...) and MMIO windows [" +
         hex(config_.mmio_base) + ", ...) overlap");
  }
}

}  // namespace t3
