// 5-tuple hashes; see ecmp.h.
#include "lb/ecmp.h"

namespace fabsim {
namespace {
constexpr uint64_t fmix64(uint64_t k) {
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdULL;
  k ^= k >> 33;
  k *= 0xc4ceb9fe1a85ec53ULL;
  k ^= k >> 33;
  return k;
}
}  // namespace

uint64_t five_tuple_hash(const Packet& p, uint64_t seed) {
  constexpr uint64_t kUdp = 17;
  const uint64_t a = (static_cast<uint64_t>(p.src) << 32) | p.dst;
  const uint64_t b =
      (static_cast<uint64_t>(p.sport) << 32) | (static_cast<uint64_t>(p.dport) << 8) | kUdp;
  return fmix64(fmix64(a ^ seed) ^ (b + 0x9e3779b97f4a7c15ULL));
}

uint64_t xor_sport_hash(const Packet& p, uint64_t seed, int shift) {
  constexpr uint64_t kUdp = 17;
  const uint64_t a = (static_cast<uint64_t>(p.src) << 32) | p.dst;
  const uint64_t b = (static_cast<uint64_t>(p.dport) << 8) | kUdp;
  return fmix64(fmix64(a ^ seed) ^ (b + 0x9e3779b97f4a7c15ULL)) ^ (uint64_t{p.sport} >> shift);
}

}  // namespace fabsim
