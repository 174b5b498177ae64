// Leaf-spine and single-switch builders with equal-cost routing tables; see topology.h.
#include "net/topology.h"

#include <algorithm>  // max

#include "core/assert.h"

namespace fabsim {

namespace {
Link::Config link_config(Rate rate, Time delay, double loss, int64_t framing_bytes) {
  Link::Config c;
  c.rate = rate;
  c.delay = delay;
  c.loss_probability = loss;
  c.framing_bytes = framing_bytes;
  return c;
}
}  // namespace

std::string Cable::name(bool parallel) const {
  std::string n = "leaf" + std::to_string(leaf) + "-spine" + std::to_string(spine);
  if (parallel) n += "#" + std::to_string(k);
  return n;
}

int64_t TopologyInfo::find_cable(const std::string& name) const {
  for (size_t i = 0; i < cables.size(); ++i) {
    if (cables[i].name(links_per_spine > 1) == name) return static_cast<int64_t>(i);
    if (links_per_spine > 1 && cables[i].k == 0 && cables[i].name(false) == name) {
      return static_cast<int64_t>(i);
    }
  }
  return -1;
}

void install_leaf_spine_routes(Network& net, const TopologyInfo& info, const CableView& view,
                               const uint32_t* only, size_t count) {
  auto selected = [only, count](uint32_t sw) {
    return only == nullptr || std::find(only, only + count, sw) != only + count;
  };
  auto alive = [&info, &view](uint32_t sw, size_t c) {
    return view ? view(sw, c) : info.cables[c].alive();
  };
  const auto leaves = static_cast<size_t>(info.leaves);
  for (size_t l = 0; l < leaves; ++l) {
    const uint32_t sw = info.leaf_switches[l];
    if (!selected(sw)) continue;
    // reach[s][m]: whether spine s still reaches leaf m, in this leaf's view.
    std::vector<std::vector<bool>> reach(static_cast<size_t>(info.spines), std::vector<bool>(leaves, false));
    for (size_t c = 0; c < info.cables.size(); ++c) {
      if (alive(sw, c)) reach[info.cables[c].spine][info.cables[c].leaf] = true;
    }
    // via[m]: live uplinks of leaf l whose spine still reaches leaf m.
    std::vector<std::vector<uint16_t>> via(leaves);
    for (size_t c = 0; c < info.cables.size(); ++c) {
      const Cable& cab = info.cables[c];
      if (cab.leaf != l || !alive(sw, c)) continue;
      for (size_t m = 0; m < leaves; ++m) {
        if (reach[cab.spine][m]) via[m].push_back(cab.leaf_port);
      }
    }
    std::vector<std::vector<uint16_t>> routes(info.leaf_of_host.size());
    for (size_t h = 0; h < routes.size(); ++h) {
      const uint32_t m = info.leaf_of_host[h];
      routes[h] = m == l ? std::vector<uint16_t>{info.host_port[h]} : via[m];
    }
    net.sw(sw).set_routes(routes);
  }
  for (size_t s = 0; s < static_cast<size_t>(info.spines); ++s) {
    const uint32_t sw = info.spine_switches[s];
    if (!selected(sw)) continue;
    std::vector<std::vector<uint16_t>> ports(leaves);  // live ports towards each leaf
    for (size_t c = 0; c < info.cables.size(); ++c) {
      const Cable& cab = info.cables[c];
      if (cab.spine == s && alive(sw, c)) ports[cab.leaf].push_back(cab.spine_port);
    }
    std::vector<std::vector<uint16_t>> routes(info.leaf_of_host.size());
    for (size_t h = 0; h < routes.size(); ++h) routes[h] = ports[info.leaf_of_host[h]];
    net.sw(sw).set_routes(routes);
  }
}

TopologyInfo build_leaf_spine(Network& net, const LeafSpineConfig& cfg, const SwitchConfig& sw,
                              int64_t framing_bytes, double loss, const SelectorFactory& sel) {
  TopologyInfo info;
  info.kind = "leaf_spine";
  const int groups = (cfg.servers + cfg.servers_per_leaf - 1) / cfg.servers_per_leaf;
  const int leaves = cfg.attach == Attach::kServer ? groups : groups * cfg.gpus_per_server;
  const int hosts = cfg.servers * cfg.gpus_per_server;
  info.hosts = hosts;
  info.leaves = leaves;
  info.spines = cfg.spines;

  for (int s = 0; s < cfg.servers; ++s) {
    for (int g = 0; g < cfg.gpus_per_server; ++g) {
      net.add_host("s" + std::to_string(s) + "g" + std::to_string(g));
      const int group = s / cfg.servers_per_leaf;
      info.leaf_of_host.push_back(static_cast<uint32_t>(
          cfg.attach == Attach::kServer ? group : group * cfg.gpus_per_server + g));
    }
  }
  std::vector<Switch*> leaf(leaves);
  std::vector<Switch*> spine(cfg.spines);
  for (int l = 0; l < leaves; ++l) {
    leaf[l] = &net.add_switch(sw, "leaf" + std::to_string(l));
    info.leaf_switches.push_back(leaf[l]->id());
  }
  for (int s = 0; s < cfg.spines; ++s) {
    spine[s] = &net.add_switch(sw, "spine" + std::to_string(s));
    info.spine_switches.push_back(spine[s]->id());
  }
  const Link::Config host_link = link_config(cfg.nic_rate, cfg.host_link_delay, loss, framing_bytes);
  const Link::Config fabric_link = link_config(cfg.uplink_rate, cfg.fabric_link_delay, loss, framing_bytes);

  std::vector<uint16_t> down_port(hosts);
  std::vector<int> leaf_hosts(leaves, 0);
  for (int h = 0; h < hosts; ++h) {
    const uint32_t l = info.leaf_of_host[h];
    down_port[h] = net.connect(net.host(h), *leaf[l], host_link);
    ++leaf_hosts[l];
  }
  info.hosts_per_leaf = leaf_hosts.empty() ? 0 : leaf_hosts[0];
  info.host_port = down_port;
  info.leaf_uplinks.assign(leaves, {});
  info.links_per_spine = cfg.links_per_spine;
  for (int l = 0; l < leaves; ++l) {
    for (int s = 0; s < cfg.spines; ++s) {
      for (int k = 0; k < cfg.links_per_spine; ++k) {
        Link::Config link = fabric_link;
        if (!cfg.spine_delays.empty()) link.delay = cfg.spine_delays[s];
        const auto [pl, ps] = net.connect(*leaf[l], *spine[s], link);
        info.leaf_uplinks[l].push_back(pl);
        Cable c;
        c.leaf = static_cast<uint32_t>(l);
        c.spine = static_cast<uint32_t>(s);
        c.k = static_cast<uint32_t>(k);
        c.leaf_port = pl;
        c.spine_port = ps;
        c.up = leaf[l]->port(pl).link();
        c.down = spine[s]->port(ps).link();
        info.cables.push_back(c);
      }
    }
  }
  info.uplink_cable.assign(leaves, {});
  info.spine_cable.assign(cfg.spines, {});
  for (size_t i = 0; i < info.cables.size(); ++i) {
    const Cable& c = info.cables[i];
    auto& up = info.uplink_cable[c.leaf];
    auto& sp = info.spine_cable[c.spine];
    up.resize(std::max<size_t>(up.size(), c.leaf_port + 1U), ~0U);
    sp.resize(std::max<size_t>(sp.size(), c.spine_port + 1U), ~0U);
    up[c.leaf_port] = static_cast<uint32_t>(i);
    sp[c.spine_port] = static_cast<uint32_t>(i);
  }
  install_leaf_spine_routes(net, info);
  for (size_t i = 0; i < net.switch_count(); ++i) {
    net.sw(i).set_path_selector(sel(static_cast<uint32_t>(i)));
    net.sw(i).finalize();
  }
  const double down = static_cast<double>(info.hosts_per_leaf) * cfg.nic_rate.gbps_f();
  const double up = static_cast<double>(cfg.spines * cfg.links_per_spine) * cfg.uplink_rate.gbps_f();
  info.speedup = down > 0 ? up / down : 0;
  return info;
}

TopologyInfo build_single_switch(Network& net, const SingleSwitchConfig& cfg,
                                 const SwitchConfig& sw, int64_t framing_bytes, double loss,
                                 const SelectorFactory& sel) {
  TopologyInfo info;
  info.kind = "single_switch";
  info.hosts = cfg.hosts;
  info.leaves = 1;
  info.hosts_per_leaf = cfg.hosts;
  Switch& s = net.add_switch(sw, "switch0");
  info.leaf_switches.push_back(s.id());
  info.leaf_uplinks.assign(1, {});
  const Link::Config link = link_config(cfg.nic_rate, cfg.host_link_delay, loss, framing_bytes);
  std::vector<std::vector<uint16_t>> routes(cfg.hosts);
  for (int h = 0; h < cfg.hosts; ++h) {
    net.add_host("h" + std::to_string(h));
    routes[h] = {net.connect(net.host(h), s, link)};
    info.leaf_of_host.push_back(0);
    info.host_port.push_back(routes[h][0]);
  }
  s.set_routes(routes);
  s.set_path_selector(sel(s.id()));
  s.finalize();
  return info;
}

}  // namespace fabsim
