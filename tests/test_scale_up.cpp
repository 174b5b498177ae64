// The scale-up fabric (workload/scale_up.h): max-min fair shares of each GPU's NVLink ports,
// exact to the picosecond after each change, and the graph runner's use of it (an AllToAll
// inside a server is bounded by each GPU's egress, not by one transfer's time); communicators
// (GraphNode::comm) that run their collectives in turn.
#include <gtest/gtest.h>

#include <memory>  // shared graph
#include <vector>  // cookies

#include "core/simulation.h"
#include "transport/flow.h"
#include "transport/transport.h"
#include "workload/graph.h"
#include "workload/scale_up.h"

namespace fabsim {
namespace {

// 800 Gb/s = 0.8 bits per picosecond: 100,000 B take 1 us.
const Rate kRate = Rate::gbps(800);

TEST(ScaleUp, ALoneTransferTakesItsSerializationTime) {
  ScaleUpFabric f;
  f.add(0, 0, 1, 1'000'000, kRate, 7, Time());
  EXPECT_EQ(f.next_drain(0), serialization_delay(1'000'000, kRate));
  EXPECT_EQ(f.next_drain(0), Time::us(10));
  EXPECT_EQ(f.next_drain(1), Time::max());  // another server has nothing
  std::vector<uint64_t> done;
  f.drain(0, Time::us(9), &done);  // early: nothing drains
  EXPECT_TRUE(done.empty());
  EXPECT_EQ(f.next_drain(0), Time::us(10));
  f.drain(0, Time::us(10), &done);
  EXPECT_EQ(done, std::vector<uint64_t>{7});
  EXPECT_TRUE(f.transfers(0).empty());
  EXPECT_EQ(f.next_drain(0), Time::max());
}

// GPU 0 sends to 1, 2 and 3; GPU 4 sends to 1. GPU 0's egress is the tightest port: C/3 each.
// GPU 1's ingress then has 2C/3 left for GPU 4 (max-min, not C/2 for everyone at GPU 1).
TEST(ScaleUp, SharesAreMaxMinFairOverEgressAndIngress) {
  ScaleUpFabric f;
  for (uint32_t d : {1U, 2U, 3U}) f.add(0, 0, d, 300'000, kRate, d, Time());
  f.add(0, 4, 1, 300'000, kRate, 4, Time());
  const auto& t = f.transfers(0);
  ASSERT_EQ(t.size(), 4U);
  for (int i = 0; i < 3; ++i) EXPECT_DOUBLE_EQ(t[i].rate, 0.8 / 3);
  EXPECT_DOUBLE_EQ(t[3].rate, 1.6 / 3);
  EXPECT_EQ(t[3].finish, Time::ns(4500));
  EXPECT_EQ(f.next_drain(0), Time::ns(4500));
  std::vector<uint64_t> done;
  f.drain(0, Time::ns(4500), &done);
  EXPECT_EQ(done, std::vector<uint64_t>{4});
  // GPU 0's egress still binds: its three transfers keep C/3 and end at 9 us.
  for (const auto& x : f.transfers(0)) EXPECT_EQ(x.finish, Time::us(9));
}

// Two transfers out of one GPU: C/2 each until the short one drains, then the long one gets C;
// the egress never idles, so the last bit leaves at (100 + 200 kB) / C = 3 us.
TEST(ScaleUp, ARemovalGivesTheShareBack) {
  ScaleUpFabric f;
  f.add(0, 0, 1, 100'000, kRate, 1, Time());
  f.add(0, 0, 2, 200'000, kRate, 2, Time());
  EXPECT_EQ(f.next_drain(0), Time::us(2));
  std::vector<uint64_t> done;
  f.drain(0, Time::us(2), &done);
  EXPECT_EQ(done, std::vector<uint64_t>{1});
  EXPECT_DOUBLE_EQ(f.transfers(0).at(0).rate, 0.8);
  EXPECT_EQ(f.next_drain(0), Time::us(3));
  f.drain(0, Time::us(3), &done);
  EXPECT_EQ(done, (std::vector<uint64_t>{1, 2}));
}

// A transfer that joins at 1 us halves the first one's share at GPU 1's ingress: the first has
// 100 kB left at C/2, the second 100 kB at C/2, and both drain at 3 us, reported in the order
// they were added.
TEST(ScaleUp, AnArrivalTakesItsShareFromThen) {
  ScaleUpFabric f;
  f.add(0, 0, 1, 200'000, kRate, 10, Time());
  EXPECT_EQ(f.next_drain(0), Time::us(2));
  f.add(0, 2, 1, 100'000, kRate, 20, Time::us(1));
  for (const auto& x : f.transfers(0)) {
    EXPECT_DOUBLE_EQ(x.rate, 0.4);
    EXPECT_EQ(x.finish, Time::us(3));
  }
  std::vector<uint64_t> done;
  f.drain(0, Time::us(3), &done);
  EXPECT_EQ(done, (std::vector<uint64_t>{10, 20}));
}

// A ring with two channels: every GPU sends two transfers to its successor and receives two, so
// each gets C/2 (the earlier model's bytes x channels / rate, now from the shares). Another
// server's transfers share nothing with these.
TEST(ScaleUp, ARingsChannelsSplitEachPortAndServersAreIndependent) {
  ScaleUpFabric f;
  for (uint32_t ch = 0; ch < 2; ++ch) {
    for (uint32_t g = 0; g < 4; ++g) f.add(0, g, (g + 1) % 4, 100'000, kRate, g, Time());
  }
  f.add(1, 8, 9, 100'000, kRate, 99, Time());
  for (const auto& x : f.transfers(0)) EXPECT_DOUBLE_EQ(x.rate, 0.4);
  EXPECT_EQ(f.next_drain(0), Time::us(2));
  EXPECT_EQ(f.next_drain(1), Time::us(1));
}

// A transport that must not be asked for anything: every transfer below stays in the server.
class NoNetwork : public Transport {
 public:
  void start(uint32_t /*id*/) override { ++starts; }
  int starts = 0;
};

// Runs `iterations` of `graph` on 4 GPUs of one server; returns each iteration's time.
std::vector<Time> iterations_in_one_server(const TaskGraph& graph, Time latency, int iterations) {
  Simulation sim(1);
  FlowTable flows;
  NoNetwork net;
  GraphJob j;
  j.name = "a2a";
  j.gpus = {0, 1, 2, 3};
  j.server = {0, 0, 0, 0};
  j.scale_up_rate = kRate;
  j.scale_up_latency = latency;
  j.graph = std::make_shared<TaskGraph>(graph);
  j.iterations = iterations;
  GraphRunner runner(sim, flows, net, {j});
  flows.set_observer(&runner);
  runner.start();
  sim.run(Time::ms(1));
  EXPECT_TRUE(runner.all_done());
  EXPECT_EQ(net.starts, 0);
  EXPECT_EQ(runner.stats().at(0).network_transfers, 0U);
  return runner.results().at(0).iteration_times;
}

Time run_in_one_server(const TaskGraph& graph, Time latency) {
  return iterations_in_one_server(graph, latency, 1).at(0);
}

GraphNode all_to_all(int64_t bytes) {
  GraphNode n;
  n.kind = GraphNode::Kind::kCollective;
  n.collective = Collective::kAllToAll;
  n.group = {0, 1, 2, 3};
  n.bytes = bytes;
  return n;
}

// An AllToAll of S = 1.2 MB over 4 GPUs: each GPU sends S/4 to each of 3 peers at once through
// its one egress, so the last bit leaves at 3 x 300 kB / C = 9 us, and arrives 2 us later. The
// former model gave every peer the whole rate (3 us + 2 us).
TEST(ScaleUp, AnAllToAllInsideAServerIsBoundByEachGpusEgress) {
  TaskGraph g;
  g.add(all_to_all(1'200'000));
  EXPECT_EQ(run_in_one_server(g, Time::us(2)), Time::us(11));
}

// Two AllToAlls with no dependency between them overlap and share the same ports: 18 us + 2 us,
// as one AllToAll of twice the bytes.
TEST(ScaleUp, OverlappingCollectivesShareTheScaleUpPorts) {
  TaskGraph g;
  g.add(all_to_all(1'200'000));
  g.add(all_to_all(1'200'000));
  EXPECT_EQ(run_in_one_server(g, Time::us(2)), Time::us(20));
  TaskGraph one;
  one.add(all_to_all(2'400'000));
  EXPECT_EQ(run_in_one_server(one, Time::us(2)), Time::us(20));
}

GraphNode send(uint32_t from, uint32_t to, int64_t bytes, std::vector<uint32_t> deps = {}) {
  GraphNode n;
  n.kind = GraphNode::Kind::kCollective;
  n.collective = Collective::kSendRecv;
  n.group = {from, to};
  n.bytes = bytes;
  n.deps = std::move(deps);
  return n;
}

// A transfer that arrives later moves the server's next drain earlier, and its end moves it
// back later: GPU 0 sends 400 kB to GPU 1 (alone: drained at 4 us). At 1 us (after a compute
// on rank 2) GPU 2 sends 100 kB to GPU 1: GPU 1's ingress gives each C/2, so the small one
// drains at 3 us (earlier than 4 us) and the first, with 200 kB left, at 5 us (later). Each
// arrives 2 us after: the iteration ends at 7 us, and the stale drain event armed for 4 us does
// nothing.
TEST(ScaleUp, ALaterArrivalMovesTheDrainEarlierAndItsEndMovesItBack) {
  TaskGraph g;
  g.add(send(0, 1, 400'000));
  GraphNode c;
  c.kind = GraphNode::Kind::kCompute;
  c.rank = 2;
  c.duration = Time::us(1);
  const uint32_t compute = g.add(c);
  g.add(send(2, 1, 100'000, {compute}));
  EXPECT_EQ(run_in_one_server(g, Time::us(2)), Time::us(7));
}

// Collectives on one communicator run in turn, in the order they become ready (one NCCL
// stream): the second AllToAll starts when the first has arrived (11 us) and ends at 22 us,
// where two on different communicators share the ports and both end at 20 us.
TEST(GraphRunner, CollectivesOfOneCommunicatorRunInTurn) {
  TaskGraph g;
  GraphNode a = all_to_all(1'200'000);
  a.comm = 1;
  g.add(a);
  g.add(a);
  EXPECT_EQ(run_in_one_server(g, Time::us(2)), Time::us(22));
  // The communicator's queue starts empty again every iteration.
  EXPECT_EQ(iterations_in_one_server(g, Time::us(2), 3),
            (std::vector<Time>{Time::us(22), Time::us(22), Time::us(22)}));
  TaskGraph two_comms;
  two_comms.add(a);
  a.comm = 2;
  two_comms.add(a);
  EXPECT_EQ(run_in_one_server(two_comms, Time::us(2)), Time::us(20));
}

}  // namespace
}  // namespace fabsim
