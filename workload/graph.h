// Task graphs: a job as a graph of compute tasks on ranks and collectives over rank groups, with
// dependencies (issue 19; REFERENCE.md §8). A training iteration (workload/training/), a Chakra
// execution trace or a SimAI workload file becomes one; the runner executes it on the fabric.
//  - A compute node runs on one rank's compute stream: the streams are serial (one kernel at a
//    time per GPU), so a node waits for its dependencies and for the rank's earlier nodes.
//  - A collective node is expanded (workload/collective.h) over its group of ranks when its
//    dependencies are done; its transfers are flows, each released once the transfers it depends
//    on have been delivered (plus the job's step latency). Collectives overlap compute and each
//    other: that is how a data-parallel AllReduce hides behind the backward pass.
//  - A transfer between two ranks of one server goes over the scale-up fabric (NVLink) when the
//    job gives it a rate, never on the scale-out network: the server's transfers share each
//    GPU's egress and ingress of that rate max-min fairly (workload/scale_up.h: a ring's c
//    channels get rate/c each, an AllToAll's 7 peers rate/7, collectives that overlap share),
//    and a transfer completes the scale-up latency after its last bit leaves.
//  - Collectives that name one communicator (GraphNode::comm) run one at a time, in the order
//    they become ready: PyTorch's ProcessGroupNCCL puts a process group's collectives on one
//    NCCL stream, so a data-parallel group's gradient buckets reduce in turn, not at once.
//    Collectives of different communicators (TP, DP, EP groups) overlap.
//  - A delay node waits its duration on no stream and no link (a trace's fixed delays, e.g. SimAI's
//    update time after a collective): it neither occupies a rank nor moves bytes.
//  - `ideal_network`: every transfer completes the moment it is released (infinite bandwidth, no
//    latency): the iteration is then its compute alone (tests, and the compute-only baseline).
// The graph repeats for `iterations`; an iteration ends when every node is done.
#pragma once

#include <cstdint>  // ids
#include <memory>   // shared graphs
#include <string>   // names
#include <vector>   // nodes

#include "core/simulation.h"
#include "core/slots.h"
#include "transport/flow.h"
#include "transport/transport.h"
#include "workload/collective.h"
#include "workload/job.h"
#include "workload/scale_up.h"

namespace fabsim {

struct GraphNode {
  enum class Kind : uint8_t { kCompute, kCollective, kDelay };
  Kind kind = Kind::kCompute;
  uint32_t rank = 0;  // compute: the rank whose stream runs it
  Time duration;      // compute, delay
  Collective collective = Collective::kAllReduceRing;
  std::vector<uint32_t> group;  // collective: job ranks in ring order (sendrecv: {src, dst})
  int64_t bytes = 0;            // collective: nccl-tests' S
  std::vector<uint32_t> deps;   // nodes that finish first
  uint16_t category = 0;        // index into TaskGraph::categories (accounting, reports)
  /// Collective: its communicator, 0 for none. Collectives with the same nonzero comm run one
  /// at a time in the order they become ready, as on one NCCL communicator's stream.
  uint32_t comm = 0;
};

struct TaskGraph {
  std::vector<GraphNode> nodes;
  std::vector<std::string> categories{"compute"};  // e.g. compute, tp, pp, dp, ep
  /// Appends `n`; returns its index.
  uint32_t add(GraphNode n) {
    nodes.push_back(std::move(n));
    return static_cast<uint32_t>(nodes.size() - 1);
  }
  uint16_t category(const std::string& name);
  /// Ranks used (1 + the highest rank named).
  uint32_t ranks() const;
  /// An error message if a dependency points forward or outside, a group names a rank twice or
  /// holds fewer than two ranks, or a duration is negative; "" if the graph is sound.
  std::string check() const;
};

struct GraphJob {
  std::string name;
  std::vector<uint32_t> gpus;  // rank -> host id
  std::shared_ptr<const TaskGraph> graph;
  int iterations = 1;
  Time start;
  Time step_latency;
  uint8_t tclass = 3;
  bool ideal_network = false;
  std::vector<int32_t> server;  // per rank: its server (-1: none); scale-up between equal ones
  Rate scale_up_rate;           // 0: no scale-up fabric, every transfer crosses the network
  Time scale_up_latency;
  int64_t samples = 0;  // per iteration (training: the global batch), for samples/s
  int channels = 1;     // NCCL channels of every network collective (REFERENCE.md §8.8)
};

/// Per job: what the runner measured beyond the JobResult.
struct GraphStats {
  std::vector<Time> busy;         // per rank: compute time run, over all iterations
  std::vector<Time> by_category;  // per category: summed node time (compute) or span (comm)
  uint64_t network_transfers = 0;
  uint64_t scale_up_transfers = 0;
};

class GraphRunner : public EventTarget, public FlowObserver {
 public:
  GraphRunner(Simulation& sim, FlowTable& flows, Transport& transport, std::vector<GraphJob> jobs);
  void start();
  bool all_done() const { return done_jobs_ == jobs_.size(); }
  /// Results in the jobs' form (name, ranks, done, first send, end, iteration times; no ops).
  const std::vector<JobResult>& results() const { return results_; }
  const std::vector<GraphStats>& stats() const { return stats_; }
  const std::vector<GraphJob>& jobs() const { return jobs_; }

  void on_event(uint32_t tag, uint32_t gen) override;
  void on_flow_done(uint32_t flow, Time at) override;

 private:
  struct NodeState {
    uint32_t missing = 0;           // dependencies not done
    std::vector<Transfer> plan;     // collective: its transfers (while it runs)
    std::vector<uint32_t> waiting;  // per transfer: its deps not yet delivered
    std::vector<std::vector<uint32_t>> dependents;
    size_t remaining = 0;  // transfers not delivered
    Time began;  // compute: start; collective: start (a communicator's queue wait excluded)
  };
  struct Running {
    std::vector<NodeState> nodes;
    std::vector<std::vector<uint32_t>> dependents;  // per node
    std::vector<std::vector<uint32_t>> queue;       // per rank: ready compute nodes, FIFO
    std::vector<size_t> head;                       // per rank: next in `queue`
    std::vector<bool> busy;                         // per rank: a compute node runs
    std::vector<std::vector<uint32_t>> comm_queue;  // per communicator: ready collectives, FIFO
    std::vector<size_t> comm_head;                  // per communicator: next in `comm_queue`
    std::vector<bool> comm_busy;                    // per communicator: a collective runs
    size_t left = 0;                                // nodes not done this iteration
    int iteration = 0;
    Time iteration_start;
  };
  // kScaleUp: a server's scale-up fabric may have drained transfers (job = the server,
  // transfer = the arming generation; an older generation is stale).
  enum class Ev : uint8_t { kBegin, kComputeDone, kRelease, kTransferDone, kDelayDone, kScaleUp };
  struct Pending {
    uint32_t job;
    uint32_t node;
    uint32_t transfer;
    Ev ev;
  };
  struct FlowOwner {
    uint32_t job;
    uint32_t node;
    uint32_t transfer;
    uint32_t iteration;
  };
  void schedule(Time at, const Pending& p);
  void begin_iteration(uint32_t job);
  void ready(uint32_t job, uint32_t node);
  void run_next(uint32_t job, uint32_t rank);
  void run_comm(uint32_t job, uint32_t comm);
  void start_collective(uint32_t job, uint32_t node);
  void release(uint32_t job, uint32_t node, uint32_t transfer);
  void transfer_done(uint32_t job, uint32_t node, uint32_t transfer);
  void node_done(uint32_t job, uint32_t node);
  void scale_up_drained(uint32_t server, uint32_t gen);
  void arm_scale_up(uint32_t server, Time next);

  Simulation& sim_;
  FlowTable& flows_;
  Transport& transport_;
  std::vector<GraphJob> jobs_;
  std::vector<JobResult> results_;
  std::vector<GraphStats> stats_;
  std::vector<Running> running_;
  Slots<Pending> pending_;        // by event tag
  std::vector<FlowOwner> owner_;  // per flow id (graph flows only)
  ScaleUpFabric scale_up_;
  Slots<Pending> scale_up_owner_;       // per scale-up cookie: its transfer's done event
  std::vector<uint32_t> scale_up_gen_;  // per server: generation of the armed drain event
  std::vector<Time> scale_up_armed_;    // per server: when that event fires (max: none)
  std::vector<uint64_t> drained_;       // scratch for ScaleUpFabric::drain
  size_t done_jobs_ = 0;
};

}  // namespace fabsim
