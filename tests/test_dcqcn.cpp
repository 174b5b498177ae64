// DCQCN reaction and notification points against hand-computed values (REFERENCE.md §1.5-1.6).
#include <gtest/gtest.h>

#include <cmath>

#include "cc/dcqcn.h"

namespace fabsim {
namespace {
using namespace literals;

constexpr double kLine = 100e9;
int64_t bps(double v) {
  return static_cast<int64_t>(v);
}

TEST(DcqcnPaper, RateAndAlphaAfterOneCnp) {
  DcqcnConfig c = DcqcnConfig::paper();
  c.initial_alpha = 0.5;
  DcqcnRp rp(c, 100_Gbps);
  rp.on_cnp(0_us);
  // RT <- RC; RC <- RC (1 - alpha/2); alpha <- (1 - g) alpha + g.
  EXPECT_EQ(rp.rate().bps(), bps(kLine * 0.75));
  EXPECT_EQ(rp.target().bps(), bps(kLine));
  EXPECT_DOUBLE_EQ(rp.alpha(0_us), (1 - 1.0 / 256) * 0.5 + 1.0 / 256);
  EXPECT_EQ(rp.next_timer(), 55_us);
}

TEST(DcqcnPaper, AlphaDecaysOncePerPeriodWithoutCnps) {
  DcqcnRp rp(DcqcnConfig::paper(), 100_Gbps);
  rp.on_cnp(10_us);
  const double a0 = rp.alpha(10_us);
  const double g = 1.0 / 256;
  EXPECT_DOUBLE_EQ(rp.alpha(10_us + 55_us - 1_ps), a0);
  EXPECT_DOUBLE_EQ(rp.alpha(10_us + 55_us), a0 * (1 - g));
  EXPECT_DOUBLE_EQ(rp.alpha(10_us + 55_us * 3), a0 * std::pow(1 - g, 3));
  // A second CNP applies the elapsed decays first, then the increase.
  rp.on_cnp(10_us + 55_us * 2);
  EXPECT_DOUBLE_EQ(rp.alpha(10_us + 55_us * 2), (1 - g) * (a0 * std::pow(1 - g, 2)) + g);
}

TEST(DcqcnPaper, FastRecoveryThenAdditiveIncrease) {
  DcqcnRp rp(DcqcnConfig::paper(), 100_Gbps);
  rp.on_cnp(0_us);  // RC 50, RT 100, alpha 1
  rp.on_cnp(1_us);  // RT 50, RC 25
  EXPECT_EQ(rp.rate().bps(), bps(25e9));
  EXPECT_EQ(rp.target().bps(), bps(50e9));
  double rc = 25e9;
  const double rt = 50e9;
  for (int k = 1; k <= 4; ++k) {  // T = 1..4 < F = 5: fast recovery towards RT
    EXPECT_EQ(rp.next_timer(), 1_us + 55_us * k);
    rp.on_timer(rp.next_timer());
    rc = (rt + rc) / 2;
    EXPECT_EQ(rp.rate().bps(), bps(rc)) << "step " << k;
    EXPECT_EQ(rp.target().bps(), bps(rt));
  }
  rp.on_timer(rp.next_timer());  // T = 5: additive, RT += 40 Mb/s
  EXPECT_EQ(rp.target().bps(), bps(rt + 40e6));
  EXPECT_EQ(rp.rate().bps(), bps((rt + 40e6 + rc) / 2));
}

TEST(DcqcnPaper, ByteCounterAndHyperIncrease) {
  DcqcnRp rp(DcqcnConfig::paper(), 100_Gbps);
  rp.on_cnp(0_us);
  rp.on_cnp(1_us);  // RT 50, RC 25
  double rc = 25e9;
  double rt = 50e9;
  // Six byte-counter events (BC = 1..6) with T = 0: fast recovery below 5, then additive.
  for (int bc = 1; bc <= 6; ++bc) {
    rp.on_sent(10'000'000, 2_us);
    if (bc >= 5) rt += 40e6;
    rc = (rt + rc) / 2;
    ASSERT_EQ(rp.rate().bps(), bps(rc)) << "BC " << bc;
  }
  // Timer events T = 1..5 are additive (min(T, BC) <= 5); T = 6 is hyper: RT += 1 x R_HAI.
  for (int t = 1; t <= 6; ++t) {
    rp.on_timer(rp.next_timer());
    rt += t <= 5 ? 40e6 : 400e6;
    rc = (rt + rc) / 2;
    ASSERT_EQ(rp.target().bps(), bps(rt)) << "T " << t;
    ASSERT_EQ(rp.rate().bps(), bps(rc)) << "T " << t;
  }
}

TEST(DcqcnPaper, RecoversToLineRateAndStopsItsTimer) {
  DcqcnRp rp(DcqcnConfig::paper(), 100_Gbps);
  rp.on_cnp(0_us);
  int steps = 0;
  while (rp.next_timer() != Time::max() && steps < 200) {
    rp.on_timer(rp.next_timer());
    ++steps;
  }
  EXPECT_EQ(rp.rate(), 100_Gbps);
  EXPECT_LT(steps, 60);
}

TEST(DcqcnConnectX, FirstCnpThenDecreaseAtTheNextCheck) {
  const DcqcnConfig c = DcqcnConfig::connectx(100_Gbps);
  EXPECT_EQ(c.rate_ai.bps(), 20'000'000);  // 5 Mb/s x 100/25
  EXPECT_EQ(c.rate_hai.bps(), 200'000'000);
  DcqcnRp rp(c, 100_Gbps);
  rp.on_cnp(0_us);
  EXPECT_EQ(rp.rate(), 100_Gbps);  // rate_on_first_cnp = 1: no cut yet
  EXPECT_EQ(rp.next_timer(), 4_us + 1_ns);
  rp.on_timer(4_us + 1_ns);
  // Alpha periods end at 1, 2, 3, 4 us: the first CNP only set alpha = 1 (as ns-3's
  // cnp_received_mlx, which clears its alpha flag), so all four decay.
  const double g = 1.0 / 256;
  const double alpha = std::pow(1 - g, 4);
  EXPECT_DOUBLE_EQ(rp.alpha(4_us + 1_ns), alpha);
  const double rc = kLine * (1 - alpha / 2);
  EXPECT_EQ(rp.rate().bps(), bps(rc));
  EXPECT_EQ(rp.target().bps(), bps(kLine));  // stage 0, no clamp: RT stays
  EXPECT_EQ(rp.next_timer(), 4_us + 1_ns + 300_us);
}

TEST(DcqcnConnectX, StagesFastRecoveryAdditiveHyper) {
  DcqcnConfig c = DcqcnConfig::connectx(100_Gbps);
  c.clamp_target = true;
  DcqcnRp rp(c, 100_Gbps);
  rp.on_cnp(0_us);
  rp.on_timer(4_us + 1_ns);  // first decrease: RT <- RC = line (clamp), RC cut
  const auto first_cut = static_cast<double>(rp.rate().bps());
  EXPECT_EQ(rp.target(), 100_Gbps);
  rp.on_cnp(5_us);
  rp.on_timer(8_us + 1_ns);  // second decrease: RT <- RC before this cut
  EXPECT_EQ(rp.target().bps(), bps(first_cut));
  auto rc = static_cast<double>(rp.rate().bps());
  double rt = first_cut;
  // F = 1: stage 0 fast recovery, stage 1 additive (+20 Mb/s), stages 2+ hyper (+200 Mb/s).
  const double steps[] = {0, 20e6, 200e6, 200e6};
  for (int s = 0; s < 4; ++s) {
    const Time at = rp.next_timer();
    rp.on_timer(at);
    rt += steps[s];
    rc = (rc + rt) / 2;
    // The start state was read back as whole bits per second: allow 1 b/s of rounding.
    ASSERT_NEAR(static_cast<double>(rp.target().bps()), rt, 1.0) << "stage " << s;
    ASSERT_NEAR(static_cast<double>(rp.rate().bps()), rc, 1.0) << "stage " << s;
    ASSERT_EQ(rp.stage(), s + 1);
  }
}

TEST(DcqcnConnectX, CnpsBetweenChecksCauseOneDecrease) {
  DcqcnRp rp(DcqcnConfig::connectx(100_Gbps), 100_Gbps);
  rp.on_cnp(0_us);
  rp.on_cnp(1_us);
  rp.on_cnp(3_us);
  rp.on_timer(4_us + 1_ns);
  const Rate after_one = rp.rate();
  EXPECT_LT(after_one, 100_Gbps);
  EXPECT_EQ(rp.next_timer(), 4_us + 1_ns + 300_us);  // no second decrease is pending
  EXPECT_EQ(rp.cuts(), 1U);  // three CNPs, one cut (the run's rate_cuts counts cuts, not CNPs)
  rp.on_cnp(5_us);
  rp.on_timer(8_us + 1_ns);
  EXPECT_EQ(rp.cuts(), 2U);
}

// The paper's reaction point cuts at every CNP.
TEST(DcqcnPaper, EveryCnpIsACut) {
  DcqcnRp rp(DcqcnConfig::paper(), 100_Gbps);
  for (int i = 0; i < 3; ++i) rp.on_cnp(Time::us(i));
  EXPECT_EQ(rp.cuts(), 3U);
}

// The connectx preset models HPCC's ns-3, whose receiver echoes every CE mark (one ACK per
// packet, no limiter): a CNP for every marked packet.
TEST(CnpPacer, ConnectXSendsOneCnpPerMarkedPacket) {
  CnpPacer np(DcqcnConfig::connectx(100_Gbps).cnp_interval);
  for (int i = 0; i < 5; ++i) EXPECT_TRUE(np.on_marked(Time::ns(i)));
  EXPECT_EQ(np.sent(), 5U);
  EXPECT_EQ(np.pending_until(), Time::max());
}

TEST(CnpPacer, AtMostOneCnpPerInterval) {
  CnpPacer np(50_us);
  EXPECT_TRUE(np.on_marked(0_us));
  EXPECT_FALSE(np.on_marked(10_us));
  EXPECT_FALSE(np.on_marked(49_us));
  EXPECT_EQ(np.pending_until(), 50_us);
  EXPECT_FALSE(np.on_timer(49_us));
  EXPECT_TRUE(np.on_timer(50_us));  // the remembered marks produce one CNP
  EXPECT_EQ(np.pending_until(), Time::max());
  EXPECT_FALSE(np.on_marked(60_us));
  EXPECT_TRUE(np.on_marked(100_us));
  EXPECT_EQ(np.sent(), 3U);
}

}  // namespace
}  // namespace fabsim
