// Register maps: docs/registers.md agrees with each block's own map, and every register is
// exercised through the block's socket.
#include <catch2/catch.hpp>

#include <fstream>
#include <regex>
#include <sstream>

#include <tlm_utils/simple_initiator_socket.h>

#include "models/gpu/device_info.h"
#include "t3sim_version.h"

using namespace t3;

namespace {

struct DocRow {
  std::uint64_t offset;
  std::string name;
  bool writable;
};

// The rows of the table under the Markdown heading that starts with `heading`.
std::vector<DocRow> documented(const std::string& heading) {
  std::ifstream file(std::string(T3SIM_SOURCE_DIR) + "/docs/registers.md");
  REQUIRE(file);
  std::vector<DocRow> rows;
  std::string line;
  bool inside = false;
  const std::regex row(R"(^\| `0x([0-9a-f]+)` \| `([A-Z_0-9]+)` \| (RO|RW) \|)");
  while (std::getline(file, line)) {
    if (line.rfind("## ", 0) == 0) inside = line.rfind("## " + heading, 0) == 0;
    std::smatch match;
    if (inside && std::regex_search(line, match, row)) {
      rows.push_back({std::stoull(match[1], nullptr, 16), match[2], match[3] == "RW"});
    }
  }
  return rows;
}

struct Probe : sc_core::sc_module {
  tlm_utils::simple_initiator_socket<Probe> socket{"socket"};
  std::function<void(Probe&)> body;
  explicit Probe(sc_core::sc_module_name name) : sc_module(name) {
    SC_HAS_PROCESS(Probe);
    SC_THREAD(run);
  }
  void run() { body(*this); }
  tlm::tlm_response_status access(tlm::tlm_command command, std::uint64_t offset,
                                  std::uint32_t& value, unsigned length = 4) {
    std::uint32_t buffer[2] = {value, 0};
    tlm::tlm_generic_payload payload;
    payload.set_command(command);
    payload.set_address(offset);
    payload.set_data_ptr(reinterpret_cast<unsigned char*>(buffer));
    payload.set_data_length(length);
    payload.set_streaming_width(length);
    sc_core::sc_time delay;
    socket->b_transport(payload, delay);
    wait(delay);
    value = buffer[0];
    return payload.get_response_status();
  }
};

}  // namespace

TEST_CASE("docs/registers.md lists exactly the device-info registers") {
  DeviceInfo info("info", sc_core::sc_time(10, sc_core::SC_NS), 3, 8, 0x30000000000ull);
  const auto rows = documented("Device info");
  const auto map = info.register_map();
  REQUIRE(rows.size() == map.size());
  for (const auto& row : rows) {
    INFO("offset " << row.offset);
    REQUIRE(map.count(row.offset) == 1);
    CHECK(map.at(row.offset).name == row.name);
    CHECK(map.at(row.offset).writable == row.writable);
  }
}

TEST_CASE("every device-info register answers as documented") {
  DeviceInfo info("info", sc_core::sc_time(10, sc_core::SC_NS), 3, 8, 0x30000000000ull);
  Probe probe("probe");
  probe.socket.bind(info.socket);
  bool ran = false;
  probe.body = [&](Probe& p) {
    const auto read = [&](std::uint64_t offset) {
      std::uint32_t value = 0;
      CHECK(p.access(tlm::TLM_READ_COMMAND, offset, value) == tlm::TLM_OK_RESPONSE);
      return value;
    };
    CHECK(read(DeviceInfo::kId) == DeviceInfo::kMagic);
    CHECK(read(DeviceInfo::kVersion) == kT3simVersion);
    CHECK(read(DeviceInfo::kGpuIndex) == 3u);
    CHECK(read(DeviceInfo::kGpuCount) == 8u);
    CHECK(read(DeviceInfo::kHbmBaseLow) == 0u);
    CHECK(read(DeviceInfo::kHbmBaseHigh) == 0x300u);
    CHECK(read(DeviceInfo::kScratch) == 0u);
    const sc_core::sc_time before = sc_core::sc_time_stamp();
    std::uint32_t value = 0x5a5a0001;
    CHECK(p.access(tlm::TLM_WRITE_COMMAND, DeviceInfo::kScratch, value) == tlm::TLM_OK_RESPONSE);
    CHECK(sc_core::sc_time_stamp() - before == sc_core::sc_time(10, sc_core::SC_NS));
    CHECK(read(DeviceInfo::kScratch) == 0x5a5a0001u);
    // Every read-only register refuses a write and keeps its value.
    for (const auto& [offset, reg] : info.register_map()) {
      if (reg.writable) continue;
      const std::uint32_t before_value = read(offset);
      std::uint32_t junk = 0xffffffff;
      CHECK(p.access(tlm::TLM_WRITE_COMMAND, offset, junk) == tlm::TLM_COMMAND_ERROR_RESPONSE);
      CHECK(read(offset) == before_value);
    }
    // 8-byte access covers two registers; misaligned, odd-length and unmapped accesses fail.
    std::uint32_t pair = 0;
    CHECK(p.access(tlm::TLM_READ_COMMAND, DeviceInfo::kId, pair, 8) == tlm::TLM_OK_RESPONSE);
    CHECK(pair == DeviceInfo::kMagic);
    CHECK(p.access(tlm::TLM_READ_COMMAND, 0x2, value) == tlm::TLM_BURST_ERROR_RESPONSE);
    CHECK(p.access(tlm::TLM_READ_COMMAND, 0x0, value, 2) == tlm::TLM_BURST_ERROR_RESPONSE);
    CHECK(p.access(tlm::TLM_READ_COMMAND, 0x800, value) == tlm::TLM_ADDRESS_ERROR_RESPONSE);
    ran = true;
  };
  sc_core::sc_start();
  CHECK(ran);
}
