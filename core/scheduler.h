// The event scheduler: a 4-ary min-heap of small plain entries ordered by (time, sequence).
// DESIGN.md "The engine": the sequence number breaks ties so runs are deterministic; timers
// cancel lazily with generation counters (Timer below), so nothing is ever searched or removed
// from the heap except its top.
#pragma once

#include <cstdint>  // uint32_t, uint64_t

#include "core/units.h"

namespace fabsim {

/// Anything that receives events. `tag` says which of the target's events it is; `gen` is the
/// generation the event was scheduled with (for lazy cancellation).
class EventTarget {
 public:
  virtual ~EventTarget() = default;
  virtual void on_event(uint32_t tag, uint32_t gen) = 0;
};

/// One scheduled event: 32 bytes, no allocation.
struct Event {
  int64_t at = 0;  // picoseconds
  uint64_t sequence = 0;
  EventTarget* target = nullptr;
  uint32_t tag = 0;
  uint32_t gen = 0;
  Time time() const { return Time::ps(at); }
  uint64_t seq() const { return sequence; }
};

/// Min-heap on (time, seq) with arity 4 (fewer levels and cache misses than a binary heap).
/// The root sits at slot 3 of a 128-byte-aligned array so that the four children of a node
/// (slots 4i-8 .. 4i-5) share one 128-byte block: two cache lines per level instead of three.
class Scheduler {
 public:
  Scheduler() = default;
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;
  ~Scheduler();
  void schedule(Time at, EventTarget* target, uint32_t tag, uint32_t gen = 0);
  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  const Event& top() const { return heap_[kRoot]; }
  /// Removes and returns the earliest event.
  Event pop();
  /// Returns the earliest event and leaves its slot empty: the first event scheduled before
  /// close_hole() fills the root with one sift-down, instead of a pop plus a push. Most
  /// handlers re-arm themselves, so this halves the heap work per event.
  Event take_top();
  /// Removes the empty root if no event filled it.
  void close_hole() {
    if (hole_) {
      hole_ = false;
      remove_root();
    }
  }
  uint64_t scheduled() const { return next_seq_; }

 private:
  static constexpr size_t kRoot = 3;
  void grow();
  void remove_root();  // fills the root with the last event and sifts it down
  void sift_down(size_t i, const Event& e);
  // Written as a select rather than || so that the compiler emits conditional moves: twice
  // as fast as the short-circuit form in bench/ (BM_SchedulerHold).
  static bool before(const Event& a, const Event& b) {
    return a.at != b.at ? a.at < b.at : a.sequence < b.sequence;
  }
  Event* heap_ = nullptr;  // slots [kRoot, kRoot + size_) hold the heap
  size_t capacity_ = 0;    // slots allocated
  size_t size_ = 0;
  uint64_t next_seq_ = 0;
  bool hole_ = false;  // the root slot is empty (between take_top and close_hole)
};

/// A one-shot timer with lazy cancellation and at most one pending heap entry. Cancelling
/// only disarms; moving the deadline later keeps the pending entry, which re-schedules itself
/// for the remaining time when it surfaces (a retransmission timer restarted on every ACK
/// costs one heap entry, not one per ACK). Moving it earlier pushes a new entry; the old one
/// is recognised by its generation and ignored.
class Timer {
 public:
  /// Arms (or re-arms) the timer to fire at `at`.
  void arm(Scheduler& s, EventTarget* target, uint32_t tag, Time at) {
    armed_ = true;
    at_ = at;
    if (pending_ && pending_at_ <= at) return;  // the pending entry will re-schedule itself
    sched_ = &s;
    target_ = target;
    tag_ = tag;
    ++gen_;
    pending_ = true;
    pending_at_ = at;
    s.schedule(at, target, tag, gen_);
  }
  void cancel() { armed_ = false; }
  /// Call from on_event: true if the timer expires now (and disarms it). False for a stale
  /// entry, a cancelled timer, or a deadline that moved later (then it is re-scheduled).
  bool fire(uint32_t gen) {
    if (gen != gen_ || !pending_) return false;
    pending_ = false;
    if (!armed_) return false;
    if (at_ > pending_at_) {
      ++gen_;
      pending_ = true;
      pending_at_ = at_;
      sched_->schedule(at_, target_, tag_, gen_);
      return false;
    }
    armed_ = false;
    return true;
  }
  bool armed() const { return armed_; }
  Time when() const { return at_; }

 private:
  Scheduler* sched_ = nullptr;
  EventTarget* target_ = nullptr;
  uint32_t tag_ = 0;
  uint32_t gen_ = 0;
  bool armed_ = false;
  bool pending_ = false;
  Time at_;
  Time pending_at_;
};

}  // namespace fabsim
