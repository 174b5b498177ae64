// GSOS, GSE's control layer (seed 002 §2.1; seed 000 §3.3), and the GSE devices' shared
// physical-layer signalling. One object per GSE fabric:
//  - global ids: every edge egress port (the leaf port towards a NIC) has a global id, the
//    host id behind it, which the GSE header's destination field carries;
//  - grant policy: quantum, share of the port rate granted (hence the grant window) and the
//    weights per source GSP, read by every DGSQ scheduler;
//  - fault state: each device's own view of which cables are usable. A cable that dies is
//    noticed by its two ends after `detect`; a cable whose FEC error count says its pre-FEC BER
//    passed `ber_threshold` is declared failing at the end of the counting window, before it
//    loses frames. The notice travels as a physical-layer signal, `notice_hop` per hop (not a
//    packet in a queue), so a device h hops away learns at detection + h x notice_hop. Path
//    choice and grants (the end-to-end available bandwidth) use only cables usable in the
//    deciding device's view;
//  - back-pressure: every `publish_interval` each GSF publishes the backlog of its downlinks;
//    GSPs see it one notice hop later and weight container path choice by it (kAdaptive).
// docs/FAULTS.md and docs/gse.md give the parameters and what the seeds leave open.
#pragma once

#include <cstdint>  // ids
#include <deque>
#include <map>     // reachability shared by identical views
#include <memory>  // shared_ptr    // published snapshots
#include <vector>  // views

#include "core/rng.h"
#include "core/simulation.h"
#include "gse/gse.h"
#include "net/faults.h"
#include "net/network.h"
#include "net/topology.h"

namespace fabsim {

/// Grant policy held by GSOS and read by every DGSQ egress scheduler.
struct GrantPolicy {
  int64_t quantum = 16384;      // bytes per grant
  double rate_share = 1.0;      // share of an egress port's rate that is granted at most
  std::vector<double> weights;  // per source GSP (switch id); empty or missing = 1
  double weight(uint32_t gsp) const { return gsp < weights.size() ? weights[gsp] : 1.0; }
  /// Time one quantum takes at the granted share of `port`: grants to a port are spaced by it.
  Time window(Rate port) const;
};

class Gsos : public FaultListener, public EventTarget {
 public:
  Gsos(Simulation& sim, Network& net, const TopologyInfo& topo, const GseConfig& cfg);

  // Global ids of edge egress ports.
  struct EdgePort {
    uint32_t tor = 0;   // ToR index (topology contract)
    uint32_t sw = 0;    // switch id
    uint16_t port = 0;  // port on that switch
  };
  size_t edge_ports() const { return edge_.size(); }
  const EdgePort& edge_port(uint32_t id) const { return edge_[id]; }
  const GrantPolicy& grant_policy() const { return policy_; }

  // Fault state.
  void on_cable_state(uint32_t cable, bool alive) override;
  void on_cable_ber(uint32_t cable) override;
  /// A direction of the cable retrained to another rate (the `degrade` fault): its two ends
  /// learn after `detect`, as of a dead cable, and a ToR recomputes the capacity of its links
  /// from the tier above with the rates it then reads (the grants' transit budget follows).
  void on_cable_rate(uint32_t cable) override;
  /// Whether switch `sw` knows of any unusable cable (the fast path skips filtering if not).
  bool faults_known(uint32_t sw) const { return unusable_[sw] > 0; }
  /// Writes to `out` the candidates among `ports` that switch `sw` may use towards host `dst`;
  /// returns how many.
  uint32_t filter(uint32_t sw, uint32_t dst, const uint16_t* ports, uint32_t n,
                  uint16_t* out) const;
  bool usable_in_view(uint32_t sw, uint32_t cable) const { return view_[sw][cable] != 0; }
  /// When switch `sw` last changed its view of `cable` (Time::max() if never).
  Time known_at(uint32_t sw, uint32_t cable) const { return known_at_[sw][cable]; }
  /// Rate of the links from the tier above into ToR `tor` that the ToR knows to be usable.
  Rate ingress_capacity(uint32_t tor) const { return ingress_capacity_[tor]; }
  /// How many links from the tier above into ToR `tor` the ToR knows to be usable.
  int64_t ingress_links(uint32_t tor) const { return ingress_links_[tor]; }
  bool failing(uint32_t cable) const { return failing_[cable] != 0; }

  // Back-pressure.
  /// Published backlog (bytes) of the links from the switch behind uplink `port` of `sw` down
  /// to the ToR of host `dst`, as visible now (mean over parallel links); 0 when that switch
  /// has no direct link to it (a three-tier path) or `port` is not an uplink.
  int64_t published_backlog(uint32_t sw, uint16_t port, uint32_t dst) const;
  uint32_t tor_of_host(uint32_t host) const { return topo_.tor_of_host[host]; }
  uint32_t tor_index(uint32_t sw) const { return topo_.tor_index[sw]; }

  /// A reorder stage told of every cable that becomes unusable when switch `sw` learns of it,
  /// `later` after that: the destination GSP's own (N2N: the ToR, later 0), or a NIC's behind
  /// ToR `sw` (E2E: the NIC learns one notice_hop after its ToR).
  void add_reorder(uint32_t sw, GseReorder* r, Time later = Time()) {
    if (reorders_.size() <= sw) reorders_.resize(sw + 1);
    reorders_[sw].push_back({r, later});
  }
  /// Arms back-pressure publication (when a path policy uses it) and BER monitors.
  void start(bool publish);
  void on_event(uint32_t tag, uint32_t gen) override;

  struct Stats {
    uint64_t notices = 0;       // view changes delivered to devices
    uint64_t rate_notices = 0;  // rate changes delivered to a cable's ends
    uint64_t declared_failing = 0;
    uint64_t declared_recovered = 0;
    uint64_t publications = 0;
    uint64_t monitor_windows = 0;
  };
  const Stats& stats() const { return stats_; }

 private:
  struct Notice {
    uint32_t sw;
    uint32_t cable;
    bool usable;
    bool rate = false;  // a rate change (usable unchanged)
    Rate down_rate;     // with `rate`: the upper -> lower rate the change set
  };
  struct Snapshot {
    Time at;
    std::vector<int64_t> backlog;  // per cable: upper -> lower queue bytes
  };
  void propagate(uint32_t cable, bool usable, Time detected);
  void apply(const Notice& n);
  void recompute(uint32_t sw);
  void monitor();
  void publish();
  bool truth_usable(uint32_t cable) const { return alive_[cable] && !failing_[cable]; }

  Simulation& sim_;
  Network& net_;
  const TopologyInfo& topo_;
  GseConfig cfg_;
  GrantPolicy policy_;
  Rng rng_;
  std::vector<EdgePort> edge_;
  std::vector<uint8_t> alive_;               // truth, per cable
  std::vector<uint8_t> failing_;             // declared by the BER monitor, per cable
  std::vector<std::vector<uint8_t>> view_;   // [switch][cable] usable as known
  std::vector<std::vector<Time>> known_at_;  // [switch][cable]
  std::vector<size_t> unusable_;             // [switch] cables known unusable
  // [switch]: up/down reachability in that switch's view; switches with the same view share
  // one (keyed by the cables they know unusable).
  std::vector<std::shared_ptr<const ClosReach>> reach_;
  std::map<std::vector<uint32_t>, std::shared_ptr<const ClosReach>> reach_cache_;
  std::vector<Rate> ingress_capacity_;  // per ToR
  std::vector<int64_t> ingress_links_;  // per ToR
  // Per cable: the rate of its upper -> lower direction as its lower end knows it (a rate
  // notice updates it; the link itself changes at the fault).
  std::vector<Rate> known_down_rate_;
  std::vector<Notice> notices_;
  std::vector<uint32_t> monitored_;  // cables with a bit error rate
  bool monitor_armed_ = false;
  std::deque<Snapshot> snaps_;
  struct Told {
    GseReorder* stage;
    Time later;
  };
  std::vector<std::vector<Told>> reorders_;  // by switch id
  Stats stats_;
};

/// The candidates among `ports` that switch `sw` may use towards host `dst` in `g`'s view,
/// written to `scratch` (the input unchanged without GSOS, without known faults, or when no
/// candidate is left). Returns the count; `ports` is redirected to the narrowed list.
inline uint32_t narrow_to_usable(const Gsos* g, uint32_t sw, uint32_t dst, const uint16_t*& ports,
                                 uint32_t n, std::vector<uint16_t>& scratch) {
  if (g == nullptr || !g->faults_known(sw)) return n;
  scratch.resize(n);
  const uint32_t k = g->filter(sw, dst, ports, n, scratch.data());
  if (k == 0) return n;
  ports = scratch.data();
  return k;
}

/// Draws a Poisson count with mean `mean` (Knuth below 30, a rounded normal above).
uint64_t poisson(Rng& rng, double mean);

}  // namespace fabsim
