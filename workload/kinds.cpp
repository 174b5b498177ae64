// The shipped workloads' keys and plans: permutation, incast, explicit flows and AI jobs; see
// kind.h.
#include <fmt/format.h>  // messages

#include <algorithm>  // max
#include <limits>     // bounds
#include <map>        // GPUs already placed (overlap warning)
#include <string>     // job names

#include "workload/kind.h"
#include "workload/traffic.h"

namespace fabsim {
namespace {

constexpr int64_t kMaxInt = std::numeric_limits<int32_t>::max();
const Bytes kMaxBytes = Bytes(std::numeric_limits<int64_t>::max() / 16);

struct PatternConfig {
  int64_t bytes = 1000000;
  Time start;
  int senders = 8;        // incast
  uint32_t receiver = 0;  // incast
};

struct FlowListConfig {
  std::vector<FlowSpec> flows;
};

// Where each job came from, for messages: its [[workload.jobs]] entry and the key that lists its
// ranks ("gpus", "ranks" or "placement").
struct JobOrigin {
  size_t entry = 0;
  const char* rank_key = "gpus";
};

struct JobsConfig {
  std::vector<JobSpec> jobs;
  std::vector<JobOrigin> origin;  // per job
};

uint64_t sat_mul(uint64_t a, uint64_t b) {
  return a != 0 && b > UINT64_MAX / a ? UINT64_MAX : a * b;
}
uint64_t sat_add(uint64_t a, uint64_t b) {
  return b > UINT64_MAX - a ? UINT64_MAX : a + b;
}

WorkloadPlan flow_plan(std::vector<FlowSpec> flows) {
  WorkloadPlan p;
  p.flows = std::move(flows);
  return p;
}

// Flows of `n` each of `bytes` planned at the start, the count driven by `key`.
WorkloadDemand flow_demand(uint64_t n, int64_t bytes, std::string key, std::string why) {
  WorkloadDemand d;
  d.flows = n;
  d.planned = n;
  d.bytes = sat_mul(n, static_cast<uint64_t>(bytes));
  d.key = std::move(key);
  d.why = std::move(why);
  return d;
}

class PermutationKind final : public WorkloadKind {
 public:
  std::string_view name() const override { return "permutation"; }
  std::string_view description() const override {
    return "every host sends to a distinct random other host (a derangement)";
  }
  KindConfig load(Section& s, const HostShape& /*hosts*/) const override {
    PatternConfig c;
    c.bytes = s.bytes("bytes", Bytes(c.bytes), Bytes(1), kMaxBytes, "bytes per flow").count();
    c.start = s.time("start", c.start, "start time of every flow");
    return KindConfig::of(c);
  }
  WorkloadPlan plan(const KindConfig& cfg, int hosts, Rng& rng) const override {
    const auto& c = cfg.get<PatternConfig>();
    return flow_plan(permutation_flows(hosts, c.bytes, c.start, rng));
  }
  WorkloadDemand demand(const KindConfig& cfg, int hosts) const override {
    return flow_demand(static_cast<uint64_t>(hosts), cfg.get<PatternConfig>().bytes, "topology",
                       fmt::format("one flow per host, {} hosts", hosts));
  }
  std::vector<WorkloadStart> starts(const KindConfig& cfg) const override {
    return {{"start", cfg.get<PatternConfig>().start}};
  }
};

class IncastKind final : public WorkloadKind {
 public:
  std::string_view name() const override { return "incast"; }
  std::string_view description() const override {
    return "N senders to one receiver, all starting together";
  }
  KindConfig load(Section& s, const HostShape& hosts) const override {
    PatternConfig c;
    c.bytes = s.bytes("bytes", Bytes(c.bytes), Bytes(1), kMaxBytes, "bytes per sender").count();
    c.start = s.time("start", c.start, "start time of every flow");
    c.senders = static_cast<int>(
        s.integer("senders", c.senders, 1, kMaxInt, "number of senders (N of N:1)"));
    c.receiver =
        static_cast<uint32_t>(s.integer("receiver", c.receiver, 0, kMaxInt, "receiving host id"));
    if (s.describing()) return KindConfig::of(c);
    if (c.receiver >= static_cast<uint32_t>(hosts.hosts)) {
      s.fail("receiver", fmt::format("a host id below the topology's {} hosts", hosts.hosts));
    }
    if (c.senders > hosts.hosts - 1) {
      s.fail("senders", fmt::format("at most {} (hosts - 1)", hosts.hosts - 1));
    }
    return KindConfig::of(c);
  }
  WorkloadPlan plan(const KindConfig& cfg, int hosts, Rng& /*rng*/) const override {
    const auto& c = cfg.get<PatternConfig>();
    return flow_plan(incast_flows(hosts, c.senders, c.receiver, c.bytes, c.start));
  }
  WorkloadDemand demand(const KindConfig& cfg, int /*hosts*/) const override {
    const auto& c = cfg.get<PatternConfig>();
    return flow_demand(static_cast<uint64_t>(c.senders), c.bytes, "workload.senders",
                       fmt::format("{} senders", c.senders));
  }
  std::vector<WorkloadStart> starts(const KindConfig& cfg) const override {
    return {{"start", cfg.get<PatternConfig>().start}};
  }
};

void flow_keys(Section& f, FlowSpec& spec) {
  spec.src = static_cast<uint32_t>(f.integer("src", 0, 0, kMaxInt, "source host id"));
  spec.dst = static_cast<uint32_t>(f.integer("dst", 1, 0, kMaxInt, "destination host id"));
  spec.bytes = f.bytes("bytes", Bytes(1000000), Bytes(0), kMaxBytes,
                       "bytes (0: an empty flow, which sends nothing and completes at its start, "
                       "with FCT 0; a run lasts at least until then)")
                   .count();
  spec.start = f.time("start", Time(), "start time");
}

class FlowsKind final : public WorkloadKind {
 public:
  std::string_view name() const override { return "flows"; }
  std::string_view description() const override { return "an explicit list of flows"; }
  KindConfig load(Section& s, const HostShape& hosts) const override {
    FlowListConfig c;
    auto list = s.tables("flows", "explicit flows: [[workload.flows]] src, dst, bytes, start");
    if (s.describing()) {
      Section item = s.describe_child("flows[i]");
      FlowSpec spec;
      flow_keys(item, spec);
      return KindConfig::of(c);
    }
    for (size_t i = 0; i < list.size(); ++i) {
      FlowSpec spec;
      flow_keys(list[i], spec);
      list[i].finish();
      const std::string key = fmt::format("flows[{}]", i);
      if (spec.src >= static_cast<uint32_t>(hosts.hosts)) {
        s.fail(key, fmt::format("src below the topology's {} hosts, got src = {}", hosts.hosts,
                                spec.src));
      }
      if (spec.dst >= static_cast<uint32_t>(hosts.hosts)) {
        s.fail(key, fmt::format("dst below the topology's {} hosts, got dst = {}", hosts.hosts,
                                spec.dst));
      }
      if (spec.src == spec.dst) s.fail(key, "src different from dst");
      c.flows.push_back(spec);
    }
    // No flow, nothing to simulate (issue 14: a run of 0 flows exited 0 and said nothing).
    if (c.flows.empty()) s.fail("flows", "at least one [[workload.flows]] entry");
    return KindConfig::of(c);
  }
  WorkloadPlan plan(const KindConfig& cfg, int /*hosts*/, Rng& /*rng*/) const override {
    return flow_plan(cfg.get<FlowListConfig>().flows);
  }
  WorkloadDemand demand(const KindConfig& cfg, int /*hosts*/) const override {
    const auto& flows = cfg.get<FlowListConfig>().flows;
    WorkloadDemand d = flow_demand(flows.size(), 0, "workload.flows",
                                   fmt::format("{} listed flows", flows.size()));
    for (const auto& f : flows) d.bytes = sat_add(d.bytes, static_cast<uint64_t>(f.bytes));
    return d;
  }
  std::vector<WorkloadStart> starts(const KindConfig& cfg) const override {
    std::vector<WorkloadStart> out;
    const auto& flows = cfg.get<FlowListConfig>().flows;
    for (size_t i = 0; i < flows.size(); ++i)
      out.push_back({fmt::format("flows[{}].start", i), flows[i].start});
    return out;
  }
};

constexpr const char* kCollectiveChoices =
    "\"allreduce_ring\" (or \"allreduce\"), \"allreduce_tree\", \"alltoall\", "
    "\"alltoall_pairwise\", \"allgather\", \"reducescatter\", \"sendrecv\", \"compute\" or "
    "\"$collective\"";

void load_op(Section& o, OpSpec& op, const std::string& job, Bytes tree_chunk) {
  const std::string type = o.text("type", "allreduce_ring",
                                  "allreduce_ring, allreduce_tree, alltoall, alltoall_pairwise, "
                                  "allgather, reducescatter, sendrecv, compute, or $collective");
  if (o.describing()) {
    o.text("bytes", "$size", "collective size S (nccl-tests), or \"$size\" from sweep.sizes");
    o.time("duration", Time(), "compute gap length (type = compute)");
    o.integer("src_rank", 0, 0, kMaxInt, "sendrecv: sending rank");
    o.integer("dst_rank", 1, 0, kMaxInt, "sendrecv: receiving rank");
    return;
  }
  op.compute = type == "compute";
  op.sweep_collective = type == "$collective";
  if (!op.compute && !op.sweep_collective && !parse_collective(type, &op.collective)) {
    o.fail("type", fmt::format("one of {} (job '{}')", kCollectiveChoices, job));
  }
  op.options.tree_chunk = tree_chunk.count();
  if (op.compute) {
    op.duration = o.time("duration", Time(), "compute gap length");
    return;
  }
  if (!o.has("bytes")) {
    o.fail("bytes",
           fmt::format("a collective size such as \"64MiB\" or \"$size\" (job '{}')", job));
  }
  if (o.is_text("bytes", "$size")) {
    op.sweep_bytes = true;
    o.text("bytes", "$size", "collective size");
  } else {
    op.bytes = o.bytes("bytes", Bytes(0), Bytes(0), kMaxBytes, "collective size S").count();
    if (op.bytes == 0) o.fail("bytes", fmt::format("a size above 0 (job '{}')", job));
  }
  if (op.collective == Collective::kSendRecv || op.sweep_collective) {
    op.options.send_rank =
        static_cast<uint32_t>(o.integer("src_rank", 0, 0, kMaxInt, "sendrecv: sending rank"));
    op.options.recv_rank =
        static_cast<uint32_t>(o.integer("dst_rank", 1, 0, kMaxInt, "sendrecv: receiving rank"));
  }
}

// One [[workload.jobs]] entry as written: its replicas are placed by place_replica().
struct JobEntry {
  std::string name;
  int count = 1;
  std::vector<int64_t> gpus;  // placement = "list"
  std::string placement;
  int gpu = 0;    // gpu_of_each_server: replica 0's GPU index
  int first = 0;  // block: replica 0's first GPU
  int ranks = 2;  // block: ranks per replica
  int iterations = 1;
  Time start;
  int channels = 0;  // 0: NCCL's count for the NIC rate (nccl_net_channels)
  std::vector<OpSpec> ops;
};

constexpr const char* kChannelsDoc =
    "NCCL channels per collective (REFERENCE.md §8.8): independent rings/trees, each on a "
    "contiguous share of S over its own connections (own source port, own ECMP path); 0 = "
    "NCCL's count for a network peer, max(1 NIC, ceil(nic_rate / 14 GB/s)) rounded up to a power "
    "of two: 1 at 100G, 2 at 200G, 4 at 400G [UNVERIFIED for rings and trees: NCCL's ring count "
    "comes from its topology search]";

constexpr const char* kPlacementDoc =
    "list: `gpus`; gpu_of_each_server: GPU `gpu` + k of every server (seed 002: job k = GPU k of "
    "each server); block: `ranks` consecutive GPUs from `first` + k x ranks";

// Declares (describe mode) or reads one entry's keys; `index` names an unnamed job, `channels`
// is workload.channels.
JobEntry read_job(Section& j, size_t index, Bytes tree_chunk, int channels) {
  JobEntry e;
  e.name =
      j.text("name", fmt::format("job{}", index), "job name (with count > 1: name0, name1, ...)");
  e.count = static_cast<int>(j.integer(
      "count", e.count, 1, 4096, "replicas of this job; replica k shifts its placement by k"));
  e.gpus = j.integers("gpus", {}, 0, kMaxInt, "explicit rank -> GPU (host id) list");
  const bool listed = !e.gpus.empty() || j.has("gpus");
  e.placement = j.choice("placement", j.describing() || listed ? "list" : "gpu_of_each_server",
                         {"list", "gpu_of_each_server", "block"}, kPlacementDoc);
  e.gpu = static_cast<int>(
      j.integer("gpu", e.gpu, 0, kMaxInt, "gpu_of_each_server: GPU index of replica 0"));
  e.first =
      static_cast<int>(j.integer("first", e.first, 0, kMaxInt, "block: first GPU of replica 0"));
  e.ranks = static_cast<int>(j.integer("ranks", e.ranks, 1, kMaxInt, "block: ranks per job"));
  e.iterations =
      static_cast<int>(j.integer("iterations", e.iterations, 1, 1 << 20, "times the op list runs"));
  e.start = j.time("start", e.start, "start time");
  e.channels = static_cast<int>(j.integer("channels", channels, 0, kMaxChannels,
                                          "this job's NCCL channels (default: workload.channels)"));
  if (j.describing()) {
    Section o = j.describe_child("ops[i]");
    OpSpec op;
    load_op(o, op, "", tree_chunk);
    return e;
  }
  auto ops = j.tables("ops", "operations");
  if (ops.empty())
    j.fail("ops", fmt::format("at least one [[workload.jobs.ops]] (job '{}')", e.name));
  for (auto& o : ops) {
    OpSpec op;
    load_op(o, op, e.name, tree_chunk);
    o.finish();
    e.ops.push_back(op);
  }
  if (e.placement == "list" && e.gpus.empty()) {
    j.fail("gpus", fmt::format("a non-empty GPU list (job '{}' is empty)", e.name));
  }
  // A placement key of another placement would be read and ignored: the job would run on
  // other GPUs than asked (ranks = 4 under "gpu_of_each_server" ran on every server).
  for (const auto& [key, placement] : {std::pair{"first", "block"}, std::pair{"ranks", "block"},
                                       std::pair{"gpu", "gpu_of_each_server"}}) {
    if (e.placement != placement && j.has(key)) {
      j.fail(key, fmt::format("placement = \"{}\" for it to apply (job '{}' has placement = "
                              "\"{}\")",
                              placement, e.name, e.placement));
    }
  }
  if (e.placement != "list" && !e.gpus.empty()) {
    j.fail("gpus",
           fmt::format("no GPU list with placement = \"{}\" (job '{}')", e.placement, e.name));
  }
  if (e.placement == "list" && e.count > 1) {
    j.fail("count", fmt::format("1 with an explicit GPU list (job '{}'); use placement = "
                                "\"gpu_of_each_server\" or \"block\" for replicas",
                                e.name));
  }
  return e;
}

// The GPUs of replica `k` of entry `e`.
std::vector<uint32_t> place_replica(Section& j, const JobEntry& e, int k, const HostShape& topo,
                                    const std::string& job) {
  std::vector<uint32_t> gpus;
  if (e.placement == "list") {
    for (auto g : e.gpus) gpus.push_back(static_cast<uint32_t>(g));
  } else if (e.placement == "gpu_of_each_server") {
    if (topo.servers == 0) {
      j.fail("placement", fmt::format("\"list\" or \"block\" on this topology (job '{}': it "
                                      "has no servers)",
                                      e.name));
    }
    const int g = e.gpu + k;
    if (g >= topo.gpus_per_server) {
      j.fail("gpu", fmt::format("a GPU index below topology.gpus_per_server = {} (job '{}' replica "
                                "{} needs GPU {})",
                                topo.gpus_per_server, job, k, g));
    }
    for (int srv = 0; srv < topo.servers; ++srv) {
      gpus.push_back(static_cast<uint32_t>(srv * topo.gpus_per_server + g));
    }
  } else {
    // In 64 bits: first and ranks each reach 2^31 - 1. A block past the last GPU is refused
    // before its ranks are listed.
    const int64_t last = int64_t{e.first} + int64_t{k + 1} * e.ranks - 1;
    if (last >= topo.hosts) {
      j.fail("placement", fmt::format("GPUs below the topology's {} (job '{}' maps a rank to GPU "
                                      "{}, which does not exist)",
                                      topo.hosts, job, last));
    }
    for (int r = 0; r < e.ranks; ++r)
      gpus.push_back(static_cast<uint32_t>(e.first + k * e.ranks + r));
  }
  return gpus;
}

// A replica's GPUs exist and are distinct, and its sendrecv ops name two of its ranks.
void check_replica(Section& j, const JobEntry& e, const JobSpec& job, int hosts) {
  std::vector<bool> used(static_cast<size_t>(hosts), false);
  for (auto g : job.gpus) {
    if (g >= static_cast<uint32_t>(hosts)) {
      j.fail(e.placement == "list" ? "gpus" : "placement",
             fmt::format("GPUs below the topology's {} (job '{}' maps a rank to GPU {}, which "
                         "does not exist)",
                         hosts, job.name, g));
    }
    if (used[g]) {
      j.fail("gpus", fmt::format("distinct GPUs (job '{}' maps two ranks to GPU {})", job.name, g));
    }
    used[g] = true;
  }
  if (job.gpus.size() < 2) {
    j.fail("gpus", fmt::format("at least 2 ranks (job '{}' has {})", job.name, job.gpus.size()));
  }
  for (const auto& op : e.ops) {
    const bool sendrecv = op.collective == Collective::kSendRecv || op.sweep_collective;
    const bool bad = op.options.send_rank >= job.gpus.size() ||
                     op.options.recv_rank >= job.gpus.size() ||
                     op.options.send_rank == op.options.recv_rank;
    if (!op.compute && sendrecv && bad) {
      j.fail("ops", fmt::format("sendrecv ranks that differ and are below {} (job '{}')",
                                job.gpus.size(), job.name));
    }
  }
}

void load_jobs(Section& s, JobsConfig& w, const HostShape& topo) {
  const Time step_latency =
      s.time("step_latency", Time(), "software latency before each transfer of a collective step");
  const Bytes tree_chunk = s.bytes("tree_chunk", Bytes(1 << 20), Bytes(1), kMaxBytes,
                                   "pipelined chunk of the double-binary-tree AllReduce "
                                   "[UNVERIFIED: NCCL's size varies]");
  const int channels = static_cast<int>(s.integer("channels", 0, 0, kMaxChannels, kChannelsDoc));
  auto list = s.tables("jobs", "the jobs: [[workload.jobs]] with [[workload.jobs.ops]]");
  if (s.describing()) {
    Section j = s.describe_child("jobs[i]");
    read_job(j, 0, tree_chunk, channels);
    return;
  }
  if (list.empty()) s.fail("jobs", "at least one [[workload.jobs]] entry");
  std::map<uint32_t, std::string> owner;  // GPU -> the first job placed on it
  for (size_t i = 0; i < list.size(); ++i) {
    Section& j = list[i];
    const JobEntry e = read_job(j, i, tree_chunk, channels);
    for (int k = 0; k < e.count; ++k) {
      JobSpec job;
      job.name = e.count > 1 ? fmt::format("{}{}", e.name, k) : e.name;
      job.gpus = place_replica(j, e, k, topo, job.name);
      check_replica(j, e, job, topo.hosts);
      // Jobs run on disjoint GPUs (DESIGN.md "Workloads"); two on one GPU share its NIC with
      // nothing to say so in the results. Runnable, so a warning: the first shared GPU.
      for (const uint32_t g : job.gpus) {
        const auto [it, fresh] = owner.try_emplace(g, job.name);
        if (!fresh) {
          j.warn(e.placement == "list"    ? "gpus"
                 : e.placement == "block" ? "first"
                                          : "placement",
                 fmt::format("job '{}' shares GPU {} with job '{}' (jobs are meant to run on "
                             "disjoint GPUs; they share its NIC)",
                             job.name, g, it->second));
          break;
        }
      }
      job.ops = e.ops;
      for (auto& op : job.ops)
        op.options.channels = e.channels > 0 ? e.channels : nccl_net_channels(topo.nic_rate);
      job.iterations = e.iterations;
      job.start = e.start;
      job.step_latency = step_latency;
      w.jobs.push_back(std::move(job));
      w.origin.push_back({i, e.placement == "list"    ? "gpus"
                             : e.placement == "block" ? "ranks"
                                                      : "placement"});
    }
    j.finish();
  }
}

class JobsKind final : public WorkloadKind {
 public:
  std::string_view name() const override { return "jobs"; }
  std::string_view description() const override {
    return "AI jobs: ranks on GPUs running collectives and compute gaps, optionally for several "
           "iterations; several jobs at once";
  }
  KindConfig load(Section& s, const HostShape& hosts) const override {
    JobsConfig c;
    load_jobs(s, c, hosts);
    return KindConfig::of(c);
  }
  WorkloadPlan plan(const KindConfig& cfg, int /*hosts*/, Rng& /*rng*/) const override {
    WorkloadPlan p;
    p.jobs = cfg.get<JobsConfig>().jobs;
    return p;
  }
  WorkloadDemand demand(const KindConfig& cfg, int /*hosts*/) const override;
  std::vector<WorkloadStart> starts(const KindConfig& cfg) const override {
    const auto& c = cfg.get<JobsConfig>();
    std::vector<WorkloadStart> out;
    for (size_t j = 0; j < c.jobs.size(); ++j)
      out.push_back({fmt::format("jobs[{}].start", c.origin[j].entry), c.jobs[j].start});
    return out;
  }
  SweepUse sweep_use(const KindConfig& cfg) const override {
    SweepUse u;
    for (const auto& j : cfg.get<JobsConfig>().jobs) {
      for (const auto& op : j.ops) {
        u.size = u.size || op.sweep_bytes;
        u.collective = u.collective || op.sweep_collective;
      }
    }
    return u;
  }
  void instantiate(KindConfig& cfg, const Collective* collective,
                   const int64_t* size) const override {
    for (auto& j : cfg.get<JobsConfig>().jobs) {
      for (auto& op : j.ops) {
        if (op.sweep_collective && collective != nullptr) {
          op.collective = *collective;
          op.sweep_collective = false;
        }
        if (op.sweep_bytes && size != nullptr) {
          op.bytes = *size;
          op.sweep_bytes = false;
        }
      }
    }
  }
};

// Every op instance of every job becomes flows (one per transfer, kept for the results); each
// job holds the plan of one op at a time. The key named is the largest factor of the largest
// job: its iterations, the tree's chunks per op, or its ranks (transfers grow with n^2).
WorkloadDemand JobsKind::demand(const KindConfig& cfg, int /*hosts*/) const {
  const auto& c = cfg.get<JobsConfig>();
  WorkloadDemand d;
  uint64_t largest = 0;
  for (size_t j = 0; j < c.jobs.size(); ++j) {
    const JobSpec& job = c.jobs[j];
    const int n = static_cast<int>(job.gpus.size());
    uint64_t per_iteration = 0;
    uint64_t bytes = 0;
    CollectiveSize peak;
    const OpSpec* peak_op = nullptr;
    for (const auto& op : job.ops) {
      if (op.compute) continue;
      const CollectiveSize s = collective_size(op.collective, n, op.bytes, op.options);
      per_iteration = sat_add(per_iteration, s.transfers);
      bytes = sat_add(bytes, s.bytes);
      if (peak_op == nullptr || s.transfers > peak.transfers) {
        peak = s;
        peak_op = &op;
      }
    }
    const auto iterations = static_cast<uint64_t>(job.iterations);
    const uint64_t flows = sat_mul(per_iteration, iterations);
    d.flows = sat_add(d.flows, flows);
    d.bytes = sat_add(d.bytes, sat_mul(bytes, iterations));
    d.plan_transfers = sat_add(d.plan_transfers, peak.transfers);
    d.plan_deps = sat_add(d.plan_deps, peak.deps);
    d.ranks = sat_add(d.ranks, static_cast<uint64_t>(n));
    if (peak_op == nullptr || (!d.key.empty() && flows <= largest)) continue;
    largest = flows;
    const auto entry = fmt::format("workload.jobs[{}]", c.origin[j].entry);
    uint64_t chunks = 1;
    if (peak_op->collective == Collective::kAllReduceTree) {
      const auto chunk = static_cast<uint64_t>(std::max<int64_t>(peak_op->options.tree_chunk, 1));
      chunks = (static_cast<uint64_t>(peak_op->bytes) / 2 + chunk - 1) / chunk;
    }
    if (iterations > chunks && iterations > static_cast<uint64_t>(n)) {
      d.key = entry + ".iterations";
    } else if (chunks > static_cast<uint64_t>(n)) {
      d.key = "workload.tree_chunk";
    } else {
      d.key = fmt::format("{}.{}", entry, c.origin[j].rank_key);
    }
    d.why = fmt::format("job '{}': {} of {} B over {} ranks, {} transfers per iteration, {} "
                        "iteration(s)",
                        job.name, collective_name(peak_op->collective), peak_op->bytes, n,
                        per_iteration, iterations);
  }
  return d;
}

}  // namespace

const char* collective_choices() {
  return kCollectiveChoices;
}

std::unique_ptr<WorkloadKind> make_permutation_kind() {
  return std::make_unique<PermutationKind>();
}
std::unique_ptr<WorkloadKind> make_incast_kind() {
  return std::make_unique<IncastKind>();
}
std::unique_ptr<WorkloadKind> make_flows_kind() {
  return std::make_unique<FlowsKind>();
}
std::unique_ptr<WorkloadKind> make_jobs_kind() {
  return std::make_unique<JobsKind>();
}

}  // namespace fabsim
