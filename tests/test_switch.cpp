// Switch unit tests: PFC XOFF/XON at the exact thresholds (static and dynamic), pause stopping
// one class while others go on, DWRR shares, RED/ECN marking, headroom sizing.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <vector>

#include "helpers.h"
#include "lb/ecmp.h"
#include "net/network.h"
#include "net/topology.h"

namespace fabsim {
namespace {
using namespace literals;

// A link of `rate`, 1 us of delay, no loss, 20 B of preamble and gap.
Link::Config link_1us(Rate rate) {
  Link::Config c;
  c.rate = rate;
  c.delay = 1_us;
  c.framing_bytes = 20;
  return c;
}

constexpr uint32_t kFrame = 4096 + 62;  // frame bytes of a full data packet
const Time kSer = serialization_delay(kFrame + 20, 100_Gbps);
const Time kPauseFrame = serialization_delay(64 + 20, 100_Gbps);

SelectorFactory ecmp_factory() {
  return [](uint32_t id) { return std::make_unique<EcmpSelector>(id); };
}

// Three hosts on one switch; host 0's downlink can be held paused so packets accumulate.
struct ThreeHosts {
  explicit ThreeHosts(const SwitchConfig& sw) : sim(1), net(sim), sink(sim) {
    SingleSwitchConfig cfg;
    cfg.hosts = 3;
    build_single_switch(net, cfg, sw, 20, ecmp_factory());
    sink_id = net.endpoints().add(&sink);
  }
  Switch& sw() { return net.sw(0); }
  void inject(uint32_t src, uint8_t tclass, uint64_t seq = 0) {
    sw().receive(test::make_packet(sim, src, 0, kFrame, tclass, sink_id, seq),
                 static_cast<uint16_t>(src));
  }
  Simulation sim;
  Network net;
  test::RecordingSink sink;
  uint32_t sink_id = 0;
};

SwitchConfig static_pfc() {
  SwitchConfig sw;
  sw.buffer.reserve = Bytes(0);
  sw.pfc.mode = PfcThreshold::kStatic;
  sw.pfc.xoff = Bytes(3 * kFrame);
  sw.pfc.xon = Bytes(kFrame);
  sw.ecn.enabled = false;
  return sw;
}

TEST(Pfc, StaticXoffAtThresholdThenHeadroom) {
  ThreeHosts t(static_pfc());
  t.sw().port(0).apply_pause(3, 65535);
  for (int k = 1; k <= 5; ++k) {
    t.inject(1, 3);
    EXPECT_EQ(t.sw().ingress_bytes(1, 3), std::min(k, 3) * int64_t{kFrame}) << "k=" << k;
    EXPECT_EQ(t.sw().headroom_bytes(1, 3), std::max(0, k - 3) * int64_t{kFrame}) << "k=" << k;
    EXPECT_EQ(t.sw().xoff_sent(1, 3), k >= 3) << "k=" << k;
  }
  EXPECT_EQ(t.sw().port(1).counters().pfc_sent, 1U);
  EXPECT_FALSE(t.sw().xoff_sent(2, 3));
  // The pause reaches host 1's NIC one pause frame + one propagation delay later.
  t.sim.run(kPauseFrame + 1_us - 1_ps);
  EXPECT_FALSE(t.net.host(1).port().paused(3));
  t.sim.run(kPauseFrame + 1_us);
  EXPECT_TRUE(t.net.host(1).port().paused(3));
  EXPECT_FALSE(t.net.host(1).port().paused(1));
  EXPECT_FALSE(t.net.host(2).port().paused(3));
}

TEST(Pfc, StaticXonAtThreshold) {
  ThreeHosts t(static_pfc());
  t.sw().port(0).apply_pause(3, 65535);
  for (int k = 1; k <= 5; ++k) t.inject(1, 3);
  t.sim.run(2_us);
  const Time resume = t.sim.now();
  t.sw().port(0).apply_pause(3, 0);  // dequeue 1 now, then one per serialization time
  // Dequeues drain headroom first (2 frames), then shared: 3, 2, then 1 frame = XON.
  t.sim.run(resume + kSer * 2);
  EXPECT_TRUE(t.sw().xoff_sent(1, 3));
  EXPECT_EQ(t.sw().headroom_bytes(1, 3), 0);
  EXPECT_EQ(t.sw().ingress_bytes(1, 3), 2 * int64_t{kFrame});
  t.sim.run(resume + kSer * 3);
  EXPECT_FALSE(t.sw().xoff_sent(1, 3));
  EXPECT_EQ(t.sw().port(1).counters().pfc_sent, 2U);
  t.sim.run();
  EXPECT_FALSE(t.net.host(1).port().paused(3));
  // Host 1 was paused from XOFF arrival to XON arrival: exactly resume + 3 serializations.
  EXPECT_EQ(t.net.host(1).port().paused_time(3), resume + kSer * 3);
  EXPECT_EQ(t.sink.arrivals.size(), 5U);
  t.net.finish();
  EXPECT_EQ(t.sim.pool().live(), 0U);
}

TEST(Pfc, DynamicThresholdMatchesFormula) {
  SwitchConfig cfg;
  cfg.buffer.size = Bytes(1 << 20);
  cfg.buffer.reserve = Bytes(0);
  cfg.ecn.enabled = false;
  ThreeHosts t(cfg);
  const int64_t headroom = Switch::auto_headroom(link_1us(100_Gbps), cfg.pfc, cfg.max_frame_bytes);
  EXPECT_EQ(t.sw().headroom_size(1), headroom);
  const int64_t free0 = (1 << 20) - 3 * headroom;  // three ports, one lossless class
  t.sw().port(0).apply_pause(3, 65535);
  int64_t shared = 0;
  int64_t hdrm = 0;
  bool xoff = false;
  int xoff_at = 0;
  uint64_t drops = 0;
  for (int k = 1; k <= 40; ++k) {
    // Independent restatement of REFERENCE.md §1.3 with alpha = 1/8.
    const int64_t thr = (free0 - shared) / 8;
    if (hdrm + kFrame > headroom && shared + kFrame > thr) {
      ++drops;  // headroom exhausted: the packet is dropped
    } else if (shared + kFrame > thr) {
      hdrm += kFrame;
    } else {
      shared += kFrame;
    }
    if (!xoff && (hdrm > 0 || shared >= (free0 - shared) / 8)) {
      xoff = true;
      xoff_at = k;
    }
    t.inject(1, 3);
    ASSERT_EQ(t.sw().ingress_bytes(1, 3), shared) << "k=" << k;
    ASSERT_EQ(t.sw().headroom_bytes(1, 3), hdrm) << "k=" << k;
    ASSERT_EQ(t.sw().xoff_sent(1, 3), xoff) << "k=" << k;
    ASSERT_EQ(t.sw().port(0).counters().drops, drops) << "k=" << k;
  }
  EXPECT_EQ(hdrm, 9 * int64_t{kFrame});  // 9 frames fit in 37,598 B of headroom
  EXPECT_GT(drops, 0U);
  EXPECT_GT(xoff_at, 20);
  EXPECT_LT(xoff_at, 40);
  EXPECT_EQ(t.sw().pfc_threshold(1), (free0 - shared) / 8);
  t.sw().port(0).apply_pause(3, 0);
  t.sim.run();
  EXPECT_FALSE(t.sw().xoff_sent(1, 3));
  EXPECT_EQ(t.sw().buffer_used(), 0);
  EXPECT_EQ(t.sw().shared_used(), 0);
}

TEST(Pfc, PausedClassStopsWhileOthersGoOn) {
  ThreeHosts t(static_pfc());
  t.sw().port(0).apply_pause(3, 65535);
  for (int i = 0; i < 3; ++i) t.inject(1, 3, i);
  for (int i = 0; i < 3; ++i) t.inject(2, 1, 10 + i);
  t.sim.run(100_us);
  ASSERT_EQ(t.sink.arrivals.size(), 3U);
  for (const auto& a : t.sink.arrivals) EXPECT_EQ(a.tclass, 1);
  EXPECT_EQ(t.sw().port(0).queued_packets(3), 3U);
  t.sw().port(0).apply_pause(3, 0);
  t.sim.run();
  EXPECT_EQ(t.sink.arrivals.size(), 6U);
}

TEST(Pfc, PauseExpiresAfterQuanta) {
  ThreeHosts t(static_pfc());
  // 100 quanta = 51,200 bit times = 512 ns at 100 Gbps.
  t.sw().port(0).apply_pause(3, 100);
  t.inject(1, 3);
  t.sim.run(511_ns);
  EXPECT_TRUE(t.sink.arrivals.empty());
  EXPECT_TRUE(t.sw().port(0).paused(3));
  t.sim.run(512_ns);
  EXPECT_FALSE(t.sw().port(0).paused(3));
  t.sim.run();
  ASSERT_EQ(t.sink.arrivals.size(), 1U);
  EXPECT_EQ(t.sink.arrivals[0].at, 512_ns + kSer + 1_us);
  EXPECT_EQ(t.sw().port(0).paused_time(3), 512_ns);
}

// A MAC holds the pause state, not a queue of pause frames: a refresh that finds the last pause
// frame still waiting for the wire (behind a data frame) sends nothing. 8 quanta = 4,096 bit
// times: a refresh every 20.48 ns. Port 1 serializes a full data frame until kSer = 334.24 ns,
// so the XOFF of time 0 waits until then; the 16 refreshes before it send nothing (before the
// fix: 16 more frames queued), the 17th, at 348.16 ns, sends the second frame.
TEST(Pfc, RefreshWaitsForTheQueuedPauseFrame) {
  SwitchConfig cfg = static_pfc();
  cfg.pfc.pause_quanta = 8;
  ThreeHosts t(cfg);
  t.sw().port(0).apply_pause(3, 65535);
  t.sw().receive(test::make_packet(t.sim, 2, 1, kFrame, 1, t.sink_id), 2);  // busy port 1
  for (int i = 0; i < 3; ++i) t.inject(1, 3, i);
  ASSERT_TRUE(t.sw().xoff_sent(1, 3));
  EXPECT_EQ(t.sw().pfc_waiting(1, 3), 1U);
  t.sim.run(kSer - 1_ps);
  EXPECT_EQ(t.sw().port(1).counters().pfc_sent, 1U);
  EXPECT_EQ(t.sw().pfc_waiting(1, 3), 1U);
  t.sim.run(kSer);
  EXPECT_EQ(t.sw().pfc_waiting(1, 3), 0U);
  const Time tick = Time::ns(20) + Time::ps(480);
  t.sim.run(tick * 17 - 1_ps);
  EXPECT_EQ(t.sw().port(1).counters().pfc_sent, 1U);
  t.sim.run(tick * 17);
  EXPECT_EQ(t.sw().port(1).counters().pfc_sent, 2U);
  EXPECT_EQ(t.sw().pfc_waiting(1, 3), 0U);
}

// The wait is per class: a waiting pause frame of class 3 does not hold back the refresh of
// class 2, whose own frame has left. 8 quanta: refreshes every 20.48 ns from the XOFF of class
// 2 at time 0. Port 1 sends that XOFF (0 - 6.72 ns), then a data frame (6.72 - 340.96 ns);
// class 3's XOFF, at 10 ns, waits behind it. At 20.48 ns class 2 is refreshed (before: not,
// the port had a frame waiting), and waits too; at 348.16 ns both go again.
TEST(Pfc, ARefreshWaitsOnlyForAFrameOfItsOwnClass) {
  SwitchConfig cfg = static_pfc();
  cfg.pfc.pause_quanta = 8;
  cfg.pfc.lossless_mask = (1U << 2) | (1U << 3);
  ThreeHosts t(cfg);
  t.sw().port(0).apply_pause(2, 65535);
  t.sw().port(0).apply_pause(3, 65535);
  for (int i = 0; i < 3; ++i) t.inject(1, 2, i);
  t.sw().receive(test::make_packet(t.sim, 2, 1, kFrame, 1, t.sink_id), 2);
  t.sim.run(10_ns);
  for (int i = 0; i < 3; ++i) t.inject(1, 3, 10 + i);
  ASSERT_TRUE(t.sw().xoff_sent(1, 2) && t.sw().xoff_sent(1, 3));
  const Time tick = Time::ns(20) + Time::ps(480);
  t.sim.run(tick);
  EXPECT_EQ(t.sw().port(1).counters().pfc_sent, 3U);
  EXPECT_EQ(t.sw().pfc_waiting(1, 2), 1U);
  EXPECT_EQ(t.sw().pfc_waiting(1, 3), 1U);
  t.sim.run(tick * 17 - 1_ps);
  EXPECT_EQ(t.sw().port(1).counters().pfc_sent, 3U);
  t.sim.run(tick * 17);
  EXPECT_EQ(t.sw().port(1).counters().pfc_sent, 5U);
}

// A pause of one quantum (512 bit times, 5.12 ns at 100 Gb/s) is shorter than a pause frame
// on the wire (84 B, 6.72 ns): refreshes come one frame time apart, never faster than the port
// sends them, so no pause frame ever waits. Before, a refresh every 2.56 ns queued frames 2.6
// times faster than the link took them (a soak scenario held 49 million at its end).
TEST(Pfc, OneQuantumRefreshesAtTheWireRateOfPauseFrames) {
  SwitchConfig cfg = static_pfc();
  cfg.pfc.pause_quanta = 1;
  ThreeHosts t(cfg);
  t.sw().port(0).apply_pause(3, 65535);
  for (int i = 0; i < 3; ++i) t.inject(1, 3, i);
  ASSERT_TRUE(t.sw().xoff_sent(1, 3));
  for (Time at = 50_ns; at <= 2_us; at += 50_ns) {
    t.sim.run(at);
    ASSERT_EQ(t.sw().pfc_waiting(1, 3), 0U) << to_string(at);
    ASSERT_EQ(t.sw().port(1).queued_bytes(kControlClass), 0) << to_string(at);
  }
  // Frames at 0 and at k x 6.72 ns for k = 1 .. 297 (297 x 6.72 = 1,995.84 ns).
  EXPECT_EQ(t.sw().port(1).counters().pfc_sent, 298U);
}

// Weights 1 and 3, equal full frames, quantum = weight x max frame = one frame per weight unit.
// Class 1's first frame leaves alone (unpaused first: one eligible class bypasses DWRR); then
// both are backlogged and each round is 1 frame of class 1, 3 of class 2, until class 2's 40th
// frame in round 14; class 1's remaining 25 follow. The link never idles: frame k (from 0)
// arrives at (k + 1) sS + 1 us.
TEST(Dwrr, WeightsShareTheLink) {
  SwitchConfig cfg = static_pfc();
  cfg.pfc.enabled = false;
  cfg.dwrr_weights = {1, 1, 3, 1, 1, 1, 1, 1};
  ThreeHosts t(cfg);
  t.sw().port(0).apply_pause(1, 65535);
  t.sw().port(0).apply_pause(2, 65535);
  for (int i = 0; i < 40; ++i) t.inject(1, 1, i);
  for (int i = 0; i < 40; ++i) t.inject(2, 2, i);
  t.sw().port(0).apply_pause(1, 0);
  t.sw().port(0).apply_pause(2, 0);
  t.sim.run();
  std::vector<uint8_t> expected{1};
  for (int round = 1; round <= 13; ++round) expected.insert(expected.end(), {1, 2, 2, 2});
  expected.insert(expected.end(), {1, 2});
  expected.insert(expected.end(), 25, 1);
  ASSERT_EQ(t.sink.arrivals.size(), 80U);
  std::vector<uint8_t> got;
  for (size_t k = 0; k < t.sink.arrivals.size(); ++k) {
    got.push_back(t.sink.arrivals[k].tclass);
    EXPECT_EQ(t.sink.arrivals[k].at, kSer * static_cast<int64_t>(k + 1) + 1_us) << k;
  }
  EXPECT_EQ(got, expected);
  int class2 = 0;
  for (int i = 1; i <= 40; ++i) class2 += t.sink.arrivals[i].tclass == 2;
  EXPECT_EQ(class2, 30);  // 10 rounds of 1 + 3: exactly w2 / (w1 + w2) of 40 frames
}

// A pause frame goes ahead of queued control traffic (a MAC sends PFC frames first, behind only
// the frame on the wire: the headroom counts on it), and pause frames keep their own order.
// Port 0 is busy with a data frame from t = 0 and holds 4 queued control frames; an XOFF then an
// XON for class 1 are put on it. The control frames reach host 0 two pause frames late, and
// host 0's class 1 ends unpaused (XOFF applied first, then XON).
TEST(Pfc, PauseFramesGoAheadOfQueuedControlTrafficInTheirOwnOrder) {
  SwitchConfig cfg = static_pfc();
  cfg.pfc.enabled = false;
  ThreeHosts t(cfg);
  t.inject(1, 1, 0);
  constexpr uint32_t kCtrl = 64;
  for (int i = 0; i < 4; ++i) {
    t.sw().receive(test::make_packet(t.sim, 2, 0, kCtrl, kControlClass, t.sink_id, 10 + i), 2);
  }
  for (const uint16_t quanta : {uint16_t{65535}, uint16_t{0}}) {
    Packet* f = t.sim.pool().acquire();
    f->type = PacketType::kPfc;
    f->size = 64;
    f->tclass = kControlClass;
    f->set_ext(PfcInfo{1, quanta});
    t.sim.ledger().inject(*f);
    t.sw().port(0).enqueue_pause(f);
  }
  t.sim.run();
  ASSERT_EQ(t.sink.arrivals.size(), 5U);
  const Time ctrl = serialization_delay(kCtrl + 20, 100_Gbps);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(t.sink.arrivals[1 + i].at, kSer + kPauseFrame * 2 + ctrl * (i + 1) + 1_us) << i;
  }
  EXPECT_FALSE(t.net.host(0).port().paused(1));
  EXPECT_GT(t.net.host(0).port().paused_time(1), Time());  // the XOFF did arrive first
}

// A NIC's control line carries ACKs in the switches' data class when ack_class = "data": while
// the switch pauses that class the line waits (ns-3's RdmaEgressQueue serves its ACK queue only
// if the ACK class is not paused), head first, so a control-class packet behind it waits too.
// A pause of another class holds nothing.
TEST(Pfc, ANicsAckInAPausedDataClassWaitsForTheResume) {
  SwitchConfig cfg = static_pfc();
  cfg.pfc.enabled = false;
  ThreeHosts t(cfg);
  EgressPort& nic = t.net.host(1).port();
  constexpr uint32_t kCtrl = 64;
  auto control = [&t](uint8_t cls, uint64_t seq) {
    Packet* p = test::make_packet(t.sim, 1, 0, kCtrl, kControlClass, t.sink_id, seq);
    p->type = PacketType::kAck;
    t.sim.ledger().inject(*p);
    t.net.host(1).send_control(p, cls);
  };
  nic.apply_pause(3, 65535);
  control(3, 1);              // an ACK the switches carry in class 3
  control(kControlClass, 2);  // a CNP behind it
  t.sim.run(100_us);
  EXPECT_TRUE(t.sink.arrivals.empty());
  EXPECT_EQ(nic.queued_packets(kControlClass), 2U);
  const Time resumed = t.sim.now();
  nic.apply_pause(3, 0);
  t.sim.run();
  ASSERT_EQ(t.sink.arrivals.size(), 2U);
  EXPECT_EQ(t.sink.arrivals[0].seq, 1U);
  EXPECT_EQ(t.sink.arrivals[0].tclass, 3);
  EXPECT_EQ(t.sink.arrivals[1].seq, 2U);
  const Time ctrl = serialization_delay(kCtrl + 20, 100_Gbps);
  EXPECT_EQ(t.sink.arrivals[0].at, resumed + ctrl * 2 + 2_us);  // two hops from the resume
  // A pause of another class does not hold it.
  nic.apply_pause(1, 65535);
  const Time sent = t.sim.now();
  control(3, 3);
  t.sim.run();
  ASSERT_EQ(t.sink.arrivals.size(), 3U);
  EXPECT_EQ(t.sink.arrivals[2].at, sent + ctrl * 2 + 2_us);
}

// The trimmed headers' cap (UE spec §4.1, REFERENCE.md §4.4): with share s, while data waits a
// trimmed header goes only once data has paid back its bytes at s / (1 - s) of them, so equal
// frames alternate 1 : 1 at s = 0.5 and 1 : 3 at s = 0.25. Other control packets (an ACK) keep
// strict priority, and with no data waiting the headers go back to back. Without a cap
// (strict priority) the 12 headers all go first. A data frame is on the wire from t = 0; then 12
// trimmed headers (seq 100..111, an ACK, seq 999, second among them) and 12 data frames queue.
TEST(TrimmedShare, TrimmedHeadersTakeAtMostTheirShareWhileDataWaits) {
  auto order = [](double share) {
    SwitchConfig cfg = static_pfc();
    cfg.pfc.enabled = false;
    ThreeHosts t(cfg);
    if (share < 1) t.sw().port(0).set_trimmed_share(share);
    t.inject(1, 1, 0);
    for (int i = 0; i < 13; ++i) {
      Packet* p = test::make_packet(t.sim, 2, 0, kFrame, kControlClass, t.sink_id,
                                    i == 1 ? 999 : 100 + i - (i > 1 ? 1 : 0));
      if (i != 1) p->flags = kTrimmed;
      t.sw().receive(p, 2);
    }
    for (int i = 1; i <= 12; ++i) t.inject(1, 1, i);
    t.sim.run();
    std::string out;
    for (size_t k = 1; k < t.sink.arrivals.size(); ++k) {
      const auto& a = t.sink.arrivals[k];
      out += a.tclass == 1 ? 'D' : a.seq == 999 ? 'A' : 'T';
    }
    return out;
  };
  EXPECT_EQ(order(1.0), "TATTTTTTTTTTTDDDDDDDDDDDD");
  EXPECT_EQ(order(0.5), "TADTDTDTDTDTDTDTDTDTDTDTD");
  EXPECT_EQ(order(0.25), "TADDDTDDDTDDDTDDDTTTTTTTT");
}

// Three backlogged classes with weights 1, 2, 3 and frames of 3000, 4158 and 1500 B; the
// quantum is Q_i = w_i x M, M = 4158 B (max frame). A class-0 frame injected first occupies the
// link while the others queue, so DWRR starts with all three backlogged at class 1.
// Closed forms (Shreedhar & Varghese's deficit round robin): the deficit carries over and is
// always below the class's frame size, so after k complete rounds class i has sent exactly
// n_i(k) = floor(k Q_i / size_i) frames. Over any prefix while all are backlogged, its bytes S_i
// and the total T satisfy |S_i - p_i T| < Q_i + M, p_i = w_i / W, W = sum of weights. Proof:
// after k rounds and part of round k + 1, S_j = k Q_j - D_j + x_j, with the deficit
// 0 <= D_j < M and x_j <= Q_j + D_j sent so far in round k + 1. With a_j = x_j - D_j in
// (-M, Q_j], S_i - p_i T = (1 - p_i) a_i - p_i sum_{j != i} a_j, which lies between
// -(1 - p_i)(Q_i + M) and (1 - p_i) Q_i + p_i (n - 1) M; the latter is below Q_i + M when
// p_i (n - 1) <= 1, true here (n = 3 classes, p_i = 1/6, 1/3, 1/2).
TEST(Dwrr, BackloggedSharesMatchWeightsWithinAQuantumPlusAFrame) {
  SwitchConfig cfg = static_pfc();
  cfg.pfc.enabled = false;
  cfg.dwrr_weights = {1, 1, 2, 3, 1, 1, 1, 1};
  ThreeHosts t(cfg);
  constexpr int64_t kM = 4096 + 62;
  const int64_t weight[4] = {0, 1, 2, 3};
  const int64_t size[4] = {kM, 3000, 4158, 1500};
  const int count[4] = {1, 30, 44, 180};
  constexpr int64_t kW = 6;
  for (uint8_t c = 0; c < 4; ++c) {
    for (int i = 0; i < count[c]; ++i) {
      t.sw().receive(test::make_packet(t.sim, 1, 0, static_cast<uint32_t>(size[c]), c, t.sink_id,
                                       static_cast<uint64_t>(i)),
                     1);
    }
  }
  t.sim.run();
  ASSERT_EQ(t.sink.arrivals.size(), 255U);
  ASSERT_EQ(t.sink.arrivals[0].tclass, 0);
  // The link never idles: each frame arrives its own serialization after the previous one.
  Time at = 1_us;
  for (const auto& a : t.sink.arrivals) {
    at += serialization_delay(size[a.tclass] + 20, 100_Gbps);
    ASSERT_EQ(a.at, at);
  }
  // The exact order of rounds 1..21 (class 1 runs out in round 22): class 1 x (n_1(k) -
  // n_1(k-1)), then class 2, then class 3.
  constexpr int kRounds = 21;
  std::vector<uint8_t> expected;
  std::vector<size_t> round_end;
  for (int64_t k = 1; k <= kRounds; ++k) {
    for (uint8_t c = 1; c <= 3; ++c) {
      const int64_t q = weight[c] * kM;
      const int64_t more = k * q / size[c] - (k - 1) * q / size[c];
      ASSERT_LT(k * q / size[c], count[c]) << "class " << int{c} << " still backlogged";
      expected.insert(expected.end(), static_cast<size_t>(more), c);
    }
    round_end.push_back(expected.size());
  }
  std::vector<uint8_t> got;
  for (size_t k = 1; k <= expected.size(); ++k) got.push_back(t.sink.arrivals[k].tclass);
  EXPECT_EQ(got, expected);
  // The share bound at every prefix while all three are backlogged, and n_i(k) at round ends.
  int64_t served[4] = {0, 0, 0, 0};
  int64_t total = 0;
  size_t round = 0;
  for (size_t k = 1; k <= expected.size(); ++k) {
    const uint8_t c = t.sink.arrivals[k].tclass;
    served[c] += size[c];
    total += size[c];
    for (int i = 1; i <= 3; ++i) {
      const int64_t dev = std::abs(served[i] * kW - weight[i] * total);  // W x |S_i - w_i/W T|
      ASSERT_LT(dev, (weight[i] * kM + kM) * kW) << "class " << i << " after " << k << " frames";
    }
    if (k == round_end[round]) {
      ++round;
      for (int i = 1; i <= 3; ++i) {
        const int64_t q = weight[i] * kM;
        ASSERT_EQ(served[i], static_cast<int64_t>(round) * q / size[i] * size[i])
            << "class " << i << " after round " << round;
      }
    }
  }
  EXPECT_EQ(round, static_cast<size_t>(kRounds));
  t.net.finish();
  EXPECT_EQ(t.sim.pool().live(), 0U);
}

TEST(Ecn, MarkingProbabilityFormula) {
  EcnConfig e;
  e.kmin = Bytes(5000);
  e.kmax = Bytes(205000);
  e.pmax = 0.2;
  EXPECT_DOUBLE_EQ(ecn_mark_probability(0, e), 0.0);
  EXPECT_DOUBLE_EQ(ecn_mark_probability(5000, e), 0.0);
  EXPECT_DOUBLE_EQ(ecn_mark_probability(105000, e), 0.1);
  EXPECT_DOUBLE_EQ(ecn_mark_probability(205000, e), 0.2);
  EXPECT_DOUBLE_EQ(ecn_mark_probability(205001, e), 1.0);
}

TEST(Ecn, MarkingFrequencyAtKminMidwayKmax) {
  EcnConfig e;
  e.kmin = Bytes(5000);
  e.kmax = Bytes(205000);
  e.pmax = 0.2;
  RedMarker m(e, Rng(1234, 1));
  constexpr int kTrials = 100000;
  auto count = [&](int64_t q) {
    int marks = 0;
    for (int i = 0; i < kTrials; ++i) marks += m.mark(q);
    return marks;
  };
  EXPECT_EQ(count(5000), 0);
  // Binomial: sd = sqrt(n p (1-p)) = 95 at p = 0.1 and 126 at p = 0.2; allow 4 sd.
  EXPECT_NEAR(count(105000), 10000, 380);
  EXPECT_NEAR(count(205000), 20000, 506);
  EXPECT_EQ(count(205001), kTrials);
}

// The buffer is the headroom set apart (2 frames per port here, 3 ports: 6 frames) and the rest
// (5 frames). Lossless class 3 fills the rest to its XOFF (3 frames) and 2 frames of headroom;
// lossy class 1 then finds 2 frames of the rest free: the headroom bytes in use are inside the
// headroom, not in the rest (they were counted in both until 2026-11-29, and the lossy class
// found no room at all). Lossy bytes take no per-port reserve: the reserve is per lossless class.
TEST(Headroom, BytesInTheHeadroomDoNotShrinkTheRestOfTheBuffer) {
  SwitchConfig sw = static_pfc();
  sw.pfc.headroom = Bytes(2 * kFrame);
  sw.buffer.size = Bytes(11 * kFrame);
  sw.buffer.egress_alpha = 100;  // the buffer alone decides
  ThreeHosts t(sw);
  EXPECT_EQ(t.sw().total_headroom(), 6 * int64_t{kFrame});
  t.sw().port(0).apply_pause(3, 65535);
  t.sw().port(0).apply_pause(1, 65535);
  for (int k = 0; k < 5; ++k) t.inject(1, 3);
  EXPECT_EQ(t.sw().ingress_bytes(1, 3), 3 * int64_t{kFrame});
  EXPECT_EQ(t.sw().headroom_bytes(1, 3), 2 * int64_t{kFrame});
  for (int k = 0; k < 3; ++k) t.inject(2, 1);
  EXPECT_EQ(t.sw().ingress_bytes(2, 1), 2 * int64_t{kFrame});
  EXPECT_EQ(t.sw().port(0).counters().buffer_drops, 1U);
  EXPECT_EQ(t.sw().buffer_used(), 7 * int64_t{kFrame});
  // Draining gives every byte back: headroom first, then the shared pool.
  t.sw().port(0).apply_pause(3, 0);
  t.sw().port(0).apply_pause(1, 0);
  t.sim.run();
  EXPECT_EQ(t.sw().buffer_used(), 0);
  EXPECT_EQ(t.sink.arrivals.size(), 7U);
  t.net.finish();
  EXPECT_EQ(t.sim.pool().live(), 0U);
}

// The buffer (11 frames) is the headroom (2 frames x 3 ports), the lossless class's reserve
// (1 frame x 3 ports) and a shared pool of 2 frames. Lossy class 1 gets the shared pool only:
// 2 of 4 frames, although no lossless byte is held. The unused reserve stays for the lossless
// class, whose next frame takes it. Until 2026-11-29 the unused reserve counted as free: the
// lossy class took all 4 frames, and with the three reserves filled the buffer would have held
// 7 frames in the 5 outside the headroom.
TEST(Headroom, LossyTrafficLeavesTheUnusedReserve) {
  SwitchConfig sw = static_pfc();
  sw.buffer.reserve = Bytes(kFrame);
  sw.pfc.headroom = Bytes(2 * kFrame);
  sw.buffer.size = Bytes(11 * kFrame);
  sw.buffer.egress_alpha = 100;  // the buffer alone decides
  ThreeHosts t(sw);
  EXPECT_EQ(t.sw().total_headroom(), 6 * int64_t{kFrame});
  EXPECT_EQ(t.sw().total_reserve(), 3 * int64_t{kFrame});
  t.sw().port(0).apply_pause(1, 65535);
  t.sw().port(0).apply_pause(3, 65535);
  for (int k = 0; k < 4; ++k) t.inject(2, 1);
  EXPECT_EQ(t.sw().ingress_bytes(2, 1), 2 * int64_t{kFrame});
  EXPECT_EQ(t.sw().port(0).counters().buffer_drops, 2U);
  t.inject(1, 3);
  EXPECT_EQ(t.sw().ingress_bytes(1, 3), int64_t{kFrame});
  EXPECT_EQ(t.sw().shared_used(), 2 * int64_t{kFrame});  // the lossless frame is in its reserve
  EXPECT_EQ(t.sw().buffer_used(), 3 * int64_t{kFrame});
  t.sw().port(0).apply_pause(1, 0);
  t.sw().port(0).apply_pause(3, 0);
  t.sim.run();
  EXPECT_EQ(t.sw().buffer_used(), 0);
  EXPECT_EQ(t.sink.arrivals.size(), 3U);
  t.net.finish();
  EXPECT_EQ(t.sim.pool().live(), 0U);
}

TEST(Headroom, AutoSizeFromLink) {
  PfcConfig pfc;
  // The frame that crosses the threshold + 2 x BDP (12,500 B at 100G x 1us) + 2 max frames on
  // the wire + one pause frame.
  EXPECT_EQ(Switch::auto_headroom(link_1us(100_Gbps), pfc, kFrame),
            kFrame + 2 * 12500 + 2 * (kFrame + 20) + 84);
  pfc.response_time = 100_ns;
  EXPECT_EQ(Switch::auto_headroom(link_1us(400_Gbps), pfc, kFrame),
            kFrame + 2 * 50000 + 2 * (kFrame + 20) + 84 + 5000);
}

}  // namespace
}  // namespace fabsim
