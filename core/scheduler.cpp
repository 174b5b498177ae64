// 4-ary heap operations; see scheduler.h.
#include "core/scheduler.h"

#include <cstdlib>  // aligned_alloc, free
#include <cstring>  // memcpy
#include <new>      // bad_alloc

#include "core/assert.h"

namespace fabsim {

Scheduler::~Scheduler() {
  std::free(heap_);
}

void Scheduler::grow() {
  const size_t cap = capacity_ == 0 ? 64 : capacity_ * 2;
  auto* next = static_cast<Event*>(std::aligned_alloc(128, cap * sizeof(Event)));
  if (next == nullptr) throw std::bad_alloc();
  if (heap_ != nullptr) std::memcpy(next, heap_, capacity_ * sizeof(Event));
  std::free(heap_);
  heap_ = next;
  capacity_ = cap;
}

void Scheduler::schedule(Time at, EventTarget* target, uint32_t tag, uint32_t gen) {
  FABSIM_ASSERT(at.ps() >= 0);
  const Event e{at.ps(), next_seq_++, target, tag, gen};
  if (hole_) {
    // The root is empty and every other event is no earlier than the one just taken, which
    // is no later than `e`: sift `e` down from the root.
    hole_ = false;
    sift_down(kRoot, e);
    return;
  }
  if (kRoot + size_ + 1 > capacity_) grow();
  size_t i = kRoot + size_++;
  while (i > kRoot) {
    const size_t parent = (i >> 2) + 2;
    if (!before(e, heap_[parent])) break;
    heap_[i] = heap_[parent];
    i = parent;
  }
  heap_[i] = e;
}

void Scheduler::sift_down(size_t i, const Event& e) {
  const size_t end_all = kRoot + size_;
  for (;;) {
    const size_t first = 4 * i - 8;
    if (first >= end_all) break;
    size_t best = first;
    const size_t end = first + 4 < end_all ? first + 4 : end_all;
    for (size_t c = first + 1; c < end; ++c) {
      if (before(heap_[c], heap_[best])) best = c;
    }
    if (!before(heap_[best], e)) break;
    heap_[i] = heap_[best];
    i = best;
  }
  heap_[i] = e;
}

void Scheduler::remove_root() {
  FABSIM_ASSERT(size_ > 0);
  --size_;
  if (size_ == 0) return;
  const Event last = heap_[kRoot + size_];
  sift_down(kRoot, last);
}

Event Scheduler::pop() {
  FABSIM_ASSERT(size_ > 0 && !hole_);
  const Event out = heap_[kRoot];
  remove_root();
  return out;
}

Event Scheduler::take_top() {
  FABSIM_ASSERT(size_ > 0 && !hole_);
  hole_ = true;
  return heap_[kRoot];
}

}  // namespace fabsim
