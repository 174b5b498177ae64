// Leaf-spine and single-switch builders with equal-cost routing tables; see topology.h.
#include "net/topology.h"

#include "core/assert.h"

namespace fabsim {

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
  const Link::Config host_link{cfg.nic_rate, cfg.host_link_delay, loss, framing_bytes};
  const Link::Config fabric_link{cfg.uplink_rate, cfg.fabric_link_delay, loss, framing_bytes};

  std::vector<uint16_t> down_port(hosts);
  std::vector<int> leaf_hosts(leaves, 0);
  for (int h = 0; h < hosts; ++h) {
    const uint32_t l = info.leaf_of_host[h];
    down_port[h] = net.connect(net.host(h), *leaf[l], host_link);
    ++leaf_hosts[l];
  }
  info.hosts_per_leaf = leaf_hosts.empty() ? 0 : leaf_hosts[0];
  info.host_port = down_port;
  // spine_ports[s][l]: ports of spine s towards leaf l; uplinks[l]: all uplinks of leaf l.
  std::vector<std::vector<std::vector<uint16_t>>> spine_ports(
      cfg.spines, std::vector<std::vector<uint16_t>>(leaves));
  info.leaf_uplinks.assign(leaves, {});
  for (int l = 0; l < leaves; ++l) {
    for (int s = 0; s < cfg.spines; ++s) {
      for (int k = 0; k < cfg.links_per_spine; ++k) {
        Link::Config link = fabric_link;
        if (!cfg.spine_delays.empty()) link.delay = cfg.spine_delays[s];
        const auto [pl, ps] = net.connect(*leaf[l], *spine[s], link);
        info.leaf_uplinks[l].push_back(pl);
        spine_ports[s][l].push_back(ps);
      }
    }
  }
  for (int l = 0; l < leaves; ++l) {
    std::vector<std::vector<uint16_t>> routes(hosts);
    for (int h = 0; h < hosts; ++h) {
      routes[h] = info.leaf_of_host[h] == static_cast<uint32_t>(l)
                      ? std::vector<uint16_t>{down_port[h]}
                      : info.leaf_uplinks[l];
    }
    leaf[l]->set_routes(routes);
  }
  for (int s = 0; s < cfg.spines; ++s) {
    std::vector<std::vector<uint16_t>> routes(hosts);
    for (int h = 0; h < hosts; ++h) routes[h] = spine_ports[s][info.leaf_of_host[h]];
    spine[s]->set_routes(routes);
  }
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
  const Link::Config link{cfg.nic_rate, cfg.host_link_delay, loss, framing_bytes};
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
