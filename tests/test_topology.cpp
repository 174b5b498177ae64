// Topology builders: attachment, port counts, speed-up, routing sets.
#include <gtest/gtest.h>

#include "lb/ecmp.h"
#include "net/network.h"
#include "net/round_trip.h"
#include "net/topology.h"

namespace fabsim {
namespace {
using namespace literals;

SelectorFactory ecmp() {
  return [](uint32_t id) { return std::make_unique<EcmpSelector>(id); };
}

TEST(LeafSpine, Seed002TestbedSpeedups) {
  for (int spines : {3, 4}) {
    Simulation sim(1);
    Network net(sim);
    LeafSpineConfig cfg;  // 4 servers x 8 GPUs, 100G NICs, 400G uplinks
    cfg.spines = spines;
    const auto info = build_leaf_spine(net, cfg, SwitchConfig{}, 20, ecmp());
    EXPECT_EQ(info.hosts, 32);
    EXPECT_EQ(info.tors.size(), 4);
    EXPECT_EQ(info.hosts_per_tor(), 8);
    EXPECT_DOUBLE_EQ(info.speedup, spines == 3 ? 1.5 : 2.0);
    EXPECT_EQ(net.switch_count(), 4U + spines);
    EXPECT_EQ(net.sw(0).port_count(), 8U + spines);  // 8 down, one up per spine
    // All NICs of server s are on leaf s.
    for (int h = 0; h < 32; ++h) EXPECT_EQ(info.tor_of_host[h], static_cast<uint32_t>(h / 8));
    // 8 x 100G down, 3 or 4 x 400G up: not oversubscribed.
    EXPECT_DOUBLE_EQ(tor_oversubscription(net), 1.0);
  }
}

// PFC's dynamic alpha scales from the hosts' NIC rate, as HPCC ns-3's pfc_a_shift (3, less one
// per doubling above the NIC rate, never below 0): 1/8 on 100G ports, 1/2 on 400G ports, on
// the leaves and on the spines alike. Before, it scaled from each switch's slowest port, so a
// spine with only 400G ports stayed at 1/8.
TEST(LeafSpine, PfcAlphaScalesFromTheNicRateUpToOne) {
  for (const Rate uplink : {400_Gbps, 1600_Gbps}) {
    Simulation sim(1);
    Network net(sim);
    LeafSpineConfig cfg;  // 4 servers x 8 GPUs, 100G NICs
    cfg.uplink_rate = uplink;
    build_leaf_spine(net, cfg, SwitchConfig{}, 20, ecmp());
    const double up = uplink == 400_Gbps ? 0.5 : 1.0;  // 1600G: 1/8 x 16 = 2, capped at 1
    const Switch& leaf = net.sw(0);
    const Switch& spine = net.sw(4);
    const auto free_of = [](const Switch& s) {
      return static_cast<double>(SwitchConfig{}.buffer.size.count() - s.total_headroom() -
                                 s.total_reserve());
    };
    EXPECT_EQ(leaf.pfc_threshold(0), static_cast<int64_t>(free_of(leaf) / 8.0));  // host port
    EXPECT_EQ(leaf.pfc_threshold(8), static_cast<int64_t>(free_of(leaf) * up));   // uplink
    EXPECT_EQ(spine.pfc_threshold(0), static_cast<int64_t>(free_of(spine) * up));
  }
}

TEST(LeafSpine, RailAttachPutsGpuKOnRailLeafK) {
  Simulation sim(1);
  Network net(sim);
  LeafSpineConfig cfg;
  cfg.servers = 4;
  cfg.gpus_per_server = 8;
  cfg.servers_per_leaf = 4;
  cfg.attach = Attach::kRail;
  cfg.spines = 2;
  const auto info = build_leaf_spine(net, cfg, SwitchConfig{}, 20, ecmp());
  EXPECT_EQ(info.tors.size(), 8);
  EXPECT_EQ(info.hosts_per_tor(), 4);
  for (int s = 0; s < 4; ++s) {
    for (int g = 0; g < 8; ++g) EXPECT_EQ(info.tor_of_host[s * 8 + g], static_cast<uint32_t>(g));
  }
}

TEST(LeafSpine, ParallelLinksMultiplyUplinks) {
  Simulation sim(1);
  Network net(sim);
  LeafSpineConfig cfg;
  cfg.spines = 2;
  cfg.links_per_spine = 3;
  cfg.uplink_rate = 100_Gbps;
  const auto info = build_leaf_spine(net, cfg, SwitchConfig{}, 20, ecmp());
  EXPECT_EQ(info.uplink_ports(info.tors[0]).size(), 6U);
  EXPECT_DOUBLE_EQ(info.speedup, 6.0 * 100 / (8 * 100));
  EXPECT_DOUBLE_EQ(tor_oversubscription(net), 8.0 * 100 / (6 * 100));  // read off the links
  // The spine reaches each leaf over 3 parallel links: 4 leaves x 3.
  EXPECT_EQ(net.sw(info.top_tier()[0]).port_count(), 12U);
}

}  // namespace
}  // namespace fabsim
