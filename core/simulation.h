// One Simulation object owns the scheduler, the packet pool, the packet kinds and the seed; it
// is passed by reference to every component (no globals; several simulations may run in one
// process).
#pragma once

#include <cstdint>  // uint64_t
#include <string>   // warnings
#include <utility>  // move
#include <vector>   // warnings

#include "core/arena.h"
#include "core/ledger.h"
#include "core/packet_kinds.h"
#include "core/packet_pool.h"
#include "core/rng.h"
#include "core/scheduler.h"
#include "core/units.h"

namespace fabsim {

/// Called every `interval` events during run() so a driver can print progress; optional.
class ProgressHook {
 public:
  virtual ~ProgressHook() = default;
  virtual void on_progress(Time now, uint64_t events) = 0;
};

class Simulation {
 public:
  explicit Simulation(uint64_t seed) : seed_(seed) {}
  Simulation(const Simulation&) = delete;
  Simulation& operator=(const Simulation&) = delete;

  Time now() const { return now_; }
  uint64_t seed() const { return seed_; }
  Scheduler& scheduler() { return sched_; }
  PacketPool& pool() { return pool_; }
  /// Line-aligned storage for links and ports (core/arena.h); outlives the network.
  LineArena& arena() { return arena_; }
  /// The conservation ledger (core/ledger.h).
  Ledger& ledger() { return ledger_; }
  /// Counts `p` as dropped for `cause` and returns it to the pool.
  void drop(Packet* p, DropCause cause) {
    ledger_.drop(*p, cause);
    pool_.release(p);
  }
  /// Packet kind codes transports reserve for themselves (core/packet_kinds.h).
  PacketKindRegistry& packet_kinds() { return kinds_; }
  /// A configuration the run accepts but that a component, once built, finds self-defeating
  /// (e.g. a timeout shorter than the round trip): "key '<key>': <why>". The runner adds the
  /// scenario file, prints them before the run and writes them to summary.json (issue 14:
  /// nothing silent).
  void warn(std::string message) { warnings_.push_back(std::move(message)); }
  const std::vector<std::string>& warnings() const { return warnings_; }
  /// A random stream for one component; identical for the same seed and stream id.
  Rng rng(uint64_t stream) const { return Rng(seed_, stream); }

  void schedule(Time at, EventTarget* target, uint32_t tag, uint32_t gen = 0) {
    sched_.schedule(at, target, tag, gen);
  }
  /// Runs events in (time, seq) order until none are left, `until` is passed, or stop() is
  /// called. Returns the number of events executed by this call.
  uint64_t run(Time until = Time::max());

  /// Periodic observers (samplers, GSE state publication) are "background": they must not keep
  /// a finished run alive. Arm with schedule_background(); in the handler call
  /// background_fired() first, then re-arm only if foreground_pending().
  void schedule_background(Time at, EventTarget* target, uint32_t tag) {
    ++background_;
    sched_.schedule(at, target, tag, 0);
  }
  void background_fired() { --background_; }
  /// Inside an event handler: whether anything but background events is pending (the running
  /// event has left the scheduler).
  bool foreground_pending() const { return sched_.size() > background_; }
  /// Between runs: the clock moves on to `t` (no event is pending before it), as when a run
  /// that stopped at its time limit simulated up to that limit with nothing happening.
  void advance_to(Time t) {
    FABSIM_ASSERT(sched_.empty() || sched_.top().time() > t);
    if (t > now_) now_ = t;
  }
  /// A prefetch hint for the per-flow record that a data packet's arrival updates (the
  /// receiver's counters): the layer that owns the flow table installs it, and a host calls
  /// prefetch_flow(p.flow) one event before a data packet arrives. A hint only.
  using FlowPrefetch = void (*)(const void* table, uint32_t flow);
  void set_flow_prefetch(FlowPrefetch f, const void* table) {
    flow_prefetch_ = f;
    flow_table_ = table;
  }
  void prefetch_flow(uint32_t flow) const {
    if (flow_prefetch_ != nullptr) flow_prefetch_(flow_table_, flow);
  }
  void stop() { stopped_ = true; }
  uint64_t events() const { return events_; }
  void set_progress_hook(ProgressHook* hook, uint64_t interval) {
    hook_ = hook;
    hook_interval_ = interval;
  }

 private:
  uint64_t seed_;
  Time now_;
  Scheduler sched_;
  LineArena arena_;
  PacketPool pool_;
  Ledger ledger_;
  PacketKindRegistry kinds_;
  std::vector<std::string> warnings_;
  uint64_t events_ = 0;
  size_t background_ = 0;
  bool stopped_ = false;
  ProgressHook* hook_ = nullptr;
  uint64_t hook_interval_ = 0;
  FlowPrefetch flow_prefetch_ = nullptr;
  const void* flow_table_ = nullptr;
};

}  // namespace fabsim
