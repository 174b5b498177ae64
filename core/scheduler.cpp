// The calendar queue, the span wheel and the far heap; see scheduler.h.
#include "core/scheduler.h"

#include <algorithm>  // sort, push_heap, pop_heap, copy, copy_backward, max
#include <bit>        // countr_zero
#include <cstdlib>    // aligned_alloc, free
#include <cstring>    // memcpy
#include <new>        // bad_alloc

#include "core/assert.h"

namespace fabsim {

EventHeap::~EventHeap() {
  std::free(heap_);
}

void EventHeap::grow() {
  const size_t cap = capacity_ == 0 ? 64 : capacity_ * 2;
  auto* next = static_cast<Event*>(std::aligned_alloc(128, cap * sizeof(Event)));
  if (next == nullptr) throw std::bad_alloc();
  if (heap_ != nullptr) std::memcpy(next, heap_, capacity_ * sizeof(Event));
  std::free(heap_);
  heap_ = next;
  capacity_ = cap;
}

void EventHeap::push(const Event& e) {
  if (kRoot + size_ + 1 > capacity_) grow();
  size_t i = kRoot + size_++;
  while (i > kRoot) {
    const size_t parent = (i >> 2) + 2;
    if (!Event::before(e, heap_[parent])) break;
    heap_[i] = heap_[parent];
    i = parent;
  }
  heap_[i] = e;
}

void EventHeap::sift_down(size_t i, const Event& e) {
  const size_t end_all = kRoot + size_;
  for (;;) {
    const size_t first = 4 * i - 8;
    if (first >= end_all) break;
    size_t best = first;
    const size_t end = first + 4 < end_all ? first + 4 : end_all;
    for (size_t c = first + 1; c < end; ++c) {
      if (Event::before(heap_[c], heap_[best])) best = c;
    }
    if (!Event::before(heap_[best], e)) break;
    heap_[i] = heap_[best];
    i = best;
  }
  heap_[i] = e;
}

Event EventHeap::pop() {
  FABSIM_ASSERT(size_ > 0);
  const Event out = heap_[kRoot];
  --size_;
  if (size_ > 0) {
    const Event last = heap_[kRoot + size_];
    sift_down(kRoot, last);
  }
  return out;
}

Scheduler::Scheduler()
    : cur_end_(uint64_t{1} << kBucketShift), window_end_(kBuckets << kBucketShift),
      spans_end_(window_end_ + (kSpans << kSpanShift)), heads_(kBuckets, kNil), bits_(kWords, 0),
      summary_(kSummaryWords, 0), span_heads_(kSpans, kNil), span_bits_(kSpans / 64, 0) {}

// The heap orders by "later first" so that its front is the earliest event.
namespace {
bool later(const Event& a, const Event& b) {
  return Event::before(b, a);
}
}  // namespace

void Scheduler::insert_current(const Event& e) {
  late_.push_back(e);
  std::push_heap(late_.begin(), late_.end(), later);
}

Event Scheduler::pop_late() {
  std::pop_heap(late_.begin(), late_.end(), later);
  const Event e = late_.back();
  late_.pop_back();
  --size_;
  return e;
}

void Scheduler::grow_nodes() {
  const size_t from = nodes_.size();
  const size_t to = from == 0 ? 1024 : 2 * from;
  FABSIM_ASSERT(to < kNil);
  nodes_.resize(to);
  next_.resize(to);
  for (size_t i = to; i-- > from;) {
    next_[i] = free_;
    free_ = static_cast<uint32_t>(i);
  }
}

uint64_t Scheduler::first_slot_from(uint64_t slot) const {
  uint64_t w = slot >> 6;
  if (w >= kWords) return kBuckets;
  const uint64_t here = bits_[w] & (~uint64_t{0} << (slot & 63));
  if (here != 0) return (w << 6) | static_cast<uint64_t>(std::countr_zero(here));
  ++w;  // the first word after this one that holds a bucket, from the summary
  for (uint64_t k = w >> 6; k < kSummaryWords; ++k) {
    uint64_t s = summary_[k];
    if (k == (w >> 6)) s &= ~uint64_t{0} << (w & 63);
    if (s != 0) {
      const uint64_t word = (k << 6) | static_cast<uint64_t>(std::countr_zero(s));
      return (word << 6) | static_cast<uint64_t>(std::countr_zero(bits_[word]));
    }
  }
  return kBuckets;
}

void Scheduler::push_span(const Event& e) {
  const uint32_t i = take_node();
  nodes_[i].e = e;
  const uint64_t slot = span_of(e.at) & kSpanMask;
  next_[i] = span_heads_[slot];
  span_heads_[slot] = i;
  span_bits_[slot >> 6] |= uint64_t{1} << (slot & 63);
}

uint64_t Scheduler::first_span() const {
  const uint64_t base = window_end_ >> kSpanShift;  // the span of slot base & kSpanMask
  const uint64_t start = base & kSpanMask;
  for (uint64_t k = 0; k <= kSpans / 64; ++k) {  // the first word twice: its bits before start
    const uint64_t w = ((start >> 6) + k) % (kSpans / 64);
    uint64_t bits = span_bits_[w];
    if (k == 0) bits &= ~uint64_t{0} << (start & 63);
    if (k == kSpans / 64) bits &= ~(~uint64_t{0} << (start & 63));
    if (bits != 0) {
      const uint64_t slot = (w << 6) | static_cast<uint64_t>(std::countr_zero(bits));
      return base + ((slot - start) & kSpanMask);
    }
  }
  return UINT64_MAX;
}

// The span's list is relinked node by node into the wheel's buckets: no event is copied, and
// the bucket sorts its events when it is loaded, as it does those scheduled into it directly.
void Scheduler::open_span(uint64_t slot) {
  uint32_t i = span_heads_[slot];
  span_heads_[slot] = kNil;
  span_bits_[slot >> 6] &= ~(uint64_t{1} << (slot & 63));
  uint32_t ahead = i;  // the links are in cache; the nodes, prefetched 8 ahead, rarely are
  for (int k = 0; k < 8 && ahead != kNil; ++k) {
    __builtin_prefetch(&nodes_[ahead]);
    ahead = next_[ahead];
  }
  while (i != kNil) {
    if (ahead != kNil) {
      __builtin_prefetch(&nodes_[ahead]);
      ahead = next_[ahead];
    }
    const uint32_t next = next_[i];
    link_bucket(i, bucket_of(nodes_[i].e.at) & kMask);
    i = next;
  }
}

// The window ends kSpansPerWheel spans after the start of the current bucket's span; the spans
// it takes in move into the wheel, and the far events that the span wheel now covers move into
// it (or into the wheel).
void Scheduler::move_window(uint64_t end) {
  const uint64_t from = window_end_ >> kSpanShift;
  const uint64_t spans = (end >> kSpanShift) - from;
  // Every span slot holds the events of one span of [from, from + kSpans): all of them move
  // when the window takes in kSpans spans or more.
  for (uint64_t k = 0; k < spans && k < kSpans; ++k) {
    const uint64_t slot = (from + k) & kSpanMask;
    if ((span_bits_[slot >> 6] >> (slot & 63)) & 1U) open_span(slot);
  }
  window_end_ = end;
  spans_end_ = end + (kSpans << kSpanShift);
  while (!far_.empty() && static_cast<uint64_t>(far_.top().at) < spans_end_) {
    const Event e = far_.pop();
    if (static_cast<uint64_t>(e.at) < window_end_) {
      push_bucket(e);  // the current bucket's too: its list is loaded next
    } else {
      push_span(e);
    }
  }
}

// The next bucket is the first non-empty bucket of the wheel after the current one; if the
// wheel is empty, the first bucket with events of the first span that holds any, or else of
// the far heap's earliest event. The window moves on with it (move_to); the new bucket's list
// is sorted and goes ahead of the events still current, which are all earlier (events
// scheduled later before its end wait in late_, which pop() merges in). So events run in the
// same order however often this is called.
void Scheduler::top_up() {
  FABSIM_ASSERT(size_ > hi_ - lo_ + late_.size());
  FABSIM_ASSERT(next_rel_ == kBuckets ? next_slot() == kBuckets
                                      : next_slot() == ((cur_ + 1 + next_rel_) & kMask));
  if (next_rel_ != kBuckets) {
    move_to(cur_ + 1 + next_rel_);
  } else {
    const uint64_t span = first_span();
    if (span != UINT64_MAX) {
      move_to(span << (kSpanShift - kBucketShift));  // the span's first bucket
    } else {
      FABSIM_ASSERT(!far_.empty());
      move_to(bucket_of(far_.top().at));
    }
    const uint64_t here = cur_ & kMask;
    if (heads_[here] == kNil) {  // the span's events begin in a later bucket (of the same span)
      uint64_t first = first_slot_from(here);
      if (first == kBuckets) first = first_slot_from(0);
      FABSIM_ASSERT(first != kBuckets);
      move_to(cur_ + ((first - here) & kMask));
    }
  }
  const uint64_t s = cur_ & kMask;
  if (lo_ == hi_) lo_ = hi_ = buf_.size();  // nothing current: the bucket goes at the top
  // The bucket's events go below lo_. Its list runs from the last event scheduled into it to
  // the first, and events are mostly scheduled in time order, so the list is mostly latest
  // first already: it is copied in that order (the head lowest), then sorted by insertion,
  // which costs a comparison per event when nothing is out of place.
  const uint32_t head = heads_[s];
  FABSIM_ASSERT(head != kNil);
  if (next_[head] == kNil) {  // one event (a sparse run: most buckets)
    if (lo_ == 0) [[unlikely]]
      make_room(1);
    clear_slot(s);
    buf_[--lo_] = nodes_[head].e;
    next_[head] = free_;
    free_ = head;
    start_walk();
    return;
  }
  // Prefetch 8 nodes ahead of the copy (the links are in cache; the walk covered the
  // bucket's first nodes unless it grew after the walk started).
  // Counting the list prefetches its first 8 nodes and finds the ninth, where the copy's
  // prefetch starts.
  uint32_t ahead = kNil;
  size_t n = 0;
  for (uint32_t i = head; i != kNil; i = next_[i], ++n) {
    if (n < 8) {
      __builtin_prefetch(&nodes_[i]);
    } else if (n == 8) {
      ahead = i;
    }
  }
  if (lo_ < n) [[unlikely]]
    make_room(n);  // may throw bad_alloc, which ends the run (main reports it)
  clear_slot(s);
  lo_ -= n;
  Event* a = buf_.data() + lo_;
  for (uint32_t i = head, k = 0; i != kNil; ++k) {
    if (ahead != kNil) {
      __builtin_prefetch(&nodes_[ahead]);
      ahead = next_[ahead];
    }
    a[k] = nodes_[i].e;
    const uint32_t next = next_[i];
    next_[i] = free_;
    free_ = i;
    i = next;
  }
  if (n > kInsertionSortMax) {
    std::sort(a, a + n, [](const Event& x, const Event& y) { return Event::before(y, x); });
  } else {
    for (size_t i = 1; i < n; ++i) {
      const Event v = a[i];
      size_t j = i;
      for (; j > 0 && Event::before(a[j - 1], v); --j) a[j] = a[j - 1];
      a[j] = v;
    }
  }
  start_walk();
}

void Scheduler::make_room(size_t n) {
  const size_t size = hi_ - lo_;
  if (2 * (size + n) > buf_.size()) {  // grow: at least half of the array stays free
    std::vector<Event> bigger(std::max<size_t>({2 * buf_.size(), 2 * (size + n), 256}));
    std::copy(buf_.begin() + static_cast<std::ptrdiff_t>(lo_),
              buf_.begin() + static_cast<std::ptrdiff_t>(hi_),
              bigger.end() - static_cast<std::ptrdiff_t>(size));
    buf_.swap(bigger);
  } else {
    std::copy_backward(buf_.begin() + static_cast<std::ptrdiff_t>(lo_),
                       buf_.begin() + static_cast<std::ptrdiff_t>(hi_), buf_.end());
  }
  hi_ = buf_.size();
  lo_ = hi_ - size;
}

void Scheduler::advance() {
  FABSIM_ASSERT(size_ > 0 && lo_ == hi_);
  top_up();
}

uint64_t Scheduler::next_slot() const {
  const uint64_t from = (cur_ + 1) & kMask;
  const uint64_t slot = first_slot_from(from);
  return slot == kBuckets && from != 0 ? first_slot_from(0) : slot;
}

void Scheduler::start_walk() {
  const uint64_t slot = next_slot();
  next_rel_ = slot == kBuckets ? kBuckets : (slot - cur_ - 1) & kMask;
  walk_ = slot == kBuckets ? kNil : heads_[slot];
  if (walk_ != kNil) __builtin_prefetch(&nodes_[walk_]);
}

}  // namespace fabsim
