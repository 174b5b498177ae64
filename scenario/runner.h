// Builds a scenario's simulation (topology, transport, workload) and runs it to a RunResult.
// Tests use Run directly to inspect the network after a run.
#pragma once

#include <atomic>   // stop flag
#include <memory>   // owned components
#include <string>   // warnings
#include <utility>  // sampled ports
#include <vector>   // sampled ports

#include "core/simulation.h"
#include "net/fabric.h"
#include "net/faults.h"
#include "net/meter.h"
#include "net/network.h"
#include "net/topology.h"
#include "report/results.h"
#include "scenario/resources.h"
#include "scenario/scenario.h"
#include "transport/flow.h"
#include "transport/transport.h"
#include "workload/graph.h"
#include "workload/job.h"
#include "workload/traffic.h"

namespace fabsim {

/// Asks running simulations to stop (issue 14): a signal handler stores the signal's number,
/// and each simulation stops between two events at its next check; 0 = run on.
using StopFlag = std::atomic<int>;

class Run : public FlowObserver {
 public:
  /// Builds the network of `cfg` (moved in: a large scenario's flow list and effective keys
  /// are not held twice).
  explicit Run(ScenarioConfig cfg);

  ~Run() override;
  Run(const Run&) = delete;
  Run& operator=(const Run&) = delete;

  /// Runs until every flow is done, nothing is left to do, or the stop time; then collects
  /// the results and returns every packet to the pool. Call once.
  RunResult execute(ProgressHook* hook = nullptr, uint64_t hook_interval = 1 << 20);
  /// Collects the results of a simulation its caller drove event by event (the embedding API,
  /// api/fabsim_api.h) without running anything, then returns every packet to the pool. Call
  /// once, instead of execute(); `wall_seconds` is the caller's wall time for the speed figures.
  RunResult collect(double wall_seconds);
  /// Checks `*flag` every kStopCheckEvents events during execute(), and stops the run between
  /// two events once it is non-zero: the results are then partial (interrupted()).
  void stop_on(const StopFlag* flag) { stop_flag_ = flag; }
  /// The flag's value if it stopped the run, else 0.
  int interrupted() const { return interrupted_; }
  static constexpr uint64_t kStopCheckEvents = 1 << 16;
  /// The resource guard's estimate on the built network, in bytes (scenario/resources.h).
  uint64_t memory_estimate() const { return memory_estimate_; }
  /// What the resource guard counts of the built network (scenario/resources.h).
  NetworkCounts network_counts() const;
  /// Warnings about the built run ("<file>: key '<key>': <why>"), in the order found; the
  /// results carry them too.
  const std::vector<std::string>& warnings() const { return warnings_; }
  /// The trimming threshold of fabric queues (network.trim; 0 when trimming is off).
  Bytes trim_threshold() const { return trim_threshold_; }
  /// The RED thresholds set from network.ecn.kmin_bdp / kmax_bdp ({0, 0} if absolute).
  std::pair<Bytes, Bytes> ecn_thresholds() const { return ecn_thresholds_; }

  void on_flow_done(uint32_t flow, Time at) override;
  Simulation& sim() { return sim_; }
  Network& network() { return net_; }
  FlowTable& flows() { return flows_; }
  const TopologyInfo& topology() const { return topo_; }
  /// The scenario; its `effective` keys move into the result when the run is collected.
  const ScenarioConfig& config() const { return cfg_; }
  Transport& transport() { return *transport_; }
  /// The installed fabric as its own type (null if it is another kind), e.g. GseFabric.
  template <typename T> const T* fabric_as() const { return dynamic_cast<const T*>(fabric_.get()); }
  nlohmann::ordered_json fabric_stats() const;
  /// Losses by cause and what each fault did (docs/FAULTS.md "Reporting").
  nlohmann::ordered_json fault_stats() const;
  const FaultInjector* faults() const { return faults_.get(); }

 private:
  void install_meters();
  void install_faults();
  void install_int();
  void install_trim();
  /// One BDP (the NIC rate x the fabric's longest unloaded round trip) in whole largest frames
  /// (bytes), and that frame: what trimming and BDP-relative ECN thresholds are made of.
  std::pair<int64_t, int64_t> bdp_in_frames();
  /// network.ecn.kmin_bdp / kmax_bdp: every switch's RED thresholds from one BDP.
  void install_bdp_ecn();
  void check_buffers();
  void disable_host_ecn();
  void install_sampler();
  /// The (switch, port) pairs output.sample_ports selects: ToRs first, in port order.
  std::vector<std::pair<uint32_t, uint16_t>> sampled_ports() const;
  /// The resource guard on the built network (cfg.memory_limit; scenario/resources.h).
  void check_memory_on_network();
  void start_workload();
  /// Ports of the ToRs that lead to hosts (true) or up (false), and every other switch's.
  bool host_port(uint32_t sw, uint16_t port) const;

  ScenarioConfig cfg_;
  Simulation sim_;
  Network net_;
  TopologyInfo topo_;
  FlowTable flows_;
  std::unique_ptr<Transport> transport_;
  std::unique_ptr<FlowDriver> driver_;
  std::unique_ptr<JobRunner> jobs_;
  std::unique_ptr<GraphRunner> graphs_;
  std::unique_ptr<PortSampler> sampler_;
  std::vector<MisorderMeter*> meters_;  // owned by their switches
  std::unique_ptr<FabricInstance> fabric_;
  std::unique_ptr<FaultInjector> faults_;
  std::unique_ptr<Reconvergence> reconvergence_;
  /// Ideal FCT of every flow (net/ideal_fct.h), for the slowdown report.
  std::vector<Time> ideal_fcts() const;

  nlohmann::ordered_json workload_summary_;  // WorkloadPlan::summary
  bool slowdown_ = false;                    // report slowdown (the workload's or output.slowdown)
  bool slowdown_in_summary_ = false;         // the workload asked for it (WorkloadPlan::slowdown)
  const StopFlag* stop_flag_ = nullptr;
  int interrupted_ = 0;
  Time stalled_at_ = Time::max();  // unfinished with nothing left to happen after this
  uint64_t memory_estimate_ = 0;
  std::vector<std::string> warnings_;
  Bytes trim_threshold_;
  std::pair<Bytes, Bytes> ecn_thresholds_;
};

/// Loads nothing: builds and runs `cfg` in one call.
RunResult run_scenario(const ScenarioConfig& cfg, ProgressHook* hook = nullptr);

}  // namespace fabsim
