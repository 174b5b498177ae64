// HPCC; see hpcc.h.
#include "cc/hpcc/hpcc.h"

#include <algorithm>  // clamp, min

namespace fabsim {

HpccCc::HpccCc(const HpccConfig& cfg, Rate line, Time base_rtt)
    : cfg_(cfg), line_(static_cast<double>(line.bps())), t_(base_rtt), rate_(line_), rc_(line_),
      u_(cfg.initial_u) {
  rate_ai_ = cfg.rate_ai.bps() > 0 ? static_cast<double>(cfg.rate_ai.bps()) : 10e6 * line_ / 25e9;
  min_rate_ = cfg.min_rate.bps() > 0 ? static_cast<double>(cfg.min_rate.bps()) : line_ / 100;
  if (t_ <= Time()) t_ = Time::us(10);  // no fabric known (unit use): a typical DC round trip
}

CcOutput HpccCc::output() const {
  const auto bytes = static_cast<int64_t>(rate_ * t_.sec_f() / 8);
  return {Rate(static_cast<int64_t>(rate_)), Bytes(std::max<int64_t>(bytes, 1))};
}

void HpccCc::on_int(const IntSignal& s) {
  if (s.hops <= 0) return;
  if (!primed_ || s.hops != prev_hops_) {  // first ACK, or the path changed: a reference only
    primed_ = true;
    prev_hops_ = s.hops;
    prev_ = s.hop;
    update_seq_ = s.next_seq;
    return;
  }
  const double t = static_cast<double>(t_.ps());
  double u_max = -1;
  double tau_max = t;
  for (int i = 0; i < s.hops; ++i) {
    const IntHopSignal& h = s.hop[i];
    const IntHopSignal& l = prev_[i];
    const double tau = static_cast<double>((h.timestamp - l.timestamp).ps());
    if (tau <= 0) continue;
    const double b = static_cast<double>(h.link_rate.bps());
    const double tx_rate =
        static_cast<double>((h.tx_bytes - l.tx_bytes).count()) * 8 / (tau * 1e-12);
    const double q = static_cast<double>(std::min(h.queue, l.queue).count()) * 8;
    const double u = tx_rate / b + q / (b * t * 1e-12);
    if (u > u_max) {
      u_max = u;
      tau_max = tau;
    }
  }
  prev_ = s.hop;
  if (u_max < 0) return;  // no time passed at any hop
  const double tau = std::min(tau_max, t);
  u_ = u_ * (t - tau) / t + u_max * tau / t;
  const bool commit = s.seq > update_seq_;
  double r = 0;
  if (u_ / cfg_.eta >= 1 || stage_ >= cfg_.max_stage) {
    r = rc_ / (u_ / cfg_.eta) + rate_ai_;
    if (commit) stage_ = 0;
  } else {
    r = rc_ + rate_ai_;
    if (commit) ++stage_;
  }
  rate_ = std::clamp(r, min_rate_, line_);
  if (commit) {
    rc_ = rate_;
    update_seq_ = s.next_seq;
  }
}

namespace {

class HpccKind final : public CcKind {
 public:
  std::string_view name() const override { return "hpcc"; }
  std::string_view description() const override {
    return "HPCC rate and window from per-hop INT stamped at dequeue (REFERENCE.md §2.3); keys "
           "in [transport.hpcc]";
  }
  KindConfig load(Section& s, Rate line) const override {
    HpccConfig c;
    c.eta = s.real("eta", c.eta, 0.01, 1.0, "target utilisation (U_TARGET)");
    c.max_stage = static_cast<int>(s.integer("max_stage", c.max_stage, 0, 1000,
                                             "additive stages before a multiplicative step "
                                             "(run.py MI_THRESH 0; ns-3 attribute 5)"));
    c.rate_ai = s.rate("rate_ai", Rate(line.bps() / 2500),
                       "additive increase R_AI (run.py: 10 Mb/s x NIC rate / 25G)");
    c.min_rate = s.rate("min_rate", Rate(line.bps() / 100), "rate floor (NIC rate / 100)");
    c.base_rtt = s.time("base_rtt", c.base_rtt,
                        "T (0 = the fabric's longest unloaded round trip, GLOBAL_T)");
    c.int_header_bytes = static_cast<int>(
        s.integer("int_header_bytes", c.int_header_bytes, 0, 1024,
                  "INT bytes on every data packet and ACK (HPCC ns-3: 5 hops x 8 B + 2 B)"));
    c.initial_u = s.real("initial_u", c.initial_u, 0.0, 10.0,
                         "U, a fraction of the link's capacity, before the first measurement (HPCC "
                         "ns-3 RdmaQueuePair: 1; 0 = a new flow reads the path as idle until its "
                         "samples build U up)");
    if (!s.describing() && c.min_rate > line) s.fail("min_rate", "a rate at most the NIC rate");
    return KindConfig::of(c);
  }
  std::unique_ptr<CongestionControl> build(const KindConfig& cfg,
                                           const CcContext& ctx) const override {
    const auto& c = cfg.get<HpccConfig>();
    return std::make_unique<HpccCc>(c, ctx.line, c.base_rtt > Time() ? c.base_rtt : ctx.base_rtt);
  }
};

}  // namespace

const CcKind& hpcc_cc() {
  static const HpccKind kind;
  return kind;
}

}  // namespace fabsim
