// The path-selection interface a switch calls when a destination has several equal-cost next
// hops. Policies (ECMP, spraying, PKTC...) live in lb/ and gse/; the switch does not know which
// one it runs (STYLE.md rule 8).
#pragma once

#include <cstdint>  // uint16_t, uint32_t

#include "core/packet.h"

namespace fabsim {

class PathSelector {
 public:
  virtual ~PathSelector() = default;
  /// Chooses one of `n` candidate egress ports for `p`; it may stamp fabric headers on `p`
  /// (GSE). Called for n > 1, and also for n == 1 when sees_single_paths().
  virtual uint16_t select(Packet& p, const uint16_t* ports, uint32_t n) = 0;
  virtual bool sees_single_paths() const { return false; }
  /// A hash linear in the source port takes its choice from the source-port bits from `bits`
  /// on: the lower tiers' choices use the bits below (per-tier hash bit offset, against
  /// polarisation). Set by the topology builder; ignored by other selectors.
  virtual void set_hash_shift(int /*bits*/) {}
  static constexpr uint16_t kNoPeek = UINT16_MAX;
  /// The port select() would choose for `p` now, without changing any state; kNoPeek when a
  /// selector cannot tell without changing state (round robin, flowlets, fabric headers). A
  /// hint only: the switch prefetches that egress port one event before the packet arrives.
  virtual uint16_t peek(const Packet& /*p*/, const uint16_t* /*ports*/, uint32_t /*n*/) const {
    return kNoPeek;
  }
};

/// A stage after path selection and before buffer admission (GSE's destination edge, meters).
/// Returning false means the extension keeps the packet and hands it back later with
/// Switch::inject (a reorder buffer).
class SwitchExtension {
 public:
  virtual ~SwitchExtension() = default;
  virtual bool on_forward(Packet& p, uint16_t in_port, uint16_t out_port) = 0;
  /// End of run: return held packets to the pool.
  virtual void finish() {}
};

}  // namespace fabsim
