// The GSE fabric kind (seeds 000 and 002; docs/gse.md): its `[fabric.gse]` keys and its
// installation on any Clos topology through the topology contract. GSE-N2N: every ToR is a
// GSP (container spraying, reorder, optional DGSQ), every higher switch a GSF; GSE-E2E: the
// NICs are GSPs and every switch a GSF. GSOS hears cable changes instead of the Ethernet
// control plane.
#pragma once

#include <memory>  // owned components
#include <vector>  // roles

#include "gse/dgsq.h"
#include "gse/gse.h"
#include "gse/gsos.h"
#include "net/fabric.h"

namespace fabsim {

class GseFabric : public FabricInstance {
 public:
  GseFabric(const GseConfig& cfg, const FabricEnv& env);
  ~GseFabric() override;
  FaultListener* fault_listener() override { return gsos_.get(); }
  void start() override;
  void add_stats(nlohmann::ordered_json& j, Time now) const override;
  void add_rows(const nlohmann::ordered_json& stats,
                std::vector<std::pair<std::string, std::string>>& rows) const override;
  void add_fault_stats(nlohmann::ordered_json& j) const override;
  void add_cable_stats(nlohmann::ordered_json& entry, uint32_t cable, Time first) const override;
  int64_t header_bytes() const override { return cfg_.header_bytes; }

  const GseConfig& config() const { return cfg_; }
  const Gsos* gsos() const { return gsos_.get(); }
  const std::vector<GseSourceSelector*>& sources() const { return sources_; }
  const std::vector<GseReorder*>& reorders() const { return reorders_; }
  const std::vector<GseDgsq*>& dgsqs() const { return dgsqs_; }

 private:
  GseConfig cfg_;
  Network& net_;
  std::unique_ptr<Gsos> gsos_;
  std::vector<GseSourceSelector*> sources_;  // owned by their switches
  std::vector<GseReorder*> reorders_;        // owned by their switches
  std::vector<GseNic*> nics_;                // owned by their hosts (GSE-E2E)
  std::vector<GseDgsq*> dgsqs_;              // owned by their switches
  std::vector<std::unique_ptr<SwitchSink>> sinks_;
};

std::unique_ptr<FabricKind> make_gse_fabric();

}  // namespace fabsim
