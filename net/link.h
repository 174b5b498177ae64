// A unidirectional link: rate, propagation delay and an optional random loss probability.
// DESIGN.md "The engine": in-flight packets wait in a FIFO ring and the link arms exactly one
// event, for the head packet; arrival order equals departure order because the delay is fixed.
#pragma once

#include <cstdint>  // counters
#include <string>   // name

#include "core/packet.h"
#include "core/ring.h"
#include "core/rng.h"
#include "core/simulation.h"
#include "core/units.h"

namespace fabsim {

class Node;

class Link : public EventTarget {
 public:
  struct Config {
    Rate rate = Rate::gbps(100);
    Time delay = Time::us(1);       // propagation delay
    double loss_probability = 0.0;  // per packet, PFC frames exempt (tests, lossy optics)
    int64_t framing_bytes = 20;     // preamble + SFD (8) + inter-frame gap (12) per frame
  };
  Link(Simulation& sim, const Config& cfg, Node* dst, uint16_t dst_port, uint64_t index);

  /// `p` has been fully serialized onto the link at sim.now(); it arrives `delay` later.
  void transmit(Packet* p);
  void on_event(uint32_t tag, uint32_t gen) override;

  /// Bytes a frame occupies on this link: frame + preamble/SFD + inter-frame gap.
  int64_t wire_bytes(const Packet& p) const { return p.size + cfg_.framing_bytes; }
  /// Serialization time of `p`; the last size is cached (most packets have one of two sizes).
  Time serialization(const Packet& p) {
    if (p.size != cached_size_) {
      cached_size_ = p.size;
      cached_ser_ = serialization_delay(wire_bytes(p), cfg_.rate);
    }
    return cached_ser_;
  }
  const Config& config() const { return cfg_; }
  Node* dst() const { return dst_; }
  uint16_t dst_port() const { return dst_port_; }
  uint64_t lost() const { return lost_; }
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
  uint32_t cached_size_ = 0;
  Time cached_ser_;
};

}  // namespace fabsim
