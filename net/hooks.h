// Switch hooks (DESIGN.md "Seams", "The switch pipeline"): small interfaces a fabric or
// transport configuration installs per egress port and per queue (traffic class).
//  - An admission hook runs when a data-class packet is about to join a queue, after the shared
//    buffer has said whether it has room, and returns a verdict: admit, drop, trim to the
//    header (sent on in the control class) or mark ECN. The hook decides policy only; the switch
//    applies the verdict and keeps the buffer accounting, so a hook cannot admit what the buffer
//    refuses (it may trim it instead).
//  - A dequeue hook runs when the port starts sending a packet of that queue (RED/ECN marking,
//    INT stamping); REFERENCE.md §7.1: both mark and stamp at dequeue. A port may instead run
//    a queue's hook at departure, when the last bit has left, on the queue as it is then
//    (`network.ecn.mark_at = "departure"`, as uet-htsim marks). It is skipped for a frame
//    whose queue stayed empty to the end (the port has no event there), so a departure hook
//    must be one that does nothing on an empty queue, as RED.
// A port holds a plain pointer per queue; with none installed the cost is one load and branch,
// with one it is one virtual call (no std::function, no allocation per packet: STYLE.md 9).
// Hooks are owned by the switch (Switch::adopt_hook) and may serve several ports and queues.
#pragma once

#include <array>    // chained hooks
#include <cstdint>  // verdict codes

#include "core/assert.h"
#include "core/packet.h"

namespace fabsim {

class EgressPort;

enum class Admission : uint8_t {
  kAdmit,     // join the queue (if the buffer has room; else a buffer drop)
  kDrop,      // drop, counted as a hook drop
  kTrim,      // cut to the header bytes and join the control class (no buffer charge)
  kMark,      // set CE if the packet is ECN-capable, then as kAdmit
  kTrimTail,  // trim the last packet queued in this class instead (if it is untrimmed data;
              // else trim the arriving one), then admit the arriving one as kAdmit
};

class AdmissionHook {
 public:
  virtual ~AdmissionHook() = default;
  /// `p` is about to join queue `p.tclass` of `port`; `buffer_ok` = the shared buffer admits it.
  virtual Admission on_enqueue(const Packet& p, const EgressPort& port, bool buffer_ok) = 0;
  /// Control-class bytes at `port` beyond which a header-only packet (a header this hook
  /// trimmed, an ACK, a NACK, a credit) is dropped instead of queued (the trimmed class's
  /// bound, uet-htsim's header queue); 0: no bound.
  virtual int64_t trimmed_bound(const EgressPort& /*port*/) const { return 0; }
};

class DequeueHook {
 public:
  virtual ~DequeueHook() = default;
  /// `port` starts sending `p` (it has left its queue; the port's queue counters exclude it).
  virtual void on_dequeue(Packet& p, EgressPort& port) = 0;
  /// For a hook run at departure: whether it may act with queue `cls` of `port` as it is now.
  /// The port looks the departing frame up (likely a cache miss) only if so. It must be false
  /// on an empty queue, where the port has no event at the end of the frame to run the hook.
  virtual bool may_act(const EgressPort& port, uint8_t cls) const;
};

/// Runs several dequeue hooks on one queue, in the order added (at most kMax). Defined out of
/// line so the compiler does not guess it at every dequeue call site (a single hook is usual).
class DequeueChain : public DequeueHook {
 public:
  static constexpr int kMax = 4;
  void add(DequeueHook* h) {
    FABSIM_ASSERT(n_ < kMax && h != nullptr);
    hooks_[n_++] = h;
  }
  void on_dequeue(Packet& p, EgressPort& port) override;
  bool may_act(const EgressPort& port, uint8_t cls) const override;

 private:
  std::array<DequeueHook*, kMax> hooks_{};
  int n_ = 0;
};

/// Cuts `p` to its headers (frame bytes minus payload), sets kTrimmed and moves it to the
/// control class (Ultra Ethernet §4.1 / NDP: the header goes on at high priority so the
/// receiver learns of the loss at once). The sequence number and flow stay. `keep` > 0: the
/// switch truncates to at most that many frame bytes (UE spec §4.1: to at least
/// MIN_TRIM_SIZE, 24 B past the IP header; uet-htsim 64 B); the transport's fields still ride
/// in the struct, as every header does in fabsim.
inline void trim_to_header(Packet& p, uint32_t keep = 0) {
  p.size -= p.payload;
  if (keep > 0 && p.size > keep) p.size = keep;
  p.payload = 0;
  p.flags = static_cast<uint8_t>(p.flags | kTrimmed);
  p.tclass = kControlClass;
}

}  // namespace fabsim
