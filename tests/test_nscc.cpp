// NSCC (REFERENCE.md §4.5, §9.3.3) as a state machine driven by scripted signals, each value
// worked out by hand below; then two RoCE senders under NSCC sharing a bottleneck.
#include <gtest/gtest.h>

#include <algorithm>  // min, max
#include <map>        // bytes per flow
#include <string>     // scenarios

#include "cc/nscc/nscc.h"
#include "conserved.h"
#include "helpers.h"
#include "scenario/runner.h"
#include "scenario/scenario.h"
#include "transport/roce.h"

namespace fabsim {
namespace {
using namespace literals;

// htsim's auto 3-tier fat tree at 100 Gb/s (§9.3.3): rtt = 2 x 6 x 1 us + 6 x (4150 + 64) x
// 8 / 100 ns = 12,000 + 2,022.72 ns; MSS 4086 (MTU 4150 - 64); trimming on.
CcContext htsim_fat_tree() {
  CcContext ctx;
  ctx.line = 100_Gbps;
  ctx.base_rtt = Time::ps(14'022'720);
  ctx.mss = 4086;
  ctx.header_bytes = 64;  // uet-htsim's data header
  ctx.trimming = true;
  return ctx;
}

// Round numbers for the state tests: 100 Gb/s, rtt 12 us, MSS 4096, no trimming. Derived:
// BDP 150,000 B; a = 1; target = 12 us; b = 1; alpha = 4 x 4096 / 12e6 ps = 16384 / 12e6;
// fi = 20,480; eta = 614.4; fi_scale = 0.25; MTU 4,160; maxwnd 225,000; adjust 33,280 B or
// 12 us; qa_threshold 48 us; quick adapt below 225,000 / 8 = 28,125 B achieved.
CcContext round_ctx() {
  CcContext ctx;
  ctx.line = 100_Gbps;
  ctx.base_rtt = 12_us;
  ctx.mss = 4096;
  ctx.header_bytes = 64;
  return ctx;
}
constexpr double kAlpha = 16384 / 12e6;

// An ACK reporting `received` frame bytes; `rtt` = 12 us + the queueing delay.
AckSignal ack(Time now, int64_t received, Time rtt, bool ecn = false, int64_t in_flight = 0) {
  AckSignal a{now, Bytes(received)};
  a.received = Bytes(received);
  a.rtt = rtt;
  a.ecn_echo = ecn;
  a.in_flight = Bytes(in_flight);
  a.counts_bytes = true;
  return a;
}

NackSignal trim(Time now, bool last_hop, int64_t in_flight = 0) {
  NackSignal n{now, Bytes(), Bytes(4096)};
  n.trimmed = true;
  n.last_hop = last_hop;
  n.in_flight = Bytes(in_flight);
  return n;
}

NsccConfig starting_at(int64_t cwnd) {
  NsccConfig c;
  c.initial_cwnd = Bytes(cwnd);
  return c;
}

TEST(Nscc, DerivedParams) {
  // §9.3.3's printout for 100G / 14.02 us: target 10.517 us, alpha 0.00159158, fi 23,873.7,
  // eta 716.21, maxwnd 262,926 B. By hand: BDP = 100e9 x 14.02272e-6 / 8 = 175,284 B;
  // a = 175,284 / 150,000 = 1.16856; target = 0.75 x 14,022,720 = 10,517,040 ps;
  // alpha = 4 x 4086 x a x b / target = 4 x 4086 x a / 12e6 = 0.0015915787;
  // fi = 5 x 4086 x a = 23,873.68; eta = 0.15 x 4086 x a = 716.2104; maxwnd = 1.5 BDP.
  const NsccCc cc(NsccConfig{}, htsim_fat_tree());
  const NsccParams& p = cc.params();
  EXPECT_NEAR(p.target / 10.517e6, 1, 1e-4);
  EXPECT_NEAR(p.alpha / 0.00159158, 1, 1e-4);
  EXPECT_NEAR(p.fi / 23873.7, 1, 1e-4);
  EXPECT_NEAR(p.eta / 716.21, 1, 1e-4);
  EXPECT_NEAR(p.maxwnd / 262926, 1, 1e-4);
  EXPECT_EQ(p.mtu, 4150);
  EXPECT_DOUBLE_EQ(p.bdp, 175284);
  EXPECT_DOUBLE_EQ(p.target, 10'517'040);
  EXPECT_DOUBLE_EQ(p.maxwnd, 262926);
  EXPECT_DOUBLE_EQ(cc.cwnd(), 262926);  // initial cwnd = maxwnd
  EXPECT_EQ(cc.output().window.count(), 262926);
  EXPECT_EQ(cc.output().rate, 100_Gbps);
  EXPECT_DOUBLE_EQ(p.qa_threshold, 4 * 10'517'040.0);
  EXPECT_DOUBLE_EQ(p.adjust_bytes, 8 * 4150.0);
  EXPECT_DOUBLE_EQ(p.adjust_period, 14'022'720);
  EXPECT_DOUBLE_EQ(p.min_cwnd, 4150);
  EXPECT_NEAR(p.fi_scale, 0.25 * 1.16856, 1e-12);
  EXPECT_DOUBLE_EQ(p.gamma, 0.8);
  EXPECT_DOUBLE_EQ(p.delay_ewma, 0.0125);
  EXPECT_EQ(p.qa_gate, 3);

  // leaf_spine_1024.topo (§9.3.3: rtt 9.34848 us, BDP 116,856 B); no printout there, so from the
  // formulas: a = 116,856 / 150,000 = 0.77904; target = 0.75 x 9,348,480 = 7,011,360 ps;
  // alpha = 4 x 4086 x 0.77904 / 12e6 = 0.00106105248; fi = 5 x 4086 x 0.77904 = 15,915.7872;
  // eta = 0.15 x 4086 x 0.77904 = 477.473616; maxwnd = 1.5 x 116,856 = 175,284 B.
  CcContext leaf_spine = htsim_fat_tree();
  leaf_spine.base_rtt = Time::ps(9'348'480);
  const NsccParams q = NsccCc(NsccConfig{}, leaf_spine).params();
  EXPECT_DOUBLE_EQ(q.bdp, 116856);
  EXPECT_NEAR(q.target / 7.01136e6, 1, 1e-4);
  EXPECT_NEAR(q.alpha / 0.00106105248, 1, 1e-4);
  EXPECT_NEAR(q.fi / 15915.7872, 1, 1e-4);
  EXPECT_NEAR(q.eta / 477.473616, 1, 1e-4);
  EXPECT_NEAR(q.maxwnd / 175284, 1, 1e-4);

  // Without trimming the target is the whole rtt.
  CcContext no_trim = htsim_fat_tree();
  no_trim.trimming = false;
  EXPECT_DOUBLE_EQ(NsccCc(NsccConfig{}, no_trim).params().target, 14'022'720);
  // A key overrides a derived value.
  NsccConfig c;
  c.target = 5_us;
  c.fi = 1000;
  EXPECT_DOUBLE_EQ(NsccCc(c, no_trim).params().target, 5e6);
  EXPECT_DOUBLE_EQ(NsccCc(c, no_trim).params().fi, 1000);
  EXPECT_TRUE(NsccCc(c, no_trim).needs().ecn_echo);
}

// The MTU counts the transport's own data header unless the key gives one: UET's 102-byte
// frame header gives 4,086 + 102 = 4,188 (adjust_bytes 8 MTUs = 33,504, min_cwnd one MTU);
// header_bytes = 64 gives uet-htsim's 4,150 whatever the transport's header.
TEST(Nscc, TheMtuCountsTheTransportsHeaderUnlessTheKeyGivesOne) {
  CcContext uet = htsim_fat_tree();
  uet.header_bytes = 102;
  const NsccParams p = NsccCc(NsccConfig{}, uet).params();
  EXPECT_EQ(p.header_bytes, 102);
  EXPECT_EQ(p.mtu, 4188);
  EXPECT_DOUBLE_EQ(p.adjust_bytes, 8 * 4188.0);
  EXPECT_DOUBLE_EQ(p.min_cwnd, 4188);
  NsccConfig key;
  key.header_bytes = 64;
  EXPECT_EQ(NsccCc(key, uet).params().mtu, 4150);
  // A timeout that does not report its size takes one MTU off the window: the transport's.
  NsccCc cc(starting_at(100'000), uet);
  cc.on_timeout({2_us, 2});
  EXPECT_DOUBLE_EQ(cc.cwnd(), 100'000 - 4188);
}

TEST(Nscc, Quadrants) {
  const CcContext ctx = round_ctx();
  {  // No ECN, delay 13 us >= target 12 us: fair increase. inc = 20,480 x 37,440 =
     // 766,771,200; 37,440 > 33,280 received: adjust, cwnd = 100,000 + inc / 100,000 =
     // 107,667.712 (1 us since the start: no eta). The average is fed base / 4 = 3 us instead
     // of 13 us: 0.0125 x 3e6 = 37,500 ps.
    NsccCc cc(starting_at(100000), ctx);
    cc.on_ack(ack(1_us, 37440, 25_us));
    EXPECT_NEAR(cc.cwnd(), 107667.712, 1e-6);
    EXPECT_DOUBLE_EQ(cc.inc_bytes(), 0);
    EXPECT_NEAR(cc.avg_delay(), 37500, 1e-6);
  }
  {  // No ECN, delay 4 us < target: proportional increase. inc = alpha x 37,440 x 8e6 =
     // 16,384 x 24,960 = 408,944,640; cwnd = 100,000 + 4,089.4464. Average 0.0125 x 4e6.
    NsccCc cc(starting_at(100000), ctx);
    cc.on_ack(ack(1_us, 37440, 16_us));
    EXPECT_NEAR(cc.cwnd(), 104089.4464, 1e-6);
    EXPECT_NEAR(cc.avg_delay(), 50000, 1e-6);
  }
  {  // ECN, delay 20 us >= target: multiplicative decrease once the average passes the target.
     // EWMA weight 0.5: first sample avg = 10 us <= 12 us, no cut; second avg = 15 us:
     // cwnd x max(1 - 0.8 x 3 / 15, 0.5) = 100,000 x 0.84 = 84,000.
    NsccConfig c = starting_at(100000);
    c.delay_ewma = 0.5;
    NsccCc cc(c, ctx);
    cc.on_ack(ack(1_us, 4160, 32_us, true));
    EXPECT_DOUBLE_EQ(cc.cwnd(), 100000);
    EXPECT_DOUBLE_EQ(cc.avg_delay(), 10e6);
    cc.on_ack(ack(1_us, 4160, 32_us, true));
    EXPECT_DOUBLE_EQ(cc.avg_delay(), 15e6);
    EXPECT_NEAR(cc.cwnd(), 84000, 1e-9);
  }
  {  // ECN, delay 4 us < target: the window stays; the average takes the sample as it is.
    NsccCc cc(starting_at(100000), ctx);
    cc.on_ack(ack(1_us, 37440, 16_us, true));
    EXPECT_DOUBLE_EQ(cc.cwnd(), 100000);
    EXPECT_DOUBLE_EQ(cc.inc_bytes(), 0);
    EXPECT_NEAR(cc.avg_delay(), 50000, 1e-6);
  }
  {  // Fast increase: delay under 1 us for more than a window of bytes. 12,000 > cwnd 10,000:
     // cwnd += 12,000 x 0.25 = 13,000; it stays on while the delay stays under 1 us: +4,000 x
     // 0.25 = 14,000. Delay 2 us ends it: proportional, inc = alpha x 4,000 x 10e6 =
     // 54,613,333.33 (20,000 received, 3 us: no adjustment yet).
    NsccCc cc(starting_at(10000), ctx);
    cc.on_ack(ack(1_us, 12000, 12_us));
    EXPECT_DOUBLE_EQ(cc.cwnd(), 13000);
    EXPECT_TRUE(cc.fast_increasing());
    cc.on_ack(ack(2_us, 4000, 12_us + 500_ns));
    EXPECT_DOUBLE_EQ(cc.cwnd(), 14000);
    cc.on_ack(ack(3_us, 4000, 14_us));
    EXPECT_FALSE(cc.fast_increasing());
    EXPECT_DOUBLE_EQ(cc.cwnd(), 14000);
    EXPECT_NEAR(cc.inc_bytes(), kAlpha * 4000 * 10e6, 1e-6);
    EXPECT_NEAR(cc.inc_bytes(), 54613333.333333, 1e-3);
    // Periodic adjustment: 13 us > 12 us since the start. inc += alpha x 100 x 10e6 =
    // 1,365,333.33 -> 55,978,666.67; cwnd = 14,000 + inc / 14,000 + eta =
    // 14,000 + 3,998.476190 + 614.4 = 18,612.876190.
    cc.on_ack(ack(13_us, 100, 14_us));
    EXPECT_NEAR(cc.cwnd(), 14000 + kAlpha * 4100 * 10e6 / 14000 + 614.4, 1e-9);
    EXPECT_NEAR(cc.cwnd(), 18612.876190, 1e-6);
    // 7 us later: neither 33,280 B nor 12 us since that adjustment: the window waits.
    cc.on_ack(ack(20_us, 100, 14_us));
    EXPECT_NEAR(cc.cwnd(), 18612.876190, 1e-6);
    EXPECT_NEAR(cc.inc_bytes(), kAlpha * 100 * 10e6, 1e-6);
  }
  {  // Receiver penalty 128 of 255 under ECN below target (no quadrant action):
     // cwnd -= 4,160 - 4,160 x 128 / 255 = 4,160 x 127 / 255 = 2,071.8431.
    NsccCc cc(starting_at(100000), ctx);
    AckSignal a = ack(1_us, 4160, 16_us, true);
    a.receiver_penalty = 128;
    cc.on_ack(a);
    EXPECT_NEAR(cc.cwnd(), 100000 - 4160.0 * 127 / 255, 1e-9);
    EXPECT_NEAR(cc.cwnd(), 97928.156863, 1e-6);
  }
}

// An ACK from a transport that counts bytes (UET) is taken as counted even when it acknowledges
// nothing new: its bytes in flight stand. Before, a received count of 0 chose the RoCE fallback,
// (next - una) MTUs, which counts SACKed and queued packets too.
TEST(Nscc, AnAckWithNothingNewKeepsTheTransportsBytesInFlight) {
  NsccCc cc(NsccConfig{}, round_ctx());
  AckSignal a = ack(1_us, 0, 12_us, false, 20'000);
  a.seq = 0;
  a.next_seq = 100;
  cc.on_ack(a);
  EXPECT_EQ(cc.in_flight(), 20'000.0);
  AckSignal roce{2_us, Bytes(4096)};  // RoCE: nothing counted, the fallback
  roce.rtt = 12_us;
  roce.seq = 10;
  roce.next_seq = 20;
  cc.on_ack(roce);
  EXPECT_EQ(cc.in_flight(), 10.0 * static_cast<double>(cc.params().mtu));
}

TEST(Nscc, MultiplicativeDecreaseOncePerRtt) {
  NsccConfig c = starting_at(100000);
  c.delay_ewma = 0.5;
  c.adjust_period = 1000_us;  // no eta in between
  NsccCc cc(c, round_ctx());
  cc.on_ack(ack(1_us, 4160, 32_us, true));  // avg 10 us
  cc.on_ack(ack(1_us, 4160, 32_us, true));  // avg 15 us: cut to 84,000 at 1 us
  ASSERT_NEAR(cc.cwnd(), 84000, 1e-9);
  cc.on_ack(ack(6_us, 4160, 32_us, true));  // avg 17.5 us, 5 us after the cut: none
  EXPECT_NEAR(cc.cwnd(), 84000, 1e-9);
  cc.on_ack(ack(13_us, 4160, 32_us, true));  // avg 18.75 us, exactly one base rtt: none
  EXPECT_NEAR(cc.cwnd(), 84000, 1e-9);
  // avg 19.375 us, one base rtt + 1 ps after the cut:
  // 84,000 x (1 - 0.8 x 7.375 / 19.375) = 84,000 - 495,600 / 19.375 = 58,420.645161.
  cc.on_ack(ack(13_us + 1_ps, 4160, 32_us, true));
  EXPECT_DOUBLE_EQ(cc.avg_delay(), 19.375e6);
  EXPECT_NEAR(cc.cwnd(), 58420.645161, 1e-6);
  cc.on_ack(ack(14_us, 4160, 32_us, true));
  EXPECT_NEAR(cc.cwnd(), 58420.645161, 1e-6);
}

TEST(Nscc, QuickAdapt) {
  const CcContext ctx = round_ctx();
  {
    NsccCc cc(NsccConfig{}, ctx);  // cwnd 225,000
    // The first ACK opens the window of base + target = 24 us (until 25 us) and resets the
    // achieved count.
    cc.on_ack(ack(1_us, 4160, 16_us));
    EXPECT_DOUBLE_EQ(cc.achieved(), 0);
    // Delay 50 us > qa_threshold 48 us, but the window has not ended: a fair increase.
    cc.on_ack(ack(10_us, 4160, 62_us));
    EXPECT_DOUBLE_EQ(cc.achieved(), 4160);
    EXPECT_DOUBLE_EQ(cc.cwnd(), 225000);
    // At 26 us the window ended with 8,320 B achieved < 28,125 B and the delay above the
    // threshold: cwnd = max(8,320, MTU) = 8,320; ECN on the 50,000 B in flight is ignored.
    cc.on_ack(ack(26_us, 4160, 62_us, false, 50000));
    EXPECT_DOUBLE_EQ(cc.cwnd(), 8320);
    EXPECT_DOUBLE_EQ(cc.inc_bytes(), 0);
    EXPECT_DOUBLE_EQ(cc.achieved(), 0);
    // An ECN ACK above target within those bytes does nothing (4,160 < 50,000 ignored).
    cc.on_ack(ack(27_us, 4160, 112_us, true));
    EXPECT_DOUBLE_EQ(cc.cwnd(), 8320);
    EXPECT_DOUBLE_EQ(cc.inc_bytes(), 0);
  }
  {  // The gate: 34,160 B achieved >= 28,125 B in the window: no quick adapt at its end...
    NsccCc cc(NsccConfig{}, ctx);
    cc.on_ack(ack(1_us, 4160, 16_us));
    cc.on_ack(ack(10_us, 30000, 62_us));  // adjustment: 225,000 + ... clamps at maxwnd
    EXPECT_DOUBLE_EQ(cc.cwnd(), 225000);
    cc.on_ack(ack(26_us, 4160, 62_us));  // window [26, 50] us opens; its count starts at 0
    EXPECT_DOUBLE_EQ(cc.cwnd(), 225000);
    // ...but the next window achieved only 4,160 B: cwnd = 4,160.
    cc.on_ack(ack(51_us, 4160, 62_us));
    EXPECT_DOUBLE_EQ(cc.cwnd(), 4160);
  }
  {  // quick_adapt = false: the same sequence leaves the window at maxwnd.
    NsccConfig c;
    c.quick_adapt = false;
    NsccCc cc(c, ctx);
    cc.on_ack(ack(1_us, 4160, 16_us));
    cc.on_ack(ack(10_us, 4160, 62_us));
    cc.on_ack(ack(26_us, 4160, 62_us));
    EXPECT_DOUBLE_EQ(cc.cwnd(), 225000);
  }
}

TEST(Nscc, Nack) {
  CcContext ctx = round_ctx();
  {  // A last-hop trim without receiver credit: cwnd -= 4,096 + 64; the average is fed the
     // network rtt: 0.0125 x 12e6 = 150,000 ps.
    NsccCc cc(NsccConfig{}, ctx);
    cc.on_nack(trim(1_us, true));
    EXPECT_DOUBLE_EQ(cc.cwnd(), 225000 - 4160);
    EXPECT_NEAR(cc.avg_delay(), 150000, 1e-6);
  }
  ctx.receiver_credit = true;
  {  // With receiver credit a last-hop trim does not cut; an earlier-hop trim does.
    NsccCc cc(NsccConfig{}, ctx);
    cc.on_nack(trim(1_us, true));
    EXPECT_DOUBLE_EQ(cc.cwnd(), 225000);
    cc.on_nack(trim(2_us, false));
    EXPECT_DOUBLE_EQ(cc.cwnd(), 225000 - 4160);
  }
  ctx.receiver_credit = false;
  {  // A NACK triggers quick adapt at the end of the window: 8,000 B achieved since the window
     // opened at 1 us (until 25 us), so at 30 us cwnd = 8,000 and nothing more is cut. The next
     // NACK falls within the 20,000 B in flight to ignore: no cut.
    NsccCc cc(NsccConfig{}, ctx);
    cc.on_nack(trim(1_us, false));
    EXPECT_DOUBLE_EQ(cc.cwnd(), 220840);
    cc.on_ack(ack(10_us, 8000, 16_us));
    cc.on_nack(trim(30_us, false, 20000));
    EXPECT_DOUBLE_EQ(cc.cwnd(), 8000);
    cc.on_nack(trim(31_us, false));
    EXPECT_DOUBLE_EQ(cc.cwnd(), 8000);
  }
  {  // Go-back-N (RoCE): ten packets resent, one lost: cwnd -= 4,160. Nothing resent: no change.
    NsccCc cc(NsccConfig{}, ctx);
    cc.on_nack({1_us, Bytes(), Bytes(40960)});
    EXPECT_DOUBLE_EQ(cc.cwnd(), 220840);
    cc.on_nack({2_us, Bytes(), Bytes()});
    EXPECT_DOUBLE_EQ(cc.cwnd(), 220840);
  }
}

TEST(Nscc, Timeout) {
  NsccCc cc(NsccConfig{}, round_ctx());
  cc.on_timeout({1_us, 1, Bytes(4096)});  // one packet: 225,000 - 4,160
  EXPECT_DOUBLE_EQ(cc.cwnd(), 220840);
  cc.on_timeout({2_us, 2});  // size not reported: one MTU
  EXPECT_DOUBLE_EQ(cc.cwnd(), 216680);
  NsccCc small(starting_at(5000), round_ctx());
  small.on_timeout({1_us, 1, Bytes(4096)});  // max(5,000 - 4,160, MTU)
  EXPECT_DOUBLE_EQ(small.cwnd(), 4160);
}

TEST(Nscc, Clamps) {
  const CcContext ctx = round_ctx();
  {  // At maxwnd a fair increase (+3,407.872 at the adjustment) stays at 225,000.
    NsccCc cc(NsccConfig{}, ctx);
    cc.on_ack(ack(1_us, 37440, 25_us));
    EXPECT_DOUBLE_EQ(cc.cwnd(), 225000);
  }
  NsccConfig raw;
  raw.delay_ewma = 1;  // the average is the latest sample
  {  // Delay 1 ms: 1 - 0.8 x (1e9 - 12e6) / 1e9 = 0.2096, floored at 0.5: 112,500.
    NsccCc cc(raw, ctx);
    cc.on_ack(ack(1_us, 4160, 1012_us, true));
    EXPECT_DOUBLE_EQ(cc.cwnd(), 112500);
  }
  {  // 5,000 halved is 2,500, below the minimum window of one MTU: 4,160.
    NsccConfig c = raw;
    c.initial_cwnd = Bytes(5000);
    NsccCc cc(c, ctx);
    cc.on_ack(ack(1_us, 4160, 112_us, true));
    EXPECT_DOUBLE_EQ(cc.cwnd(), 4160);
  }
  {  // A round trip of 8 us below the base of 12 us: base 8 us, maxwnd = 1.5 x 100,000.
    NsccCc cc(NsccConfig{}, ctx);
    cc.on_ack(ack(1_us, 4160, 8_us));
    EXPECT_DOUBLE_EQ(cc.base_rtt(), 8e6);
    EXPECT_DOUBLE_EQ(cc.maxwnd(), 150000);
    EXPECT_DOUBLE_EQ(cc.cwnd(), 150000);
    NsccConfig fixed;
    fixed.max_cwnd = Bytes(200000);  // a configured maxwnd stays
    NsccCc f(fixed, ctx);
    f.on_ack(ack(1_us, 4160, 8_us));
    EXPECT_DOUBLE_EQ(f.maxwnd(), 200000);
    EXPECT_DOUBLE_EQ(f.cwnd(), 200000);
  }
}

// A transport that does not report received bytes (RoCE): 8,192 B acknowledged in two packets
// count 8,192 + 2 x 64 = 8,320 frame bytes, and in flight is (next_seq - seq) MTUs.
TEST(Nscc, WithoutReceivedBytes) {
  NsccConfig c;
  c.delay_ewma = 1;
  c.min_cwnd = Bytes(1000);
  c.adjust_period = 1000_us;  // no eta in between
  NsccCc cc(c, round_ctx());
  AckSignal a{1_us, Bytes(8192)};
  a.rtt = 25_us;  // delay 13 us, no ECN: fair increase, inc = 20,480 x 8,320
  a.seq = 10;
  a.next_seq = 15;
  cc.on_ack(a);
  EXPECT_DOUBLE_EQ(cc.inc_bytes(), 20480.0 * 8320);
  // Quick adapt at 26 us (delay 50 us, 4,160 achieved): cwnd 4,160; in flight 5 x 4,160 =
  // 20,800 B of ECN to ignore.
  AckSignal b{26_us, Bytes(4096)};
  b.rtt = 62_us;
  b.seq = 11;
  b.next_seq = 16;
  cc.on_ack(b);
  ASSERT_DOUBLE_EQ(cc.cwnd(), 4160);
  // ECN above target (delay 20 us, avg 20 us): ignored for 4 x 4,160 < 20,800 B, then
  // 4,160 x (1 - 0.8 x 8 / 20) = 2,828.8.
  for (int i = 0; i < 5; ++i) {
    AckSignal e{27_us, Bytes(4096)};
    e.rtt = 32_us;
    e.ecn_echo = true;
    cc.on_ack(e);
    EXPECT_NEAR(cc.cwnd(), i < 4 ? 4160 : 2828.8, 1e-9) << i;
  }
}

// ---- on a bottleneck -------------------------------------------------------------------------

// Two RoCE senders under NSCC into one receiver through one 100G switch (a 2:1 dumbbell), 1 us
// links, no PFC; RED marks as htsim does (20 % to 80 % of a ~59 KB BDP, probability 1 at the
// top); the second flow starts 100 us after the first.
std::string two_to_one_nscc() {
  return test::two_to_one_toml(R"(
[network.ecn]
kmin = "12KB"
kmax = "47KB"
pmax = 1.0
[transport]
kind = "roce"
payload = "4KiB"
cc = "nscc"
)",
                               "60MB");
}

TEST(NsccScenario, TwoFlowsShareTheBottleneck) {
  fabsim::Run run(load_scenario_text(two_to_one_nscc(), "n.toml"));
  const RunResult r = execute_checked(run);
  ASSERT_TRUE(r.flows[0].done && r.flows[1].done);
  const test::Shares sh = test::shares(run.flows().trace_events(), 1000_us, 4000_us);
  EXPECT_GT(sh.ratio(), 0.95) << sh.a << " " << sh.b;
  EXPECT_GT(sh.a + sh.b, 90.0) << sh.a << " " << sh.b;  // the link stays busy
}

// While both send, each window settles below maxwnd (NSCC regulates; the cap does not) and the
// average queueing delay sits at the target (1.0 x the base rtt without trimming): ECN above the
// target cuts, ECN below it holds (seen: cwnd ~56.8 KB of maxwnd 87.8 KB, average 4.80 us
// against 4.68 us).
TEST(NsccScenario, HoldsTheDelayAtTheTarget) {
  std::string sc = two_to_one_nscc();
  sc.replace(sc.find("stop_time = \"100ms\""), 19, "stop_time = \"3ms\"");
  fabsim::Run run(load_scenario_text(sc, "n.toml"));
  execute_checked(run);
  for (uint32_t src : {1U, 2U}) {
    const auto* cc =
        dynamic_cast<const NsccCc*>(dynamic_cast<RoceTransport&>(run.transport()).qp_cc(src, 0));
    ASSERT_NE(cc, nullptr);
    EXPECT_LT(cc->cwnd(), 0.8 * cc->maxwnd()) << src;
    EXPECT_NEAR(cc->avg_delay() / static_cast<double>(cc->target().ps()), 1.0, 0.1) << src;
  }
}

}  // namespace
}  // namespace fabsim
