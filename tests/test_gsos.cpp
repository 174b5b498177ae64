// GSOS (gse/gsos.h): global edge port ids and the grant policy; GSF back-pressure is visible to
// GSPs one notice hop after publication and steers adaptive container path choice; grants
// follow the end-to-end capacity left after failures.
#include <gtest/gtest.h>

#include "conserved.h"
#include "gse/fabric.h"

#include <fmt/format.h>

#include "helpers.h"
#include "scenario/runner.h"
#include "scenario/scenario.h"

namespace fabsim {
namespace {
using namespace literals;

std::string gse_scenario(const std::string& extra, const std::string& workload) {
  return fmt::format(R"(
[topology]
kind = "leaf_spine"
servers = 4
gpus_per_server = 8
spines = 4
[fabric]
kind = "gse"
{}
[transport]
kind = "roce"
[workload]
kind = "flows"
{}
)",
                     extra, workload);
}

const char* kLateFlow = R"([[workload.flows]]
src = 0
dst = 8
bytes = "64KB"
start = "1ms"
)";

TEST(Gsos, GlobalIdsNameEveryEdgeEgressPortAndThePolicyComesFromTheScenario) {
  auto cfg = load_scenario_text(gse_scenario(R"([fabric.gse]
dgsq = true
grant_quantum = "8KiB"
grant_rate = 0.9
grant_weights = ["3", "1"]
)",
                                             kLateFlow),
                                "gsos.toml");
  fabsim::Run run(cfg);
  const Gsos& g = *run.fabric_as<GseFabric>()->gsos();
  const auto& topo = run.topology();
  ASSERT_EQ(g.edge_ports(), 32U);
  for (uint32_t id = 0; id < 32; ++id) {
    const auto& e = g.edge_port(id);
    EXPECT_EQ(e.tor, id / 8);
    EXPECT_EQ(e.sw, topo.tors[id / 8]);
    EXPECT_EQ(e.port, topo.host_port[id]);
    // The port leads to host `id`.
    EXPECT_EQ(run.network().sw(e.sw).port(e.port).link()->dst(), &run.network().host(id));
  }
  const GrantPolicy& p = g.grant_policy();
  EXPECT_EQ(p.quantum, 8192);
  EXPECT_DOUBLE_EQ(p.rate_share, 0.9);
  EXPECT_DOUBLE_EQ(p.weight(0), 3.0);
  EXPECT_DOUBLE_EQ(p.weight(1), 1.0);
  EXPECT_DOUBLE_EQ(p.weight(7), 1.0);
  // 8 KiB at 90 % of 100 Gb/s: 8192 x 8 / 90e9 s = 728.177... ns, rounded up to the picosecond.
  EXPECT_EQ(p.window(Rate::gbps(100)).ps(), 728178);
  execute_checked(run);
}

TEST(Gsos, BackPressureIsVisibleOneHopAfterPublicationAndSteersAdaptiveChoice) {
  auto cfg = load_scenario_text(gse_scenario(R"([fabric.gse]
path = "adaptive"
publish_interval = "2us"
notice_hop = "1us"
)",
                                             kLateFlow),
                                "gsos.toml");
  fabsim::Run run(cfg);
  const auto& topo = run.topology();
  Network& net = run.network();
  Simulation& sim = run.sim();
  // Spine 0's link to leaf 1 holds 40 frames behind a pause.
  const Cable* hot = nullptr;
  for (const auto& c : topo.cables) {
    if (c.name() == "leaf1-spine0") hot = &c;
  }
  ASSERT_NE(hot, nullptr);
  EgressPort& port = net.sw(topo.top_tier()[0]).port(hot->upper_port);
  port.apply_pause(3, 65535);
  for (int i = 0; i < 40; ++i) port.enqueue(test::make_packet(sim, 16, 8, 4096, 3, 0, i));
  const Gsos& g = *run.fabric_as<GseFabric>()->gsos();
  // Seen from leaf 0: behind its uplink k is spine k; host 8 is on leaf 1, host 16 on leaf 2.
  const auto up0 = topo.uplink_ports(topo.tors[0]);
  const uint32_t leaf0 = topo.tors[0];
  sim.run(Time::ps(500'000));  // published at 0, not yet visible (one hop = 1 us)
  EXPECT_EQ(g.published_backlog(leaf0, up0[0], 8), 0);
  sim.run(Time::us(3));  // the snapshot of t = 0 is visible from 1 us; the next from 3 us
  EXPECT_EQ(g.published_backlog(leaf0, up0[0], 8), 40 * 4096);
  EXPECT_EQ(g.published_backlog(leaf0, up0[1], 8), 0);
  EXPECT_EQ(g.published_backlog(leaf0, up0[0], 16), 0);  // other destination leaves unaffected

  // Leaf 0's containers for leaf 1 avoid spine 0; those for leaf 2 still use it.
  auto& src = *run.fabric_as<GseFabric>()->sources()[0];
  const auto& up = topo.uplink_ports(topo.tors[0]);
  int to_spine0_for_leaf1 = 0;
  int to_spine0_for_leaf2 = 0;
  for (int i = 0; i < 16; ++i) {
    for (uint32_t dst : {8U, 16U}) {
      Packet* p = test::make_packet(sim, 0, dst + static_cast<uint32_t>(i % 8), 16000, 3, 0, 0);
      const uint16_t out = src.stamp_and_choose(*p, up.data(), static_cast<uint32_t>(up.size()));
      const uint32_t next = topo.cables[topo.port_cable[leaf0][out]].upper;
      if (next == topo.top_tier()[0]) ++(dst == 8 ? to_spine0_for_leaf1 : to_spine0_for_leaf2);
      sim.pool().release(p);
    }
  }
  EXPECT_EQ(to_spine0_for_leaf1, 0);
  EXPECT_GT(to_spine0_for_leaf2, 0);
  net.finish();
}

// Three of leaf 0's four spine links fail; 8 remote senders then send to the 8 hosts of leaf 0.
// Grants to remote sources follow the capacity leaf 0 knows is left (one 400G link), so the
// remaining spine link's queue stays near one grant's worth; ignoring the failures (no transit
// caps) lets it grow to megabytes.
std::string failed_ingress(bool caps) {
  std::string w;
  for (int i = 0; i < 8; ++i) {
    w += fmt::format("[[workload.flows]]\nsrc = {}\ndst = {}\nbytes = \"2MB\"\nstart = \"20us\"\n",
                     8 + 3 * i, i);
  }
  std::string ev;
  for (int s = 1; s < 4; ++s) {
    ev += fmt::format(
        "[[faults.events]]\nlink = \"leaf0-spine{}\"\naction = \"down\"\nat = \"1us\"\n", s);
  }
  return gse_scenario(fmt::format("[fabric.gse]\ndgsq = true\ntransit_caps = {}\n{}", caps, ev), w);
}

int64_t peak_spine_downlink(fabsim::Run& run) {
  const auto& topo = run.topology();
  for (const auto& c : topo.cables) {
    if (c.name() == "leaf0-spine0") {
      return run.network().sw(topo.top_tier()[0]).port(c.upper_port).counters().peak_queue_bytes;
    }
  }
  return -1;
}

TEST(Gsos, GrantsFollowTheCapacityLeftAfterFailures) {
  auto on = load_scenario_text(failed_ingress(true), "gsos.toml");
  fabsim::Run run(on);
  const RunResult r = execute_checked(run);
  ASSERT_TRUE(r.all_done);
  EXPECT_EQ(run.fabric_as<GseFabric>()->gsos()->ingress_capacity(0), Rate::gbps(400));
  const int64_t capped = peak_spine_downlink(run);
  auto off = load_scenario_text(failed_ingress(false), "gsos.toml");
  fabsim::Run run2(off);
  ASSERT_TRUE(execute_checked(run2).all_done);
  const int64_t uncapped = peak_spine_downlink(run2);
  // Bound: the grant budget lets one quantum per remote source through at once, 7 x 16 KiB
  // plus a frame in flight, whatever the ingress link's rate.
  EXPECT_LE(capped, 7 * 16384 + 4200);
  EXPECT_GT(uncapped, 10 * capped);
  EXPECT_EQ(r.fabric["pfc_in_fabric"].get<uint64_t>(), 0U);
  EXPECT_EQ(r.fabric["faults"]["congestion_drops_frames"].get<uint64_t>(), 0U);
  // 8 x 2 MB through one 400G link granted at 97 %: 16e6 x 8 / 388e9 s = 329.9 us after the
  // start at 20 us; the grants keep that link busy (within 10 %).
  EXPECT_GT(r.end_time, Time::us(349));
  EXPECT_LT(r.end_time, Time::us(385));
}

// A packet stamped for an uplink and waiting behind DGSQ's source gate when this GSP learns
// that the uplink's cable failed moves, with the rest of its open container, to a usable uplink
// instead of going into the dead cable.
TEST(Gsos, AStampedPacketWaitingForAFailedUplinkMovesToAUsableOne) {
  const auto cfg = load_scenario_text(gse_scenario(R"([fabric.gse]
dgsq = true
[faults]
[[faults.events]]
link = "leaf0-spine1"
action = "down"
at = "0s")",
                                                   kLateFlow),
                                      "gsos.toml");
  fabsim::Run run(cfg);
  ASSERT_TRUE(execute_checked(run).all_done);  // leaf 0 knows of the cable from here on
  const auto& topo = run.topology();
  Simulation& sim = run.sim();
  const uint32_t leaf0 = topo.tors[0];
  const auto& up = topo.uplink_ports(leaf0);
  const auto n = static_cast<uint32_t>(up.size());
  auto spine_of = [&](uint16_t port) { return topo.cables[topo.port_cable[leaf0][port]].upper; };
  uint16_t dead = 0;
  for (uint16_t p : up) {
    if (spine_of(p) == topo.top_tier()[1]) dead = p;
  }
  auto& src = *run.fabric_as<GseFabric>()->sources()[0];
  // Host 9 is on leaf 1: its stream opens a container on a usable uplink.
  Packet* first = test::make_packet(sim, 1, 9, 1000, 3, 0, 0);
  const uint16_t live = src.stamp_and_choose(*first, up.data(), n);
  ASSERT_NE(live, dead);
  const uint64_t before = src.repinned();
  // Still usable: it stays where it is, nothing counted.
  EXPECT_EQ(src.repin_stamped(*first, up.data(), n, live), live);
  EXPECT_EQ(src.repinned(), before);
  // Stamped for the dead uplink (as before the notice): it moves, and is counted.
  const uint16_t moved = src.repin_stamped(*first, up.data(), n, dead);
  EXPECT_NE(moved, dead);
  EXPECT_NE(spine_of(moved), topo.top_tier()[1]);
  EXPECT_EQ(src.repinned(), before + 1);
  // The next packet of the same open container (1,000 B of 16 KiB used) follows its stream's
  // uplink, which the move did not touch (it was not the dead one).
  Packet* second = test::make_packet(sim, 1, 9, 1000, 3, 0, 1);
  EXPECT_EQ(src.stamp_and_choose(*second, up.data(), n), live);
  EXPECT_EQ(gse_header(*second).container, gse_header(*first).container);
  sim.pool().release(first);
  sim.pool().release(second);
}

}  // namespace
}  // namespace fabsim
