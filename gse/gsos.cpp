// GSOS: global ids, grant policy, fault views and back-pressure; see gsos.h.
#include "gse/gsos.h"

#include <algorithm>  // min, max
#include <cmath>      // exp, log1p, sqrt

#include "core/assert.h"

namespace fabsim {
namespace {
constexpr uint32_t kMonitorTag = 0xFFFFFFF0U;
constexpr uint32_t kPublishTag = 0xFFFFFFF1U;
constexpr uint32_t kNone = ~0U;
}  // namespace

Time GrantPolicy::window(Rate port) const {
  return serialization_delay(
      quantum, Rate(static_cast<int64_t>(static_cast<double>(port.bps()) * rate_share)));
}

uint64_t poisson(Rng& rng, double mean) {
  if (mean <= 0) return 0;
  if (mean < 30) {
    const double limit = std::exp(-mean);
    uint64_t k = 0;
    double prod = rng.uniform();
    while (prod > limit) {
      ++k;
      prod *= rng.uniform();
    }
    return k;
  }
  // Box-Muller; the error of the normal approximation is far below the monitor's noise.
  const double u1 = std::max(rng.uniform(), 1e-300);
  const double u2 = rng.uniform();
  const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  return static_cast<uint64_t>(std::max(0.0, std::round(mean + std::sqrt(mean) * z)));
}

Gsos::Gsos(Simulation& sim, Network& net, const TopologyInfo& topo, const GseConfig& cfg)
    : sim_(sim), net_(net), topo_(topo), cfg_(cfg),
      rng_(sim.rng(stream_id(StreamKind::kSwitch, 0xFFFFFF))) {
  policy_.quantum = cfg.grant_quantum;
  policy_.rate_share = cfg.grant_rate;
  policy_.weights = cfg.grant_weights;
  const size_t switches = net.switch_count();
  const size_t cables = topo.cables.size();
  for (size_t h = 0; h < topo.tor_of_host.size(); ++h) {
    const uint32_t t = topo.tor_of_host[h];
    edge_.push_back({t, topo.tors[t], topo.host_port[h]});
  }
  alive_.assign(cables, 1);
  failing_.assign(cables, 0);
  view_.assign(switches, std::vector<uint8_t>(cables, 1));
  known_at_.assign(switches, std::vector<Time>(cables, Time::max()));
  unusable_.assign(switches, 0);
  reach_.assign(switches, nullptr);
  ingress_capacity_.assign(topo.tors.size(), Rate());
  ingress_links_.assign(topo.tors.size(), 0);
  known_down_rate_.reserve(cables);
  for (const Cable& c : topo.cables) known_down_rate_.push_back(c.down->config().rate);
  for (size_t sw = 0; sw < switches; ++sw) recompute(static_cast<uint32_t>(sw));
  for (size_t c = 0; c < cables; ++c) {
    if (topo.cables[c].up->ber() > 0 || topo.cables[c].down->ber() > 0)
      on_cable_ber(static_cast<uint32_t>(c));
  }
}

// Derived state of one device's view: up/down reachability, and (for a ToR) the capacity of
// the links from the tier above into it.
void Gsos::recompute(uint32_t sw) {
  std::vector<uint32_t> dead;
  for (uint32_t c = 0; c < topo_.cables.size(); ++c) {
    if (view_[sw][c] == 0) dead.push_back(c);
  }
  auto& shared = reach_cache_[dead];
  if (!shared) shared = std::make_shared<const ClosReach>(topo_, view_[sw]);
  reach_[sw] = shared;
  const uint32_t t = topo_.tor_index[sw];
  if (t == kNotTor) return;
  int64_t bps = 0;
  int64_t links = 0;
  for (uint32_t c : topo_.up_cables[sw]) {
    if (view_[sw][c] == 0) continue;
    bps += known_down_rate_[c].bps();
    ++links;
  }
  ingress_capacity_[t] = Rate(bps);
  ingress_links_[t] = links;
}

// A port is usable towards `dst` if it is a host port, or its cable is usable in this view and
// the switch at its far end still reaches the destination's ToR (down, or up then down).
uint32_t Gsos::filter(uint32_t sw, uint32_t dst, const uint16_t* ports, uint32_t n,
                      uint16_t* out) const {
  const uint32_t dst_tor = topo_.tor_of_host[dst];
  const ClosReach& reach = *reach_[sw];
  const auto& pc = topo_.port_cable[sw];
  uint32_t k = 0;
  for (uint32_t i = 0; i < n; ++i) {
    const uint16_t p = ports[i];
    const uint32_t c = p < pc.size() ? pc[p] : kNoCable;
    if (c == kNoCable) {
      out[k++] = p;  // a host port
      continue;
    }
    if (view_[sw][c] == 0) continue;
    const Cable& cab = topo_.cables[c];
    const bool ok =
        cab.lower == sw ? reach.any(cab.upper, dst_tor) : reach.down(cab.lower, dst_tor);
    if (ok) out[k++] = p;
  }
  return k;
}

// Hop distances from the cable's two ends over the cables alive now; every GSE device learns
// at detection + hops x notice_hop. Devices cut off from both ends never learn.
void Gsos::propagate(uint32_t cable, bool usable, Time detected) {
  const size_t switches = net_.switch_count();
  std::vector<int64_t> hops(switches, -1);
  std::vector<uint32_t> frontier;
  const Cable& c0 = topo_.cables[cable];
  for (uint32_t end : {c0.lower, c0.upper}) {
    hops[end] = 0;
    frontier.push_back(end);
  }
  for (size_t i = 0; i < frontier.size(); ++i) {
    const uint32_t u = frontier[i];
    for (size_t c = 0; c < topo_.cables.size(); ++c) {
      if (c == cable || alive_[c] == 0) continue;
      const Cable& cab = topo_.cables[c];
      const uint32_t a = cab.lower;
      const uint32_t b = cab.upper;
      const uint32_t v = u == a ? b : u == b ? a : kNone;
      if (v == kNone || hops[v] >= 0) continue;
      hops[v] = hops[u] + 1;
      frontier.push_back(v);
    }
  }
  for (size_t sw = 0; sw < switches; ++sw) {
    if (hops[sw] < 0) continue;
    notices_.push_back({static_cast<uint32_t>(sw), cable, usable, false, Rate()});
    sim_.schedule(detected + cfg_.notice_hop * hops[sw], this,
                  static_cast<uint32_t>(notices_.size() - 1));
  }
}

void Gsos::apply(const Notice& n) {
  if (n.rate) {
    ++stats_.rate_notices;
    const Cable& c = topo_.cables[n.cable];
    if (n.sw == c.lower) known_down_rate_[n.cable] = n.down_rate;
    recompute(n.sw);
    return;
  }
  uint8_t& v = view_[n.sw][n.cable];
  const uint8_t now = n.usable ? 1 : 0;
  if (v == now) return;
  v = now;
  unusable_[n.sw] += n.usable ? static_cast<size_t>(-1) : 1;
  known_at_[n.sw][n.cable] = sim_.now();
  ++stats_.notices;
  recompute(n.sw);
  if (!n.usable && n.sw < reorders_.size()) {
    for (const Told& t : reorders_[n.sw])
      t.stage->flush_by(sim_.now() + t.later + cfg_.fault_flush);
  }
}

void Gsos::on_cable_state(uint32_t cable, bool alive) {
  const bool before = truth_usable(cable);
  alive_[cable] = alive ? 1 : 0;
  if (truth_usable(cable) != before)
    propagate(cable, truth_usable(cable), sim_.now() + cfg_.detect);
}

// A link that retrains knows its new rate at once; the device at each end reports it to GSOS
// like a dead cable (after `detect`). Only the ends act on it: a ToR's transit budget counts the
// links into it, which it owns. Remote devices keep using the cable (it is up), steered off a
// slow one by the published back-pressure.
void Gsos::on_cable_rate(uint32_t cable) {
  const Cable& c = topo_.cables[cable];
  for (uint32_t end : {c.lower, c.upper}) {
    // The rate as of now: a second change within `detect` has its own notice.
    notices_.push_back({end, cable, true, true, c.down->config().rate});
    sim_.schedule(sim_.now() + cfg_.detect, this, static_cast<uint32_t>(notices_.size() - 1));
  }
}

void Gsos::on_cable_ber(uint32_t cable) {
  if (std::find(monitored_.begin(), monitored_.end(), cable) == monitored_.end())
    monitored_.push_back(cable);
  if (!monitor_armed_) {
    monitor_armed_ = true;
    sim_.schedule_background(sim_.now() + cfg_.monitor_window, this, kMonitorTag);
  }
}

// One FEC counting window on every monitored cable: the receiving device counts corrected
// symbols (the line carries idles when there is no traffic, so it always has bits to count),
// estimates the pre-FEC BER, and declares the cable failing above the threshold (recovered
// below half of it).
void Gsos::monitor() {
  ++stats_.monitor_windows;
  std::vector<uint32_t> keep;
  for (uint32_t c : monitored_) {
    const Cable& cab = topo_.cables[c];
    double worst = 0;
    for (const Link* link : {cab.up, cab.down}) {
      if (link->ber() <= 0) continue;
      const double bits =
          static_cast<double>(link->config().rate.bps()) * cfg_.monitor_window.sec_f();
      const double symbols = bits / 10.0;
      const double ps = -std::expm1(10.0 * std::log1p(-link->ber()));
      const auto errors = static_cast<double>(poisson(rng_, symbols * ps));
      const double est = -std::expm1(std::log1p(-std::min(errors / symbols, 0.999)) / 10.0);
      worst = std::max(worst, est);
    }
    const bool was = failing_[c] != 0;
    const bool is = was ? worst > cfg_.ber_threshold / 2 : worst > cfg_.ber_threshold;
    if (is != was) {
      const bool before = truth_usable(c);
      failing_[c] = is ? 1 : 0;
      ++(is ? stats_.declared_failing : stats_.declared_recovered);
      if (truth_usable(c) != before) propagate(c, truth_usable(c), sim_.now());
    }
    if (cab.up->ber() > 0 || cab.down->ber() > 0 || is) keep.push_back(c);
  }
  monitored_ = std::move(keep);
}

void Gsos::publish() {
  ++stats_.publications;
  Snapshot s;
  s.at = sim_.now();
  s.backlog.resize(topo_.cables.size());
  for (size_t c = 0; c < topo_.cables.size(); ++c) {
    const Cable& cab = topo_.cables[c];
    const EgressPort& e = net_.sw(cab.upper).port(cab.upper_port);
    s.backlog[c] = e.data_queued_bytes();
  }
  snaps_.push_back(std::move(s));
  // Keep the newest visible snapshot and the ones not yet visible.
  while (snaps_.size() > 1 && snaps_[1].at + cfg_.notice_hop <= sim_.now()) snaps_.pop_front();
}

int64_t Gsos::published_backlog(uint32_t sw, uint16_t port, uint32_t dst) const {
  const Snapshot* vis = nullptr;
  for (const auto& s : snaps_) {
    if (s.at + cfg_.notice_hop > sim_.now()) break;
    vis = &s;
  }
  if (vis == nullptr) return 0;
  const auto& pc = topo_.port_cable[sw];
  if (port >= pc.size() || pc[port] == kNoCable || topo_.cables[pc[port]].lower != sw) return 0;
  const uint32_t next = topo_.cables[pc[port]].upper;
  int64_t sum = 0;
  int64_t count = 0;
  for (uint32_t c : topo_.up_cables[topo_.tor_switch_of_host(dst)]) {
    if (topo_.cables[c].upper != next) continue;
    sum += vis->backlog[c];
    ++count;
  }
  return count > 0 ? sum / count : 0;
}

void Gsos::start(bool publish_backlog) {
  if (publish_backlog) sim_.schedule_background(sim_.now(), this, kPublishTag);
}

void Gsos::on_event(uint32_t tag, uint32_t /*gen*/) {
  if (tag == kMonitorTag) {
    sim_.background_fired();
    monitor();
    monitor_armed_ = !monitored_.empty() && sim_.foreground_pending();
    if (monitor_armed_)
      sim_.schedule_background(sim_.now() + cfg_.monitor_window, this, kMonitorTag);
    return;
  }
  if (tag == kPublishTag) {
    sim_.background_fired();
    publish();
    if (sim_.foreground_pending())
      sim_.schedule_background(sim_.now() + cfg_.publish_interval, this, kPublishTag);
    return;
  }
  apply(notices_[tag]);
}

}  // namespace fabsim
