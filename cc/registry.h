// The congestion-control registry (DESIGN.md "Seams: Registries"; STYLE.md 13): each kind is
// one row of name, description and builder, so a transport creates its per-sender algorithm
// from configuration without comparing kind names. A new algorithm adds its config to
// CcConfig, its enumerator to CcKind and one row in registry.cpp.
#pragma once

#include <cstdint>      // enum base
#include <memory>       // unique_ptr
#include <span>         // the kind table
#include <string_view>  // lookup by name

#include "cc/cc.h"
#include "cc/dcqcn.h"
#include "core/units.h"

namespace fabsim {

enum class CcKind : uint8_t { kDcqcn };

/// Which algorithm a sender runs, with every kind's parameters (only the chosen one is read).
struct CcConfig {
  CcKind kind = CcKind::kDcqcn;
  DcqcnConfig dcqcn;
};

struct CcKindInfo {
  CcKind kind;
  const char* name;         // as written in scenarios
  const char* description;  // for `fabsim list` and the docs
  /// One instance for a sender on a `line`-rate NIC, starting at `start`.
  std::unique_ptr<CongestionControl> (*build)(const CcConfig& cfg, Rate line, Time start);
};

/// Every registered kind, in a fixed order.
std::span<const CcKindInfo> cc_kinds();
/// The kind called `name`, or nullptr.
const CcKindInfo* find_cc_kind(std::string_view name);
/// A new instance of the configured algorithm.
std::unique_ptr<CongestionControl> make_cc(const CcConfig& cfg, Rate line, Time start);

}  // namespace fabsim
