// The `external` workload kind; see external.h.
#include "workload/external/external.h"

namespace fabsim {
namespace {

struct ExternalConfig {};

// No keys and no plan: the run's flows are whatever the embedding program posts. Its demand is
// zero, which is also how the embedding API recognises a workload that starts nothing.
class ExternalKind final : public WorkloadKind {
 public:
  std::string_view name() const override { return "external"; }
  std::string_view description() const override {
    return "no traffic of its own: a program posts the messages through the embedding API "
           "(api/fabsim_api.h, docs/EMBEDDING.md)";
  }
  KindConfig load(Section& /*s*/, const HostShape& /*hosts*/) const override {
    return KindConfig::of(ExternalConfig{});
  }
  WorkloadPlan plan(const KindConfig& /*cfg*/, int /*hosts*/, Rng& /*rng*/) const override {
    return {};
  }
  WorkloadDemand demand(const KindConfig& /*cfg*/, int /*hosts*/) const override {
    WorkloadDemand d;
    d.key = "workload.kind";
    d.why = "external: the messages come through the embedding API";
    return d;
  }
  std::vector<WorkloadStart> starts(const KindConfig& /*cfg*/) const override { return {}; }
};

}  // namespace

std::unique_ptr<WorkloadKind> make_external_kind() {
  return std::make_unique<ExternalKind>();
}

}  // namespace fabsim
