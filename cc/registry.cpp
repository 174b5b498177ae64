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
  std::unique_ptr<CongestionControl> build(const KindConfig& cfg, Rate line,
                                           Time start) const override {
    return std::make_unique<DcqcnCc>(cfg.get<DcqcnConfig>(), line, start);
  }
};

}  // namespace

const CcKind& dcqcn_cc() {
  static const DcqcnKind kind;  // immutable, shared by every simulation
  return kind;
}

}  // namespace fabsim
