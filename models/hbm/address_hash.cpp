#include "models/hbm/address_hash.h"

#include <stdexcept>
#include <string>

#include "protocol/to_size.h"

namespace t3 {

LinearHash::LinearHash(const std::vector<std::uint64_t>& image) {
  const std::size_t bytes = (image.size() + 7) / 8;
  tables_.resize(bytes);
  for (std::size_t byte = 0; byte < bytes; ++byte) {
    for (unsigned value = 0; value < 256; ++value) {
      std::uint64_t out = 0;
      for (std::size_t bit = 0; bit < 8; ++bit) {
        const std::size_t i = byte * 8 + bit;
        if ((value >> bit & 1) != 0 && i < image.size()) out ^= image[i];
      }
      tables_[byte][value] = static_cast<std::uint16_t>(out);
    }
  }
}

std::uint64_t ipoly_polynomial(int degree) {
  // x+1, x^2+x+1, x^3+x+1, x^4+x+1, x^5+x^2+1, x^6+x+1, x^7+x+1, x^8+x^4+x^3+x^2+1, x^9+x^4+1,
  // x^10+x^3+1, x^11+x^2+1, x^12+x^6+x^4+x+1.
  static constexpr std::array<std::uint64_t, kMaxIpolyDegree + 1> kPolynomials{
      0, 0x3, 0x7, 0xb, 0x13, 0x25, 0x43, 0x83, 0x11d, 0x211, 0x409, 0x805, 0x1053};
  if (degree < 1 || degree > kMaxIpolyDegree) {
    throw std::logic_error("ipoly_polynomial: no polynomial of degree " + std::to_string(degree));
  }
  return kPolynomials[to_size(degree)];
}

LinearHash ipoly_hash(int degree, int input_bits) {
  const std::uint64_t polynomial = ipoly_polynomial(degree);
  const std::uint64_t top = std::uint64_t{1} << degree;
  std::vector<std::uint64_t> image(to_size(input_bits));
  std::uint64_t power = top ^ polynomial;  // x^degree mod P: the image of input bit 0
  for (auto& bit : image) {
    bit = power;
    power <<= 1;  // times x, reduced mod P
    if ((power & top) != 0) power ^= polynomial;
  }
  return LinearHash(image);
}

LinearHash xor_fold_hash(int degree, int offset, int width, int input_bits) {
  std::vector<std::uint64_t> image(to_size(input_bits));
  for (std::size_t i = 0; i < image.size(); ++i) {
    const int at = static_cast<int>(i % to_size(width)) - offset;  // bit i's place in the digit
    if (at >= 0 && at < degree) image[i] = std::uint64_t{1} << at;
  }
  return LinearHash(image);
}

}  // namespace t3
