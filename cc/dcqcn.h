// DCQCN (Zhu et al., SIGCOMM'15) as pure classes: no packets, no links, time passed in.
// REFERENCE.md §1.5 (notification point) and §1.6 (reaction point), two semantics:
//  - kPaper: on each CNP RT <- RC, RC <- RC (1 - alpha/2), alpha <- (1-g) alpha + g; alpha decays
//    by (1-g) every K without a CNP; a rate timer (period T) and a byte counter (B bytes) each
//    trigger an increase: fast recovery while max(T, BC) < F, hyper increase when
//    min(T, BC) > F (RT += (min - F) R_HAI), additive increase otherwise (RT += R_AI); then
//    RC <- (RT + RC)/2.
//  - kConnectX (HPCC ns-3 cc_mode 1): CNPs only set flags; alpha is updated every t_alpha
//    ((1-g) alpha + g if a CNP arrived in the period, else (1-g) alpha); every t_dec (offset
//    1 ns after the alpha update) a flagged decrease cuts RC by alpha/2 and restarts the
//    increase stage; the increase timer (t_inc) does fast recovery for stage < F, RT += R_AI at
//    stage F, RT += R_HAI above, then RC <- (RC + RT)/2.
// Periodic timers with no effect are evaluated lazily (alpha decay is applied in closed form
// when next needed), so an idle or line-rate QP costs no events. The owner arms one timer at
// next_timer() and calls on_timer(). DcqcnCc puts the reaction point behind the
// CongestionControl interface (cc/cc.h) for transports.
#pragma once

#include <cstdint>  // byte counters

#include "cc/cc.h"
#include "core/units.h"

namespace fabsim {

enum class DcqcnMode : uint8_t { kPaper, kConnectX };

struct DcqcnConfig {
  bool enabled = true;
  DcqcnMode mode = DcqcnMode::kPaper;
  double g = 1.0 / 256;  // alpha EWMA gain
  double initial_alpha = 1.0;
  Time alpha_period = Time::us(55);     // K (paper) or t_alpha (ConnectX)
  Time increase_period = Time::us(55);  // rate timer T (paper) or t_inc = RP_TIMER (ConnectX)
  Time decrease_period = Time::us(4);   // t_dec (ConnectX only)
  int64_t byte_counter = 10'000'000;    // B (paper only; 0 disables)
  int fast_recovery_steps = 5;          // F
  Rate rate_ai = Rate::mbps(40);
  Rate rate_hai = Rate::mbps(400);
  Rate min_rate = Rate::mbps(100);
  double rate_on_first_cnp = 1.0;    // ConnectX: RC <- this x RC at the first CNP
  bool clamp_target = false;         // ConnectX: RT <- RC at every decrease
  Time cnp_interval = Time::us(50);  // notification point: at most one CNP per interval per QP

  /// The ConnectX-style set (HPCC ns-3 run.py "dcqcn", REFERENCE.md §1.6) scaled to `line`.
  static DcqcnConfig connectx(Rate line);
  /// The paper set (htsim dcqcn.cpp, DCQCN paper), the default.
  static DcqcnConfig paper();
};

/// Reaction point: the sending rate of one QP.
class DcqcnRp {
 public:
  /// A QP starting at `start` at line rate; the paper's alpha timer runs from then.
  DcqcnRp(const DcqcnConfig& cfg, Rate line, Time start = Time());

  Rate rate() const { return Rate(static_cast<int64_t>(rc_)); }
  Rate target() const { return Rate(static_cast<int64_t>(rt_)); }
  /// Alpha as of `now` (applies lazily evaluated periods without changing state).
  double alpha(Time now) const;
  int stage() const { return cfg_.mode == DcqcnMode::kPaper ? timer_count_ : stage_; }
  int byte_stage() const { return byte_count_; }
  /// Rate cuts so far: one per CNP (paper); one per decrease check that saw a CNP (ConnectX).
  uint64_t cuts() const { return cuts_; }

  void on_cnp(Time now);
  /// `bytes` were just sent (the paper's byte counter).
  void on_sent(int64_t bytes, Time now);
  /// Earliest time on_timer() must run; Time::max() when nothing is pending.
  Time next_timer() const;
  void on_timer(Time now);

 private:
  void increase_paper();
  void cut(double alpha);
  void advance_alpha(Time now);  // applies alpha periods that ended at or before now
  double alpha_after(Time now, int64_t* periods) const;
  bool at_line() const { return rc_ >= line_ && rt_ >= line_; }
  void clamp();

  DcqcnConfig cfg_;
  double line_;
  double rc_;
  double rt_;
  double alpha_;
  // Paper: alpha periods count from the last CNP; ConnectX: from the first CNP, fixed phase.
  Time alpha_epoch_;
  bool alpha_flag_ = false;  // ConnectX: a CNP arrived in the current alpha period
  bool any_cnp_ = false;
  int timer_count_ = 0;  // paper T
  int byte_count_ = 0;   // paper BC
  int64_t bytes_ = 0;    // paper byte counter accumulator
  int stage_ = 0;        // ConnectX increase stage
  uint64_t cuts_ = 0;
  Time next_increase_ = Time::max();
  Time next_decrease_ = Time::max();  // ConnectX: armed only while a decrease is flagged
  Time decrease_epoch_;               // ConnectX: phase of the decrease check
};

/// The reaction point as a CongestionControl: rate-based (no window), driven by CNPs, the
/// bytes sent and its own timers; ACKs, NACKs and timeouts leave it unchanged. It asks for
/// ECN-capable data and CNPs when enabled.
class DcqcnCc final : public CongestionControl {
 public:
  DcqcnCc(const DcqcnConfig& cfg, Rate line, Time start)
      : rp_(cfg, line, start), needs_{cfg.enabled, cfg.cnp_interval} {}

  CcNeeds needs() const override { return needs_; }
  bool window_based() const override { return false; }
  CcOutput output() const override { return {rp_.rate(), kUnlimitedWindow}; }
  uint64_t decreases() const override { return rp_.cuts(); }
  void on_sent(const SentSignal& s) override { rp_.on_sent(s.bytes.count(), s.now); }
  void on_cnp(const CnpSignal& s) override { rp_.on_cnp(s.now); }
  Time next_timer() const override { return rp_.next_timer(); }
  void on_timer(Time now) override { rp_.on_timer(now); }

  /// The state machine, for tests and traces (target rate, alpha, stages).
  const DcqcnRp& state() const { return rp_; }

 private:
  DcqcnRp rp_;
  CcNeeds needs_;
};

/// Notification point: decides when a receiver sends a CNP for CE-marked arrivals of one QP.
class CnpPacer {
 public:
  explicit CnpPacer(Time interval) : interval_(interval) {}
  /// A CE-marked packet arrived: true = send a CNP now. Otherwise the mark is remembered and
  /// pending_until() says when to call on_timer().
  bool on_marked(Time now);
  Time pending_until() const { return pending_ ? last_ + interval_ : Time::max(); }
  /// Timer: true = send the remembered CNP now.
  bool on_timer(Time now);
  uint64_t sent() const { return sent_; }

 private:
  Time interval_;
  Time last_;
  bool any_ = false;
  bool pending_ = false;
  uint64_t sent_ = 0;
};

}  // namespace fabsim
