// ECMP: the 5-tuple (src, dst, UDP source and destination port, protocol 17) hashed with a
// per-switch seed, modulo the number of equal-cost next hops (REFERENCE.md §1.2; seed 002
// §1.2.1: flows with the same 5-tuple always take the same path, so elephant flows collide).
#pragma once

#include <cstdint>  // hash state

#include "net/path_selector.h"

namespace fabsim {

/// Mixes the 5-tuple of `p` with `seed` (a murmur3-style finaliser over 64-bit words).
uint64_t five_tuple_hash(const Packet& p, uint64_t seed);

class EcmpSelector : public PathSelector {
 public:
  explicit EcmpSelector(uint64_t seed) : seed_(seed) {}
  uint16_t select(Packet& p, const uint16_t* ports, uint32_t n) override {
    return ports[five_tuple_hash(p, seed_) % n];
  }

 private:
  uint64_t seed_;
};

}  // namespace fabsim
