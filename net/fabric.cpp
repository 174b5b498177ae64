// The Ethernet fabric kind and the per-switch seed; see fabric.h.
#include "net/fabric.h"

namespace fabsim {

uint64_t FabricEnv::switch_seed(uint32_t sw) const {
  return splitmix64(seed ^ splitmix64(stream_id(StreamKind::kSwitch, sw)));
}

namespace {

struct NoKeys {};

class EthernetFabric final : public FabricKind {
 public:
  std::string_view name() const override { return "ethernet"; }
  std::string_view description() const override {
    return "Ethernet: every switch forwards with routing.policy; after a fault the routing "
           "control plane reconverges (docs/FAULTS.md)";
  }
  KindConfig load(Section& /*s*/, const HostShape& /*hosts*/) const override {
    return KindConfig::of(NoKeys{});
  }
  std::unique_ptr<FabricInstance> install(const KindConfig& /*cfg*/,
                                          const FabricEnv& /*env*/) const override {
    return std::make_unique<FabricInstance>();
  }
};

}  // namespace

std::unique_ptr<FabricKind> make_ethernet_fabric() {
  return std::make_unique<EthernetFabric>();
}

}  // namespace fabsim
