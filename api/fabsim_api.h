// fabsim as a network backend (issue 19 item 5; docs/EMBEDDING.md): the library interface a
// system simulator such as ASTRA-sim or SimAI drives instead of its own network model. This
// header is the documentation of the interface.
//
// The embedding program builds a network and a transport from a scenario (TOML) whose workload
// starts nothing, declares its jobs (ranks on hosts), then posts messages and timers and runs
// the event loop; fabsim calls the program back from that loop when a message has arrived or a
// timer is due. At the end it collects the same results as `fabsim run` (flows, jobs, the
// conservation ledger), which report/writers.h writes or prints.
//
//   fabsim::Backend net(fabsim::load_embedded_scenario("ring.toml"));
//   const fabsim::JobId job = net.add_job("a", {0, 1, 2, 3});
//   net.recv(job, 0, 1, 1 << 20, /*tag*/ 7, {on_arrival, &state});
//   net.send(job, 0, 1, 1 << 20, /*tag*/ 7, {on_sent, &state});
//   net.run();
//   const fabsim::RunResult r = net.finish();
//
// Time is fabsim's integer picoseconds (core/units.h); ASTRA-sim's nanoseconds convert with
// Time::ps(ns * 1000). One Backend is one simulation: it is not thread-safe, and several
// Backends may run in one process (one per thread).
#pragma once

#include <cstdint>    // ids, tags
#include <deque>      // unmatched sends and receives
#include <map>        // matching channels
#include <memory>     // the assembled run
#include <stdexcept>  // ApiError
#include <string>     // names, paths
#include <tuple>      // channel keys
#include <vector>     // jobs, messages

#include "core/scheduler.h"
#include "core/slots.h"
#include "core/units.h"
#include "net/topology.h"
#include "report/results.h"
#include "scenario/scenario.h"
#include "transport/flow.h"
#include "workload/job.h"

namespace fabsim {

class Run;

/// A call the API cannot honour: a rank outside its job, a host that does not exist, a message
/// of 0 bytes, a call after finish() or run() from inside a handler. The text names the call,
/// the argument and what was expected. Scenario errors are ConfigError (config/reader.h).
class ApiError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A completion or timer handler: `fn(arg)`, the shape of ASTRA-sim's `void (*)(void*)` with its
/// `fun_arg`. A lambda without captures converts to `fn`. An empty Callback does nothing.
struct Callback {
  void (*fn)(void* arg) = nullptr;
  void* arg = nullptr;
  void operator()() const {
    if (fn != nullptr) fn(arg);
  }
};

/// A job: its index in add_job() order, which is FlowSpec::job of its flows.
using JobId = uint32_t;
/// A message: its index in send() order.
using MessageId = uint32_t;

/// Optional labels and timing of one send().
struct SendOptions {
  /// The flow starts this long after the call (a per-message software or NIC latency, as SimAI's
  /// ns-3 frontend adds). Zero starts it at now(), in an event of its own.
  Time delay;
  /// FlowSpec::op and FlowSpec::step of the flow, as the job layer sets them (workload/job.h:
  /// the op instance in the job and the ring step, round or tree chunk). -1: no label.
  int32_t op = -1;
  int32_t step = -1;
};

/// What the backend knows of one message.
struct MessageRecord {
  static constexpr uint32_t kNoFlow = UINT32_MAX;
  JobId job = 0;
  uint32_t src_rank = 0;
  uint32_t dst_rank = 0;
  int32_t tag = 0;
  int64_t bytes = 0;
  SendOptions options;
  Time posted;              // when send() was called
  uint32_t flow = kNoFlow;  // its flow in the flow table, once started (FlowRecord has times)
  bool delivered = false;   // its last byte arrived (the flow completed)
  bool claimed = false;     // a recv() matched it
  bool received = false;    // that recv's handler has been called
  Callback on_sent;         // send handler
  Callback on_received;     // the matching recv's handler
};

/// Loads a scenario for embedding: as load_scenario() (scenario/scenario.h), except that a
/// scenario without `workload.kind` gets the kind "external", which starts nothing. Throws
/// ConfigError naming the file, the key and what was expected.
ScenarioConfig load_embedded_scenario(const std::string& path,
                                      const std::vector<std::string>& overrides = {});
/// The same from TOML text; `name` stands for the file in messages.
ScenarioConfig load_embedded_scenario_text(const std::string& text, const std::string& name,
                                           const std::vector<std::string>& overrides = {});

/// One simulation driven from outside: the network, fabric and transport of a scenario, and the
/// messages, receives and timers an embedding program posts. The duties of ASTRA-sim's
/// AstraNetworkAPI map one to one (docs/EMBEDDING.md): sim_send -> send(), sim_recv -> recv(),
/// sim_schedule -> schedule(), sim_get_time -> now(), sim_notify_finished -> rank_finished().
///
/// When handlers run. Every handler runs inside the event loop (run() or run_until()) at its
/// simulated time, never inside the call that posted it.
///  - A message is *delivered* when its flow completes: the receiver has its last byte in
///    order (FlowRecord::end, the instant every fabsim report calls the flow's end).
///  - The send handler runs at delivery: this is "done from the sender's view". fabsim's
///    transports learn it one ACK later; ASTRA-sim's analytical backend also fires at arrival,
///    while SimAI's ns-3 frontend fires earlier, when the sender's NIC has sent the last byte.
///  - The recv handler runs at delivery if its recv() was posted before: in the same event,
///    right after the send handler. If recv() is posted after delivery, its handler runs in an
///    event of its own at the time of the recv() call (a zero delay), as ASTRA-sim requires.
///  - Handlers may call send(), recv(), schedule(), now(), rank_finished() and stop(): none of
///    them re-enters the network (a send starts its flow in an event of its own), so the order
///    of events is what the program's calls make it. They may not call run(), run_until() or
///    finish() (ApiError).
///
/// Matching. A recv() names (job, source rank, destination rank, bytes, tag); so does a send().
/// The k-th recv() of a key matches the k-th send() of that key, in the order the calls were
/// made (not the order of arrival), as MPI's non-overtaking rule and ASTRA-sim's tracker keyed
/// by (tag, src, dst, count) do. A send without a recv is delivered all the same; it is counted
/// by unclaimed_messages(), and a recv without a send by unmatched_recvs().
///
/// Several jobs run at once: each has its own ranks 0..n-1 on its own hosts (jobs may share
/// hosts), and each flow carries FlowSpec::job, src_rank and dst_rank as the job layer's do.
class Backend final : private FlowObserver, private EventTarget {
 public:
  /// Builds the network, fabric and transport of `cfg` (as `fabsim run` would, in the same
  /// order, so that the same scenario gives the same events). Throws ApiError if the
  /// scenario's workload starts traffic of its own (its kind must start nothing: "external").
  explicit Backend(const ScenarioConfig& cfg);
  ~Backend() override;
  Backend(const Backend&) = delete;
  Backend& operator=(const Backend&) = delete;

  // --- the network -----------------------------------------------------------------------
  /// Hosts of the topology (host ids 0..hosts()-1; a rank is placed on one).
  int hosts() const;
  const TopologyInfo& topology() const;
  const ScenarioConfig& config() const;
  /// The assembled simulation (network, flow table, transport), for inspection.
  Run& assembly() { return *run_; }

  // --- jobs ------------------------------------------------------------------------------
  /// Declares a job whose rank i runs on host `hosts[i]`; ids count from 0 in call order.
  /// The hosts must exist and differ; another job may use the same hosts.
  JobId add_job(const std::string& name, const std::vector<uint32_t>& hosts);
  size_t jobs() const { return jobs_.size(); }
  /// Ranks of `job`, and the host of one of them.
  uint32_t ranks(JobId job) const;
  uint32_t host(JobId job, uint32_t rank) const;
  /// Rank `rank` of `job` has nothing more to do (ASTRA-sim's sim_notify_finished). Once every
  /// rank of every job has said so, the event loop stops after the current event, and a job's
  /// result is done, ending at its last rank's call.
  void rank_finished(JobId job, uint32_t rank);

  // --- messages and timers -----------------------------------------------------------------
  /// Posts a message of `bytes` (>= 1) from rank `src` to rank `dst` (different ranks) of
  /// `job`; its flow starts options.delay from now. `on_sent` runs at delivery (see above).
  MessageId send(JobId job, uint32_t src, uint32_t dst, int64_t bytes, int32_t tag,
                 Callback on_sent = {}, const SendOptions& options = {});
  /// Declares that rank `dst` of `job` expects `bytes` from rank `src` with `tag`; `on_received`
  /// runs once the matching message has been delivered (see above).
  void recv(JobId job, uint32_t src, uint32_t dst, int64_t bytes, int32_t tag,
            Callback on_received);
  /// Calls `handler` `delay` (>= 0) from now, in an event of its own.
  void schedule(Time delay, Callback handler);
  /// The current simulated time: the time of the event being run, or of the last one run.
  Time now() const;

  // --- the event loop ------------------------------------------------------------------------
  /// Runs events until none is pending, stop() is called, every rank has finished, or the
  /// scenario's simulation.stop_time is passed. May be called again after posting more.
  void run();
  /// Runs the events at or before `until` (>= now()); unless stopped earlier, now() is then
  /// `until`. The caller's limit replaces simulation.stop_time. (It schedules a marker event at
  /// `until`: if stop() ends the call first, a later run() still brings the clock there.)
  void run_until(Time until);
  /// From a handler: the loop returns after the current event. Elsewhere it does nothing.
  void stop();
  /// No event is pending: run() would return at once.
  bool idle() const;

  // --- results -----------------------------------------------------------------------------
  size_t messages() const { return messages_.size(); }
  const MessageRecord& message(MessageId id) const;
  /// The flow of a started message (its times, packets and retransmissions).
  const FlowRecord& flow(MessageId id) const;
  /// Receives posted that no send has matched yet.
  size_t unmatched_recvs() const { return unmatched_recvs_; }
  /// Messages sent that no recv has matched yet (delivered or not).
  size_t unclaimed_messages() const { return unclaimed_; }
  /// One job's figures so far: first_send = its first flow's start, end = its last delivery
  /// or rank_finished() call, done = every rank finished and every message delivered. No ops.
  JobResult job_result(JobId job) const;
  /// Ends the simulation without running anything more and returns its results, as `fabsim
  /// run` collects them: every flow, the jobs (job_result() of each), the ledger (closed: it
  /// balances, with packets still in flight counted as such), and every packet back in the
  /// pool. all_done says every message was delivered and every job is done. Call once; after
  /// it only the const accessors may be used.
  RunResult finish();

 private:
  // What an event of this backend is for; it travels in the event's `gen` (the backend cancels
  // nothing, so it has no other use for it), and `tag` is the message or timer slot.
  enum EventKind : uint32_t { kStartFlow = 0, kTimer = 1, kLateReceive = 2, kMark = 3 };
  void on_event(uint32_t tag, uint32_t kind) override;
  void on_flow_done(uint32_t flow, Time at) override;
  void start_flow(MessageId id);
  void check_job_rank(const char* call, JobId job, uint32_t rank) const;
  void check_usable(const char* call) const;
  void run_to(Time until);

  struct Job {
    std::string name;
    std::vector<uint32_t> hosts;
    std::vector<bool> finished;  // per rank: rank_finished() called
    uint32_t ranks_finished = 0;
    uint32_t messages = 0;  // sent
    uint32_t delivered = 0;
    Time first_send = Time::max();
    Time end;
  };
  // Sends and receives of one (job, src, dst, bytes, tag) not yet matched, oldest first; at
  // most one of the two is non-empty, and a channel with neither is erased.
  using ChannelKey = std::tuple<JobId, uint32_t, uint32_t, int64_t, int32_t>;
  struct Channel {
    std::deque<MessageId> sends;
    std::deque<Callback> recvs;
  };

  std::unique_ptr<Run> run_;
  std::vector<Job> jobs_;
  std::vector<MessageRecord> messages_;
  std::vector<MessageId> flow_message_;  // per flow id: its message
  std::map<ChannelKey, Channel> channels_;
  Slots<Callback> timers_;  // pending timers by slot
  size_t unmatched_recvs_ = 0;
  size_t unclaimed_ = 0;
  size_t jobs_finished_ = 0;  // jobs whose every rank has finished
  double wall_seconds_ = 0;   // spent in run() and run_until()
  bool running_ = false;      // inside run() or run_until()
  bool finished_ = false;     // finish() was called
};

}  // namespace fabsim
