// Scenario tests against closed forms and invariants: single-flow FCT to the picosecond,
// incast with and without PFC, PFC head-of-line blocking, ECMP collisions, link loss,
// determinism. Every run must return all packets to the pool.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>

#include <fmt/format.h>

#include "conserved.h"
#include "report/writers.h"
#include "scenario/runner.h"
#include "scenario/scenario.h"

namespace fabsim {
namespace {
using namespace literals;

constexpr int64_t kWire = 4096 + 62 + 20;  // wire bytes of a full data packet

RunResult run_text(const std::string& toml, const std::vector<std::string>& sets = {}) {
  const auto cfg = load_scenario_text(toml, "test.toml", sets);
  RunResult r = run_checked(cfg);
  EXPECT_EQ(r.packets_live_at_end, 0U) << "packets leaked from the pool";
  return r;
}

std::string two_hosts(const char* uplink) {
  return fmt::format(R"(
[topology]
kind = "leaf_spine"
servers = 2
gpus_per_server = 1
spines = 1
nic_rate = "100Gbps"
uplink_rate = "{}"
host_link_delay = "1us"
fabric_link_delay = "500ns"
[workload]
kind = "flows"
)",
                     uplink);
}

std::string one_flow(int64_t bytes) {
  return fmt::format("[[workload.flows]]\nsrc = 0\ndst = 1\nbytes = {}\n", bytes);
}

TEST(ClosedForm, SingleFlowFasterFabricToThePicosecond) {
  constexpr int64_t kN = 100;
  const RunResult r = run_text(two_hosts("400Gbps") + one_flow(kN * 4096));
  ASSERT_EQ(r.flows.size(), 1U);
  ASSERT_TRUE(r.flows[0].done);
  const Time sh = serialization_delay(kWire, 100_Gbps);
  const Time sf = serialization_delay(kWire, 400_Gbps);
  // The host link paces the flow; the last packet then crosses two 400G links and the last
  // 100G link without queueing: N sH + 2 sF + sH + 2 dH + 2 dF.
  const Time expected = sh * kN + sf * 2 + sh + 1_us * 2 + 500_ns * 2;
  EXPECT_EQ(r.flows[0].fct(), expected);
}

TEST(ClosedForm, SingleFlowEqualRatesToThePicosecond) {
  constexpr int64_t kN = 64;
  const RunResult r = run_text(two_hosts("100Gbps") + one_flow(kN * 4096));
  ASSERT_TRUE(r.flows[0].done);
  const Time s = serialization_delay(kWire, 100_Gbps);
  // Four store-and-forward hops of equal rate: (N + 3) s + 2 dH + 2 dF.
  EXPECT_EQ(r.flows[0].fct(), s * (kN + 3) + 1_us * 2 + 500_ns * 2);
}

TEST(ClosedForm, ShortLastPacketQueuesBehindTheLastFullOne) {
  constexpr int64_t kN = 10;
  const RunResult r = run_text(two_hosts("400Gbps") + one_flow(kN * 4096 + 1000));
  ASSERT_TRUE(r.flows[0].done);
  const Time sh = serialization_delay(kWire, 100_Gbps);
  const Time sf = serialization_delay(kWire, 400_Gbps);
  const Time sl = serialization_delay(1000 + 62 + 20, 100_Gbps);
  // The short last packet catches up with the last full one at the final 100G hop.
  EXPECT_EQ(r.flows[0].fct(), sh * (kN + 1) + sl + sf * 2 + 1_us * 2 + 500_ns * 2);
  EXPECT_EQ(r.flows[0].packets_sent, static_cast<uint64_t>(kN + 1));
  EXPECT_EQ(r.flows[0].delivered, kN * 4096 + 1000);
}

std::string incast(bool pfc, const char* buffer) {
  return fmt::format(R"(
[topology]
kind = "single_switch"
hosts = 9
[network.buffer]
size = "{}"
[network.pfc]
enabled = {}
[workload]
kind = "incast"
senders = 8
receiver = 0
bytes = "1MB"
)",
                     buffer, pfc ? "true" : "false");
}

TEST(Incast, PfcIsLosslessAndDrainsAtLineRate) {
  const RunResult r = run_text(incast(true, "1MiB"));
  EXPECT_TRUE(r.all_done);
  EXPECT_EQ(r.totals.drops, 0U);
  EXPECT_GT(r.totals.pause_time, Time());
  EXPECT_GT(r.totals.host_pause_time, Time());
  EXPECT_GT(r.totals.ecn_marks, 0U);
  // 8 x 1 MB = 8 x (244 full packets + one of 576 B payload); the receiver's link is the
  // bottleneck and stays busy: end = drain time + first packet's host hop + last hop delay.
  const int64_t per_flow = 244 * kWire + (576 + 62 + 20);
  const Time drain = serialization_delay(8 * per_flow, 100_Gbps);
  const Time first_hop = serialization_delay(kWire, 100_Gbps) + 1_us;
  const Time lower = drain + first_hop + 1_us;
  EXPECT_GE(r.end_time, lower);
  EXPECT_LE(r.end_time.ps(), lower.ps() + lower.ps() / 100) << "the bottleneck idled";
}

TEST(Incast, WithoutPfcASmallBufferDrops) {
  const RunResult r = run_text(incast(false, "256KiB"));
  EXPECT_GT(r.totals.drops, 0U);
  EXPECT_EQ(r.totals.pause_time, Time());
  EXPECT_FALSE(r.all_done);
  uint64_t missing = 0;
  for (const auto& f : r.flows) missing += f.packets_sent - f.packets_received;
  EXPECT_EQ(missing, r.totals.drops);  // every missing packet is a counted drop
}

// Seed 002 §1.2.2: PFC pauses a whole class on a port, so a flow that shares the paused
// ingress class with an incast is stopped too, although its own egress is idle.
std::string hol(bool pfc, bool with_incast) {
  std::string s = fmt::format(R"(
[topology]
kind = "leaf_spine"
servers = 16
gpus_per_server = 1
servers_per_leaf = 8
spines = 1
uplink_rate = "400Gbps"
[network.buffer]
size = "{}"
[network.pfc]
enabled = {}
[workload]
kind = "flows"
[[workload.flows]]
src = 3
dst = 9
bytes = "1MB"
)",
                              pfc ? "512KiB" : "64MiB", pfc ? "true" : "false");
  if (with_incast) {
    for (int src = 0; src < 3; ++src) {
      s += fmt::format("[[workload.flows]]\nsrc = {}\ndst = 8\nbytes = \"2MB\"\n", src);
    }
  }
  return s;
}

TEST(PfcHeadOfLine, VictimWithIdleEgressIsSlowed) {
  const RunResult alone = run_text(hol(true, false));
  const auto cfg = load_scenario_text(hol(true, true), "test.toml");
  fabsim::Run run(cfg);
  // Port of leaf 1 towards host 9 (the victim's own egress).
  const uint32_t leaf1 = run.topology().tors[1];
  const RunResult with = execute_checked(run);
  EXPECT_EQ(with.packets_live_at_end, 0U);
  const RunResult no_pfc = run_text(hol(false, true));
  ASSERT_TRUE(alone.flows[0].done && with.flows[0].done && no_pfc.flows[0].done);
  const Time fct_alone = alone.flows[0].fct();
  const Time fct_with = with.flows[0].fct();
  EXPECT_GT(fct_with.ps(), fct_alone.ps() * 3 / 2) << "victim not slowed by PFC";
  // Without PFC the same load leaves the victim within 5% of alone: the links have room.
  EXPECT_LT(no_pfc.flows[0].fct().ps(), fct_alone.ps() * 105 / 100);
  EXPECT_EQ(with.totals.drops, 0U);
  // The victim's egress port (leaf 1 -> host 9, port 1 of leaf 1) carried only the victim,
  // was never paused and never queued behind anything else.
  const auto& egress = run.network().sw(leaf1).port(1);
  EXPECT_EQ(egress.counters().tx_data_packets, with.flows[0].packets_received);
  EXPECT_EQ(egress.paused_time(3), Time());
  // The mechanism: the spine's port towards leaf 1 was paused.
  const uint32_t spine = run.topology().top_tier()[0];
  EXPECT_GT(run.network().sw(spine).port(1).paused_time(3), Time());
}

std::string ecmp_eight(uint64_t seed) {
  std::string s = fmt::format(R"(
[simulation]
seed = {}
[topology]
kind = "leaf_spine"
servers = 16
gpus_per_server = 1
servers_per_leaf = 8
spines = 8
uplink_rate = "100Gbps"
[workload]
kind = "flows"
)",
                              seed);
  for (int i = 0; i < 8; ++i) {
    s += fmt::format("[[workload.flows]]\nsrc = {}\ndst = {}\nbytes = \"100KB\"\n", i, 8 + i);
  }
  return s;
}

std::vector<uint64_t> uplink_bytes(uint64_t seed) {
  const auto cfg = load_scenario_text(ecmp_eight(seed), "test.toml");
  fabsim::Run run(cfg);
  const RunResult r = execute_checked(run);
  EXPECT_TRUE(r.all_done);
  EXPECT_EQ(r.packets_live_at_end, 0U);
  std::vector<uint64_t> out;
  const auto& leaf0 = run.network().sw(run.topology().tors[0]);
  for (uint16_t p : run.topology().uplink_ports(run.topology().tors[0])) {
    out.push_back(leaf0.port(p).counters().tx_data_packets);
  }
  return out;
}

TEST(Ecmp, EightFlowsOnEightUplinksCollide) {
  const auto bytes = uplink_bytes(1);
  ASSERT_EQ(bytes.size(), 8U);
  uint64_t sum = 0;
  for (auto b : bytes) sum += b;
  const double mean = static_cast<double>(sum) / 8;
  const double max = static_cast<double>(*std::max_element(bytes.begin(), bytes.end()));
  EXPECT_EQ(sum, 8U * 25U);  // every packet of every flow went up
  EXPECT_GT(max / mean, 1.0) << "no collision: hashing looks like round robin";
}

TEST(Ecmp, PlacementsDifferAcrossSeeds) {
  std::set<std::vector<uint64_t>> placements;
  for (uint64_t seed = 1; seed <= 20; ++seed) placements.insert(uplink_bytes(seed));
  EXPECT_GT(placements.size(), 1U);
}

TEST(Loss, RandomLinkLossIsCountedAndNearItsProbability) {
  const RunResult r = run_text(R"(
[topology]
kind = "single_switch"
hosts = 2
[network]
loss_probability = 0.01
[workload]
kind = "flows"
[[workload.flows]]
src = 0
dst = 1
bytes = "40960000"
)");
  const auto& f = r.flows[0];
  EXPECT_EQ(f.packets_sent, 10000U);
  EXPECT_EQ(f.packets_sent - f.packets_received, r.totals.link_losses);
  // Two links, each 1%: expected 199 losses, sd 14.
  EXPECT_GT(r.totals.link_losses, 140U);
  EXPECT_LT(r.totals.link_losses, 260U);
  EXPECT_FALSE(f.done);
}

const char* kPermutation = R"(
[topology]
kind = "leaf_spine"
servers = 8
gpus_per_server = 2
spines = 2
uplink_rate = "100Gbps"
[workload]
kind = "permutation"
bytes = "200KB"
)";

TEST(Determinism, SameSeedGivesByteIdenticalJson) {
  const std::string a = summary_json(run_text(kPermutation)).dump();
  const std::string b = summary_json(run_text(kPermutation)).dump();
  EXPECT_EQ(a, b);
  EXPECT_EQ(flows_csv(run_text(kPermutation)), flows_csv(run_text(kPermutation)));
  const std::string c = summary_json(run_text(kPermutation, {"simulation.seed=2"})).dump();
  EXPECT_NE(a, c);
}

TEST(Permutation, EveryHostSendsOnceAndReceivesOnce) {
  const RunResult r = run_text(kPermutation);
  std::vector<int> sent(16, 0);
  std::vector<int> recv(16, 0);
  for (const auto& f : r.flows) {
    EXPECT_NE(f.spec.src, f.spec.dst);
    ++sent[f.spec.src];
    ++recv[f.spec.dst];
    EXPECT_TRUE(f.done);
    EXPECT_EQ(f.delivered, 200000);
  }
  for (int h = 0; h < 16; ++h) {
    EXPECT_EQ(sent[h], 1);
    EXPECT_EQ(recv[h], 1);
  }
}

}  // namespace
}  // namespace fabsim
