// The congestion-control kinds; see registry.h.
#include "cc/registry.h"

#include "cc/dcqcn_keys.h"

namespace fabsim {
namespace {

class DcqcnKind final : public CcKind {
 public:
  std::string_view name() const override { return "dcqcn"; }
  std::string_view description() const override {
    return "DCQCN rate control driven by CNPs (REFERENCE.md §1.5-1.6); keys in [transport.dcqcn]";
  }
  KindConfig load(Section& s, Rate line) const override {
    DcqcnConfig c;
    load_dcqcn(s, c, line);
    return KindConfig::of(c);
  }
  std::unique_ptr<CongestionControl> build(const KindConfig& cfg,
                                           const CcContext& ctx) const override {
    return std::make_unique<DcqcnCc>(cfg.get<DcqcnConfig>(), ctx.line, ctx.start);
  }
};

// No congestion control: every sender paces at the NIC line rate with no window. RLTP's
// congestion management is not specified by seed 004 (docs/MODEL.md), and a recovery scheme is
// measured alone with it.
class LineRateCc final : public CongestionControl {
 public:
  explicit LineRateCc(Rate line) : line_(line) {}
  CcNeeds needs() const override { return {}; }
  bool window_based() const override { return false; }
  CcOutput output() const override { return {line_, kUnlimitedWindow}; }

 private:
  Rate line_;
};

class NoneKind final : public CcKind {
 public:
  std::string_view name() const override { return "none"; }
  std::string_view description() const override {
    return "no congestion control: line rate, no window, no CNPs (recovery measured alone)";
  }
  KindConfig load(Section& /*s*/, Rate /*line*/) const override { return KindConfig::of(0); }
  std::unique_ptr<CongestionControl> build(const KindConfig& /*cfg*/,
                                           const CcContext& ctx) const override {
    return std::make_unique<LineRateCc>(ctx.line);
  }
};

}  // namespace

const CcKind& none_cc() {
  static const NoneKind kind;
  return kind;
}

const CcKind& dcqcn_cc() {
  static const DcqcnKind kind;  // immutable, shared by every simulation
  return kind;
}

}  // namespace fabsim
