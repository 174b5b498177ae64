// The event scheduler: a calendar queue (a timing wheel of short buckets) for the near future,
// a second wheel of long buckets behind it for the next milliseconds (retransmission and pacing
// timers), and a 4-ary min-heap for anything later, all ordered by (time, sequence).
// DESIGN.md "The engine": the sequence number breaks ties so runs are deterministic; timers
// cancel lazily with generation counters (Timer below), so nothing is ever searched or removed
// except the earliest event.
//
// Why a wheel (docs/PERFORMANCE.md "A calendar queue, and prefetching along it"): in a busy fabric
// nearly every event lands within a few microseconds (a serialization, a link's delay), and
// thousands are pending at once (one per busy link and port). A heap pays a sift of full depth
// per event (half of all instructions at 1,024 hosts); the wheel pays an append to a bucket, and
// a sort of the bucket's few events when time reaches it. The order is exactly the heap's:
// buckets come in time order, each is sorted by (time, sequence), and an event scheduled into
// the bucket being run waits in a small heap of its own that pop() merges with the bucket. So a
// run gives the same results either way.
#pragma once

#include <cstdint>  // uint32_t, uint64_t
#include <vector>   // buckets, nodes, the current bucket

#include "core/assert.h"
#include "core/units.h"

namespace fabsim {

/// Anything that receives events. `tag` says which of the target's events it is; `gen` is the
/// generation the event was scheduled with (for lazy cancellation).
class EventTarget {
 public:
  virtual ~EventTarget() = default;
  virtual void on_event(uint32_t tag, uint32_t gen) = 0;
  /// What the target's next event will read first (a link's head packet), or null. The
  /// scheduler prefetches it a few events ahead, so that in a large fabric the packet is in
  /// cache when its event runs (docs/PERFORMANCE.md). A hint only: it changes no result.
  const void* prefetch_hint() const { return hint_; }
  /// A second object the next event reads, first two lines (the queue slot that holds a port's
  /// head packet, the node a link feeds), or null.
  const void* prefetch_aux() const { return aux_; }
  /// Called one event ahead, when the hinted lines should be in cache: prefetch what the next
  /// event reads through them (a link asks its far node for the route of its head packet).
  /// A hint only: it must change no state.
  virtual void prefetch_next() const {}

 protected:
  void set_prefetch_hint(const void* p, const void* aux = nullptr) {
    hint_ = p;
    aux_ = aux;
  }

 private:
  const void* hint_ = nullptr;
  const void* aux_ = nullptr;
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
  /// Strict order of events: earlier time first, then scheduling order. Written as a select
  /// rather than || so that the compiler emits conditional moves: twice as fast as the
  /// short-circuit form in bench/ (BM_SchedulerHold).
  static bool before(const Event& a, const Event& b) {
    return a.at != b.at ? a.at < b.at : a.sequence < b.sequence;
  }
};

/// Min-heap on (time, seq) with arity 4 (fewer levels and cache misses than a binary heap).
/// The root sits at slot 3 of a 128-byte-aligned array so that the four children of a node
/// (slots 4i-8 .. 4i-5) share one 128-byte block: two cache lines per level instead of three.
/// The scheduler keeps its far-future events here.
class EventHeap {
 public:
  EventHeap() = default;
  EventHeap(const EventHeap&) = delete;
  EventHeap& operator=(const EventHeap&) = delete;
  ~EventHeap();
  void push(const Event& e);
  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  const Event& top() const { return heap_[kRoot]; }
  /// Removes and returns the earliest event.
  Event pop();

 private:
  static constexpr size_t kRoot = 3;
  void grow();
  void sift_down(size_t i, const Event& e);
  Event* heap_ = nullptr;  // slots [kRoot, kRoot + size_) hold the heap
  size_t capacity_ = 0;    // slots allocated
  size_t size_ = 0;
};

/// The simulation's event queue. Time is cut into buckets of 2^kBucketShift ps and spans of
/// 2^kSpanShift ps (an eighth of the wheel). The wheel holds the buckets from the current one to
/// the end of the span seven spans after the current bucket's (the window, 3.7 to 4.2 us), each
/// an unsorted list. Events beyond the window wait in the span wheel, one unsorted list per
/// span for the kSpans spans after the window (2.1 ms: retransmission timers), and move into
/// the wheel, node by node with no sort, when the window takes in their span; events later
/// still wait in the far heap. The current bucket is a sorted array, earliest event last.
/// (docs/PERFORMANCE.md "A wheel of spans for the timers".)
class Scheduler {
 public:
  static constexpr int kBucketShift = 9;  // 512 ps per bucket
  static constexpr uint64_t kBuckets = 8192;
  static constexpr int kSpanShift = 19;  // 524 ns per span: an eighth of the wheel
  static constexpr uint64_t kSpans = 4096;

  Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;
  /// Schedules an event. `at` may be any time >= 0, earlier than events already taken too
  /// (the simulation never does that; the order is kept all the same).
  void schedule(Time at, EventTarget* target, uint32_t tag, uint32_t gen = 0) {
    FABSIM_ASSERT(at.ps() >= 0);
    const Event e{at.ps(), next_seq_++, target, tag, gen};
    ++size_;
    const auto t = static_cast<uint64_t>(e.at);
    if (t < cur_end_) [[unlikely]] {
      insert_current(e);
    } else if (t < window_end_) [[likely]] {
      push_bucket(e);
    } else if (t < spans_end_) {
      push_span(e);
    } else {
      far_.push(e);
    }
  }
  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  /// The earliest event (the scheduler must not be empty).
  const Event& top() {
    if (!late_.empty()) [[unlikely]] {
      if (lo_ == hi_ || Event::before(late_.front(), buf_[hi_ - 1])) return late_.front();
    }
    if (lo_ == hi_) advance();
    return buf_[hi_ - 1];
  }
  /// Removes and returns the earliest event (the scheduler must not be empty).
  Event pop() {
    if (!late_.empty()) [[unlikely]] {
      if (lo_ == hi_ || Event::before(late_.front(), buf_[hi_ - 1])) return pop_late();
    }
    if (lo_ == hi_) advance();
    const Event e = buf_[--hi_];
    --size_;
    // Keep kLookahead events sorted ahead, so that the prefetch stages below run across bucket
    // boundaries too: the next bucket joins the current one before this one runs dry.
    if (hi_ - lo_ < kLookahead && size_ > hi_ - lo_ + late_.size()) [[unlikely]]
      top_up();
    // Walk the next bucket's list one node per event, so that its events are in cache when it
    // is loaded. The links sit in their own dense array (small enough to stay in cache), so the
    // walk does not wait for the events it prefetches.
    if (walk_ != kNil) {
      walk_ = next_[walk_];
      if (walk_ != kNil) __builtin_prefetch(&nodes_[walk_]);
    }
    // A three-stage prefetch along the sorted events: the target of the event kStageTarget
    // ahead (its first three lines, where ports and links keep what their events read), the
    // hints of the one kStageHint ahead (whose target was prefetched two pops ago), and what
    // the next one reads through its hints.
    const size_t n = hi_ - lo_;
    if (n >= kStageNext) buf_[hi_ - kStageNext].target->prefetch_next();
    if (n >= kStageTarget) {
      const auto target = reinterpret_cast<uintptr_t>(buf_[hi_ - kStageTarget].target);
      __builtin_prefetch(reinterpret_cast<const void*>(target));
      __builtin_prefetch(reinterpret_cast<const void*>(target + 64));
      __builtin_prefetch(reinterpret_cast<const void*>(target + 128));
    }
    if (n >= kStageHint) {
      const EventTarget* t = buf_[hi_ - kStageHint].target;
      const auto hint = reinterpret_cast<uintptr_t>(t->prefetch_hint());
      __builtin_prefetch(reinterpret_cast<const void*>(hint));
      __builtin_prefetch(reinterpret_cast<const void*>(hint + 64));
      const auto aux = reinterpret_cast<uintptr_t>(t->prefetch_aux());
      __builtin_prefetch(reinterpret_cast<const void*>(aux));
      __builtin_prefetch(reinterpret_cast<const void*>(aux + 64));
    }
    return e;
  }
  uint64_t scheduled() const { return next_seq_; }

 private:
  static constexpr uint32_t kNil = UINT32_MAX;
  static constexpr uint64_t kMask = kBuckets - 1;
  static constexpr uint64_t kWords = kBuckets / 64;       // one bit per bucket: non-empty
  static constexpr uint64_t kSummaryWords = kWords / 64;  // one bit per word: non-zero
  static_assert(kBuckets % 4096 == 0, "two whole bitmap levels");
  static constexpr uint64_t kBucketsPerSpan = uint64_t{1} << (kSpanShift - kBucketShift);
  static constexpr uint64_t kSpansPerWheel = kBuckets / kBucketsPerSpan;
  static_assert(kSpansPerWheel >= 2 && kBuckets % kBucketsPerSpan == 0, "whole spans");
  static_assert(kSpans % 64 == 0, "whole bitmap words");
  static constexpr uint64_t kSpanMask = kSpans - 1;
  // A list node is one event, on a 32-byte boundary so that none straddles two cache lines;
  // its link is next_[i].
  struct alignas(32) Node {
    Event e;
  };
  static_assert(sizeof(Node) == 32);
  static uint64_t bucket_of(int64_t at) { return static_cast<uint64_t>(at) >> kBucketShift; }
  static uint64_t span_of(int64_t at) { return static_cast<uint64_t>(at) >> kSpanShift; }
  /// Puts `node` (which holds an event of the window) at the head of wheel slot `slot`'s list.
  void link_bucket(uint32_t node, uint64_t slot) {
    next_[node] = heads_[slot];
    heads_[slot] = node;
    bits_[slot >> 6] |= uint64_t{1} << (slot & 63);
    summary_[slot >> 12] |= uint64_t{1} << ((slot >> 6) & 63);
    const uint64_t rel = (slot - cur_ - 1) & kMask;
    if (rel < next_rel_) next_rel_ = rel;
  }
  /// Empties wheel slot `slot` (its list has been taken).
  void clear_slot(uint64_t slot) {
    heads_[slot] = kNil;
    bits_[slot >> 6] &= ~(uint64_t{1} << (slot & 63));
    if (bits_[slot >> 6] == 0) summary_[slot >> 12] &= ~(uint64_t{1} << ((slot >> 6) & 63));
  }
  uint32_t take_node() {
    if (free_ == kNil) [[unlikely]]
      grow_nodes();
    const uint32_t i = free_;
    free_ = next_[i];
    return i;
  }
  /// Puts `e` (beyond the window, within the span wheel) on its span's list. Out of line, as
  /// far_.push() is: schedule() stays small enough to inline.
  void push_span(const Event& e);
  /// Makes bucket `bucket` the current one: the window moves on with it, takes in the spans it
  /// now covers and the far events the span wheel now covers.
  void move_to(uint64_t bucket) {
    cur_ = bucket;
    cur_end_ = (cur_ + 1) << kBucketShift;
    const uint64_t end = ((cur_ >> (kSpanShift - kBucketShift)) + kSpansPerWheel) << kSpanShift;
    if (end != window_end_) [[unlikely]]
      move_window(end);
  }
  /// The window's end moves to `end`: it takes in the spans up to there, and the far events
  /// that the span wheel now covers.
  void move_window(uint64_t end);
  /// Moves the events of span `span` (which the window now covers) into their buckets.
  void open_span(uint64_t span);
  /// The first span after the window that holds events, or UINT64_MAX.
  uint64_t first_span() const;
  /// Moves to the next non-empty bucket and makes it the current one (sorted).
  void advance();
  /// Moves to the next non-empty bucket and adds its events, sorted, ahead of the current ones
  /// (all of which are earlier). advance() is top_up() from an empty current bucket.
  void top_up();
  /// Points walk_ at the list of the first non-empty bucket after the current one.
  void start_walk();
  /// The wheel slot of the first non-empty bucket after the current one (wrapping), or kBuckets.
  uint64_t next_slot() const;
  // How many events ahead each prefetch stage works (docs/PERFORMANCE.md "Prefetch stages"):
  // a target's lines, then two events later its hints (which need the target's lines), then
  // two events later what prefetch_next() reads through them, one event before the event runs.
  // Two events between the first stages give a packet that left the caches long ago (a link's
  // head frame) the time to arrive before prefetch_next() reads it.
  static constexpr size_t kStageTarget = 5;
  static constexpr size_t kStageHint = 3;
  static constexpr size_t kStageNext = 1;
  static constexpr size_t kLookahead = kStageTarget;
  // A bucket of up to this many events is sorted by insertion (std::sort's own threshold).
  static constexpr size_t kInsertionSortMax = 16;
  /// Moves the current events to the top of buf_ (growing it if need be) so that at least
  /// `n` free slots lie below them.
  void make_room(size_t n);
  /// An event for the bucket already loaded joins late_ (see late_).
  void insert_current(const Event& e);
  Event pop_late();
  void push_bucket(const Event& e) {
    const uint32_t i = take_node();
    nodes_[i].e = e;
    link_bucket(i, bucket_of(e.at) & kMask);
  }
  /// Adds free nodes (as many again as there are).
  void grow_nodes();
  /// The first non-empty slot at or after `slot` (no wrap), or kBuckets.
  uint64_t first_slot_from(uint64_t slot) const;

  // The current events, sorted latest first, are buf_[lo_, hi_): pop() takes the earliest from
  // hi_ - 1, and top_up() puts the next bucket's (all later) just below lo_, so that joining a
  // bucket copies only its own events (make_room() moves the block up when lo_ reaches 0).
  std::vector<Event> buf_;
  size_t lo_ = 0;
  size_t hi_ = 0;
  uint64_t cur_ = 0;                  // absolute number of the current bucket
  uint64_t cur_end_ = 0;              // first ps after it
  uint64_t window_end_ = 0;           // first ps beyond the wheel (the end of a span)
  uint64_t spans_end_ = 0;            // first ps beyond the span wheel
  std::vector<uint32_t> heads_;       // per slot: first node of the bucket's list
  std::vector<uint64_t> bits_;        // per slot: the bucket holds events
  std::vector<uint64_t> summary_;     // per word of bits_: the word is non-zero
  std::vector<Node> nodes_;           // list nodes; free ones chained from free_
  std::vector<uint32_t> next_;        // per node: the next node of its list (kNil ends it)
  std::vector<uint32_t> span_heads_;  // per span slot: first node of the span's list
  std::vector<uint64_t> span_bits_;   // per span slot: the span holds events
  uint32_t free_ = kNil;
  uint32_t walk_ = kNil;  // the node of the next bucket to prefetch next (a hint only)
  // Where the next non-empty bucket of the wheel lies, in buckets after cur_ + 1 (kBuckets: the
  // wheel holds none), as next_slot() would find it: start_walk() searches the bitmap once per
  // loaded bucket and link_bucket() keeps it up to date, so top_up() need not search again.
  uint64_t next_rel_ = kBuckets;
  // Events scheduled into the bucket already loaded (a zero-delay event, or one a few hundred
  // ps ahead): a min-heap on (time, sequence), merged with the current events at pop. A sorted
  // insert among them would shift every event of the same time, which is quadratic when a
  // handler schedules many at once (a collective step starting a million transfers).
  std::vector<Event> late_;
  EventHeap far_;
  size_t size_ = 0;
  uint64_t next_seq_ = 0;
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
    ++gen_;
    pending_ = true;
    pending_at_ = at;
    s.schedule(at, target, tag, gen_);
  }
  void cancel() { armed_ = false; }
  /// Call from on_event with the event's `tag` and `gen`, the scheduler and the target the
  /// timer was armed with (it does not store them: a timer is 24 bytes, and a large fabric
  /// has one per port and several per connection): true if the timer expires now (and
  /// disarms it). False for a stale entry, a cancelled timer, or a deadline that moved later
  /// (then it is re-scheduled with the same target and tag).
  bool fire(Scheduler& s, EventTarget* target, uint32_t tag, uint32_t gen) {
    if (gen != gen_ || !pending_) return false;
    pending_ = false;
    if (!armed_) return false;
    if (at_ > pending_at_) {
      ++gen_;
      pending_ = true;
      pending_at_ = at_;
      s.schedule(at_, target, tag, gen_);
      return false;
    }
    armed_ = false;
    return true;
  }
  bool armed() const { return armed_; }
  Time when() const { return at_; }

 private:
  uint32_t gen_ = 0;
  bool armed_ = false;
  bool pending_ = false;
  Time at_;
  Time pending_at_;
};
static_assert(sizeof(Timer) == 24);

}  // namespace fabsim
