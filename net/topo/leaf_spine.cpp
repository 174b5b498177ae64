// Two-tier kinds: leaf_spine (seed 002 §3.1) and rail (rail-optimized GPU clusters: GPU g of
// every server of a group on rail switch g, a spine tier above). See topology.h.
#include <fmt/format.h>  // messages

#include "net/topo/builder.h"

namespace fabsim {

int LeafSpineConfig::leaves() const {
  const int groups = (servers + servers_per_leaf - 1) / servers_per_leaf;
  return attach == Attach::kServer ? groups : groups * gpus_per_server;
}

int LeafSpineConfig::hosts_per_leaf() const {
  return attach == Attach::kServer ? servers_per_leaf * gpus_per_server : servers_per_leaf;
}

TopologyInfo build_leaf_spine(Network& net, const LeafSpineConfig& cfg, const SwitchConfig& sw,
                              int64_t framing_bytes, const SelectorFactory& sel) {
  ClosBuilder b(net, cfg.kind, sw, framing_bytes);
  const int leaves = cfg.leaves();
  const int hosts = cfg.servers * cfg.gpus_per_server;
  std::vector<uint32_t> leaf_of_host;
  for (int s = 0; s < cfg.servers; ++s) {
    for (int g = 0; g < cfg.gpus_per_server; ++g) {
      b.add_host("s" + std::to_string(s) + "g" + std::to_string(g));
      const int group = s / cfg.servers_per_leaf;
      leaf_of_host.push_back(static_cast<uint32_t>(
          cfg.attach == Attach::kServer ? group : group * cfg.gpus_per_server + g));
    }
  }
  std::vector<uint32_t> leaf(static_cast<size_t>(leaves));
  std::vector<uint32_t> spine(static_cast<size_t>(cfg.spines));
  for (int l = 0; l < leaves; ++l) {
    leaf[l] = b.add_switch(cfg.leaf_name + std::to_string(l), SwitchRole::kTor, 1).id();
  }
  for (int s = 0; s < cfg.spines; ++s) {
    spine[s] = b.add_switch("spine" + std::to_string(s), SwitchRole::kSpine, 2).id();
  }
  const Link::Config host_link = b.link(cfg.nic_rate, cfg.host_link_delay);
  for (int h = 0; h < hosts; ++h)
    b.attach(static_cast<uint32_t>(h), leaf[leaf_of_host[h]], host_link);
  for (int l = 0; l < leaves; ++l) {
    for (int s = 0; s < cfg.spines; ++s) {
      Link::Config link = b.link(cfg.uplink_rate, cfg.fabric_link_delay);
      if (!cfg.spine_delays.empty()) link.delay = cfg.spine_delays[s];
      for (int k = 0; k < cfg.links_per_spine; ++k) {
        b.connect(leaf[l], spine[s], link, static_cast<uint32_t>(k), cfg.links_per_spine > 1);
      }
    }
  }
  return b.finish(sel);
}

namespace {

// Port counts fit a switch, and every leaf (rail group) holds the same number of servers.
void check_two_tier(Section& s, const LeafSpineConfig& c, bool rail) {
  if (!c.spine_delays.empty() && static_cast<int>(c.spine_delays.size()) != c.spines) {
    s.fail("spine_link_delays", fmt::format("one delay per spine ({})", c.spines));
  }
  const char* group_key = rail ? "servers_per_group" : "servers_per_leaf";
  if (c.servers_per_leaf > c.servers) {
    s.fail(group_key, fmt::format("at most topology.servers = {}", c.servers));
  }
  const int64_t leaf_ports =
      c.hosts_per_leaf() + static_cast<int64_t>(c.spines) * c.links_per_spine;
  if (leaf_ports > 65535) {
    s.fail("spines", fmt::format("a leaf port count (hosts per leaf {} + spines x links_per_spine) "
                                 "of at most 65535, got {}",
                                 c.hosts_per_leaf(), leaf_ports));
  }
  if (c.servers % c.servers_per_leaf != 0) {
    s.fail("servers", fmt::format("a multiple of topology.{} = {} (every {} holds the same number "
                                  "of servers)",
                                  group_key, c.servers_per_leaf, rail ? "group" : "leaf"));
  }
  if (static_cast<int64_t>(c.leaves()) * c.links_per_spine > 65535) {
    s.fail("links_per_spine", "a spine port count (leaves x links_per_spine) of at most 65535");
  }
}

// The keys of both two-tier kinds; `rail` fixes the attachment and names the leaves rails.
LeafSpineConfig load_two_tier(Section& s, bool rail) {
  LeafSpineConfig c;
  if (rail) {
    c.attach = Attach::kRail;
    c.leaf_name = "rail";
    c.kind = "rail";
  }
  c.servers =
      static_cast<int>(s.integer("servers", c.servers, 1, 1 << 20, "servers in the cluster"));
  c.gpus_per_server = static_cast<int>(
      s.integer("gpus_per_server", c.gpus_per_server, 1, 1024,
                rail ? "GPUs per server = rails: GPU g of each server attaches to rail switch g"
                     : "GPUs per server; each GPU has its own NIC port"));
  if (rail) {
    c.servers_per_leaf = static_cast<int>(
        s.integer("servers_per_group", 0, 0, 1 << 20,
                  "servers in one rail group (each of its rail switches has one port per server); "
                  "0 = all servers, one group"));
    if (c.servers_per_leaf == 0) c.servers_per_leaf = c.servers;
  } else {
    const auto attach = s.choice("attach", "server", {"server", "rail"},
                                 "server: all NICs of a server on one leaf (seed 002 §3.1); "
                                 "rail: GPU k of every server of a group on rail leaf k");
    c.attach = attach == "rail" ? Attach::kRail : Attach::kServer;
    // Rail attach groups every server by default, as the rail kind: one server per group would
    // give every GPU a leaf of its own (until 2026-11-29 it did, silently).
    c.servers_per_leaf = static_cast<int>(s.integer(
        "servers_per_leaf", c.attach == Attach::kRail ? c.servers : c.servers_per_leaf, 1, 1 << 20,
        "servers whose NICs share one leaf (server attach), or servers in one rail group (rail "
        "attach: rail leaf k has GPU k of each; default all servers)"));
  }
  c.spines = static_cast<int>(s.integer("spines", c.spines, 1, 4096, "spine switches"));
  c.links_per_spine =
      static_cast<int>(s.integer("links_per_spine", c.links_per_spine, 1, 64,
                                 rail ? "parallel links between each rail switch and each spine"
                                      : "parallel links between each leaf-spine pair"));
  c.nic_rate = s.rate("nic_rate", c.nic_rate, "rate of each GPU's NIC port and its switch link");
  c.uplink_rate = s.rate("uplink_rate", c.uplink_rate,
                         rail ? "rate of each rail-spine link" : "rate of each leaf-spine link");
  c.host_link_delay = s.time("host_link_delay", c.host_link_delay, "propagation delay NIC-switch");
  c.fabric_link_delay =
      s.time("fabric_link_delay", c.fabric_link_delay,
             rail ? "propagation delay rail-spine" : "propagation delay leaf-spine");
  for (const auto& d :
       s.strings("spine_link_delays", "per-spine uplink delays (unequal paths); empty = all "
                                      "fabric_link_delay")) {
    const auto parsed = parse_time(d);
    if (!parsed.ok() || parsed.value < Time() || parsed.value > kDurationHorizon) {
      s.fail("spine_link_delays", "a list of durations such as [\"1us\", \"2us\"], each within the "
                                  "simulated-time horizon (" +
                                      to_string(kDurationHorizon) + ")");
    }
    c.spine_delays.push_back(parsed.value);
  }
  if (!s.describing()) check_two_tier(s, c, rail);
  return c;
}

class TwoTierKind final : public TopologyKind {
 public:
  explicit TwoTierKind(bool rail) : rail_(rail) {}
  std::string_view name() const override { return rail_ ? "rail" : "leaf_spine"; }
  std::string_view description() const override {
    return rail_ ? "rail-optimized two tiers: GPU g of every server on rail switch g, spines "
                   "above; same-rail traffic takes 2 hops, cross-rail goes through a spine"
                 : "two-tier leaf-spine (folded Clos); every GPU has its own NIC port";
  }
  KindConfig load(Section& s) const override { return KindConfig::of(load_two_tier(s, rail_)); }
  HostShape shape(const KindConfig& cfg) const override {
    const auto& c = cfg.get<LeafSpineConfig>();
    return {c.servers * c.gpus_per_server, c.servers, c.gpus_per_server, c.nic_rate, 2};
  }
  TopologyInfo build(Network& net, const KindConfig& cfg, const TopologyEnv& env) const override {
    return build_leaf_spine(net, cfg.get<LeafSpineConfig>(), env.sw, env.framing_bytes,
                            env.selector);
  }

 private:
  bool rail_;
};

}  // namespace

std::unique_ptr<TopologyKind> make_leaf_spine_kind() {
  return std::make_unique<TwoTierKind>(false);
}
std::unique_ptr<TopologyKind> make_rail_kind() {
  return std::make_unique<TwoTierKind>(true);
}

}  // namespace fabsim
