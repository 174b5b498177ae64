// NSCC, Ultra Ethernet's network-signal-based sender congestion control (REFERENCE.md §4.5, as
// uet-htsim's uec.cpp states it; derived values checked against §9.3.3). A window in frame
// bytes (payload + header_bytes per packet, as htsim counts its MTU) driven by two signals: the
// ECN echo of each ACK and the queueing delay (RTT sample - base RTT) against a target.
//
// Derived at set-up from the NIC rate, the network RTT (CcContext::base_rtt, htsim's
// network_rtt) and the MSS (§4.5 table, §9.3.3):
//   BDP = line x rtt; a = BDP / (100 Gb/s x 12 us); target = 0.75 x rtt with trimming, else
//   1.0 x rtt; b = target / 12 us; alpha = 4 MSS a b / target (per ps); fi = 5 MSS a;
//   eta = 0.15 MSS a; fi_scale = 0.25 a; gamma = 0.8; qa_threshold = 4 x target; qa_gate = 3;
//   delay EWMA 0.0125; adjust_period = rtt; adjust_bytes = 8 MTU; maxwnd = initial cwnd =
//   1.5 BDP; min cwnd = MTU.
// Per ACK (`newly` = frame bytes the receiver newly reported):
//   receiver penalty p < penalty_scale (255): cwnd -= newly - newly x p / 255 [UNVERIFIED];
//   delay = rtt - base (base = smallest RTT seen; BDP and maxwnd follow it down), or the
//   average when the ACK has no sample; EWMA (weight 0.0125) of delay, or of base / 4 when the
//   delay is above target without ECN; quick adapt (below); else the quadrant:
//     no ECN, delay >= target: fair increase, inc += fi x newly;
//     no ECN, delay <  target: fast increase if the delay stayed under 1 us for more than a
//       window (cwnd += newly x fi_scale), else proportional, inc += alpha newly (target - delay);
//     ECN, delay >= target: multiplicative decrease at most once per base RTT, if avg > target:
//       cwnd *= max(1 - gamma (avg - target) / avg, 0.5);
//     ECN, delay <  target: nothing (the transport penalises the path).
//   Then every adjust_bytes received or adjust_period: cwnd += inc / cwnd, plus eta once per
//   period. Clamp to [min cwnd, maxwnd].
// Quick adapt, once per base + target: if a NACK came, or the delay passed qa_threshold, and
// the bytes achieved in the window are under maxwnd / 2^qa_gate: cwnd = max(achieved, MTU), and
// ECN on the next in-flight bytes is ignored.
// NACK: EWMA fed the network RTT, quick adapt triggered; if it did not fire, cwnd -= the
// packet's frame bytes, except for a last-hop trim when receiver credit runs (§4.5 "spec
// wording"). Timeout: cwnd = max(cwnd - the packet's frame bytes, MTU).
//
// Differences from htsim: cwnd, inc and the delay average are real numbers (htsim truncates
// each to whole bytes or picoseconds); the first adjustment period starts at the sender's
// start (htsim: time 0); the first decrease may come at once (htsim: not before one base RTT of
// simulated time). [UNVERIFIED: fabsim's mapping, no source] With a transport that does
// not report `received` (RoCE), `newly` is the acknowledged payload plus header_bytes per
// packet, and in flight is (next_seq - seq) MTUs; a NACK counts one lost packet (at most one MSS
// of `resent`: RoCE's go-back-N NACK names its first hole and rewinds the rest, which is not
// lost); a timeout that does not report its size counts one MTU. The only key without a source
// is penalty_scale, marked [UNVERIFIED] in its description.
#pragma once

#include <cstdint>  // int64_t

#include "cc/cc.h"
#include "cc/registry.h"
#include "core/units.h"

namespace fabsim {

/// The keys of `[transport.nscc]`: every derived value can be set; 0 = derived.
struct NsccConfig {
  int64_t header_bytes = 0;  // per packet: MTU = MSS + header_bytes; 0 = the transport's header
  Time target;               // queueing-delay target; 0 = target_factor x rtt
  double target_factor = 0;  // 0 = 0.75 with trimming, else 1.0
  double alpha = 0;          // proportional gain, per ps; 0 = 4 MSS a b / target
  double fi = 0;             // fair increase, bytes; 0 = 5 MSS a
  double eta = 0;            // additive increase per adjust period, bytes; 0 = 0.15 MSS a
  double fi_scale = 0;       // fast increase per newly received byte; 0 = 0.25 a
  double gamma = 0.8;        // multiplicative decrease gain
  double md_floor = 0.5;     // the largest cut keeps this fraction of the window
  Time qa_threshold;         // quick-adapt delay; 0 = 4 x target
  int qa_gate = 3;           // quick adapt only below maxwnd / 2^qa_gate achieved
  bool quick_adapt = true;
  double delay_ewma = 0.0125;  // weight of the newest delay sample
  Time adjust_period;          // 0 = rtt
  Bytes adjust_bytes;          // 0 = 8 MTU
  double maxwnd_bdp = 1.5;     // maxwnd = maxwnd_bdp x BDP
  Bytes max_cwnd;              // 0 = maxwnd_bdp x BDP, following the base RTT down
  Bytes initial_cwnd;          // 0 = maxwnd
  Bytes min_cwnd;              // 0 = MTU
  Time fast_increase_delay = Time::us(1);
  double no_ecn_sample = 0.25;  // delay above target without ECN: EWMA fed this x base
  int penalty_scale = 255;      // receiver_penalty p removes newly x (1 - p / penalty_scale)
  bool track_base_rtt = true;   // base = smallest RTT seen (htsim update_base_rtt)
  Rate reference_rate = Rate::gbps(100);  // the scaling reference point (a = 1)
  Time reference_rtt = Time::us(12);
};

/// The values an instance runs with, after derivation (REFERENCE.md §9.3.3's printout).
struct NsccParams {
  int64_t mss = 0;
  int64_t header_bytes = 0;  // the key, else CcContext::header_bytes
  int64_t mtu = 0;           // mss + header_bytes
  Time network_rtt;          // CcContext::base_rtt (reference_rtt when unknown)
  double bdp = 0;            // bytes, line x network_rtt
  double scaling_a = 0;      // bdp / (reference_rate x reference_rtt)
  double scaling_b = 0;      // target / reference_rtt
  double target = 0;         // ps
  double alpha = 0;          // per ps
  double fi = 0;
  double eta = 0;
  double fi_scale = 0;
  double gamma = 0;
  double md_floor = 0;
  double qa_threshold = 0;  // ps
  int qa_gate = 0;
  double delay_ewma = 0;
  double adjust_period = 0;  // ps
  double adjust_bytes = 0;
  double maxwnd = 0;  // bytes, at set-up
  double initial_cwnd = 0;
  double min_cwnd = 0;
  double fast_increase_delay = 0;  // ps
};

/// Derives an instance's parameters from its keys and context.
NsccParams nscc_params(const NsccConfig& cfg, const CcContext& ctx);

class NsccCc final : public CongestionControl {
 public:
  NsccCc(const NsccConfig& cfg, const CcContext& ctx);
  CcNeeds needs() const override;
  bool window_based() const override { return true; }
  CcOutput output() const override;
  void on_ack(const AckSignal& s) override;
  void on_nack(const NackSignal& s) override;
  void on_timeout(const TimeoutSignal& s) override;

  const NsccParams& params() const { return p_; }
  double cwnd() const { return cwnd_; }  // frame bytes
  double maxwnd() const { return maxwnd_; }
  Time target() const { return Time::ps(static_cast<int64_t>(p_.target)); }
  double avg_delay() const { return avg_delay_; }  // ps
  double base_rtt() const { return base_rtt_; }    // ps
  double inc_bytes() const { return inc_; }
  double in_flight() const { return in_flight_; }  // frame bytes, as of the latest ACK
  double achieved() const { return achieved_; }
  bool fast_increasing() const { return increasing_; }

 private:
  double frames(Bytes payload) const;  // payload + header_bytes per packet
  void update_base(double rtt);
  void feed_delay(double delay, bool ecn);
  bool quick_adapt(Time now, bool loss, bool ecn, double delay, double in_flight);
  void fast_increase(double newly, double delay);
  void multiplicative_decrease(Time now);
  void fulfill(Time now);
  void clamp();

  // The keys read after set-up (the others are in p_): one instance per connection, and an
  // all-to-all of 128 hosts has 16,256, so the instance keeps 32 bytes of keys, not 184.
  struct Keys {
    int64_t header_bytes;
    double maxwnd_bdp;
    double no_ecn_sample;
    int penalty_scale;
    bool quick_adapt;
    bool track_base_rtt;
  } cfg_;
  NsccParams p_;
  Rate line_;
  bool receiver_credit_;    // CcContext::receiver_credit: a last-hop trim does not cut
  bool fixed_max_ = false;  // max_cwnd set: the base RTT does not move maxwnd
  double cwnd_ = 0;
  double maxwnd_ = 0;
  double base_rtt_ = 0;   // ps
  double avg_delay_ = 0;  // ps
  double in_flight_ = 0;  // frame bytes, as of the latest ACK (a NACK's fallback)
  double inc_ = 0;        // pending increase, bytes x bytes (divided by cwnd at adjustment)
  double achieved_ = 0;   // received in the current quick-adapt window
  double received_ = 0;   // received since the last adjustment
  double fi_count_ = 0;   // received while the delay stayed under fast_increase_delay
  double ignored_ = 0;    // received or NACKed since the last quick adapt
  double to_ignore_ = 0;  // in flight when quick adapt last fired
  bool increasing_ = false;
  bool trigger_qa_ = false;
  bool qa_started_ = false;
  double qa_end_ = 0;  // ps: the current quick-adapt window ends
  bool decreased_ = false;
  Time last_decrease_;
  Time last_adjust_;
};

const CcKind& nscc_cc();

}  // namespace fabsim
