// Address hashing of the bank model's DRAM map (hbm.bank.address_hash): the GF(2) hash functions,
// decoding that stays a bijection on every preset's geometry, power-of-two strides that reach
// every channel and bank, and the plain map as it was.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "config/config_io.h"
#include "models/hbm/address_hash.h"
#include "models/hbm/dram_bank.h"

using namespace t3;
using Catch::Matchers::Contains;

namespace {

// The remainder of a divided by b, polynomials over GF(2) (bit i: coefficient of x^i).
std::uint64_t remainder(std::uint64_t a, std::uint64_t b) {
  const auto degree = [](std::uint64_t p) { return 63 - __builtin_clzll(p); };
  while (a != 0 && degree(a) >= degree(b)) a ^= b << (degree(a) - degree(b));
  return a;
}

HbmConfig preset_hbm(const std::string& preset, AddressHash hash) {
  HbmConfig config = load_system(preset).hbm;
  config.bank.address_hash = hash;
  return config;
}

// Where burst `i` of granule `g` lies: channel, pseudo-channel, bank group, bank, row and column.
using Place = std::tuple<int, int, int, int, std::uint64_t, std::uint64_t>;

Place place_of(const DramAddressMap& map, const HbmConfig& config, std::uint64_t offset) {
  const DramLocation where = map.locate(offset, static_cast<std::uint32_t>(map.burst_bytes()));
  const auto granule_bursts = static_cast<int>(config.interleave_bytes / map.burst_bytes());
  const std::uint64_t column =
      map.column_of(offset) * static_cast<std::uint64_t>(granule_bursts / map.bank_groups()) +
      static_cast<std::uint64_t>(where.first_burst / map.bank_groups());
  return {where.channel, where.pseudo_channel, where.first_group, where.bank, where.row, column};
}

// No two bursts of [begin, begin + bytes) share a place, and every place is inside the geometry.
void check_one_to_one(const HbmConfig& config, std::uint64_t begin, std::uint64_t bytes) {
  const DramAddressMap map(config);
  std::set<Place> seen;
  for (std::uint64_t offset = begin; offset < begin + bytes; offset += map.burst_bytes()) {
    const Place place = place_of(map, config, offset);
    REQUIRE(std::get<0>(place) < config.channels);
    REQUIRE(std::get<1>(place) < config.bank.pseudo_channels);
    REQUIRE(std::get<2>(place) < config.bank.bank_groups);
    REQUIRE(std::get<3>(place) < config.bank.banks_per_group);
    REQUIRE(seen.insert(place).second);
  }
}

}  // namespace

TEST_CASE("IPOLY divides by irreducible polynomials: x^k is invertible modulo each", "[hash]") {
  for (int degree = 1; degree <= kMaxIpolyDegree; ++degree) {
    const std::uint64_t p = ipoly_polynomial(degree);
    INFO("degree " << degree);
    CHECK(p >> degree == 1);
    for (std::uint64_t factor = 2; factor < (std::uint64_t{1} << (degree / 2 + 1)); ++factor) {
      if (63 - __builtin_clzll(factor) <= degree / 2) CHECK(remainder(p, factor) != 0);
    }
  }
  CHECK(ipoly_polynomial(5) == 37);  // GPGPU-Sim's IPOLY(37) for 32 banks
  CHECK(ipoly_polynomial(6) == 67);  // and IPOLY(67) for 64
  CHECK_THROWS(ipoly_polynomial(kMaxIpolyDegree + 1));
}

TEST_CASE("IPOLY of (above, digit) is the remainder of the whole number", "[hash]") {
  // digit ^ ipoly(above) == (above * 2^degree + digit) mod P: Rau's definition.
  for (int degree : {1, 2, 4, 5, 7}) {
    const LinearHash hash = ipoly_hash(degree, 40);
    const std::uint64_t p = ipoly_polynomial(degree);
    for (std::uint64_t above : {0ull, 1ull, 2ull, 0x35ull, 0x12345ull, 0xfedcba9876ull}) {
      for (std::uint64_t digit = 0; digit < (1ull << degree); digit += 3) {
        INFO("degree " << degree << " above " << above << " digit " << digit);
        CHECK((digit ^ hash(above)) == remainder(above << degree | digit, p));
      }
    }
  }
}

TEST_CASE("XOR fold is the XOR of the input's pieces, sliced to each digit", "[hash]") {
  // A whole 3-bit fold.
  const LinearHash fold = xor_fold_hash(3, 0, 3, 32);
  CHECK(fold(0) == 0);
  CHECK(fold(05) == 05);
  CHECK(fold(0123) == (1 ^ 2 ^ 3));
  CHECK(fold(07070707) == 0);
  CHECK(xor_fold_hash(2, 0, 2, 8)(0xff) == 0);  // four pieces of 3
  // 0xe7 folds to 3 ^ 1 ^ 2 ^ 3; bit 8 is past the 8 input bits (counted, it would give 2).
  CHECK(xor_fold_hash(2, 0, 2, 8)(0x1e7) == 3);
  CHECK(xor_fold_hash(4, 0, 4, 16)(0x1234) == 4);  // 1 ^ 2 ^ 3 ^ 4
  // A 6-bit fold in slices of 2 (bits 0-1) and 4 (bits 2-5): 0x5a3 folds to 0x16 ^ 0x23 = 0x35.
  CHECK(xor_fold_hash(2, 0, 6, 12)(0x5a3) == 0x1);
  CHECK(xor_fold_hash(4, 2, 6, 12)(0x5a3) == 0xd);
}

TEST_CASE("Hashed maps put no two bursts of a row block or of a whole-geometry window together",
          "[hash][bank][map]") {
  for (const std::string preset : {"t3-paper", "a100-8", "h100-8", "mi300x-8"}) {
    for (AddressHash hash : {AddressHash::Plain, AddressHash::Xor, AddressHash::Ipoly}) {
      const HbmConfig config = preset_hbm(preset, hash);
      INFO(preset << ", address_hash " << static_cast<int>(hash));
      const auto page = static_cast<std::uint64_t>(config.bank.page_bytes);
      // Every (channel, pseudo-channel, bank) once per row: channels x 2 x 16 pages.
      const std::uint64_t geometry = static_cast<std::uint64_t>(config.channels) *
                                     static_cast<std::uint64_t>(config.bank.pseudo_channels) *
                                     static_cast<std::uint64_t>(config.bank.bank_groups) *
                                     static_cast<std::uint64_t>(config.bank.banks_per_group) * page;
      check_one_to_one(config, 7 * geometry + 3 * page, page);  // a row-sized block
      // Two rows' worth, starting mid-row so the window straddles a row boundary.
      check_one_to_one(config, 5 * geometry + geometry / 2 + 256, 2 * geometry);
    }
  }
}

TEST_CASE(
    "Hashed maps keep each granule's bursts together and a DRAM row's granules in one "
    "plain row block",
    "[hash][bank][map]") {
  // A sequential stream meets each DRAM row in the span the plain map gives it, so its row hits
  // stay: the granules of one (channel, pseudo-channel, bank, row) under the hash are those of one
  // (bank, row) block of the plain map (1 MiB / 4 banks on t3-paper).
  for (AddressHash hash : {AddressHash::Xor, AddressHash::Ipoly}) {
    const HbmConfig config = preset_hbm("t3-paper", hash);
    HbmConfig plain_config = config;
    plain_config.bank.address_hash = AddressHash::Plain;
    const DramAddressMap map(config), plain(plain_config);
    std::map<std::tuple<int, int, int, std::uint64_t>, std::set<std::pair<int, std::uint64_t>>>
        blocks;  // DRAM row -> the plain (bank, row) blocks its granules come from
    for (std::uint64_t offset = 0; offset < (8u << 20); offset += 256) {
      const DramLocation where = map.locate(offset, 256);
      const DramLocation was = plain.locate(offset, 256);
      CHECK(where.bursts == 8);
      CHECK(where.row == was.row);
      blocks[{where.channel, where.pseudo_channel, where.bank, where.row}].insert(
          {was.bank, was.row});
    }
    CHECK(blocks.size() == 32 * 2 * 4 * 8);
    for (const auto& [row, from] : blocks) CHECK(from.size() == 1);
  }
}

// Whether a stream of `accesses` at `stride` bytes from 0 meets every channel and every bank
// index of every channel.
void check_reaches_all(const HbmConfig& config, std::uint64_t stride, std::uint64_t accesses) {
  const DramAddressMap map(config);
  const auto channels = static_cast<std::size_t>(config.channels);
  const auto banks = static_cast<std::size_t>(config.bank.banks_per_group);
  std::vector<bool> channel_seen(channels), bank_seen(channels * banks);
  for (std::uint64_t i = 0; i < accesses; ++i) {
    const DramLocation where = map.locate(i * stride, 256);
    channel_seen[static_cast<std::size_t>(where.channel)] = true;
    bank_seen[static_cast<std::size_t>(where.channel) * banks +
              static_cast<std::size_t>(where.bank)] = true;
  }
  CHECK(std::count(channel_seen.begin(), channel_seen.end(), true) ==
        static_cast<std::ptrdiff_t>(channels));
  CHECK(std::count(bank_seen.begin(), bank_seen.end(), true) ==
        static_cast<std::ptrdiff_t>(channels * banks));
}

TEST_CASE("Power-of-two strides reach every channel and bank under a hashed map",
          "[hash][bank][map]") {
  for (const std::string preset : {"t3-paper", "a100-8", "h100-8", "mi300x-8"}) {
    const HbmConfig ipoly = preset_hbm(preset, AddressHash::Ipoly);
    const HbmConfig xor_fold = preset_hbm(preset, AddressHash::Xor);
    // One row of every bank of every channel (1 MiB on t3-paper, 4 MiB on mi300x-8).
    const std::uint64_t row_period = static_cast<std::uint64_t>(ipoly.channels) *
                                     static_cast<std::uint64_t>(ipoly.bank.pseudo_channels) *
                                     static_cast<std::uint64_t>(ipoly.bank.bank_groups) *
                                     static_cast<std::uint64_t>(ipoly.bank.banks_per_group) *
                                     static_cast<std::uint64_t>(ipoly.bank.page_bytes);
    for (std::uint64_t stride = 256; stride <= (4u << 20); stride *= 2) {
      INFO(preset << ", stride " << stride);
      // IPOLY hashes with every bit above a digit: 4 accesses per bank are plenty.
      check_reaches_all(ipoly, stride, 4 * row_period / 1024);
      // The XOR fold hashes with the row alone: a stride within a row period keeps the plain
      // map's digits until the row changes, so its stream must cross 1024 rows.
      check_reaches_all(xor_fold, stride,
                        std::max<std::uint64_t>(1024 * row_period / stride, 4096));
    }
  }
  // The plain map leaves a 1 MiB stride in one channel and one bank: what the hash is for.
  const DramAddressMap plain(preset_hbm("t3-paper", AddressHash::Plain));
  std::set<std::pair<int, int>> banks;
  for (std::uint64_t i = 0; i < 16384; ++i) {
    const DramLocation where = plain.locate(i << 20, 256);
    banks.insert({where.channel, where.bank});
  }
  CHECK(banks.size() == 1);
}

TEST_CASE("The plain map decodes as it always has", "[hash][bank][map]") {
  // Fixed decodes of t3-paper's plain map: granule g is channel g % 32, pseudo-channel (g / 32) %
  // 2, column (g / 64) % 16, bank (g / 1024) % 4, row g / 4096; bursts start at bank group 0.
  const DramAddressMap map(preset_hbm("t3-paper", AddressHash::Plain));
  const std::uint64_t granule = 4096 * 77 + 1024 * 3 + 64 * 9 + 32 * 1 + 21;
  const DramLocation where = map.locate(granule * 256 + 96, 128);
  CHECK(where.channel == 21);
  CHECK(where.pseudo_channel == 1);
  CHECK(where.bank == 3);
  CHECK(where.row == 77);
  CHECK(map.column_of(granule * 256) == 9);
  CHECK(where.first_burst == 3);
  CHECK(where.first_group == 3);
  CHECK(where.bursts == 4);
  // h100-8: 80 channels, a modulo interleave of the granule.
  const DramAddressMap h100(preset_hbm("h100-8", AddressHash::Plain));
  const DramLocation far = h100.locate(1000003ull * 256, 256);
  CHECK(far.channel == 1000003 % 80);
  CHECK(far.pseudo_channel == 1000003 / 80 % 2);
  CHECK(far.bank == 1000003 / (80 * 2 * 16) % 4);
  CHECK(far.row == 1000003 / (80 * 2 * 16 * 4));
  CHECK(far.first_group == 0);
}

TEST_CASE("The hashed maps move digits the plain map keeps", "[hash][bank][map]") {
  // Not the plain map under another name: somewhere each digit differs.
  for (AddressHash hash : {AddressHash::Xor, AddressHash::Ipoly}) {
    const DramAddressMap map(preset_hbm("t3-paper", hash));
    const DramAddressMap plain(preset_hbm("t3-paper", AddressHash::Plain));
    bool channel = false, pseudo_channel = false, bank = false, group = false;
    // Over 2 GiB (2048 rows), a step that moves every plain digit.
    for (std::uint64_t offset = 0; offset < (2ull << 30); offset += (64u << 10) + 256) {
      const DramLocation a = map.locate(offset, 32), b = plain.locate(offset, 32);
      channel |= a.channel != b.channel;
      pseudo_channel |= a.pseudo_channel != b.pseudo_channel;
      bank |= a.bank != b.bank;
      group |= a.first_group != b.first_group;
    }
    INFO("address_hash " << static_cast<int>(hash));
    CHECK(channel);
    CHECK(pseudo_channel);
    CHECK(bank);
    CHECK(group);
  }
}

TEST_CASE("A bad address_hash name is refused naming the key and the value", "[hash]") {
  SystemConfig config;
  CHECK_THROWS_WITH(apply_override(config, "hbm.bank.address_hash=crc"),
                    Contains("hbm.bank.address_hash") && Contains("'crc'"));
  apply_override(config, "hbm.bank.address_hash=plain");
  CHECK(config.hbm.bank.address_hash == AddressHash::Plain);
  CHECK(SystemConfig{}.hbm.bank.address_hash == AddressHash::Ipoly);
  // Every GPU preset hashes; dramsys-hbm2 keeps the plain map, the one its DRAMSys address map
  // (configs/dramsys/) translates, so that a trace means the same in both simulators.
  for (const std::string& preset : preset_names()) {
    INFO(preset);
    CHECK(load_system(preset).hbm.bank.address_hash ==
          (preset == "dramsys-hbm2" ? AddressHash::Plain : AddressHash::Ipoly));
  }
}
