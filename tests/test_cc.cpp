// The congestion-control interface (cc/cc.h, cc/registry.h; DESIGN.md "Seams: CC interface")
// with the real algorithms behind it: DCQCN through the interface follows the raw state
// machine (REFERENCE.md §1.6) exactly, and the registry builds each kind. Also the RoCE
// retransmission timeout formula (REFERENCE.md §1.7) that the QPs share.
#include <gtest/gtest.h>

#include <algorithm>  // is_sorted
#include <cmath>      // pow
#include <ostream>    // sample printing
#include <set>        // unique names
#include <string>
#include <vector>

#include "cc/cc.h"
#include "cc/dcqcn.h"
#include "cc/registry.h"
#include "scenario/kinds.h"
#include "transport/roce.h"

namespace fabsim {
namespace {
using namespace literals;

// One scripted input: a CNP, or `bytes` sent (the paper's byte counter).
struct Step {
  Time at;
  int64_t bytes = 0;  // 0 = a CNP
};

// The observable state after each input or timer firing.
struct Sample {
  Time at;
  int64_t rate_bps;
  Time next_timer;
  bool operator==(const Sample&) const = default;
};
std::ostream& operator<<(std::ostream& os, const Sample& s) {
  return os << "{" << s.at.ps() << " ps, " << s.rate_bps << " bps, next " << s.next_timer.ps()
            << " ps}";
}

constexpr int kMaxSteps = 5000;

// Runs `script` against any rate source the way a transport does: an input at its time,
// timers at next_timer() (inputs first on a tie), then the timers until none is pending.
template <typename Apply, typename Fire, typename Next, typename Read>
std::vector<Sample> drive(const std::vector<Step>& script, Apply apply, Fire fire, Next next,
                          Read read) {
  std::vector<Sample> out;
  size_t i = 0;
  while (static_cast<int>(out.size()) < kMaxSteps) {
    const Time timer = next();
    if (i < script.size() && script[i].at <= timer) {
      apply(script[i]);
      out.push_back({script[i].at, read(), next()});
      ++i;
    } else if (timer != Time::max()) {
      fire(timer);
      out.push_back({timer, read(), next()});
    } else {
      break;
    }
  }
  return out;
}

std::vector<Sample> drive_raw(DcqcnRp& rp, const std::vector<Step>& script) {
  return drive(
      script, [&](const Step& s) { s.bytes > 0 ? rp.on_sent(s.bytes, s.at) : rp.on_cnp(s.at); },
      [&](Time t) { rp.on_timer(t); }, [&] { return rp.next_timer(); },
      [&] { return rp.rate().bps(); });
}

std::vector<Sample> drive_cc(CongestionControl& cc, const std::vector<Step>& script) {
  return drive(
      script,
      [&](const Step& s) {
        if (s.bytes > 0) {
          cc.on_sent({s.at, Bytes(s.bytes)});
        } else {
          cc.on_cnp({s.at});
        }
      },
      [&](Time t) { cc.on_timer(t); }, [&] { return cc.next_timer(); },
      [&] { return cc.output().rate.bps(); });
}

const DcqcnRp& dcqcn_state(const CongestionControl& cc) {
  const auto* d = dynamic_cast<const DcqcnCc*>(&cc);
  EXPECT_NE(d, nullptr);
  return d->state();
}

TEST(CcDcqcn, PaperRateSequenceMatchesStateMachine) {
  CcConfig cfg;  // DCQCN, paper parameters
  // Two CNPs, then 10 MB sends (byte-counter increases, hyper increase once T and BC pass F),
  // a CNP in the middle of recovery, then recovery to line rate.
  std::vector<Step> script = {{0_us}, {1_us}};
  for (int k = 0; k < 8; ++k) script.push_back({2_us + 1_us * k, 10'000'000});
  script.push_back({400_us});
  script.push_back({401_us});
  for (int k = 0; k < 8; ++k) script.push_back({500_us + 55_us * k, 10'000'000});
  script.push_back({3_ms});
  ASSERT_TRUE(std::is_sorted(script.begin(), script.end(),
                             [](const Step& a, const Step& b) { return a.at < b.at; }));

  DcqcnRp raw(cfg.as<DcqcnConfig>(), 100_Gbps);
  const auto cc = cfg.make(100_Gbps, Time());
  const std::vector<Sample> want = drive_raw(raw, script);
  const std::vector<Sample> got = drive_cc(*cc, script);
  ASSERT_LT(static_cast<int>(want.size()), kMaxSteps);
  ASSERT_GT(want.size(), script.size() + 100);  // the timers did most of the work
  EXPECT_EQ(got, want);
  // Exact anchors: the first CNP halves the rate (alpha = 1) and arms the 55 us timer; the
  // second halves it again; at the end the QP is back at line rate with no timer pending.
  ASSERT_GE(got.size(), 2U);
  EXPECT_EQ(got[0], (Sample{0_us, 50'000'000'000, 55_us}));
  EXPECT_EQ(got[1], (Sample{1_us, 25'000'000'000, 56_us}));
  EXPECT_EQ(got.back().rate_bps, 100'000'000'000);
  EXPECT_EQ(got.back().next_timer, Time::max());
  const DcqcnRp& s = dcqcn_state(*cc);
  EXPECT_EQ(s.target(), raw.target());
  EXPECT_EQ(s.alpha(got.back().at), raw.alpha(want.back().at));
  EXPECT_EQ(s.stage(), raw.stage());
  EXPECT_EQ(s.byte_stage(), raw.byte_stage());
}

TEST(CcDcqcn, ConnectXRateSequenceMatchesStateMachine) {
  CcConfig cfg;
  cfg.as<DcqcnConfig>() = DcqcnConfig::connectx(100_Gbps);
  // CNPs inside one decrease period, across several, and after recovery has started.
  const std::vector<Step> script = {{0_us},   {5_us},   {6_us},   {10_us},  {11_us},
                                    {500_us}, {503_us}, {900_us}, {1801_us}};
  DcqcnRp raw(cfg.as<DcqcnConfig>(), 100_Gbps);
  const auto cc = cfg.make(100_Gbps, Time());
  const std::vector<Sample> want = drive_raw(raw, script);
  const std::vector<Sample> got = drive_cc(*cc, script);
  ASSERT_LT(static_cast<int>(want.size()), kMaxSteps);
  ASSERT_GT(want.size(), script.size() + 100);  // the timers did most of the work
  EXPECT_EQ(got, want);
  // Exact anchors: the first CNP only flags (rate_on_first_cnp = 1); the cut comes at the
  // decrease check 4 us + 1 ns later, after four alpha periods without a CNP (the first CNP
  // only sets alpha = 1, as ns-3's cnp_received_mlx).
  ASSERT_GE(got.size(), 2U);
  EXPECT_EQ(got[0], (Sample{0_us, 100'000'000'000, 4_us + 1_ns}));
  const double g = 1.0 / 256;
  const auto cut = static_cast<int64_t>(100e9 * (1 - std::pow(1 - g, 4) / 2));
  EXPECT_EQ(cut, 50'776'684'272);  // ns-3's 50.78 Gb/s
  EXPECT_EQ(got[1], (Sample{4_us + 1_ns, cut, 4_us + 1_ns + 300_us}));
  EXPECT_EQ(got.back().next_timer, Time::max());
  EXPECT_EQ(dcqcn_state(*cc).target(), raw.target());
}

TEST(CcDcqcn, RateBasedWithUnlimitedWindowAndAsksForCnps) {
  const auto cc = CcConfig{}.make(400_Gbps, 5_us);
  EXPECT_FALSE(cc->window_based());
  EXPECT_EQ(cc->output().rate, 400_Gbps);
  EXPECT_EQ(cc->output().window, kUnlimitedWindow);
  EXPECT_EQ(cc->next_timer(), Time::max());
  EXPECT_TRUE(cc->needs().cnp);
  EXPECT_EQ(cc->needs().cnp_interval, 50_us);

  CcConfig cx;
  cx.as<DcqcnConfig>() = DcqcnConfig::connectx(400_Gbps);
  EXPECT_EQ(cx.make(400_Gbps, Time())->needs().cnp_interval, Time());  // a CNP per mark
}

TEST(CcDcqcn, SignalsItDoesNotUseLeaveItsStateUnchanged) {
  const auto cc = CcConfig{}.make(100_Gbps, Time());
  cc->on_cnp({0_us});
  cc->on_timer(55_us);  // one fast-recovery step: RC 75 Gb/s, next at 110 us
  const CcOutput before = cc->output();
  ASSERT_EQ(before.rate.bps(), 75'000'000'000);
  ASSERT_EQ(cc->next_timer(), 110_us);
  const double alpha = dcqcn_state(*cc).alpha(60_us);

  cc->on_ack({60_us, Bytes(4096), 12_us, true});
  cc->on_nack({61_us, Bytes(0), Bytes(8192)});
  cc->on_timeout({62_us, 3});
  cc->on_delay({63_us, 20_us});
  IntSignal hops{64_us, 2, {}};
  hops.hop[0] = {Bytes(1000), Bytes(1'000'000), 63_us, 100_Gbps};
  hops.hop[1] = {Bytes(90'000), Bytes(2'000'000), 63_us, 400_Gbps};
  cc->on_int(hops);
  cc->on_credit({65_us, Bytes(65536)});

  EXPECT_EQ(cc->output().rate, before.rate);
  EXPECT_EQ(cc->output().window, before.window);
  EXPECT_EQ(cc->next_timer(), 110_us);
  EXPECT_EQ(dcqcn_state(*cc).alpha(60_us), alpha);
  EXPECT_EQ(dcqcn_state(*cc).target(), 100_Gbps);
}

TEST(CcDcqcn, DisabledKeepsLineRateAndAsksForNothing) {
  CcConfig cfg;
  cfg.as<DcqcnConfig>().enabled = false;
  const auto cc = cfg.make(100_Gbps, Time());
  EXPECT_FALSE(cc->needs().cnp);
  cc->on_cnp({0_us});
  cc->on_sent({1_us, Bytes(20'000'000)});
  EXPECT_EQ(cc->output().rate, 100_Gbps);
  EXPECT_EQ(cc->next_timer(), Time::max());
}

TEST(CcRegistry, EveryKindBuildsAndIsFoundByItsName) {
  const auto& ccs = registries().ccs;
  std::set<std::string> names;
  for (const CcKind* k : ccs.kinds()) {
    EXPECT_TRUE(names.insert(std::string(k->name())).second) << k->name();
    EXPECT_EQ(ccs.find(k->name()), k);
    // Every kind loads its defaults from an empty table and starts at line rate.
    auto ctx = std::make_shared<ReaderContext>();
    Section s(ctx, nullptr, "transport", nullptr);
    CcConfig cfg{k, k->load(s, 100_Gbps)};
    const auto cc = cfg.make(100_Gbps, Time());
    ASSERT_NE(cc, nullptr) << k->name();
    EXPECT_EQ(cc->output().rate, 100_Gbps) << k->name();
  }
  ASSERT_NE(ccs.find("dcqcn"), nullptr);
  EXPECT_EQ(ccs.find("dcqcn"), &dcqcn_cc());
  EXPECT_EQ(ccs.find("DCQCN"), nullptr);
  EXPECT_EQ(ccs.find(""), nullptr);
}

TEST(CcRoceRto, BaseTimesTwoToTheExponentDoubledPerExpiryWithBackoff) {
  RoceConfig c;
  // 4.096 us x 2^14 = 67.108864 ms, the IB local ACK timeout at exponent 14.
  EXPECT_EQ(c.rto(0), Time::ps(67'108'864'000));
  EXPECT_EQ(c.rto(3), c.rto(0));  // no backoff: every expiry waits as long
  c.rto_backoff = true;
  EXPECT_EQ(c.rto(1), Time::ps(67'108'864'000) * 2);
  EXPECT_EQ(c.rto(3), Time::ps(67'108'864'000) * 8);
  c.rto_exponent = 0;
  c.rto_base = 1_us;
  EXPECT_EQ(c.rto(0), 1_us);
  // Far past the range of Time it saturates instead of overflowing, so now + rto still fits.
  EXPECT_EQ(c.rto(1000), Time::ps(INT64_MAX / 2));
  EXPECT_LT(c.rto(40), c.rto(41));
}

}  // namespace
}  // namespace fabsim
