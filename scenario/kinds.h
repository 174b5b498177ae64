// Every family's registry (DESIGN.md "Seams"; issue 13 item 1). A new kind is its folder plus
// one line in kinds.cpp; the loader, `validate`, `list`, `--set` and docs/SCENARIOS.md read the
// kinds' own declarations. Kind names are compared only by `Registry::find`.
#pragma once

#include "config/registry.h"
#include "lb/policy.h"
#include "net/fabric.h"
#include "net/faults.h"
#include "net/security.h"
#include "net/topology.h"
#include "transport/kind.h"
#include "workload/kind.h"

namespace fabsim {

struct Registries {
  Registry<TopologyKind> topologies;
  Registry<PathPolicyKind> policies;
  Registry<FabricKind> fabrics;
  Registry<CcKind> ccs;
  Registry<TransportKind> transports;
  Registry<WorkloadKind> workloads;
  Registry<SecurityKind> security;
  Registry<FaultKind> faults;
};

/// The registries, built once and never changed afterwards (read-only after construction, so
/// simulations on several threads share them).
const Registries& registries();

}  // namespace fabsim
