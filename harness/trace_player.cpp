// sc_spawn: each in-flight slot is a dynamic thread.
#define SC_INCLUDE_DYNAMIC_PROCESSES
#include "harness/trace_player.h"

#include <algorithm>
#include <cstring>

#include "models/hbm/dram_bank.h"
#include "protocol/hex.h"
#include "tlm_interconnect/element.h"

namespace t3 {

namespace {

constexpr std::uint64_t kGoldenPageBytes = 4096;
constexpr std::size_t kReportedFailures = 16;  // then only counted

void note(std::vector<std::string>& list, const std::string& what) {
  if (list.size() < kReportedFailures) list.push_back(what);
}

Op op_of(StlCommand command) {
  switch (command) {
    case StlCommand::Read:
      return Op::Read;
    case StlCommand::Write:
      return Op::Write;
    case StlCommand::Update:
      return Op::Update;
  }
  return Op::Read;
}

}  // namespace

BankActivity bank_activity(const std::vector<StlRecord>& records, const HbmConfig& hbm) {
  const DramAddressMap map(hbm);
  const auto granule = static_cast<std::uint64_t>(hbm.interleave_bytes);
  BankActivity activity;
  for (const StlRecord& record : records) {
    const std::uint64_t end = record.address + record.length;
    for (std::uint64_t at = record.address; at < end;) {
      const std::uint64_t next = std::min(end, (at / granule + 1) * granule);
      const DramLocation where = map.locate(at, static_cast<std::uint32_t>(next - at));
      for (int burst = where.first_burst; burst < where.first_burst + where.bursts; ++burst) {
        BankCounts& counts = activity.banks[{where.channel, where.pseudo_channel,
                                             burst % map.bank_groups(), where.bank}];
        if (record.command != StlCommand::Write) ++counts.reads;
        if (record.command != StlCommand::Read) ++counts.writes;
      }
      at = next;
    }
  }
  return activity;
}

nlohmann::json to_json(const BankActivity& activity) {
  nlohmann::json banks = nlohmann::json::array();
  for (const auto& [where, counts] : activity.banks) {
    const auto [channel, pseudo_channel, group, bank] = where;
    banks.push_back({{"channel", channel},
                     {"pseudo_channel", pseudo_channel},
                     {"bank_group", group},
                     {"bank", bank},
                     {"read_bursts", counts.reads},
                     {"write_bursts", counts.writes}});
  }
  return banks;
}

double TracePlayResult::bandwidth_GBps() const {
  const double seconds = (end - start).to_seconds();
  return seconds > 0 ? static_cast<double>(bytes) / seconds / 1e9 : 0.0;
}

TracePlayer::TracePlayer(sc_core::sc_module_name name, std::vector<StlRecord> records,
                         const TracePlayerOptions& options)
    : sc_module(name), socket("socket"), records_(std::move(records)), options_(options) {
  sc_assert(options_.outstanding > 0);
  result_.latency_ns.resize(records_.size());
  SC_HAS_PROCESS(TracePlayer);
  SC_THREAD(run);
}

void TracePlayer::run() {
  active_ = options_.outstanding;
  for (int s = 0; s < options_.outstanding; ++s) sc_core::sc_spawn([this] { slot(); });
  wait(all_done_);
  done_ = true;
}

// Slots share one cursor, so requests issue in trace order: whichever slot is free takes the
// next request and (unless saturating) waits for its timestamp.
void TracePlayer::slot() {
  while (next_ < records_.size()) {
    const std::size_t index = next_++;
    if (!options_.saturate) {
      const sc_core::sc_time due = options_.period * static_cast<double>(records_[index].time);
      if (due > sc_core::sc_time_stamp()) wait(due - sc_core::sc_time_stamp());
    }
    play(index);
  }
  if (--active_ == 0) all_done_.notify(sc_core::SC_ZERO_TIME);
}

void TracePlayer::play(std::size_t index) {
  const StlRecord& record = records_[index];
  T3Extension extension;
  extension.op = op_of(record.command);
  extension.element = options_.element;
  extension.cache_hint = options_.cache_hint;
  extension.unit_kind = UnitKind::TrafficGenerator;
  tlm::tlm_generic_payload* payload =
      make_payload(pool_, options_.base + record.address, record.length, extension);
  unsigned char* data = payload->get_data_ptr();
  if (record.command == StlCommand::Read || record.data.empty()) {
    std::memset(data, 0, record.length);
  } else {
    std::memcpy(data, record.data.data(), record.length);
  }
  const bool writes = record.command != StlCommand::Read;
  InFlight& mine = in_flight_[index] = {record.address, record.address + record.length, writes};
  if (!writes) {  // a write still in flight over these bytes makes the read's value open
    for (const auto& [other, flight] : in_flight_) {
      if (flight.writes && flight.begin < mine.end && mine.begin < flight.end)
        mine.disturbed = true;
    }
  }
  const sc_core::sc_time issued = sc_core::sc_time_stamp();
  if (result_.requests == 0) result_.start = issued;
  ++result_.requests;
  sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
  socket->b_transport(*payload, delay);
  if (delay > sc_core::SC_ZERO_TIME) wait(delay);
  const sc_core::sc_time finished = sc_core::sc_time_stamp();
  result_.latency_ns[index] = (finished - issued).to_seconds() * 1e9;
  result_.end = std::max(result_.end, finished);
  result_.bytes += record.length;
  const bool disturbed = in_flight_[index].disturbed;
  in_flight_.erase(index);
  if (payload->is_response_error()) {
    note(result_.errors, "line " + std::to_string(record.line) + ": " +
                             payload->get_response_string() + " at " + hex(record.address));
  } else if (options_.check_data) {
    if (writes) {
      apply_to_golden(record, data);
      for (auto& [other, flight] : in_flight_) {
        if (!flight.writes && flight.begin < record.address + record.length &&
            record.address < flight.end) {
          flight.disturbed = true;
        }
      }
    } else {
      check_read(record, data, disturbed);
    }
  }
  payload->release();
}

unsigned char* TracePlayer::golden_byte(std::uint64_t address) {
  auto& page = golden_[address / kGoldenPageBytes];
  if (page.empty()) page.assign(kGoldenPageBytes, 0);
  return page.data() + address % kGoldenPageBytes;
}

// The golden memory, byte by byte (an update's elements may straddle its pages: a scratch copy).
void TracePlayer::apply_to_golden(const StlRecord& record, const unsigned char* data) {
  std::vector<unsigned char> bytes(record.length);
  for (std::uint32_t i = 0; i < record.length; ++i) bytes[i] = *golden_byte(record.address + i);
  if (record.command == StlCommand::Update) {
    add_elements(bytes.data(), data, bytes.size(), options_.element);
  } else {
    std::memcpy(bytes.data(), data, bytes.size());
  }
  for (std::uint32_t i = 0; i < record.length; ++i) *golden_byte(record.address + i) = bytes[i];
}

// A read line with data expects that data; one without expects the golden memory, unless a write
// over its bytes was in flight with it (then either value is right and the read is not checked).
void TracePlayer::check_read(const StlRecord& record, const unsigned char* data, bool disturbed) {
  if (record.data.empty() && disturbed) return;
  ++result_.checked_reads;
  for (std::uint32_t i = 0; i < record.length; ++i) {
    const unsigned char expected =
        record.data.empty() ? *golden_byte(record.address + i) : record.data[i];
    if (data[i] != expected) {
      note(result_.mismatches,
           "line " + std::to_string(record.line) + ": read at " + hex(record.address + i) +
               " returned " + std::to_string(data[i]) + ", expected " + std::to_string(expected));
      return;
    }
  }
}

}  // namespace t3
