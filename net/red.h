// RED/ECN marking (REFERENCE.md §1.4): the probability rule, the marking decision with its own
// random stream, and the dequeue hook that applies it to a switch's egress queues. A switch has
// one RedMarker (one stream); its egress hook and a GSE VOQ (gse/dgsq.cpp) both draw from it,
// so there is one marking rule and one draw order.
#pragma once

#include <cstdint>  // queue bytes

#include "core/packet.h"
#include "core/rng.h"
#include "net/hooks.h"
#include "net/switch_config.h"

namespace fabsim {

/// RED/ECN marking probability for a queue of `queue_bytes` (REFERENCE.md §1.4).
double ecn_mark_probability(int64_t queue_bytes, const EcnConfig& cfg);

/// The marking decision with its own random stream (one per switch). Draws only when the
/// probability is strictly between 0 and 1.
class RedMarker {
 public:
  RedMarker(const EcnConfig& cfg, Rng rng) : cfg_(cfg), rng_(rng) {}
  /// Whether to mark at a queue of `queue_bytes` with the configured thresholds.
  bool mark(int64_t queue_bytes) { return decide(ecn_mark_probability(queue_bytes, cfg_)); }
  /// Marks `p` CE if it is ECN-capable and the draw says so; true if it marked.
  bool mark(Packet& p, int64_t queue_bytes) {
    if (p.ecn != Ecn::kEct || !mark(queue_bytes)) return false;
    p.ecn = Ecn::kCe;
    return true;
  }
  /// As above for a queue with its own thresholds (a VOQ), with the configured pmax.
  bool mark(Packet& p, int64_t queue_bytes, Bytes kmin, Bytes kmax);
  const EcnConfig& config() const { return cfg_; }
  void set_thresholds(Bytes kmin, Bytes kmax) {
    cfg_.kmin = kmin;
    cfg_.kmax = kmax;
  }

 private:
  bool decide(double prob) { return prob >= 1.0 || (prob > 0 && rng_.uniform() < prob); }
  EcnConfig cfg_;
  Rng rng_;
};

/// RED/ECN at dequeue on the bytes of the packet's class queued behind it; counts the port's
/// ecn_marks. Installed by the switch on every data class when network.ecn is enabled.
class RedEcnHook final : public DequeueHook {
 public:
  explicit RedEcnHook(RedMarker& marker) : marker_(marker) {}
  void on_dequeue(Packet& p, EgressPort& port) override;
  /// Only above Kmin (scaled to the port's rate) can it mark or draw.
  bool may_act(const EgressPort& port, uint8_t cls) const override;

 private:
  /// A threshold for `port`: scaled by its rate against the reference rate, if one is set.
  Bytes scaled(Bytes threshold, const EgressPort& port) const;
  /// queued <= scaled(Kmin): nothing can be marked or drawn. Decided by comparing products (no
  /// divide): for integers, q <= floor(K x r / ref) exactly when q x ref <= K x r.
  bool at_most_kmin(int64_t queued, const EgressPort& port) const;
  RedMarker& marker_;
};

}  // namespace fabsim
