// See builder.h.
#include "net/topo/builder.h"

#include <algorithm>  // max

namespace fabsim {

ClosBuilder::ClosBuilder(Network& net, std::string kind, const SwitchConfig& sw,
                         int64_t framing_bytes)
    : net_(net), sw_(sw), framing_(framing_bytes) {
  info_.kind = std::move(kind);
}

Link::Config ClosBuilder::link(Rate rate, Time delay) const {
  Link::Config c;
  c.rate = rate;
  c.delay = delay;
  c.framing_bytes = framing_;
  return c;
}

Switch& ClosBuilder::add_switch(std::string name, SwitchRole role, int tier, uint32_t pod) {
  Switch& s = net_.add_switch(sw_, std::move(name));
  info_.role.push_back(role);
  info_.tier.push_back(static_cast<uint8_t>(tier));
  info_.pod.push_back(pod);
  info_.tor_index.push_back(role == SwitchRole::kTor ? static_cast<uint32_t>(info_.tors.size())
                                                     : kNotTor);
  if (role == SwitchRole::kTor) info_.tors.push_back(s.id());
  info_.tiers = std::max(info_.tiers, tier);
  return s;
}

void ClosBuilder::attach(uint32_t h, uint32_t tor, const Link::Config& link) {
  if (info_.tor_of_host.size() <= h) {
    info_.tor_of_host.resize(h + 1U, 0);
    info_.host_port.resize(h + 1U, 0);
  }
  info_.tor_of_host[h] = info_.tor_index[tor];
  info_.host_port[h] = net_.connect(net_.host(h), net_.sw(tor), link);
}

void ClosBuilder::connect(uint32_t lower, uint32_t upper, const Link::Config& link, uint32_t k,
                          bool parallel) {
  Switch& a = net_.sw(lower);
  Switch& b = net_.sw(upper);
  const auto [pa, pb] = net_.connect(a, b, link);
  Cable c;
  c.lower = lower;
  c.upper = upper;
  c.lower_port = pa;
  c.upper_port = pb;
  c.k = k;
  c.parallel = parallel;
  c.up = a.port(pa).link();
  c.down = b.port(pb).link();
  c.base = a.name() + "-" + b.name();
  info_.cables.push_back(std::move(c));
}

TopologyInfo ClosBuilder::finish(const SelectorFactory& sel) {
  TopologyInfo& t = info_;
  t.hosts = static_cast<int>(net_.host_count());
  const uint32_t n = t.switch_count();
  t.port_cable.assign(n, {});
  t.up_cables.assign(n, {});
  t.down_cables.assign(n, {});
  for (uint32_t s = 0; s < n; ++s) {
    net_.sw(s).shrink_ports();
    t.port_cable[s].assign(net_.sw(s).port_count(), kNoCable);
  }
  for (uint32_t i = 0; i < t.cables.size(); ++i) {
    const Cable& c = t.cables[i];
    t.port_cable[c.lower][c.lower_port] = i;
    t.port_cable[c.upper][c.upper_port] = i;
    t.up_cables[c.lower].push_back(i);
    t.down_cables[c.upper].push_back(i);
  }
  install_routes(net_, t);
  Rate nic = Rate(INT64_MAX);  // the slowest host NIC: PFC alpha scales from it
  for (size_t h = 0; h < net_.host_count(); ++h) nic = std::min(nic, net_.host(h).rate());
  // Hash bit offsets per tier: a tier's choice takes the source-port bits above those the
  // tiers below it choose with (ceil log2 of their most uplinks), against polarisation.
  std::vector<int> bits(static_cast<size_t>(t.tiers) + 2, 0);
  for (uint32_t s = 0; s < n; ++s) {
    const auto up = static_cast<uint32_t>(t.up_cables[s].size());
    int b = 0;
    while ((uint32_t{1} << b) < up) ++b;
    bits[t.tier[s]] = std::max(bits[t.tier[s]], b);
  }
  std::vector<int> shift(bits.size(), 0);
  for (size_t tier = 2; tier < bits.size(); ++tier) shift[tier] = shift[tier - 1] + bits[tier - 1];
  for (uint32_t s = 0; s < n; ++s) {
    std::unique_ptr<PathSelector> selector = sel(s);
    selector->set_hash_shift(std::min(shift[t.tier[s]], 15));
    net_.sw(s).set_path_selector(std::move(selector));
    if (net_.host_count() > 0) net_.sw(s).set_nic_rate(nic);
    net_.sw(s).finalize();
  }
  // Speed-up of the first ToR: its uplink capacity over its host-link capacity.
  if (t.tiers >= 2 && !t.tors.empty()) {
    const uint32_t tor = t.tors[0];
    double up = 0;
    double down = 0;
    for (uint16_t p = 0; p < net_.sw(tor).port_count(); ++p) {
      const double g = net_.sw(tor).port(p).link()->config().rate.gbps_f();
      (t.is_uplink(tor, p) ? up : down) += g;
    }
    t.speedup = down > 0 ? up / down : 0;
  }
  return std::move(t);
}

}  // namespace fabsim
