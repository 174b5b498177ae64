// DCQCN reaction and notification points; see dcqcn.h.
#include "cc/dcqcn.h"

#include <algorithm>  // min, max
#include <cmath>      // pow

namespace fabsim {

DcqcnConfig DcqcnConfig::paper() {
  return DcqcnConfig{};
}

DcqcnConfig DcqcnConfig::connectx(Rate line) {
  DcqcnConfig c;
  c.mode = DcqcnMode::kConnectX;
  c.g = 1.0 / 256;
  c.alpha_period = Time::us(1);
  c.decrease_period = Time::us(4);
  c.increase_period = Time::us(300);
  c.byte_counter = 0;
  c.fast_recovery_steps = 1;
  // HPCC ns-3 run.py scales R_AI = 5 Mb/s and R_HAI = 50 Mb/s by line / 25 Gb/s.
  // 128-bit product: 50 Mb/s x 400 Gb/s overflows 64 bits.
  const auto scaled = [line](Rate r) {
    return Rate(
        static_cast<int64_t>(static_cast<Int128>(r.bps()) * line.bps() / Rate::gbps(25).bps()));
  };
  c.rate_ai = scaled(Rate::mbps(5));
  c.rate_hai = scaled(Rate::mbps(50));
  c.min_rate = Rate::gbps(1);
  c.rate_on_first_cnp = 1.0;
  c.clamp_target = false;
  // ns-3 echoes every CE mark in the next ACK (one ACK per packet): no notification-point
  // limiter; the 4 us decrease check paces the cuts (REFERENCE.md §1.5 "Variant"). Firmware's
  // min_time_between_cnps (2-4 us) is `cnp_interval`.
  c.cnp_interval = Time();
  return c;
}

DcqcnRp::DcqcnRp(const DcqcnConfig& cfg, Rate line, Time start)
    : cfg_(cfg), line_(static_cast<double>(line.bps())), rc_(line_), rt_(line_),
      alpha_(cfg.initial_alpha), alpha_epoch_(start) {}

double DcqcnRp::alpha_after(Time now, int64_t* periods) const {
  *periods = 0;
  if (cfg_.mode == DcqcnMode::kConnectX && !any_cnp_) return alpha_;
  const int64_t n = now < alpha_epoch_ ? 0 : (now - alpha_epoch_).ps() / cfg_.alpha_period.ps();
  *periods = n;
  if (n == 0) return alpha_;
  double a = alpha_;
  int64_t decays = n;
  if (cfg_.mode == DcqcnMode::kConnectX) {
    a = (1 - cfg_.g) * a + (alpha_flag_ ? cfg_.g : 0.0);
    decays = n - 1;
  }
  return a * std::pow(1 - cfg_.g, static_cast<double>(decays));
}

double DcqcnRp::alpha(Time now) const {
  int64_t n = 0;
  return alpha_after(now, &n);
}

void DcqcnRp::advance_alpha(Time now) {
  int64_t n = 0;
  alpha_ = alpha_after(now, &n);
  if (n > 0) {
    alpha_epoch_ += cfg_.alpha_period * n;
    alpha_flag_ = false;
  }
}

void DcqcnRp::clamp() {
  rt_ = std::min(rt_, line_);
  rc_ = std::min(rc_, line_);
  // (RT + RC)/2 approaches line rate geometrically; below one bit per second of it, snap so
  // an idle or recovered QP stops its increase timer.
  if (rt_ >= line_ && line_ - rc_ < 1.0) rc_ = line_;
  const auto floor = static_cast<double>(cfg_.min_rate.bps());
  rc_ = std::max(rc_, floor);
}

void DcqcnRp::cut(double alpha) {
  ++cuts_;
  rc_ = rc_ * (1 - alpha / 2);
  clamp();
}

void DcqcnRp::on_cnp(Time now) {
  if (!cfg_.enabled) return;
  if (cfg_.mode == DcqcnMode::kPaper) {
    advance_alpha(now);
    rt_ = rc_;
    cut(alpha_);
    alpha_ = (1 - cfg_.g) * alpha_ + cfg_.g;
    alpha_epoch_ = now;  // the alpha timer restarts at every CNP
    timer_count_ = 0;
    byte_count_ = 0;
    bytes_ = 0;
    next_increase_ = now + cfg_.increase_period;
    return;
  }
  if (!any_cnp_) {
    // The first CNP initialises alpha and does not count in its first period (ns-3's
    // cnp_received_mlx clears m_alpha_cnp_arrived on the first CNP).
    any_cnp_ = true;
    alpha_ = cfg_.initial_alpha;
    rc_ = rc_ * cfg_.rate_on_first_cnp;
    rt_ = rc_;
    clamp();
    alpha_epoch_ = now;
    decrease_epoch_ = now + Time::ns(1);  // decrease checks run 1 ns after alpha updates
  } else {
    advance_alpha(now);
    alpha_flag_ = true;
  }
  if (next_decrease_ == Time::max()) {
    const int64_t k = (now - decrease_epoch_).ps() / cfg_.decrease_period.ps() + 1;
    next_decrease_ = decrease_epoch_ + cfg_.decrease_period * std::max<int64_t>(k, 1);
  }
}

void DcqcnRp::on_sent(int64_t bytes, Time now) {
  if (!cfg_.enabled || cfg_.mode != DcqcnMode::kPaper || cfg_.byte_counter <= 0) return;
  if (at_line()) return;  // increases are no-ops at line rate; BC restarts at the next CNP
  bytes_ += bytes;
  while (bytes_ >= cfg_.byte_counter) {
    bytes_ -= cfg_.byte_counter;
    ++byte_count_;
    increase_paper();
  }
  if (at_line()) next_increase_ = Time::max();
  (void)now;
}

void DcqcnRp::increase_paper() {
  const int f = cfg_.fast_recovery_steps;
  const int hi = std::max(timer_count_, byte_count_);
  const int lo = std::min(timer_count_, byte_count_);
  if (hi < f) {
    // fast recovery: RT unchanged
  } else if (lo > f) {
    rt_ += static_cast<double>(lo - f) * static_cast<double>(cfg_.rate_hai.bps());
  } else {
    rt_ += static_cast<double>(cfg_.rate_ai.bps());
  }
  rt_ = std::min(rt_, line_);
  rc_ = (rt_ + rc_) / 2;
  clamp();
}

Time DcqcnRp::next_timer() const {
  return std::min(next_increase_, next_decrease_);
}

void DcqcnRp::on_timer(Time now) {
  while (next_timer() <= now) {
    if (next_decrease_ <= next_increase_) {
      // ConnectX decrease check, with a CNP flagged since the last one.
      const Time at = next_decrease_;
      advance_alpha(at);
      if (cfg_.clamp_target || stage_ != 0) rt_ = rc_;
      cut(alpha_);
      stage_ = 0;
      next_decrease_ = Time::max();
      next_increase_ = at + cfg_.increase_period;
      continue;
    }
    const Time at = next_increase_;
    if (cfg_.mode == DcqcnMode::kPaper) {
      ++timer_count_;
      increase_paper();
    } else {
      const int f = cfg_.fast_recovery_steps;
      if (stage_ == f) {
        rt_ += static_cast<double>(cfg_.rate_ai.bps());
      } else if (stage_ > f) {
        rt_ += static_cast<double>(cfg_.rate_hai.bps());
      }
      rt_ = std::min(rt_, line_);
      rc_ = (rc_ + rt_) / 2;
      clamp();
      ++stage_;
    }
    next_increase_ = at_line() ? Time::max() : at + cfg_.increase_period;
  }
}

bool CnpPacer::on_marked(Time now) {
  if (!any_ || now - last_ >= interval_) {
    any_ = true;
    last_ = now;
    pending_ = false;
    ++sent_;
    return true;
  }
  pending_ = true;
  return false;
}

bool CnpPacer::on_timer(Time now) {
  if (!pending_ || now - last_ < interval_) return false;
  last_ = now;
  pending_ = false;
  ++sent_;
  return true;
}

}  // namespace fabsim
