// The embedding API; see fabsim_api.h.
#include "api/fabsim_api.h"

#include <fmt/format.h>   // messages
#include <toml++/toml.h>  // is workload.kind given?

#include <algorithm>  // min, max
#include <chrono>     // wall time of run()
#include <fstream>    // does the scenario file exist?
#include <utility>    // move

#include "core/assert.h"
#include "scenario/runner.h"

namespace fabsim {
namespace {

// The scenario's own workload kind wins; without one, "external" (nothing starts).
std::vector<std::string> with_external(const toml::table& root,
                                       const std::vector<std::string>& overrides) {
  std::vector<std::string> out;
  if (!root.at_path("workload.kind")) out.emplace_back("workload.kind=\"external\"");
  out.insert(out.end(), overrides.begin(), overrides.end());
  return out;
}

}  // namespace

ScenarioConfig load_embedded_scenario(const std::string& path,
                                      const std::vector<std::string>& overrides) {
  toml::table root;
  if (std::ifstream(path).good()) {
    try {
      root = toml::parse_file(path);
    } catch (const toml::parse_error&) {
      // load_scenario reports it with the file and line.
    }
  }
  return load_scenario(path, with_external(root, overrides));
}

ScenarioConfig load_embedded_scenario_text(const std::string& text, const std::string& name,
                                           const std::vector<std::string>& overrides) {
  toml::table root;
  try {
    root = toml::parse(text, name);
  } catch (const toml::parse_error&) {
    // load_scenario_text reports it with the name and line.
  }
  return load_scenario_text(text, name, with_external(root, overrides));
}

Backend::Backend(const ScenarioConfig& cfg) {
  // A workload kind lists every flow or job it starts (WorkloadKind::starts); none = nothing.
  const auto starts = cfg.workload.kind->starts(cfg.workload.config);
  if (!starts.empty()) {
    throw ApiError(fmt::format(
        "{}: workload.kind: a workload that starts nothing (\"external\", or no workload.kind "
        "with load_embedded_scenario), since the embedding program posts the traffic; \"{}\" "
        "starts {} flow(s) or job(s) of its own",
        cfg.file, cfg.workload.name(), starts.size()));
  }
  run_ = std::make_unique<Run>(cfg);
  run_->flows().set_observer(this);
}

Backend::~Backend() = default;

int Backend::hosts() const {
  return run_->topology().hosts;
}

const TopologyInfo& Backend::topology() const {
  return run_->topology();
}

const ScenarioConfig& Backend::config() const {
  return run_->config();
}

void Backend::check_usable(const char* call) const {
  if (finished_) throw ApiError(fmt::format("{}: called after finish()", call));
}

void Backend::check_job_rank(const char* call, JobId job, uint32_t rank) const {
  if (job >= jobs_.size()) {
    throw ApiError(
        fmt::format("{}: job {}: a job id from add_job(), below {}", call, job, jobs_.size()));
  }
  const Job& j = jobs_[job];
  if (rank >= j.hosts.size()) {
    throw ApiError(fmt::format("{}: rank {} of job '{}': a rank below its {} ranks", call, rank,
                               j.name, j.hosts.size()));
  }
}

JobId Backend::add_job(const std::string& name, const std::vector<uint32_t>& hosts) {
  check_usable("add_job");
  if (hosts.empty()) {
    throw ApiError(fmt::format("add_job: job '{}': at least one host (rank 0's)", name));
  }
  std::vector<bool> used(static_cast<size_t>(this->hosts()), false);
  for (size_t r = 0; r < hosts.size(); ++r) {
    const uint32_t h = hosts[r];
    if (h >= used.size()) {
      throw ApiError(fmt::format("add_job: job '{}' rank {}: a host id below the topology's {} "
                                 "hosts, got {}",
                                 name, r, used.size(), h));
    }
    if (used[h]) {
      throw ApiError(
          fmt::format("add_job: job '{}': distinct hosts (two ranks on host {})", name, h));
    }
    used[h] = true;
  }
  Job j;
  j.name = name;
  j.hosts = hosts;
  j.finished.assign(hosts.size(), false);
  jobs_.push_back(std::move(j));
  return static_cast<JobId>(jobs_.size() - 1);
}

uint32_t Backend::ranks(JobId job) const {
  check_job_rank("ranks", job, 0);
  return static_cast<uint32_t>(jobs_[job].hosts.size());
}

uint32_t Backend::host(JobId job, uint32_t rank) const {
  check_job_rank("host", job, rank);
  return jobs_[job].hosts[rank];
}

void Backend::rank_finished(JobId job, uint32_t rank) {
  check_usable("rank_finished");
  check_job_rank("rank_finished", job, rank);
  Job& j = jobs_[job];
  if (j.finished[rank]) return;
  j.finished[rank] = true;
  j.end = std::max(j.end, now());
  if (++j.ranks_finished == j.hosts.size() && ++jobs_finished_ == jobs_.size()) {
    run_->sim().stop();
  }
}

MessageId Backend::send(JobId job, uint32_t src, uint32_t dst, int64_t bytes, int32_t tag,
                        Callback on_sent, const SendOptions& options) {
  check_usable("send");
  check_job_rank("send", job, src);
  check_job_rank("send", job, dst);
  if (src == dst) {
    throw ApiError(fmt::format("send: job '{}': a destination rank other than the source, got "
                               "{} to {}",
                               jobs_[job].name, src, dst));
  }
  if (bytes < 1) {
    throw ApiError(fmt::format("send: job '{}' rank {} to {}: at least 1 byte, got {}",
                               jobs_[job].name, src, dst, bytes));
  }
  if (options.delay < Time()) {
    throw ApiError(fmt::format("send: job '{}' rank {} to {}: a delay of at least 0, got {} ps",
                               jobs_[job].name, src, dst, options.delay.ps()));
  }
  const auto id = static_cast<MessageId>(messages_.size());
  MessageRecord m;
  m.job = job;
  m.src_rank = src;
  m.dst_rank = dst;
  m.tag = tag;
  m.bytes = bytes;
  m.options = options;
  m.posted = now();
  m.on_sent = on_sent;
  ++jobs_[job].messages;
  auto it = channels_.find({job, src, dst, bytes, tag});
  if (it != channels_.end() && !it->second.recvs.empty()) {
    m.claimed = true;
    m.on_received = it->second.recvs.front();
    it->second.recvs.pop_front();
    --unmatched_recvs_;
    if (it->second.recvs.empty()) channels_.erase(it);
  } else {
    channels_[{job, src, dst, bytes, tag}].sends.push_back(id);
    ++unclaimed_;
  }
  messages_.push_back(m);
  run_->sim().schedule(now() + options.delay, this, id, kStartFlow);
  return id;
}

void Backend::recv(JobId job, uint32_t src, uint32_t dst, int64_t bytes, int32_t tag,
                   Callback on_received) {
  check_usable("recv");
  check_job_rank("recv", job, src);
  check_job_rank("recv", job, dst);
  auto it = channels_.find({job, src, dst, bytes, tag});
  if (it == channels_.end() || it->second.sends.empty()) {
    channels_[{job, src, dst, bytes, tag}].recvs.push_back(on_received);
    ++unmatched_recvs_;
    return;
  }
  const MessageId id = it->second.sends.front();
  it->second.sends.pop_front();
  if (it->second.sends.empty()) channels_.erase(it);
  --unclaimed_;
  MessageRecord& m = messages_[id];
  m.claimed = true;
  m.on_received = on_received;
  // Already delivered: the handler runs in an event of its own, now.
  if (m.delivered) run_->sim().schedule(now(), this, id, kLateReceive);
}

void Backend::schedule(Time delay, Callback handler) {
  check_usable("schedule");
  if (delay < Time()) {
    throw ApiError(fmt::format("schedule: a delay of at least 0, got {} ps", delay.ps()));
  }
  run_->sim().schedule(now() + delay, this, timers_.put(handler), kTimer);
}

Time Backend::now() const {
  return run_->sim().now();
}

bool Backend::idle() const {
  return run_->sim().scheduler().empty();
}

void Backend::on_event(uint32_t tag, uint32_t kind) {
  switch (static_cast<EventKind>(kind)) {
    case kStartFlow:
      start_flow(tag);
      return;
    case kTimer: {
      const Callback handler = timers_.take(tag);  // freed first: the handler may schedule again
      handler();
      return;
    }
    case kLateReceive: {
      messages_[tag].received = true;
      const Callback handler = messages_[tag].on_received;
      handler();
      return;
    }
    case kMark:  // run_until(): only brings the clock to its limit
      return;
  }
  FABSIM_ASSERT(false);
}

// The flow is tagged as the job layer tags its transfers (JobRunner::release), and started in
// this event, as JobRunner starts a released transfer.
void Backend::start_flow(MessageId id) {
  const MessageRecord& m = messages_[id];
  const Job& j = jobs_[m.job];
  FlowSpec f;
  f.src = j.hosts[m.src_rank];
  f.dst = j.hosts[m.dst_rank];
  f.bytes = m.bytes;
  f.start = now();
  f.tclass = run_->config().transport.tclass;
  f.job = static_cast<int32_t>(m.job);
  f.op = m.options.op;
  f.step = m.options.step;
  f.src_rank = static_cast<int32_t>(m.src_rank);
  f.dst_rank = static_cast<int32_t>(m.dst_rank);
  FlowTable& flows = run_->flows();
  FABSIM_ASSERT(flows.size() == flow_message_.size());  // only this backend adds flows
  const uint32_t flow = flows.add(f);
  flow_message_.push_back(id);
  messages_[id].flow = flow;
  Job& job = jobs_[m.job];
  job.first_send = std::min(job.first_send, now());
  run_->transport().start(flow);
}

// Delivery: the send handler, then the recv handler if one is waiting (fabsim_api.h). The
// handlers are copied first: a handler that sends grows messages_.
void Backend::on_flow_done(uint32_t flow, Time at) {
  const MessageId id = flow_message_[flow];
  MessageRecord& m = messages_[id];
  m.delivered = true;
  Job& j = jobs_[m.job];
  ++j.delivered;
  j.end = std::max(j.end, at);
  const Callback sent = m.on_sent;
  const bool claimed = m.claimed;
  const Callback received = m.on_received;
  if (claimed) m.received = true;
  sent();
  if (claimed) received();
}

void Backend::run_to(Time until) {
  check_usable("run");
  if (running_) throw ApiError("run: called from inside a handler (the loop is running)");
  running_ = true;
  const auto wall0 = std::chrono::steady_clock::now();
  run_->sim().run(until);
  wall_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  running_ = false;
}

void Backend::run() {
  run_to(run_->config().stop_time);
}

void Backend::run_until(Time until) {
  check_usable("run_until");
  if (until < now()) {
    throw ApiError(fmt::format("run_until: a time at or after now() = {} ps, got {} ps", now().ps(),
                               until.ps()));
  }
  // A marker event at `until` brings the clock there even if nothing else is due.
  run_->sim().schedule(until, this, 0, kMark);
  run_to(until);
}

void Backend::stop() {
  if (running_) run_->sim().stop();
}

const MessageRecord& Backend::message(MessageId id) const {
  if (id >= messages_.size()) {
    throw ApiError(
        fmt::format("message: id {}: an id from send(), below {}", id, messages_.size()));
  }
  return messages_[id];
}

const FlowRecord& Backend::flow(MessageId id) const {
  const MessageRecord& m = message(id);
  if (m.flow == MessageRecord::kNoFlow) {
    throw ApiError(fmt::format("flow: message {} has not started (it starts at {} ps)", id,
                               (m.posted + m.options.delay).ps()));
  }
  return run_->flows()[m.flow];
}

JobResult Backend::job_result(JobId job) const {
  check_job_rank("job_result", job, 0);
  const Job& j = jobs_[job];
  JobResult r;
  r.name = j.name;
  r.ranks = static_cast<int>(j.hosts.size());
  r.done = j.ranks_finished == j.hosts.size() && j.delivered == j.messages;
  r.first_send = j.first_send == Time::max() ? Time() : j.first_send;
  r.end = j.end;
  return r;
}

RunResult Backend::finish() {
  check_usable("finish");
  if (running_) throw ApiError("finish: called from inside a handler (the loop is running)");
  finished_ = true;
  RunResult r = run_->collect(wall_seconds_);
  for (JobId j = 0; j < jobs_.size(); ++j) {
    r.jobs.push_back(job_result(j));
    r.all_done = r.all_done && r.jobs.back().done;
  }
  for (const MessageRecord& m : messages_) r.all_done = r.all_done && m.delivered;
  return r;
}

}  // namespace fabsim
