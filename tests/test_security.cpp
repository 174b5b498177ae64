// Security cost (docs/SECURITY.md): PHYSec link-level adds exactly its latency per hop and no
// bytes; MACsec adds its bytes to every frame; PSP/IPsec add bytes to every packet and latency
// at the two NICs; PHYSec channel-level stretches serialization by its block overhead. Each
// against the single-flow closed form of tests/test_scenarios.cpp.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "conserved.h"
#include "scenario/runner.h"
#include "scenario/scenario.h"

namespace fabsim {
namespace {
using namespace literals;

constexpr int64_t kN = 100;                // packets of 4096 B
constexpr int64_t kWire = 4096 + 62 + 20;  // wire bytes of a full data packet without security

uint64_t last_host_tx_bytes = 0;  // frame bytes the sending NIC put on its link in the last run

// Two hosts on two leaves through one spine: four links, 100G at the edge, 400G in the fabric.
RunResult one_flow(const std::string& security) {
  const std::string text = fmt::format(R"(
[topology]
kind = "leaf_spine"
servers = 2
gpus_per_server = 1
spines = 1
nic_rate = "100Gbps"
uplink_rate = "400Gbps"
host_link_delay = "1us"
fabric_link_delay = "500ns"
{}
[workload]
kind = "flows"
[[workload.flows]]
src = 0
dst = 1
bytes = {}
)",
                                       security, kN * 4096);
  fabsim::Run run(load_scenario_text(text, "security.toml"));
  RunResult r = execute_checked(run);
  EXPECT_TRUE(r.all_done);
  EXPECT_EQ(r.packets_live_at_end, 0U);
  last_host_tx_bytes = run.network().host(0).port().counters().tx_bytes;
  return r;
}

// The host link paces the flow; the last packet then crosses two fabric links and the last
// host link: N sH + 2 sF + sH + 2 dH + 2 dF (+ what each hop adds).
Time closed_form(int64_t wire, Time per_hop, Time per_host_link) {
  const Time sh = serialization_delay(wire, 100_Gbps);
  const Time sf = serialization_delay(wire, 400_Gbps);
  return sh * kN + sf * 2 + sh + 1_us * 2 + 500_ns * 2 + per_hop * 4 + per_host_link * 2;
}

TEST(Security, NoneMatchesTheClosedForm) {
  EXPECT_EQ(one_flow("").flows[0].fct(), closed_form(kWire, Time(), Time()));
}

TEST(Security, PhysecLinkAddsExactlyItsLatencyPerHopAndNoBytes) {
  const RunResult plain = one_flow("");
  const uint64_t plain_bytes = last_host_tx_bytes;
  const RunResult r = one_flow("[security]\nkind = \"physec_link\"\nlatency = \"100ns\"\n");
  EXPECT_EQ(r.flows[0].fct(), closed_form(kWire, 100_ns, Time()));
  EXPECT_EQ(r.flows[0].fct() - plain.flows[0].fct(), 400_ns);  // four hops
  EXPECT_GT(plain_bytes, 0U);
  EXPECT_EQ(last_host_tx_bytes, plain_bytes);
}

TEST(Security, MacsecAddsItsBytesToEveryFrameAndItsLatencyPerHop) {
  const RunResult plain = one_flow("");
  const uint64_t plain_bytes = last_host_tx_bytes;
  const RunResult r = one_flow("[security]\nkind = \"macsec\"\n");  // 32 B, 200 ns by default
  EXPECT_EQ(r.flows[0].fct(), closed_form(kWire + 32, 200_ns, Time()));
  (void)plain;
  // The frames themselves are unchanged (the tag is on the wire, counted in serialization).
  EXPECT_EQ(last_host_tx_bytes, plain_bytes);
}

TEST(Security, PspAddsBytesPerPacketAndLatencyAtBothNics) {
  const RunResult r = one_flow("[security]\nkind = \"psp\"\n");  // 40 B, 300 ns per NIC
  EXPECT_EQ(r.flows[0].fct(), closed_form(kWire + 40, Time(), 300_ns));
  EXPECT_EQ(r.flows[0].delivered, kN * 4096);  // the payload is unchanged
}

TEST(Security, PhysecChannelStretchesSerializationByItsBlockOverhead) {
  // 1,024-block segments: ceil(65 x 1024 / 64) + 3 = 1,043 blocks on the wire per 1,024.
  const RunResult r =
      one_flow("[security]\nkind = \"physec_channel\"\nlatency = \"0ns\"\nsegment_blocks = 1024\n");
  const Time sh = serialization_delay(kWire * 1043, Rate(100'000'000'000LL * 1024));
  const Time sf = serialization_delay(kWire * 1043, Rate(400'000'000'000LL * 1024));
  EXPECT_EQ(r.flows[0].fct(), sh * kN + sf * 2 + sh + 1_us * 2 + 500_ns * 2);
  // About 1.86 % slower on a long flow.
  const double stretch = static_cast<double>(r.flows[0].fct().ps()) /
                         static_cast<double>(closed_form(kWire, Time(), Time()).ps());
  EXPECT_NEAR(stretch, 1043.0 / 1024.0, 0.002);
}

// The PFC headroom covers a link's security latency: bytes still arriving after XOFF include
// those in its extra flight time. Before, a 15:1 PFC incast at 400G with link PHYSec (100 ns
// per hop) dropped 826 "lossless" packets, and 2,028 with MACsec at 100G.
TEST(Security, PfcHeadroomCoversTheSecurityLatency) {
  struct Out {
    uint64_t drops;
    int64_t headroom;  // a leaf's host port
    Link::Config link;
  };
  auto run_incast = [](const std::string& kind) {
    const std::string text = fmt::format(R"(
[topology]
kind = "leaf_spine"
servers = 16
gpus_per_server = 1
servers_per_leaf = 8
spines = 2
nic_rate = "400Gbps"
uplink_rate = "400Gbps"
host_link_delay = "1us"
fabric_link_delay = "1us"
[network.buffer]
size = "4MiB"
[network.pfc]
enabled = true
[network.ecn]
enabled = false
[transport]
kind = "roce"
[transport.dcqcn]
enabled = false
[workload]
kind = "incast"
senders = 15
receiver = 0
bytes = "1MB"
[security]
kind = "{}"
)",
                                         kind);
    fabsim::Run run(load_scenario_text(text, "headroom.toml"));
    const RunResult r = execute_checked(run);
    EXPECT_TRUE(r.all_done) << kind;
    return Out{r.totals.drops, run.network().sw(0).headroom_size(0),
               run.network().sw(0).port(0).link()->config()};
  };
  const Out none = run_incast("none");
  EXPECT_EQ(none.drops, 0U);
  for (const char* kind : {"physec_link", "macsec"}) {
    const Out o = run_incast(kind);
    EXPECT_EQ(o.drops, 0U) << kind;
    ASSERT_GT(o.link.extra_delay, Time()) << kind;
    // The extra flight, both ways, at the link's rate.
    EXPECT_EQ(o.headroom - none.headroom, 2 * bytes_in(o.link.extra_delay, o.link.rate)) << kind;
  }
}

TEST(Security, BadCombinationsAreClearErrors) {
  EXPECT_THROW(load_scenario_text("[security]\nkind = \"physec_link\"\nbytes = 16\n", "s.toml"),
               ConfigError);
  EXPECT_THROW(load_scenario_text("[security]\nlatency = \"1us\"\n", "s.toml"), ConfigError);
  EXPECT_THROW(load_scenario_text("[security]\nkind = \"tls\"\n", "s.toml"), ConfigError);
}

}  // namespace
}  // namespace fabsim
