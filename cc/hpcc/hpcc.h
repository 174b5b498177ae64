// HPCC (Li et al., SIGCOMM'19; REFERENCE.md §2.3, §9.2.4): rate and window from in-band
// telemetry. Every switch egress stamps a record at dequeue (timestamp, bytes sent, queue,
// link rate; net/int_stamp.h) and the ACK carries the stack back. Per ACK:
//   per hop i:  u_i = txRate_i / B_i + min(qlen_i, qlen_i') / (B_i T),
//               txRate_i = (tx_i - tx_i') / (ts_i - ts_i')    (' = the previous ACK's record)
//   the hop with the largest u; tau = min(its ts_i - ts_i', T);
//   U = U (T - tau) / T + u_max tau / T
//   U / eta >= 1 or stage >= max_stage:  R = Rc / (U / eta) + R_AI  (stage <- 0 on commit)
//   otherwise:                           R = Rc + R_AI               (stage += 1 on commit)
//   the update commits (Rc <- R) once per round trip: when the ACK's sequence passes the
//   sender's next sequence at the previous commit; between commits every ACK reacts from Rc
//   (FAST_REACT). Window = line x T x R / line = R x T (HAS_WIN, VAR_WIN).
// T is the fabric's longest unloaded round trip (GLOBAL_T). Rates are in ns-3's units: R_AI =
// 10 Mb/s x NIC rate / 25G (run.py), eta = 0.95, max_stage = 0 (run.py's MI_THRESH).
// U starts at 1, as HPCC ns-3's RdmaQueuePair sets hp.u (the paper gives no initial value): a
// new flow's first updates blend from "the path is full", so it slows as soon as it finds a
// queue. Until 2026-11-30 U started at 0 here, and a new flow took round trips to see one
// (tau / T of a new sample per ACK), so its first window overran the queue for longer.
#pragma once

#include <array>  // previous INT records

#include "cc/cc.h"
#include "cc/registry.h"
#include "core/units.h"

namespace fabsim {

struct HpccConfig {
  double eta = 0.95;          // target utilisation (U_TARGET)
  int max_stage = 0;          // additive stages before a multiplicative step (MI_THRESH)
  Rate rate_ai;               // 0 = 10 Mb/s x NIC rate / 25G
  Rate min_rate;              // 0 = NIC rate / 100 (MIN_RATE 1 Gb/s at 100G)
  Time base_rtt;              // T; 0 = the fabric's longest unloaded round trip
  int int_header_bytes = 42;  // INT bytes on every data packet and ACK: 5 hops x 8 + 2
  double initial_u = 1.0;     // U before the first measurement (HPCC ns-3 RdmaQueuePair: 1)
};

class HpccCc final : public CongestionControl {
 public:
  HpccCc(const HpccConfig& cfg, Rate line, Time base_rtt);
  CcNeeds needs() const override {
    CcNeeds n;
    n.int_stack = true;
    n.int_bytes = cfg_.int_header_bytes;
    return n;
  }
  bool window_based() const override { return true; }
  CcOutput output() const override;
  void on_int(const IntSignal& s) override;

  double utilisation() const { return u_; }
  double reference_rate() const { return rc_; }  // Rc, bps
  int stage() const { return stage_; }
  Time base_rtt() const { return t_; }

 private:
  HpccConfig cfg_;
  double line_;
  Time t_;
  double rate_;  // bps
  double rc_;    // committed reference rate, bps
  double u_;     // the EWMA utilisation U, from cfg_.initial_u
  double rate_ai_;
  double min_rate_;
  int stage_ = 0;
  bool primed_ = false;
  uint64_t update_seq_ = 0;
  int prev_hops_ = 0;
  std::array<IntHopSignal, kMaxIntSignalHops> prev_{};
};

const CcKind& hpcc_cc();

}  // namespace fabsim
