// The workload family (`[workload] kind`): a kind declares its keys of `[workload]`, checks them
// against the hosts, and plans what the run starts: flows, or jobs of collectives (DESIGN.md
// "Workloads" and "Seams"). Registered in scenario/kinds.cpp.
#pragma once

#include <cstdint>      // sizes
#include <string>       // keys
#include <string_view>  // names
#include <vector>       // plans

#include <nlohmann/json.hpp>  // the plan's summary figures

#include "config/reader.h"
#include "config/registry.h"
#include "core/rng.h"
#include "net/topology.h"
#include "transport/flow.h"
#include "workload/graph.h"
#include "workload/job.h"

namespace fabsim {

/// What a run starts: explicit flows, or jobs (then `flows` is empty).
struct WorkloadPlan {
  std::vector<FlowSpec> flows;
  std::vector<JobSpec> jobs;
  std::vector<GraphJob> graphs;  // task-graph jobs (training, traces); then flows is empty
  /// The workload's own figures for summary.json's "workload" block (cdf: the offered load);
  /// null for kinds that add none.
  nlohmann::ordered_json summary;
  /// Report FCT slowdown by flow size (slowdown.csv and a "slowdown" block in summary.json)
  /// without `output.slowdown`: the workloads whose papers report it (cdf).
  bool slowdown = false;
};

/// Whether a workload's ops take their collective or size from the sweep.
struct SweepUse {
  bool size = false;
  bool collective = false;
};

/// What a workload makes a run allocate, counted from its config without planning it (the
/// resource guard, issue 14; docs/SCENARIOS.md "Memory"). Counts saturate at UINT64_MAX.
struct WorkloadDemand {
  uint64_t flows = 0;           // flow records over the whole run (every transfer of every op)
  uint64_t planned = 0;         // flow specs planned at the start (flow workloads)
  uint64_t plan_transfers = 0;  // transfers of each job's largest op, summed over jobs
  uint64_t plan_deps = 0;       // their dependency entries
  uint64_t ranks = 0;           // rank -> GPU entries of every job
  uint64_t bytes = 0;           // payload bytes of every flow
  std::string key;              // the key that drives `flows`, e.g. "workload.jobs[0].ranks"
  std::string why;              // how, e.g. "job 'a': alltoall over 8192 ranks, ..."
};

/// When a flow or a job starts, with the key (in [workload]) that sets it.
struct WorkloadStart {
  std::string key;  // e.g. "start", "flows[3].start", "jobs[1].start"
  Time at;
};

class WorkloadKind {
 public:
  virtual ~WorkloadKind() = default;
  virtual std::string_view name() const = 0;
  virtual std::string_view description() const = 0;
  virtual KindConfig load(Section& s, const HostShape& hosts) const = 0;
  /// The flows or jobs of one run; `rng` is the workload's own stream.
  virtual WorkloadPlan plan(const KindConfig& cfg, int hosts, Rng& rng) const = 0;
  /// What the run will allocate for this workload on `hosts` hosts (sweep variables filled).
  virtual WorkloadDemand demand(const KindConfig& cfg, int hosts) const = 0;
  /// The start of every flow or job (the loader compares them with simulation.stop_time).
  virtual std::vector<WorkloadStart> starts(const KindConfig& cfg) const = 0;
  /// Sweep variables ("$size", "$collective") this workload uses.
  virtual SweepUse sweep_use(const KindConfig& /*cfg*/) const { return {}; }
  /// Fills the sweep variables for one case (null: that variable is not swept).
  virtual void instantiate(KindConfig& /*cfg*/, const Collective* /*collective*/,
                           const int64_t* /*size*/) const {}
};

std::unique_ptr<WorkloadKind> make_permutation_kind();
std::unique_ptr<WorkloadKind> make_incast_kind();
std::unique_ptr<WorkloadKind> make_flows_kind();
std::unique_ptr<WorkloadKind> make_jobs_kind();

}  // namespace fabsim

namespace fabsim {
/// The collective names a scenario accepts, for messages (sweep.collectives).
const char* collective_choices();
}  // namespace fabsim
