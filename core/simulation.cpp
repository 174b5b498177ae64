// The event loop; see simulation.h.
#include "core/simulation.h"

#include "core/assert.h"

namespace fabsim {

uint64_t Simulation::run(Time until) {
  stopped_ = false;
  uint64_t n = 0;
  uint64_t countdown = hook_ != nullptr ? hook_interval_ : UINT64_MAX;
  while (!sched_.empty() && !stopped_) {
    if (sched_.top().time() > until) break;
    const Event e = sched_.pop();
    FABSIM_ASSERT(e.time() >= now_);
    now_ = e.time();
    e.target->on_event(e.tag, e.gen);
    ++n;
    if (--countdown == 0) {
      hook_->on_progress(now_, events_ + n);
      countdown = hook_interval_;
    }
  }
  events_ += n;
  return n;
}

}  // namespace fabsim
