#include "tlm_interconnect/error_log.h"

#include <utility>

#include <systemc>

namespace t3 {

ErrorLog::ErrorLog(std::string msg_type, std::size_t kept)
    : msg_type_(std::move(msg_type)), kept_(kept) {}

void ErrorLog::add(std::string message) {
  ++count_;
  if (messages_.size() >= kept_) return;
  SC_REPORT_INFO(msg_type_.c_str(), message.c_str());
  messages_.push_back(std::move(message));
}

}  // namespace t3
