// In-band network telemetry at dequeue, HPCC-style (REFERENCE.md §2.3; HPCC ns-3 switch-node.cc
// pushes a hop when the egress port dequeues a data packet). A dequeue hook: it appends this
// port's record (timestamp, bytes sent before this packet, bytes queued behind it, link rate)
// to the INT stack in the packet's extension block, if the packet is data, has a block and its
// sender asked for INT (IntStackHeader::capacity > 0); ACKs echo their data's stack unstamped. A
// full stack is left alone and counted in its header. The hook changes no frame bytes: the sending
// transport sizes the INT header it sends.
#pragma once

#include <cstdint>  // counters

#include "core/packet.h"
#include "core/packet_pool.h"
#include "core/simulation.h"
#include "net/hooks.h"

namespace fabsim {

/// The INT stack of `b`: its header and hop records (for transports and tests).
inline IntStackHeader int_header(const ExtBlock& b) {
  return b.get_at<IntStackHeader, kIntHeaderOffset>();
}
inline IntHop int_hop(const ExtBlock& b, int i) {
  return b.get<IntHop>(int_hop_offset(i));
}
/// Asks for INT on a packet's block: up to `hops` (<= kMaxIntHops) records, none yet.
inline void request_int(ExtBlock& b, int hops) {
  IntStackHeader h;
  h.capacity = static_cast<uint8_t>(hops < kMaxIntHops ? hops : kMaxIntHops);
  b.set_at<IntStackHeader, kIntHeaderOffset>(h);
}

/// The resolution of a record's fields: each value is truncated to a whole number of its unit
/// (0 = exact), as fixed-width INT fields carry them.
struct IntUnits {
  Time time;
  Bytes tx_bytes;
  Bytes qlen;
};

class IntStampHook final : public DequeueHook {
 public:
  explicit IntStampHook(Simulation& sim, IntUnits units = {}) : sim_(sim), units_(units) {}
  void on_dequeue(Packet& p, EgressPort& port) override;
  /// Records pushed by this hook, and hops that found the stack full.
  uint64_t stamped() const { return stamped_; }
  uint64_t full() const { return full_; }

 private:
  Simulation& sim_;
  IntUnits units_;
  uint64_t stamped_ = 0;
  uint64_t full_ = 0;
};

}  // namespace fabsim
