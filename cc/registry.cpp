// The congestion-control kinds; see registry.h.
#include "cc/registry.h"

#include "core/assert.h"

namespace fabsim {
namespace {

std::unique_ptr<CongestionControl> build_dcqcn(const CcConfig& cfg, Rate line, Time start) {
  return std::make_unique<DcqcnCc>(cfg.dcqcn, line, start);
}

constexpr CcKindInfo kKinds[] = {
    {CcKind::kDcqcn, "dcqcn", "DCQCN rate control driven by CNPs (REFERENCE.md §1.5-1.6)",
     &build_dcqcn},
};

}  // namespace

std::span<const CcKindInfo> cc_kinds() { return kKinds; }

const CcKindInfo* find_cc_kind(std::string_view name) {
  for (const CcKindInfo& k : kKinds) {
    if (name == k.name) return &k;
  }
  return nullptr;
}

std::unique_ptr<CongestionControl> make_cc(const CcConfig& cfg, Rate line, Time start) {
  for (const CcKindInfo& k : kKinds) {
    if (k.kind == cfg.kind) return k.build(cfg, line, start);
  }
  FABSIM_ASSERT(false);
  return nullptr;
}

}  // namespace fabsim
