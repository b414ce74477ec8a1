// Address hashing for the bank model's DRAM map (hbm.bank.address_hash): the functions that
// scramble the channel, pseudo-channel, bank and bank-group digits with higher address bits.
// Both schemes are linear over GF(2), so each is a table lookup per input byte; XORing a digit
// with a function of bits the digit does not include is a bijection (apply it again to undo it).
#pragma once

#include <array>
#include <cstdint>
#include <vector>

namespace t3 {

// A function from a 64-bit input to a few output bits that is linear over GF(2): f(a ^ b) =
// f(a) ^ f(b). Evaluated as the XOR of one table entry per input byte.
class LinearHash {
 public:
  LinearHash() = default;  // the zero function
  // image[i]: f of input bit i alone; inputs use at most image.size() bits.
  explicit LinearHash(const std::vector<std::uint64_t>& image);
  std::uint64_t operator()(std::uint64_t input) const {
    std::uint64_t out = 0;
    for (const auto& table : tables_) {
      out ^= table[input & 0xff];
      input >>= 8;
    }
    return out;
  }

 private:
  std::vector<std::array<std::uint16_t, 256>> tables_;
};

// The irreducible polynomial of `degree` (1..kMaxIpolyDegree) that IPOLY divides by, x^degree
// included (bit i is the coefficient of x^i). Degrees 5 and 6 are GPGPU-Sim's IPOLY(37) and
// IPOLY(67); the others are the primitive polynomials of Peterson's table.
inline constexpr int kMaxIpolyDegree = 12;
std::uint64_t ipoly_polynomial(int degree);

// Rau's IPOLY interleaving (ISCA 1991), in the form GPGPU-Sim/Accel-Sim use for memory partitions
// (Khairy et al., IEEE TPDS 2017): a digit of `degree` bits XORed with f(above) = above(x) *
// x^degree mod P(x) is the remainder of the whole number (above, digit) divided by P(x). Since P
// is irreducible and not x, multiplying by x^k is invertible mod P: 2^degree consecutive
// multiples of any power-of-two stride land on 2^degree distinct digits. `input_bits` bounds the
// input.
LinearHash ipoly_hash(int degree, int input_bits);

// Zhang et al.'s permutation-based interleaving (MICRO 2000): the hashed digits side by side make
// one number of `width` bits (the bank's address, channel to bank) XORed with the row folded to
// that width (the XOR of its `width`-bit pieces, so every row bit counts); this is the slice of
// the fold at bits [offset, offset + degree) for the digit there. One fold over all digits, not
// one per digit: folds of one row to different widths share its parity, so per-digit folds would
// reach only half of the (channel, bank) pairs.
LinearHash xor_fold_hash(int degree, int offset, int width, int input_bits);

}  // namespace t3
