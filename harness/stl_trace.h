// Memory traces in DRAMSys's STL format, read and written: one request a line,
//   <time>:\t<read|write|update>\t0x<address>[\t0x<data bytes in hex>]
// with '#' comments and blank lines skipped, as DRAMSys's StlPlayer reads them (its optional
// "(<length>)" token before the command is accepted too). `update` (a near-memory add of the
// data's elements to memory) is our extension: DRAMSys refuses it.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

namespace t3 {

enum class StlCommand { Read, Write, Update };

struct StlRecord {
  std::uint64_t time = 0;  // in the trace's clock (player cycles, or ns for recorded traces)
  StlCommand command = StlCommand::Read;
  std::uint64_t address = 0;
  std::uint32_t length = 0;         // bytes; 0 = the reader's default length
  std::vector<unsigned char> data;  // empty if the line has no data field
  std::size_t line = 0;             // line number in its file, from 1 (0: not read from a file)
};

struct StlLimits {
  std::uint32_t default_length = 32;  // bytes of a request without a "(length)" or data field
  std::uint64_t capacity = ~std::uint64_t{0};  // every request must end at or below this address
};

// Reads a whole trace. Throws std::runtime_error naming `source` and the line number for a line
// that does not parse, a request beyond `limits.capacity`, or a timestamp below the one before.
std::vector<StlRecord> read_stl(std::istream& in, const std::string& source,
                                const StlLimits& limits = {});
std::vector<StlRecord> read_stl_file(const std::string& path, const StlLimits& limits = {});

const char* to_string(StlCommand command);
// One line, with its newline. The length token is written only when `with_length`; data only if
// the record has some.
std::string stl_line(const StlRecord& record, bool with_length);

}  // namespace t3
