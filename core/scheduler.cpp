// 4-ary heap operations; see scheduler.h.
#include "core/scheduler.h"

#include "core/assert.h"

namespace fabsim {

void Scheduler::schedule(Time at, EventTarget* target, uint32_t tag, uint32_t gen) {
  FABSIM_ASSERT(at.ps() >= 0);
  Event e{at.ps(), next_seq_++, target, tag, gen};
  size_t i = heap_.size();
  heap_.push_back(e);
  while (i > 0) {
    const size_t parent = (i - 1) / kArity;
    if (!before(e, heap_[parent])) break;
    heap_[i] = heap_[parent];
    i = parent;
  }
  heap_[i] = e;
}

Event Scheduler::pop() {
  FABSIM_ASSERT(!heap_.empty());
  Event out = heap_.front();
  const Event last = heap_.back();
  heap_.pop_back();
  const size_t n = heap_.size();
  if (n == 0) return out;
  size_t i = 0;
  for (;;) {
    const size_t first = i * kArity + 1;
    if (first >= n) break;
    size_t best = first;
    const size_t end = first + kArity < n ? first + kArity : n;
    for (size_t c = first + 1; c < end; ++c) {
      if (before(heap_[c], heap_[best])) best = c;
    }
    if (!before(heap_[best], last)) break;
    heap_[i] = heap_[best];
    i = best;
  }
  heap_[i] = last;
  return out;
}

}  // namespace fabsim
