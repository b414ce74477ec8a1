#include "harness/stl_trace.h"

#include <cctype>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace t3 {

namespace {

[[noreturn]] void refuse(const std::string& source, std::size_t line, const std::string& why) {
  throw std::runtime_error(source + ":" + std::to_string(line) + ": " + why);
}

// Unsigned digits in `base` filling all of `text` (no sign, no spaces, no overflow).
bool parse_unsigned(const std::string& text, int base, std::uint64_t& value) {
  if (text.empty()) return false;
  value = 0;
  for (const char c : text) {
    const int digit = std::isdigit(static_cast<unsigned char>(c))    ? c - '0'
                      : std::isxdigit(static_cast<unsigned char>(c)) ? std::tolower(c) - 'a' + 10
                                                                     : 99;
    if (digit >= base) return false;
    if (value > (~std::uint64_t{0} - static_cast<std::uint64_t>(digit)) / base) return false;
    value = value * static_cast<std::uint64_t>(base) + static_cast<std::uint64_t>(digit);
  }
  return true;
}

bool strip_prefix(std::string& text, const std::string& prefix) {
  if (text.compare(0, prefix.size(), prefix) != 0) return false;
  text.erase(0, prefix.size());
  return true;
}

std::vector<unsigned char> parse_data(std::string text, const std::string& source,
                                      std::size_t line) {
  if (!strip_prefix(text, "0x") || text.empty() || text.size() % 2 != 0) {
    refuse(source, line, "data '" + text + "' is not 0x followed by whole bytes in hex");
  }
  std::vector<unsigned char> bytes;
  for (std::size_t i = 0; i < text.size(); i += 2) {
    std::uint64_t byte = 0;
    if (!parse_unsigned(text.substr(i, 2), 16, byte)) {
      refuse(source, line,
             "data has a character that is not hex near byte " + std::to_string(i / 2));
    }
    bytes.push_back(static_cast<unsigned char>(byte));
  }
  return bytes;
}

StlCommand parse_command(const std::string& word, const std::string& source, std::size_t line) {
  if (word == "read") return StlCommand::Read;
  if (word == "write") return StlCommand::Write;
  if (word == "update") return StlCommand::Update;
  refuse(source, line, "command '" + word + "' is not read, write or update");
}

StlRecord parse_line(const std::string& text, const std::string& source, std::size_t line,
                     const StlLimits& limits) {
  std::istringstream words(text);
  std::string time, word, address, data, extra;
  words >> time >> word;
  StlRecord record;
  record.line = line;
  if (time.empty() || time.back() != ':' ||
      !parse_unsigned(time.substr(0, time.size() - 1), 10, record.time)) {
    refuse(source, line, "timestamp '" + time + "' is not a cycle count followed by ':'");
  }
  if (!word.empty() && word.front() == '(') {  // DRAMSys's optional "(length)"
    std::uint64_t length = 0;
    if (word.back() != ')' || !parse_unsigned(word.substr(1, word.size() - 2), 10, length) ||
        length == 0 || length > (1u << 20)) {
      refuse(source, line, "length '" + word + "' is not (N) with N in 1..1048576");
    }
    record.length = static_cast<std::uint32_t>(length);
    words >> word;
  }
  record.command = parse_command(word, source, line);
  words >> address >> data >> extra;
  if (!strip_prefix(address, "0x") || !parse_unsigned(address, 16, record.address)) {
    refuse(source, line, "address '" + address + "' is not 0x followed by hex digits");
  }
  if (!extra.empty()) refuse(source, line, "unexpected '" + extra + "' after the data");
  if (!data.empty()) record.data = parse_data(data, source, line);
  if (record.length == 0) {
    record.length = record.data.empty() ? limits.default_length
                                        : static_cast<std::uint32_t>(record.data.size());
  }
  if (!record.data.empty() && record.data.size() != record.length) {
    refuse(source, line,
           "data holds " + std::to_string(record.data.size()) + " bytes, the request " +
               std::to_string(record.length));
  }
  if (record.address > limits.capacity || limits.capacity - record.address < record.length) {
    std::ostringstream why;
    why << "request of " << record.length << " bytes at 0x" << std::hex << record.address
        << " ends beyond the memory's capacity of 0x" << limits.capacity << " bytes";
    refuse(source, line, why.str());
  }
  return record;
}

}  // namespace

std::vector<StlRecord> read_stl(std::istream& in, const std::string& source,
                                const StlLimits& limits) {
  std::vector<StlRecord> records;
  std::string text;
  std::size_t line = 0;
  while (std::getline(in, text)) {
    ++line;
    if (!text.empty() && text.back() == '\r') text.pop_back();
    const auto first = text.find_first_not_of(" \t");
    if (first == std::string::npos || text[first] == '#') continue;
    StlRecord record = parse_line(text, source, line, limits);
    if (!records.empty() && record.time < records.back().time) {
      refuse(source, line,
             "timestamp " + std::to_string(record.time) + " goes back from " +
                 std::to_string(records.back().time) + " (line " +
                 std::to_string(records.back().line) + ")");
    }
    records.push_back(std::move(record));
  }
  return records;
}

std::vector<StlRecord> read_stl_file(const std::string& path, const StlLimits& limits) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot open the trace");
  return read_stl(in, path, limits);
}

const char* to_string(StlCommand command) {
  switch (command) {
    case StlCommand::Read:
      return "read";
    case StlCommand::Write:
      return "write";
    case StlCommand::Update:
      return "update";
  }
  return "?";
}

std::string stl_line(const StlRecord& record, bool with_length) {
  static const char* kHex = "0123456789abcdef";
  std::ostringstream out;
  out << record.time << ":\t";
  if (with_length) out << '(' << record.length << ")\t";
  out << to_string(record.command) << "\t0x" << std::hex << record.address;
  if (!record.data.empty()) {
    out << "\t0x";
    for (const unsigned char byte : record.data) out << kHex[byte >> 4] << kHex[byte & 15];
  }
  out << '\n';
  return out.str();
}

}  // namespace t3
