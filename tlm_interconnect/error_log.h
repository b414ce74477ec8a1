// How a block reports the errors it answers (an address nobody owns, an op it cannot honour, a
// failed transfer): every error is counted, and the first `kept` are kept as messages and shown
// with SC_REPORT_INFO under the block's message type. A run that goes wrong at every access thus
// floods neither the log nor memory, and the count still says how often it happened.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace t3 {

class ErrorLog {
 public:
  ErrorLog(std::string msg_type, std::size_t kept);

  // Counts one error; keeps and reports `message` while fewer than `kept` messages are kept.
  void add(std::string message);

  std::uint64_t count() const { return count_; }  // every error added, past the cap too
  const std::vector<std::string>& messages() const { return messages_; }  // the first `kept`
  std::size_t kept() const { return kept_; }

 private:
  std::string msg_type_;
  std::size_t kept_;
  std::uint64_t count_ = 0;
  std::vector<std::string> messages_;
};

}  // namespace t3
