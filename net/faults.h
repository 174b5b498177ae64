// Fault schedule and routing reconvergence (issue 7; seed 000 §3.3 and Table 1, seed 002 §4).
// docs/FAULTS.md states the models and their parameters.
//  - FaultInjector applies a scenario's schedule to the topology's cables (any tier): a cable goes
//    down or comes back, flaps (down for `down_for`, up for `up_for`, `count` times), its
//    pre-FEC bit error rate changes, or it runs at a fraction of its rate in one or both
//    directions (`degrade`: lanes lost, a retrain to a lower speed; uet-htsim's "failed" links
//    run at a quarter). Listeners (routing, GSE's GSOS) hear every change.
//  - Reconvergence is the Ethernet fabric's control plane: switches keep their routes (and ECMP
//    keeps hashing onto a dead link) until they reconverge. Each switch routes over its own view
//    of the cables: the two switches at a changed cable update their view of it after `local`
//    (their own port), every switch after `remote` (the routing protocol); each update
//    reinstalls that switch's equal-cost routes.
#pragma once

#include <cstdint>  // indices
#include <string>   // cable names
#include <vector>   // schedule, listeners

#include "config/reader.h"
#include "config/registry.h"
#include "core/simulation.h"
#include "net/network.h"
#include "net/topology.h"

namespace fabsim {

/// What physically happens to a cable at one instant (the primitive a fault kind expands to).
enum class FaultAction : uint8_t { kDown, kUp, kBer, kRate };

/// Directions of a cable a kRate change acts on (bits).
inline constexpr uint8_t kCableUp = 1;    // lower -> upper switch
inline constexpr uint8_t kCableDown = 2;  // upper -> lower switch

struct CableChange {
  uint32_t cable;
  Time at;
  FaultAction action;
  double value;            // kBer: the new pre-FEC bit error rate (both directions); kRate: the
                           // new rate as a fraction of the cable's built rate
  uint8_t directions = 0;  // kRate: kCableUp | kCableDown
};

/// The fault family (`[[faults.events]] action`): a kind declares its own keys and expands one
/// event into primitive cable changes. Registered in scenario/kinds.cpp.
class FaultKind {
 public:
  virtual ~FaultKind() = default;
  virtual std::string_view name() const = 0;
  virtual std::string_view description() const = 0;
  virtual KindConfig load(Section& s) const = 0;
  /// Appends the changes of one event on `cable` starting at `at`.
  virtual void expand(const KindConfig& cfg, uint32_t cable, Time at,
                      std::vector<CableChange>& out) const = 0;
};

std::unique_ptr<FaultKind> make_down_fault();
std::unique_ptr<FaultKind> make_up_fault();
std::unique_ptr<FaultKind> make_flap_fault();
std::unique_ptr<FaultKind> make_ber_fault();
std::unique_ptr<FaultKind> make_degrade_fault();

/// One entry of `[[faults.events]]`.
struct FaultSpec : Choice<FaultKind> {
  std::string link;  // cable name, "<lower switch>-<upper switch>" (+ "#<k>" for parallel links)
  Time at;
};

/// Hears cable changes as they happen (physically), before anyone has detected them.
class FaultListener {
 public:
  virtual ~FaultListener() = default;
  /// The cable went down or came back.
  virtual void on_cable_state(uint32_t cable, bool alive) = 0;
  /// The cable's bit error rate changed.
  virtual void on_cable_ber(uint32_t /*cable*/) {}
  /// A direction of the cable changed its line rate (Link::config().rate reads the new one).
  virtual void on_cable_rate(uint32_t /*cable*/) {}
};

class FaultInjector : public EventTarget {
 public:
  /// `specs` must name existing cables (the runner checks first, naming the file and key).
  FaultInjector(Simulation& sim, const TopologyInfo& topo, const std::vector<FaultSpec>& specs);
  void add_listener(FaultListener* l) { listeners_.push_back(l); }
  /// Schedules every primitive change.
  void start();
  void on_event(uint32_t tag, uint32_t gen) override;

  using Change = CableChange;
  const std::vector<Change>& changes() const { return changes_; }
  /// Per cable: the first time it went down, got bit errors or a lower rate (Time::max() if
  /// never).
  const std::vector<Time>& first_fault() const { return first_fault_; }
  /// Per cable: its two directions' rates as built, {lower -> upper, upper -> lower}; a rate
  /// change scales these.
  const std::vector<std::pair<Rate, Rate>>& built_rates() const { return built_; }
  /// Per cable: a rate change is scheduled on it (its report gives the rates at the end).
  bool rate_changed(uint32_t cable) const { return rate_changed_[cable] != 0; }

 private:
  Simulation& sim_;
  const TopologyInfo& topo_;
  std::vector<Change> changes_;
  std::vector<Time> first_fault_;
  std::vector<std::pair<Rate, Rate>> built_;
  std::vector<uint8_t> rate_changed_;
  std::vector<FaultListener*> listeners_;
};

/// The Ethernet (RoCEv2) fabric's routing control plane.
class Reconvergence : public FaultListener, public EventTarget {
 public:
  Reconvergence(Simulation& sim, Network& net, const TopologyInfo& topo, Time local, Time remote);
  void on_cable_state(uint32_t cable, bool alive) override;
  void on_event(uint32_t tag, uint32_t gen) override;
  uint64_t recomputations() const { return recomputations_; }

 private:
  Simulation& sim_;
  Network& net_;
  const TopologyInfo& topo_;
  Time local_;
  Time remote_;
  struct Pending {
    uint32_t cable;
    bool everyone;  // remote (every switch) or local (the two ends)
  };
  std::vector<Pending> pending_;            // by event tag
  std::vector<std::vector<uint8_t>> view_;  // [switch][cable] alive as that switch believes
  uint64_t recomputations_ = 0;
};

}  // namespace fabsim
