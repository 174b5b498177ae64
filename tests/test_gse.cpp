// GSE data plane I: container numbering rules, one uplink per container, no reordering seen by
// RoCE behind GSE, load spread, misordering before reordering, reorder timeout.
#include <gtest/gtest.h>

#include "conserved.h"
#include "gse/fabric.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include "gse/gse.h"
#include "report/writers.h"
#include "scenario/runner.h"
#include "scenario/scenario.h"

namespace fabsim {
namespace {

TEST(GseContainers, CumulativeRuleIdsAreBytesBeforeOverLength) {
  // Seed 000 §3.3: id = cumulative bytes before the packet / container length (1000 B here).
  ContainerAssigner a(ContainerRule::kCumulative, 1000);
  const int64_t sizes[] = {400, 400, 400, 900, 100, 2500, 64, 64};
  // offsets: 0, 400, 800, 1200, 2100, 2200, 4700, 4764
  const uint32_t ids[] = {0, 0, 0, 1, 2, 2, 4, 4};
  const uint16_t seqs[] = {0, 1, 2, 0, 0, 1, 0, 1};
  const bool opened[] = {true, false, false, true, true, false, true, false};
  for (int i = 0; i < 8; ++i) {
    const auto x = a.assign(sizes[i]);
    EXPECT_EQ(x.container, ids[i]) << i;
    EXPECT_EQ(x.seq, seqs[i]) << i;
    EXPECT_EQ(x.opened, opened[i]) << i;
  }
}

TEST(GseContainers, OverflowRuleOpensTheNextContainer) {
  // Seed 002 §2.2.1: a packet that would overflow the current container opens the next one.
  ContainerAssigner a(ContainerRule::kOverflow, 1000);
  const int64_t sizes[] = {400, 400, 400, 900, 100, 2500, 64, 64};
  // fills: [400, 800] | [400] | [900, 1000] | [2500] | [64, 128]
  const uint32_t ids[] = {0, 0, 1, 2, 2, 3, 4, 4};
  const uint16_t prev_count[] = {0, 0, 2, 1, 1, 2, 1, 1};
  for (int i = 0; i < 8; ++i) {
    const auto x = a.assign(sizes[i]);
    EXPECT_EQ(x.container, ids[i]) << i;
    EXPECT_EQ(x.prev_count, prev_count[i]) << i;
    EXPECT_EQ(x.prev_gap, i < 2 ? 0 : 1) << i;
  }
}

TEST(GseContainers, SkippedIdsCarryTheGapToThePreviousContainer) {
  ContainerAssigner a(ContainerRule::kCumulative, 100);
  EXPECT_EQ(a.assign(350).container, 0U);  // covers ids 0-3
  const auto x = a.assign(10);             // offset 350: id 3
  EXPECT_EQ(x.container, 3U);
  EXPECT_EQ(x.prev_gap, 3);
  EXPECT_EQ(x.prev_count, 1);
}

RunResult run_text(const std::string& toml, const std::vector<std::string>& sets = {}) {
  RunResult r = run_checked(load_scenario_text(toml, "gse.toml", sets));
  EXPECT_EQ(r.packets_live_at_end, 0U) << "packets leaked from the pool";
  return r;
}

// Two leaves of 8 hosts, 4 spines at 100G with unequal delays: containers on different paths
// arrive out of order unless the destination GSP restores order.
std::string unequal(const std::string& transport, int flows, const char* bytes) {
  std::string s = fmt::format(R"(
[topology]
kind = "leaf_spine"
servers = 16
gpus_per_server = 1
servers_per_leaf = 8
spines = 4
uplink_rate = "100Gbps"
spine_link_delays = ["1us", "1.4us", "1.8us", "2.2us"]
[transport]
kind = "{}"
[workload]
kind = "flows"
[output]
misorder = true
)",
                              transport);
  for (int i = 0; i < flows; ++i) {
    s += fmt::format("[[workload.flows]]\nsrc = {}\ndst = {}\nbytes = \"{}\"\n", i, 8 + i, bytes);
  }
  return s;
}

TEST(GsePktc, EveryPacketOfAContainerTakesOneUplink) {
  auto cfg = load_scenario_text(unequal("roce", 4, "2MB"), "gse.toml", {"fabric.kind=gse"});
  cfg.fabric.as<GseConfig>().record_containers = true;
  fabsim::Run run(cfg);
  const RunResult r = execute_checked(run);
  ASSERT_TRUE(r.all_done);
  std::map<std::pair<uint32_t, uint32_t>, std::set<uint16_t>> ports;
  std::set<uint16_t> used;
  size_t records = 0;
  for (const auto* src : run.fabric_as<GseFabric>()->sources()) {
    for (const auto& rec : src->records()) {
      ports[{rec.dst, rec.container}].insert(rec.port);
      used.insert(rec.port);
      ++records;
    }
  }
  ASSERT_GT(records, 1000U);
  for (const auto& [key, set] : ports) EXPECT_EQ(set.size(), 1U) << "container " << key.second;
  EXPECT_EQ(used.size(), 4U);  // successive containers use every uplink
}

TEST(GsePktc, RoceBehindGseSeesNoReorderingWhileSprayingDoes) {
  const RunResult gse = run_text(unequal("roce", 4, "2MB"), {"fabric.kind=gse"});
  const RunResult spray = run_text(unequal("roce", 4, "2MB"), {"routing.policy=spray"});
  ASSERT_TRUE(gse.all_done && spray.all_done);
  auto totals = [](const RunResult& r) {
    uint64_t ooo = 0;
    for (const auto& f : r.flows) ooo += f.out_of_order;
    uint64_t nacks = 0;
    for (const auto& [k, v] : r.transport_counters) {
      if (k == "nacks") nacks = v;
    }
    return std::make_pair(ooo, nacks);
  };
  EXPECT_EQ(totals(gse).first, 0U);
  EXPECT_EQ(totals(gse).second, 0U);
  EXPECT_GT(totals(spray).first, 0U);
  EXPECT_GT(totals(spray).second, 0U);
  // The fabric did deliver GSE's containers out of order: the reorder stage held packets.
  EXPECT_GT(gse.fabric["gse"]["reorder_held"].get<uint64_t>(), 0U);
  EXPECT_GT(gse.fabric["misorder"]["misordered"].get<uint64_t>(), 0U);
  // GSE-E2E: the NICs number and reorder, the leaves pin containers: the same outcome.
  const RunResult e2e =
      run_text(unequal("roce", 4, "2MB"), {"fabric.kind=gse", "fabric.gse.mode=e2e"});
  ASSERT_TRUE(e2e.all_done);
  EXPECT_EQ(totals(e2e).first, 0U);
  EXPECT_EQ(totals(e2e).second, 0U);
  EXPECT_EQ(e2e.fabric["gse"]["mode"], "e2e");
  EXPECT_GT(e2e.fabric["gse"]["reorder_held"].get<uint64_t>(), 0U);
}

// Bytes per uplink of leaf 0 for a policy, with packet sizes uniform in [64, 1500] B.
std::vector<double> uplink_bytes(const std::vector<std::string>& sets) {
  const std::string toml = R"(
[topology]
kind = "leaf_spine"
servers = 16
gpus_per_server = 1
servers_per_leaf = 8
spines = 8
uplink_rate = "100Gbps"
[transport]
kind = "datagram"
payload = 1438
payload_min = 2
rate = "50Gbps"
[workload]
kind = "flows"
[[workload.flows]]
src = 0
dst = 8
bytes = "32MB"
[[workload.flows]]
src = 1
dst = 9
bytes = "32MB"
[[workload.flows]]
src = 2
dst = 10
bytes = "32MB"
[[workload.flows]]
src = 3
dst = 11
bytes = "32MB"
)";
  const auto cfg = load_scenario_text(toml, "spread.toml", sets);
  fabsim::Run run(cfg);
  const RunResult r = execute_checked(run);
  EXPECT_TRUE(r.all_done);
  std::vector<double> out;
  const auto& leaf = run.network().sw(run.topology().tors[0]);
  for (uint16_t p : run.topology().uplink_ports(run.topology().tors[0])) {
    out.push_back(static_cast<double>(leaf.port(p).counters().tx_bytes));
  }
  return out;
}

double variance(const std::vector<double>& v) {
  double mean = 0;
  for (double x : v) mean += x;
  mean /= static_cast<double>(v.size());
  double var = 0;
  for (double x : v) var += (x - mean) * (x - mean);
  return var / static_cast<double>(v.size());
}

TEST(GseLoadSpread, PktcSpreadsRandomSizesEvenerThanSprayingAndEcmp) {
  // Seed 000 §3.1.1: equal containers make per-path load nearly equal; per-packet spraying
  // carries the variance of the packet sizes; per-flow ECMP the variance of the hash. Four
  // 32 MB flows: ~250 containers per uplink, so the last partial round of containers (at most
  // one container per stream) is small beside spraying's sqrt(packets) x size spread.
  const double pktc = variance(uplink_bytes({"fabric.kind=gse"}));
  const double spray = variance(uplink_bytes({"routing.policy=spray"}));
  const double ecmp = variance(uplink_bytes({"routing.policy=ecmp"}));
  EXPECT_LT(pktc, spray);
  EXPECT_LT(pktc * 10, ecmp);
  std::printf("[ figures ] bytes per uplink, standard deviation: PKTC %.0f B, spraying %.0f B, "
              "ECMP %.0f B\n",
              std::sqrt(pktc), std::sqrt(spray), std::sqrt(ecmp));
}

TEST(GseMisordering, PktcMisordersFewerAdjacentPairsThanSpraying) {
  // Datagrams (no retransmission) of full 4 KiB packets; a 16,776 B container holds m = 4
  // (4096 + 62 + 16 + 20 = 4194 wire bytes each).
  const std::vector<std::string> gse = {"fabric.kind=gse", "fabric.gse.container=16776",
                                        "fabric.gse.container_rule=overflow"};
  const RunResult pktc = run_text(unequal("datagram", 4, "4MB"), gse);
  const RunResult spray = run_text(unequal("datagram", 4, "4MB"), {"routing.policy=spray"});
  const double f_pktc = pktc.fabric["misorder"]["fraction"].get<double>();
  const double f_spray = spray.fabric["misorder"]["fraction"].get<double>();
  EXPECT_GT(f_spray, 0.0);
  EXPECT_LT(f_pktc, f_spray);
  // Delivered to the hosts in order all the same.
  uint64_t ooo = 0;
  for (const auto& f : pktc.flows) ooo += f.out_of_order;
  EXPECT_EQ(ooo, 0U);
  std::printf("[ figures ] misordered adjacent pairs before reordering: spraying %.4f, PKTC "
              "(m = 4) %.4f; seed 000's analysis: 0.5 and 0.5/(2m) = %.4f\n",
              f_spray, f_pktc, 0.5 / 8);
}

TEST(GseReorderTimeout, GivesUpOnALostPacketsContainerAndDeliversTheRest) {
  const RunResult r =
      run_text(unequal("datagram", 2, "8MB"), {"fabric.kind=gse", "network.loss_probability=0.0005",
                                               "fabric.gse.reorder_timeout=20us"});
  const auto& g = r.fabric["gse"];
  EXPECT_GT(g["reorder_timeouts"].get<uint64_t>(), 0U);
  EXPECT_GT(r.totals.link_losses, 0U);
  uint64_t sent = 0;
  uint64_t received = 0;
  for (const auto& f : r.flows) {
    sent += f.packets_sent;
    received += f.packets_received;
  }
  // Everything not lost on a link reached its host, after the timeouts released it.
  EXPECT_EQ(received, sent - r.totals.link_losses);
  EXPECT_EQ(r.totals.drops, 0U);
}

}  // namespace
}  // namespace fabsim
