// Packet trimming at a switch queue (Ultra Ethernet spec §4.1, REFERENCE.md §4.4; NDP): when a
// trimmable data packet would find its queue above a threshold, or the shared buffer has no
// room for it, the switch cuts it to its headers and forwards the header in the control class
// instead of dropping it, so the receiver learns of the loss one queueing delay later instead
// of one timeout later. An admission hook; the cut itself is trim_to_header (net/hooks.h).
#pragma once

#include <cstdint>  // counters

#include "core/rng.h"
#include "core/units.h"
#include "net/hooks.h"

namespace fabsim {

class TrimHook final : public AdmissionHook {
 public:
  struct Config {
    /// Trim when the queue's bytes plus the packet's would exceed this (UE: one plane BDP for
    /// normal queues, 1.5 x BDP at the last hop).
    Bytes threshold = Bytes(64 * 1024);
    /// Also trim (rather than drop) when the shared buffer refuses the packet.
    bool trim_on_overflow = true;
    /// Count the frame being serialized in the queue (uet-htsim keeps it in its queue until
    /// it has left).
    bool count_on_wire = false;
    /// Trim, with probability 1/2, the last packet queued instead of the arriving one (uet-htsim's
    /// CompositeQueue) [code: uet-htsim]; false: always the arriving one.
    bool random_victim = false;
    /// > 0: `threshold` is for a port of this rate; a port's is threshold x its rate / this,
    /// with the rate it has when the packet arrives (a `degrade` fault lowers it).
    Rate reference_rate;
    /// Control-class bytes beyond which a header-only packet is dropped (0 = 2 x this port's
    /// threshold: uet-htsim's header queue is twice its data queue).
    Bytes header_queue;
  };
  TrimHook(const Config& cfg, Rng rng) : cfg_(cfg), rng_(rng) {}
  explicit TrimHook(const Config& cfg) : cfg_(cfg), rng_(0, 0) {}
  /// Data packets not yet trimmed are trimmed over the threshold; anything else is admitted
  /// (and dropped by the switch if the buffer has no room).
  Admission on_enqueue(const Packet& p, const EgressPort& port, bool buffer_ok) override;
  /// The threshold at `port` now.
  int64_t threshold(const EgressPort& port) const;
  int64_t trimmed_bound(const EgressPort& port) const override {
    return cfg_.header_queue.count() > 0 ? cfg_.header_queue.count() : 2 * threshold(port);
  }

 private:
  Config cfg_;
  Rng rng_;  // the coin of random_victim
};

}  // namespace fabsim
