// A small per-rank trace format and the driver that replays it through the embedding API
// (api/fabsim_api.h; docs/EMBEDDING.md "The example"): what a system simulator such as
// ASTRA-sim does through its network backend, reduced to a text file.
//
// A trace is lines of fields separated by blanks; '#' starts a comment.
//
//   latency <time>                     delay from a send becoming ready to its flow starting
//                                      (default 0; the jobs workload's step_latency)
//   job <name> <host>,<host>,... [start=<time>]
//                                      a job: rank i runs on the i-th host; its ops follow
//   <id> <rank> send <dst> <bytes> [tag=<n>] [op=<n>] [step=<n>] [after=<id>,<id>,...]
//   <id> <rank> recv <src> <bytes> [tag=<n>] [after=...]
//   <id> <rank> calc <time> [after=...]
//   <id> <rank> wait [after=...]
//
// An op id is any word, unique in its job; `after` names ops of the same job written above it
// (so a trace has no cycle). An op is ready at the job's start if it has no `after`, else once
// every op it names is done. When ready, a send posts Backend::send (done when its send
// handler runs: the message is delivered), a recv posts Backend::recv of (src, this rank,
// bytes, tag) (done when its handler runs), a calc schedules a timer (done when it fires), and
// a wait is done at once. Ops becoming ready at the same moment are posted in file order. A
// rank finishes (Backend::rank_finished) when its last op is done, a rank without ops at its
// job's start. `op` and `step` label the flow as the jobs workload labels its transfers.
#pragma once

#include <cstdint>    // ids
#include <istream>    // parse_trace
#include <stdexcept>  // TraceError
#include <string>     // names
#include <vector>     // jobs, ops

#include "api/fabsim_api.h"

namespace fabsim {

/// A trace that cannot be read: "file:line: what was expected".
class TraceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct TraceOp {
  enum class Kind : uint8_t { kSend, kRecv, kCalc, kWait };
  std::string id;
  uint32_t rank = 0;
  Kind kind = Kind::kWait;
  uint32_t peer = 0;  // send: destination rank; recv: source rank
  int64_t bytes = 0;
  int32_t tag = 0;
  int32_t op = -1;  // flow labels (send)
  int32_t step = -1;
  Time duration;                // calc
  std::vector<uint32_t> after;  // indices of ops of the same job
};

struct TraceJob {
  std::string name;
  std::vector<uint32_t> hosts;  // rank -> host
  Time start;
  std::vector<TraceOp> ops;
};

struct Trace {
  Time latency;
  std::vector<TraceJob> jobs;
};

/// Reads a trace; `name` stands for the file in messages. Throws TraceError.
Trace parse_trace(std::istream& in, const std::string& name);
Trace load_trace(const std::string& path);

/// Replays a trace through a Backend: the constructor declares the jobs and schedules their
/// starts; Backend::run() then plays it out.
class TraceDriver {
 public:
  /// `net` and `trace` must outlive the driver, and the driver the run.
  TraceDriver(Backend& net, const Trace& trace);
  TraceDriver(const TraceDriver&) = delete;
  TraceDriver& operator=(const TraceDriver&) = delete;

  /// The Backend's id of trace job `j` (its index, when the backend had no job before).
  JobId job_id(size_t j) const { return jobs_[j].id; }
  /// Ops done, of every job.
  size_t ops_done() const { return done_; }
  size_t ops() const { return total_; }
  /// When op `op` of trace job `job` was done (Time::max() if not).
  Time done_at(size_t job, size_t op) const { return jobs_[job].done_at[op]; }

 private:
  // The argument of every handler: which op of which job.
  struct Ref {
    TraceDriver* driver;
    uint32_t job;
    uint32_t op;
  };
  struct JobState {
    JobId id = 0;
    std::vector<uint32_t> missing;                  // per op: `after` ops not yet done
    std::vector<std::vector<uint32_t>> dependents;  // per op: ops that wait for it
    std::vector<uint32_t> left;                     // per rank: ops not yet done
    std::vector<Time> done_at;                      // per op
    std::vector<Ref> refs;                          // per op
    Ref start{};                                    // the job's start
  };
  static void on_start(void* arg);
  static void on_done(void* arg);
  void start_job(uint32_t job);
  void ready(uint32_t job, uint32_t op);
  void done(uint32_t job, uint32_t op);

  Backend& net_;
  const Trace& trace_;
  std::vector<JobState> jobs_;
  size_t done_ = 0;
  size_t total_ = 0;
};

}  // namespace fabsim
