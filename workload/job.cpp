// Job execution; see job.h.
#include "workload/job.h"

#include "core/assert.h"

namespace fabsim {

JobRunner::JobRunner(Simulation& sim, FlowTable& flows, Transport& transport,
                     std::vector<JobSpec> jobs)
    : sim_(sim), flows_(flows), transport_(transport), jobs_(std::move(jobs)),
      results_(jobs_.size()), running_(jobs_.size()), generation_(jobs_.size(), 0) {
  for (size_t j = 0; j < jobs_.size(); ++j) {
    results_[j].name = jobs_[j].name;
    results_[j].ranks = static_cast<int>(jobs_[j].gpus.size());
  }
}

void JobRunner::schedule(Time at, uint32_t job, int32_t transfer) {
  uint32_t slot;
  if (!free_pending_.empty()) {
    slot = free_pending_.back();
    free_pending_.pop_back();
    pending_[slot] = {job, transfer};
  } else {
    slot = static_cast<uint32_t>(pending_.size());
    pending_.push_back({job, transfer});
  }
  sim_.schedule(at, this, slot);
}

void JobRunner::start() {
  for (uint32_t j = 0; j < jobs_.size(); ++j) {
    running_[j].iteration_start = jobs_[j].start;
    if (jobs_[j].ops.empty() || jobs_[j].iterations == 0) {
      results_[j].done = true;
      ++done_jobs_;
      continue;
    }
    schedule(jobs_[j].start, j, kBeginOp);
  }
}

void JobRunner::on_event(uint32_t tag, uint32_t /*gen*/) {
  const Pending p = pending_[tag];
  free_pending_.push_back(tag);
  if (p.transfer == kBeginOp) {
    begin_op(p.job);
  } else if (p.transfer == kComputeDone) {
    finish_op(p.job);
  } else {
    release(p.job, static_cast<uint32_t>(p.transfer));
  }
}

// Starts the job's current op (running_[job].op of running_[job].iteration).
void JobRunner::begin_op(uint32_t job) {
  Running& r = running_[job];
  const JobSpec& spec = jobs_[job];
  const OpSpec& op = spec.ops[r.op];
  ++generation_[job];
  OpResult res;
  res.iteration = r.iteration;
  res.index = r.op;
  res.compute = op.compute;
  res.collective = op.collective;
  res.bytes = op.bytes;
  res.start = sim_.now();
  res.first_send = Time::max();
  results_[job].ops.push_back(res);
  if (op.compute) {
    r.plan.clear();
    r.remaining = 0;
    schedule(sim_.now() + op.duration, job, kComputeDone);
    return;
  }
  r.plan =
      expand_collective(op.collective, static_cast<int>(spec.gpus.size()), op.bytes, op.options);
  r.remaining = r.plan.size();
  r.missing.assign(r.plan.size(), 0);
  r.dependents.assign(r.plan.size(), {});
  for (uint32_t t = 0; t < r.plan.size(); ++t) {
    r.missing[t] = static_cast<uint32_t>(r.plan[t].deps.size());
    for (uint32_t d : r.plan[t].deps) r.dependents[d].push_back(t);
  }
  if (r.plan.empty()) {
    finish_op(job);
    return;
  }
  for (uint32_t t = 0; t < r.plan.size(); ++t) {
    if (r.missing[t] == 0) schedule(sim_.now() + spec.step_latency, job, static_cast<int32_t>(t));
  }
}

void JobRunner::release(uint32_t job, uint32_t transfer) {
  Running& r = running_[job];
  const JobSpec& spec = jobs_[job];
  const Transfer& t = r.plan[transfer];
  FlowSpec f;
  f.src = spec.gpus[t.src];
  f.dst = spec.gpus[t.dst];
  f.bytes = t.bytes;
  f.start = sim_.now();
  f.tclass = spec.tclass;
  f.job = static_cast<int32_t>(job);
  f.op = static_cast<int32_t>(results_[job].ops.size() - 1);
  f.step = t.step;
  f.src_rank = static_cast<int32_t>(t.src);
  f.dst_rank = static_cast<int32_t>(t.dst);
  f.channel = t.channel;
  const uint32_t id = flows_.add(f);
  if (owner_.size() <= id) owner_.resize(id + 1);
  owner_[id] = {job, transfer, generation_[job]};
  OpResult& res = results_[job].ops.back();
  if (sim_.now() < res.first_send) res.first_send = sim_.now();
  if (sim_.now() < results_[job].first_send) results_[job].first_send = sim_.now();
  transport_.start(id);
}

void JobRunner::on_flow_done(uint32_t flow, Time /*at*/) {
  FABSIM_ASSERT(flow < owner_.size());
  const FlowOwner o = owner_[flow];
  if (o.generation != generation_[o.job]) return;
  Running& r = running_[o.job];
  for (uint32_t d : r.dependents[o.transfer]) {
    if (--r.missing[d] == 0) {
      schedule(sim_.now() + jobs_[o.job].step_latency, o.job, static_cast<int32_t>(d));
    }
  }
  if (--r.remaining == 0) finish_op(o.job);
}

void JobRunner::finish_op(uint32_t job) {
  Running& r = running_[job];
  const JobSpec& spec = jobs_[job];
  results_[job].ops.back().end = sim_.now();
  results_[job].ops.back().done = true;
  results_[job].end = sim_.now();
  if (++r.op < static_cast<int>(spec.ops.size())) {
    begin_op(job);
    return;
  }
  results_[job].iteration_times.push_back(sim_.now() - r.iteration_start);
  r.op = 0;
  if (++r.iteration < spec.iterations) {
    r.iteration_start = sim_.now();
    begin_op(job);
    return;
  }
  results_[job].done = true;
  if (results_[job].first_send == Time::max()) results_[job].first_send = spec.start;
  if (++done_jobs_ == jobs_.size()) sim_.stop();
}

}  // namespace fabsim
