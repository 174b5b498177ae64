// Swift (Kumar et al., SIGCOMM'20; REFERENCE.md §2.2, as the Falcon spec and htsim state it):
// a congestion window in packets driven by the fabric delay against a target that grows with
// the hop count and shrinks with the window (flow scaling):
//   target = base + per_hop x hops + clamp(fs_alpha / sqrt(cwnd) + fs_beta, 0, fs_range)
//   fs_alpha = fs_range / (1 / sqrt(fs_min_cwnd) - 1 / sqrt(fs_max_cwnd)),
//   fs_beta = -fs_alpha / sqrt(fs_max_cwnd)
// On an ACK with a delay sample: delay <= target: cwnd += ai x acked / cwnd (cwnd >= 1) or
// ai x acked (cwnd < 1), in packets; delay > target, at most once per round trip:
// cwnd *= max(1 - beta (delay - target) / delay, 1 - max_mdf) (at most 1). On a NACK that
// resends (fast recovery) or a timeout, once per round trip: cwnd *= 1 - max_mdf; after
// retx_reset timeouts in a row (an ACK or NACK starts the count again): cwnd = min_cwnd (the
// paper's Algorithm 1, htsim's swift.cpp; REFERENCE.md §2.2's Falcon statement counts early
// retransmissions too, see docs/MODEL.md). Clamp to [min_cwnd, max_cwnd]. The window holds whole
// packets (floor(cwnd) of them); below one packet it is one packet, and packets, whatever their
// size, start at least rtt / cwnd apart. The window goes out as packets x the bytes the
// transport counts per packet (CcContext::window_packet_bytes: payload under RoCE, the frame
// under UET), so N packets of window let N packets out under either. RTO = max(rto_scalar x
// smoothed RTT, min_rto). The fabric delay here is the NIC-timestamped round trip: fabsim's hosts
// add no processing delay. Defaults: htsim's labelled guesses [UNVERIFIED: the paper's production
// values].
#pragma once

#include "cc/cc.h"
#include "cc/registry.h"
#include "core/units.h"

namespace fabsim {

struct SwiftConfig {
  double ai = 1.0;  // packets per round trip
  double beta = 0.8;
  double max_mdf = 0.5;
  Time base_target = Time::us(20);
  Time per_hop;                  // 0 = base_target / 6.55
  Time fs_range;                 // 0 = 5 x base_target
  double fs_min_cwnd = 0.1;      // packets
  double fs_max_cwnd = 100;      // packets
  double min_cwnd = 0.001;       // packets
  double max_cwnd = 0;           // packets; 0 = 2 x the fabric's BDP (at least 100)
  double initial_cwnd = 0;       // packets; 0 = the fabric's BDP (at least 1)
  int retx_reset = 5;            // timeouts in a row before cwnd = min_cwnd
  double delay_ewma = 1.0;       // weight of the newest delay sample (1 = no smoothing)
  Time min_rto = Time::us(100);  // htsim's [UNVERIFIED]
  double rto_scalar = 2.0;       // smoothed round trips [UNVERIFIED]
};

class SwiftCc final : public CongestionControl {
 public:
  SwiftCc(const SwiftConfig& cfg, const CcContext& ctx);
  CcNeeds needs() const override { return {}; }
  bool window_based() const override { return true; }
  CcOutput output() const override;
  void on_ack(const AckSignal& s) override;
  void on_nack(const NackSignal& s) override;
  void on_timeout(const TimeoutSignal& s) override;

  double cwnd() const { return cwnd_; }  // packets
  Time target() const;
  Time smoothed_delay() const { return Time::ps(static_cast<int64_t>(delay_)); }
  Time rto() const;

 private:
  void cut_once(Time now);  // by max_mdf, at most once per round trip
  bool a_round_trip_since_decrease(Time now) const;

  SwiftConfig cfg_;
  double line_;
  double mss_;
  double packet_bytes_;  // one packet of window in the transport's unit (CcContext)
  int hops_;
  double cwnd_;
  double delay_ = 0;  // ps, smoothed
  double rtt_ = 0;    // ps, smoothed round trip (pacing, once-per-RTT decisions)
  Time last_decrease_;
  bool decreased_ = false;
  int retx_ = 0;
  double fs_alpha_ = 0;  // ps
  double fs_beta_ = 0;   // ps
};

const CcKind& swift_cc();

}  // namespace fabsim
