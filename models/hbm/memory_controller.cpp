#include "models/hbm/memory_controller.h"

#include "models/hbm/dram_bank.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>
#include <string>
#include <utility>

#include "protocol/hex.h"
#include "tlm_interconnect/address_map.h"
#include "tlm_interconnect/error_log.h"

namespace t3 {

namespace {

constexpr const char* kMsgType = "t3/hbm";
// Rejections are reported one by one up to this many, then only counted.
constexpr std::size_t kReportedRejections = 16;

int index(Op op) {
  return static_cast<int>(op);
}
int index(TrafficClass traffic_class) {
  return static_cast<int>(traffic_class);
}

// One granule run of a transaction: the part that one queue serves as one entry. The simple model
// has a queue per channel; the bank model one per pseudo-channel, and an entry never leaves one
// interleave granule (so one bank index and row in each bank group).
struct SubRequest {
  std::uint64_t offset;  // in the window
  std::uint32_t bytes;
  std::uint32_t data_offset;  // into the payload's data buffer
  int channel;
  int queue;           // index of the queue that serves it
  DramLocation where;  // bank model only
};

bool is_write(Op op) {
  return op != Op::Read;  // an update ends in a write: it drains with the writes
}

// Times inside the controller are counted in time-resolution units: an entry's service is
// integer arithmetic, and an sc_time is made only where the kernel needs one (a notification).
using Ticks = sc_core::sc_time::value_type;

sc_core::sc_time to_time(Ticks ticks) {
  return sc_core::sc_time::from_value(ticks);
}

// A queue in one buffer used as a ring, its capacity a power of two grown by doubling: pushing,
// popping and indexing are index arithmetic, and the policy's view of it is a stride and a mask.
template <class T>
class Ring {
 public:
  Ring() : slots_(8), mask_(7) {}
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T& operator[](std::size_t i) { return slots_[(head_ + i) & mask_]; }
  const T& operator[](std::size_t i) const { return slots_[(head_ + i) & mask_]; }
  void push_back(const T& value) {
    if (size_ == slots_.size()) grow();
    slots_[(head_ + size_) & mask_] = value;
    ++size_;
  }
  // Removes entry i, the others keeping their order; moves the shorter side, as a deque does.
  void erase(std::size_t i) {
    if (i < size_ / 2) {
      for (std::size_t j = i; j > 0; --j) (*this)[j] = (*this)[j - 1];
      head_ = (head_ + 1) & mask_;
    } else {
      for (std::size_t j = i + 1; j < size_; ++j) (*this)[j - 1] = (*this)[j];
    }
    --size_;
  }
  const T& slot0() const { return slots_.front(); }
  std::size_t head() const { return head_; }
  std::size_t mask() const { return mask_; }

 private:
  void grow() {
    std::vector<T> grown(2 * slots_.size());
    for (std::size_t i = 0; i < size_; ++i) grown[i] = (*this)[i];
    slots_.swap(grown);
    head_ = 0;
    mask_ = slots_.size() - 1;
  }

  std::vector<T> slots_;
  std::size_t mask_;
  std::size_t head_ = 0;
  std::size_t size_ = 0;
};

}  // namespace

struct MemoryController::Impl {
  // One b_transport in flight. Pooled: the event and the sub-request vector are reused.
  struct Transaction {
    sc_core::sc_event done;  // notified at the completion time of the last sub-request
    unsigned char* data = nullptr;
    Op op = Op::Read;
    TrafficClass traffic_class = TrafficClass::Compute;
    bool urgent = false;
    ElementType element = ElementType::Fp32;
    std::uint32_t tag = kNoTag;
    Origin origin;
    UnitKind unit_kind = UnitKind::TrafficGenerator;
    sc_core::sc_time arrival;
    Ticks finish = 0;
    std::vector<SubRequest> subs;
    std::size_t unserved = 0;  // sub-requests not yet started
  };
  // A queue entry as the bank scheduler scans it: what it needs is held here, not behind the
  // transaction pointer (the scans touch every entry of a queue; a pointer chase each costs more
  // than the rest of the scan).
  struct Ref {
    Transaction* transaction;
    DramRowSpan span;  // bank model only
    std::uint32_t sub;
    bool write = false;
    TrafficClass traffic_class = TrafficClass::Compute;
    // Bank model: its row is open in every bank it touches. Kept up to date as rows open and
    // close, so FR-FCFS reads a flag per entry instead of the banks' state.
    bool row_hit = false;
  };
  // What the policy sees of a request, and beside it what the controller keeps of it.
  struct Entry {
    QueuedRequest request;
    Ref ref;
  };
  struct Channel {
    Ring<Entry> queue;               // arrival order, <= queue_depth
    std::deque<Entry> waiting;       // back-pressured, arrival order
    Ticks free_at = 0;               // data bus free from here on
    std::optional<Ticks> retry_at;   // the policy declined and asked to be re-asked
    std::optional<Ticks> scheduled;  // the wake-up booked in `wakeups`, if any
    std::array<int, kTrafficClasses> occupancy{};
    std::unique_ptr<ArbitrationPolicy> policy;
    bool admits_everything = false;  // policy->admits_everything(), kept beside the queue
    // Bank model: the pseudo-channel's DRAM state, and its write drain.
    std::unique_ptr<PseudoChannelTimer> timer;
    int channel = 0;                            // the channel this queue belongs to
    std::array<int, kTrafficClasses> writes{};  // writes and updates queued, by class
    bool draining = false;                      // serving writes first, between the watermarks
  };
  struct Arrival {
    sc_core::sc_time at;
    std::uint64_t order;  // issue order breaks ties, so equal arrival times stay FIFO
    Transaction* transaction;
    bool operator>(const Arrival& other) const {
      return at != other.at ? at > other.at : order > other.order;
    }
  };

  Impl(MemoryController& owner, const HbmConfig& config, SimMode mode, std::uint64_t base)
      : owner(owner),
        config(config),
        mode(mode),
        base(base),
        stats(owner.stats_),
        rejections(kMsgType, kReportedRejections) {
    const double resolution_s = sc_core::sc_get_time_resolution().to_seconds();
    units_per_byte =
        static_cast<double>(config.channels) / (config.bandwidth_GBps * 1e9) / resolution_s;
    resolution_ns = resolution_s * 1e9;
    latency = sc_core::sc_time(config.latency_ns, sc_core::SC_NS).value();
    alu_latency = sc_core::sc_time(config.nmc_alu_latency_ns, sc_core::SC_NS).value();
    banked = config.model == HbmModel::Bank;
    const std::int64_t per_channel = banked ? config.bank.pseudo_channels : 1;
    channels.resize(static_cast<std::size_t>(config.channels * per_channel));
    queues_per_channel = static_cast<double>(per_channel);
    const double units_per_ns = 1e-9 / resolution_s;
    if (banked) {
      dram_map.emplace(config);
      dram_timing.emplace(config, units_per_ns);
      controller_latency =
          sc_core::sc_time(config.bank.controller_latency_ns, sc_core::SC_NS).value();
      write_high =
          std::max(1, static_cast<int>(std::ceil(config.bank.write_high *
                                                 static_cast<double>(config.queue_depth))));
      write_low = static_cast<int>(
          std::floor(config.bank.write_low * static_cast<double>(config.queue_depth)));
    }
    for (std::size_t q = 0; q < channels.size(); ++q) {
      Channel& ch = channels[q];
      ch.policy = make_policy(config);
      ch.admits_everything = ch.policy->admits_everything();
      ch.channel = static_cast<int>(q / static_cast<std::size_t>(per_channel));
      if (banked) {
        // Every pseudo-channel refreshes at the same instants: an access spans many of them (a
        // 16 KiB request touches 64), so staggered refreshes would hold nearly every wide access
        // behind one; aligned ones cost each access at most one.
        ch.timer = std::make_unique<PseudoChannelTimer>(config, *dram_timing, 0);
      }
    }
    channel_occupancy.assign(static_cast<std::size_t>(config.channels), {});
    is_due.assign(channels.size(), 0);
    if (mode == SimMode::Functional) store.emplace();
    stats.channel_bytes.assign(static_cast<std::size_t>(config.channels), 0);
    stats.channel_busy_ns.assign(static_cast<std::size_t>(config.channels), 0.0);
  }

  // Data-bus time of `bytes` on one channel, scaled for updates.
  Ticks bus_time(std::uint32_t bytes, double factor) const {
    return static_cast<Ticks>(std::llround(bytes * units_per_byte * factor));
  }

  // The bank model's address map decides (its channel digit need not be the lowest).
  int channel_of(std::uint64_t offset) const {
    if (dram_map) return dram_map->locate(offset, 1).channel;
    return static_cast<int>((offset / static_cast<std::uint64_t>(config.interleave_bytes)) %
                            static_cast<std::uint64_t>(config.channels));
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
    Transaction& transaction = open(payload, *extension, sc_core::sc_time_stamp() + delay);
    split(transaction, payload.get_address() - base, payload.get_data_length());
    schedule_arrival(transaction, delay);

    ++inside;
    sc_core::wait(transaction.done);
    --inside;

    payload.set_response_status(tlm::TLM_OK_RESPONSE);
    delay = sc_core::SC_ZERO_TIME;
    free_transactions.push_back(&transaction);
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

  // A pooled transaction for the access, arriving at `arrival`, not split yet.
  Transaction& open(const tlm::tlm_generic_payload& payload, const T3Extension& extension,
                    sc_core::sc_time arrival) {
    Transaction& transaction = acquire();
    transaction.data = payload.get_data_ptr();
    transaction.op = extension.op;
    transaction.traffic_class = extension.traffic_class;
    transaction.urgent = extension.urgent;
    transaction.element = extension.element;
    transaction.tag = extension.tag;
    transaction.origin = extension.origin;
    transaction.unit_kind = extension.unit_kind;
    transaction.arrival = arrival;
    transaction.finish = 0;
    return transaction;
  }

  // Cuts [offset, offset + length) at interleave granules into sub-requests: for the simple
  // model one per run of granules on the same channel, for the bank model one per granule.
  void split(Transaction& transaction, std::uint64_t offset, std::uint64_t length) {
    const auto granule = static_cast<std::uint64_t>(config.interleave_bytes);
    auto& subs = transaction.subs;
    subs.clear();
    for (std::uint64_t done = 0; done < length;) {
      const std::uint64_t at = offset + done;
      const auto chunk =
          static_cast<std::uint32_t>(std::min(length - done, granule - at % granule));
      if (banked) {
        const DramLocation where = dram_map->locate(at, chunk);
        const int queue =
            where.channel * static_cast<int>(config.bank.pseudo_channels) + where.pseudo_channel;
        subs.push_back({at, chunk, static_cast<std::uint32_t>(done), where.channel, queue, where});
      } else if (const int channel = channel_of(at);
                 !subs.empty() && subs.back().channel == channel) {
        subs.back().bytes += chunk;  // a run on one channel
      } else {
        subs.push_back({at, chunk, static_cast<std::uint32_t>(done), channel, channel, {}});
      }
      done += chunk;
    }
    transaction.unserved = subs.size();
  }

  // Arrival is scheduled, not waited for: the caller's annotated delay is when the request
  // reaches the controller, and the method admits it then.
  void schedule_arrival(Transaction& transaction, sc_core::sc_time delay) {
    arrivals.push_back({transaction.arrival, issue_order++, &transaction});
    std::push_heap(arrivals.begin(), arrivals.end(), std::greater<>());
    wake.notify(delay);
  }

  Transaction& acquire() {
    if (free_transactions.empty()) {
      transactions.push_back(std::make_unique<Transaction>());
      return *transactions.back();
    }
    Transaction* transaction = free_transactions.back();
    free_transactions.pop_back();
    return *transaction;
  }

  // Queue occupancy bookkeeping: integral, maximum and observer, on every change.
  void change_occupancy(int queue, TrafficClass traffic_class, int delta, sc_core::sc_time now) {
    const sc_core::sc_time::value_type elapsed = (now - occupancy_since).value();
    for (int c = 0; c < kTrafficClasses; ++c) {
      integral_units[c] += static_cast<std::uint64_t>(total_occupancy[c]) * elapsed;
    }
    occupancy_since = now;
    const int c = index(traffic_class);
    Channel& ch = channels[static_cast<std::size_t>(queue)];
    ch.occupancy[c] += delta;
    total_occupancy[c] += delta;
    auto& of_channel = channel_occupancy[static_cast<std::size_t>(ch.channel)];
    of_channel[c] += delta;
    stats.max_occupancy[c] =
        std::max<std::uint64_t>(stats.max_occupancy[c], static_cast<std::uint64_t>(of_channel[c]));
    for (const auto& observer : observers) {
      observer(now, ch.channel, of_channel[0], of_channel[1]);
    }
  }

  void arrive(Transaction& transaction, std::uint32_t sub, sc_core::sc_time now) {
    const SubRequest& s = transaction.subs[sub];
    Channel& ch = channels[static_cast<std::size_t>(s.queue)];
    const QueuedRequest request{sequence++,     transaction.arrival,
                                transaction.op, transaction.traffic_class,
                                s.bytes,        transaction.urgent};
    const Ref ref{&transaction, banked ? ch.timer->span(s.where) : DramRowSpan{}, sub,
                  is_write(transaction.op), transaction.traffic_class};
    if (ch.queue.size() < static_cast<std::size_t>(config.queue_depth)) {
      enqueue(s.queue, {request, ref}, now);
    } else {
      ch.waiting.push_back({request, ref});
      ++backpressured;
    }
  }

  void enqueue(int queue, Entry entry, sc_core::sc_time now) {
    Channel& ch = channels[static_cast<std::size_t>(queue)];
    if (banked) entry.ref.row_hit = ch.timer->row_open(entry.ref.span);
    ch.queue.push_back(entry);
    const QueuedRequest& request = entry.request;
    if (is_write(request.op)) ++ch.writes[index(request.traffic_class)];
    change_occupancy(queue, request.traffic_class, +1, now);
  }

  // The requests of a channel's queue as its policy reads them.
  static QueueView view(const Ring<Entry>& queue) {
    return QueueView(&queue.slot0().request, sizeof(Entry), queue.head(), queue.mask(),
                     queue.size());
  }

  void serve(int queue, std::size_t pick, sc_core::sc_time now) {
    Channel& ch = channels[static_cast<std::size_t>(queue)];
    const auto [request, ref] = ch.queue[pick];
    ch.queue.erase(pick);
    if (is_write(request.op)) --ch.writes[index(request.traffic_class)];
    change_occupancy(queue, request.traffic_class, -1, now);

    Transaction& transaction = *ref.transaction;
    const SubRequest& s = transaction.subs[ref.sub];
    const int channel = s.channel;
    const Ticks at = now.value();
    Ticks occupancy = 0;
    Ticks done = 0;
    if (banked) {
      const std::uint64_t refreshes = ch.timer->refreshes();
      const DramService service = ch.timer->serve(s.where, kind_of(transaction.op),
                                                  transaction.arrival.value(), at, alu_latency);
      // Rows opened (in this entry's banks) or closed (refresh): those entries' hits may change.
      const bool refreshed = ch.timer->refreshes() != refreshes;
      if (service.row_misses > 0 || refreshed) {
        for (std::size_t i = 0; i < ch.queue.size(); ++i) {
          Ref& queued = ch.queue[i].ref;
          if (refreshed || queued.span.bank == s.where.bank) {
            queued.row_hit = ch.timer->row_open(queued.span);
          }
        }
      }
      occupancy = service.bus_busy;
      ch.free_at = std::max<Ticks>(service.last_column, at + 1);  // at least one unit: progress
      done = service.data_end + controller_latency;
      stats.row_hits += static_cast<std::uint64_t>(service.row_hits);
      stats.row_misses += static_cast<std::uint64_t>(service.row_misses);
    } else {
      const bool update = transaction.op == Op::Update;
      occupancy = bus_time(s.bytes, update ? config.nmc_update_occupancy : 1.0);
      ch.free_at = at + occupancy;
      done = at + latency + occupancy + (update ? alu_latency : 0);
    }
    latency_sum_ns[index(transaction.op)] +=
        static_cast<double>(done - transaction.arrival.value()) * resolution_ns;
    ++served_entries[index(transaction.op)];

    // Data moves at service time, so the order of service is the order memory sees.
    if (store) {
      unsigned char* data = transaction.data + s.data_offset;
      switch (transaction.op) {
        case Op::Read:
          store->read(s.offset, data, s.bytes);
          break;
        case Op::Write:
          store->write(s.offset, data, s.bytes);
          break;
        case Op::Update:
          store->update_add(s.offset, data, s.bytes, transaction.element);
          break;
      }
    }
    if (watched(transaction)) {
      const AppliedAccess access = applied_access(transaction, s);
      for (MemoryWatchIf* watcher : watchers) watcher->applied(access);
    }

    stats.bytes[index(transaction.op)][index(transaction.traffic_class)] += s.bytes;
    stats.channel_bytes[static_cast<std::size_t>(channel)] += s.bytes;
    // A channel's busy time is the mean over its queues' (pseudo-channels') data buses.
    stats.channel_busy_ns[static_cast<std::size_t>(channel)] +=
        static_cast<double>(occupancy) * resolution_ns / queues_per_channel;

    transaction.finish = std::max(transaction.finish, done);
    if (--transaction.unserved == 0) {
      ++stats.requests[index(transaction.op)][index(transaction.traffic_class)];
      transaction.done.notify(to_time(transaction.finish - at));
    }

    if (!ch.waiting.empty()) {  // the freed entry goes to the oldest back-pressured request
      const Entry waiting = ch.waiting.front();
      ch.waiting.pop_front();
      enqueue(queue, waiting, now);
    }
  }

  static PseudoChannelTimer::Kind kind_of(Op op) {
    switch (op) {
      case Op::Read:
        return PseudoChannelTimer::Kind::Read;
      case Op::Write:
        return PseudoChannelTimer::Kind::Write;
      case Op::Update:
        break;
    }
    return PseudoChannelTimer::Kind::Update;
  }

  // The bank model's choice: what the policy admits, reads or writes by the drain state, and among
  // those the oldest row hit (FR-FCFS) or the oldest.
  std::optional<std::size_t> choose(Channel& ch, sc_core::sc_time now) {
    const Admissible allowed =
        ch.admits_everything ? Admissible{} : ch.policy->admissible(view(ch.queue), now);
    if (allowed.none()) return std::nullopt;
    // The drain counts the writes of the classes the policy admits: held-back writes do not
    // choose the bus direction, as held-back row hits do not (below).
    int writes = 0, queued = 0;
    for (TrafficClass c : {TrafficClass::Compute, TrafficClass::Communication}) {
      if (!allowed.allows(c)) continue;
      writes += ch.writes[index(c)];
      queued += ch.occupancy[index(c)];
    }
    if (ch.draining && writes <= write_low) ch.draining = false;
    if (!ch.draining && writes >= write_high) ch.draining = true;
    const bool frfcfs = config.bank.scheduler == BankScheduler::FrFcfs;
    // The kind the drain state wants if the policy allows any of it; the scan stops at its first
    // row hit (or its oldest, without FR-FCFS), since nothing later can be chosen over that.
    const int wanted = ch.draining || writes == queued ? 1 : 0;
    // held_hit: the oldest row hit of a class the policy holds back, which may go after the
    // admitted row hits of its direction when the policy allows it (Admissible::held_row_hits).
    // Indices, kNone for none found (plain integers keep the scan's state in registers).
    constexpr std::size_t kNone = ~std::size_t{0};
    std::size_t oldest[2] = {kNone, kNone}, hit[2] = {kNone, kNone};  // [write?]
    std::size_t held_hit[2] = {kNone, kNone};
    const bool held_hits = frfcfs && allowed.held_row_hits;
    for (std::size_t i = 0; i < ch.queue.size(); ++i) {
      const Ref& ref = ch.queue[i].ref;
      const int w = ref.write ? 1 : 0;
      if (allowed.allows(ref.traffic_class)) {
        if (oldest[w] == kNone) oldest[w] = i;
        if (frfcfs && hit[w] == kNone && ref.row_hit) hit[w] = i;
        if (w == wanted && (frfcfs ? hit[w] : oldest[w]) != kNone) break;
      } else if (held_hits && held_hit[w] == kNone && ref.row_hit) {
        held_hit[w] = i;
      }
    }
    // Held-back row hits never choose the direction: a bus turnaround for them would cost the
    // admitted traffic tWTR or the read-to-write gap, where a hit in the current direction costs
    // one burst.
    const int first = ch.draining || oldest[0] == kNone ? 1 : 0;
    for (int w : {first, 1 - first}) {
      for (std::size_t found : {hit[w], held_hit[w], oldest[w]}) {
        if (found != kNone) return found;
      }
    }
    return std::nullopt;  // the policy admitted a class with nothing queued
  }

  // Tagged writes and updates are shown to the watchers; nothing else is.
  bool watched(const Transaction& transaction) const {
    return !watchers.empty() && transaction.tag != kNoTag && transaction.op != Op::Read;
  }

  AppliedAccess applied_access(const Transaction& transaction, const SubRequest& s) const {
    return AppliedAccess{
        base + s.offset,           s.bytes,         transaction.op,     transaction.element,
        transaction.traffic_class, transaction.tag, transaction.origin, transaction.unit_kind};
  }

  // Asks every watcher (bind order, up to the first refusal) whether queue entry `pick` of
  // channel k may be served now.
  bool admitted(int k, std::size_t pick) {
    const Ref& ref = channels[static_cast<std::size_t>(k)].queue[pick].ref;
    const Transaction& transaction = *ref.transaction;
    if (!watched(transaction)) return true;
    const AppliedAccess access = applied_access(transaction, transaction.subs[ref.sub]);
    for (MemoryWatchIf* watcher : watchers) {
      if (!watcher->admit(access)) {
        ++watch_refusals;
        return false;
      }
    }
    return true;
  }

  // Channels are visited only when something is due for them: an arrival at this activation, or a
  // wake-up (bus free or policy retry) that has come. So an activation costs what it serves, not
  // the channel count.
  void activate() {
    const sc_core::sc_time now = sc_core::sc_time_stamp();
    due.clear();
    while (!arrivals.empty() && arrivals.front().at <= now) {
      std::pop_heap(arrivals.begin(), arrivals.end(), std::greater<>());
      Transaction* transaction = arrivals.back().transaction;
      arrivals.pop_back();
      for (std::uint32_t sub = 0; sub < transaction->subs.size(); ++sub) {
        arrive(*transaction, sub, now);
        mark_due(transaction->subs[sub].queue);
      }
    }
    while (!wakeups.empty() && wakeups.front().first <= now.value()) {
      std::pop_heap(wakeups.begin(), wakeups.end(), std::greater<>());
      mark_due(wakeups.back().second);
      wakeups.pop_back();
    }
    // Channels a watcher held back are asked again at every activation (a watcher's space_event
    // is one of the method's triggers).
    for (int k : held) mark_due(k);
    held.clear();
    // Channel order keeps service deterministic and independent of how a channel became due.
    // Many due (a wide access arrived): walk the flags in order rather than sort the list.
    if (due.size() * 8 > channels.size()) {
      for (std::size_t k = 0; k < channels.size(); ++k) {
        if (is_due[k]) serve_channel(static_cast<int>(k), now);
      }
    } else {
      std::sort(due.begin(), due.end());
      for (int k : due) serve_channel(k, now);
    }
    for (int k : due) is_due[static_cast<std::size_t>(k)] = 0;
    std::optional<Ticks> next;
    if (!wakeups.empty()) next = wakeups.front().first;
    if (!arrivals.empty() && (!next || arrivals.front().at.value() < *next)) {
      next = arrivals.front().at.value();
    }
    if (next) wake.notify(to_time(*next - now.value()));
  }

  // Serves channel k while its bus is free, then books its next wake-up if work remains.
  void serve_channel(int k, sc_core::sc_time now) {
    Channel& ch = channels[static_cast<std::size_t>(k)];
    const Ticks ticks = now.value();
    if (ch.scheduled && *ch.scheduled <= ticks) ch.scheduled.reset();  // its wake-up has come
    while (ch.free_at <= ticks && !ch.queue.empty()) {
      const std::optional<std::size_t> pick =
          banked ? choose(ch, now) : ch.policy->pick(view(ch.queue), now);
      if (!pick) {
        const sc_core::sc_time retry = ch.policy->retry_after();
        if (retry > sc_core::SC_ZERO_TIME) ch.retry_at = ticks + retry.value();
        break;
      }
      ch.retry_at.reset();
      if (!admitted(k, *pick)) {  // a watcher is full: the channel idles until it has space
        held.push_back(k);
        return;
      }
      serve(k, *pick, now);
    }
    if (ch.queue.empty()) return;
    std::optional<Ticks> at;
    if (ch.free_at > ticks) {
      at = ch.free_at;
    } else if (ch.retry_at && *ch.retry_at > ticks) {
      at = ch.retry_at;
    }
    if (at && ch.scheduled != at) {  // one heap entry per booked time
      ch.scheduled = at;
      wakeups.emplace_back(*at, k);
      std::push_heap(wakeups.begin(), wakeups.end(), std::greater<>());
    }
  }

  void mark_due(int k) {
    if (is_due[static_cast<std::size_t>(k)]) return;
    is_due[static_cast<std::size_t>(k)] = 1;
    due.push_back(k);
  }

  std::size_t pending() const { return inside; }

  // The stats' occupancy integrals up to the last change of occupancy, converted when asked for
  // rather than at every change.
  void publish_occupancy() {
    for (int k = 0; k < kTrafficClasses; ++k) {
      stats.occupancy_integral_ns[k] = static_cast<double>(integral_units[k]) * resolution_ns;
    }
  }

  MemoryController& owner;
  const HbmConfig config;
  const SimMode mode;
  const std::uint64_t base;
  HbmStats& stats;
  ErrorLog rejections;
  bool banked = false;  // hbm.model = bank
  std::optional<DramAddressMap> dram_map;
  std::optional<DramTiming> dram_timing;  // shared by the timers (declared before `channels`)
  Ticks controller_latency = 0;
  int write_high = 0;  // write drain watermarks, in queued writes
  int write_low = 0;
  std::array<double, kOps> latency_sum_ns{};  // arrival to completion of served entries, by op
  std::array<std::uint64_t, kOps> served_entries{};
  std::vector<std::array<int, kTrafficClasses>> channel_occupancy;  // summed over its queues
  double units_per_byte = 0;      // time-resolution units of data-bus time per byte, one channel
  double queues_per_channel = 1;  // pseudo-channels per channel with the bank model
  double resolution_ns = 0;
  Ticks latency = 0;
  Ticks alu_latency = 0;

  std::vector<Channel> channels;
  std::optional<BackingStore> store;           // functional mode only
  sc_core::sc_event wake;                      // the method's trigger
  std::vector<Arrival> arrivals;               // min-heap by arrival time
  std::vector<std::pair<Ticks, int>> wakeups;  // min-heap: (time, channel) to serve
  std::vector<int> due;                        // channels to serve at this activation (scratch)
  std::vector<char> is_due;                    // per channel: already in `due`
  std::vector<int> held;                       // channels whose next request a watcher refused
  std::vector<MemoryWatchIf*> watchers;        // watch[0..n), cached at end of elaboration
  std::uint64_t watch_refusals = 0;            // admit() calls answered false
  std::uint64_t issue_order = 0;
  std::uint64_t sequence = 0;
  std::vector<std::unique_ptr<Transaction>> transactions;
  std::vector<Transaction*> free_transactions;

  std::size_t inside = 0;  // transactions accepted and not answered yet
  std::array<int, kTrafficClasses> total_occupancy{};
  std::array<std::uint64_t, kTrafficClasses> integral_units{};
  sc_core::sc_time occupancy_since;
  std::uint64_t backpressured = 0;           // sub-requests that found their queue full
  std::vector<OccupancyObserver> observers;  // called in the order they were added
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
    if (!(config.bank.write_low < config.bank.write_high)) {
      throw ConfigError("hbm.bank.write_low: must be below hbm.bank.write_high");
    }
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
  impl_->watchers.clear();
  for (int i = 0; i < watch.size(); ++i) impl_->watchers.push_back(watch[i]);
}

MemoryController::~MemoryController() = default;

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
  impl_->publish_occupancy();
  return stats_;
}

std::size_t MemoryController::pending() const {
  return impl_->pending();
}

int MemoryController::channel_of(std::uint64_t offset) const {
  return impl_->channel_of(offset);
}

void MemoryController::observe_occupancy(OccupancyObserver observer) {
  impl_->observers.push_back(std::move(observer));
}

nlohmann::json MemoryController::report() const {
  const Impl& impl = *impl_;
  const sc_core::sc_time now = sc_core::sc_time_stamp();
  const double elapsed_ns = now.to_seconds() * 1e9;
  nlohmann::json j;
  j["policy"] = impl.channels.front().policy->name();
  j["model"] = impl.banked ? "bank" : "simple";
  if (const auto* first = dynamic_cast<const McaPolicy*>(impl.channels.front().policy.get())) {
    (void)first;
    std::uint64_t held_back = 0, overrides = 0, urgent_releases = 0;
    std::int64_t lowest = 0, highest = 0;
    for (const auto& ch : impl.channels) {
      const McaStats& mca = static_cast<const McaPolicy&>(*ch.policy).stats();
      held_back += mca.held_back;
      overrides += mca.starvation_overrides;
      urgent_releases += mca.urgent_releases;
      lowest = lowest == 0 ? mca.threshold : std::min(lowest, mca.threshold);
      highest = std::max(highest, mca.threshold);
    }
    j["mca"] = {{"held_back", held_back},
                {"starvation_overrides", overrides},
                {"urgent_releases", urgent_releases},
                {"threshold_min", lowest},
                {"threshold_max", highest}};
  }
  if (impl.banked) {
    const std::uint64_t opened = impl.stats.row_hits + impl.stats.row_misses;
    j["row_hits"] = impl.stats.row_hits;
    j["row_misses"] = impl.stats.row_misses;
    j["row_hit_rate"] = opened > 0 ? static_cast<double>(impl.stats.row_hits) / opened : 0.0;
    std::uint64_t refreshes = 0;
    for (const auto& ch : impl.channels) refreshes += ch.timer->refreshes();
    j["refreshes"] = refreshes;
  }
  for (Op op : {Op::Read, Op::Write, Op::Update}) {
    const auto n = impl.served_entries[index(op)];
    j["mean_entry_latency_ns"][to_string(op)] = n > 0 ? impl.latency_sum_ns[index(op)] / n : 0.0;
  }
  j["mode"] = impl.mode == SimMode::Functional ? "functional" : "timing";
  for (Op op : {Op::Read, Op::Write, Op::Update}) {
    for (TrafficClass c : {TrafficClass::Compute, TrafficClass::Communication}) {
      j["bytes"][to_string(op)][to_string(c)] = stats_.bytes[index(op)][index(c)];
      j["requests"][to_string(op)][to_string(c)] = stats_.requests[index(op)][index(c)];
    }
  }
  const auto since = static_cast<double>((now - impl.occupancy_since).value());
  for (TrafficClass c : {TrafficClass::Compute, TrafficClass::Communication}) {
    const int k = index(c);
    // The integral runs up to now, not just to the last change.
    const double integral_ns =
        (static_cast<double>(impl.integral_units[k]) + impl.total_occupancy[k] * since) *
        impl.resolution_ns;
    j["queue_occupancy_integral_ns"][to_string(c)] = integral_ns;
    j["mean_queue_occupancy"][to_string(c)] = elapsed_ns > 0 ? integral_ns / elapsed_ns : 0.0;
    j["max_queue_occupancy"][to_string(c)] = stats_.max_occupancy[k];
  }
  j["channel_bytes"] = stats_.channel_bytes;
  j["channel_busy_ns"] = stats_.channel_busy_ns;
  double busy_ns = 0;
  for (double b : stats_.channel_busy_ns) busy_ns += b;
  j["utilisation"] =
      elapsed_ns > 0 ? busy_ns / (elapsed_ns * static_cast<double>(impl.config.channels)) : 0.0;
  j["rejected"] = stats_.rejected;
  j["backpressured"] = impl.backpressured;
  j["watch_refusals"] = impl.watch_refusals;
  j["pending"] = pending();
  j["pages"] = impl.store ? impl.store->pages() : 0;
  return j;
}

}  // namespace t3
