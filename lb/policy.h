// The path-policy family (`[routing] policy`): how an Ethernet switch picks one of its
// equal-cost next hops. A kind declares its keys of `[routing]` and makes one selector per
// switch (DESIGN.md "Seams"; STYLE.md 8: chosen by configuration, never by if-chains in the
// switch). Registered in scenario/kinds.cpp.
#pragma once

#include <cstdint>      // seeds
#include <memory>       // unique_ptr
#include <string_view>  // names

#include "config/reader.h"
#include "config/registry.h"
#include "net/path_selector.h"

namespace fabsim {

class Simulation;

class PathPolicyKind {
 public:
  virtual ~PathPolicyKind() = default;
  virtual std::string_view name() const = 0;
  virtual std::string_view description() const = 0;
  /// Declares and reads the policy's own keys of `[routing]`.
  virtual KindConfig load(Section& s) const = 0;
  /// The selector of one switch; `seed` is that switch's own.
  virtual std::unique_ptr<PathSelector> make(const KindConfig& cfg, uint64_t seed,
                                             const Simulation& sim) const = 0;
  /// True when consecutive packets of a flow may take different paths (spraying).
  virtual bool per_packet() const { return false; }
};

std::unique_ptr<PathPolicyKind> make_ecmp_policy();
std::unique_ptr<PathPolicyKind> make_spray_policy();
std::unique_ptr<PathPolicyKind> make_flowlet_policy();

}  // namespace fabsim
