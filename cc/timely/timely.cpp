// TIMELY; see timely.h.
#include "cc/timely/timely.h"

#include <algorithm>  // clamp, max

namespace fabsim {

TimelyCc::TimelyCc(const TimelyConfig& cfg, Rate line)
    : cfg_(cfg), line_(static_cast<double>(line.bps())), rate_(line_) {
  delta_ = cfg.delta.bps() > 0 ? static_cast<double>(cfg.delta.bps()) : 10e6 * line_ / 10e9;
  min_rate_ = cfg.min_rate.bps() > 0 ? static_cast<double>(cfg.min_rate.bps()) : line_ / 100;
}

void TimelyCc::on_ack(const AckSignal& s) {
  if (s.rtt == kNoRttSample) return;
  if (!primed_) {
    primed_ = true;
    prev_rtt_ = s.rtt;
    update_seq_ = s.next_seq;
    return;
  }
  if (s.seq <= update_seq_) return;  // once per round trip of ACKs
  const double new_diff = static_cast<double>((s.rtt - prev_rtt_).ps());
  rtt_diff_ = (1 - cfg_.a) * rtt_diff_ + cfg_.a * new_diff;
  const double gradient = rtt_diff_ / static_cast<double>(cfg_.min_rtt.ps());
  bool increase = false;
  double factor = 1.0;
  if (s.rtt < cfg_.t_low) {
    increase = true;
  } else if (s.rtt > cfg_.t_high) {
    factor = 1 - cfg_.beta *
                     (1 - static_cast<double>(cfg_.t_high.ps()) / static_cast<double>(s.rtt.ps()));
  } else if (gradient <= 0) {
    increase = true;
  } else {
    factor = std::max(0.0, 1 - cfg_.beta * gradient);
  }
  if (increase) {
    rate_ += increases_ >= cfg_.hai_after ? cfg_.hai_factor * delta_ : delta_;
    ++increases_;
  } else {
    rate_ *= factor;
    increases_ = 0;
  }
  rate_ = std::clamp(rate_, min_rate_, line_);
  prev_rtt_ = s.rtt;
  update_seq_ = s.next_seq;
}

namespace {

class TimelyKind final : public CcKind {
 public:
  std::string_view name() const override { return "timely"; }
  std::string_view description() const override {
    return "TIMELY rate control from the RTT gradient, NIC timestamps (REFERENCE.md §2.1); keys "
           "in [transport.timely]";
  }
  KindConfig load(Section& s, Rate line) const override {
    TimelyConfig c;
    c.a = s.real("a", c.a, 0.0, 1.0, "EWMA weight of the newest RTT difference");
    c.beta = s.real("beta", c.beta, 0.0, 1.0, "multiplicative decrease factor");
    c.t_low = s.time("t_low", c.t_low, "below it: additive increase");
    c.t_high = s.time("t_high", c.t_high, "above it: decrease in proportion to the excess");
    c.min_rtt = s.time("min_rtt", c.min_rtt, "normalises the RTT gradient");
    c.delta = s.rate("delta", Rate(line.bps() / 1000),
                     "additive increase step (run.py: 10 Mb/s x NIC rate / 10G)");
    c.hai_after = static_cast<int>(
        s.integer("hai_after", c.hai_after, 1, 1000, "increases in a row before HAI"));
    c.hai_factor = static_cast<int>(
        s.integer("hai_factor", c.hai_factor, 1, 1000, "HAI step in units of delta"));
    c.min_rate = s.rate("min_rate", Rate(line.bps() / 100), "rate floor (NIC rate / 100)");
    if (!s.describing()) {
      if (c.t_high < c.t_low) s.fail("t_high", "a duration at least t_low");
      if (c.min_rtt <= Time()) s.fail("min_rtt", "a positive duration");
      if (c.min_rate > line) s.fail("min_rate", "a rate at most the NIC rate");
    }
    return KindConfig::of(c);
  }
  std::unique_ptr<CongestionControl> build(const KindConfig& cfg,
                                           const CcContext& ctx) const override {
    return std::make_unique<TimelyCc>(cfg.get<TimelyConfig>(), ctx.line);
  }
};

}  // namespace

const CcKind& timely_cc() {
  static const TimelyKind kind;
  return kind;
}

}  // namespace fabsim
