// TIMELY (Mittal et al., SIGCOMM'15; REFERENCE.md §2.1): rate control from the gradient of
// the round-trip time, measured with NIC timestamps (the ACK echoes the data packet's transmit
// time). Evaluated once per round trip's worth of ACKs (an ACK whose sequence passes the
// sender's next sequence at the previous update); the first sample only primes prev_rtt.
//   new_diff = rtt - prev_rtt;  rtt_diff = (1 - a) rtt_diff + a new_diff;
//   gradient = rtt_diff / min_rtt;
//   rtt < T_low:  rate += delta (rate += hai_factor x delta after hai_after increases in a row)
//   rtt > T_high: rate *= 1 - beta (1 - T_high / rtt)
//   gradient <= 0: additive increase as above;  else rate *= max(0, 1 - beta gradient)
//   clamp to [min_rate, line]; any decrease resets the increase count.
// Defaults: the HPCC ns-3 attribute values and run.py's scaling of delta with the NIC rate.
#pragma once

#include "cc/cc.h"
#include "cc/registry.h"
#include "core/units.h"

namespace fabsim {

struct TimelyConfig {
  double a = 0.875;  // EWMA weight of the new RTT difference
  double beta = 0.8;
  Time t_low = Time::us(50);
  Time t_high = Time::us(500);
  Time min_rtt = Time::us(20);  // normalises the gradient
  Rate delta;                   // additive step (0 = 10 Mb/s x line / 10G)
  int hai_after = 5;            // consecutive increases before hyper-active increase
  int hai_factor = 5;           // HAI step = hai_factor x delta (run.py: 50 Mb/s x line / 10G)
  Rate min_rate;                // 0 = line / 100 (HPCC ns-3 MIN_RATE 1 Gb/s at 100G)
};

class TimelyCc final : public CongestionControl {
 public:
  TimelyCc(const TimelyConfig& cfg, Rate line);
  CcNeeds needs() const override { return {}; }
  bool window_based() const override { return false; }
  CcOutput output() const override { return {Rate(static_cast<int64_t>(rate_)), kUnlimitedWindow}; }
  void on_ack(const AckSignal& s) override;

  double rtt_diff_ps() const { return rtt_diff_; }
  int increases() const { return increases_; }
  bool primed() const { return primed_; }

 private:
  TimelyConfig cfg_;
  double line_;
  double rate_;
  double delta_;
  double min_rate_;
  double rtt_diff_ = 0;  // ps
  Time prev_rtt_;
  bool primed_ = false;      // a first sample was taken
  uint64_t update_seq_ = 0;  // the next update waits for an ACK past this
  int increases_ = 0;        // consecutive increases
};

const CcKind& timely_cc();

}  // namespace fabsim
