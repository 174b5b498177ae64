// The ideal FCT (net/ideal_fct.h) against hand-computed values on a single switch and a 2-tier
// leaf-spine, and against a lone flow simulated on the empty network.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "conserved.h"
#include "helpers.h"
#include "net/ideal_fct.h"
#include "scenario/runner.h"
#include "scenario/scenario.h"

namespace fabsim {
namespace {

// 100G hosts with 1 us links; 1000-byte payloads with a 48-byte header (HPCC ns-3's sizes).
std::string single_switch(const std::string& transport, int64_t bytes) {
  return fmt::format(R"(
[topology]
kind = "single_switch"
hosts = 4
nic_rate = "100Gbps"
host_link_delay = "1us"
[transport]
kind = "{}"
payload = 1000
header_bytes = 48
[workload]
kind = "flows"
[[workload.flows]]
src = 0
dst = 3
bytes = {}
)",
                     transport, bytes);
}

// Two leaves of two hosts (100G, 1 us) under `spines` spines (400G, 500 ns).
std::string leaf_spine(const std::string& transport, int64_t bytes, int spines = 1) {
  return fmt::format(R"(
[topology]
kind = "leaf_spine"
servers = 4
gpus_per_server = 1
servers_per_leaf = 2
spines = {}
nic_rate = "100Gbps"
uplink_rate = "400Gbps"
host_link_delay = "1us"
fabric_link_delay = "500ns"
[transport]
kind = "{}"
payload = 1000
header_bytes = 48
[workload]
kind = "flows"
[[workload.flows]]
src = 0
dst = 3
bytes = {}
)",
                     spines, transport, bytes);
}

constexpr FrameShape kShape{1000, 48, 64};

// Serialization at 100G of the wire bytes (frame + 20): 1068 B (1048-byte frame) = 85,440 ps,
// 568 B (548) = 45,440 ps, 84 B (a 49-byte frame padded to 64) = 6,720 ps; at 400G a quarter.
constexpr int64_t kFull100 = 85'440;
constexpr int64_t kHalf100 = 45'440;
constexpr int64_t kMin100 = 6'720;
constexpr int64_t kFull400 = 21'360;

TEST(IdealFct, SingleSwitchByHand) {
  fabsim::Run run(load_scenario_text(single_switch("datagram", 1), "ss.toml"));
  const auto path = shortest_path(run.network(), 0, 3);
  ASSERT_EQ(path.size(), 2U);  // host -> switch -> host
  // One byte: one 64-byte frame at each hop, plus 2 x 1 us.
  EXPECT_EQ(ideal_fct(path, 1, kShape), Time::ps(2'000'000 + 2 * kMin100));
  // 10 full frames through the first hop, the last one again through the second.
  EXPECT_EQ(ideal_fct(path, 10'000, kShape), Time::ps(2'000'000 + 11 * kFull100));
  // 1000 + 1000 + 500: the short last frame at the bottleneck (the first of equal hops), a full
  // frame at the other hop.
  EXPECT_EQ(ideal_fct(path, 2'500, kShape),
            Time::ps(2'000'000 + 2 * kFull100 + kHalf100 + kFull100));
  EXPECT_TRUE(shortest_path(run.network(), 2, 2).empty());
  EXPECT_EQ(ideal_fct({}, 1000, kShape), Time());
}

// The ideal is the healthy network's: a `degrade` fault (Link::set_rate) slows the link from
// then on, but flows that finished before it, or the report at the end of the run, keep the
// rate the link was built with. Before 2026-11-29 the ideal read the rate at the end of the run.
TEST(IdealFct, ADegradedLinkKeepsTheHealthyIdeal) {
  fabsim::Run run(load_scenario_text(single_switch("datagram", 1), "ss.toml"));
  const auto path = shortest_path(run.network(), 0, 3);
  ASSERT_EQ(path.size(), 2U);
  Link* first = nullptr;
  for (const auto& l : run.network().links()) {
    if (l.get() == path[0]) first = l.get();
  }
  ASSERT_NE(first, nullptr);
  first->set_rate(Rate::gbps(25));
  EXPECT_EQ(first->config().rate, Rate::gbps(25));
  EXPECT_EQ(first->built_rate(), Rate::gbps(100));
  EXPECT_EQ(first->frame_time(1048), Time::ps(4 * kFull100));  // the traffic sees 25G
  EXPECT_EQ(ideal_fct(path, 10'000, kShape), Time::ps(2'000'000 + 11 * kFull100));
  first->set_rate(Rate::gbps(50));  // a second change: still the rate it was built with
  EXPECT_EQ(first->built_rate(), Rate::gbps(100));
  EXPECT_EQ(ideal_fct(path, 10'000, kShape), Time::ps(2'000'000 + 11 * kFull100));
}

TEST(IdealFct, LeafSpineByHand) {
  fabsim::Run run(load_scenario_text(leaf_spine("datagram", 1, 2), "ls.toml"));
  PathFinder paths(run.network());
  EXPECT_EQ(paths.path(0, 1).size(), 2U);  // same leaf
  const auto path = paths.path(0, 3);      // leaf0 -> spine -> leaf1
  ASSERT_EQ(path.size(), 4U);
  EXPECT_EQ(path[0]->config().rate, Rate::gbps(100));
  EXPECT_EQ(path[1]->config().rate, Rate::gbps(400));
  // Propagation 1 + 0.5 + 0.5 + 1 us; the NIC's hop is the bottleneck (100G, the first of two);
  // one full frame at each other hop: 400G, 400G, 100G.
  const int64_t others = 2 * kFull400 + kFull100;
  EXPECT_EQ(ideal_fct(path, 10'000, kShape), Time::ps(3'000'000 + 10 * kFull100 + others));
  EXPECT_EQ(ideal_fct(path, 2'500, kShape), Time::ps(3'000'000 + 2 * kFull100 + kHalf100 + others));
  EXPECT_EQ(ideal_fct(path, 1, kShape), Time::ps(3'000'000 + 2 * kMin100 + 2 * kMin100 / 4));
}

// Of the fewest-hop paths, the ideal takes the fastest: with topology.spine_link_delays the
// spine of the first port (20 us links) loses to the second (1 us), either way. Before, the
// first found was kept, and a flow that ECMP put over the slow spine had a slowdown of 1.
TEST(IdealFct, TheFastestOfTheFewestHopPathsIsTheIdeal) {
  const auto cfg = load_scenario_text(R"(
[topology]
kind = "leaf_spine"
servers = 2
gpus_per_server = 1
servers_per_leaf = 1
spines = 2
spine_link_delays = ["20us", "1us"]
[transport]
kind = "datagram"
)",
                                      "slow.toml");
  fabsim::Run run(cfg);
  PathFinder paths(run.network(), 4096 + 62);
  for (const auto& [src, dst] : {std::pair{0U, 1U}, std::pair{1U, 0U}}) {
    const auto path = paths.path(src, dst);
    ASSERT_EQ(path.size(), 4U);
    Time delay;
    for (const Link* l : path) delay += l->config().delay;
    EXPECT_EQ(delay, Time::us(4)) << src;  // host links 1 us, the fast spine's 1 us
    const auto back = paths.back(src, dst);
    ASSERT_EQ(back.size(), 4U);
    EXPECT_EQ(back[1]->config().delay, Time::us(1));
  }
}

// The way back crosses the same nodes the other way; a control frame pays every hop's
// propagation and its own serialization at each.
TEST(IdealFct, ControlLegOnTheWayBackByHand) {
  fabsim::Run run(load_scenario_text(leaf_spine("datagram", 1, 2), "ls.toml"));
  PathFinder paths(run.network());
  const auto there = paths.path(0, 3);
  const auto back = paths.back(0, 3);
  ASSERT_EQ(back.size(), 4U);
  for (size_t h = 0; h < back.size(); ++h) {
    // hop h back ends where hop (3 - h) there began
    const Node* start =
        h == 3 ? static_cast<const Node*>(&run.network().host(0)) : there[2 - h]->dst();
    EXPECT_EQ(back[h]->dst(), start) << h;
    EXPECT_EQ(back[h]->config().rate, there[3 - h]->config().rate) << h;
  }
  // 1 + 0.5 + 0.5 + 1 us, and a 64 B frame (84 B with framing) at 100, 400, 400 and 100G.
  EXPECT_EQ(control_leg(back, 64), Time::ps(3'000'000 + 2 * kMin100 + 2 * kMin100 / 4));
  EXPECT_EQ(control_leg(back, 10), control_leg(back, 64));  // padded to the minimum frame
  EXPECT_TRUE(paths.back(1, 1).empty());
  EXPECT_EQ(control_leg({}, 64), Time());
}

// A lone flow on the empty network takes exactly its ideal FCT when the formula is exact: one
// rate (single switch, any size), or every frame full (leaf-spine, a multiple of the payload).
// A write and a UET message that completes on its ACK add the ACK's way back, a read its
// request's way out first.
TEST(IdealFct, LoneFlowTakesTheIdeal) {
  struct Case {
    std::string toml;
    std::vector<std::string> sets;
  };
  // A 1-byte flow's frame is padded to Ethernet's 64 B minimum by every transport and by the
  // ideal (a datagram went out unpadded, faster than its ideal, until 2026-11-29).
  const Case cases[] = {{single_switch("datagram", 2'500), {}},
                        {single_switch("datagram", 1'000'000), {}},
                        {single_switch("datagram", 1), {}},
                        {single_switch("roce", 1), {}},
                        {leaf_spine("datagram", 1), {}},
                        {single_switch("roce", 2'500), {}},
                        {single_switch("roce", 2'500), {"transport.op=write"}},
                        {single_switch("roce", 2'500), {"transport.op=read"}},
                        {single_switch("uet", 2'500), {"transport.uet.completion=acked"}},
                        {leaf_spine("datagram", 100'000), {}},
                        {leaf_spine("roce", 100'000), {}},
                        {leaf_spine("roce", 100'000), {"transport.op=write"}},
                        {leaf_spine("roce", 100'000), {"transport.op=read"}},
                        {leaf_spine("uet", 100'000), {}},
                        {leaf_spine("uet", 100'000), {"transport.uet.completion=acked"}}};
  for (const auto& c : cases) {
    std::vector<std::string> sets = c.sets;
    sets.emplace_back("output.slowdown=true");
    ScenarioConfig cfg = load_scenario_text(c.toml, "lone.toml", sets);
    const RunResult r = run_checked(cfg);
    ASSERT_TRUE(r.all_done);
    ASSERT_EQ(r.ideal_fct.size(), 1U);
    EXPECT_EQ(r.flows[0].fct(), r.ideal_fct[0]) << c.toml << (c.sets.empty() ? "" : c.sets[0]);
  }
}

// With a short last frame on a path of mixed rates, the formula is above the empty-network time
// by less than one full frame per hop after the bottleneck (ideal_fct.h).
TEST(IdealFct, MixedRatesShortLastFrameStaysWithinOneFramePerHop) {
  ScenarioConfig cfg =
      load_scenario_text(leaf_spine("datagram", 100'064), "lone.toml", {"output.slowdown=true"});
  const RunResult r = run_checked(cfg);
  ASSERT_TRUE(r.all_done);
  const Time fct = r.flows[0].fct();
  const Time ideal = r.ideal_fct[0];
  EXPECT_LE(fct, ideal);
  EXPECT_LT(ideal - fct, Time::ps(3 * kFull100));
}

}  // namespace
}  // namespace fabsim
