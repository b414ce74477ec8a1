// Register maps: docs/registers.md agrees with each block's own map, and every register is
// exercised through the block's socket.
#include <catch2/catch.hpp>

#include <fstream>
#include <regex>
#include <sstream>

#include <tlm_utils/simple_initiator_socket.h>

#include "models/dma/dma_engine.h"
#include "models/gpu/device_info.h"
#include "models/sm/dispatcher.h"
#include "models/tracker/tracker.h"
#include "protocol/hex.h"
#include "t3sim_version.h"

using namespace t3;

namespace {

struct DocRow {
  std::uint64_t offset;
  std::string name;
  bool writable;
};

// The registers documented under the Markdown heading that starts with `heading`. A table after
// a line "Array at `0xB + 0xS * i`, i = F to N:" lists the registers of one array element at
// offsets inside the element, with `<i>` in their names; it is expanded for every i.
std::vector<DocRow> documented(const std::string& heading) {
  std::ifstream file(std::string(T3SIM_SOURCE_DIR) + "/docs/registers.md");
  REQUIRE(file);
  std::vector<DocRow> rows;
  std::string line;
  bool inside = false;
  std::uint64_t base = 0, stride = 0, first = 0, last = 0;
  bool array = false;
  bool array_rows = false;  // the array's table has started
  const std::regex row(R"(^\| `0x([0-9a-f]+)` \| `([A-Z_0-9<>i]+)` \| (RO|RW) \|)");
  const std::regex array_line(
      R"(^Array at `0x([0-9a-f]+) \+ 0x([0-9a-f]+) \* i`, i = (\d+) to (\d+):)");
  while (std::getline(file, line)) {
    std::smatch match;
    if (line.rfind("## ", 0) == 0) {
      inside = line.rfind("## " + heading, 0) == 0;
      array = false;
    } else if (std::regex_search(line, match, array_line)) {
      array = true;
      array_rows = false;
      base = std::stoull(match[1], nullptr, 16);
      stride = std::stoull(match[2], nullptr, 16);
      first = std::stoull(match[3]);
      last = std::stoull(match[4]);
    } else if (line.empty()) {
      if (array_rows) array = false;  // the blank line after the array's table ends it
    } else if (inside && std::regex_search(line, match, row)) {
      const std::uint64_t offset = std::stoull(match[1], nullptr, 16);
      const std::string name = match[2];
      if (!array) {
        rows.push_back({offset, name, match[3] == "RW"});
        continue;
      }
      array_rows = true;
      for (std::uint64_t i = first; i <= last; ++i) {
        std::string expanded = name;
        expanded.replace(expanded.find("<i>"), 3, std::to_string(i));
        rows.push_back({base + i * stride + offset, expanded, match[3] == "RW"});
      }
    }
  }
  return rows;
}

// Every documented register exists with its name and access, and nothing undocumented exists.
void check_documented(const std::string& heading, const RegisterBlock& block) {
  const auto rows = documented(heading);
  const auto map = block.register_map();
  CHECK(rows.size() == map.size());
  for (const auto& row : rows) {
    INFO(heading << ": offset " << hex(row.offset) << " " << row.name);
    REQUIRE(map.count(row.offset) == 1);
    CHECK(map.at(row.offset).name == row.name);
    CHECK(map.at(row.offset).writable == row.writable);
  }
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
  check_documented("Device info", info);
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

TEST_CASE("docs/registers.md lists exactly the dispatcher registers") {
  Dispatcher dispatcher("dispatcher", SmConfig{}, AddressMap(AddressMapConfig{}, 2, 1ull << 30), 0,
                        sc_core::sc_time(10, sc_core::SC_NS));
  check_documented("Dispatcher", dispatcher);
}

TEST_CASE("docs/registers.md lists exactly the tracker registers") {
  Tracker tracker("tracker", TrackerConfig{}, sc_core::sc_time(10, sc_core::SC_NS), 0);
  check_documented("Tracker", tracker);
}

TEST_CASE("docs/registers.md lists exactly the DMA engine registers") {
  DmaEngine dma("dma", DmaConfig{}, sc_core::sc_time(10, sc_core::SC_NS), 0);
  check_documented("DMA engine", dma);
}
