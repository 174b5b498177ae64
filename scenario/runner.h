// Builds a scenario's simulation (topology, transport, workload) and runs it to a RunResult.
// Tests use Run directly to inspect the network after a run.
#pragma once

#include <memory>  // owned components

#include "core/simulation.h"
#include "net/network.h"
#include "gse/dgsq.h"
#include "gse/gse.h"
#include "gse/gsos.h"
#include "net/faults.h"
#include "net/meter.h"
#include "net/topology.h"
#include "report/results.h"
#include "scenario/scenario.h"
#include "transport/flow.h"
#include "transport/transport.h"
#include "workload/job.h"
#include "workload/traffic.h"

namespace fabsim {

class Run : public FlowObserver {
 public:
  explicit Run(const ScenarioConfig& cfg);
 private:
  void install_fabric();
  void apply_security();

 public:
  ~Run() override;
  Run(const Run&) = delete;
  Run& operator=(const Run&) = delete;

  /// Runs until every flow is done, nothing is left to do, or the stop time; then collects
  /// the results and returns every packet to the pool. Call once.
  RunResult execute(ProgressHook* hook = nullptr, uint64_t hook_interval = 1 << 20);

  void on_flow_done(uint32_t flow, Time at) override;
  Simulation& sim() { return sim_; }
  Network& network() { return net_; }
  FlowTable& flows() { return flows_; }
  const TopologyInfo& topology() const { return topo_; }
  const ScenarioConfig& config() const { return cfg_; }
  Transport& transport() { return *transport_; }
  const std::vector<GseSourceSelector*>& gse_sources() const { return gse_sources_; }
  const std::vector<GseReorder*>& gse_reorders() const { return gse_reorders_; }
  const std::vector<GseDgsq*>& gse_dgsqs() const { return gse_dgsqs_; }
  nlohmann::ordered_json fabric_stats() const;
  /// Losses by cause and what each fault did (docs/FAULTS.md "Reporting").
  nlohmann::ordered_json fault_stats() const;
  const Gsos* gsos() const { return gsos_.get(); }
  const FaultInjector* faults() const { return faults_.get(); }

 private:
  ScenarioConfig cfg_;
  Simulation sim_;
  Network net_;
  TopologyInfo topo_;
  FlowTable flows_;
  std::unique_ptr<Transport> transport_;
  std::unique_ptr<FlowDriver> driver_;
  std::unique_ptr<JobRunner> jobs_;
  std::unique_ptr<PortSampler> sampler_;
  std::vector<MisorderMeter*> meters_;            // owned by their switches
  std::vector<GseSourceSelector*> gse_sources_;   // owned by their switches
  std::vector<GseReorder*> gse_reorders_;         // owned by their switches
  std::vector<GseNic*> gse_nics_;                 // owned by their hosts (GSE-E2E)
  std::vector<GseDgsq*> gse_dgsqs_;               // owned by their switches
  std::vector<std::unique_ptr<SwitchSink>> sinks_;
  std::unique_ptr<Gsos> gsos_;
  std::unique_ptr<FaultInjector> faults_;
  std::unique_ptr<Reconvergence> reconvergence_;
};

/// Loads nothing: builds and runs `cfg` in one call.
RunResult run_scenario(const ScenarioConfig& cfg, ProgressHook* hook = nullptr);

}  // namespace fabsim
