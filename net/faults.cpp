// Fault injection and routing reconvergence; see faults.h.
#include "net/faults.h"

#include <algorithm>  // stable_sort, max
#include <cmath>      // llround

#include "core/assert.h"

namespace fabsim {

FaultInjector::FaultInjector(Simulation& sim, const TopologyInfo& topo,
                             const std::vector<FaultSpec>& specs)
    : sim_(sim), topo_(topo), first_fault_(topo.cables.size(), Time::max()),
      rate_changed_(topo.cables.size(), 0) {
  built_.reserve(topo.cables.size());
  for (const Cable& c : topo.cables)
    built_.emplace_back(c.up->config().rate, c.down->config().rate);
  for (const FaultSpec& f : specs) {
    const int64_t c = topo.find_cable(f.link);
    FABSIM_ASSERT(c >= 0);
    f.kind->expand(f.config, static_cast<uint32_t>(c), f.at, changes_);
  }
  // Time order; changes at the same time keep the scenario's order.
  std::stable_sort(changes_.begin(), changes_.end(),
                   [](const Change& a, const Change& b) { return a.at < b.at; });
  for (const Change& ch : changes_) {
    const bool faulty = ch.action == FaultAction::kDown ||
                        (ch.action == FaultAction::kBer && ch.value > 0) ||
                        (ch.action == FaultAction::kRate && ch.value < 1);
    if (faulty) first_fault_[ch.cable] = std::min(first_fault_[ch.cable], ch.at);
    if (ch.action == FaultAction::kRate) rate_changed_[ch.cable] = 1;
  }
}

void FaultInjector::start() {
  for (size_t i = 0; i < changes_.size(); ++i)
    sim_.schedule(changes_[i].at, this, static_cast<uint32_t>(i));
}

void FaultInjector::on_event(uint32_t tag, uint32_t /*gen*/) {
  const Change& ch = changes_[tag];
  const Cable& c = topo_.cables[ch.cable];
  if (ch.action == FaultAction::kBer) {
    c.up->set_ber(ch.value);
    c.down->set_ber(ch.value);
    for (auto* l : listeners_) l->on_cable_ber(ch.cable);
    return;
  }
  if (ch.action == FaultAction::kRate) {
    const auto scaled = [&ch](Rate built) {
      return Rate(std::max<int64_t>(1, std::llround(static_cast<double>(built.bps()) * ch.value)));
    };
    if ((ch.directions & kCableUp) != 0) c.up->set_rate(scaled(built_[ch.cable].first));
    if ((ch.directions & kCableDown) != 0) c.down->set_rate(scaled(built_[ch.cable].second));
    for (auto* l : listeners_) l->on_cable_rate(ch.cable);
    return;
  }
  const bool alive = ch.action == FaultAction::kUp;
  if (c.alive() == alive) return;  // already in that state
  c.up->set_up(alive);
  c.down->set_up(alive);
  for (auto* l : listeners_) l->on_cable_state(ch.cable, alive);
}

Reconvergence::Reconvergence(Simulation& sim, Network& net, const TopologyInfo& topo, Time local,
                             Time remote)
    : sim_(sim), net_(net), topo_(topo), local_(local), remote_(remote),
      view_(net.switch_count(), std::vector<uint8_t>(topo.cables.size(), 1)) {}

void Reconvergence::on_cable_state(uint32_t cable, bool /*alive*/) {
  pending_.push_back({cable, false});
  sim_.schedule(sim_.now() + local_, this, static_cast<uint32_t>(pending_.size() - 1));
  pending_.push_back({cable, true});
  sim_.schedule(sim_.now() + remote_, this, static_cast<uint32_t>(pending_.size() - 1));
}

// An update copies the cable's state at the time it runs into the views it reaches (so a later
// change is seen by an earlier update that runs after it), then reinstalls those switches' routes.
void Reconvergence::on_event(uint32_t tag, uint32_t /*gen*/) {
  ++recomputations_;
  const Pending& u = pending_[tag];
  const Cable& c = topo_.cables[u.cable];
  const uint8_t alive = c.alive() ? 1 : 0;
  const CableView view = [this](uint32_t sw, size_t cable) { return view_[sw][cable] != 0; };
  if (u.everyone) {
    for (auto& v : view_) v[u.cable] = alive;
    install_routes(net_, topo_, view);
    return;
  }
  const uint32_t ends[2] = {c.lower, c.upper};
  for (uint32_t sw : ends) view_[sw][u.cable] = alive;
  install_routes(net_, topo_, view, ends, 2);
}

namespace {

struct NoKeys {};

// A cable goes down, or comes back, at `at`.
class StateFault final : public FaultKind {
 public:
  explicit StateFault(bool up) : up_(up) {}
  std::string_view name() const override { return up_ ? "up" : "down"; }
  std::string_view description() const override {
    return up_ ? "the cable comes back" : "the cable goes down (both directions)";
  }
  KindConfig load(Section& /*s*/) const override { return KindConfig::of(NoKeys{}); }
  void expand(const KindConfig& /*cfg*/, uint32_t cable, Time at,
              std::vector<CableChange>& out) const override {
    out.push_back({cable, at, up_ ? FaultAction::kUp : FaultAction::kDown, 0});
  }

 private:
  bool up_;
};

struct FlapConfig {
  Time down_for = Time::us(100);
  Time up_for = Time::us(100);
  int count = 1;
};

class FlapFault final : public FaultKind {
 public:
  std::string_view name() const override { return "flap"; }
  std::string_view description() const override {
    return "down for down_for, up for up_for, count times";
  }
  KindConfig load(Section& s) const override {
    FlapConfig c;
    c.down_for = s.time("down_for", c.down_for, "flap: time down per cycle");
    c.up_for = s.time("up_for", c.up_for, "flap: time up per cycle");
    c.count = static_cast<int>(s.integer("count", c.count, 1, 1 << 20, "flap: cycles"));
    if (!s.describing() && c.down_for.ps() <= 0) s.fail("down_for", "a positive duration");
    if (!s.describing() && c.up_for.ps() <= 0) s.fail("up_for", "a positive duration");
    // The whole flap must end within the simulated-time horizon (config/reader.h).
    if (!s.describing() && (c.down_for + c.up_for) > kDurationHorizon / c.count) {
      s.fail("count", "count x (down_for + up_for) within the simulated-time horizon (" +
                          to_string(kDurationHorizon) + ")");
    }
    return KindConfig::of(c);
  }
  void expand(const KindConfig& cfg, uint32_t cable, Time at,
              std::vector<CableChange>& out) const override {
    const auto& c = cfg.get<FlapConfig>();
    for (int i = 0; i < c.count; ++i) {
      out.push_back({cable, at, FaultAction::kDown, 0});
      at += c.down_for;
      out.push_back({cable, at, FaultAction::kUp, 0});
      at += c.up_for;
    }
  }
};

class BerFault final : public FaultKind {
 public:
  std::string_view name() const override { return "ber"; }
  std::string_view description() const override {
    return "the cable's pre-FEC bit error rate changes (both directions)";
  }
  KindConfig load(Section& s) const override {
    if (!s.describing() && !s.has("ber"))
      s.fail("ber", "the new bit error rate (action = \"ber\")");
    return KindConfig::of(
        s.real("ber", 0.0, 0.0, 0.5, "ber: the cable's new pre-FEC bit error rate"));
  }
  void expand(const KindConfig& cfg, uint32_t cable, Time at,
              std::vector<CableChange>& out) const override {
    out.push_back({cable, at, FaultAction::kBer, cfg.get<double>()});
  }
};

struct DegradeConfig {
  double factor = 0.25;
  uint8_t directions = kCableUp | kCableDown;
};

// The cable keeps carrying frames, at a fraction of the rate it was built with: a link that lost
// lanes or retrained to a lower speed. Routing does not react (the cable is up; ECMP weights
// stay equal), which is what makes a slow link hurt a sprayed flow.
class DegradeFault final : public FaultKind {
 public:
  std::string_view name() const override { return "degrade"; }
  std::string_view description() const override {
    return "the cable runs at rate_factor x the rate it was built with, in one direction or "
           "both (lanes lost, a retrain to a lower speed; rate_factor = 1 restores it)";
  }
  KindConfig load(Section& s) const override {
    DegradeConfig c;
    if (!s.describing() && !s.has("rate_factor"))
      s.fail("rate_factor",
             "the cable's new rate as a fraction of its rate (action = \"degrade\")");
    c.factor = s.real("rate_factor", c.factor, 1e-6, 1.0,
                      "degrade: the new rate / the rate the cable was built with");
    const std::string dir =
        s.choice("direction", "both", {"both", "up", "down"},
                 "degrade: both, up (lower -> upper switch) or down (upper -> lower switch)");
    c.directions = dir == "up" ? kCableUp : dir == "down" ? kCableDown : kCableUp | kCableDown;
    return KindConfig::of(c);
  }
  void expand(const KindConfig& cfg, uint32_t cable, Time at,
              std::vector<CableChange>& out) const override {
    const auto& c = cfg.get<DegradeConfig>();
    out.push_back({cable, at, FaultAction::kRate, c.factor, c.directions});
  }
};

}  // namespace

std::unique_ptr<FaultKind> make_degrade_fault() {
  return std::make_unique<DegradeFault>();
}
std::unique_ptr<FaultKind> make_down_fault() {
  return std::make_unique<StateFault>(false);
}
std::unique_ptr<FaultKind> make_up_fault() {
  return std::make_unique<StateFault>(true);
}
std::unique_ptr<FaultKind> make_flap_fault() {
  return std::make_unique<FlapFault>();
}
std::unique_ptr<FaultKind> make_ber_fault() {
  return std::make_unique<BerFault>();
}

}  // namespace fabsim
