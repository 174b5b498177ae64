// The NIC's round robin over its transmit sources (net/host.h): a ring in order of activation,
// as deficit round robin's active list. Scripted sources, exact order of the frames sent.
#include <gtest/gtest.h>

#include <initializer_list>
#include <string>

#include "core/simulation.h"
#include "helpers.h"
#include "net/host.h"
#include "net/link.h"

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
