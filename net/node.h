// A node is anything with ports: a switch or a host NIC. Components talk only through links
// (DESIGN.md "Scale beyond one machine"), so a node is reached by Link::deliver -> receive().
#pragma once

#include <cstdint>  // uint16_t, uint32_t
#include <string>   // node names

#include "core/packet.h"
#include "core/scheduler.h"

namespace fabsim {

class Node {
 public:
  virtual ~Node() = default;
  /// The last bit of `p` has arrived on `port`. The node now owns `p`.
  virtual void receive(Packet* p, uint16_t port) = 0;
  /// Port `port` is starting to transmit `p` (it leaves the queue): buffer credit, ECN marking.
  virtual void on_dequeue(uint16_t port, Packet& p) = 0;
  /// A port with no queued packet of an unpaused class asks its node for one (a NIC pulls from
  /// its queue pairs). `paused_mask` has bit c set when class c is paused. Null if none.
  virtual Packet* pull(uint16_t port, uint8_t paused_mask) = 0;
  virtual const std::string& name() const = 0;
  /// What the next pull() will read first (a NIC's next source), for the scheduler to
  /// prefetch through the port's end-of-frame event; null when unknown.
  const void* pull_hint() const { return pull_hint_; }
  /// Prefetches what receive(p, port) reads first (a switch's route entry for p's
  /// destination); called by the link one event ahead of the arrival. A hint only.
  virtual void prefetch_receive(const Packet& /*p*/, uint16_t /*port*/) const {}
  /// Prefetches what prefetch_receive(p, ...) itself reads (a switch's route entry, which
  /// tells it the egress port to prefetch); called by the link when p goes onto the wire, a
  /// propagation delay before the arrival. A hint only.
  virtual void prefetch_route(const Packet& /*p*/) const {}
  /// Prefetches what on_dequeue(port, p) reads (a switch's buffer counters of p's ingress);
  /// called by the egress port one event ahead of the frame's start. A hint only.
  virtual void prefetch_dequeue(const Packet& /*p*/) const {}
  /// Prefetches what the next pull() reads beyond the two lines of pull_hint() (a NIC's next
  /// source's state); called by the port one event ahead of its end of frame, when the hinted
  /// lines are in cache. A hint only.
  virtual void prefetch_pull() const {}

 protected:
  void set_pull_hint(const void* h) { pull_hint_ = h; }

 private:
  const void* pull_hint_ = nullptr;
};

}  // namespace fabsim
