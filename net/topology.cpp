// The topology contract: indexes, reachability and up/down routing for any Clos; see
// topology.h. Builders live in net/topo/, one file per kind.
#include "net/topology.h"

#include <fmt/format.h>  // names, summary line

#include <algorithm>  // find
#include <map>        // views shared by switches

#include "core/assert.h"

namespace fabsim {

int TopologyInfo::hosts_per_tor() const {
  if (tors.empty()) return 0;
  int n = 0;
  for (uint32_t t : tor_of_host) n += t == 0 ? 1 : 0;
  return n;
}

std::vector<uint32_t> TopologyInfo::switches_in_tier(int t) const {
  std::vector<uint32_t> out;
  for (uint32_t s = 0; s < switch_count(); ++s) {
    if (tier[s] == t) out.push_back(s);
  }
  return out;
}

std::vector<uint16_t> TopologyInfo::uplink_ports(uint32_t sw) const {
  std::vector<uint16_t> out;
  for (uint32_t c : up_cables[sw]) out.push_back(cables[c].lower_port);
  return out;
}

bool TopologyInfo::is_uplink(uint32_t sw, uint16_t port) const {
  const auto& pc = port_cable[sw];
  return port < pc.size() && pc[port] != kNoCable && cables[pc[port]].lower == sw;
}

int64_t TopologyInfo::find_cable(const std::string& name) const {
  for (size_t i = 0; i < cables.size(); ++i) {
    const Cable& c = cables[i];
    if (c.name() == name || (c.parallel && c.k == 0 && c.base == name)) {
      return static_cast<int64_t>(i);
    }
  }
  return -1;
}

std::string TopologyInfo::example_cables() const {
  if (cables.empty()) return "none: this topology has no switch-to-switch cables";
  std::string out = fmt::format("\"{}\"", cables.front().name());
  if (cables.size() > 1) out += fmt::format(" ... \"{}\"", cables.back().name());
  return out;
}

nlohmann::ordered_json TopologyInfo::summary() const {
  const auto top = tiers >= 2 ? switches_in_tier(tiers).size() : 0;
  nlohmann::ordered_json j = {{"kind", kind},
                              {"hosts", hosts},
                              {"leaves", tors.size()},
                              {"spines", top},
                              {"speedup", speedup}};
  for (const auto& [k, v] : extra.items()) j[k] = v;
  return j;
}

std::string TopologyInfo::describe() const {
  std::string out = fmt::format("{} ({} hosts", kind, hosts);
  if (tiers == 3) {
    out += fmt::format(", {} ToRs, {} aggregation, {} core", tors.size(),
                       switches_in_tier(2).size(), switches_in_tier(3).size());
  } else if (tiers == 2) {
    out += fmt::format(", {} leaves, {} spines", tors.size(), switches_in_tier(2).size());
  }
  if (tiers >= 2) out += fmt::format(", speed-up {:.2f}:1", speedup);
  return out + ")";
}

ClosReach::ClosReach(const TopologyInfo& topo, const std::vector<uint8_t>& alive)
    : words_((topo.tors.size() + 63) / 64) {
  const uint32_t n = topo.switch_count();
  down_.assign(static_cast<size_t>(n) * words_, 0);
  any_.assign(static_cast<size_t>(n) * words_, 0);
  // Down sets bottom-up: a ToR reaches itself; a switch what its live children reach.
  for (int t = 1; t <= topo.tiers; ++t) {
    for (uint32_t s = 0; s < n; ++s) {
      if (topo.tier[s] != t) continue;
      uint64_t* d = &down_[s * words_];
      if (t == 1) {
        const uint32_t i = topo.tor_index[s];
        d[i / 64] |= uint64_t{1} << (i % 64);
      }
      for (uint32_t c : topo.down_cables[s]) {
        if (alive[c] == 0) continue;
        const uint64_t* below = &down_[topo.cables[c].lower * words_];
        for (size_t w = 0; w < words_; ++w) d[w] |= below[w];
      }
    }
  }
  // Up-then-down sets top-down: what a switch reaches down, or through a live parent.
  for (int t = topo.tiers; t >= 1; --t) {
    for (uint32_t s = 0; s < n; ++s) {
      if (topo.tier[s] != t) continue;
      uint64_t* a = &any_[s * words_];
      const uint64_t* d = &down_[s * words_];
      for (size_t w = 0; w < words_; ++w) a[w] = d[w];
      for (uint32_t c : topo.up_cables[s]) {
        if (alive[c] == 0) continue;
        const uint64_t* above = &any_[topo.cables[c].upper * words_];
        for (size_t w = 0; w < words_; ++w) a[w] |= above[w];
      }
    }
  }
}

std::vector<uint16_t> next_hops(const TopologyInfo& topo, const ClosReach& reach,
                                const std::vector<uint8_t>& alive, uint32_t sw, uint32_t tor) {
  std::vector<uint16_t> out;
  if (reach.down(sw, tor)) {
    for (uint32_t c : topo.down_cables[sw]) {
      if (alive[c] != 0 && reach.down(topo.cables[c].lower, tor))
        out.push_back(topo.cables[c].upper_port);
    }
    return out;
  }
  for (uint32_t c : topo.up_cables[sw]) {
    if (alive[c] != 0 && reach.down(topo.cables[c].upper, tor))
      out.push_back(topo.cables[c].lower_port);
  }
  if (!out.empty()) return out;
  for (uint32_t c : topo.up_cables[sw]) {
    if (alive[c] != 0 && reach.any(topo.cables[c].upper, tor))
      out.push_back(topo.cables[c].lower_port);
  }
  return out;
}

void install_routes(Network& net, const TopologyInfo& topo, const CableView& view,
                    const uint32_t* only, size_t count) {
  // Switches with the same view share one reachability computation (keyed by the cables
  // they believe dead): a fault changes a few views, not every switch's.
  std::map<std::vector<uint32_t>, std::unique_ptr<ClosReach>> reaches;
  std::vector<uint8_t> alive(topo.cables.size());
  for (uint32_t sw = 0; sw < topo.switch_count(); ++sw) {
    if (only != nullptr && std::find(only, only + count, sw) == only + count) continue;
    std::vector<uint32_t> dead;
    for (size_t c = 0; c < topo.cables.size(); ++c) {
      alive[c] = (view ? view(sw, c) : topo.cables[c].alive()) ? 1 : 0;
      if (alive[c] == 0) dead.push_back(static_cast<uint32_t>(c));
    }
    auto& reach = reaches[dead];
    if (!reach) reach = std::make_unique<ClosReach>(topo, alive);
    std::vector<std::vector<uint16_t>> per_tor(topo.tors.size());
    for (uint32_t t = 0; t < topo.tors.size(); ++t) {
      if (topo.tors[t] != sw) per_tor[t] = next_hops(topo, *reach, alive, sw, t);
    }
    // A host behind another ToR takes that ToR's set; one behind this switch its own port.
    std::vector<std::vector<uint16_t>> local;
    for (size_t h = 0; h < topo.tor_of_host.size(); ++h) {
      if (topo.tors[topo.tor_of_host[h]] == sw) local.push_back({topo.host_port[h]});
    }
    std::vector<const std::vector<uint16_t>*> routes(topo.tor_of_host.size());
    for (size_t h = 0, l = 0; h < routes.size(); ++h) {
      const uint32_t t = topo.tor_of_host[h];
      routes[h] = topo.tors[t] == sw ? &local[l++] : &per_tor[t];
    }
    net.sw(sw).set_routes(routes);
  }
}

}  // namespace fabsim
