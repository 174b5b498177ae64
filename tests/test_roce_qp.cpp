// RoCE queue pair against exact state (issue 13 item 8): go-back-N, ACK coalescing, NACK
// pacing, the retransmission timeout with its backoff and retry limit. The QP's state is read
// where it acts, at the NICs, to the picosecond: the next PSN to send is the PSN of the next data
// frame host 0 puts on its link, the last acknowledged PSN is the cumulative ACK it receives.
// Loss is deterministic: a NIC stage on host 1 drops chosen copies of chosen PSNs.
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "conserved.h"
#include "helpers.h"
#include "scenario/runner.h"
#include "scenario/scenario.h"
#include "transport/roce.h"

namespace fabsim {
namespace {
using namespace literals;

struct Seen {
  Time at;
  PacketType type;
  uint64_t psn;
  uint8_t flags = 0;
};

// A NIC stage on one host: records the data packets the NIC sends and every packet it receives,
// and drops (returns to the pool) the received data packets that `drop(psn, copy)` selects,
// `copy` counting earlier arrivals of the same PSN. This is the deterministic loss.
class Tap : public NicExtension {
 public:
  explicit Tap(Simulation& sim) : sim_(sim) {}
  void on_send(Packet& p) override { sent.push_back({sim_.now(), p.type, p.seq}); }
  bool on_receive(Packet& p) override {
    if (p.type == PacketType::kData) {
      if (mark_ce) p.ecn = Ecn::kCe;  // as if a switch had marked every data packet
      const int copy = copies_[p.seq]++;
      if (drop && drop(p.seq, copy)) {
        dropped.push_back({sim_.now(), p.type, p.seq});
        sim_.drop(&p, DropCause::kRandomLoss);  // the ledger counts it as a link loss
        return false;
      }
    }
    received.push_back({sim_.now(), p.type, p.seq, p.flags});
    return true;
  }
  std::function<bool(uint64_t psn, int copy)> drop;
  bool mark_ce = false;
  std::vector<Seen> sent;
  std::vector<Seen> received;
  std::vector<Seen> dropped;

 private:
  Simulation& sim_;
  std::map<uint64_t, int> copies_;
};

// The run stops as soon as every flow is done, which would cut off the ACKs still on their way
// back; an empty flow at 1 ms (it sends nothing and completes at its start) keeps it going.
constexpr const char* kKeepAlive =
    "[[workload.flows]]\nsrc = 0\ndst = 1\nbytes = 0\nstart = \"1ms\"\n";

// Host 0 sends to host 1 through one switch: 100 Gb/s links of 1 us, DCQCN off (no rate changes),
// a trace of every flow. `roce` and `flows` are appended to [transport] and the workload.
struct TwoHosts {
  TwoHosts(const std::string& roce, const std::string& flows)
      : run(load_scenario_text(R"(
[simulation]
stop_time = "10s"
[topology]
kind = "single_switch"
hosts = 2
[output]
trace = true
[workload]
kind = "flows"
)" + flows + kKeepAlive + "[transport]\nkind = \"roce\"\n" +
                                   roce +
                                   (roce.find("cc =") == std::string::npos
                                        ? "\n[transport.dcqcn]\nenabled = false\n"
                                        : "\n"),
                               "qp.toml")) {
    auto a = std::make_unique<Tap>(run.sim());
    auto b = std::make_unique<Tap>(run.sim());
    tx = a.get();
    rx = b.get();
    run.network().host(0).set_extension(std::move(a));
    run.network().host(1).set_extension(std::move(b));
  }
  RunResult execute() { return execute_checked(run); }
  const RoceTransport::Counters& stats() {
    return dynamic_cast<RoceTransport&>(run.transport()).stats();
  }
  Run run;
  Tap* tx = nullptr;  // host 0: data sent, ACKs and NACKs received
  Tap* rx = nullptr;  // host 1: data received (after the drops)
};

std::string flow(int64_t bytes) {
  return "[[workload.flows]]\nsrc = 0\ndst = 1\nbytes = " + std::to_string(bytes) + "\n";
}

constexpr int64_t kMtu = 4096;
const Time kS = serialization_delay(kMtu + 62 + 20, 100_Gbps);  // a full data frame: 334,240 ps
const Time kC = serialization_delay(64 + 20, 100_Gbps);         // an ACK or NACK: 6,720 ps
const Time kD = 1_us;                                           // each link's delay
// Without queueing: data handed to host 0's link at t reaches host 1 at t + 2 kS + 2 kD (host
// link, switch link); a control frame sent by host 1 at t reaches host 0 at t + 2 kC + 2 kD.
const Time kDataPath = kS * 2 + kD * 2;
const Time kControlPath = kC * 2 + kD * 2;

std::vector<uint64_t> psns(const std::vector<Seen>& v, PacketType type) {
  std::vector<uint64_t> out;
  for (const auto& e : v) {
    if (e.type == type) out.push_back(e.psn);
  }
  return out;
}
std::vector<Time> times(const std::vector<Seen>& v, PacketType type) {
  std::vector<Time> out;
  for (const auto& e : v) {
    if (e.type == type) out.push_back(e.at);
  }
  return out;
}
std::vector<uint64_t> range(uint64_t first, uint64_t end) {
  std::vector<uint64_t> out;
  for (uint64_t k = first; k < end; ++k) out.push_back(k);
  return out;
}
std::vector<Time> trace_times(const RunResult& r, char kind) {
  std::vector<Time> out;
  for (const auto& e : r.trace) {
    if (e.kind == kind) out.push_back(e.time);
  }
  return out;
}

// No loss, one ACK per packet: PSN k leaves at k sS, reaches host 1 at k sS + 2 sS + 2 d, and
// its ACK (cumulative: the next expected PSN, k + 1) reaches host 0 2 sC + 2 d later.
TEST(RoceQp, EveryPacketAckedCumulativelyAtClosedFormTimes) {
  TwoHosts h("", flow(4 * kMtu));
  const RunResult r = h.execute();
  ASSERT_TRUE(r.all_done);
  EXPECT_EQ(psns(h.tx->sent, PacketType::kData), range(0, 4));
  EXPECT_EQ(psns(h.rx->received, PacketType::kData), range(0, 4));
  EXPECT_EQ(psns(h.tx->received, PacketType::kAck), range(1, 5));
  for (size_t k = 0; k < 4; ++k) {
    EXPECT_EQ(h.tx->sent[k].at, kS * static_cast<int64_t>(k)) << k;
    EXPECT_EQ(h.rx->received[k].at, kS * static_cast<int64_t>(k) + kDataPath) << k;
    EXPECT_EQ(h.tx->received[k].at, kS * static_cast<int64_t>(k) + kDataPath + kControlPath) << k;
  }
  EXPECT_EQ(r.flows[0].fct(), kS * 3 + kDataPath);
  EXPECT_EQ(h.stats().acks, 4U);
  EXPECT_EQ(h.stats().nacks, 0U);
  EXPECT_EQ(r.flows[0].retransmissions, 0U);
}

// ack_every_packets = 3 over two 4-packet messages on one QP (PSNs 0-3 and 4-7): ACKs after the
// 3rd packet, at the 1st message's end (PSN 3, which also restarts the count), after 3 more,
// and at the 2nd message's end: cumulative PSNs 3, 4, 7, 8.
TEST(RoceQp, AckEveryThreePacketsAndAtEveryMessageEnd) {
  TwoHosts h("ack_every_packets = 3", flow(4 * kMtu) + flow(4 * kMtu));
  const RunResult r = h.execute();
  ASSERT_TRUE(r.all_done);
  EXPECT_EQ(psns(h.tx->sent, PacketType::kData), range(0, 8));
  EXPECT_EQ(psns(h.tx->received, PacketType::kAck), (std::vector<uint64_t>{3, 4, 7, 8}));
  // Each ACK leaves host 1 on the arrival of PSN (ack - 1).
  const std::vector<Time> at = times(h.tx->received, PacketType::kAck);
  const int64_t acked_by[] = {2, 3, 6, 7};
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(at[i], kS * acked_by[i] + kDataPath + kControlPath) << i;
  }
  EXPECT_EQ(h.stats().acks, 4U);
  EXPECT_EQ(r.flows[0].end, kS * 3 + kDataPath);
  EXPECT_EQ(r.flows[1].end, kS * 7 + kDataPath);
}

// ack_every_bytes = 8192 (packets off): an ACK once 8192 payload bytes are pending, i.e. after
// every 2nd full packet (8192 >= 8192), and at the end. 24,676 B = 6 x 4096 + 100: PSNs 0-6,
// ACKs 2, 4, 6 and 7 (the 100 B last packet). The short last frame (182 B on the wire) reaches
// the switch before the previous one has left it, so it waits for it: 7 sS + s100 + 2 d.
TEST(RoceQp, AckEveryBytesOfPayloadAndAtTheEnd) {
  TwoHosts h("ack_every_packets = 1000000\nack_every_bytes = 8192", flow(6 * kMtu + 100));
  const RunResult r = h.execute();
  ASSERT_TRUE(r.all_done);
  EXPECT_EQ(psns(h.tx->sent, PacketType::kData), range(0, 7));
  EXPECT_EQ(psns(h.tx->received, PacketType::kAck), (std::vector<uint64_t>{2, 4, 6, 7}));
  EXPECT_EQ(h.stats().acks, 4U);
  const Time s100 = serialization_delay(100 + 62 + 20, 100_Gbps);
  EXPECT_EQ(r.flows[0].fct(), kS * 7 + s100 + kD * 2);
  EXPECT_EQ(times(h.tx->received, PacketType::kAck).back(), r.flows[0].end + kControlPath);
}

// Go-back-N: PSN 3 of 30 is lost once. PSN 4 reaches host 1 at 4 sS + 2 sS + 2 d and finds
// the gap: one NACK for PSN 3, back at host 0 at tN = 6 sS + 4 d + 2 sC, while PSN 18 (sent at
// 18 sS) is on the wire. The NACK acknowledges PSNs 0-2 and rewinds the next PSN to send to 3:
// from 19 sS on, PSNs 3..29 go again back to back. PSNs 4..18 arrive out of order and are
// dropped; they come within the NACK interval (500 us), so they raise no further NACK.
TEST(RoceQp, NackOnAGapRewindsToTheNackedPsnAndResendsEverythingAfterIt) {
  TwoHosts h("", flow(30 * kMtu));
  h.rx->drop = [](uint64_t psn, int copy) { return psn == 3 && copy == 0; };
  const RunResult r = h.execute();
  ASSERT_TRUE(r.all_done);
  const Time nack_at = kS * 6 + kD * 4 + kC * 2;
  ASSERT_EQ(psns(h.tx->received, PacketType::kNack), std::vector<uint64_t>{3});
  EXPECT_EQ(times(h.tx->received, PacketType::kNack)[0], nack_at);
  ASSERT_GT(nack_at, kS * 18);
  ASSERT_LT(nack_at, kS * 19);
  std::vector<uint64_t> sent = range(0, 19);
  for (uint64_t k = 3; k < 30; ++k) sent.push_back(k);
  EXPECT_EQ(psns(h.tx->sent, PacketType::kData), sent);
  for (size_t i = 0; i < h.tx->sent.size(); ++i) {
    EXPECT_EQ(h.tx->sent[i].at, kS * static_cast<int64_t>(i)) << i;  // the link never idles
  }
  // Before the NACK, host 0 had ACKs 1, 2, 3 (last acknowledged PSN 2); after it, 4..30.
  std::vector<uint64_t> acks = range(1, 4);
  for (uint64_t k = 4; k <= 30; ++k) acks.push_back(k);
  EXPECT_EQ(psns(h.tx->received, PacketType::kAck), acks);
  EXPECT_LT(times(h.tx->received, PacketType::kAck)[2], nack_at);
  EXPECT_GT(times(h.tx->received, PacketType::kAck)[3], nack_at);
  const FlowRecord& f = r.flows[0];
  EXPECT_EQ(f.packets_sent, 46U);
  EXPECT_EQ(f.retransmissions, 16U);  // PSNs 3..18 were sent twice
  EXPECT_EQ(f.retransmitted_bytes, 16U * kMtu);
  EXPECT_EQ(f.out_of_order, 15U);  // PSNs 4..18, first copies
  EXPECT_EQ(h.stats().nacks, 1U);
  EXPECT_EQ(h.stats().acks, 30U);
  EXPECT_EQ(h.stats().timeouts, 0U);
  EXPECT_EQ(f.delivered, 30 * kMtu);
  EXPECT_EQ(f.fct(), kS * 45 + kDataPath);  // PSN 29 sent second time at (19 + 26) sS
}

// A congestion mark is echoed by the next ACK or NACK, whichever the receiver sends first (a CC
// that reads ECN echoes, NSCC, sees it). IRN NACKs every arrival while a hole is open, so with
// every data packet marked and PSN 3 lost, every NACK carries the echo; before, only ACKs did,
// and a recovery's marks waited for the next ACK.
TEST(RoceQp, NacksEchoCongestionMarksAsAcksDo) {
  TwoHosts h("recovery = \"irn\"\ncc = \"nscc\"", flow(12 * kMtu));
  h.rx->mark_ce = true;
  h.rx->drop = [](uint64_t psn, int copy) { return psn == 3 && copy == 0; };
  const RunResult r = h.execute();
  ASSERT_TRUE(r.all_done);
  size_t nacks = 0;
  for (const Seen& e : h.tx->received) {
    if (e.type != PacketType::kNack && e.type != PacketType::kAck) continue;
    nacks += e.type == PacketType::kNack ? 1 : 0;
    EXPECT_NE(e.flags & 8U, 0U) << "PSN " << e.psn;  // kEcnEchoFlag (transport/roce.cpp)
  }
  EXPECT_GE(nacks, 8U);  // PSNs 4..11 arrive over the hole
}

// IRN's timer is rto_low while at most low_packets (3) are in flight, and SACKed packets are
// not in flight. 12 packets, PSN 3 lost twice: its first resend goes at the first NACK, with 8
// packets in flight (rto_high, 320 us, from that send). The NACK SACKing PSN 9 leaves 3 in
// flight (3, 10, 11): the timer is due 100 us after it, and PSN 3's third copy goes then.
// Counting SACKed packets as in flight, it waited the 320 us.
TEST(RoceQp, IrnTimeoutIsRtoLowOnceSackedPacketsLeaveFewInFlight) {
  TwoHosts h("recovery = \"irn\"", flow(12 * kMtu));
  h.rx->drop = [](uint64_t psn, int copy) { return psn == 3 && copy < 2; };
  const RunResult r = h.execute();
  ASSERT_TRUE(r.all_done);
  const std::vector<Time> nacks = times(h.tx->received, PacketType::kNack);
  ASSERT_GE(nacks.size(), 8U);  // PSNs 4..11
  std::vector<Time> sends_of_3;
  for (const Seen& e : h.tx->sent) {
    if (e.type == PacketType::kData && e.psn == 3) sends_of_3.push_back(e.at);
  }
  ASSERT_EQ(sends_of_3.size(), 3U);
  EXPECT_EQ(sends_of_3[2], nacks[5] + 100_us);
  EXPECT_EQ(h.stats().timeouts, 1U);
}

// The NACK for the same expected PSN is repeated only once nack_interval has passed since the
// last one (>=). PSN 3 of 10 lost: PSNs 4..9 reach host 1 one sS apart, at tk = (k + 2) sS + 2 d.
// Interval 2 sS: NACKs at t4, t6 (= t4 + 2 sS, the boundary), t8. Interval 2 sS + 1 ps: t4, t7.
// (Retransmissions reach host 1 after 8 sS + 6 d > t9: they cannot add a NACK.)
TEST(RoceQp, NackForTheSamePsnNotRepeatedWithinTheInterval) {
  for (const bool longer : {false, true}) {
    const Time interval = kS * 2 + Time::ps(longer ? 1 : 0);
    TwoHosts h("nack_interval = \"" + std::to_string(interval.ps()) + "ps\"", flow(10 * kMtu));
    h.rx->drop = [](uint64_t psn, int copy) { return psn == 3 && copy == 0; };
    const RunResult r = h.execute();
    ASSERT_TRUE(r.all_done);
    const std::vector<int64_t> at =
        longer ? std::vector<int64_t>{4, 7} : std::vector<int64_t>{4, 6, 8};
    const std::vector<Time> nacks = times(h.tx->received, PacketType::kNack);
    ASSERT_EQ(nacks.size(), at.size()) << "interval " << interval.ps() << " ps";
    for (size_t i = 0; i < at.size(); ++i) {
      EXPECT_EQ(nacks[i], kS * at[i] + kDataPath + kControlPath) << i;
    }
    EXPECT_EQ(psns(h.tx->received, PacketType::kNack), std::vector<uint64_t>(at.size(), 3));
    EXPECT_EQ(h.stats().nacks, at.size());
    EXPECT_EQ(r.flows[0].delivered, 10 * kMtu);
  }
}

// The last packet of a message (PSN 4 of 5) is lost once: no later packet reveals the gap, so no
// NACK. The timer was re-armed by the last progress, ACK 4 at tA = 3 sS + 2 (sS + 2 d + sC),
// and expires at exactly tA + rto, rto = rto_base x 2^rto_exponent = 4.096 us x 4; PSN 4 goes
// again at that instant.
TEST(RoceQp, TimeoutFiresRtoAfterTheLastProgressAndResendsFromTheOldestUnacked) {
  TwoHosts h("rto_base = \"4096ns\"\nrto_exponent = 2", flow(5 * kMtu));
  h.rx->drop = [](uint64_t psn, int copy) { return psn == 4 && copy == 0; };
  const RunResult r = h.execute();
  ASSERT_TRUE(r.all_done);
  const Time rto = 16384_ns;
  const Time last_ack = kS * 3 + kDataPath + kControlPath;
  const std::vector<Time> acks = times(h.tx->received, PacketType::kAck);
  ASSERT_EQ(psns(h.tx->received, PacketType::kAck), (std::vector<uint64_t>{1, 2, 3, 4, 5}));
  EXPECT_EQ(acks[3], last_ack);
  EXPECT_EQ(acks[4], last_ack + rto + kDataPath + kControlPath);
  EXPECT_EQ(trace_times(r, 't'), std::vector<Time>{last_ack + rto});
  EXPECT_EQ(psns(h.tx->sent, PacketType::kData), (std::vector<uint64_t>{0, 1, 2, 3, 4, 4}));
  EXPECT_EQ(h.tx->sent.back().at, last_ack + rto);
  EXPECT_EQ(r.flows[0].fct(), last_ack + rto + kDataPath);
  EXPECT_EQ(h.stats().timeouts, 1U);
  EXPECT_EQ(r.flows[0].timeouts, 1U);
  EXPECT_EQ(h.stats().nacks, 0U);
  EXPECT_EQ(r.flows[0].retransmissions, 1U);
}

// IRN with irn.timers = "ib" (conweave-ns3's rule under PFC): the lost last packet waits for
// the IB local ACK timeout, rto_base x 2^rto_exponent = 16.384 us after the last progress, as
// go-back-N does; with IRN's own timers it waits rto_low (100 us, one packet in flight) from
// that progress.
TEST(RoceQp, IrnWithIbTimersWaitsTheIbTimeoutNotRtoLow) {
  for (const bool ib : {true, false}) {
    TwoHosts h(std::string("recovery = \"irn\"\nrto_base = \"4096ns\"\nrto_exponent = 2\n") +
                   (ib ? "irn.timers = \"ib\"" : ""),
               flow(5 * kMtu));
    h.rx->drop = [](uint64_t psn, int copy) { return psn == 4 && copy == 0; };
    const RunResult r = h.execute();
    ASSERT_TRUE(r.all_done);
    const Time last_ack = kS * 3 + kDataPath + kControlPath;
    EXPECT_EQ(psns(h.tx->sent, PacketType::kData), (std::vector<uint64_t>{0, 1, 2, 3, 4, 4}));
    const Time expiry = last_ack + (ib ? 16384_ns : 100_us);
    EXPECT_EQ(trace_times(r, 't'), std::vector<Time>{expiry}) << (ib ? "ib" : "irn");
    EXPECT_EQ(h.tx->sent.back().at, expiry);
    EXPECT_EQ(h.stats().timeouts, 1U);
  }
}

// The IB timer runs from the last progress, not the last send: PSNs 10..29 are lost once, and
// after the last ACK (PSN 9's) the BDP cap still lets PSNs out. With irn.timers = "ib" the first
// expiry is 16.384 us after that ACK; re-armed per send, as IRN's own timers are, it came later.
TEST(RoceQp, IrnIbTimerCountsFromTheLastProgressNotTheLastSend) {
  TwoHosts h("recovery = \"irn\"\nrto_base = \"4096ns\"\nrto_exponent = 2\nirn.timers = \"ib\"",
             flow(30 * kMtu));
  h.rx->drop = [](uint64_t psn, int copy) { return psn >= 10 && copy == 0; };
  const RunResult r = h.execute();
  ASSERT_TRUE(r.all_done);
  const std::vector<Time> expiries = trace_times(r, 't');
  ASSERT_FALSE(expiries.empty());
  Time last_ack;
  for (const Seen& e : h.tx->received) {
    if (e.type == PacketType::kAck && e.at < expiries[0]) last_ack = std::max(last_ack, e.at);
  }
  Time last_send;
  for (const Seen& e : h.tx->sent) {
    if (e.at < expiries[0]) last_send = std::max(last_send, e.at);
  }
  EXPECT_GT(last_send, last_ack);  // the case the rule is about
  EXPECT_EQ(expiries[0], last_ack + 16384_ns);
}

// Every copy of PSN 4 is lost, retry_limit = 3: expiries 1-3 each resend PSN 4, expiry 4 finds
// the limit exhausted and fails the QP (nothing more is sent). Without backoff the expiries are
// at tA + k rto (k = 1..3); with rto_backoff the timeout doubles after each, tA + (2^k - 1) rto.
// The timeouts counted (and traced) are the three that rewound: the fatal fourth rewinds nothing.
TEST(RoceQp, ConsecutiveTimeoutsBackOffAndFailTheQpAfterTheRetryLimit) {
  for (const bool backoff : {false, true}) {
    TwoHosts h(std::string("rto_base = \"4096ns\"\nrto_exponent = 2\nretry_limit = 3\n") +
                   "rto_backoff = " + (backoff ? "true" : "false"),
               flow(5 * kMtu));
    h.rx->drop = [](uint64_t psn, int /*copy*/) { return psn == 4; };
    const RunResult r = h.execute();
    EXPECT_FALSE(r.flows[0].done);
    const Time rto = 16384_ns;
    const Time last_ack = kS * 3 + kDataPath + kControlPath;
    std::vector<Time> expiries;
    for (int64_t k = 1; k <= 3; ++k) {
      expiries.push_back(last_ack + rto * (backoff ? (int64_t{1} << k) - 1 : k));
    }
    EXPECT_EQ(trace_times(r, 't'), expiries) << "backoff " << backoff;
    EXPECT_EQ(psns(h.tx->sent, PacketType::kData), (std::vector<uint64_t>{0, 1, 2, 3, 4, 4, 4, 4}));
    for (size_t k = 0; k < 3; ++k) EXPECT_EQ(h.tx->sent[5 + k].at, expiries[k]) << k;
    EXPECT_EQ(h.stats().timeouts, 3U);
    EXPECT_EQ(r.flows[0].timeouts, 3U);
    EXPECT_EQ(h.stats().failed_qps, 1U);
    EXPECT_EQ(r.flows[0].delivered, 4 * kMtu);
  }
}

// Progress resets both the retry count and the backed-off timeout. retry_limit = 1, backoff on;
// 6 packets. First copies of PSNs 4 and 5 lost: expiry 1 at T1 = tA + rto resends 4 and 5. The
// second copy of 4 arrives (progress: ACK 5 at T1 + 2 sS + 4 d + 2 sC); the second copy of 5 is
// lost: expiry 2 comes one base rto (not 2 rto) after that ACK, and is retry 1 again, not 2 (so
// the QP does not fail); the third copy of 5 completes the flow.
TEST(RoceQp, ProgressResetsTheRetryCountAndTheBackoff) {
  TwoHosts h("rto_base = \"4096ns\"\nrto_exponent = 2\nretry_limit = 1\nrto_backoff = true",
             flow(6 * kMtu));
  h.rx->drop = [](uint64_t psn, int copy) {
    return (psn == 4 && copy == 0) || (psn == 5 && copy < 2);
  };
  const RunResult r = h.execute();
  ASSERT_TRUE(r.all_done);
  const Time rto = 16384_ns;
  const Time t1 = kS * 3 + kDataPath + kControlPath + rto;
  const Time progress = t1 + kDataPath + kControlPath;
  const Time t2 = progress + rto;
  EXPECT_EQ(trace_times(r, 't'), (std::vector<Time>{t1, t2}));
  EXPECT_EQ(psns(h.tx->sent, PacketType::kData),
            (std::vector<uint64_t>{0, 1, 2, 3, 4, 5, 4, 5, 5}));
  EXPECT_EQ(h.tx->sent[6].at, t1);
  EXPECT_EQ(h.tx->sent[7].at, t1 + kS);
  EXPECT_EQ(h.tx->sent[8].at, t2);
  EXPECT_EQ(psns(h.tx->received, PacketType::kAck), (std::vector<uint64_t>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(times(h.tx->received, PacketType::kAck)[4], progress);
  EXPECT_EQ(h.stats().timeouts, 2U);
  EXPECT_EQ(h.stats().failed_qps, 0U);
  EXPECT_EQ(r.flows[0].fct(), t2 + kDataPath);
}

}  // namespace
}  // namespace fabsim
