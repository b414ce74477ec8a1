#include "models/hbm/memory_controller.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include "models/hbm/dram_bank.h"
#include "models/hbm/request_queue.h"
#include "models/hbm/scheduler/bank_scheduler.h"
#include "models/hbm/scheduler/write_drain.h"
#include "models/hbm/service_calendar.h"
#include "models/hbm/service_statistics.h"
#include "models/hbm/service_timing.h"
#include "models/hbm/transaction.h"
#include "models/hbm/watch_list.h"
#include "protocol/hex.h"
#include "protocol/to_size.h"
#include "tlm_interconnect/error_log.h"

namespace t3 {

namespace {

constexpr const char* kMsgType = "t3/hbm";
// Rejections are reported one by one up to this many, then only counted.
constexpr std::size_t kReportedRejections = 16;

// Times inside the controller are counted in time-resolution units: an entry's service is
// integer arithmetic, and an sc_time is made only where the kernel needs one (a notification).
using Ticks = sc_core::sc_time::value_type;
// No time booked or asked for. The per-decision state is plain integers with sentinels, not
// std::optional: GCC sets an optional's flag with a byte store and copies it with a wider load,
// which stalls on that store (BankScheduler::kNoChoice).
constexpr Ticks kNoTime = ~Ticks{0};
constexpr std::size_t kNoChoice = BankScheduler::kNoChoice;

}  // namespace

// The parts: transactions split into entries (RequestSplitter), per queue a RequestQueue, an
// ArbitrationPolicy and, with the bank model, a BankScheduler and the pseudo-channel's timing
// (BankTiming, refresh included); when work is due (ServiceCalendar); what was served
// (ServiceStatistics, QueueOccupancy). The stages here: an access is validated and split
// (transport), its entries arrive in their queues at its arrival time (activate), and a queue
// whose bus is free serves what its policy and scheduler choose (serve_queue, serve).
struct MemoryController::Impl {
  // One queue (a channel's; with the bank model a pseudo-channel's) and the parts that serve it.
  struct Queue {
    explicit Queue(RequestQueue requests) : requests(std::move(requests)) {}
    RequestQueue requests;
    Ticks free_at = 0;          // data bus free from here on
    Ticks retry_at = kNoTime;   // the policy declined and asked to be re-asked
    Ticks scheduled = kNoTime;  // the wake-up booked in the calendar, if any
    std::unique_ptr<ArbitrationPolicy> policy;
    bool admits_everything = false;            // policy->admits_everything(), kept beside the queue
    std::unique_ptr<BankScheduler> scheduler;  // bank model only, as is `bank`
    // In the queue, not behind a pointer: an arrival and a service each read it, and a pointer
    // to follow first is one more cache miss on the way (the scheduler keeps its address:
    // `queues` is reserved whole and never grows).
    std::optional<BankTiming> bank;
  };

  Impl(MemoryController& owner, const HbmConfig& config, SimMode mode, std::uint64_t base)
      : owner(owner),
        config(config),
        mode(mode),
        base(base),
        stats(owner.stats_),
        rejections(kMsgType, kReportedRejections),
        banked(config.model == HbmModel::Bank),
        per_channel(banked ? static_cast<int>(config.bank.pseudo_channels) : 1),
        splitter(config),
        pipe(config),
        occupancy(static_cast<int>(config.channels)),
        statistics(owner.stats_, static_cast<int>(config.channels), per_channel),
        calendar(static_cast<std::size_t>(config.channels * per_channel)) {
    const double units_per_ns = 1e-9 / sc_core::sc_get_time_resolution().to_seconds();
    if (banked) dram_timing.emplace(config, units_per_ns);
    if (banked) row_buses.resize(to_size(config.channels));
    const auto count = static_cast<int>(config.channels) * per_channel;
    queues.reserve(to_size(count));
    for (int q = 0; q < count; ++q) {
      const auto depth = static_cast<std::size_t>(config.queue_depth);
      Queue& queue = queues.emplace_back(RequestQueue(depth, q / per_channel, occupancy));
      queue.policy = make_policy(config);
      queue.admits_everything = queue.policy->admits_everything();
      if (banked) {
        queue.scheduler = make_bank_scheduler(config);
        queue.bank.emplace(config, *dram_timing, &row_buses[to_size(q / per_channel)]);
        queue.scheduler->look_at(&queue.bank->banks());
      }
    }
    if (mode == SimMode::Functional) store.emplace();
  }

  void reject(tlm::tlm_generic_payload& payload, tlm::tlm_response_status status,
              const std::string& why) {
    payload.set_response_status(status);
    ++stats.rejected;
    rejections.add(std::string(owner.name()) + ": " + why);
  }

  // Validates, splits and schedules one access; the caller's thread waits for it here.
  void transport(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay) {
    const std::optional<T3Extension> extension = validate(payload);
    if (!extension) return;  // answered with an error response
    if (payload.get_data_length() == 0) {
      payload.set_response_status(tlm::TLM_OK_RESPONSE);
      return;
    }
    HbmTransaction& transaction = pool.acquire();
    transaction.open(payload, *extension, sc_core::sc_time_stamp() + delay);
    splitter.split(transaction, payload.get_address() - base, payload.get_data_length());
    // Arrival is scheduled, not waited for: the caller's annotated delay is when the request
    // reaches the controller, and the method admits it then.
    calendar.add_arrival(transaction);
    wake.notify(delay);

    ++inside;
    sc_core::wait(transaction.done);
    --inside;

    payload.set_response_status(tlm::TLM_OK_RESPONSE);
    delay = sc_core::SC_ZERO_TIME;
    pool.release(transaction);
  }

  // The access's extension if the controller can serve it; otherwise answers it with an error
  // response, says why, and returns nothing.
  std::optional<T3Extension> validate(tlm::tlm_generic_payload& payload) {
    const std::uint64_t address = payload.get_address();
    const std::uint64_t length = payload.get_data_length();
    const std::uint64_t offset = address - base;
    if (address < base || offset >= config.capacity_bytes ||
        length > config.capacity_bytes - offset) {
      reject(payload, tlm::TLM_ADDRESS_ERROR_RESPONSE,
             "access of " + std::to_string(length) + " bytes at " + hex(address) +
                 " leaves the HBM window [" + hex(base) + ", " + hex(base + config.capacity_bytes) +
                 ")");
      return std::nullopt;
    }
    if (const auto error = memory_payload_error(payload)) {
      reject(payload, error->status, error->reason + " at " + hex(address));
      return std::nullopt;
    }
    const T3Extension extension = T3Extension::get(payload);
    // Sub-requests split at granule boundaries; an element-aligned update keeps every element
    // inside one sub-request (granules are multiples of 4 bytes), so each can be added alone.
    if (extension.op == Op::Update && offset % element_bytes(extension.element) != 0) {
      reject(payload, tlm::TLM_ADDRESS_ERROR_RESPONSE,
             "update at " + hex(address) + " is not aligned to its " +
                 to_string(extension.element) + " elements");
      return std::nullopt;
    }
    if (mode == SimMode::Functional && length > 0 && payload.get_data_ptr() == nullptr) {
      reject(payload, tlm::TLM_GENERIC_ERROR_RESPONSE, "functional access without data");
      return std::nullopt;
    }
    return extension;
  }

  // Sub-request `sub` enters its queue, or the queue's waiting list if it is full.
  void arrive(HbmTransaction& transaction, std::uint32_t sub, sc_core::sc_time now) {
    const SubRequest& s = transaction.subs[sub];
    Queue& q = queues[to_size(s.queue)];
    QueueEntry entry = transaction.entry(sub, sequence++);
    if (banked) entry.span = q.bank->span(s.where);
    if (!q.requests.full()) {
      enqueue(q, entry, now);
    } else {
      q.requests.hold(entry);
      ++backpressured;
    }
  }

  void enqueue(Queue& q, QueueEntry entry, sc_core::sc_time now) {
    if (banked) entry.row_hit = q.bank->row_open(entry.span);
    q.requests.push(entry, now);
  }

  // What queue q may serve now: the policy's pick (simple model), or the bank scheduler's choice
  // among what the policy admits (bank model); kNoChoice for none.
  std::size_t choose(Queue& q, sc_core::sc_time now) {
    if (!banked) return q.policy->pick(q.requests.view(), now).value_or(kNoChoice);
    const Admissible allowed =
        q.admits_everything ? Admissible{} : q.policy->admissible(q.requests.view(), now);
    if (allowed.none()) return kNoChoice;
    return q.scheduler->choose(q.requests, allowed);
  }

  void serve(Queue& q, std::size_t pick, sc_core::sc_time now) {
    const QueueEntry entry = q.requests.take(pick, now);
    HbmTransaction& transaction = *entry.transaction;
    const SubRequest& s = transaction.subs[entry.sub];
    const Ticks at = now.value();
    const Ticks arrival = transaction.arrival.value();
    if (banked && per_channel > 1 && config.bank.early_precharge) expect_activations(q);
    const EntryService service =
        banked ? q.bank->serve(s.where, transaction.op, arrival, at, q.requests)
               : pipe.serve(transaction.op, s.bytes, at);
    q.free_at = service.next;
    statistics.served(transaction.op, transaction.traffic_class, s.channel, s.bytes, arrival,
                      service);
    // Data moves at service time, so the order of service is the order memory sees.
    if (store) {
      store->apply(transaction.op, s.offset, transaction.data + s.data_offset, s.bytes,
                   transaction.element);
    }
    if (!watchers.empty() && transaction.watched()) watchers.applied(transaction.applied(s, base));
    transaction.finish = std::max<Ticks>(transaction.finish, service.done);
    if (--transaction.unserved == 0) {
      statistics.completed(transaction.op, transaction.traffic_class);
      transaction.done.notify(sc_core::sc_time::from_value(transaction.finish - at));
    }
    // The freed entry goes to the oldest back-pressured request.
    if (q.requests.has_waiting()) enqueue(q, q.requests.next_waiting(), now);
  }

  // Before queue q serves: the channel's other pseudo-channels propose the activation each
  // expects next on the shared row-command bus (only with hbm.bank.early_precharge: BankTiming).
  void expect_activations(const Queue& q) {
    const auto index = static_cast<std::size_t>(&q - queues.data());
    const std::size_t first = index - index % to_size(per_channel);
    for (std::size_t k = first; k < first + to_size(per_channel); ++k) {
      if (k != index && !queues[k].requests.empty()) {
        queues[k].bank->expect_activation(queues[k].requests);
      }
    }
  }

  // Asks the watchers whether entry `pick` of queue q may be served now.
  bool admitted(const Queue& q, std::size_t pick) {
    const QueueEntry& entry = q.requests[pick];
    const HbmTransaction& transaction = *entry.transaction;
    if (watchers.empty() || !transaction.watched()) return true;
    return watchers.admit(transaction.applied(transaction.subs[entry.sub], base));
  }

  // Queues are visited only when something is due for them: an arrival at this activation, or a
  // wake-up (bus free or policy retry) that has come, or a watcher's refusal to ask again.
  void activate() {
    const sc_core::sc_time now = sc_core::sc_time_stamp();
    while (HbmTransaction* transaction = calendar.next_arrival(now)) {
      for (std::uint32_t sub = 0; sub < transaction->subs.size(); ++sub) {
        arrive(*transaction, sub, now);
        const int k = transaction->subs[sub].queue;
        if (!awaits_its_bus(queues[to_size(k)], now.value())) calendar.mark_due(k);
      }
    }
    calendar.take_wakeups(now);
    calendar.serve_due([&](int k) { serve_queue(k, now); });
    if (const std::optional<Ticks> next = calendar.next()) {
      wake.notify(sc_core::sc_time::from_value(*next - now.value()));
    }
  }

  // Queue q's bus is busy and its wake-up is booked for when it frees: serving q now would do
  // nothing (no decision before then, the booking already made), so an arrival need not mark it
  // due. Half the arrivals of a wide access find their queue so, one serve_queue call each.
  static bool awaits_its_bus(const Queue& q, Ticks ticks) {
    return q.free_at > ticks && q.scheduled == q.free_at;
  }

  // Serves queue k while its bus is free, then books its next wake-up if work remains.
  void serve_queue(int k, sc_core::sc_time now) {
    Queue& q = queues[to_size(k)];
    const Ticks ticks = now.value();
    if (q.scheduled <= ticks) q.scheduled = kNoTime;  // its wake-up has come
    while (q.free_at <= ticks && !q.requests.empty()) {
      const std::size_t pick = choose(q, now);
      if (pick == kNoChoice) {
        const sc_core::sc_time retry = q.policy->retry_after();
        if (retry > sc_core::SC_ZERO_TIME) q.retry_at = ticks + retry.value();
        break;
      }
      q.retry_at = kNoTime;
      if (!admitted(q, pick)) {  // a watcher is full: the queue idles until it has space
        calendar.hold(k);
        return;
      }
      serve(q, pick, now);
    }
    if (q.requests.empty()) return;
    Ticks at = kNoTime;
    if (q.free_at > ticks) {
      at = q.free_at;
    } else if (q.retry_at != kNoTime && q.retry_at > ticks) {
      at = q.retry_at;
    }
    if (at != kNoTime && q.scheduled != at) {  // one calendar entry per booked time
      q.scheduled = at;
      calendar.book(at, k);
    }
  }

  MemoryController& owner;
  const HbmConfig config;
  const SimMode mode;
  const std::uint64_t base;
  HbmStats& stats;
  ErrorLog rejections;
  const bool banked;      // hbm.model = bank
  const int per_channel;  // queues per channel: its pseudo-channels with the bank model
  RequestSplitter splitter;
  TransactionPool pool;
  PipeTiming pipe;                        // simple model
  std::optional<DramTiming> dram_timing;  // bank model, shared by the queues' timing
  std::vector<RowCommandBus> row_buses;   // bank model: per channel, its pseudo-channels'
  QueueOccupancy occupancy;               // of every queue (declared before `queues`)
  ServiceStatistics statistics;
  ServiceCalendar calendar;
  std::vector<Queue> queues;
  std::optional<BackingStore> store;  // functional mode only
  sc_core::sc_event wake;             // the method's trigger
  WatchList watchers;                 // watch[0..n), cached at end of elaboration
  std::uint64_t sequence = 0;         // entries' arrival order
  std::size_t inside = 0;             // transactions accepted and not answered yet
  std::uint64_t backpressured = 0;    // sub-requests that found their queue full
};

MemoryController::MemoryController(sc_core::sc_module_name name, const HbmConfig& config,
                                   SimMode mode, std::uint64_t window_base)
    : sc_core::sc_module(name), socket("socket"), watch("watch") {
  if (config.channels < 1) throw ConfigError("hbm.channels: must be at least 1");
  if (config.interleave_bytes < 4 || config.interleave_bytes % 4 != 0) {
    throw ConfigError("hbm.interleave_bytes: must be a positive multiple of 4");
  }
  if (!(config.bandwidth_GBps > 0)) throw ConfigError("hbm.bandwidth_GBps: must be positive");
  if (config.queue_depth < 1) throw ConfigError("hbm.queue_depth: must be at least 1");
  if (config.model == HbmModel::Bank) {
    WriteDrain::check(config);
    DramAddressMap check(config);  // throws ConfigError naming the geometry that does not fit
  }
  impl_ = std::make_unique<Impl>(*this, config, mode, window_base);
  socket.register_b_transport(this, &MemoryController::b_transport);
  socket.register_transport_dbg(this, &MemoryController::transport_dbg);
  SC_HAS_PROCESS(MemoryController);
  SC_METHOD(activate);
  sensitive << impl_->wake;
  // Also woken when any watcher frees space (the finder resolves every bound watcher).
  space_finder_ = std::make_unique<sc_core::sc_event_finder_t<MemoryWatchIf>>(
      watch, &MemoryWatchIf::space_event);
  sensitive << *space_finder_;
  dont_initialize();
}

void MemoryController::end_of_elaboration() {
  std::vector<MemoryWatchIf*> watchers;
  for (int i = 0; i < watch.size(); ++i) watchers.push_back(watch[i]);
  impl_->watchers.assign(std::move(watchers));
}

MemoryController::~MemoryController() = default;

void MemoryController::log_commands(std::vector<DramCommand>* log) {
  if (!impl_->banked) throw ConfigError("hbm.model: a command log needs the bank model (bank)");
  const int per_channel = impl_->per_channel;
  for (std::size_t q = 0; q < impl_->queues.size(); ++q) {
    const int index = static_cast<int>(q);
    impl_->queues[q].bank->log_commands(log, index / per_channel, index % per_channel);
  }
}

void MemoryController::activate() {
  impl_->activate();
}

void MemoryController::b_transport(tlm::tlm_generic_payload& payload, sc_core::sc_time& delay) {
  impl_->transport(payload, delay);
}

unsigned MemoryController::transport_dbg(tlm::tlm_generic_payload& payload) {
  Impl& impl = *impl_;
  if (!impl.store) return 0;  // timing mode holds no data
  const std::uint64_t address = payload.get_address();
  if (address < impl.base || address - impl.base >= impl.config.capacity_bytes) return 0;
  if (payload.get_byte_enable_ptr() != nullptr || payload.get_data_ptr() == nullptr) return 0;
  // Debug access is plain read/write; an update is not served here rather than done as a write.
  if (const auto* extension = payload.get_extension<T3Extension>();
      extension && extension->op == Op::Update) {
    return 0;
  }
  const std::uint64_t offset = address - impl.base;
  const auto bytes = static_cast<std::size_t>(
      std::min<std::uint64_t>(payload.get_data_length(), impl.config.capacity_bytes - offset));
  if (payload.is_read()) {
    impl.store->read(offset, payload.get_data_ptr(), bytes);
  } else if (payload.is_write()) {
    impl.store->write(offset, payload.get_data_ptr(), bytes);
  } else {
    return 0;
  }
  payload.set_response_status(tlm::TLM_OK_RESPONSE);
  return static_cast<unsigned>(bytes);
}

const HbmStats& MemoryController::stats() const {
  // The occupancy statistics up to their last change, copied when asked for.
  for (int c = 0; c < kTrafficClasses; ++c) {
    impl_->stats.occupancy_integral_ns[c] = impl_->occupancy.integral_ns(c);
    impl_->stats.max_occupancy[c] = impl_->occupancy.max(c);
  }
  if (impl_->banked) {  // the time the banks held a row open, summed over pseudo-channels
    const auto now = static_cast<std::uint64_t>(sc_core::sc_time_stamp().value());
    std::uint64_t open = 0;
    for (const auto& q : impl_->queues) open += q.bank->open_time(now);
    impl_->stats.bank_open_ns =
        static_cast<double>(open) * sc_core::sc_get_time_resolution().to_seconds() * 1e9;
  }
  return stats_;
}

std::size_t MemoryController::pending() const {
  return impl_->inside;
}

int MemoryController::channel_of(std::uint64_t offset) const {
  return impl_->splitter.channel_of(offset);
}

void MemoryController::observe_occupancy(OccupancyObserver observer) {
  impl_->occupancy.observe(std::move(observer));
}

nlohmann::json MemoryController::report() const {
  const Impl& impl = *impl_;
  const sc_core::sc_time now = sc_core::sc_time_stamp();
  nlohmann::json j;
  j["policy"] = impl.queues.front().policy->name();
  j["model"] = impl.banked ? "bank" : "simple";
  for (const auto& q : impl.queues) q.policy->add_to_report(j);
  impl.statistics.add_to_report(j, now.to_seconds() * 1e9, impl.banked);
  if (impl.banked) {
    std::uint64_t refreshes = 0;
    for (const auto& q : impl.queues) refreshes += q.bank->refreshes();
    j["refreshes"] = refreshes;
  }
  impl.occupancy.add_to_report(j, now);
  j["mode"] = impl.mode == SimMode::Functional ? "functional" : "timing";
  j["backpressured"] = impl.backpressured;
  j["watch_refusals"] = impl.watchers.refusals();
  j["pending"] = pending();
  j["pages"] = impl.store ? impl.store->pages() : 0;
  return j;
}

}  // namespace t3
