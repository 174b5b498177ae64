// A unidirectional link: rate, propagation delay, a loss model (random or bursty), an up/down
// state and a bit-error model (docs/FAULTS.md).
// DESIGN.md "The engine": in-flight packets wait in a FIFO ring and the link arms exactly one
// event, for the head packet; arrival order equals departure order because the delay is fixed.
// Error model: a pre-FEC bit error rate and an FEC; a frame is lost when a codeword it spans is
// uncorrectable (frame_loss_probability). Frames lost to errors and to a dead link are counted
// apart from each other and from congestion drops (which happen in switches).
#pragma once

#include <array>    // serialization cache
#include <cstdint>  // counters
#include <memory>   // impairment block
#include <string>   // name
#include <vector>   // loss probability cache

#include "core/assert.h"
#include "core/packet.h"
#include "core/ring.h"
#include "core/rng.h"
#include "core/simulation.h"
#include "core/units.h"

namespace fabsim {

class Node;

/// Forward error correction on a link (docs/FAULTS.md).
enum class Fec : uint8_t {
  kNone,   // a frame is lost on any bit error
  kRs544,  // IEEE 802.3 clause 91/134 RS(544,514) "KP4": 10-bit symbols, corrects 15 per codeword
};

/// What a link connects; set by Network::connect, read when a loss model is scoped to some links.
enum class LinkRole : uint8_t {
  kHostUp,    // host NIC -> switch
  kHostDown,  // switch -> host NIC
  kFabric,    // switch -> switch
};

/// Which links a scenario's loss model applies to (`network.loss.links`).
enum class LossScope : uint8_t { kAll, kHostUp, kHostDown, kHosts, kFabric };
/// Whether a link of role `role` is in `scope`.
bool in_scope(LossScope scope, LinkRole role);

/// Per-frame loss on a link (docs/FAULTS.md "Loss models"); PFC frames are exempt.
///  - Bernoulli: each frame is lost independently with `probability`.
///  - Gilbert-Elliott: a two-state Markov chain stepped once per frame. A frame is lost with
///    `loss_good` (k) in the good state and `loss_bad` (h) in the bad one; then the chain moves
///    good -> bad with `p` and bad -> good with `r`. It starts in the good state. Stationary bad
///    fraction p / (p + r); mean loss (r k + p h) / (p + r); mean stay in the bad state 1 / r.
struct LossModel {
  enum class Kind : uint8_t { kBernoulli, kGilbert };
  Kind kind = Kind::kBernoulli;
  double probability = 0;  // Bernoulli
  double p = 0;            // Gilbert-Elliott: P(good -> bad) per frame
  double r = 1;            // P(bad -> good) per frame, > 0
  double loss_good = 0;    // k
  double loss_bad = 1;     // h
  static LossModel bernoulli(double probability) { return {Kind::kBernoulli, probability}; }
  static LossModel gilbert(double p, double r, double loss_bad = 1, double loss_good = 0) {
    return {Kind::kGilbert, 0, p, r, loss_good, loss_bad};
  }
  /// The long-run fraction of frames lost.
  double mean_loss() const;
  /// Whether the model can lose a frame at all (no random draws are made otherwise).
  bool active() const;
};

/// Post-FEC loss probability of a frame of `frame_bits` bits at pre-FEC bit error rate `ber`,
/// with independent bit errors. RS(544,514): symbol error p_s = 1 - (1 - ber)^10, codeword
/// failure P_cw = P[Binomial(544, p_s) > 15], and a frame spans ceil(bits / 5140) codewords.
double frame_loss_probability(double ber, Fec fec, int64_t frame_bits);
/// Probability that a 544-symbol RS codeword is uncorrectable at symbol error rate `ps`.
double rs544_codeword_failure(double ps);

class alignas(64) Link : public EventTarget {
 public:
  struct Config {
    Rate rate = Rate::gbps(100);
    Time delay = Time::us(1);    // propagation delay
    int64_t framing_bytes = 20;  // preamble + SFD (8) + inter-frame gap (12) per frame
    double ber = 0.0;            // pre-FEC bit error rate
    Fec fec = Fec::kRs544;
    // Link security (docs/SECURITY.md): latency per frame, bytes per frame (MACsec), and a
    // capacity factor num/den on serialization (PHYSec channel-level blocks).
    Time extra_delay;
    int64_t overhead_bytes = 0;
    int64_t scale_num = 1;
    int64_t scale_den = 1;
  };
  /// `index` names the link's random stream; `role` is what it connects (Network::connect).
  Link(Simulation& sim, const Config& cfg, Node* dst, uint16_t dst_port, uint64_t index,
       LinkRole role = LinkRole::kFabric);

  /// `p` will have been fully serialized onto the link at `sent` (>= now); it arrives `delay`
  /// later. Losses are decided now.
  void transmit(Packet* p, Time sent);
  /// As above, serialized at sim.now().
  void transmit(Packet* p) { transmit(p, sim_.now()); }
  void on_event(uint32_t tag, uint32_t gen) override;
  void prefetch_next() const override;

  /// Bytes a frame occupies on this link: frame + preamble/SFD + inter-frame gap.
  int64_t wire_bytes(const Packet& p) const {
    return p.size + cfg_.framing_bytes + cfg_.overhead_bytes;
  }
  /// Serialization time of a frame of `frame_bytes` (preamble, gap and security overhead added,
  /// security's capacity factor applied).
  Time frame_time(int64_t frame_bytes) const { return frame_time_at(frame_bytes, cfg_.rate); }
  /// frame_time() at the rate the link was built with, before any `degrade` fault: what the
  /// empty, healthy network's ideal FCT counts (net/ideal_fct.h).
  Time built_frame_time(int64_t frame_bytes) const {
    return frame_time_at(frame_bytes, built_rate());
  }
  /// The line rate the link was built with (set_rate() changes only the current one).
  Rate built_rate() const {
    return imp_ && imp_->built_rate.bps() > 0 ? imp_->built_rate : cfg_.rate;
  }
  /// Serialization time of `p`. The last two sizes are cached: most packets have one of two
  /// (a full data frame and an ACK), and a link carrying both alternates between them.
  Time serialization(const Packet& p) {
    if (p.size == cached_size_[0]) return cached_ser_[0];
    if (p.size == cached_size_[1]) return cached_ser_[1];
    const unsigned i = cache_next_;
    cache_next_ ^= 1U;
    cached_size_[i] = p.size;
    cached_ser_[i] = frame_time(p.size);
    return cached_ser_[i];
  }
  const Config& config() const { return cfg_; }
  Node* dst() const { return dst_; }
  uint16_t dst_port() const { return dst_port_; }
  LinkRole role() const { return role_; }
  /// Frames lost to the Bernoulli loss model (DropCause::kRandomLoss).
  uint64_t lost() const { return imp_ ? imp_->lost : 0; }
  /// Frames lost to the Gilbert-Elliott loss model (DropCause::kBurstLoss).
  uint64_t burst_lost() const { return imp_ ? imp_->burst_lost : 0; }
  /// Sets the loss model from now on; a Gilbert-Elliott chain starts in the good state.
  void set_loss(const LossModel& model);
  const LossModel& loss() const;
  /// The Gilbert-Elliott chain is in the bad state.
  bool loss_bad_state() const { return bad_; }
  /// Takes the link down (every frame sent onto it, or on the wire, is lost) or back up.
  void set_up(bool up);
  /// A frame its port could not send because the link is down: lost with the link (and, as
  /// data forwarded to it, the link's last use).
  void discard(Packet* p);
  bool up() const { return up_; }
  /// Changes the pre-FEC bit error rate from now on.
  void set_ber(double ber);
  /// Changes the line rate from the next frame on (a frame being serialized keeps its end):
  /// a link that retrained to fewer lanes or a lower speed (the `degrade` fault).
  void set_rate(Rate rate);
  double ber() const { return cfg_.ber; }
  /// Adds a security layer's cost (docs/SECURITY.md); call before traffic starts.
  void add_security(Time extra_delay, int64_t overhead_bytes, int64_t scale_num,
                    int64_t scale_den) {
    cfg_.extra_delay += extra_delay;
    cfg_.overhead_bytes += overhead_bytes;
    cfg_.scale_num *= scale_num;
    cfg_.scale_den *= scale_den;
    flight_ = cfg_.delay + cfg_.extra_delay;
    cached_size_ = {0, 0};
  }
  void set_fec(Fec fec) {
    cfg_.fec = fec;
    if (imp_) imp_->error_loss.clear();
  }
  struct FaultCounters {
    uint64_t fault_frames = 0;  // data/control frames lost because the link was down
    uint64_t fault_bytes = 0;
    uint64_t error_frames = 0;  // frames lost to uncorrectable bit errors
    uint64_t error_bytes = 0;
    Time last_data_tx;     // when the last data frame was handed to the link (0: never)
    Time last_fault_loss;  // when the last frame was lost to the link being down
  };
  FaultCounters fault_counters() const {
    FaultCounters f = imp_ ? imp_->faults : FaultCounters{};
    f.last_data_tx = last_data_tx_;
    return f;
  }
  size_t in_flight() const {
    return (head_.p != nullptr ? 1 : 0) + ring_.size() + (held_ != nullptr ? 1 : 0);
  }
  /// The frame whose serialization onto this link ended at `sent` (transmit's argument), if it
  /// is still on the wire: it is the newest one. Null if it was lost or has arrived.
  Packet* on_wire(Time sent) const {
    const Slot& s = ring_.empty() ? head_ : ring_.back();
    return s.p != nullptr && s.arrive == sent + flight_ ? s.p : nullptr;
  }
  /// Propagation delay plus security latency: a frame arrives this long after it was sent.
  Time flight() const { return flight_; }
  /// A frame the port feeding this link has serialized but hands over only at the end of it
  /// (EgressPort::set_dequeue_hook with at_departure, on a link without delay): the port keeps
  /// it here until then (take_held), because the link has a free slot where the port has none.
  void hold(Packet* p) {
    FABSIM_ASSERT(held_ == nullptr);
    held_ = p;
  }
  Packet* take_held() {
    Packet* p = held_;
    held_ = nullptr;
    return p;
  }
  /// Returns in-flight packets to the pool (end of a run that stopped early).
  void drain();

 private:
  struct Slot {
    Packet* p;
    Time arrive;
  };
  // Layout (docs/PERFORMANCE.md "Cache lines per event"): an arrival reads the first cache
  // line only; a transmission the first two; the configuration follows. The loss and error
  // models and the fault counters are a block of their own, allocated by the first active loss
  // model, bit error rate or lost frame: most links of a large fabric never have one, and a
  // link is then four cache lines, not six.
  Simulation& sim_;
  Node* dst_;
  // The frames on the wire in order: the first in the link itself (read by the arrival event
  // and the prefetch stage before it), the others in the ring.
  Slot head_{nullptr, Time()};
  Ring<Slot> ring_;
  uint16_t dst_port_;
  bool armed_ = false;
  bool up_ = true;
  bool loss_active_ = false;  // loss().active(), cached for the per-frame check
  bool errors_ = false;       // cfg_.ber > 0
  bool bad_ = false;          // Gilbert-Elliott state
  LinkRole role_;
  Time flight_;                            // cfg_.delay + cfg_.extra_delay
  Time last_data_tx_;                      // FaultCounters::last_data_tx
  std::array<uint32_t, 2> cached_size_{};  // 0 = none
  std::array<Time, 2> cached_ser_{};
  unsigned cache_next_ = 0;  // the entry a new size replaces
  Config cfg_;
  uint64_t stream_;  // the random stream the impairments draw from (stream_id(kLink, index))
  struct Impairments {
    explicit Impairments(Rng r) : rng(r) {}
    Rng rng;
    LossModel loss;
    uint64_t lost = 0;
    uint64_t burst_lost = 0;
    FaultCounters faults;
    std::vector<double> error_loss;  // frame loss probability by frame size, when ber > 0
    Rate built_rate{0};              // the rate before the first set_rate (0: never changed)
  };
  std::unique_ptr<Impairments> imp_;
  Packet* held_ = nullptr;  // hold(): in what was the last line's padding
  Impairments& imp();       // allocates the block on first use
  Time frame_time_at(int64_t frame_bytes, Rate rate) const {
    const int64_t wire = frame_bytes + cfg_.framing_bytes + cfg_.overhead_bytes;
    return cfg_.scale_num == cfg_.scale_den
               ? serialization_delay(wire, rate)
               : serialization_delay(wire * cfg_.scale_num, Rate(rate.bps() * cfg_.scale_den));
  }
  void lose(Packet* p, bool fault);
  /// Draws whether the loss model loses a (non-PFC) frame, and steps a Gilbert-Elliott chain.
  bool model_loses();
};

}  // namespace fabsim
