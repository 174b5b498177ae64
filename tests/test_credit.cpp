// Receiver credit for UET (issue 18): the sender's credit, the receiver's pacer lists and seed
// 001's AIMD, each against exact state; then on a fabric: one sender paced to the link, a 31:1
// incast under credit alone, the fix lowering wasted credit, and the credit ledger balanced.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cmath>    // pow
#include <string>   // scenarios
#include <tuple>    // cases
#include <utility>  // pair

#include "conserved.h"
#include "helpers.h"
#include "net/round_trip.h"
#include "scenario/runner.h"
#include "scenario/scenario.h"
#include "transport/uet/credit.h"
#include "transport/uet/uet.h"

namespace fabsim {
namespace {

CreditConfig source_config() {
  CreditConfig c;
  c.quantum = 256;
  c.max_credit = 175'000;
  c.spec_window = 100'000;
  c.mtu = 4'188;
  c.fix = true;
  c.fix_cap = 116'000;
  return c;
}

// ---- the sender's credit -----------------------------------------------------------------------

TEST(CreditSource, SpeculatesThenLivesOnGrants) {
  CreditSource c(source_config());
  c.open();
  EXPECT_TRUE(c.speculating());
  EXPECT_EQ(c.credit(), 100'000);
  c.spend(4'188);
  EXPECT_EQ(c.credit(), 95'812);
  // The first ACK (or NACK, or grant) ends speculation: what is left is dropped.
  c.end_speculation();
  EXPECT_FALSE(c.speculating());
  EXPECT_EQ(c.credit(), 0);
  EXPECT_EQ(c.ledger().zeroed_spec, 95'812);
  // A grant is the difference of cumulative pull numbers, in quanta.
  EXPECT_EQ(c.grant(64), 64 * 256);
  EXPECT_EQ(c.credit(), 16'384);
  EXPECT_EQ(c.grant(64), 0);  // repeated
  EXPECT_EQ(c.grant(10), 0);  // old (reordered)
  EXPECT_EQ(c.grant(128), 16'384);
  // It may send while credit > 0, so it goes negative by less than one frame.
  for (int i = 0; i < 8; ++i) c.spend(4'188);
  EXPECT_EQ(c.credit(), 32'768 - 8 * 4'188);
  EXPECT_FALSE(c.can_send());
  const CreditLedger l = c.ledger();
  EXPECT_EQ(l.spec + l.received, l.used + l.clipped + l.zeroed_spec + l.expired + l.remaining);
}

TEST(CreditSource, ClipsAtTheCeilingAndExpiresWhatIsLeft) {
  CreditSource c(source_config());
  c.grant(600);  // 153,600 B
  c.grant(800);  // +51,200: 29,800 above the 175,000 ceiling
  EXPECT_EQ(c.credit(), 175'000);
  EXPECT_EQ(c.ledger().clipped, 204'800 - 175'000);
  c.spend(75'000);
  c.expire();
  EXPECT_EQ(c.credit(), 0);
  EXPECT_EQ(c.ledger().expired, 100'000);
  EXPECT_EQ(c.ledger().wasted(), 29'800 + 100'000);
}

// REFERENCE.md §4.6: pt = min(min(backlog + rtx, cwnd + MTU), maxwnd) - credit; at least one
// MTU while speculating with data; divided by the NIC's sending PDCs; plus the pull number;
// rounded up to quanta.
TEST(CreditSource, PullTargetFollowsTheFormula) {
  CreditConfig cfg = source_config();
  CreditSource c(cfg);
  c.grant(100);     // pull 100, credit 25,600
  c.spend(25'600);  // credit 0
  EXPECT_EQ(c.pull_target(50'000, 0, -1, 1), 100U + (50'000 + 255) / 256);
  EXPECT_EQ(c.pull_target(50'000, 8'376, -1, 1), 100U + (58'376 + 255) / 256);
  EXPECT_EQ(c.pull_target(1'000'000, 0, -1, 1), 100U + (175'000 + 255) / 256);     // maxwnd
  EXPECT_EQ(c.pull_target(1'000'000, 0, 20'000, 1), 100U + (24'188 + 255) / 256);  // cwnd+MTU
  EXPECT_EQ(c.pull_target(50'000, 0, -1, 4), 100U + (12'500 + 255) / 256);         // divided
  c.grant(300);  // credit 51,200 above a 50,000 demand: nothing more asked
  EXPECT_EQ(c.pull_target(50'000, 0, -1, 1), 300U);
  CreditSource s(cfg);
  s.open();  // speculating with 100,000 of credit and 2,000 B to send: asks one MTU
  EXPECT_EQ(s.pull_target(2'000, 0, -1, 1), (4'188U + 255) / 256);
}

// Seed 001: the flag goes up exactly when the credit passes the cap and down when it falls to
// it; never while speculating.
TEST(CreditSource, FlagExactlyAboveTheCap) {
  CreditSource c(source_config());
  c.open();
  c.grant(1000);  // far above the cap, but speculating
  EXPECT_FALSE(c.flagged());
  c.end_speculation();  // drops everything
  c.grant(1000 + 453);  // 115,968 B: below the cap of 116,000
  EXPECT_FALSE(c.flagged());
  c.grant(1000 + 454);  // 116,224 B: passes it
  EXPECT_TRUE(c.flagged());
  c.spend(224);  // exactly the cap: not above
  EXPECT_FALSE(c.flagged());
  c.grant(1000 + 455);
  EXPECT_TRUE(c.flagged());
  CreditConfig off = source_config();
  off.fix = false;
  CreditSource n(off);
  n.grant(1000);
  EXPECT_FALSE(n.flagged());  // no flag without the fix
}

// ---- seed 001's AIMD -------------------------------------------------------------------------

TEST(CreditWasteFix, AslCoefficientHalvesPerFlaggedPacketAndIsRestored) {
  CreditFixConfig cfg;  // c0 4, beta 0.5, k 4, m 1
  CreditWasteFix f(cfg);
  EXPECT_DOUBLE_EQ(f.asl_coefficient(), 4.0);
  for (int n = 1; n <= 6; ++n) {
    f.on_data(true);
    EXPECT_EQ(f.n(), n);
    EXPECT_DOUBLE_EQ(f.asl_coefficient(), 4.0 * std::pow(0.5, n));
  }
  f.on_data(false);
  EXPECT_DOUBLE_EQ(f.asl_coefficient(), 4.0);
  // A new run of flags counts from 1 again.
  f.on_data(true);
  EXPECT_EQ(f.n(), 1);
  EXPECT_DOUBLE_EQ(f.asl_coefficient(), 2.0);
}

TEST(CreditWasteFix, IslCoefficientFloorsThenRisesByMUpToK) {
  CreditFixConfig cfg;
  cfg.k = 8;
  cfg.m = 2;
  CreditWasteFix f(cfg);
  EXPECT_DOUBLE_EQ(f.isl_coefficient_tick(), 8.0);
  f.on_data(true);
  f.on_data(true);
  f.on_data(true);  // n = 3: floor(8 / 8) = 1
  EXPECT_DOUBLE_EQ(f.isl_coefficient_tick(), 1.0);
  EXPECT_DOUBLE_EQ(f.isl_coefficient_tick(), 1.0);  // stays while flagged
  f.on_data(false);
  EXPECT_DOUBLE_EQ(f.isl_coefficient_tick(), 3.0);  // floor + m
  EXPECT_DOUBLE_EQ(f.isl_coefficient_tick(), 5.0);
  EXPECT_DOUBLE_EQ(f.isl_coefficient_tick(), 7.0);
  EXPECT_DOUBLE_EQ(f.isl_coefficient_tick(), 8.0);  // never above k
  EXPECT_DOUBLE_EQ(f.isl_coefficient_tick(), 8.0);
  cfg.k = 3;  // n = 2 with k = 3: floor(0.75) = 0 grants nothing
  CreditWasteFix g(cfg);
  g.on_data(true);
  g.on_data(true);
  EXPECT_DOUBLE_EQ(g.isl_coefficient_tick(), 0.0);
}

// ---- the receiver's pacer lists ----------------------------------------------------------------

TEST(CreditScheduler, ActiveSendersRoundRobinThenSlowPulls) {
  CreditPacerConfig cfg;  // 256 B quanta, 4,096 B unit, c0 = k = 4: 64 quanta per grant
  cfg.slow_budget = 20'000;
  CreditScheduler s(cfg);
  const uint32_t a = s.add_sender();
  const uint32_t b = s.add_sender();
  CreditScheduler::Grant g;
  EXPECT_FALSE(s.tick(&g));  // no demand: the pacer sleeps
  s.on_data(a, 100, false);
  s.on_data(b, 30, false);
  ASSERT_TRUE(s.tick(&g));
  EXPECT_EQ(g.sender, a);
  EXPECT_EQ(g.quanta, 64);
  EXPECT_EQ(g.pull, 64U);
  ASSERT_TRUE(s.tick(&g));
  EXPECT_EQ(g.sender, b);
  EXPECT_EQ(g.quanta, 30);  // at most the demand
  EXPECT_EQ(s.list(b), CreditScheduler::List::kIdle);
  ASSERT_TRUE(s.tick(&g));
  EXPECT_EQ(g.sender, a);
  EXPECT_EQ(g.quanta, 36);
  EXPECT_EQ(g.from, CreditScheduler::List::kActive);
  // Both satisfied: slow pulls of k x 4,096 B each, up to 20,000 B per idle spell.
  ASSERT_TRUE(s.tick(&g));
  EXPECT_EQ(g.from, CreditScheduler::List::kIdle);
  EXPECT_EQ(g.sender, b);
  EXPECT_EQ(g.quanta, 64);
  ASSERT_TRUE(s.tick(&g));
  EXPECT_EQ(g.sender, a);
  ASSERT_TRUE(s.tick(&g));
  EXPECT_EQ(g.sender, b);
  EXPECT_EQ(g.quanta, (20'000 - 16'384 + 255) / 256);  // what is left of the budget
  EXPECT_EQ(s.issued(b), (30 + 64 + 15) * 256);
  ASSERT_TRUE(s.tick(&g));
  EXPECT_EQ(g.sender, a);
  EXPECT_FALSE(s.tick(&g));
  // New demand brings a sender back to the active list.
  s.on_data(a, s.latest_pull(a) + 10, false);
  ASSERT_TRUE(s.tick(&g));
  EXPECT_EQ(g.sender, a);
  EXPECT_EQ(g.quanta, 10);
  s.close(a);
  s.close(b);
  EXPECT_FALSE(s.tick(&g));
}

// With the fix a flagged sender's grant shrinks with its run of flags (64 -> 32 -> 16 quanta),
// and its flagged packets carry no target; unflagged, it gets 64 again.
// A sender that closes while queued and opens again before its old entry is popped holds one
// turn per round, not two (before, the stale entry looked valid again: a got 512 quanta to b's
// 256). Its seed 001 state starts afresh with the new PDC.
TEST(CreditScheduler, ASenderBackBeforeItsOldEntryIsPoppedHasOneTurn) {
  CreditPacerConfig cfg;
  cfg.fix = true;
  CreditScheduler s(cfg);
  const uint32_t a = s.add_sender();
  const uint32_t b = s.add_sender();
  s.on_data(a, 100'000, false);
  s.on_data(b, 100'000, false);
  s.on_data(a, 0, true);  // a flagged once: its grant is c0 x beta
  CreditScheduler::Grant g;
  ASSERT_TRUE(s.tick(&g));
  EXPECT_EQ(g.sender, a);
  EXPECT_EQ(g.quanta, 32);
  s.close(a);                    // a's entry stays queued behind b
  s.on_data(a, 200'000, false);  // a new PDC of a joins again
  std::string order;
  for (int i = 0; i < 6; ++i) {
    ASSERT_TRUE(s.tick(&g));
    order += g.sender == a ? 'a' : 'b';
    if (g.sender == a) {
      EXPECT_EQ(g.quanta, 64);  // unflagged: c0 again
    }
  }
  EXPECT_EQ(order, "bababa");
}

TEST(CreditScheduler, FlaggedSenderGetsTheDecreasedCoefficient) {
  CreditPacerConfig cfg;
  cfg.fix = true;
  CreditScheduler s(cfg);
  const uint32_t a = s.add_sender();
  s.on_data(a, 1000, false);
  s.on_data(a, 5, true);  // n = 1, target kept at 1000
  EXPECT_EQ(s.highest_target(a), 1000U);
  CreditScheduler::Grant g;
  ASSERT_TRUE(s.tick(&g));
  EXPECT_EQ(g.quanta, 32);
  s.on_data(a, 0, true);  // n = 2
  ASSERT_TRUE(s.tick(&g));
  EXPECT_EQ(g.quanta, 16);
  s.on_data(a, 1000, false);
  ASSERT_TRUE(s.tick(&g));
  EXPECT_EQ(g.quanta, 64);
}

// ---- on a fabric --------------------------------------------------------------------------------

// A UET scenario with credit's usual setting (ECN off towards hosts) on two spines.
std::string credit_fabric(int hosts, const std::string& extra, const std::string& cc = "none") {
  return test::uet_fabric(
      hosts, 2, fmt::format("cc = \"{}\"\n[network.ecn]\nhost_ports = false\n{}", cc, extra));
}

// One flow of `bytes` from host 0 to host 16 with receiver credit and `keys` in [transport.uet].
std::string one_flow(const std::string& keys, const std::string& bytes) {
  return credit_fabric(32, fmt::format("[transport.uet]\nreceiver_credit = true\n{}\n[workload]\n"
                                       "kind = \"flows\"\n[[workload.flows]]\nsrc = 0\ndst = 16\n"
                                       "bytes = \"{}\"\n",
                                       keys, bytes));
}

// The credit ledger of every PDC balances, and no PDC received more than was issued to it.
void expect_credit_balanced(const UetTransport& t) {
  const CreditLedger l = t.credit_total();
  EXPECT_GT(l.issued, 0);
  EXPECT_LE(l.received, l.issued);
  EXPECT_EQ(l.spec + l.received, l.used + l.clipped + l.zeroed_spec + l.expired + l.remaining);
}

// Gb/s of frame bytes sent against credit between 50 us and 300 us of the traced host (the
// speculative window is gone by then); 0 if the trace does not span them.
double paced_rate(const UetTransport& t) {
  const UetTransport::CreditSample* a = nullptr;
  const UetTransport::CreditSample* b = nullptr;
  for (const auto& s : t.credit_trace()) {
    if (a == nullptr && s.at >= Time::us(50)) a = &s;
    if (s.at <= Time::us(300)) b = &s;
  }
  if (a == nullptr || b == nullptr || b->at <= a->at) return 0;
  return static_cast<double>(b->used - a->used) * 8 / (b->at - a->at).sec_f() / 1e9;
}

// One sender, one receiver: after the speculative window the sender sends at the pacer's
// rate, 0.99 of the link in frame bytes; with preamble and gap on the wire that is within 1 %
// of the receiver's link rate.
TEST(Credit, PacesOneSenderToTheReceiversLink) {
  fabsim::Run run(load_scenario_text(one_flow("credit_trace_host = 16", "4MB"), "one.toml"));
  const RunResult r = execute_checked(run);
  ASSERT_TRUE(r.flows[0].done);
  const auto& t = dynamic_cast<const UetTransport&>(run.transport());
  const double frame_rate = paced_rate(t);
  EXPECT_NEAR(frame_rate, 99.0, 0.5) << "Gb/s of frames";
  const double wire_rate = frame_rate * (4'188.0 + 20) / 4'188.0;  // + preamble and gap
  EXPECT_NEAR(wire_rate, 100.0, 1.0) << "Gb/s on the wire";
  expect_credit_balanced(t);
}

// Each receiver's pacer grants at pacer_fraction of the rate its own traffic arrives at (until
// 2026-11-29 every pacer took host 0's NIC rate): with the link into host 16 at 50 Gb/s the
// sender is paced to 49.5 Gb/s of frames, half the 100 Gb/s of the previous test; host 16's
// own sending link does not matter.
TEST(Credit, EachPacerGrantsAtItsOwnHostsRate) {
  fabsim::Run run(load_scenario_text(one_flow("credit_trace_host = 16", "4MB"), "half.toml"));
  run.network().host(16).inbound()->set_rate(Rate::gbps(50));
  run.network().host(16).port().link()->set_rate(Rate::gbps(25));
  const RunResult r = execute_checked(run);
  ASSERT_TRUE(r.flows[0].done);
  const auto& t = dynamic_cast<const UetTransport&>(run.transport());
  EXPECT_NEAR(paced_rate(t), 49.5, 0.5) << "Gb/s of frames";
  expect_credit_balanced(t);
}

// The credit timer bounds the grant rate: one 16 KiB grant per 5 us is 26.2 Gb/s, so a 2 MB
// flow after its speculative window takes about (2 MB - window) / 26.2 Gb/s.
TEST(Credit, TheCreditTimerBoundsTheGrantRate) {
  fabsim::Run run(load_scenario_text(one_flow("credit_timer = \"5us\"", "2MB"), "timer.toml"));
  const RunResult r = execute_checked(run);
  ASSERT_TRUE(r.flows[0].done);
  const auto& t = dynamic_cast<const UetTransport&>(run.transport());
  const CreditLedger l = t.credit_total();
  // Everything sent beyond the speculative credit was granted at one grant per 5 us.
  const double granted_us = static_cast<double>(l.used - (l.spec - l.zeroed_spec)) / 16'384 * 5;
  // Plus the round trip before the first grant (about 10 us) and the last grant's packets'
  // way to the receiver.
  EXPECT_NEAR(r.flows[0].fct().us_f(), granted_us, 25.0);
  EXPECT_GT(r.flows[0].fct().us_f(), 2'000'000 * 8 / 26'214.4 * 0.8);
}

// 31:1 incast of 1 MB each under credit alone. Every sender's speculative window plus one frame
// of overdraw can reach the receiver's ToR port before any grant; after that grants come at
// 0.99 of the rate the port drains, so they cannot raise the queue: bound = 31 x (max window +
// frame). The port stays busy throughout (utilisation near 1), and nothing is dropped.
// `trim`: without trimming (a buffer holding every window, and an RTO above the 0.4 ms of
// queueing that speculation causes: htsim's 72.8 us would fire spuriously), or with UET's
// trimming, which cuts the speculative excess above 1.5 x its threshold at the last hop.
// The pacer alone: the fabric (8:1 at the ToRs) would turn fabric feedback on, and the
// speculative windows' trims at the spines would slow it for a while.
void incast31(bool trim) {
  std::string extra = fmt::format(R"(
[network.buffer]
size = "32MB"
[network.trim]
enabled = {}
[transport.uet]
receiver_credit = true
fabric_feedback = "off"
rto = "{}"
[output]
sample_interval = "1us"
sample_ports = "downlinks"
[workload]
kind = "flows"
)",
                                  trim, trim ? "0us" : "2ms");
  for (int s = 0; s < 31; ++s) {
    extra += fmt::format("[[workload.flows]]\nsrc = {}\ndst = 0\nbytes = \"1MB\"\n", 32 + s);
  }
  fabsim::Run run(load_scenario_text(credit_fabric(64, extra), "incast31.toml"));
  const RunResult r = execute_checked(run);
  Time last;
  for (const auto& f : r.flows) {
    ASSERT_TRUE(f.done);
    last = std::max(last, f.end);
  }
  EXPECT_EQ(r.ledger.total().dropped_total().packets, 0U);
  const auto& t = dynamic_cast<const UetTransport&>(run.transport());
  EXPECT_EQ(t.stats().timeouts, 0U);
  int64_t peak = 0;
  for (const PortSample& s : r.samples) {
    if (r.series[s.series].node == "leaf0" && r.series[s.series].port == 0)
      peak = std::max(peak, s.queue_bytes);
  }
  const int64_t bound =
      trim ? run.trim_threshold().count() * 3 / 2 + 4'188 : 31 * (t.max_window() + 4'188);
  EXPECT_LE(peak, bound);
  EXPECT_GT(peak, bound / 2);  // the bound is the right order: speculation is what fills it
  // 31 x 245 frames (+ preamble and gap) through one 100 Gb/s port: at least 97 % busy.
  const double busy_us =
      31.0 * (244 * (4'188 + 20) + (1'000'000 - 244 * 4'086 + 102 + 20)) * 8 / 100e3;
  EXPECT_LT(last.us_f(), busy_us / 0.97) << "ideal " << busy_us << " us";
  expect_credit_balanced(t);
}

TEST(Credit, Incast31StaysBelowTheSpeculativeBoundAndDropsNothing) {
  incast31(/*trim=*/false);
}

TEST(Credit, Incast31WithTrimmingStaysBelowTheTrimBound) {
  incast31(/*trim=*/true);
}

// With credit alone on a trimming fabric the grants pace the sender and max_window does not
// cap its flight (inflight_cap = "auto"; REFERENCE.md §4.6, as uet-htsim): four senders of
// leaf 0 send to four hosts of leaf 1 over two uplinks (2:1, no fabric feedback), so headers
// come back fast and grants keep flowing while the data waits in the uplink queues. Their
// flight then passes max_window, within the PSN range (nothing arrives beyond the receiver's
// window). With "max_window", or without trimming, the cap holds and is reached.
TEST(Credit, AloneTheGrantsNotMaxWindowBoundTheFlight) {
  struct Case {
    const char* cap;
    bool trim;
    bool capped;
  };
  for (const Case c :
       {Case{"auto", true, false}, Case{"max_window", true, true}, Case{"auto", false, true}}) {
    std::string s = credit_fabric(
        32, fmt::format("[network.trim]\nenabled = {}\n[transport.uet]\nreceiver_credit = "
                        "true\nfabric_feedback = \"off\"\ninflight_cap = \"{}\"\n"
                        "[workload]\nkind = \"flows\"\n",
                        c.trim, c.cap));
    for (int i = 0; i < 4; ++i) {
      s += fmt::format("[[workload.flows]]\nsrc = {}\ndst = {}\nbytes = \"2MB\"\n", i, 16 + i);
    }
    const std::string what = fmt::format("{} trim={}", c.cap, c.trim);
    fabsim::Run run(load_scenario_text(s, "cap.toml"));
    const RunResult r = execute_checked(run);
    for (const auto& f : r.flows) ASSERT_TRUE(f.done) << what;
    const auto& t = dynamic_cast<const UetTransport&>(run.transport());
    EXPECT_EQ(r.ledger.total().trimmed_bytes > 0, c.trim) << what;
    EXPECT_EQ(t.stats().out_of_window, 0U) << what;
    const WireConfig& wire = run.config().transport.wire;
    const int64_t frame = wire.payload + wire.header_bytes;
    int64_t peak = 0;
    for (int i = 0; i < 4; ++i) peak = std::max(peak, t.peak_in_flight(i, 16 + i));
    if (c.capped) {
      EXPECT_EQ(t.inflight_cap(), t.max_window()) << what;
      EXPECT_LE(peak, t.max_window()) << what;
      EXPECT_GT(peak, t.max_window() - 2 * frame) << what;  // it reaches the cap
    } else {
      EXPECT_EQ(t.inflight_cap(), INT64_MAX) << what;
      EXPECT_GT(peak, t.max_window() + 8 * frame) << what;
    }
    expect_credit_balanced(t);
  }
}

// Seed 001's many-to-many case (scenarios/seed001-shared-senders.toml): senders shared by four
// receivers accumulate credit they cannot use; the fix lowers the credit wasted.
TEST(Credit, FixLowersWastedCreditWhenSendersAreShared) {
  CreditLedger waste[2];
  uint64_t flagged[2] = {0, 0};
  for (int fix = 0; fix < 2; ++fix) {
    fabsim::Run run(load_scenario(
        std::string(FABSIM_SOURCE_DIR) + "/scenarios/seed001-shared-senders.toml",
        {fmt::format("transport.uet.credit_waste_fix={}", fix != 0 ? "true" : "false")}));
    const RunResult r = execute_checked(run);
    for (const auto& f : r.flows) EXPECT_TRUE(f.done);
    const auto& t = dynamic_cast<const UetTransport&>(run.transport());
    waste[fix] = t.credit_total();
    flagged[fix] = t.stats().flagged;
    expect_credit_balanced(t);
  }
  EXPECT_EQ(flagged[0], 0U);
  EXPECT_GT(flagged[1], 0U);
  EXPECT_LT(waste[1].wasted(), waste[0].wasted());
  EXPECT_LT(waste[1].issued, waste[0].issued);
}

// Credit together with NSCC (both on, as the spec allows) and in ROD: same seed, same run; the
// ledger balances.
TEST(Credit, DeterministicWithNsccAndInOrderDelivery) {
  for (const auto& [cc, mode] : {std::pair{"nscc", "rud"}, std::pair{"none", "rod"}}) {
    std::string extra = fmt::format(
        "[network.trim]\nenabled = true\n[transport.uet]\nmode = \"{}\"\nreceiver_credit = "
        "true\n[workload]\nkind = \"flows\"\n",
        mode);
    for (int s = 0; s < 8; ++s) {
      extra +=
          fmt::format("[[workload.flows]]\nsrc = {}\ndst = {}\nbytes = \"500kB\"\n", 16 + s, s % 2);
    }
    auto once = [&] {
      fabsim::Run run(load_scenario_text(credit_fabric(32, extra, cc), "both.toml"));
      const RunResult r = execute_checked(run);
      for (const auto& f : r.flows) EXPECT_TRUE(f.done) << cc << " " << mode;
      expect_credit_balanced(dynamic_cast<const UetTransport&>(run.transport()));
      return r;
    };
    const RunResult a = once();
    const RunResult b = once();
    EXPECT_EQ(a.transport_counters, b.transport_counters) << cc << " " << mode;
    for (size_t i = 0; i < a.flows.size(); ++i) EXPECT_EQ(a.flows[i].end, b.flows[i].end);
  }
}

// An open PDC keeps its credit while idle: the slow pulls an idle sender receives (REFERENCE.md
// §4.1, §4.6: up to one max window) let its next message start at once, with no Credit Request.
// Before, credit expired when the last message was acknowledged, so every slow pull was wasted
// and the second message waited a request's round trip (a ring AllReduce of 1 MiB on 8 ranks
// took 291 us instead of 221 us). A PDC that closes lets its credit expire.
TEST(Credit, AnIdlePdcKeepsItsCreditForTheNextMessage) {
  const auto run_two = [](bool close) {
    fabsim::Run run(load_scenario_text(credit_fabric(32, fmt::format(R"(
[transport.uet]
receiver_credit = true
pdc_close = {}
close_after = "50us"
[workload]
kind = "flows"
[[workload.flows]]
src = 0
dst = 16
bytes = "300kB"
[[workload.flows]]
src = 0
dst = 16
bytes = "300kB"
start = "200us"
)",
                                                                     close)),
                                       "second.toml"));
    const RunResult r = execute_checked(run);
    EXPECT_TRUE(r.flows[0].done && r.flows[1].done);
    const auto& t = dynamic_cast<const UetTransport&>(run.transport());
    expect_credit_balanced(t);
    return std::make_tuple(r.flows[0].fct(), r.flows[1].fct(), t.stats().credit_requests,
                           t.stats().pdcs, t.credit_total());
  };
  const auto [first, second, requests, pdcs, ledger] = run_two(false);
  EXPECT_EQ(pdcs, 1U);
  EXPECT_EQ(requests, 0U);
  EXPECT_EQ(ledger.expired, 0);
  // It starts on up to one max window of held credit, as the first did on its speculative
  // window: no slower than the first.
  EXPECT_LE(second, first);
  const auto [first_c, second_c, requests_c, pdcs_c, ledger_c] = run_two(true);
  EXPECT_EQ(first_c, first);
  EXPECT_EQ(pdcs_c, 2U);           // closed after 50 us idle, opened again for the second
  EXPECT_GT(ledger_c.expired, 0);  // the first PDC's credit expired at its close
}

// Without speculation a new PDC sends nothing before its first grant: it asks with a Credit
// Request at once (before the fix it waited for a grant nobody knew to send, and the run ended
// with the flow undone at time 0). The flow then takes the request's and the grant's round trip
// (about 10 us on this fabric) plus 300 kB at the pacer's 99 Gb/s of frame bytes.
TEST(Credit, WithoutSpeculationANewPdcAsksForCreditAtOnce) {
  fabsim::Run run(load_scenario_text(one_flow("speculate = false", "300kB"), "nospec.toml"));
  const RunResult r = execute_checked(run);
  ASSERT_TRUE(r.flows[0].done);
  const auto& t = dynamic_cast<const UetTransport&>(run.transport());
  EXPECT_EQ(t.stats().credit_requests, 1U);
  const CreditLedger l = t.credit_total();
  EXPECT_EQ(l.spec, 0);
  EXPECT_EQ(l.used, l.received - l.clipped - l.expired - l.remaining);
  const double ideal_us = 300'000.0 * 8 / 99'000;
  EXPECT_GT(r.flows[0].fct().us_f(), ideal_us + 5);
  EXPECT_LT(r.flows[0].fct().us_f(), ideal_us + 30);
  expect_credit_balanced(t);
}

// Credit under heavy loss: requests and grants are lost as well as data. A starved sender's
// watch re-asks after an RTO without grants while it is owed some or its request is unanswered,
// and the receiver answers a re-ask with its pull number (grants are cumulative: the repeat makes
// good a lost last grant, which no later grant would). Before, losing the last grant, or the
// request sent after a timeout, left sender and receiver waiting on each other with nothing
// scheduled (soak seed 9, no. 681: 3 of 4 flows still after 438 us). Over eight seeds with 20 %
// loss on every link, every flow completes and the run never goes still (without the watch five
// of the eight go still); the repeats are exercised.
TEST(Credit, UnderHeavyLossNoSenderWaitsForAGrantThatWasLost) {
  uint64_t repeats = 0;
  for (int seed = 1; seed <= 8; ++seed) {
    fabsim::Run run(load_scenario_text(
        one_flow("pdc_close = false", "300kB"), "lossy.toml",
        {"network.loss_probability=0.2", fmt::format("simulation.seed={}", seed)}));
    const RunResult r = execute_checked(run);
    EXPECT_TRUE(r.flows[0].done) << "seed " << seed;
    EXPECT_EQ(r.stalled_at, Time::max()) << "seed " << seed;
    const auto& t = dynamic_cast<const UetTransport&>(run.transport());
    repeats += t.stats().credit_repeats;
    const CreditLedger l = t.credit_total();
    EXPECT_EQ(l.spec + l.received, l.used + l.clipped + l.zeroed_spec + l.expired + l.remaining);
  }
  EXPECT_GT(repeats, 0U);
}

// A starved sender whose demand the receiver never heard asks for it when its watch finds no
// grant. A timeout under an rto shorter than the round trip queues resends after the last target
// was granted in full, or after packets that carried seed 001's flag instead of a target (the
// NIC's credit, held by its other PDCs, is above the cap); the timeout's own request is held
// back when one went less than a round trip before. The watch then saw no request unanswered
// and no grant owed, and took the demand for met: sender and receiver waited on each other with
// nothing scheduled (soak seed 82, no. 1386: 3 flows still at 2,300 us). Three ROD flows from
// one NIC, rto 5 us, 30 % loss: without the request 3 of these 16 seeds go still (7, 13, 16).
TEST(Credit, AStarvedSenderTellsDemandTheReceiverNeverHeard) {
  const std::string toml = credit_fabric(32, R"(
[transport.uet]
receiver_credit = true
credit_waste_fix = true
mode = "rod"
rto = "5us"
pdc_close = false
[workload]
kind = "flows"
[[workload.flows]]
src = 0
dst = 16
bytes = "64kB"
[[workload.flows]]
src = 0
dst = 17
bytes = "64kB"
[[workload.flows]]
src = 0
dst = 18
bytes = "64kB"
)");
  for (int seed = 1; seed <= 16; ++seed) {
    fabsim::Run run(load_scenario_text(
        toml, "unheard.toml",
        {"network.loss_probability=0.3", fmt::format("simulation.seed={}", seed)}));
    const RunResult r = execute_checked(run);
    EXPECT_EQ(r.stalled_at, Time::max()) << "seed " << seed;
    for (const auto& f : r.flows) EXPECT_TRUE(f.done) << "seed " << seed;
    const auto& t = dynamic_cast<const UetTransport&>(run.transport());
    EXPECT_EQ(t.stats().failed_pdcs, 0U) << "seed " << seed;
    const CreditLedger l = t.credit_total();
    EXPECT_EQ(l.spec + l.received, l.used + l.clipped + l.zeroed_spec + l.expired + l.remaining);
  }
}

// ---- fabric feedback on the pacer rate --------------------------------------------------------

// Every step of the rule (credit.h), to the exact value, with the default constants.
TEST(FabricFeedback, DecreasesOnEcnAndFabricTrimsAndIncreasesAfterwards) {
  FabricFeedback f{FabricFeedbackConfig{}};
  const auto period = [&f](int packets, int ce, int trimmed_fabric, int trimmed_last_hop) {
    for (int i = 0; i < trimmed_fabric; ++i) f.on_packet(true, false, false);
    for (int i = 0; i < trimmed_last_hop; ++i) f.on_packet(true, true, false);
    for (int i = 0; i < ce; ++i) f.on_packet(false, false, true);
    for (int i = ce + trimmed_fabric + trimmed_last_hop; i < packets; ++i)
      f.on_packet(false, false, false);
    return f.period();
  };
  EXPECT_DOUBLE_EQ(period(100, 0, 0, 0), 1.0);  // clean: +0.01, clamped at 1
  EXPECT_EQ(f.clean_periods(), 1);
  // 80 % CE: g = 0.4 > 0.3, rate x (1 - 0.1 x 0.5); then g = 0.6, x (1 - 0.3 x 0.5).
  EXPECT_FALSE(f.decreased());
  EXPECT_DOUBLE_EQ(period(100, 80, 0, 0), 0.95);
  EXPECT_DOUBLE_EQ(f.g(), 0.4);
  EXPECT_EQ(f.clean_periods(), 0);
  EXPECT_TRUE(f.decreased());
  EXPECT_DOUBLE_EQ(period(100, 80, 0, 0), 0.95 * 0.85);
  // 10 headers cut in the fabric (and 5 at the last hop, which do not count): -10 / 100; the
  // ECN fraction is over the 85 untrimmed packets (0 here), so g halves to 0.3: no more.
  EXPECT_DOUBLE_EQ(period(100, 0, 10, 5), 0.95 * 0.85 - 0.1);
  EXPECT_DOUBLE_EQ(f.g(), 0.3);
  const double r = 0.95 * 0.85 - 0.1;
  // Clean periods add 0.01 x 2^n; a period with some CE below the target adds 0.01 and
  // still counts as clean for the doubling.
  EXPECT_DOUBLE_EQ(period(50, 0, 0, 0), r + 0.01);
  EXPECT_DOUBLE_EQ(period(50, 0, 0, 0), r + 0.03);
  EXPECT_DOUBLE_EQ(period(50, 5, 0, 0), r + 0.04);
  EXPECT_DOUBLE_EQ(f.g(), 0.0375 + 0.05);
  EXPECT_FALSE(f.settled());
  EXPECT_DOUBLE_EQ(period(0, 0, 0, 0), r + 0.12);  // idle: + 0.01 x 2^3
  EXPECT_EQ(f.clean_periods(), 4);
  // Only fabric trims: the rate falls to the floor, and a decrease at the floor still counts.
  EXPECT_DOUBLE_EQ(period(20, 0, 20, 0), 0.01);
  EXPECT_DOUBLE_EQ(period(20, 0, 20, 0), 0.01);
  EXPECT_TRUE(f.decreased());
  // Idle periods bring it back to 1; once g is below 1e-3 as well, the owner may stop.
  int periods = 0;
  while (!f.settled() && periods < 100) {
    period(0, 0, 0, 0);
    ++periods;
  }
  EXPECT_DOUBLE_EQ(f.rate(), 1.0);
  EXPECT_LT(f.g(), 1e-3);
  EXPECT_EQ(periods, 7);  // from the floor the rate is 0.01 x 2^k after k periods: 1 at k = 7

  // Without increase (ai = 0) the rate stays where it fell, and an idle host still settles.
  FabricFeedbackConfig flat;
  flat.ai = 0;
  FabricFeedback h(flat);
  h.on_packet(true, false, false);
  EXPECT_DOUBLE_EQ(h.period(), 0.01);
  for (int i = 0; i < 20 && !h.settled(); ++i) h.period();
  EXPECT_TRUE(h.settled());
  EXPECT_DOUBLE_EQ(h.rate(), 0.01);
}

// A permutation across a leaf-spine oversubscribed 8:1 at the ToRs (16 hosts per leaf, 2
// uplinks), every flow leaving its leaf, credit alone. Each receiver grants its own link's
// rate, so the uplinks get 8 times what they carry and trim. Fabric feedback (on by default
// here: credit alone, ToRs oversubscribed) slows the receivers' pacers: fewer headers cut,
// and the flows end sooner. With NSCC, or on a fabric without oversubscription, it stays off.
std::string oversubscribed_permutation(const std::string& keys, const std::string& cc = "none") {
  std::string flows;
  for (int h = 0; h < 64; ++h)
    flows +=
        fmt::format("[[workload.flows]]\nsrc = {}\ndst = {}\nbytes = \"1MB\"\n", h, (h + 16) % 64);
  return credit_fabric(64,
                       fmt::format("[network.trim]\nenabled = true\n[transport.uet]\n"
                                   "receiver_credit = true\n{}\n[workload]\nkind = \"flows\"\n{}",
                                   keys, flows),
                       cc);
}

TEST(FabricFeedback, SlowsThePacersOfAnOversubscribedFabricAndCutsFewerHeaders) {
  uint64_t trims[2] = {0, 0};
  Time last[2];
  for (int on = 0; on < 2; ++on) {
    fabsim::Run run(load_scenario_text(
        oversubscribed_permutation(on ? "" : "fabric_feedback = \"off\""), "oversub.toml"));
    const RunResult r = execute_checked(run);
    const auto& t = dynamic_cast<const UetTransport&>(run.transport());
    EXPECT_DOUBLE_EQ(tor_oversubscription(run.network()), 8.0);
    for (const auto& f : r.flows) {
      ASSERT_TRUE(f.done);
      last[on] = std::max(last[on], f.end);
    }
    trims[on] = t.stats().trims_seen;
    if (on) {
      ASSERT_NE(t.feedback(16), nullptr);
      EXPECT_GT(t.stats().feedback_decreases, 0U);
    } else {
      EXPECT_EQ(t.feedback(16), nullptr);
    }
    expect_credit_balanced(t);
  }
  EXPECT_LT(trims[1] * 2, trims[0])
      << trims[1] << " headers cut with feedback, " << trims[0] << " without";
  EXPECT_LT(last[1], last[0]);
  // Off by default with a window CC as well; on when asked.
  for (const auto& [keys, cc, expect] :
       {std::tuple{"", "nscc", false}, std::tuple{"fabric_feedback = \"on\"", "nscc", true}}) {
    fabsim::Run run(load_scenario_text(oversubscribed_permutation(keys, cc), "oversub.toml"));
    (void)execute_checked(run);
    const auto& t = dynamic_cast<const UetTransport&>(run.transport());
    EXPECT_EQ(t.feedback(16) != nullptr, expect) << keys << " " << cc;
  }
}

// Credit runs per PDC: RUDI and UUD are refused with the key named.
TEST(Credit, RefusedWithoutPdcState) {
  for (const char* mode : {"rudi", "uud"}) {
    const std::string text =
        credit_fabric(32, fmt::format("[transport.uet]\nmode = \"{}\"\nreceiver_credit = true\n"
                                      "[workload]\nkind = \"permutation\"\n",
                                      mode));
    try {
      (void)load_scenario_text(text, "bad.toml");
      ADD_FAILURE() << mode << " accepted";
    } catch (const std::exception& e) {
      EXPECT_NE(std::string(e.what()).find("transport.uet.receiver_credit"), std::string::npos)
          << e.what();
    }
  }
}

// No cap, no CC window and no credit would leave a sender paced by nothing: refused, naming the
// key. With credit, or with a CC, "none" is accepted.
TEST(Credit, AnUncappedFlightNeedsCreditOrACc) {
  const auto text = [](const char* cc, bool credit) {
    return credit_fabric(32,
                         fmt::format("[transport.uet]\ninflight_cap = \"none\"\nreceiver_credit = "
                                     "{}\n[workload]\nkind = \"permutation\"\n",
                                     credit),
                         cc);
  };
  try {
    (void)load_scenario_text(text("none", false), "bad.toml");
    ADD_FAILURE() << "accepted";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("transport.uet.inflight_cap"), std::string::npos)
        << e.what();
  }
  EXPECT_NO_THROW((void)load_scenario_text(text("none", true), "ok.toml"));
  EXPECT_NO_THROW((void)load_scenario_text(text("nscc", false), "ok.toml"));
}

}  // namespace
}  // namespace fabsim
