// Fault injection and routing reconvergence; see faults.h.
#include "net/faults.h"

#include <algorithm>  // stable_sort

#include "core/assert.h"

namespace fabsim {

FaultInjector::FaultInjector(Simulation& sim, const TopologyInfo& topo,
                             const std::vector<FaultSpec>& specs)
    : sim_(sim), topo_(topo), first_fault_(topo.cables.size(), Time::max()) {
  for (const FaultSpec& f : specs) {
    const int64_t c = topo.find_cable(f.link);
    FABSIM_ASSERT(c >= 0);
    const auto cable = static_cast<uint32_t>(c);
    switch (f.action) {
      case FaultAction::kDown:
      case FaultAction::kUp:
        changes_.push_back({cable, f.at, f.action, 0});
        break;
      case FaultAction::kBer:
        changes_.push_back({cable, f.at, FaultAction::kBer, f.ber});
        break;
      case FaultAction::kFlap: {
        Time t = f.at;
        for (int i = 0; i < f.count; ++i) {
          changes_.push_back({cable, t, FaultAction::kDown, 0});
          t += f.down_for;
          changes_.push_back({cable, t, FaultAction::kUp, 0});
          t += f.up_for;
        }
        break;
      }
    }
  }
  // Time order; changes at the same time keep the scenario's order.
  std::stable_sort(changes_.begin(), changes_.end(),
                   [](const Change& a, const Change& b) { return a.at < b.at; });
  for (const Change& ch : changes_) {
    const bool faulty =
        ch.action == FaultAction::kDown || (ch.action == FaultAction::kBer && ch.ber > 0);
    if (faulty) first_fault_[ch.cable] = std::min(first_fault_[ch.cable], ch.at);
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
    c.up->set_ber(ch.ber);
    c.down->set_ber(ch.ber);
    for (auto* l : listeners_) l->on_cable_ber(ch.cable);
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

}  // namespace fabsim
