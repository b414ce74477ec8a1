// sc_spawn: a worker thread per member access in flight, made when the first is needed.
#define SC_INCLUDE_DYNAMIC_PROCESSES

#include "tlm_interconnect/multicast.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "protocol/hex.h"
#include "tlm_interconnect/element.h"

namespace t3 {

namespace {
constexpr std::size_t kKeptErrors = 64;
}

// What the requester waits on: the member accesses not yet back.
struct Fanout {
  std::size_t remaining = 0;
  sc_core::sc_event done;
};

// A thread that carries one member access at a time, so the members of one multicast access are
// in flight together (a member's memory waits inside b_transport).
struct SwitchReducer::Worker {
  Job* job = nullptr;
  sc_core::sc_event go;
};

SwitchReducer::SwitchReducer(sc_core::sc_module_name name, const AddressMap& map, bool functional,
                             Forward forward)
    : sc_core::sc_module(name),
      map_(map),
      functional_(functional),
      forward_(std::move(forward)),
      errors_(this->name(), kKeptErrors) {}

SwitchReducer::~SwitchReducer() = default;

std::uint16_t SwitchReducer::add_group(const std::vector<int>& members) {
  if (members.empty()) throw std::invalid_argument("multicast group: no members");
  std::vector<int> sorted = members;
  std::sort(sorted.begin(), sorted.end());
  for (std::size_t i = 0; i < sorted.size(); ++i) {
    if (sorted[i] < 0 || sorted[i] >= map_.gpus() || (i > 0 && sorted[i] == sorted[i - 1])) {
      throw std::invalid_argument("multicast group: member GPU " + std::to_string(sorted[i]) +
                                  " is outside the group of " + std::to_string(map_.gpus()) +
                                  " GPUs or named twice");
    }
  }
  if (groups_.size() >= 0xfffe) throw std::invalid_argument("multicast group: too many groups");
  groups_.push_back(members);
  return static_cast<std::uint16_t>(groups_.size());
}

const std::vector<int>& SwitchReducer::members(std::uint16_t group) const {
  return groups_.at(static_cast<std::size_t>(group) - 1);
}

void SwitchReducer::refuse(tlm::tlm_generic_payload& payload, const std::string& why) {
  errors_.add(std::string(name()) + ": " + why);
  payload.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
}

void SwitchReducer::serve(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay) {
  const T3Extension extension = T3Extension::get(payload);
  const std::uint64_t bytes = payload.get_data_length();
  if (extension.multicast == kNoMulticast || extension.multicast > groups_.size()) {
    refuse(payload, "multicast group " + std::to_string(extension.multicast) + " does not exist (" +
                        std::to_string(groups_.size()) + " groups)");
    return;
  }
  const auto decoded = map_.decode(payload.get_address(), bytes);
  if (!decoded || decoded->window != Window::Hbm) {
    refuse(payload, "multicast access at " + hex(payload.get_address()) + " (" +
                        std::to_string(bytes) + " bytes) is not inside an HBM window");
    return;
  }
  const bool read = extension.op == Op::Read;
  if (!read && extension.op != Op::Write) {
    payload.set_response_status(tlm::TLM_COMMAND_ERROR_RESPONSE);
    errors_.add(std::string(name()) + ": a multicast " + to_string(extension.op) +
                " is not served (ld_reduce reads and stores only)");
    return;
  }
  if (read && bytes % element_bytes(extension.element) != 0) {
    payload.set_response_status(tlm::TLM_COMMAND_ERROR_RESPONSE);
    errors_.add(std::string(name()) + ": ld_reduce of " + std::to_string(bytes) +
                " bytes is not a whole number of " + to_string(extension.element) + " elements");
    return;
  }

  // One plain access per member at the same offset of its window, all leaving now + delay.
  T3Extension member = extension;
  member.multicast = kNoMulticast;
  const sc_core::sc_time start = sc_core::sc_time_stamp() + delay;
  std::vector<Job> jobs;
  for (int gpu : members(extension.multicast)) {
    Job job;
    job.gpu = gpu;
    job.start = start;
    job.payload = make_payload(pool_, map_.hbm_base(gpu) + decoded->offset, bytes, member);
    if (!read) std::memcpy(job.payload->get_data_ptr(), payload.get_data_ptr(), bytes);
    jobs.push_back(job);
  }
  run_all(jobs);

  sc_core::sc_time finished = start;
  tlm::tlm_response_status status = tlm::TLM_OK_RESPONSE;
  for (const Job& job : jobs) {
    finished = std::max(finished, job.finished);
    if (!job.payload->is_response_ok() && status == tlm::TLM_OK_RESPONSE) {
      status = job.payload->get_response_status();
    }
  }
  if (status == tlm::TLM_OK_RESPONSE && read && functional_) {
    add_copies(payload, jobs, extension.element);
  }
  for (const Job& job : jobs) job.payload->release();
  payload.set_response_status(status);
  delay = finished - sc_core::sc_time_stamp();

  stats_.member_accesses += jobs.size();
  if (read) {
    ++stats_.ld_reduces;
    stats_.reduced_bytes += bytes;
  } else {
    ++stats_.stores;
    stats_.stored_bytes += bytes;
  }
}

void SwitchReducer::run_all(std::vector<Job>& jobs) {
  Fanout fanout;
  fanout.remaining = jobs.size();
  for (Job& job : jobs) {
    job.fanout = &fanout;
    start(job);
  }
  while (fanout.remaining > 0) sc_core::wait(fanout.done);
}

void SwitchReducer::start(Job& job) {
  if (!idle_.empty()) {
    Worker* worker = idle_.back();
    idle_.pop_back();
    worker->job = &job;
    worker->go.notify(sc_core::SC_ZERO_TIME);
    return;
  }
  workers_.push_back(std::make_unique<Worker>());
  Worker* worker = workers_.back().get();
  worker->job = &job;
  sc_core::sc_spawn(
      [this, worker]() {
        for (;;) {
          Job& current = *worker->job;
          sc_core::sc_time delay = current.start - sc_core::sc_time_stamp();
          forward_(current.gpu, *current.payload, delay);
          current.finished = sc_core::sc_time_stamp() + delay;
          worker->job = nullptr;
          idle_.push_back(worker);
          if (--current.fanout->remaining == 0) current.fanout->done.notify();
          sc_core::wait(worker->go);
        }
      },
      sc_core::sc_gen_unique_name("member_access"));
}

void SwitchReducer::add_copies(tlm::tlm_generic_payload& payload, const std::vector<Job>& jobs,
                               ElementType element) const {
  const std::size_t elements = payload.get_data_length() / element_bytes(element);
  unsigned char* out = payload.get_data_ptr();
  for (std::size_t e = 0; e < elements; ++e) {
    float sum = 0;  // in float, in member order, rounded once: as the SMs' add does
    for (const Job& job : jobs) sum += load_element(job.payload->get_data_ptr(), e, element);
    store_element(out, e, element, sum);
  }
}

nlohmann::json SwitchReducer::report() const {
  return {{"groups", groups_.size()},
          {"ld_reduces", stats_.ld_reduces},
          {"stores", stats_.stores},
          {"member_accesses", stats_.member_accesses},
          {"reduced_bytes", stats_.reduced_bytes},
          {"stored_bytes", stats_.stored_bytes},
          {"errors", errors_.count()}};
}

}  // namespace t3
