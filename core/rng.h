// Seeded random streams. Every random draw in a simulation comes from an Rng derived from the
// run's seed and a stream id (one stream per component or flow), so results do not depend on
// the order in which components draw (DESIGN.md "Determinism").
#pragma once

#include <cstdint>  // uint64_t

#include "core/units.h"  // UInt128

namespace fabsim {

/// splitmix64: used to derive stream seeds and as a fast hash mixer.
constexpr uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/// xoshiro256** generator for one stream.
class Rng {
 public:
  Rng(uint64_t seed, uint64_t stream) {
    uint64_t x = splitmix64(seed ^ splitmix64(stream + 0x632be59bd9b4e019ULL));
    for (auto& w : s_) {
      x = splitmix64(x);
      w = x;
    }
  }
  uint64_t next() {
    const uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }
  /// Uniform in [0, 1) with 53 bits of precision.
  double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  /// Uniform integer in [0, n), n > 0 (Lemire's multiply-shift; bias below 2^-64 * n).
  uint64_t below(uint64_t n) {
    return static_cast<uint64_t>((static_cast<UInt128>(next()) * n) >> 64);
  }
  bool bernoulli(double p) { return p > 0 && uniform() < p; }

 private:
  static constexpr uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

/// Stream ids: a component kind in the high bits, its index in the low bits.
enum class StreamKind : uint64_t {
  kLink = 1,
  kSwitch = 2,
  kHost = 3,
  kFlow = 4,
  kWorkload = 5,
  kQp = 6
};
constexpr uint64_t stream_id(StreamKind kind, uint64_t index) {
  return (static_cast<uint64_t>(kind) << 48) | index;
}

}  // namespace fabsim
