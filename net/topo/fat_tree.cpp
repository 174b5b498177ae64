// A k-ary fat tree (Al-Fares, Loukissas, Vahdat, SIGCOMM'08): k pods of k/2 ToRs and k/2
// aggregation switches; aggregation switch j of every pod connects to the same group of cores
// (j x u ... j x u + u - 1, u = its core links), so each core reaches every pod once. With
// both oversubscriptions at 1 it is non-blocking: k^3/4 hosts, 5k^2/4 switches.
// Oversubscription is given as a ratio of host count to uplinks: a ToR has
// k/2 x tor_oversubscription hosts for k/2 uplinks, an aggregation switch k/2 ToR links for
// (k/2) / agg_oversubscription core links (fewer cores). See topology.h.
#include <fmt/format.h>  // names, messages

#include <cmath>  // lround

#include "net/topo/builder.h"

namespace fabsim {

int FatTreeConfig::hosts_per_tor() const {
  return static_cast<int>(std::lround(k / 2 * tor_oversubscription));
}

int FatTreeConfig::agg_uplinks() const {
  return static_cast<int>(std::lround(k / 2 / agg_oversubscription));
}

TopologyInfo build_fat_tree(Network& net, const FatTreeConfig& cfg, const SwitchConfig& sw,
                            int64_t framing_bytes, const SelectorFactory& sel) {
  ClosBuilder b(net, "fat_tree", sw, framing_bytes);
  const int half = cfg.k / 2;
  const int per_tor = cfg.hosts_per_tor();
  const int up = cfg.agg_uplinks();
  const int hosts = cfg.hosts();
  for (int h = 0; h < hosts; ++h) b.add_host("h" + std::to_string(h));
  std::vector<uint32_t> tor;
  std::vector<uint32_t> agg;
  std::vector<uint32_t> core;
  for (int p = 0; p < cfg.pod_count(); ++p) {
    for (int i = 0; i < half; ++i) {
      tor.push_back(
          b.add_switch(fmt::format("tor{}_{}", p, i), SwitchRole::kTor, 1, static_cast<uint32_t>(p))
              .id());
    }
  }
  for (int p = 0; p < cfg.pod_count(); ++p) {
    for (int j = 0; j < half; ++j) {
      agg.push_back(b.add_switch(fmt::format("agg{}_{}", p, j), SwitchRole::kAggregation, 2,
                                 static_cast<uint32_t>(p))
                        .id());
    }
  }
  for (int c = 0; c < half * up; ++c) {
    core.push_back(b.add_switch(fmt::format("core{}", c), SwitchRole::kSpine, 3).id());
  }
  const Link::Config host_link = b.link(cfg.nic_rate, cfg.host_link_delay);
  const Link::Config fabric = b.link(cfg.link_rate, cfg.fabric_link_delay);
  for (int h = 0; h < hosts; ++h) b.attach(static_cast<uint32_t>(h), tor[h / per_tor], host_link);
  for (int p = 0; p < cfg.pod_count(); ++p) {
    for (int i = 0; i < half; ++i) {
      for (int j = 0; j < half; ++j) b.connect(tor[p * half + i], agg[p * half + j], fabric);
    }
  }
  for (int p = 0; p < cfg.pod_count(); ++p) {
    for (int j = 0; j < half; ++j) {
      for (int u = 0; u < up; ++u) b.connect(agg[p * half + j], core[j * up + u], fabric);
    }
  }
  TopologyInfo info = b.finish(sel);
  info.extra = {{"tiers", 3},
                {"k", cfg.k},
                {"aggregation", agg.size()},
                {"core", core.size()},
                {"tor_oversubscription", cfg.tor_oversubscription},
                {"agg_oversubscription", cfg.agg_oversubscription}};
  if (cfg.pod_count() != cfg.k) info.extra["pods"] = cfg.pod_count();
  return info;
}

namespace {

class FatTreeKind final : public TopologyKind {
 public:
  std::string_view name() const override { return "fat_tree"; }
  std::string_view description() const override {
    return "k-ary three-tier fat tree (ToR, aggregation, core; k pods), oversubscription at the "
           "ToR and at aggregation as parameters";
  }
  KindConfig load(Section& s) const override {
    FatTreeConfig c;
    c.k = static_cast<int>(s.integer("k", c.k, 2, 64,
                                     "switch radix: k pods, k^3/4 hosts when "
                                     "non-blocking (even)"));
    c.pods = static_cast<int>(s.integer(
        "pods", c.pods, 0, 64,
        "pods built (0 = k); fewer pods leave core ports unused, as HPCC's fat.txt (k = 8, "
        "5 pods)"));
    c.tor_oversubscription = s.real("tor_oversubscription", c.tor_oversubscription, 1.0, 64.0,
                                    "hosts per ToR / its k/2 uplinks (same link rates: 2 = 2:1)");
    c.agg_oversubscription = s.real("agg_oversubscription", c.agg_oversubscription, 1.0, 64.0,
                                    "ToR links / core links of an aggregation switch (fewer "
                                    "cores)");
    c.gpus_per_server = static_cast<int>(
        s.integer("gpus_per_server", c.gpus_per_server, 1, 1024,
                  "consecutive hosts of a ToR that form one server (job placement by server)"));
    c.nic_rate = s.rate("nic_rate", c.nic_rate, "rate of each host link");
    c.link_rate = s.rate("link_rate", c.link_rate, "rate of every switch-to-switch link");
    c.host_link_delay = s.time("host_link_delay", c.host_link_delay, "propagation delay host-ToR");
    c.fabric_link_delay = s.time("fabric_link_delay", c.fabric_link_delay,
                                 "propagation delay of every switch-to-switch link");
    if (s.describing()) return KindConfig::of(c);
    if (c.k % 2 != 0) s.fail("k", "an even radix");
    if (c.pods > c.k) s.fail("pods", fmt::format("at most k = {} (a core has k ports)", c.k));
    const double per_tor = c.k / 2 * c.tor_oversubscription;
    if (per_tor != static_cast<double>(c.hosts_per_tor())) {
      s.fail("tor_oversubscription", fmt::format("a ratio giving a whole number of hosts per ToR "
                                                 "(k/2 = {} x ratio)",
                                                 c.k / 2));
    }
    const double up = c.k / 2 / c.agg_oversubscription;
    if (up != static_cast<double>(c.agg_uplinks()) || c.agg_uplinks() < 1) {
      s.fail("agg_oversubscription", fmt::format("a ratio giving a whole number (>= 1) of core "
                                                 "links per aggregation switch (k/2 = {} / ratio)",
                                                 c.k / 2));
    }
    if (c.hosts_per_tor() + c.k / 2 > 65535)
      s.fail("tor_oversubscription", "at most 65535 ToR ports");
    if (c.hosts_per_tor() % c.gpus_per_server != 0) {
      s.fail("gpus_per_server",
             fmt::format("a divisor of the hosts per ToR ({})", c.hosts_per_tor()));
    }
    return KindConfig::of(c);
  }
  HostShape shape(const KindConfig& cfg) const override {
    const auto& c = cfg.get<FatTreeConfig>();
    return {c.hosts(), c.hosts() / c.gpus_per_server, c.gpus_per_server, c.nic_rate, 3};
  }
  TopologyInfo build(Network& net, const KindConfig& cfg, const TopologyEnv& env) const override {
    return build_fat_tree(net, cfg.get<FatTreeConfig>(), env.sw, env.framing_bytes, env.selector);
  }
};

}  // namespace

std::unique_ptr<TopologyKind> make_fat_tree_kind() {
  return std::make_unique<FatTreeKind>();
}

}  // namespace fabsim
