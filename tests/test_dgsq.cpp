// GSE DGSQ: grants never outrun the egress port; a 31:1 incast stays lossless with source-local
// PFC only and a bounded egress queue; weighted grants split a port; pool exhaustion falls back.
#include <gtest/gtest.h>

#include "conserved.h"
#include "gse/fabric.h"
#include "gse/gsos.h"

#include <fmt/format.h>

#include <cstdio>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "report/writers.h"
#include "scenario/runner.h"
#include "scenario/scenario.h"

namespace fabsim {
namespace {
using namespace literals;

// 4 servers x 8 GPUs, 4 leaves, 4 spines x 400G: 31 senders (7 on the receiver's leaf).
std::string incast31(const char* transport) {
  return fmt::format(R"(
[topology]
kind = "leaf_spine"
servers = 4
gpus_per_server = 8
spines = 4
[transport]
kind = "{}"
[workload]
kind = "incast"
senders = 31
receiver = 0
bytes = "4MB"
)",
                     transport);
}

const std::vector<std::string> kDgsq = {"fabric.kind=gse", "fabric.gse.dgsq=true"};

// Every window of `window` from a grant at index `from` on holds at most `rate` x window plus one
// quantum of the grants in `trace`.
void expect_grants_within(const std::vector<GseDgsq::GrantRecord>& trace, size_t from, Time window,
                          Rate rate, int64_t quantum) {
  size_t j = from;
  int64_t in_window = 0;
  for (size_t i = from; i < trace.size(); ++i) {
    while (j < trace.size() && trace[j].at < trace[i].at + window) in_window += trace[j++].bytes;
    EXPECT_LE(in_window, bytes_in(window, rate) + quantum) << "window from " << trace[i].at.ps();
    in_window -= trace[i].bytes;
  }
}

// Two incasts of four senders each into hosts 0 and 1 of leaf 0 (hosts 8-11 and 16-19, on
// leaves 1 and 2), through the one spine; `extra` adds tables.
std::string two_incasts_into_leaf0(const std::string& uplink_rate, const std::string& extra) {
  std::string toml = fmt::format(R"(
[topology]
kind = "leaf_spine"
servers = 3
gpus_per_server = 8
spines = 1
uplink_rate = "{}"
[transport]
kind = "roce"
[workload]
kind = "flows"
{})",
                                 uplink_rate, extra);
  for (int i = 0; i < 4; ++i) {
    toml += fmt::format("[[workload.flows]]\nsrc = {}\ndst = 0\nbytes = \"2MB\"\n", 8 + i);
    toml += fmt::format("[[workload.flows]]\nsrc = {}\ndst = 1\nbytes = \"2MB\"\n", 16 + i);
  }
  return toml;
}

// A `degrade` fault event on leaf0-spine0's downward direction.
std::string degrade_leaf0_spine0(const char* at, double factor) {
  return fmt::format(
      "[[faults.events]]\nlink = \"leaf0-spine0\"\naction = \"degrade\"\nat = \"{}\"\n"
      "rate_factor = {}\ndirection = \"down\"\n",
      at, factor);
}

// The bound on a port's queue when grants reach it at its rate (docs/gse.md): only the spread
// of grant-to-data delays overlaps, C x (4 link delays + 4 frames) + 2 quanta + 1 frame.
int64_t granted_queue_bound(Rate c) {
  return bytes_in(1_us * 4 + serialization_delay(4 * 4194, c), c) + 2 * 16384 + 4194;
}

TEST(Dgsq, GrantsNeverOutrunTheEgressPort) {
  auto cfg = load_scenario_text(incast31("roce"), "dgsq.toml", kDgsq);
  cfg.fabric.as<GseConfig>().record_grants = true;
  fabsim::Run run(cfg);
  const RunResult r = execute_checked(run);
  ASSERT_TRUE(r.all_done);
  const auto& trace =
      run.fabric_as<GseFabric>()->dgsqs()[0]->grant_trace();  // leaf 0 holds the receiver
  ASSERT_GT(trace.size(), 1000U);
  const int64_t q = cfg.fabric.as<GseConfig>().grant_quantum;
  const Rate granted(static_cast<int64_t>(100e9 * cfg.fabric.as<GseConfig>().grant_rate));
  const Time period = serialization_delay(q, granted);
  const Time window = period + period;  // one grant period plus one quantum's time
  expect_grants_within(trace, 0, window, granted, q);
}

TEST(Dgsq, IncastIsLosslessWithLocalPfcOnlyAndABoundedEgressQueue) {
  const RunResult gse = run_checked(load_scenario_text(incast31("roce"), "dgsq.toml", kDgsq));
  const RunResult roce = run_checked(load_scenario_text(incast31("roce"), "roce.toml"));
  ASSERT_TRUE(gse.all_done && roce.all_done);
  EXPECT_EQ(gse.packets_live_at_end, 0U);
  EXPECT_EQ(gse.totals.drops, 0U);
  EXPECT_EQ(gse.fabric["dgsq"]["hold_drops"].get<uint64_t>(), 0U);
  EXPECT_EQ(gse.fabric["pfc_in_fabric"].get<uint64_t>(), 0U);
  EXPECT_GT(gse.fabric["pfc_to_hosts"].get<uint64_t>(), 0U);  // source-local PFC
  // Bound (docs/gse.md): grants reach the port at its rate, so its queue holds only what the
  // spread of grant-to-data delays lets overlap: C x (4 link delays + 4 frames at 400G) + two
  // quanta + one frame = 100G x 4.3 us + 32 KiB + 4.2 KB.
  const int64_t spread = bytes_in(1_us * 4 + serialization_delay(4 * 4194, 400_Gbps), 100_Gbps);
  const int64_t bound = spread + 2 * 16384 + 4194;
  const auto peak = gse.fabric["peak_host_port_queue_bytes"].get<int64_t>();
  EXPECT_LE(peak, bound);
  EXPECT_GT(roce.fabric["peak_host_port_queue_bytes"].get<int64_t>(), peak);
  // And the incast drains at the granted rate (97 % of line rate): 31 x 4 MB in wire bytes,
  // within 1 %.
  const Time t0 = serialization_delay(31 * 4'000'000LL * 4178 / 4096, 100_Gbps);
  EXPECT_LT(static_cast<double>(gse.end_time.ps()), 1.01 * static_cast<double>(t0.ps()) / 0.97);
  std::printf("[ figures ] 31:1 incast: peak egress queue GSE+DGSQ %lld B (bound %lld), RoCE "
              "%lld B; end %.1f us (line rate %.1f us), RoCE %.1f us; PFC to hosts %llu, in "
              "fabric %llu\n",
              static_cast<long long>(peak), static_cast<long long>(bound),
              static_cast<long long>(roce.fabric["peak_host_port_queue_bytes"].get<int64_t>()),
              gse.end_time.us_f(), t0.us_f(), roce.end_time.us_f(),
              static_cast<unsigned long long>(gse.fabric["pfc_to_hosts"].get<uint64_t>()),
              static_cast<unsigned long long>(gse.fabric["pfc_in_fabric"].get<uint64_t>()));
}

TEST(Dgsq, TransitCapsKeepASharedSpineDownlinkBounded) {
  // Two incasts into hosts 0 and 1 of leaf 0, whose only spine downlink is 100G: each port
  // alone would grant 97G, 194G in all.
  const std::string toml = two_incasts_into_leaf0("100Gbps", "");
  auto peak_downlink = [&](bool caps, RunResult* out) {
    auto sets = kDgsq;
    sets.push_back(caps ? "fabric.gse.transit_caps=true" : "fabric.gse.transit_caps=false");
    const auto cfg = load_scenario_text(toml, "caps.toml", sets);
    fabsim::Run run(cfg);
    *out = execute_checked(run);
    EXPECT_TRUE(out->all_done);
    const auto& spine = run.network().sw(run.topology().top_tier()[0]);
    return spine.port(0).counters().peak_queue_bytes;  // spine -> leaf 0
  };
  RunResult capped;
  RunResult uncapped;
  const int64_t with = peak_downlink(true, &capped);
  const int64_t without = peak_downlink(false, &uncapped);
  // Bound, as for one egress port: grants into the leaf arrive at the downlink's rate.
  const int64_t bound = granted_queue_bound(100_Gbps);
  EXPECT_LE(with, bound);
  EXPECT_EQ(capped.fabric["pfc_in_fabric"].get<uint64_t>(), 0U);
  EXPECT_EQ(capped.totals.drops, 0U);
  EXPECT_GT(without, 2 * bound);  // without the GSF's part, its downlink queue builds
  std::printf("[ figures ] spine downlink peak queue: transit caps %lld B (bound %lld), without "
              "%lld B (fabric PFC %llu)\n",
              static_cast<long long>(with), static_cast<long long>(bound),
              static_cast<long long>(without),
              static_cast<unsigned long long>(uncapped.fabric["pfc_in_fabric"].get<uint64_t>()));
}

// A spine link into the destination leaf retrains to a quarter of its rate (the `degrade` fault)
// while two incasts cross it. Its two ends learn the new rate after `detect` (a rate notice, as
// of a dead cable), and the leaf's transit budget follows: from then on the remote grants into
// the leaf fit the 100G the link now carries, and the spine's queue towards the leaf stays
// within the bound of Dgsq.TransitCapsKeepASharedSpineDownlinkBounded plus what was granted at
// the old rate before the notice. A budget kept at the built 400G (as before rate notices)
// grants the 194G both ports ask for, and that queue grows without bound.
TEST(Dgsq, ADegradedSpineLinkShrinksTheTransitBudgetAfterItsRateNotice) {
  const std::string toml =
      two_incasts_into_leaf0("400Gbps", "[faults]\n" + degrade_leaf0_spine0("20us", 0.25));
  auto cfg = load_scenario_text(toml, "degrade.toml", kDgsq);
  cfg.fabric.as<GseConfig>().record_grants = true;
  const GseConfig& g = cfg.fabric.as<GseConfig>();
  fabsim::Run run(cfg);
  const RunResult r = execute_checked(run);
  ASSERT_TRUE(r.all_done);
  EXPECT_EQ(r.totals.drops, 0U);
  const TopologyInfo& topo = run.topology();
  const Gsos& gsos = *run.fabric_as<GseFabric>()->gsos();
  EXPECT_EQ(gsos.stats().rate_notices, 2U);  // the cable's two ends
  EXPECT_EQ(gsos.stats().notices, 0U);       // the cable stays usable
  EXPECT_EQ(gsos.ingress_capacity(0), 100_Gbps);
  // Every remote grant issued one detect after the fault fits the new budget: in any window,
  // at most 0.97 x 100G of it plus one quantum.
  const Time notice = Time::us(20) + g.detect;
  const auto& trace = run.fabric_as<GseFabric>()->dgsqs()[0]->grant_trace();
  const Rate budget(static_cast<int64_t>(100e9 * g.transit_share));
  const Time window = serialization_delay(g.grant_quantum, budget) * 4;
  size_t first = 0;
  while (first < trace.size() && trace[first].at < notice) ++first;
  ASSERT_GT(trace.size() - first, 100U);
  expect_grants_within(trace, first, window, budget, g.grant_quantum);
  // The spine's queue towards leaf 0: the capped bound at 100G, plus the bytes granted at the
  // old budget (2 x 97G) in excess of 100G for a detect and one request-grant loop (4 link
  // delays) after the fault.
  const auto& spine = run.network().sw(topo.top_tier()[0]);
  const int64_t peak = spine.port(0).counters().peak_queue_bytes;
  const int64_t capped = granted_queue_bound(100_Gbps);
  const int64_t before_notice = bytes_in(g.detect + 1_us * 4, 94_Gbps);
  EXPECT_LE(peak, capped + before_notice);
  std::printf("[ figures ] degraded spine downlink: peak queue %lld B (bound %lld + %lld)\n",
              static_cast<long long>(peak), static_cast<long long>(capped),
              static_cast<long long>(before_notice));
}

// A rate notice carries the rate the change set, not the one the link has when the notice
// lands: two degrades 0.5 us apart, each noticed one detect (1 us) later, give the leaf 100G and
// then 200G, in that order. The link count stays 1 (a degraded link still counts).
TEST(Dgsq, EachRateNoticeCarriesTheRateOfItsOwnChange) {
  const std::string toml =
      two_incasts_into_leaf0("400Gbps", "[faults]\n" + degrade_leaf0_spine0("20us", 0.25) +
                                            degrade_leaf0_spine0("20.5us", 0.5));
  fabsim::Run run(load_scenario_text(toml, "degrade2.toml", kDgsq));
  const Gsos& gsos = *run.fabric_as<GseFabric>()->gsos();
  run.sim().run(Time::ns(20900));
  EXPECT_EQ(gsos.ingress_capacity(0), 400_Gbps);  // neither noticed yet
  run.sim().run(Time::ns(21200));
  EXPECT_EQ(gsos.ingress_capacity(0), 100_Gbps);  // the first, though the link runs at 200G
  EXPECT_EQ(gsos.ingress_links(0), 1);
  run.sim().run(Time::ns(21700));
  EXPECT_EQ(gsos.ingress_capacity(0), 200_Gbps);
  const RunResult r = execute_checked(run);
  EXPECT_TRUE(r.all_done);
  EXPECT_EQ(gsos.stats().rate_notices, 4U);
}

TEST(Dgsq, WeightedGrantsSplitThePortInRatio) {
  // Sources on leaves 1 and 2 (GSP ids 1 and 2) to host 0 on leaf 0, weights 3 : 1.
  const std::string toml = R"(
[topology]
kind = "leaf_spine"
servers = 4
gpus_per_server = 8
spines = 4
[transport]
kind = "datagram"
[workload]
kind = "flows"
[[workload.flows]]
src = 8
dst = 0
bytes = "12MB"
[[workload.flows]]
src = 16
dst = 0
bytes = "12MB"
[output]
trace = true
)";
  auto sets = kDgsq;
  sets.push_back("fabric.gse.grant_weights=[\"1\", \"3\", \"1\", \"1\"]");
  const RunResult r = run_checked(load_scenario_text(toml, "w.toml", sets));
  ASSERT_TRUE(r.all_done);
  const Time first_done = std::min(r.flows[0].end, r.flows[1].end);
  // Bytes each had delivered while both were active (after the first 50 us of start-up).
  std::map<uint32_t, int64_t> bytes;
  for (const auto& e : r.trace) {
    if (e.kind == 'r' && e.time > 50_us && e.time <= first_done) bytes[e.flow] += e.bytes;
  }
  const double ratio = static_cast<double>(bytes[0]) / static_cast<double>(bytes[1]);
  EXPECT_NEAR(ratio, 3.0, 3.0 * 0.02) << bytes[0] << " vs " << bytes[1];
  std::printf("[ figures ] weighted grants 3:1, delivered ratio %.4f\n", ratio);
}

// RoCE flows of `bytes` each (src, dst) on a leaf-spine of 4 servers x 8 GPUs (one leaf each)
// and 4 spines.
std::string roce_flows(const std::vector<std::pair<int, int>>& flows, const std::string& bytes) {
  std::string toml = R"(
[topology]
kind = "leaf_spine"
servers = 4
gpus_per_server = 8
spines = 4
[transport]
kind = "roce"
[workload]
kind = "flows"
)";
  for (const auto& [src, dst] : flows) {
    toml +=
        fmt::format("[[workload.flows]]\nsrc = {}\ndst = {}\nbytes = \"{}\"\n", src, dst, bytes);
  }
  return toml;
}

TEST(Dgsq, PoolExhaustionFallsBackCountedAndLosesNothing) {
  // One VOQ per GSP: a leaf sending to two destinations puts the second on the shared path.
  const std::string toml = roce_flows({{8, 0}, {9, 1}, {10, 17}}, "2MB");
  auto sets = kDgsq;
  sets.push_back("fabric.gse.voq_pool_queues=1");
  const RunResult r = run_checked(load_scenario_text(toml, "pool.toml", sets));
  ASSERT_TRUE(r.all_done);
  EXPECT_EQ(r.packets_live_at_end, 0U);
  EXPECT_GT(r.fabric["dgsq"]["fallback_packets"].get<uint64_t>(), 0U);
  EXPECT_EQ(r.fabric["dgsq"]["peak_voqs_per_gsp"].get<int64_t>(), 1);
  EXPECT_EQ(r.totals.drops, 0U);
  for (const auto& f : r.flows) EXPECT_EQ(f.delivered, f.spec.bytes);
}

// A 3:1 incast from one leaf builds a VOQ past a 256 KiB byte pool. Its packets join the VOQ
// behind the older ones instead of going ungranted ahead of them: nothing reaches a NIC out of
// order and no NACK is sent (until 2026-11-29 they overtook, and the go-back-N NICs NACKed).
TEST(Dgsq, PastTheBytePoolAPacketNeverOvertakesItsVoq) {
  const std::string toml = roce_flows({{8, 0}, {9, 0}, {10, 0}}, "4MB");
  auto sets = kDgsq;
  sets.push_back("fabric.gse.voq_pool_bytes=\"256KiB\"");
  const RunResult r = run_checked(load_scenario_text(toml, "pool.toml", sets));
  ASSERT_TRUE(r.all_done);
  EXPECT_GT(r.fabric["dgsq"]["pool_overruns"].get<uint64_t>(), 0U);
  EXPECT_GT(r.fabric["dgsq"]["peak_voq_bytes_per_gsp"].get<int64_t>(), 256 * 1024);
  uint64_t ooo = 0;
  for (const auto& f : r.flows) {
    EXPECT_EQ(f.delivered, f.spec.bytes);
    ooo += f.out_of_order;
  }
  EXPECT_EQ(ooo, 0U);
  for (const auto& [k, v] : r.transport_counters) {
    if (k == "nacks" || k == "retransmissions") {
      EXPECT_EQ(v, 0U) << k;
    }
  }
  EXPECT_EQ(r.totals.drops, 0U);
}

// Without PFC (seed 002's GSE devices) a NIC whose traffic waits for grants keeps sending:
// its VOQs fill the buffer and drop (8 senders x 8 MB per source leaf, 32 MiB of buffer). With
// ECN on the VOQ depth the NIC's DCQCN slows it.
TEST(Dgsq, WithoutPfcVoqEcnSlowsTheNicsInsteadOfDropping) {
  auto with =
      load_scenario_text(incast31("roce"), "dgsq.toml",
                         {"fabric.kind=gse", "fabric.gse.dgsq=true", "network.pfc.enabled=false",
                          "network.ecn.enabled=true", "transport.dcqcn.enabled=true",
                          "fabric.gse.voq_ecn=true", "workload.bytes=\"8MB\""});
  const RunResult r = run_checked(with);
  ASSERT_TRUE(r.all_done);
  EXPECT_GT(r.fabric["dgsq"]["ecn_marks"].get<uint64_t>(), 0U);
  EXPECT_EQ(r.fabric["dgsq"]["hold_drops"].get<uint64_t>(), 0U);
  EXPECT_EQ(r.totals.pfc_frames, 0U);
  auto without = with;
  without.fabric.as<GseConfig>().voq_ecn = false;
  const RunResult d = run_checked(without);
  EXPECT_GT(d.fabric["dgsq"]["hold_drops"].get<uint64_t>(), 0U);
  EXPECT_EQ(d.fabric["dgsq"]["ecn_marks"].get<uint64_t>(), 0U);
}

// A source leaf that lost one of its two uplinks is granted 776G by a destination leaf that
// knows nothing of it (8 ports x 97G, within that leaf's own ingress budget), and can send
// 400G. The source gate keeps the surplus in the VOQs (charged to the NICs' ports, under
// source-local PFC and voq_ecn), and the live uplink's queue at the gate; without the gate the
// granted bytes pile up on the uplink instead.
TEST(Dgsq, TheSourceGateKeepsGrantedBytesTheUplinksCannotCarryInTheVoqs) {
  std::string toml = R"(
[topology]
kind = "leaf_spine"
servers = 2
gpus_per_server = 8
spines = 2
nic_rate = "100Gbps"
uplink_rate = "400Gbps"
[transport]
kind = "roce"
[workload]
kind = "flows"
[faults]
[[faults.events]]
link = "leaf0-spine1"
action = "down"
at = "0s"
)";
  for (int i = 0; i < 8; ++i) {
    toml += fmt::format("[[workload.flows]]\nsrc = {}\ndst = {}\nbytes = \"4MB\"\n", i, 8 + i);
  }
  auto run_gate = [&](const char* gate, int64_t* peak_uplink, RunResult* out) {
    auto sets = kDgsq;
    sets.push_back(fmt::format("fabric.gse.source_gate={}", gate));
    const auto cfg = load_scenario_text(toml, "gate.toml", sets);
    fabsim::Run run(cfg);
    *out = execute_checked(run);
    ASSERT_TRUE(out->all_done);
    const TopologyInfo& topo = run.topology();
    const uint32_t leaf0 = topo.tors[0];
    *peak_uplink = 0;
    for (uint16_t p : topo.uplink_ports(leaf0)) {
      *peak_uplink =
          std::max(*peak_uplink, run.network().sw(leaf0).port(p).counters().peak_queue_bytes);
    }
  };
  int64_t gated_peak = 0;
  int64_t open_peak = 0;
  RunResult gated;
  RunResult open;
  run_gate("\"32KiB\"", &gated_peak, &gated);
  run_gate("0", &open_peak, &open);
  // At most the gate plus the packet that passed it (4,178 B + the 16 B GSE header), and the
  // control frames (64 B) queued behind: one frame's worth of slack.
  EXPECT_LE(gated_peak, 32768 + 2 * 4194);
  EXPECT_GT(gated.fabric["dgsq"]["source_waits"].get<uint64_t>(), 0U);
  EXPECT_EQ(gated.fabric["pfc_in_fabric"].get<uint64_t>(), 0U);
  EXPECT_EQ(gated.totals.drops, 0U);
  EXPECT_EQ(open.fabric["dgsq"]["source_waits"].get<uint64_t>(), 0U);
  EXPECT_GT(open_peak, 20 * gated_peak);  // the granted bytes wait on the uplink instead
  // Where the surplus waits: the VOQs hold more than the uplink did without the gate.
  EXPECT_GT(gated.fabric["dgsq"]["peak_voq_bytes_per_gsp"].get<int64_t>(),
            open.fabric["dgsq"]["peak_voq_bytes_per_gsp"].get<int64_t>() + open_peak / 2);
  // Without the gate the uplink's queue draws the fabric's ECN marks and DCQCN cuts the NICs
  // (2,243 against 668 us when this was written).
  EXPECT_GT(open.end_time, gated.end_time);
  // With the gate, 8 x 4 MB drain over the one live 400G uplink: the closed form, within 2 %.
  const Time t0 = serialization_delay(8 * 4'000'000LL * (4096 + 62 + 16 + 20) / 4096, 400_Gbps);
  EXPECT_LT(static_cast<double>(gated.end_time.ps()), 1.02 * static_cast<double>(t0.ps()));
  EXPECT_GT(gated.end_time, t0);
  std::printf("[ figures ] source gate: live uplink peak queue %lld B (gate 32768), without the "
              "gate %lld B; peak VOQ bytes %lld and %lld B; end %.1f us, line rate %.1f us\n",
              static_cast<long long>(gated_peak), static_cast<long long>(open_peak),
              gated.fabric["dgsq"]["peak_voq_bytes_per_gsp"].get<long long>(),
              open.fabric["dgsq"]["peak_voq_bytes_per_gsp"].get<long long>(), gated.end_time.us_f(),
              t0.us_f());
}

}  // namespace
}  // namespace fabsim

namespace fabsim {
namespace {

// Requests and grants are packets, and loss takes them like data (docs/FAULTS.md). A VOQ owed
// grants that heard none for request_retry asks again with the grants it has seen, and the
// destination repeats a grant that was lost. 8 datagram flows of 64 KiB between two leaves at 5 %
// loss on the fabric links (seed 1): before, a lost grant left two frames in a VOQ for good (the
// run went still at 23 us with 8,356 B never granted); now every byte queued is granted and sent
// (lost data stays lost: datagrams are not resent), and nothing is left in flight.
TEST(Dgsq, LostRequestsAndGrantsAreAskedForAgain) {
  std::string toml = R"(
[simulation]
stop_time = "20ms"
[topology]
kind = "leaf_spine"
servers = 2
gpus_per_server = 4
spines = 2
nic_rate = "100Gbps"
uplink_rate = "400Gbps"
[network]
loss_probability = 0.05
[network.loss]
links = "fabric"
[network.pfc]
enabled = false
[network.ecn]
enabled = false
[transport]
kind = "datagram"
[workload]
kind = "flows"
)";
  for (int i = 0; i < 4; ++i) {
    toml += fmt::format("[[workload.flows]]\nsrc = {}\ndst = {}\nbytes = \"64KiB\"\n", i, 4 + i);
    toml += fmt::format("[[workload.flows]]\nsrc = {}\ndst = {}\nbytes = \"64KiB\"\n", 4 + i, i);
  }
  const RunResult r = run_checked(load_scenario_text(toml, "lossy.toml", kDgsq));
  const auto& d = r.fabric["dgsq"];
  EXPECT_GT(d["request_refreshes"].get<uint64_t>(), 0U);
  // 8 flows x 16 frames of 4,096 + 62 B, + 20 B of framing each: all granted.
  EXPECT_EQ(d["granted_bytes"].get<uint64_t>(), 8U * 16U * (4096 + 62 + 20));
  EXPECT_EQ(r.ledger.total().in_flight.packets, 0U);
  EXPECT_EQ(r.packets_live_at_end, 0U);
  EXPECT_GT(r.ledger.total().dropped_total().packets, 0U);
}

}  // namespace
}  // namespace fabsim
