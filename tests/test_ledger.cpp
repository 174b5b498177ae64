// The conservation ledger (core/ledger.h, issue 14 item 6): the state machine against exact
// counters, the pool walk that finds what is still in flight, the violations it must catch, and
// scenarios whose drops by cause equal the counters of the ports and links that dropped them.
#include <gtest/gtest.h>

#include <memory>  // hooks
#include <string>  // scenarios

#include "conserved.h"
#include "helpers.h"
#include "lb/ecmp.h"
#include "net/network.h"
#include "net/topology.h"
#include "net/trim.h"
#include "scenario/scenario.h"

namespace fabsim {
namespace {
using namespace literals;

Packet* data(Simulation& sim, uint8_t cls, uint32_t payload) {
  Packet* p = test::make_packet(sim, 0, 1, payload + 62, cls, 0);
  p->payload = payload;
  return p;
}

TEST(Ledger, CountsInjectedDeliveredDroppedPerClassOfInjection) {
  Simulation sim(1);
  Ledger& l = sim.ledger();
  Packet* a = data(sim, 2, 1000);
  Packet* b = data(sim, 2, 500);
  Packet* c = data(sim, 5, 4096);
  l.inject(*a);
  l.inject(*b);
  l.inject(*c);
  EXPECT_EQ(a->ledger, Ledger::kInjected | 2);
  l.deliver(*a);
  EXPECT_EQ(a->ledger, Ledger::kInjected | Ledger::kDone | 2);
  sim.pool().release(a);
  sim.drop(b, DropCause::kRandomLoss);
  const LedgerReport r = l.close(sim.pool());
  EXPECT_EQ(r.classes[2].injected, (Tally{2, 1500}));
  EXPECT_EQ(r.classes[2].delivered, (Tally{1, 1000}));
  EXPECT_EQ(r.classes[2].dropped[static_cast<int>(DropCause::kRandomLoss)], (Tally{1, 500}));
  EXPECT_EQ(r.classes[2].in_flight, Tally{});
  EXPECT_EQ(r.classes[5].in_flight, (Tally{1, 4096}));  // c: found by the pool walk
  EXPECT_TRUE(r.balanced()) << r.violation();
  EXPECT_EQ(r.total().injected, (Tally{3, 5596}));
  sim.pool().release(c);
}

TEST(Ledger, TrimmedPayloadAndClassChangeStayInTheClassOfInjection) {
  Simulation sim(1);
  Ledger& l = sim.ledger();
  Packet* p = data(sim, 1, 4096);
  l.inject(*p);
  l.trim(*p);
  trim_to_header(*p);  // now in the control class with no payload
  LedgerReport r = l.close(sim.pool());
  EXPECT_EQ(r.classes[1].trimmed_bytes, 4096U);
  EXPECT_EQ(r.classes[1].in_flight, (Tally{1, 0}));
  EXPECT_EQ(r.classes[kControlClass].in_flight, Tally{});
  EXPECT_TRUE(r.balanced()) << r.violation();
  l.deliver(*p);
  sim.pool().release(p);
  r = l.close(sim.pool());
  EXPECT_EQ(r.classes[1].delivered, (Tally{1, 0}));
  EXPECT_TRUE(r.balanced()) << r.violation();
}

TEST(Ledger, APacketReleasedWithoutADispositionUnbalancesItsClass) {
  Simulation sim(1);
  Packet* p = data(sim, 3, 100);
  sim.ledger().inject(*p);
  sim.pool().release(p);  // lost without a cause
  const LedgerReport r = sim.ledger().close(sim.pool());
  EXPECT_FALSE(r.balanced());
  EXPECT_EQ(r.violation(),
            "class 3: injected 1 packets / 100 B != delivered 0 / 0 + dropped 0 / 0 + trimmed "
            "0 B + in flight 0 / 0");
}

TEST(Ledger, DoubleDeliveryAndDeliveryWithoutInjectionAreCaught) {
  Simulation sim(1);
  Packet* p = data(sim, 0, 100);
  sim.ledger().deliver(*p);  // never injected
  sim.ledger().inject(*p);
  sim.ledger().deliver(*p);
  sim.ledger().deliver(*p);  // twice
  sim.ledger().inject(*p);   // injected twice
  sim.pool().release(p);
  const LedgerReport r = sim.ledger().close(sim.pool());
  EXPECT_EQ(r.double_counted, 3U);
  EXPECT_FALSE(r.balanced());
}

TEST(Ledger, ConsumedButNotReturnedIsALeak) {
  Simulation sim(1);
  Packet* p = data(sim, 0, 100);
  sim.ledger().inject(*p);
  sim.ledger().deliver(*p);
  LedgerReport r = sim.ledger().close(sim.pool());
  EXPECT_EQ(r.consumed_but_live, 1U);
  EXPECT_FALSE(r.balanced());
  sim.pool().release(p);
  r = sim.ledger().close(sim.pool());
  EXPECT_TRUE(r.balanced()) << r.violation();
}

TEST(Ledger, PacketsBuiltButNeverSentAreUnsentNotInFlight) {
  Simulation sim(1);
  Packet* p = data(sim, 0, 100);
  const LedgerReport r = sim.ledger().close(sim.pool());
  EXPECT_EQ(r.unsent, 1U);
  EXPECT_EQ(r.total().in_flight, Tally{});
  EXPECT_TRUE(r.balanced());
  sim.pool().release(p);
}

// Three hosts on one switch: the NIC of host 1 sends to host 0 over a trimming, tiny buffer.
struct Bench {
  explicit Bench(const SwitchConfig& sw) : sim(1), net(sim), sink(sim) {
    SingleSwitchConfig cfg;
    cfg.hosts = 3;
    build_single_switch(net, cfg, sw, 20,
                        [](uint32_t id) { return std::make_unique<EcmpSelector>(id); });
    sink_id = net.endpoints().add(&sink);
  }
  void send(uint8_t cls, uint64_t seq) {
    Packet* p = test::make_packet(sim, 1, 0, 4096 + 62, cls, sink_id, seq);
    p->payload = 4096;
    net.host(1).port().enqueue(p);
  }
  Simulation sim;
  Network net;
  test::RecordingSink sink;
  uint32_t sink_id = 0;
};

SwitchConfig tiny_buffer() {
  SwitchConfig sw;
  sw.ecn.enabled = false;
  sw.pfc.enabled = false;
  sw.buffer.size = Bytes(3 * (4096 + 62));
  sw.buffer.reserve = Bytes(0);
  return sw;
}

TEST(Ledger, BufferDropsAndTrimsThroughASwitchBalance) {
  Bench t(tiny_buffer());
  t.net.sw(0).port(0).apply_pause(1, 65535);  // host 0's downlink holds class 1
  for (uint64_t s = 0; s < 4; ++s) t.send(1, s);
  t.sim.run(20_us);
  LedgerReport r = t.sim.ledger().close(t.sim.pool());
  EXPECT_EQ(r.classes[1].injected, (Tally{4, 4 * 4096}));
  EXPECT_EQ(r.classes[1].dropped[static_cast<int>(DropCause::kBuffer)].packets,
            t.net.sw(0).port(0).counters().buffer_drops);
  EXPECT_EQ(r.classes[1].dropped_total(), (Tally{2, 2 * 4096}));  // 2 frames fit (alpha 1)
  EXPECT_EQ(r.classes[1].in_flight, (Tally{2, 2 * 4096}));        // queued behind the pause
  EXPECT_TRUE(r.balanced()) << r.violation();

  Bench u(tiny_buffer());
  TrimHook::Config tc;
  tc.threshold = Bytes(1 << 20);
  u.net.sw(0).set_admission_hook(0, 1, &u.net.sw(0).adopt_hook(std::make_unique<TrimHook>(tc)));
  u.net.sw(0).port(0).apply_pause(1, 65535);
  for (uint64_t s = 0; s < 4; ++s) u.send(1, s);
  u.sim.run(20_us);
  r = u.sim.ledger().close(u.sim.pool());
  EXPECT_EQ(r.classes[1].trimmed_bytes, 2 * 4096U);
  EXPECT_EQ(r.classes[1].delivered, (Tally{2, 0}));  // the two headers
  EXPECT_EQ(r.classes[1].dropped_total(), Tally{});
  EXPECT_TRUE(r.balanced()) << r.violation();
}

RunResult run_text(const std::string& toml) {
  return run_checked(load_scenario_text(toml, "ledger.toml", {}));
}

// 1 % random loss per link: every lost frame is in the ledger under random_loss, and their
// number is the links' own count (data, ACKs and NACKs alike).
TEST(LedgerScenario, RandomLossIsAccountedPerLink) {
  const RunResult r = run_text(R"(
[topology]
kind = "single_switch"
hosts = 4
[network]
loss_probability = 0.01
[transport]
kind = "roce"
[workload]
kind = "permutation"
bytes = "2MB"
)");
  ASSERT_TRUE(r.all_done);
  const ClassLedger t = r.ledger.total();
  EXPECT_EQ(t.dropped[static_cast<int>(DropCause::kRandomLoss)].packets, r.totals.link_losses);
  EXPECT_GT(r.totals.link_losses, 20U);
  EXPECT_EQ(t.dropped_total().packets, r.totals.link_losses);
  // Every flow's bytes were delivered at least once; losses and go-back-N resends add more.
  EXPECT_GE(r.ledger.classes[3].delivered.bytes, 4U * 2'000'000U);
}

// An incast into a small buffer without PFC: the ledger's buffer drops are the ports' drops.
TEST(LedgerScenario, CongestionDropsAreThePortsDrops) {
  const RunResult r = run_text(R"(
[topology]
kind = "single_switch"
hosts = 9
[network.buffer]
size = "200KiB"
[network.pfc]
enabled = false
[transport]
kind = "roce"
[workload]
kind = "incast"
senders = 8
receiver = 0
bytes = "256KB"
)");
  ASSERT_TRUE(r.all_done);
  const ClassLedger t = r.ledger.total();
  EXPECT_GT(r.totals.drops, 0U);
  EXPECT_EQ(t.dropped[static_cast<int>(DropCause::kBuffer)].packets, r.totals.drops);
}

}  // namespace
}  // namespace fabsim
