// Task graph execution; see graph.h.
#include "workload/graph.h"

#include <fmt/format.h>  // messages

#include <algorithm>  // max

#include "core/assert.h"

namespace fabsim {

uint16_t TaskGraph::category(const std::string& name) {
  for (size_t i = 0; i < categories.size(); ++i) {
    if (categories[i] == name) return static_cast<uint16_t>(i);
  }
  categories.push_back(name);
  return static_cast<uint16_t>(categories.size() - 1);
}

uint32_t TaskGraph::ranks() const {
  uint32_t n = 0;
  for (const GraphNode& g : nodes) {
    if (g.kind == GraphNode::Kind::kCompute) n = std::max(n, g.rank + 1);
    for (uint32_t r : g.group) n = std::max(n, r + 1);
  }
  return n;
}

std::string TaskGraph::check() const {
  for (size_t i = 0; i < nodes.size(); ++i) {
    const GraphNode& g = nodes[i];
    for (uint32_t d : g.deps) {
      if (d >= i)
        return fmt::format("node {} depends on node {}, which does not come before it", i, d);
    }
    if (g.category >= categories.size()) return fmt::format("node {} has no category", i);
    if (g.kind != GraphNode::Kind::kCollective) {
      if (g.duration < Time()) return fmt::format("node {} has a negative duration", i);
      continue;
    }
    if (g.group.size() < 2) return fmt::format("node {}: a collective over fewer than 2 ranks", i);
    for (size_t a = 0; a < g.group.size(); ++a) {
      for (size_t b = a + 1; b < g.group.size(); ++b) {
        if (g.group[a] == g.group[b])
          return fmt::format("node {} names rank {} twice", i, g.group[a]);
      }
    }
    if (g.bytes < 0) return fmt::format("node {} has negative bytes", i);
    if (g.comm > nodes.size())
      return fmt::format("node {} names communicator {}, above the node count", i, g.comm);
  }
  return "";
}

GraphRunner::GraphRunner(Simulation& sim, FlowTable& flows, Transport& transport,
                         std::vector<GraphJob> jobs)
    : sim_(sim), flows_(flows), transport_(transport), jobs_(std::move(jobs)),
      results_(jobs_.size()), stats_(jobs_.size()), running_(jobs_.size()) {
  for (size_t j = 0; j < jobs_.size(); ++j) {
    const GraphJob& job = jobs_[j];
    const TaskGraph& g = *job.graph;
    results_[j].name = job.name;
    results_[j].ranks = static_cast<int>(job.gpus.size());
    stats_[j].busy.assign(job.gpus.size(), Time());
    stats_[j].by_category.assign(g.categories.size(), Time());
    Running& r = running_[j];
    r.dependents.assign(g.nodes.size(), {});
    for (uint32_t n = 0; n < g.nodes.size(); ++n) {
      for (uint32_t d : g.nodes[n].deps) r.dependents[d].push_back(n);
    }
    r.queue.assign(job.gpus.size(), {});
    r.head.assign(job.gpus.size(), 0);
    r.busy.assign(job.gpus.size(), false);
    uint32_t comms = 0;
    for (const GraphNode& n : g.nodes) comms = std::max(comms, n.comm + 1);
    r.comm_queue.assign(comms, {});
    r.comm_head.assign(comms, 0);
    r.comm_busy.assign(comms, false);
  }
}

void GraphRunner::schedule(Time at, const Pending& p) {
  sim_.schedule(at, this, pending_.put(p));
}

void GraphRunner::start() {
  for (uint32_t j = 0; j < jobs_.size(); ++j) {
    if (jobs_[j].graph->nodes.empty() || jobs_[j].iterations == 0) {
      results_[j].done = true;
      results_[j].first_send = jobs_[j].start;
      results_[j].end = jobs_[j].start;
      ++done_jobs_;
      continue;
    }
    // A graph job's time runs from its start: its first iteration may begin with compute.
    results_[j].first_send = jobs_[j].start;
    results_[j].samples_per_iteration = jobs_[j].samples;
    schedule(jobs_[j].start, {j, 0, 0, Ev::kBegin});
  }
  if (done_jobs_ == jobs_.size() && !jobs_.empty()) sim_.stop();
}

void GraphRunner::on_event(uint32_t tag, uint32_t /*gen*/) {
  const Pending p = pending_.take(tag);
  switch (p.ev) {
    case Ev::kBegin:
      begin_iteration(p.job);
      break;
    case Ev::kComputeDone: {
      const uint32_t rank = jobs_[p.job].graph->nodes[p.node].rank;
      running_[p.job].busy[rank] = false;
      node_done(p.job, p.node);
      run_next(p.job, rank);
      break;
    }
    case Ev::kRelease:
      release(p.job, p.node, p.transfer);
      break;
    case Ev::kTransferDone:
      transfer_done(p.job, p.node, p.transfer);
      break;
    case Ev::kDelayDone:
      node_done(p.job, p.node);
      break;
    case Ev::kScaleUp:
      scale_up_drained(p.job, p.transfer);
      break;
  }
}

// One drain event per server is armed at a time: a change that moves the server's next drain
// arms a new one and makes the old one stale (generation), as components re-arm their timers.
void GraphRunner::arm_scale_up(uint32_t server, Time next) {
  if (scale_up_gen_.size() <= server) {
    scale_up_gen_.resize(server + 1, 0);
    scale_up_armed_.resize(server + 1, Time::max());
  }
  if (next == scale_up_armed_[server]) return;
  scale_up_armed_[server] = next;
  ++scale_up_gen_[server];
  if (next == Time::max()) return;
  schedule(next, {server, 0, scale_up_gen_[server], Ev::kScaleUp});
}

void GraphRunner::scale_up_drained(uint32_t server, uint32_t gen) {
  if (gen != scale_up_gen_[server]) return;
  scale_up_armed_[server] = Time::max();
  drained_.clear();
  scale_up_.drain(server, sim_.now(), &drained_);
  for (uint64_t cookie : drained_) {
    const Pending done = scale_up_owner_.take(static_cast<uint32_t>(cookie));
    schedule(sim_.now() + jobs_[done.job].scale_up_latency, done);
  }
  arm_scale_up(server, scale_up_.next_drain(server));
}

void GraphRunner::begin_iteration(uint32_t job) {
  const TaskGraph& g = *jobs_[job].graph;
  Running& r = running_[job];
  r.iteration_start = sim_.now();
  r.nodes.assign(g.nodes.size(), {});
  r.left = g.nodes.size();
  for (auto& q : r.queue) q.clear();
  std::fill(r.head.begin(), r.head.end(), 0);
  for (auto& q : r.comm_queue) q.clear();
  std::fill(r.comm_head.begin(), r.comm_head.end(), 0);
  std::fill(r.comm_busy.begin(), r.comm_busy.end(), false);
  for (uint32_t n = 0; n < g.nodes.size(); ++n) {
    r.nodes[n].missing = static_cast<uint32_t>(g.nodes[n].deps.size());
  }
  // Nodes with no dependency start in graph order.
  for (uint32_t n = 0; n < g.nodes.size(); ++n) {
    if (r.nodes[n].missing == 0) ready(job, n);
  }
}

void GraphRunner::ready(uint32_t job, uint32_t node) {
  const GraphJob& spec = jobs_[job];
  const GraphNode& g = spec.graph->nodes[node];
  Running& r = running_[job];
  NodeState& s = r.nodes[node];
  s.began = sim_.now();
  if (g.kind == GraphNode::Kind::kDelay) {
    schedule(sim_.now() + g.duration, {job, node, 0, Ev::kDelayDone});
    return;
  }
  if (g.kind == GraphNode::Kind::kCompute) {
    r.queue[g.rank].push_back(node);
    run_next(job, g.rank);
    return;
  }
  if (g.comm != 0) {
    r.comm_queue[g.comm].push_back(node);
    run_comm(job, g.comm);
    return;
  }
  start_collective(job, node);
}

// The communicator takes its next ready collective, if none of its collectives runs.
void GraphRunner::run_comm(uint32_t job, uint32_t comm) {
  Running& r = running_[job];
  if (r.comm_busy[comm] || r.comm_head[comm] >= r.comm_queue[comm].size()) return;
  const uint32_t node = r.comm_queue[comm][r.comm_head[comm]++];
  r.comm_busy[comm] = true;
  start_collective(job, node);
}

void GraphRunner::start_collective(uint32_t job, uint32_t node) {
  const GraphJob& spec = jobs_[job];
  const GraphNode& g = spec.graph->nodes[node];
  NodeState& s = running_[job].nodes[node];
  s.began = sim_.now();
  CollectiveOptions opt;
  opt.channels = spec.channels;
  if (g.collective == Collective::kSendRecv) {
    opt.send_rank = 0;
    opt.recv_rank = 1;
  }
  s.plan = expand_collective(g.collective, static_cast<int>(g.group.size()), g.bytes, opt);
  s.remaining = s.plan.size();
  s.waiting.assign(s.plan.size(), 0);
  s.dependents.assign(s.plan.size(), {});
  for (uint32_t t = 0; t < s.plan.size(); ++t) {
    s.waiting[t] = static_cast<uint32_t>(s.plan[t].deps.size());
    for (uint32_t d : s.plan[t].deps) s.dependents[d].push_back(t);
  }
  if (s.plan.empty()) {
    node_done(job, node);
    return;
  }
  for (uint32_t t = 0; t < s.plan.size(); ++t) {
    if (s.waiting[t] == 0) schedule(sim_.now() + spec.step_latency, {job, node, t, Ev::kRelease});
  }
}

// The rank's stream takes its next ready compute node, if idle.
void GraphRunner::run_next(uint32_t job, uint32_t rank) {
  Running& r = running_[job];
  if (r.busy[rank] || r.head[rank] >= r.queue[rank].size()) return;
  const uint32_t node = r.queue[rank][r.head[rank]++];
  const GraphNode& g = jobs_[job].graph->nodes[node];
  r.busy[rank] = true;
  r.nodes[node].began = sim_.now();
  stats_[job].busy[rank] += g.duration;
  schedule(sim_.now() + g.duration, {job, node, 0, Ev::kComputeDone});
}

void GraphRunner::release(uint32_t job, uint32_t node, uint32_t transfer) {
  const GraphJob& spec = jobs_[job];
  const GraphNode& g = spec.graph->nodes[node];
  const Transfer& t = running_[job].nodes[node].plan[transfer];
  const uint32_t src = g.group[t.src];
  const uint32_t dst = g.group[t.dst];
  if (spec.ideal_network) {
    schedule(sim_.now(), {job, node, transfer, Ev::kTransferDone});
    return;
  }
  if (spec.scale_up_rate.bps() > 0 && spec.server[src] >= 0 &&
      spec.server[src] == spec.server[dst]) {
    ++stats_[job].scale_up_transfers;
    const Pending done{job, node, transfer, Ev::kTransferDone};
    if (t.bytes <= 0) {
      schedule(sim_.now() + spec.scale_up_latency, done);
      return;
    }
    const uint32_t cookie = scale_up_owner_.put(done);
    const auto server = static_cast<uint32_t>(spec.server[src]);
    scale_up_.add(server, spec.gpus[src], spec.gpus[dst], t.bytes, spec.scale_up_rate, cookie,
                  sim_.now());
    // The server re-shares once per instant: a drain event now, after this instant's other
    // releases (scheduled before it), settles every transfer added meanwhile.
    arm_scale_up(server, sim_.now());
    return;
  }
  ++stats_[job].network_transfers;
  FlowSpec f;
  f.src = spec.gpus[src];
  f.dst = spec.gpus[dst];
  f.bytes = t.bytes;
  f.start = sim_.now();
  f.tclass = spec.tclass;
  f.job = static_cast<int32_t>(job);
  f.op = static_cast<int32_t>(node);
  f.step = t.step;
  f.channel = t.channel;
  f.src_rank = static_cast<int32_t>(src);
  f.dst_rank = static_cast<int32_t>(dst);
  const uint32_t id = flows_.add(f);
  if (owner_.size() <= id) owner_.resize(id + 1);
  owner_[id] = {job, node, transfer, static_cast<uint32_t>(running_[job].iteration)};
  transport_.start(id);
}

void GraphRunner::on_flow_done(uint32_t flow, Time /*at*/) {
  FABSIM_ASSERT(flow < owner_.size());
  const FlowOwner o = owner_[flow];
  FABSIM_ASSERT(static_cast<int>(o.iteration) == running_[o.job].iteration);
  transfer_done(o.job, o.node, o.transfer);
}

void GraphRunner::transfer_done(uint32_t job, uint32_t node, uint32_t transfer) {
  NodeState& s = running_[job].nodes[node];
  for (uint32_t d : s.dependents[transfer]) {
    if (--s.waiting[d] == 0) {
      schedule(sim_.now() + jobs_[job].step_latency, {job, node, d, Ev::kRelease});
    }
  }
  if (--s.remaining == 0) node_done(job, node);
}

void GraphRunner::node_done(uint32_t job, uint32_t node) {
  Running& r = running_[job];
  const GraphNode& g = jobs_[job].graph->nodes[node];
  NodeState& s = r.nodes[node];
  stats_[job].by_category[g.category] += sim_.now() - s.began;
  s.plan.clear();
  s.plan.shrink_to_fit();
  s.dependents.clear();
  s.waiting.clear();
  if (g.kind == GraphNode::Kind::kCollective && g.comm != 0) {
    r.comm_busy[g.comm] = false;
    run_comm(job, g.comm);
  }
  for (uint32_t d : r.dependents[node]) {
    if (--r.nodes[d].missing == 0) ready(job, d);
  }
  if (--r.left > 0) return;
  JobResult& res = results_[job];
  res.end = sim_.now();
  res.iteration_times.push_back(sim_.now() - r.iteration_start);
  if (++r.iteration < jobs_[job].iterations) {
    begin_iteration(job);
    return;
  }
  res.done = true;
  for (Time b : stats_[job].busy) res.max_compute = std::max(res.max_compute, b);
  if (++done_jobs_ == jobs_.size()) sim_.stop();
}

}  // namespace fabsim
