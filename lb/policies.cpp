// The shipped path policies: ECMP, per-packet spraying and flowlets; see policy.h.
#include <string>  // the hash's name

#include "lb/ecmp.h"
#include "lb/policy.h"
#include "lb/spray.h"

namespace fabsim {
namespace {

// `routing.ecmp_hash`, read by every policy that routes some packets by ECMP (all three: spray
// and flowlet route control packets by it).
EcmpHash load_ecmp_hash(Section& s) {
  const std::string h = s.choice(
      "ecmp_hash", "mix", {"mix", "xor"},
      "ECMP hash: mix = nonlinear in every field (as htsim); xor = linear in the UDP source "
      "port: an aligned block of n source ports (UET entropies) uses each of n egress ports "
      "once, n a power of two (docs/MODEL.md)");
  return h == "xor" ? EcmpHash::kXor : EcmpHash::kMix;
}

struct EcmpKeys {
  EcmpHash hash = EcmpHash::kMix;
};

class EcmpPolicy final : public PathPolicyKind {
 public:
  std::string_view name() const override { return "ecmp"; }
  std::string_view description() const override {
    return "per-flow ECMP: 5-tuple hash with a per-switch seed derived from the run's seed";
  }
  KindConfig load(Section& s) const override { return KindConfig::of(EcmpKeys{load_ecmp_hash(s)}); }
  std::unique_ptr<PathSelector> make(const KindConfig& cfg, uint64_t seed,
                                     const Simulation& /*sim*/) const override {
    return std::make_unique<EcmpSelector>(seed, cfg.get<EcmpKeys>().hash);
  }
};

class SprayPolicy final : public PathPolicyKind {
 public:
  std::string_view name() const override { return "spray"; }
  std::string_view description() const override {
    return "per-packet spraying: data packets round robin over the equal-cost ports";
  }
  KindConfig load(Section& s) const override { return KindConfig::of(EcmpKeys{load_ecmp_hash(s)}); }
  std::unique_ptr<PathSelector> make(const KindConfig& cfg, uint64_t seed,
                                     const Simulation& /*sim*/) const override {
    return std::make_unique<SpraySelector>(seed, cfg.get<EcmpKeys>().hash);
  }
  bool per_packet() const override { return true; }
};

struct FlowletConfig {
  Time gap = Time::us(50);
  EcmpHash hash = EcmpHash::kMix;
};

class FlowletPolicy final : public PathPolicyKind {
 public:
  std::string_view name() const override { return "flowlet"; }
  std::string_view description() const override {
    return "flowlet switching: a new random path after a gap of routing.flowlet_gap";
  }
  KindConfig load(Section& s) const override {
    FlowletConfig c;
    c.gap = s.time("flowlet_gap", c.gap, "gap that starts a new flowlet (policy = \"flowlet\")");
    if (!s.describing() && c.gap.ps() <= 0) s.fail("flowlet_gap", "a positive duration");
    c.hash = load_ecmp_hash(s);
    return KindConfig::of(c);
  }
  std::unique_ptr<PathSelector> make(const KindConfig& cfg, uint64_t seed,
                                     const Simulation& sim) const override {
    const auto& c = cfg.get<FlowletConfig>();
    return std::make_unique<FlowletSelector>(sim, seed, c.gap, c.hash);
  }
};

}  // namespace

std::unique_ptr<PathPolicyKind> make_ecmp_policy() {
  return std::make_unique<EcmpPolicy>();
}
std::unique_ptr<PathPolicyKind> make_spray_policy() {
  return std::make_unique<SprayPolicy>();
}
std::unique_ptr<PathPolicyKind> make_flowlet_policy() {
  return std::make_unique<FlowletPolicy>();
}

}  // namespace fabsim
