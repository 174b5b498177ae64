// Jobs: a set of ranks on GPUs running a sequence of operations (compute gaps and collectives),
// optionally for several iterations; several jobs run at once (DESIGN.md "Workloads").
// The runner releases each transfer of a collective once the transfers it depends on have been
// delivered, plus the job's per-step software latency, and records job completion times. A
// collective runs on its `options.channels` NCCL channels (workload/collective.h); each flow
// carries its transfer's channel to the transport (FlowSpec::channel).
#pragma once

#include <cstdint>  // ids
#include <string>   // names
#include <vector>   // jobs, ops

#include "core/simulation.h"
#include "transport/flow.h"
#include "transport/transport.h"
#include "workload/collective.h"

namespace fabsim {

struct OpSpec {
  bool compute = false;  // a compute gap of `duration`, else a collective
  Collective collective = Collective::kAllReduceRing;
  int64_t bytes = 0;  // nccl-tests S
  Time duration;      // compute gap
  CollectiveOptions options;
  // Sweep variables ("$collective", "$size" in a scenario), filled in for each case.
  bool sweep_collective = false;
  bool sweep_bytes = false;
};

struct JobSpec {
  std::string name;
  std::vector<uint32_t> gpus;  // rank -> host id
  std::vector<OpSpec> ops;
  int iterations = 1;
  Time start;
  Time step_latency;  // software latency before each transfer may start
  uint8_t tclass = 3;
};

/// One executed operation of one iteration.
struct OpResult {
  int iteration = 0;
  int index = 0;  // position in the job's op list
  bool compute = false;
  Collective collective = Collective::kAllReduceRing;
  int64_t bytes = 0;
  Time start;         // when the op began (previous op done)
  Time first_send;    // first transfer released (collectives)
  Time end;           // last byte delivered (or compute gap over)
  bool done = false;  // end is set
  Time jct() const { return end - (compute ? start : first_send); }
};

struct JobResult {
  std::string name;
  int ranks = 0;
  bool done = false;
  Time first_send = Time::max();
  Time end;
  std::vector<OpResult> ops;
  std::vector<Time> iteration_times;
  // Graph jobs (workload/graph.h): samples per iteration (training's global batch; 0 if not a
  // training job) and the longest compute time of any rank over all iterations.
  int64_t samples_per_iteration = 0;
  Time max_compute;
  Time jct() const { return end - first_send; }
};

class JobRunner : public EventTarget, public FlowObserver {
 public:
  JobRunner(Simulation& sim, FlowTable& flows, Transport& transport, std::vector<JobSpec> jobs);
  /// Schedules every job's start.
  void start();
  bool all_done() const { return done_jobs_ == jobs_.size(); }
  const std::vector<JobResult>& results() const { return results_; }
  const std::vector<JobSpec>& jobs() const { return jobs_; }

  void on_event(uint32_t tag, uint32_t gen) override;
  void on_flow_done(uint32_t flow, Time at) override;

 private:
  struct Running {  // the op a job is executing
    int iteration = 0;
    int op = 0;
    std::vector<Transfer> plan;
    std::vector<uint32_t> missing;                  // per transfer: deps not yet delivered
    std::vector<std::vector<uint32_t>> dependents;  // per transfer: transfers waiting on it
    size_t remaining = 0;                           // transfers not yet delivered
    Time iteration_start;
  };
  static constexpr int32_t kBeginOp = -1;      // start the job's current op
  static constexpr int32_t kComputeDone = -2;  // the current compute gap is over
  struct Pending {                             // a scheduled event
    uint32_t job;
    int32_t transfer;  // a transfer index, or kBeginOp / kComputeDone
  };
  struct FlowOwner {
    uint32_t job;
    uint32_t transfer;
    uint32_t generation;  // which op instance of the job
  };
  void begin_op(uint32_t job);
  void release(uint32_t job, uint32_t transfer);
  void finish_op(uint32_t job);
  void schedule(Time at, uint32_t job, int32_t transfer);

  Simulation& sim_;
  FlowTable& flows_;
  Transport& transport_;
  std::vector<JobSpec> jobs_;
  std::vector<JobResult> results_;
  std::vector<Running> running_;
  std::vector<uint32_t> generation_;  // per job: op instances begun
  std::vector<Pending> pending_;
  std::vector<uint32_t> free_pending_;
  std::vector<FlowOwner> owner_;  // per flow id
  size_t done_jobs_ = 0;
};

}  // namespace fabsim
