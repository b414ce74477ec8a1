#include "tlm_interconnect/payload.h"

namespace t3 {

const char* to_string(Op op) {
  switch (op) {
    case Op::Read:
      return "read";
    case Op::Write:
      return "write";
    case Op::Update:
      return "update";
  }
  return "?";
}

const char* to_string(TrafficClass traffic_class) {
  return traffic_class == TrafficClass::Compute ? "compute" : "communication";
}

const char* to_string(CacheHint hint) {
  return hint == CacheHint::Cached ? "cached" : "uncached";
}

const char* to_string(LinkChannel channel) {
  return channel == LinkChannel::Request ? "request" : "response";
}

tlm::tlm_extension_base* T3Extension::clone() const {
  return new T3Extension(*this);
}

void T3Extension::copy_from(const tlm::tlm_extension_base& other) {
  *this = static_cast<const T3Extension&>(other);
}

T3Extension T3Extension::get(const tlm::tlm_generic_payload& payload) {
  if (const auto* extension = payload.get_extension<T3Extension>()) return *extension;
  T3Extension plain;
  plain.op = payload.is_write() ? Op::Write : Op::Read;
  return plain;
}

void T3Extension::set(tlm::tlm_generic_payload& payload, const T3Extension& extension) {
  if (auto* existing = payload.get_extension<T3Extension>()) {
    *existing = extension;
  } else {
    // A payload deletes its extensions when destroyed, so a user-owned payload does not leak.
    payload.set_extension(new T3Extension(extension));
  }
  payload.set_command(extension.op == Op::Read ? tlm::TLM_READ_COMMAND : tlm::TLM_WRITE_COMMAND);
}

std::string T3Extension::check(const tlm::tlm_generic_payload& payload) {
  const auto* extension = payload.get_extension<T3Extension>();
  if (payload.get_command() == tlm::TLM_IGNORE_COMMAND) return "TLM_IGNORE_COMMAND is not served";
  if (!extension) return {};
  const bool write_command = payload.is_write();
  const bool write_op = extension->op != Op::Read;
  if (write_command != write_op) {
    return std::string("t3 op '") + to_string(extension->op) + "' carried by a " +
           (write_command ? "write" : "read") + " command";
  }
  if (extension->multicast != kNoMulticast && extension->op == Op::Update) {
    return "multicast group " + std::to_string(extension->multicast) +
           ": an update has no multicast form (ld_reduce is a read, multicast stores are writes)";
  }
  if (extension->op == Op::Update &&
      payload.get_data_length() % element_bytes(extension->element) != 0) {
    return "update of " + std::to_string(payload.get_data_length()) +
           " bytes is not a whole number of " + to_string(extension->element) + " elements";
  }
  return {};
}

// A slot is-a payload, so free() finds its slot with a cast instead of a search.
std::optional<PayloadError> memory_payload_error(const tlm::tlm_generic_payload& payload) {
  if (std::string reason = T3Extension::check(payload); !reason.empty()) {
    return PayloadError{tlm::TLM_COMMAND_ERROR_RESPONSE, std::move(reason)};
  }
  if (const auto* extension = payload.get_extension<T3Extension>();
      extension && extension->multicast != kNoMulticast) {
    // Only a switch that reduces serves multicast addresses; one that reached a memory crossed
    // no such switch.
    return PayloadError{tlm::TLM_COMMAND_ERROR_RESPONSE,
                        "multicast access (group " + std::to_string(extension->multicast) +
                            ") reached a memory: only a switch with topology.switch_reductions "
                            "serves it"};
  }
  if (payload.get_byte_enable_ptr() != nullptr) {
    return PayloadError{tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE, "byte enables are not supported"};
  }
  if (payload.get_streaming_width() != payload.get_data_length()) {
    return PayloadError{tlm::TLM_BURST_ERROR_RESPONSE, "streaming width differs from data length"};
  }
  return std::nullopt;
}

struct PayloadPool::Slot : tlm::tlm_generic_payload {
  std::vector<unsigned char> data;
  explicit Slot(PayloadPool* pool) : tlm::tlm_generic_payload(pool) {
    set_extension(new T3Extension);
  }
};

PayloadPool::PayloadPool() = default;
PayloadPool::~PayloadPool() = default;

tlm::tlm_generic_payload* PayloadPool::allocate(std::size_t data_bytes) {
  Slot* slot;
  if (free_.empty()) {
    all_.push_back(std::make_unique<Slot>(this));
    slot = all_.back().get();
  } else {
    slot = free_.back();
    free_.pop_back();
  }
  if (slot->data.size() < data_bytes) slot->data.resize(data_bytes);
  tlm::tlm_generic_payload& payload = *slot;
  payload.set_data_ptr(slot->data.data());
  payload.set_data_length(static_cast<unsigned>(data_bytes));
  payload.set_streaming_width(static_cast<unsigned>(data_bytes));
  payload.set_byte_enable_ptr(nullptr);
  payload.set_byte_enable_length(0);
  payload.set_dmi_allowed(false);
  payload.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  payload.acquire();
  return &payload;
}

void PayloadPool::free(tlm::tlm_generic_payload* payload) {
  // reset() drops auto-extensions others attached; our own T3Extension stays for the next user.
  payload->reset();
  free_.push_back(static_cast<Slot*>(payload));
}

tlm::tlm_generic_payload* make_payload(PayloadPool& pool, std::uint64_t address, std::size_t bytes,
                                       const T3Extension& extension) {
  auto* payload = pool.allocate(bytes);
  payload->set_address(address);
  T3Extension::set(*payload, extension);
  return payload;
}

}  // namespace t3
