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
  /// Chooses one of `n` (> 1) candidate egress ports for `p`.
  virtual uint16_t select(const Packet& p, const uint16_t* ports, uint32_t n) = 0;
};

}  // namespace fabsim
