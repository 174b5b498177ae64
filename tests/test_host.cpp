// The NIC's round robin over its transmit sources (net/host.h): a ring in order of activation,
// where a source that comes back joins before the first member ("ring") or behind every waiting
// source ("fifo", deficit round robin's active list). Scripted sources, exact order of the frames
// sent.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>  // minmax
#include <initializer_list>
#include <string>

#include "conserved.h"
#include "core/simulation.h"
#include "helpers.h"
#include "net/host.h"
#include "net/link.h"
#include "scenario/runner.h"
#include "scenario/scenario.h"

namespace fabsim {
namespace {

// A source with `left` packets of 1,000 B, each tagged with its name in Packet::flow. It has no
// work while `blocked` (a full window) or when nothing is left; `due` delays it (pacing).
struct Source : TxSource {
  Simulation& sim;
  uint32_t name;
  int left;
  bool blocked = false;
  Time due;
  Source(Simulation& s, uint32_t n, int packets) : sim(s), name(n), left(packets) {}
  Time ready_at() const override { return left > 0 && !blocked ? due : Time::max(); }
  uint8_t tclass() const override { return 0; }
  Packet* take(Time /*now*/) override {
    --left;
    Packet* p = sim.pool().acquire();
    p->size = 1000;
    p->flow = name;
    return p;
  }
};

// Records the source of every frame that reaches the far end of the NIC's link.
class Recorder : public Node {
 public:
  explicit Recorder(Simulation& sim) : sim_(sim) {}
  void receive(Packet* p, uint16_t /*port*/) override {
    order += static_cast<char>('a' + p->flow);
    sim_.pool().release(p);
  }
  void on_dequeue(uint16_t /*port*/, Packet& /*p*/) override {}
  Packet* pull(uint16_t /*port*/, uint8_t /*mask*/) override { return nullptr; }
  const std::string& name() const override { return name_; }
  std::string order;

 private:
  Simulation& sim_;
  std::string name_ = "recorder";
};

struct Nic {
  Simulation sim{1};
  Recorder far{sim};
  EndpointTable endpoints;
  Host host{sim, 0, "h0", endpoints};
  Link wire{sim, Link::Config{}, &far, 0, 3};
  Nic() { host.attach(&wire); }
  Time frame() const { return wire.frame_time(1000); }
};

TEST(NicRoundRobin, ServesSourcesInTurnAndDropsOneWhenItsTurnFindsNoWork) {
  Nic n;
  Source a(n.sim, 0, 2);
  Source b(n.sim, 1, 1);
  Source c(n.sim, 2, 3);
  n.host.activate(&a);  // the wire is idle: a's first frame starts at once
  n.host.activate(&b);
  n.host.activate(&c);
  EXPECT_EQ(n.host.active_sources(), 3U);
  n.sim.run(n.frame());  // b's only frame starts: b leaves
  EXPECT_EQ(n.host.active_sources(), 2U);
  n.sim.run();
  EXPECT_EQ(n.far.order, "abcacc");
  EXPECT_EQ(n.host.active_sources(), 0U);
}

// Activates `sources` in order (the first starts at once: the wire is idle), takes all work
// from `x` until the first frame has left, checks how many sources the ring then holds, gives
// `x` work again (activate) and runs to the end. Returns the sources of the frames, in order.
std::string block_for_one_frame(Nic& n, std::initializer_list<Source*> sources, Source& x,
                                size_t active_after) {
  for (Source* s : sources) n.host.activate(s);
  x.blocked = true;
  n.sim.run(n.frame());
  EXPECT_TRUE(n.far.order.empty());  // the first frame arrives a link delay later
  EXPECT_EQ(n.host.active_sources(), active_after);
  x.blocked = false;
  n.host.activate(&x);
  n.sim.run();
  return n.far.order;
}

// A source that runs out of work (a window fills) stays in the ring until its turn; if it gets
// work again before then it keeps its place (it is not moved behind the others).
TEST(NicRoundRobin, ASourceThatGetsWorkAgainBeforeItsTurnKeepsItsPlace) {
  Nic n;
  Source a(n.sim, 0, 3);
  Source b(n.sim, 1, 1);
  Source c(n.sim, 2, 3);
  Source d(n.sim, 3, 3);
  // After a's first frame b's turn comes: b sends its only frame and leaves, and c, blocked,
  // is not looked at. c then keeps its place behind b, ahead of d.
  EXPECT_EQ(block_for_one_frame(n, {&a, &b, &c, &d}, c, 3), "abcdacdacd");
}

// A source whose turn finds it without work leaves the ring; when it gets work again it joins
// at the tail, behind the sources that stayed.
TEST(NicRoundRobin, ASourceThatLeftJoinsAgainAtTheTail) {
  Nic n;
  Source a(n.sim, 0, 3);
  Source b(n.sim, 1, 3);
  Source c(n.sim, 2, 3);
  // b's turn finds it blocked: it leaves and c is served. It joins again at the tail: the ring
  // is a, c, b, and the turn after c is b's.
  EXPECT_EQ(block_for_one_frame(n, {&a, &b, &c}, b, 2), "acbacbacb");
}

// Where a source that becomes active joins (network.nic_arbiter). a starts on an idle wire;
// b arrives during a's frame. "ring" puts b before the ring's first member, a, so b is served
// next. "fifo" puts it behind every waiting source, and a, served and still backlogged, went
// to the back when its frame started, as in deficit round robin's active list and uet-htsim's
// NIC: a sends again first, then the two alternate.
TEST(NicRoundRobin, ANewcomerJoinsBeforeTheFirstOrBehindTheSourceBeingServed) {
  for (const bool fifo : {false, true}) {
    Nic n;
    n.host.set_fifo(fifo);
    Source a(n.sim, 0, 3);
    Source b(n.sim, 1, 3);
    n.host.activate(&a);  // the wire is idle: a's first frame starts at once
    n.host.activate(&b);
    n.sim.run();
    EXPECT_EQ(n.far.order, fifo ? "aababb" : "ababab") << fifo;
  }
}

// With "fifo", sources that become active while others wait are served in their order of
// arrival, behind those already waiting. a's second frame starts at the end of its first (b
// came behind a), and a leaves; then d and c arrive while b waits: b, d, c, and b again.
// With "ring" the second frame is b's; d and c join before the ring's first member, a, and
// are served ahead of it although it was waiting: d, c, a, b.
TEST(NicRoundRobin, NewcomersAreServedInTheirOrderOfArrival) {
  for (const bool fifo : {false, true}) {
    Nic n;
    n.host.set_fifo(fifo);
    Source a(n.sim, 0, 2);
    Source b(n.sim, 1, 2);
    Source c(n.sim, 2, 1);
    Source d(n.sim, 3, 1);
    n.host.activate(&a);  // the wire is idle: a's first frame starts at once
    n.host.activate(&b);
    n.sim.run(n.frame());  // the second frame starts: a's with "fifo", b's with "ring"
    n.host.activate(&d);
    n.host.activate(&c);
    n.sim.run();
    EXPECT_EQ(n.far.order, fifo ? "aabdcb" : "abdcab") << fifo;
  }
}

// A scenario: one NIC sends 400,000 B to each of four hosts at once, on an otherwise idle
// switch. Whichever rule, the NIC takes the four flows in turn a frame each, so they end close
// together, the last when all 1.6 MB (98 frames each, with their headers) have crossed the
// NIC's link; and a bad value names the key.
TEST(NicRoundRobin, ScenarioFlowsOfOneNicEndWithinARoundOfEachOtherUnderEitherRule) {
  const std::string base = R"(
[simulation]
stop_time = "10ms"
[topology]
kind = "single_switch"
hosts = 5
nic_rate = "100Gbps"
host_link_delay = "1us"
[network]
preamble_ifg = false
nic_arbiter = "ARBITER"
[network.pfc]
enabled = false
[transport]
kind = "roce"
cc = "none"
[workload]
kind = "flows"
)";
  std::string flows;
  for (int d = 1; d <= 4; ++d) {
    flows += fmt::format("[[workload.flows]]\nsrc = 0\ndst = {}\nbytes = 400000\n", d);
  }
  for (const std::string arbiter : {"ring", "fifo"}) {
    std::string text = base + flows;
    text.replace(text.find("ARBITER"), 7, arbiter);
    const RunResult r = run_checked(load_scenario_text(text, "nic.toml"));
    ASSERT_EQ(r.flows.size(), 4U);
    std::vector<Time> ends;
    for (const FlowRecord& f : r.flows) {
      ASSERT_TRUE(f.done) << arbiter;
      ends.push_back(f.end);
    }
    const auto [first, last] = std::minmax_element(ends.begin(), ends.end());
    const Time frame =
        serialization_delay(4096 + 64, Rate::gbps(100));  // at most; the last is shorter
    // Under "ring" the last frames of the four follow one another: within three frames. Under
    // "fifo" the first flow went to the back as its first frame started, ahead of the others,
    // so it sends twice before they begin and stays a frame ahead in every round: it ends
    // about a round (four frames) before the next, and the spread is more than three frames.
    if (arbiter == "fifo") {
      EXPECT_GT(*last - *first, frame * 3);
      EXPECT_LE(*last - *first, frame * 7);
      EXPECT_EQ(first - ends.begin(), 0);  // the flow that started first
    } else {
      EXPECT_LE(*last - *first, frame * 3);
    }
    EXPECT_GE(*last, serialization_delay(4 * 400000, Rate::gbps(100))) << arbiter;
    EXPECT_LE(*last, serialization_delay(4 * 400000 + 4 * 98 * 100, Rate::gbps(100)) + Time::us(4))
        << arbiter;
  }
  std::string bad = base + flows;
  bad.replace(bad.find("ARBITER"), 7, "lifo");
  try {
    (void)load_scenario_text(bad, "nic.toml");
    FAIL() << "accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("nic.toml:", 0), 0U) << e.what();
    EXPECT_NE(std::string(e.what()).find("key 'network.nic_arbiter': expected one of"),
              std::string::npos)
        << e.what();
  }
}

// A source not yet due (pacing) is passed over and keeps its place; the NIC wakes up when it
// is due.
TEST(NicRoundRobin, APacedSourceIsPassedOverAndServedWhenDue) {
  Nic n;
  Source a(n.sim, 0, 1);
  Source b(n.sim, 1, 2);
  a.due = Time::us(10);
  n.host.activate(&a);  // not due: the NIC waits
  n.host.activate(&b);  // b is served at once
  n.sim.run(Time::us(5));
  EXPECT_EQ(n.far.order, "bb");
  EXPECT_EQ(n.host.active_sources(), 1U);  // b left with its last frame; a is waiting
  n.sim.run();
  EXPECT_EQ(n.far.order, "bba");
  EXPECT_EQ(n.host.active_sources(), 0U);
}

}  // namespace
}  // namespace fabsim
