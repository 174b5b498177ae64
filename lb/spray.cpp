// Spraying and flowlet baselines; see spray.h.
#include "lb/spray.h"

#include "core/simulation.h"

namespace fabsim {

uint16_t SpraySelector::select(Packet& p, const uint16_t* ports, uint32_t n) {
  if (!is_data(p.type)) return ecmp_.select(p, ports, n);
  // Each destination's rotation starts at an offset hashed from it and this switch's seed, so
  // streams do not move in step, at one switch or across switches (until 2026-11-29 the offset
  // was the destination's alone: every leaf spraying to one host began on the same spine).
  auto [it, fresh] =
      next_.try_emplace(p.dst, static_cast<uint32_t>(splitmix64(p.dst ^ seed_) >> 32));
  uint32_t& i = it->second;
  const uint16_t out = ports[i % n];
  i = (i + 1) % n;
  return out;
}

FlowletSelector::FlowletSelector(const Simulation& sim, uint64_t seed, Time gap, EcmpHash hash)
    : sim_(sim), ecmp_(seed, hash), rng_(seed, 0x666c6f776c6574ULL), gap_(gap) {}

uint16_t FlowletSelector::select(Packet& p, const uint16_t* ports, uint32_t n) {
  if (!is_data(p.type)) return ecmp_.select(p, ports, n);
  const uint64_t key = five_tuple_hash(p, 0);
  const Time now = sim_.now();
  auto [it, fresh] = table_.try_emplace(key);
  Entry& e = it->second;
  bool valid = !fresh && now - e.last <= gap_;
  if (valid) {
    valid = false;
    for (uint32_t k = 0; k < n; ++k) valid = valid || ports[k] == e.port;
  }
  if (!valid) {
    e.port = ports[rng_.below(n)];
    ++flowlets_;
  }
  e.last = now;
  return e.port;
}

}  // namespace fabsim
