// Swift; see swift.h.
#include "cc/swift/swift.h"

#include <algorithm>  // clamp, max, min
#include <cmath>      // floor, sqrt

namespace fabsim {

SwiftCc::SwiftCc(const SwiftConfig& cfg, const CcContext& ctx)
    : cfg_(cfg), line_(static_cast<double>(ctx.line.bps())), mss_(static_cast<double>(ctx.mss)),
      packet_bytes_(
          static_cast<double>(ctx.window_packet_bytes > 0 ? ctx.window_packet_bytes : ctx.mss)),
      hops_(ctx.hops) {
  if (cfg_.per_hop <= Time()) cfg_.per_hop = Time::ps(cfg_.base_target.ps() * 100 / 655);
  if (cfg_.fs_range <= Time()) cfg_.fs_range = cfg_.base_target * 5;
  const double bdp = ctx.base_rtt > Time() ? line_ * ctx.base_rtt.sec_f() / 8 / mss_ : 1.0;
  if (cfg_.max_cwnd <= 0) cfg_.max_cwnd = std::max(100.0, 2 * bdp);
  cwnd_ = cfg_.initial_cwnd > 0 ? cfg_.initial_cwnd : std::max(1.0, bdp);
  cwnd_ = std::clamp(cwnd_, cfg_.min_cwnd, cfg_.max_cwnd);
  rtt_ = static_cast<double>(ctx.base_rtt.ps());
  const double range = static_cast<double>(cfg_.fs_range.ps());
  fs_alpha_ = range / (1 / std::sqrt(cfg_.fs_min_cwnd) - 1 / std::sqrt(cfg_.fs_max_cwnd));
  fs_beta_ = -fs_alpha_ / std::sqrt(cfg_.fs_max_cwnd);
}

Time SwiftCc::target() const {
  const double fs = std::clamp(fs_alpha_ / std::sqrt(cwnd_) + fs_beta_, 0.0,
                               static_cast<double>(cfg_.fs_range.ps()));
  return cfg_.base_target + cfg_.per_hop * hops_ + Time::ps(static_cast<int64_t>(fs));
}

Time SwiftCc::rto() const {
  return std::max(cfg_.min_rto, Time::ps(static_cast<int64_t>(cfg_.rto_scalar * rtt_)));
}

CcOutput SwiftCc::output() const {
  const Rate line(static_cast<int64_t>(line_));
  if (cwnd_ >= 1 || rtt_ <= 0) {
    // Whole packets only: a packet goes while the packets in flight and it fit the window
    // (htsim sends while in flight + mss <= cwnd), so a window of 1.9 packets holds 1.
    const double packets = std::floor(std::max(cwnd_, 1.0));
    return {line, Bytes(static_cast<int64_t>(packets * packet_bytes_)), Time(), rto()};
  }
  // Below one packet: one packet in flight, and one packet, whatever its size, per rtt / cwnd.
  return {line, Bytes(static_cast<int64_t>(packet_bytes_)),
          Time::ps(static_cast<int64_t>(rtt_ / cwnd_)), rto()};
}

bool SwiftCc::a_round_trip_since_decrease(Time now) const {
  return !decreased_ || static_cast<double>((now - last_decrease_).ps()) >= rtt_;
}

void SwiftCc::on_ack(const AckSignal& s) {
  retx_ = 0;  // the path delivers (the paper's Algorithm 1 and htsim: on every ACK)
  if (s.rtt == kNoRttSample) return;
  const auto sample = static_cast<double>(s.rtt.ps());
  delay_ = delay_ == 0 ? sample : (1 - cfg_.delay_ewma) * delay_ + cfg_.delay_ewma * sample;
  rtt_ = rtt_ == 0 ? sample : 0.875 * rtt_ + 0.125 * sample;
  const double goal = static_cast<double>(target().ps());
  const double acked = static_cast<double>(s.acked.count()) / mss_;
  if (delay_ <= goal) {
    cwnd_ += cwnd_ >= 1 ? cfg_.ai * acked / cwnd_ : cfg_.ai * acked;
  } else if (a_round_trip_since_decrease(s.now)) {
    // The smoothed delay decides; the cut is the sample's (REFERENCE.md §2.2, htsim), and a
    // sample below the target (possible with delay_ewma < 1) does not grow the window.
    cwnd_ *= std::clamp(1 - cfg_.beta * (sample - goal) / sample, 1 - cfg_.max_mdf, 1.0);
    last_decrease_ = s.now;
    decreased_ = true;
  }
  cwnd_ = std::clamp(cwnd_, cfg_.min_cwnd, cfg_.max_cwnd);
}

void SwiftCc::cut_once(Time now) {
  if (a_round_trip_since_decrease(now)) {
    cwnd_ *= 1 - cfg_.max_mdf;
    last_decrease_ = now;
    decreased_ = true;
  }
  cwnd_ = std::clamp(cwnd_, cfg_.min_cwnd, cfg_.max_cwnd);
}

// A NACK that resends is the paper's fast recovery: one cut per round trip, and the count of
// timeouts in a row starts again (the receiver heard us). Until 2026-11-29 it counted as a
// retransmission in a row, so five trimmed packets of one window set cwnd to min_cwnd.
void SwiftCc::on_nack(const NackSignal& s) {
  retx_ = 0;
  if (s.resent > Bytes()) cut_once(s.now);
}

// Only a timeout counts towards retx_reset (the paper's Algorithm 1, htsim's swift.cpp).
void SwiftCc::on_timeout(const TimeoutSignal& s) {
  if (++retx_ >= cfg_.retx_reset) {
    cwnd_ = cfg_.min_cwnd;
    return;
  }
  cut_once(s.now);
}

namespace {

class SwiftKind final : public CcKind {
 public:
  std::string_view name() const override { return "swift"; }
  std::string_view description() const override {
    return "Swift window from fabric delay against a hop- and flow-scaled target (REFERENCE.md "
           "§2.2); keys in [transport.swift]";
  }
  bool uses_hops() const override { return true; }
  KindConfig load(Section& s, Rate /*line*/) const override {
    SwiftConfig c;
    c.ai = s.real("ai", c.ai, 0.0, 1e6, "additive increase, packets per round trip");
    c.beta = s.real("beta", c.beta, 0.0, 1.0, "multiplicative decrease gain");
    c.max_mdf = s.real("max_mdf", c.max_mdf, 0.0, 1.0, "largest decrease per round trip");
    c.base_target = s.time("base_target", c.base_target,
                           "fabric delay target before scaling [UNVERIFIED: htsim's guess]");
    c.per_hop = s.time("per_hop", c.per_hop, "target per hop (0 = base_target / 6.55)");
    c.fs_range = s.time("fs_range", c.fs_range, "flow-scaling range (0 = 5 x base_target)");
    c.fs_min_cwnd = s.real("fs_min_cwnd", c.fs_min_cwnd, 1e-6, 1e9,
                           "window (packets) at which flow scaling adds fs_range");
    c.fs_max_cwnd = s.real("fs_max_cwnd", c.fs_max_cwnd, 1e-6, 1e9,
                           "window (packets) at which flow scaling adds nothing");
    c.min_cwnd = s.real("min_cwnd", c.min_cwnd, 1e-9, 1e9, "smallest window, packets");
    c.max_cwnd = s.real("max_cwnd", c.max_cwnd, 0.0, 1e9,
                        "largest window, packets (0 = 2 x the fabric's BDP, at least 100)");
    c.initial_cwnd = s.real("initial_cwnd", c.initial_cwnd, 0.0, 1e9,
                            "starting window, packets (0 = the fabric's BDP)");
    c.retx_reset = static_cast<int>(
        s.integer("retx_reset", c.retx_reset, 1, 1000,
                  "timeouts in a row (no ACK or NACK between) before cwnd = min_cwnd"));
    c.delay_ewma = s.real("delay_ewma", c.delay_ewma, 1e-6, 1.0,
                          "weight of the newest delay sample (1 = none) [UNVERIFIED]");
    c.min_rto = s.time("min_rto", c.min_rto,
                       "smallest retransmission timeout; RTO = max(rto_scalar x smoothed RTT, "
                       "min_rto), used by RoCE in place of its own [UNVERIFIED: htsim's 100 us]");
    c.rto_scalar = s.real("rto_scalar", c.rto_scalar, 0.0, 1e6,
                          "RTO in smoothed round trips, above min_rto [UNVERIFIED]");
    if (!s.describing()) {
      if (c.fs_max_cwnd <= c.fs_min_cwnd) s.fail("fs_max_cwnd", "a window above fs_min_cwnd");
      if (c.base_target <= Time()) s.fail("base_target", "a positive duration");
      if (c.min_rto <= Time()) s.fail("min_rto", "a positive duration");
    }
    return KindConfig::of(c);
  }
  std::unique_ptr<CongestionControl> build(const KindConfig& cfg,
                                           const CcContext& ctx) const override {
    return std::make_unique<SwiftCc>(cfg.get<SwiftConfig>(), ctx);
  }
};

}  // namespace

const CcKind& swift_cc() {
  static const SwiftKind kind;
  return kind;
}

}  // namespace fabsim
