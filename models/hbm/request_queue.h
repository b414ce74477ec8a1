// The memory controller's request queues: per queue, a ring of entries in arrival order up to the
// queue depth and a waiting list of the back-pressured beyond it; over all queues, the occupancy
// statistics (integral, maximum, observers).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>
#include <systemc>

#include "models/hbm/arbitration.h"
#include "models/hbm/dram_bank.h"
#include "protocol/to_size.h"
#include "tlm_interconnect/payload.h"

namespace t3 {

struct HbmTransaction;  // the controller's record of one access, opaque to the queues

// A queue entry: what the arbitration policy reads (`request`), what the bank scheduler scans
// (held here, not behind the transaction pointer: the scans touch every entry of a queue, and a
// pointer chase each costs more than the rest of the scan), and the controller's own.
struct QueueEntry {
  QueuedRequest request;
  HbmTransaction* transaction = nullptr;
  DramRowSpan span;       // bank model only: the banks it touches
  std::uint32_t sub = 0;  // which of the transaction's sub-requests
  bool write = false;     // a write or an update (an update ends in a write: it drains with them)
  TrafficClass traffic_class = TrafficClass::Compute;
  // Bank model: its row is open in every bank it touches. Kept up to date as rows open and close,
  // so a scheduler reads a flag per entry instead of the banks' state. Once queued, changed only
  // through RequestQueue::set_row_hit, which counts the queue's row hits.
  bool row_hit = false;
  // Shown to the watchers before service (HbmTransaction::watched): one that refuses it idles the
  // queue, so FR-FCFS's look-ahead passes no older entry for it (the tracker admits in order).
  bool watched = false;
};

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

// Entries waiting in the controller's queues, by traffic class: summed per channel (over its
// pseudo-channels' queues) and over all; their time integral and each channel's maximum.
class QueueOccupancy {
 public:
  // Called on every change of a channel's occupancy, in the order they were added.
  using Observer =
      std::function<void(sc_core::sc_time, int channel, int compute, int communication)>;

  explicit QueueOccupancy(int channels);
  void change(int channel, TrafficClass traffic_class, int delta, sc_core::sc_time now);
  void observe(Observer observer) { observers_.push_back(std::move(observer)); }
  // Entries x time in ns: up to the last change, or up to `now`.
  double integral_ns(int traffic_class) const;
  double integral_ns(int traffic_class, sc_core::sc_time now) const;
  std::uint64_t max(int traffic_class) const { return max_[traffic_class]; }
  // queue_occupancy_integral_ns, mean_queue_occupancy and max_queue_occupancy, by class, up to now.
  void add_to_report(nlohmann::json& report, sc_core::sc_time now) const;

 private:
  std::vector<std::array<int, kTrafficClasses>> channel_;  // summed over its queues
  std::array<int, kTrafficClasses> total_{};
  std::array<std::uint64_t, kTrafficClasses> integral_units_{};  // entries x resolution units
  sc_core::sc_time since_;                                       // the last change
  double resolution_ns_;
  std::array<std::uint64_t, kTrafficClasses> max_{};  // of any one channel
  std::vector<Observer> observers_;
};

// One queue: at most `depth` entries in arrival order, what the policy and the scheduler choose
// from, and beyond them the back-pressured entries in arrival order. Every change of its entries
// is counted in the controller's QueueOccupancy under the queue's channel.
class RequestQueue {
 public:
  RequestQueue(std::size_t depth, int channel, QueueOccupancy& occupancy)
      : depth_(depth), channel_(channel), occupancy_(&occupancy) {}

  std::size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  bool full() const { return entries_.size() >= depth_; }
  QueueEntry& operator[](std::size_t i) { return entries_[i]; }
  const QueueEntry& operator[](std::size_t i) const { return entries_[i]; }
  int channel() const { return channel_; }
  // The requests as the arbitration policy reads them.
  QueueView view() const {
    return QueueView(&entries_.slot0().request, sizeof(QueueEntry), entries_.head(),
                     entries_.mask(), entries_.size());
  }
  // Entries queued (not waiting), and the writes and updates among them, of one class.
  int queued(TrafficClass c) const { return queued_[static_cast<int>(c)]; }
  int writes(TrafficClass c) const { return writes_[static_cast<int>(c)]; }
  // Entries queued whose row_hit is set, of one direction (writes and updates, or reads) and class:
  // when one is in the direction FR-FCFS wants, it need not ask any bank's readiness.
  int row_hits(bool write, TrafficClass c) const { return row_hits_[write][static_cast<int>(c)]; }
  // Sets entry i's row_hit.
  void set_row_hit(std::size_t i, bool hit) {
    QueueEntry& entry = entries_[i];
    if (entry.row_hit == hit) return;
    entry.row_hit = hit;
    row_hits_[entry.write][static_cast<int>(entry.traffic_class)] += hit ? 1 : -1;
  }

  // Adds an entry at the back; the queue must not be full.
  void push(const QueueEntry& entry, sc_core::sc_time now);
  // Removes and returns entry i.
  QueueEntry take(std::size_t i, sc_core::sc_time now);
  // The back-pressured: held in arrival order until the queue has room.
  void hold(const QueueEntry& entry) { waiting_.push_back(entry); }
  bool has_waiting() const { return !waiting_.empty(); }
  QueueEntry next_waiting() {
    const QueueEntry entry = waiting_.front();
    waiting_.pop_front();
    return entry;
  }

 private:
  void count(const QueueEntry& entry, int delta, sc_core::sc_time now);

  Ring<QueueEntry> entries_;
  std::deque<QueueEntry> waiting_;
  std::array<int, kTrafficClasses> queued_{};
  std::array<int, kTrafficClasses> writes_{};
  std::array<std::array<int, kTrafficClasses>, 2> row_hits_{};  // [write][class]
  std::size_t depth_;
  int channel_;
  QueueOccupancy* occupancy_;
};

// Inline: every entry's arrival and service passes here.
inline void QueueOccupancy::change(int channel, TrafficClass traffic_class, int delta,
                                   sc_core::sc_time now) {
  const sc_core::sc_time::value_type elapsed = (now - since_).value();
  for (int c = 0; c < kTrafficClasses; ++c) {
    integral_units_[c] += static_cast<std::uint64_t>(total_[c]) * elapsed;
  }
  since_ = now;
  const int c = static_cast<int>(traffic_class);
  total_[c] += delta;
  auto& of_channel = channel_[to_size(channel)];
  of_channel[c] += delta;
  max_[c] = std::max<std::uint64_t>(max_[c], static_cast<std::uint64_t>(of_channel[c]));
  for (const auto& observer : observers_) observer(now, channel, of_channel[0], of_channel[1]);
}

inline void RequestQueue::count(const QueueEntry& entry, int delta, sc_core::sc_time now) {
  const int c = static_cast<int>(entry.traffic_class);
  queued_[c] += delta;
  if (entry.write) writes_[c] += delta;
  if (entry.row_hit) row_hits_[entry.write][c] += delta;
  occupancy_->change(channel_, entry.traffic_class, delta, now);
}

inline void RequestQueue::push(const QueueEntry& entry, sc_core::sc_time now) {
  entries_.push_back(entry);
  count(entry, +1, now);
}

inline QueueEntry RequestQueue::take(std::size_t i, sc_core::sc_time now) {
  const QueueEntry entry = entries_[i];
  entries_.erase(i);
  count(entry, -1, now);
  return entry;
}

}  // namespace t3
