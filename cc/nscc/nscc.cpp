// NSCC; see nscc.h.
#include "cc/nscc/nscc.h"

#include <algorithm>  // clamp, max, min
#include <cmath>      // ldexp

namespace fabsim {

namespace {

// Bytes a `bps` link carries in `ps` picoseconds, as a real number (line x rtt).
double bytes_of(Rate line, double ps) {
  return static_cast<double>(line.bps()) * ps / 8e12;
}

}  // namespace

NsccParams nscc_params(const NsccConfig& cfg, const CcContext& ctx) {
  NsccParams p;
  p.mss = ctx.mss;
  p.header_bytes = cfg.header_bytes > 0 ? cfg.header_bytes : ctx.header_bytes;
  p.mtu = ctx.mss + p.header_bytes;
  p.network_rtt = ctx.base_rtt > Time() ? ctx.base_rtt : cfg.reference_rtt;
  const auto rtt = static_cast<double>(p.network_rtt.ps());
  const auto ref_rtt = static_cast<double>(cfg.reference_rtt.ps());
  const auto mss = static_cast<double>(p.mss);
  const auto mtu = static_cast<double>(p.mtu);
  p.bdp = bytes_of(ctx.line, rtt);
  p.scaling_a = p.bdp / bytes_of(cfg.reference_rate, ref_rtt);
  const double factor = cfg.target_factor > 0 ? cfg.target_factor : ctx.trimming ? 0.75 : 1.0;
  p.target = cfg.target > Time() ? static_cast<double>(cfg.target.ps()) : factor * rtt;
  p.scaling_b = p.target / ref_rtt;
  p.alpha = cfg.alpha > 0 ? cfg.alpha : 4 * mss * p.scaling_a * p.scaling_b / p.target;
  p.fi = cfg.fi > 0 ? cfg.fi : 5 * mss * p.scaling_a;
  p.eta = cfg.eta > 0 ? cfg.eta : 0.15 * mss * p.scaling_a;
  p.fi_scale = cfg.fi_scale > 0 ? cfg.fi_scale : 0.25 * p.scaling_a;
  p.gamma = cfg.gamma;
  p.md_floor = cfg.md_floor;
  p.qa_threshold =
      cfg.qa_threshold > Time() ? static_cast<double>(cfg.qa_threshold.ps()) : 4 * p.target;
  p.qa_gate = cfg.qa_gate;
  p.delay_ewma = cfg.delay_ewma;
  p.adjust_period = cfg.adjust_period > Time() ? static_cast<double>(cfg.adjust_period.ps()) : rtt;
  p.adjust_bytes =
      cfg.adjust_bytes > Bytes() ? static_cast<double>(cfg.adjust_bytes.count()) : 8 * mtu;
  p.maxwnd =
      cfg.max_cwnd > Bytes() ? static_cast<double>(cfg.max_cwnd.count()) : cfg.maxwnd_bdp * p.bdp;
  p.min_cwnd = cfg.min_cwnd > Bytes() ? static_cast<double>(cfg.min_cwnd.count()) : mtu;
  p.initial_cwnd =
      cfg.initial_cwnd > Bytes() ? static_cast<double>(cfg.initial_cwnd.count()) : p.maxwnd;
  p.fast_increase_delay = static_cast<double>(cfg.fast_increase_delay.ps());
  return p;
}

NsccCc::NsccCc(const NsccConfig& cfg, const CcContext& ctx)
    : cfg_{cfg.header_bytes > 0 ? cfg.header_bytes : ctx.header_bytes,
           cfg.maxwnd_bdp,
           cfg.no_ecn_sample,
           cfg.penalty_scale,
           cfg.quick_adapt,
           cfg.track_base_rtt},
      p_(nscc_params(cfg, ctx)), line_(ctx.line), receiver_credit_(ctx.receiver_credit),
      fixed_max_(cfg.max_cwnd > Bytes()), maxwnd_(p_.maxwnd),
      base_rtt_(static_cast<double>(p_.network_rtt.ps())), last_adjust_(ctx.start) {
  cwnd_ = std::clamp(p_.initial_cwnd, p_.min_cwnd, std::max(p_.min_cwnd, maxwnd_));
}

CcNeeds NsccCc::needs() const {
  CcNeeds n;
  n.ecn_echo = true;
  return n;
}

CcOutput NsccCc::output() const {
  return {line_, Bytes(static_cast<int64_t>(cwnd_))};
}

double NsccCc::frames(Bytes payload) const {
  if (payload <= Bytes()) return 0;
  const int64_t packets = (payload.count() + p_.mss - 1) / p_.mss;
  return static_cast<double>(payload.count() + packets * cfg_.header_bytes);
}

void NsccCc::clamp() {
  cwnd_ = std::clamp(cwnd_, p_.min_cwnd, std::max(p_.min_cwnd, maxwnd_));
}

// htsim update_base_rtt: a smaller round trip moves the base, and maxwnd with the BDP.
void NsccCc::update_base(double rtt) {
  if (rtt >= base_rtt_) return;
  base_rtt_ = rtt;
  if (!fixed_max_) maxwnd_ = cfg_.maxwnd_bdp * bytes_of(line_, rtt);
}

// A delay above target without ECN is taken as queueing off our path: the average is fed a
// small constant instead (REFERENCE.md §4.5 step 4).
void NsccCc::feed_delay(double delay, bool ecn) {
  const double sample = !ecn && delay > p_.target ? cfg_.no_ecn_sample * base_rtt_ : delay;
  avg_delay_ = p_.delay_ewma * sample + (1 - p_.delay_ewma) * avg_delay_;
}

// htsim quick_adapt. True when it consumed the signal: either ECN inside the bytes to ignore
// after a quick adapt, or a quick adapt now; the pending increase is then dropped.
bool NsccCc::quick_adapt(Time now, bool loss, bool ecn, double delay, double in_flight) {
  if (!cfg_.quick_adapt) return false;
  bool done = false;
  const auto t = static_cast<double>(now.ps());
  if (ignored_ < to_ignore_ && ecn) {
    done = true;
  } else if (!qa_started_ || t > qa_end_) {
    if (qa_started_ && (trigger_qa_ || loss || delay > p_.qa_threshold) &&
        achieved_ < std::ldexp(maxwnd_, -p_.qa_gate)) {
      cwnd_ = std::max(achieved_, p_.min_cwnd);
      to_ignore_ = in_flight;
      ignored_ = 0;
      trigger_qa_ = false;
      done = true;
    }
    achieved_ = 0;
    qa_end_ = t + base_rtt_ + p_.target;
    qa_started_ = true;
  }
  if (done) {
    inc_ = 0;
    received_ = 0;
  }
  return done;
}

void NsccCc::fast_increase(double newly, double delay) {
  if (delay < p_.fast_increase_delay) {
    fi_count_ += newly;
    if (fi_count_ > cwnd_ || increasing_) {
      cwnd_ += newly * p_.fi_scale;
      increasing_ = true;
      return;
    }
  } else {
    fi_count_ = 0;
  }
  increasing_ = false;
}

void NsccCc::multiplicative_decrease(Time now) {
  increasing_ = false;
  fi_count_ = 0;
  if (avg_delay_ <= p_.target) return;
  if (decreased_ && static_cast<double>((now - last_decrease_).ps()) <= base_rtt_) return;
  cwnd_ *= std::max(1 - p_.gamma * (avg_delay_ - p_.target) / avg_delay_, p_.md_floor);
  cwnd_ = std::max(cwnd_, p_.min_cwnd);
  last_decrease_ = now;
  decreased_ = true;
}

void NsccCc::fulfill(Time now) {
  cwnd_ += inc_ / cwnd_;
  if (static_cast<double>((now - last_adjust_).ps()) >= p_.adjust_period) {
    cwnd_ += p_.eta;
    last_adjust_ = now;
  }
  inc_ = 0;
  received_ = 0;
}

void NsccCc::on_ack(const AckSignal& s) {
  double newly = 0;
  double in_flight = 0;
  if (s.counts_bytes) {
    newly = static_cast<double>(s.received.count());
    in_flight = static_cast<double>(s.in_flight.count());
  } else {  // the transport does not report received bytes (RoCE): count the acknowledged
    newly = frames(s.acked);
    in_flight = s.next_seq > s.seq
                    ? static_cast<double>(s.next_seq - s.seq) * static_cast<double>(p_.mtu)
                    : 0;
  }
  in_flight_ = in_flight;
  achieved_ += newly;
  received_ += newly;
  ignored_ += newly;
  if (s.receiver_penalty < cfg_.penalty_scale) {
    const double cut = newly - newly * s.receiver_penalty / cfg_.penalty_scale;
    cwnd_ = std::max(cwnd_ - cut, p_.min_cwnd);
  }

  double delay = avg_delay_;  // no sample: the average stands in
  if (s.rtt != kNoRttSample) {
    const auto rtt = static_cast<double>(s.rtt.ps());
    if (cfg_.track_base_rtt) update_base(rtt);
    if (rtt >= base_rtt_) {
      delay = rtt - base_rtt_;
      feed_delay(delay, s.ecn_echo);
    }
  }
  if (quick_adapt(s.now, /*loss=*/false, s.ecn_echo, delay, in_flight)) return;

  if (!s.ecn_echo) {
    if (delay >= p_.target) {
      inc_ += p_.fi * newly;  // fair increase
    } else {
      fast_increase(newly, delay);
      if (!increasing_) inc_ += p_.alpha * newly * (p_.target - delay);  // proportional
    }
  } else if (delay >= p_.target) {
    multiplicative_decrease(s.now);
  }  // ECN below target: the window stays; the transport penalises the path
  clamp();
  if (received_ > p_.adjust_bytes ||
      static_cast<double>((s.now - last_adjust_).ps()) > p_.adjust_period) {
    fulfill(s.now);
  }
  clamp();
}

void NsccCc::on_nack(const NackSignal& s) {
  if (s.resent <= Bytes()) return;  // nothing to send again: nothing was lost
  const double nacked = frames(std::min(s.resent, Bytes(p_.mss)));
  ignored_ += nacked;
  if (s.rtt != kNoRttSample && cfg_.track_base_rtt) update_base(static_cast<double>(s.rtt.ps()));
  // htsim takes the network RTT as the delay a trim implies (the trim threshold's drain time).
  feed_delay(static_cast<double>(p_.network_rtt.ps()), /*ecn=*/true);
  trigger_qa_ = true;
  const double in_flight =
      s.in_flight > Bytes() ? static_cast<double>(s.in_flight.count()) : in_flight_;
  if (quick_adapt(s.now, /*loss=*/true, /*ecn=*/true, 0, in_flight)) return;
  // With receiver credit the last hop is the receiver's to pace: its trims do not cut.
  if (receiver_credit_ && s.trimmed && s.last_hop) return;
  cwnd_ -= nacked;
  clamp();
}

void NsccCc::on_timeout(const TimeoutSignal& s) {
  const double size = s.resent > Bytes() ? frames(s.resent) : static_cast<double>(p_.mtu);
  cwnd_ = std::max(cwnd_ - size, p_.min_cwnd);
}

namespace {

class NsccKind final : public CcKind {
 public:
  std::string_view name() const override { return "nscc"; }
  std::string_view description() const override {
    return "Ultra Ethernet NSCC window from ECN and queueing delay against a target "
           "(REFERENCE.md §4.5, §9.3.3); keys in [transport.nscc]";
  }
  KindConfig load(Section& s, Rate /*line*/) const override {
    const Bytes big = Bytes(int64_t{1} << 50);
    NsccConfig c;
    c.header_bytes =
        s.integer("header_bytes", c.header_bytes, 0, 65535,
                  "header bytes per packet: MTU = MSS + this (0 = the transport's data header; "
                  "uet-htsim 64)");
    c.target = s.time("target", c.target, "queueing-delay target (0 = target_factor x rtt)");
    c.target_factor = s.real("target_factor", c.target_factor, 0.0, 100.0,
                             "target / network rtt (0 = 0.75 with trimming, else 1.0)");
    c.alpha = s.real("alpha", c.alpha, 0.0, 1e9,
                     "proportional increase gain per ps below target (0 = 4 MSS a b / target)");
    c.fi = s.real("fi", c.fi, 0.0, 1e12, "fair increase, bytes (0 = 5 MSS a)");
    c.eta = s.real("eta", c.eta, 0.0, 1e12,
                   "additive increase per adjust period, bytes (0 = 0.15 MSS a)");
    c.fi_scale =
        s.real("fi_scale", c.fi_scale, 0.0, 1e6, "fast increase per received byte (0 = 0.25 a)");
    c.gamma = s.real("gamma", c.gamma, 0.0, 1.0, "multiplicative decrease gain");
    c.md_floor = s.real("md_floor", c.md_floor, 0.0, 1.0,
                        "a decrease keeps at least this fraction of the window (htsim 0.5)");
    c.qa_threshold = s.time("qa_threshold", c.qa_threshold, "quick-adapt delay (0 = 4 x target)");
    c.qa_gate = static_cast<int>(s.integer("qa_gate", c.qa_gate, 0, 30,
                                           "quick adapt only when achieved < maxwnd / 2^qa_gate"));
    c.quick_adapt = s.boolean("quick_adapt", c.quick_adapt, "quick adapt on");
    c.delay_ewma =
        s.real("delay_ewma", c.delay_ewma, 1e-9, 1.0, "weight of the newest delay sample");
    c.adjust_period =
        s.time("adjust_period", c.adjust_period, "window adjustment period (0 = network rtt)");
    c.adjust_bytes = s.bytes("adjust_bytes", c.adjust_bytes, Bytes(0), big,
                             "received bytes between window adjustments (0 = 8 MTU)");
    c.maxwnd_bdp = s.real("maxwnd_bdp", c.maxwnd_bdp, 1e-3, 1e3, "largest window / BDP");
    c.max_cwnd = s.bytes("max_cwnd", c.max_cwnd, Bytes(0), big,
                         "largest window (0 = maxwnd_bdp x BDP, following the base RTT)");
    c.initial_cwnd =
        s.bytes("initial_cwnd", c.initial_cwnd, Bytes(0), big, "starting window (0 = maxwnd)");
    c.min_cwnd = s.bytes("min_cwnd", c.min_cwnd, Bytes(0), big, "smallest window (0 = 1 MTU)");
    c.fast_increase_delay = s.time("fast_increase_delay", c.fast_increase_delay,
                                   "fast increase while the delay stays below this");
    c.no_ecn_sample = s.real("no_ecn_sample", c.no_ecn_sample, 0.0, 100.0,
                             "delay above target without ECN feeds the average this x base rtt");
    c.penalty_scale = static_cast<int>(
        s.integer("penalty_scale", c.penalty_scale, 1, 255,
                  "receiver penalty p keeps p / this of the newly received bytes; p >= this is "
                  "none [UNVERIFIED encoding: htsim 255, a secondary source 128]"));
    c.track_base_rtt = s.boolean("track_base_rtt", c.track_base_rtt,
                                 "base rtt = the smallest sample; maxwnd follows it down");
    c.reference_rate = s.rate("reference_rate", c.reference_rate,
                              "scaling reference: a = BDP / (reference_rate x reference_rtt)");
    c.reference_rtt = s.time("reference_rtt", c.reference_rtt, "scaling reference round trip");
    if (!s.describing()) {
      if (c.reference_rate <= Rate()) s.fail("reference_rate", "a positive rate");
      if (c.reference_rtt <= Time()) s.fail("reference_rtt", "a positive duration");
    }
    return KindConfig::of(c);
  }
  std::unique_ptr<CongestionControl> build(const KindConfig& cfg,
                                           const CcContext& ctx) const override {
    return std::make_unique<NsccCc>(cfg.get<NsccConfig>(), ctx);
  }
};

}  // namespace

const CcKind& nscc_cc() {
  static const NsccKind kind;
  return kind;
}

}  // namespace fabsim
