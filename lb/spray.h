// Baselines for GSE's comparison (seed 000 §3.1.1, seed 002 §1.2.1):
//  - per-packet spraying: each data packet takes the next equal-cost port, round robin by
//    packet count, kept per destination so every stream cycles through all paths (the
//    assumption of seed 000's analysis); control packets keep ECMP.
//  - flowlet switching: a flow keeps its port while its packets are closer than the gap
//    threshold; after a longer gap the next flowlet picks a port at random.
// Both route control packets by ECMP with the hash of `routing.ecmp_hash`.
#pragma once

#include <cstdint>        // counters
#include <unordered_map>  // flowlet table

#include "core/rng.h"
#include "core/units.h"
#include "lb/ecmp.h"

namespace fabsim {

class Simulation;

class SpraySelector : public PathSelector {
 public:
  /// `hash`: the ECMP hash of control packets.
  explicit SpraySelector(uint64_t seed, EcmpHash hash = EcmpHash::kMix)
      : ecmp_(seed, hash), seed_(seed) {}
  uint16_t select(Packet& p, const uint16_t* ports, uint32_t n) override;
  void set_hash_shift(int bits) override { ecmp_.set_hash_shift(bits); }

 private:
  EcmpSelector ecmp_;
  uint64_t seed_;                                // this switch's: where its rotations start
  std::unordered_map<uint32_t, uint32_t> next_;  // destination host -> next index
};

class FlowletSelector : public PathSelector {
 public:
  /// `hash`: the ECMP hash of control packets (flowlets are keyed by the 5-tuple mix).
  FlowletSelector(const Simulation& sim, uint64_t seed, Time gap, EcmpHash hash = EcmpHash::kMix);
  uint16_t select(Packet& p, const uint16_t* ports, uint32_t n) override;
  void set_hash_shift(int bits) override { ecmp_.set_hash_shift(bits); }
  uint64_t flowlets() const { return flowlets_; }

 private:
  struct Entry {
    Time last;
    uint16_t port = 0;
  };
  const Simulation& sim_;
  EcmpSelector ecmp_;
  Rng rng_;
  Time gap_;
  std::unordered_map<uint64_t, Entry> table_;  // 5-tuple hash -> current flowlet
  uint64_t flowlets_ = 0;
};

}  // namespace fabsim
