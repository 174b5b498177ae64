// A unidirectional link: rate, propagation delay, an optional random loss probability, an
// up/down state and a bit-error model (docs/FAULTS.md).
// DESIGN.md "The engine": in-flight packets wait in a FIFO ring and the link arms exactly one
// event, for the head packet; arrival order equals departure order because the delay is fixed.
// Error model: a pre-FEC bit error rate and an FEC; a frame is lost when a codeword it spans is
// uncorrectable (frame_loss_probability). Frames lost to errors and to a dead link are counted
// apart from each other and from congestion drops (which happen in switches).
#pragma once

#include <cstdint>  // counters
#include <string>   // name
#include <vector>   // loss probability cache

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

/// Post-FEC loss probability of a frame of `frame_bits` bits at pre-FEC bit error rate `ber`,
/// with independent bit errors. RS(544,514): symbol error p_s = 1 - (1 - ber)^10, codeword
/// failure P_cw = P[Binomial(544, p_s) > 15], and a frame spans ceil(bits / 5140) codewords.
double frame_loss_probability(double ber, Fec fec, int64_t frame_bits);
/// Probability that a 544-symbol RS codeword is uncorrectable at symbol error rate `ps`.
double rs544_codeword_failure(double ps);

class Link : public EventTarget {
 public:
  struct Config {
    Rate rate = Rate::gbps(100);
    Time delay = Time::us(1);       // propagation delay
    double loss_probability = 0.0;  // per packet, PFC frames exempt (tests, lossy optics)
    int64_t framing_bytes = 20;     // preamble + SFD (8) + inter-frame gap (12) per frame
    double ber = 0.0;               // pre-FEC bit error rate
    Fec fec = Fec::kRs544;
    // Link security (docs/SECURITY.md): latency per frame, bytes per frame (MACsec), and a
    // capacity factor num/den on serialization (PHYSec channel-level blocks).
    Time extra_delay;
    int64_t overhead_bytes = 0;
    int64_t scale_num = 1;
    int64_t scale_den = 1;
  };
  Link(Simulation& sim, const Config& cfg, Node* dst, uint16_t dst_port, uint64_t index);

  /// `p` has been fully serialized onto the link at sim.now(); it arrives `delay` later.
  void transmit(Packet* p);
  void on_event(uint32_t tag, uint32_t gen) override;

  /// Bytes a frame occupies on this link: frame + preamble/SFD + inter-frame gap.
  int64_t wire_bytes(const Packet& p) const {
    return p.size + cfg_.framing_bytes + cfg_.overhead_bytes;
  }
  /// Serialization time of `p`; the last size is cached (most packets have one of two sizes).
  Time serialization(const Packet& p) {
    if (p.size != cached_size_) {
      cached_size_ = p.size;
      cached_ser_ = cfg_.scale_num == cfg_.scale_den
                        ? serialization_delay(wire_bytes(p), cfg_.rate)
                        : serialization_delay(wire_bytes(p) * cfg_.scale_num,
                                              Rate(cfg_.rate.bps() * cfg_.scale_den));
    }
    return cached_ser_;
  }
  const Config& config() const { return cfg_; }
  Node* dst() const { return dst_; }
  uint16_t dst_port() const { return dst_port_; }
  uint64_t lost() const { return lost_; }
  /// Takes the link down (every frame sent onto it, or on the wire, is lost) or back up.
  void set_up(bool up);
  bool up() const { return up_; }
  /// Changes the pre-FEC bit error rate from now on.
  void set_ber(double ber);
  double ber() const { return cfg_.ber; }
  /// Adds a security layer's cost (docs/SECURITY.md); call before traffic starts.
  void add_security(Time extra_delay, int64_t overhead_bytes, int64_t scale_num,
                    int64_t scale_den) {
    cfg_.extra_delay += extra_delay;
    cfg_.overhead_bytes += overhead_bytes;
    cfg_.scale_num *= scale_num;
    cfg_.scale_den *= scale_den;
    cached_size_ = 0;
  }
  void set_fec(Fec fec) {
    cfg_.fec = fec;
    error_loss_.clear();
  }
  struct FaultCounters {
    uint64_t fault_frames = 0;  // data/control frames lost because the link was down
    uint64_t fault_bytes = 0;
    uint64_t error_frames = 0;  // frames lost to uncorrectable bit errors
    uint64_t error_bytes = 0;
    Time last_data_tx;     // when the last data frame was handed to the link (0: never)
    Time last_fault_loss;  // when the last frame was lost to the link being down
  };
  const FaultCounters& fault_counters() const { return faults_; }
  size_t in_flight() const { return ring_.size(); }
  /// Returns in-flight packets to the pool (end of a run that stopped early).
  void drain();

 private:
  struct Slot {
    Packet* p;
    Time arrive;
  };
  Simulation& sim_;
  Config cfg_;
  Node* dst_;
  uint16_t dst_port_;
  Rng rng_;
  Ring<Slot> ring_;
  bool armed_ = false;
  uint64_t lost_ = 0;
  bool up_ = true;
  FaultCounters faults_;
  std::vector<double> error_loss_;  // frame loss probability by frame size, when ber > 0
  void lose(Packet* p, bool fault);
  uint32_t cached_size_ = 0;
  Time cached_ser_;
};

}  // namespace fabsim
