// The congestion-control family (DESIGN.md "Seams"; STYLE.md 13): a kind declares its keys
// (in its own `[transport.<name>]` table) and builds one algorithm instance per sender. A
// transport holds a `CcConfig` (the chosen kind and its typed config) and calls `make()` per
// QP or connection; it never names an algorithm. Registered in scenario/kinds.cpp.
#pragma once

#include <memory>       // unique_ptr
#include <string_view>  // names
#include <utility>      // move

#include "cc/cc.h"
#include "cc/dcqcn.h"
#include "config/reader.h"
#include "config/registry.h"
#include "core/units.h"

namespace fabsim {

class CcKind {
 public:
  virtual ~CcKind() = default;
  virtual std::string_view name() const = 0;
  virtual std::string_view description() const = 0;
  /// Declares and reads the algorithm's keys from its table; presets scale with `line`.
  virtual KindConfig load(Section& s, Rate line) const = 0;
  /// True when instances use CcContext::hops (the transport then counts them per path).
  virtual bool uses_hops() const { return false; }
  /// One instance for a sender described by `ctx`.
  virtual std::unique_ptr<CongestionControl> build(const KindConfig& cfg,
                                                   const CcContext& ctx) const = 0;
};

/// DCQCN (REFERENCE.md §1.5-1.6); the kind every RoCE QP runs unless configured otherwise.
const CcKind& dcqcn_cc();
/// No congestion control: the NIC line rate, no window.
const CcKind& none_cc();

/// A sender's algorithm: the kind and its typed config (default: DCQCN, paper parameters).
struct CcConfig : Choice<CcKind> {
  CcConfig() : Choice<CcKind>{&dcqcn_cc(), KindConfig::of(DcqcnConfig::paper())} {}
  CcConfig(const CcKind* k, KindConfig c) : Choice<CcKind>{k, std::move(c)} {}
  std::unique_ptr<CongestionControl> make(const CcContext& ctx) const {
    return kind->build(config, ctx);
  }
  /// For tests: a sender on a `line`-rate NIC starting at `start`, nothing else known.
  std::unique_ptr<CongestionControl> make(Rate line, Time start) const {
    CcContext ctx;
    ctx.line = line;
    ctx.start = start;
    return make(ctx);
  }
};

}  // namespace fabsim
