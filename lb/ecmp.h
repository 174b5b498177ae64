// ECMP: the 5-tuple (src, dst, UDP source and destination port, protocol 17) hashed with a
// per-switch seed, modulo the number of equal-cost next hops (REFERENCE.md §1.2; seed 002
// §1.2.1: flows with the same 5-tuple always take the same path, so elephant flows collide).
// Two hash functions (`routing.ecmp_hash`):
//  - mix (default): every field through a murmur3-style finaliser; nonlinear, like htsim's
//    freeBSDHash [code: htsim fat_tree_switch.cpp], so N source ports land on n ports as N
//    uniform draws.
//  - xor: the finaliser over (src, dst, dport, seed) XOR the source port: linear in the source
//    port, as a CRC is, so for n a power of two every aligned block of n consecutive source
//    ports (UET entropy values, REFERENCE §4.3) maps onto the n ports one each. Whether real
//    switch hashes are linear in the source port is [UNVERIFIED]. A linear hash polarises
//    across tiers: with the same bits at every tier the aggregation's choice follows the ToR's,
//    and a PDC's entropies reach k/2 of a fat tree's (k/2)^2 cores. So each tier takes its bits
//    above the lower tiers' (the builder sets the shift: the hash bit offset switches offer per
//    tier [UNVERIFIED as a default]): 64 EVs on a k=8 fat tree cover its 16 cores 4 each.
#pragma once

#include <cstdint>  // hash state

#include "net/path_selector.h"

namespace fabsim {

enum class EcmpHash : uint8_t { kMix, kXor };

/// Mixes the 5-tuple of `p` with `seed` (a murmur3-style finaliser over 64-bit words).
uint64_t five_tuple_hash(const Packet& p, uint64_t seed);
/// The mixed (src, dst, dport) of `p` with `seed`, XOR the source port.
/// `shift`: the source-port bits below it are left to the lower tiers (EcmpSelector).
uint64_t xor_sport_hash(const Packet& p, uint64_t seed, int shift = 0);

inline uint64_t ecmp_hash(const Packet& p, uint64_t seed, EcmpHash h, int shift = 0) {
  return h == EcmpHash::kMix ? five_tuple_hash(p, seed) : xor_sport_hash(p, seed, shift);
}

class EcmpSelector : public PathSelector {
 public:
  explicit EcmpSelector(uint64_t seed, EcmpHash hash = EcmpHash::kMix) : seed_(seed), hash_(hash) {}
  uint16_t select(Packet& p, const uint16_t* ports, uint32_t n) override {
    return peek(p, ports, n);
  }
  uint16_t peek(const Packet& p, const uint16_t* ports, uint32_t n) const override {
    return ports[ecmp_hash(p, seed_, hash_, shift_) % n];
  }
  void set_hash_shift(int bits) override { shift_ = bits; }
  int hash_shift() const { return shift_; }

 private:
  uint64_t seed_;
  EcmpHash hash_;
  int shift_ = 0;
};

}  // namespace fabsim
