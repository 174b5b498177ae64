// The fabric family (`[fabric] kind`): the forwarding model the switches run on top of the
// topology: plain Ethernet (routing.policy, the control plane reconverges after faults), or a
// scheduled fabric such as GSE that installs its own path selectors, switch stages and fault
// handling (DESIGN.md "Seams"). Registered in scenario/kinds.cpp.
#pragma once

#include <cstdint>      // seeds
#include <memory>       // unique_ptr
#include <string>       // table rows
#include <string_view>  // names
#include <utility>      // pair
#include <vector>       // table rows

#include <nlohmann/json.hpp>  // statistics

#include "config/reader.h"
#include "config/registry.h"
#include "core/simulation.h"
#include "net/faults.h"
#include "net/network.h"
#include "net/topology.h"

namespace fabsim {

/// What a fabric is installed on.
struct FabricEnv {
  Simulation& sim;
  Network& net;
  const TopologyInfo& topo;
  uint64_t seed = 0;
  int64_t framing_bytes = 20;
  /// The path-selector seed of switch `sw` (the same one the routing policy uses).
  uint64_t switch_seed(uint32_t sw) const;
};

/// A fabric installed on one run's network.
class FabricInstance {
 public:
  virtual ~FabricInstance() = default;
  /// Hears cable changes in place of the Ethernet routing control plane (null: reconvergence).
  virtual FaultListener* fault_listener() { return nullptr; }
  /// Arms the fabric's own timers, after the fault schedule.
  virtual void start() {}
  /// Adds the fabric's figures to summary.json "fabric".
  virtual void add_stats(nlohmann::ordered_json& /*j*/, Time /*now*/) const {}
  /// Rows (name, value) for the summary table, from its figures in summary.json "fabric".
  virtual void add_rows(const nlohmann::ordered_json& /*stats*/,
                        std::vector<std::pair<std::string, std::string>>& /*rows*/) const {}
  /// Adds to the "faults" block (once) and to one failed cable's entry.
  virtual void add_fault_stats(nlohmann::ordered_json& /*j*/) const {}
  virtual void add_cable_stats(nlohmann::ordered_json& /*entry*/, uint32_t /*cable*/,
                               Time /*first*/) const {}
  /// Frame bytes of the fabric's own header on a packet inside the fabric (kFabricHeader set),
  /// which the edge removes before the host: a trimmed packet keeps them beyond
  /// network.trim.size. 0 for a fabric that adds none.
  virtual int64_t header_bytes() const { return 0; }
};

class FabricKind {
 public:
  virtual ~FabricKind() = default;
  virtual std::string_view name() const = 0;
  virtual std::string_view description() const = 0;
  /// Declares and reads the kind's keys under `[fabric]`; `hosts` says what it runs on.
  virtual KindConfig load(Section& s, const HostShape& hosts) const = 0;
  virtual std::unique_ptr<FabricInstance> install(const KindConfig& cfg,
                                                  const FabricEnv& env) const = 0;
  /// True when the fabric spreads a flow's packets over several paths (GSE's containers).
  virtual bool sprays() const { return false; }
};

/// Plain Ethernet: switches forward with routing.policy; no keys.
std::unique_ptr<FabricKind> make_ethernet_fabric();

}  // namespace fabsim
