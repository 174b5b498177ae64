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
  uint64_t scheduled() const { return next_seq_; }

 private:
  static constexpr size_t kRoot = 3;
  void grow();
  // Written as a select rather than || so that the compiler emits conditional moves: twice
  // as fast as the short-circuit form in bench/ (BM_SchedulerHold).
  static bool before(const Event& a, const Event& b) {
    return a.at != b.at ? a.at < b.at : a.sequence < b.sequence;
  }
  Event* heap_ = nullptr;  // slots [kRoot, kRoot + size_) hold the heap
  size_t capacity_ = 0;    // slots allocated
  size_t size_ = 0;
  uint64_t next_seq_ = 0;
};

/// A one-shot timer with lazy cancellation: cancelling or re-arming bumps the generation, and
/// a stale event is recognised on arrival by its old generation and ignored.
class Timer {
 public:
  /// Arms (or re-arms) the timer to fire at `at`.
  void arm(Scheduler& s, EventTarget* target, uint32_t tag, Time at) {
    ++gen_;
    armed_ = true;
    at_ = at;
    s.schedule(at, target, tag, gen_);
  }
  void cancel() {
    ++gen_;
    armed_ = false;
  }
  /// Call from on_event: true if this event is the live one (and disarms the timer).
  bool fire(uint32_t gen) {
    if (!armed_ || gen != gen_) return false;
    armed_ = false;
    return true;
  }
  bool armed() const { return armed_; }
  Time when() const { return at_; }

 private:
  uint32_t gen_ = 0;
  bool armed_ = false;
  Time at_;
};

}  // namespace fabsim
