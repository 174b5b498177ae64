// Scenario loading, validation and the parameter catalogue; see scenario.h.
#include "scenario/scenario.h"

#include <fmt/format.h>  // messages

#include <cstdio>   // sscanf (cable names)
#include <fstream>  // file existence check
#include <limits>   // numeric bounds

namespace fabsim {
namespace {

constexpr int64_t kMaxInt = std::numeric_limits<int32_t>::max();
const Bytes kMaxBytes = Bytes(std::numeric_limits<int64_t>::max() / 16);

// ---- topology kinds -------------------------------------------------------------------------

void load_leaf_spine(Section& s, TopologyConfig& t) {
  auto& c = t.leaf_spine;
  c.servers = static_cast<int>(s.integer("servers", 4, 1, 1 << 20, "servers in the cluster"));
  c.gpus_per_server = static_cast<int>(
      s.integer("gpus_per_server", 8, 1, 1024, "GPUs per server; each GPU has its own NIC port"));
  c.servers_per_leaf = static_cast<int>(s.integer(
      "servers_per_leaf", 1, 1, 1 << 20, "servers whose NICs share one leaf (server attach)"));
  const auto attach = s.choice("attach", "server", {"server", "rail"},
                               "server: all NICs of a server on one leaf (seed 002 §3.1); rail: "
                               "GPU k of every server on rail leaf k");
  c.attach = attach == "rail" ? Attach::kRail : Attach::kServer;
  c.spines = static_cast<int>(s.integer("spines", 4, 1, 4096, "spine switches"));
  c.links_per_spine = static_cast<int>(
      s.integer("links_per_spine", 1, 1, 64, "parallel links between each leaf-spine pair"));
  c.nic_rate = s.rate("nic_rate", Rate::gbps(100), "rate of each GPU's NIC port and leaf downlink");
  c.uplink_rate = s.rate("uplink_rate", Rate::gbps(400), "rate of each leaf-spine link");
  c.host_link_delay = s.time("host_link_delay", Time::us(1), "propagation delay NIC-leaf");
  c.fabric_link_delay = s.time("fabric_link_delay", Time::us(1), "propagation delay leaf-spine");
  for (const auto& d : s.strings("spine_link_delays",
                                 "per-spine leaf-spine delays (unequal paths); empty = all "
                                 "fabric_link_delay")) {
    const auto parsed = parse_time(d);
    if (!parsed.ok()) s.fail("spine_link_delays", "a list of durations such as [\"1us\", \"2us\"]");
    c.spine_delays.push_back(parsed.value);
  }
  if (s.describing()) return;
  if (!c.spine_delays.empty() && static_cast<int>(c.spine_delays.size()) != c.spines) {
    s.fail("spine_link_delays", fmt::format("one delay per spine ({})", c.spines));
  }
  if (c.servers_per_leaf > c.servers) {
    s.fail("servers_per_leaf", fmt::format("at most topology.servers = {}", c.servers));
  }
  const int hosts_per_leaf = c.attach == Attach::kServer ? c.servers_per_leaf * c.gpus_per_server
                                                         : c.servers_per_leaf;
  const int64_t leaf_ports =
      hosts_per_leaf + static_cast<int64_t>(c.spines) * c.links_per_spine;
  if (leaf_ports > 65535) {
    s.fail("spines", fmt::format("a leaf port count (hosts per leaf {} + spines x links_per_spine) "
                                 "of at most 65535, got {}", hosts_per_leaf, leaf_ports));
  }
  const int groups = (c.servers + c.servers_per_leaf - 1) / c.servers_per_leaf;
  if (c.servers % c.servers_per_leaf != 0) {
    s.fail("servers", fmt::format("a multiple of topology.servers_per_leaf = {} (every leaf "
                                  "holds the same number of servers)", c.servers_per_leaf));
  }
  const int leaves = c.attach == Attach::kServer ? groups : groups * c.gpus_per_server;
  if (static_cast<int64_t>(leaves) * c.links_per_spine > 65535) {
    s.fail("links_per_spine", "a spine port count (leaves x links_per_spine) of at most 65535");
  }
}

void load_single_switch(Section& s, TopologyConfig& t) {
  auto& c = t.single_switch;
  c.hosts = static_cast<int>(s.integer("hosts", 16, 2, 65535, "hosts on one non-blocking switch"));
  c.nic_rate = s.rate("nic_rate", Rate::gbps(100), "rate of each host link");
  c.host_link_delay = s.time("host_link_delay", Time::us(1), "propagation delay host-switch");
}

struct TopologyKind {
  const char* name;
  const char* description;
  void (*load)(Section&, TopologyConfig&);
};
constexpr TopologyKind kTopologies[] = {
    {"leaf_spine", "two-tier leaf-spine (folded Clos); every GPU has its own NIC port",
     load_leaf_spine},
    {"single_switch", "all hosts on one non-blocking switch (closed-form checks)",
     load_single_switch},
};

// ---- transports -----------------------------------------------------------------------------

void load_datagram(Section& s, TransportConfig& t) {
  t.datagram.rate = s.rate("rate", Rate(0), "sending rate of each flow", "the NIC line rate");
  t.datagram.ecn_capable = s.boolean("ecn_capable", true, "send packets as ECT so switches mark CE");
  t.datagram.payload_min = s.bytes("payload_min", Bytes(0), Bytes(0), Bytes(65536),
                                   "> 0: payload of each packet uniform in [payload_min, "
                                   "payload] (varied packet sizes)").count();
  if (!s.describing() && t.datagram.payload_min > t.wire.payload) {
    s.fail("payload_min", "a size at most transport.payload");
  }
}

void load_dcqcn(Section& d, DcqcnConfig& c, Rate line) {
  c.enabled = d.boolean("enabled", true, "DCQCN rate control (off = always line rate)");
  const auto preset = d.choice("preset", "paper", {"paper", "connectx"},
                               "parameter set: paper (DCQCN SIGCOMM'15 / htsim) or connectx "
                               "(HPCC ns-3 mlx mode); the keys below override it");
  const bool enabled = c.enabled;
  c = preset == "connectx" ? DcqcnConfig::connectx(line) : DcqcnConfig::paper();
  c.enabled = enabled;
  const bool cx = preset == "connectx";
  c.g = d.real("g", c.g, 0.0, 1.0, "alpha EWMA gain");
  c.initial_alpha = d.real("initial_alpha", c.initial_alpha, 0.0, 1.0, "alpha at start");
  c.alpha_period = d.time("alpha_period", c.alpha_period,
                          cx ? "alpha update period t_alpha" : "alpha decay period K");
  c.increase_period = d.time("increase_period", c.increase_period,
                             cx ? "rate increase timer t_inc (RP_TIMER)" : "rate increase timer T");
  c.decrease_period = d.time("decrease_period", c.decrease_period,
                             "rate decrease check t_dec (connectx only)");
  c.byte_counter = d.bytes("byte_counter", Bytes(c.byte_counter), Bytes(0), kMaxBytes,
                           "byte counter B (paper only; 0 = off)").count();
  c.fast_recovery_steps = static_cast<int>(
      d.integer("fast_recovery_steps", c.fast_recovery_steps, 0, 1000, "F"));
  c.rate_ai = d.rate("rate_ai", c.rate_ai, "additive increase step R_AI");
  c.rate_hai = d.rate("rate_hai", c.rate_hai,
                      "hyper increase step R_HAI [UNVERIFIED for the paper set: 10 x R_AI]");
  c.min_rate = d.rate("min_rate", c.min_rate, "lowest rate a cut can reach");
  c.rate_on_first_cnp = d.real("rate_on_first_cnp", c.rate_on_first_cnp, 0.0, 1.0,
                               "connectx: RC x this at the first CNP");
  c.clamp_target = d.boolean("clamp_target", c.clamp_target, "connectx: RT <- RC at every cut");
  c.cnp_interval = d.time("cnp_interval", c.cnp_interval,
                          "notification point: at most one CNP per QP per interval");
  if (!d.describing()) {
    if (c.alpha_period.ps() <= 0) d.fail("alpha_period", "a positive duration");
    if (c.increase_period.ps() <= 0) d.fail("increase_period", "a positive duration");
    if (c.decrease_period.ps() <= 0) d.fail("decrease_period", "a positive duration");
    if (c.min_rate > line) d.fail("min_rate", "a rate at most the NIC rate");
  }
}

void load_roce(Section& s, TransportConfig& t, Rate line) {
  auto& r = t.roce;
  r.qps_per_connection = static_cast<int>(s.integer(
      "qps_per_connection", 1, 1, 256,
      "queue pairs per host pair (NCCL opens several); a message is split evenly over them"));
  r.ack_every_packets = static_cast<int>(
      s.integer("ack_every_packets", 1, 1, 1 << 20, "ACK coalescing: one ACK per N packets"));
  r.ack_every_bytes = s.bytes("ack_every_bytes", Bytes(0), Bytes(0), kMaxBytes,
                              "ACK coalescing by bytes (0 = off); a message's end is always ACKed")
                          .count();
  r.nack_interval = s.time("nack_interval", Time::us(500),
                           "no repeated NACK for the same PSN within this time");
  r.rto_base = s.time("rto_base", Time::ps(4'096'000), "IB timeout unit (4.096 us)");
  r.rto_exponent = static_cast<int>(s.integer(
      "rto_exponent", 14, 0, 31, "retransmission timeout = rto_base x 2^rto_exponent"));
  r.retry_limit = static_cast<int>(
      s.integer("retry_limit", 7, 0, 1000, "consecutive timeouts before the QP fails"));
  r.rto_backoff = s.boolean("rto_backoff", false, "double the timeout after each expiry");
  r.max_inflight = s.bytes("max_inflight", Bytes(0), Bytes(0), kMaxBytes,
                           "outstanding bytes per QP (0 = unlimited)").count();
  auto d = s.table("dcqcn", "DCQCN congestion control, REFERENCE.md §1.5-1.6");
  load_dcqcn(d, r.dcqcn, line);
  d.finish();
}

struct TransportKind {
  const char* name;
  const char* description;
  void (*load)(Section&, TransportConfig&, Rate line);
};
void load_datagram_kind(Section& s, TransportConfig& t, Rate /*line*/) { load_datagram(s, t); }
constexpr TransportKind kTransports[] = {
    {"datagram",
     "fixed-rate datagrams: no congestion control, no retransmission; numbered so the receiver "
     "counts loss and reordering",
     load_datagram_kind},
    {"roce",
     "RoCEv2 RC queue pairs: DCQCN, coalesced ACKs, go-back-N with NACK, IB-style timeout",
     load_roce},
};

void load_wire(Section& s, TransportConfig& t) {
  t.wire.payload = s.bytes("payload", Bytes(4096), Bytes(1), Bytes(65536),
                           "payload bytes per data packet (MTU payload)").count();
  t.wire.header_bytes = s.integer("header_bytes", 62, 0, 1024,
                                  "header bytes per packet: Ethernet 14 + FCS 4 + IPv4 20 + UDP 8 "
                                  "+ BTH 12 + ICRC 4");
  t.wire.control_bytes =
      s.integer("control_bytes", 64, 64, 1500, "frame bytes of ACK, NACK and CNP packets");
  t.tclass = static_cast<uint8_t>(
      s.integer("tclass", 3, 0, 6, "traffic class of data packets (7 is the control class)"));
}

// ---- policies and workloads -----------------------------------------------------------------

struct PolicyKind {
  const char* name;
  const char* description;
};
constexpr PolicyKind kPolicies[] = {
    {"ecmp", "per-flow ECMP: 5-tuple hash with a per-switch seed derived from the run's seed"},
    {"spray", "per-packet spraying: data packets round robin over the equal-cost ports"},
    {"flowlet", "flowlet switching: a new random path after a gap of routing.flowlet_gap"},
    {"gse (fabric.kind)", "GSE PKTC: containers sprayed over the uplinks, reordered at the "
                          "destination leaf (docs/gse.md)"},
};

void load_permutation(Section& s, WorkloadConfig& w, const TopologyConfig& /*topo*/) {
  w.bytes = s.bytes("bytes", Bytes(1000000), Bytes(1), kMaxBytes, "bytes per flow").count();
  w.start = s.time("start", Time(), "start time of every flow");
}
void load_incast(Section& s, WorkloadConfig& w, const TopologyConfig& /*topo*/) {
  w.bytes = s.bytes("bytes", Bytes(1000000), Bytes(1), kMaxBytes, "bytes per sender").count();
  w.start = s.time("start", Time(), "start time of every flow");
  w.senders = static_cast<int>(s.integer("senders", 8, 1, kMaxInt, "number of senders (N of N:1)"));
  w.receiver = static_cast<uint32_t>(s.integer("receiver", 0, 0, kMaxInt, "receiving host id"));
}
void load_flow_list(Section& s, WorkloadConfig& w, const TopologyConfig& /*topo*/) {
  auto list = s.tables("flows", "explicit flows: [[workload.flows]] src, dst, bytes, start");
  for (auto& f : list) {
    FlowSpec spec;
    spec.src = static_cast<uint32_t>(f.integer("src", 0, 0, kMaxInt, "source host id"));
    spec.dst = static_cast<uint32_t>(f.integer("dst", 1, 0, kMaxInt, "destination host id"));
    spec.bytes = f.bytes("bytes", Bytes(1000000), Bytes(0), kMaxBytes, "bytes").count();
    spec.start = f.time("start", Time(), "start time");
    f.finish();
    w.flows.push_back(spec);
  }
}

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
    o.fail("bytes", fmt::format("a collective size such as \"64MiB\" or \"$size\" (job '{}')", job));
  }
  if (o.is_text("bytes", "$size")) {
    op.sweep_bytes = true;
    o.text("bytes", "$size", "collective size");
  } else {
    op.bytes = o.bytes("bytes", Bytes(0), Bytes(0), kMaxBytes, "collective size S").count();
    if (op.bytes == 0) o.fail("bytes", fmt::format("a size above 0 (job '{}')", job));
  }
  if (op.collective == Collective::kSendRecv || op.sweep_collective) {
    op.options.send_rank = static_cast<uint32_t>(o.integer("src_rank", 0, 0, kMaxInt, "sendrecv: sending rank"));
    op.options.recv_rank = static_cast<uint32_t>(o.integer("dst_rank", 1, 0, kMaxInt, "sendrecv: receiving rank"));
  }
}

void load_jobs(Section& s, WorkloadConfig& w, const TopologyConfig& topo) {
  const Time step_latency = s.time("step_latency", Time(),
                                   "software latency before each transfer of a collective step");
  const Bytes tree_chunk = s.bytes("tree_chunk", Bytes(1 << 20), Bytes(1), kMaxBytes,
                                   "pipelined chunk of the double-binary-tree AllReduce "
                                   "[UNVERIFIED: NCCL's size varies]");
  auto list = s.tables("jobs", "the jobs: [[workload.jobs]] with [[workload.jobs.ops]]");
  if (s.describing()) {
    Section j = s.describe_child("jobs[i]");
    j.text("name", "job", "job name (with count > 1: name0, name1, ...)");
    j.integer("count", 1, 1, 4096, "replicas of this job; replica k shifts its placement by k");
    j.integers("gpus", {}, 0, kMaxInt, "explicit rank -> GPU (host id) list");
    j.choice("placement", "list", {"list", "gpu_of_each_server", "block"},
             "list: `gpus`; gpu_of_each_server: GPU `gpu` + k of every server (seed 002: job k "
             "= GPU k of each server); block: `ranks` consecutive GPUs from `first` + k x ranks");
    j.integer("gpu", 0, 0, kMaxInt, "gpu_of_each_server: GPU index of replica 0");
    j.integer("first", 0, 0, kMaxInt, "block: first GPU of replica 0");
    j.integer("ranks", 2, 1, kMaxInt, "block: ranks per job");
    j.integer("iterations", 1, 1, 1 << 20, "times the op list runs");
    j.time("start", Time(), "start time");
    Section o = j.describe_child("ops[i]");
    OpSpec op;
    load_op(o, op, "", tree_chunk);
    return;
  }
  const int hosts = topo.hosts();
  if (list.empty()) s.fail("jobs", "at least one [[workload.jobs]] entry");
  for (size_t i = 0; i < list.size(); ++i) {
    Section& j = list[i];
    const std::string name = j.text("name", fmt::format("job{}", i), "job name");
    const int count = static_cast<int>(j.integer("count", 1, 1, 4096, "replicas"));
    const auto explicit_gpus = j.integers("gpus", {}, 0, kMaxInt, "rank -> GPU list");
    const std::string placement =
        j.choice("placement", explicit_gpus.empty() && !j.has("gpus") ? "gpu_of_each_server" : "list",
                 {"list", "gpu_of_each_server", "block"}, "placement");
    const int gpu = static_cast<int>(j.integer("gpu", 0, 0, kMaxInt, "GPU index"));
    const int first = static_cast<int>(j.integer("first", 0, 0, kMaxInt, "first GPU"));
    const int ranks = static_cast<int>(j.integer("ranks", 2, 1, kMaxInt, "ranks per job"));
    const int iterations = static_cast<int>(j.integer("iterations", 1, 1, 1 << 20, "iterations"));
    const Time start = j.time("start", Time(), "start time");
    auto ops = j.tables("ops", "operations");
    if (ops.empty()) j.fail("ops", fmt::format("at least one [[workload.jobs.ops]] (job '{}')", name));
    std::vector<OpSpec> specs;
    for (auto& o : ops) {
      OpSpec op;
      load_op(o, op, name, tree_chunk);
      o.finish();
      specs.push_back(op);
    }
    if (placement == "list" && explicit_gpus.empty()) {
      j.fail("gpus", fmt::format("a non-empty GPU list (job '{}' is empty)", name));
    }
    if (placement != "list" && !explicit_gpus.empty()) {
      j.fail("gpus", fmt::format("no GPU list with placement = \"{}\" (job '{}')", placement, name));
    }
    for (int k = 0; k < count; ++k) {
      JobSpec job;
      job.name = count > 1 ? fmt::format("{}{}", name, k) : name;
      if (placement == "list") {
        if (count > 1) {
          j.fail("count", fmt::format("1 with an explicit GPU list (job '{}'); use placement = "
                                      "\"gpu_of_each_server\" or \"block\" for replicas", name));
        }
        for (auto g : explicit_gpus) job.gpus.push_back(static_cast<uint32_t>(g));
      } else if (placement == "gpu_of_each_server") {
        if (topo.kind != "leaf_spine") {
          j.fail("placement", fmt::format("\"list\" or \"block\" on a {} topology (job '{}': "
                                          "it has no servers)", topo.kind, name));
        }
        const int g = gpu + k;
        if (g >= topo.leaf_spine.gpus_per_server) {
          j.fail("gpu", fmt::format("a GPU index below topology.gpus_per_server = {} (job '{}' "
                                    "replica {} needs GPU {})",
                                    topo.leaf_spine.gpus_per_server, job.name, k, g));
        }
        for (int srv = 0; srv < topo.leaf_spine.servers; ++srv) {
          job.gpus.push_back(static_cast<uint32_t>(srv * topo.leaf_spine.gpus_per_server + g));
        }
      } else {
        for (int r = 0; r < ranks; ++r) job.gpus.push_back(static_cast<uint32_t>(first + k * ranks + r));
      }
      std::vector<bool> used(static_cast<size_t>(hosts), false);
      for (auto g : job.gpus) {
        if (g >= static_cast<uint32_t>(hosts)) {
          j.fail(placement == "list" ? "gpus" : "placement",
                 fmt::format("GPUs below the topology's {} (job '{}' maps a rank to GPU {}, which "
                             "does not exist)", hosts, job.name, g));
        }
        if (used[g]) {
          j.fail("gpus", fmt::format("distinct GPUs (job '{}' maps two ranks to GPU {})", job.name, g));
        }
        used[g] = true;
      }
      if (job.gpus.size() < 2) {
        j.fail("gpus", fmt::format("at least 2 ranks (job '{}' has {})", job.name, job.gpus.size()));
      }
      for (const auto& op : specs) {
        if (!op.compute && (op.options.send_rank >= job.gpus.size() ||
                            op.options.recv_rank >= job.gpus.size() ||
                            op.options.send_rank == op.options.recv_rank) &&
            (op.collective == Collective::kSendRecv || op.sweep_collective)) {
          j.fail("ops", fmt::format("sendrecv ranks that differ and are below {} (job '{}')",
                                    job.gpus.size(), job.name));
        }
      }
      job.ops = specs;
      job.iterations = iterations;
      job.start = start;
      job.step_latency = step_latency;
      w.jobs.push_back(std::move(job));
    }
    j.finish();
  }
}

struct WorkloadKind {
  const char* name;
  const char* description;
  void (*load)(Section&, WorkloadConfig&, const TopologyConfig&);
};
constexpr WorkloadKind kWorkloads[] = {
    {"permutation", "every host sends to a distinct random other host (a derangement)",
     load_permutation},
    {"incast", "N senders to one receiver, all starting together", load_incast},
    {"flows", "an explicit list of flows", load_flow_list},
    {"jobs",
     "AI jobs: ranks on GPUs running collectives and compute gaps, optionally for several "
     "iterations; several jobs at once",
     load_jobs},
};

void load_sweep(Section& s, SweepConfig& sw) {
  const auto sizes = s.sizes("sizes", {}, Bytes(1), "values of \"$size\", each a separate run");
  for (auto b : sizes) sw.sizes.push_back(b.count());
  const std::string doc = "values of \"$collective\", each a separate run";
  if (s.describing()) {
    s.text("collectives", "[]", doc);
  } else if (s.has("collectives")) {
    const auto names = s.strings("collectives", doc);
    for (size_t i = 0; i < names.size(); ++i) {
      Collective c{};
      if (!parse_collective(names[i], &c)) {
        s.fail("collectives", fmt::format("collective names ({}), got \"{}\"",
                                          kCollectiveChoices, names[i]));
      }
      sw.collectives.push_back(c);
    }
  }
  const auto seeds = s.integers("seeds", {}, 0, std::numeric_limits<int64_t>::max(),
                                "RNG seeds; each case runs once per seed (median, min, max)");
  for (auto v : seeds) sw.seeds.push_back(static_cast<uint64_t>(v));
}

void describe_flow_item(Section& s) {
  s.integer("src", 0, 0, kMaxInt, "source host id");
  s.integer("dst", 1, 0, kMaxInt, "destination host id");
  s.bytes("bytes", Bytes(1000000), Bytes(0), kMaxBytes, "bytes");
  s.time("start", Time(), "start time");
}

// ---- common sections ------------------------------------------------------------------------

void load_simulation(Section& s, ScenarioConfig& c) {
  c.seed = static_cast<uint64_t>(s.integer("seed", 1, 0, std::numeric_limits<int64_t>::max(),
                                           "RNG seed (ECMP hash seeds, permutations, losses)"));
  c.stop_time = s.time("stop_time", Time::ms(1000),
                       "simulated-time limit; the run ends earlier when every flow is done");
}

void load_network(Section& s, NetworkConfig& n) {
  n.framing_bytes = s.boolean("preamble_ifg", true,
                              "count preamble+SFD (8 B) and inter-frame gap (12 B) on the wire")
                        ? 20
                        : 0;
  n.loss_probability = s.real("loss_probability", 0.0, 0.0, 1.0,
                              "random loss probability per packet per link (PFC frames exempt)");
  n.ber = s.real("ber", 0.0, 0.0, 0.5,
                 "pre-FEC bit error rate of every link (docs/FAULTS.md; seed 002 §4: ~1e-4 "
                 "for 800G PAM4)");
  n.fec = s.choice("fec", "rs544", {"rs544", "none"},
                   "rs544: RS(544,514) KP4, corrects 15 10-bit symbols per codeword; none: any "
                   "bit error loses the frame") == "none"
              ? Fec::kNone
              : Fec::kRs544;
  auto b = s.table("buffer", "shared packet buffer of every switch");
  n.sw.buffer.size = b.bytes("size", Bytes(32LL << 20), Bytes(1024), kMaxBytes,
                             "shared buffer per switch (Trident3-class 3.2 Tb/s: 32 MiB)");
  n.sw.buffer.reserve = b.bytes("reserve", Bytes(4096), Bytes(0), kMaxBytes,
                                "reserved bytes per (ingress port, lossless class)");
  n.sw.buffer.egress_alpha = b.real("egress_alpha", 1.0, 1.0 / 1024, 1024,
                                    "dynamic-threshold alpha of lossy egress queues");
  b.finish();
  auto p = s.table("pfc", "priority flow control (IEEE 802.1Qbb), REFERENCE.md §1.3");
  auto& pfc = n.sw.pfc;
  pfc.enabled = p.boolean("enabled", true, "PFC on the lossless classes");
  const auto classes = p.integers("lossless_classes", {3}, 0, 6, "classes PFC protects");
  pfc.lossless_mask = 0;
  for (auto c : classes) pfc.lossless_mask = static_cast<uint8_t>(pfc.lossless_mask | (1U << c));
  pfc.mode = p.choice("threshold", "dynamic", {"dynamic", "static"},
                      "dynamic: XOFF at alpha x free buffer; static: fixed xoff/xon") == "static"
                 ? PfcThreshold::kStatic
                 : PfcThreshold::kDynamic;
  pfc.alpha = p.real("alpha", 0.125, 1.0 / 1024, 64, "dynamic-threshold alpha (HPCC ns-3: 1/8)");
  pfc.scale_alpha = p.boolean("scale_alpha", true,
                              "double alpha per doubling of port rate over the slowest port");
  pfc.resume_offset = p.bytes("resume_offset", Bytes(3072), Bytes(0), kMaxBytes,
                              "dynamic XON hysteresis below the threshold");
  pfc.xoff = p.bytes("xoff", Bytes(0), Bytes(0), kMaxBytes, "static XOFF (shared bytes)");
  pfc.xon = p.bytes("xon", Bytes(0), Bytes(0), kMaxBytes, "static XON (shared bytes)");
  pfc.headroom = p.bytes("headroom", Bytes(0), Bytes(0), kMaxBytes,
                         "headroom per (port, lossless class); 0 = 2 x link BDP + 2 max frames "
                         "+ pause frame + response time");
  pfc.response_time = p.time("response_time", Time(), "upstream reaction time added to headroom");
  pfc.pause_quanta = static_cast<uint16_t>(p.integer(
      "pause_quanta", 65535, 1, 65535, "pause time of XOFF frames in 512-bit quanta"));
  if (!p.describing() && pfc.mode == PfcThreshold::kStatic) {
    if (pfc.xoff.count() == 0) p.fail("xoff", "a positive size when threshold = \"static\"");
    if (pfc.xon > pfc.xoff) p.fail("xon", "at most network.pfc.xoff");
  }
  p.finish();
  auto e = s.table("ecn", "RED/ECN marking at egress dequeue, REFERENCE.md §1.4");
  n.sw.ecn.enabled = e.boolean("enabled", true, "mark CE on ECT packets");
  n.sw.ecn.kmin = e.bytes("kmin", Bytes(5000), Bytes(0), kMaxBytes, "queue with no marking");
  n.sw.ecn.kmax = e.bytes("kmax", Bytes(200000), Bytes(0), kMaxBytes, "queue marked with pmax");
  n.sw.ecn.pmax = e.real("pmax", 0.01, 0.0, 1.0, "marking probability at kmax");
  if (!e.describing() && n.sw.ecn.kmax <= n.sw.ecn.kmin) {
    e.fail("kmax", fmt::format("a size above network.ecn.kmin = {}", to_string(n.sw.ecn.kmin)));
  }
  e.finish();
}

void load_output(Section& s, OutputConfig& o) {
  o.flows_csv = s.boolean("flows_csv", true, "write flows.csv (one row per flow)");
  o.trace = s.boolean("trace", false, "write trace.csv (per-packet events of traced flows)");
  o.trace_flows = s.integers("trace_flows", {}, 0, kMaxInt, "flows to trace (empty = all)");
  o.sample_interval = s.time("sample_interval", Time(),
                             "record queue depth and link utilisation every interval into "
                             "timeseries.csv (0 = off)");
  o.sample_ports = s.choice("sample_ports", "uplinks", {"uplinks", "downlinks", "all"},
                            "ports sampled: leaf uplinks, switch ports towards hosts, or all");
  o.misorder = s.boolean("misorder", false,
                         "measure misordered adjacent packets at the destination leaves "
                         "(before GSE reordering)");
}

void load_routing(Section& r, ScenarioConfig& c) {
  c.routing = r.choice("policy", "ecmp", {"ecmp", "spray", "flowlet"},
                             "ethernet path selection: per-flow ECMP, per-packet round-robin "
                             "spraying, or flowlets");
  c.flowlet_gap = r.time("flowlet_gap", Time::us(50), "gap that starts a new flowlet");
}

void load_fabric(Section& f, ScenarioConfig& c) {
  c.fabric = f.choice("kind", "ethernet", {"ethernet", "gse"},
                           "ethernet (routing.policy) or GSE (PKTC spraying, container "
                           "reordering; seeds 000 and 002)");
  auto g = f.table("gse", "GSE parameters (docs/gse.md)");
  c.gse.enabled = c.fabric == "gse";
  c.gse.mode = g.choice("mode", "n2n", {"n2n", "e2e"},
                        "n2n: RoCE NICs, the leaf is the GSP; e2e: the NIC is the GSP and the "
                        "leaf a GSF pinning each container to one uplink") == "e2e"
                   ? GseMode::kE2E
                   : GseMode::kN2N;
  c.gse.header_bytes = g.integer("header_bytes", 16, 0, 256,
                                 "GSE header bytes on the wire [UNVERIFIED]");
  c.gse.container_bytes = g.bytes("container", Bytes(16384), Bytes(64), Bytes(1 << 30),
                                  "container length in wire bytes (seed 002: 16 KB)").count();
  c.gse.rule = g.choice("container_rule", "cumulative", {"cumulative", "overflow"},
                        "cumulative: id = bytes before / length (seed 000); overflow: a packet "
                        "that does not fit opens the next (seed 002)") == "overflow"
                   ? ContainerRule::kOverflow
                   : ContainerRule::kCumulative;
  const auto path = g.choice("path", "index", {"index", "least_queued", "weighted", "adaptive"},
                             "uplink per container: container id mod uplinks (seed 000), the "
                             "least queued local uplink, weighted round robin by uplink rate, or "
                             "adaptive: local queue + the GSF's published downlink backlog");
  c.gse.path = path == "least_queued" ? ContainerPath::kLeastQueued
               : path == "weighted"   ? ContainerPath::kWeighted
               : path == "adaptive"   ? ContainerPath::kAdaptive
                                      : ContainerPath::kIndex;
  c.gse.dgsq = g.boolean("dgsq", false,
                         "DGSQ: per-destination VOQs at the source GSP that send only granted "
                         "bytes (GSE-N2N; docs/gse.md)");
  c.gse.grant_quantum = g.bytes("grant_quantum", Bytes(16384), Bytes(64), Bytes(1 << 30),
                                "bytes per grant, paced at the egress port's rate").count();
  c.gse.grant_rate = g.real("grant_rate", 1.0, 0.01, 1.0,
                            "share of an egress port's rate its grants may use at most");
  c.gse.grant_gate = g.bytes("grant_gate", Bytes(32768), Bytes(0), kMaxBytes,
                             "no grant while the egress port queues more than this (egress flow "
                             "control: the port's ACKs and CNPs take part of its rate); 0 = off "
                             "[choice]").count();
  c.gse.transit_caps = g.boolean("transit_caps", true,
                                 "grant remote sources no faster than the spine links into the "
                                 "destination leaf carry (one budget: containers use all of "
                                 "them)");
  c.gse.transit_share = g.real("transit_share", 0.97, 0.01, 1.0,
                               "share of the spine links' rate remote grants may use (ACKs, CNPs, "
                               "requests and grants cross them too: about 2 % with RoCE) [choice]");
  c.gse.voq_pool_queues = g.integer("voq_pool_queues", 4096, 0, 1 << 24,
                                    "VOQs a GSP can hold at once (then: shared, ungranted)");
  c.gse.voq_pool_bytes = g.bytes("voq_pool_bytes", Bytes(int64_t{64} << 20), Bytes(0),
                                 Bytes(int64_t{1} << 40), "bytes all VOQs of a GSP can hold")
                             .count();
  {
    const auto w = g.strings("grant_weights", "grant weight per source GSP (leaf index), as "
                                              "numbers in strings; empty = round robin");
    for (const auto& x : w) {
      try {
        c.gse.grant_weights.push_back(std::stod(x));
      } catch (const std::exception&) {
        g.fail("grant_weights", "positive numbers, e.g. [\"3\", \"1\"]");
      }
      if (c.gse.grant_weights.back() <= 0) g.fail("grant_weights", "positive numbers");
    }
  }
  c.gse.voq_ecn = g.boolean("voq_ecn", false,
                            "RED/ECN marking (network.ecn) at VOQ dequeue on the VOQ's depth, so "
                            "DCQCN slows NICs whose traffic waits for grants (needed without "
                            "PFC: nothing else slows them) [choice]");
  c.gse.voq_ecn_kmin = g.bytes("voq_ecn_kmin", Bytes(262144), Bytes(0), kMaxBytes,
                               "VOQ depth below which nothing is marked (above the request-grant "
                               "loop's own backlog) [UNVERIFIED]").count();
  c.gse.voq_ecn_kmax = g.bytes("voq_ecn_kmax", Bytes(1048576), Bytes(1), kMaxBytes,
                               "VOQ depth marked with network.ecn.pmax [UNVERIFIED]").count();
  if (!g.describing() && c.gse.voq_ecn_kmax <= c.gse.voq_ecn_kmin) {
    g.fail("voq_ecn_kmax", "a size above fabric.gse.voq_ecn_kmin");
  }
  c.gse.reorder_timeout = g.time("reorder_timeout", Time::us(100),
                                 "give up on a container that does not complete [UNVERIFIED]");
  if (!g.describing() && c.gse.reorder_timeout.ps() <= 0) g.fail("reorder_timeout", "a positive duration");
  c.gse.detect = g.time("detect", Time::us(1),
                        "a device notices that its own link died (loss of signal) [UNVERIFIED]");
  c.gse.notice_hop = g.time("notice_hop", Time::us(1),
                            "physical-layer fault notice and back-pressure delay per hop "
                            "(seed 000: microseconds) [UNVERIFIED]");
  c.gse.monitor_window = g.time("monitor_window", Time::us(10),
                                "FEC error counting window of the link-quality monitor");
  c.gse.ber_threshold = g.real("ber_threshold", 2.4e-4, 1e-12, 0.5,
                               "declare a link failing above this estimated pre-FEC BER "
                               "(default: the BER KP4 FEC is specified for)");
  c.gse.fault_flush = g.time("fault_flush", Time::us(5),
                             "on a fault notice, wait at most this for missing containers (they "
                             "may be lost with the cable) [UNVERIFIED]");
  c.gse.publish_interval = g.time("publish_interval", Time::us(2),
                                  "GSF downlink backlog publication period (path = "
                                  "\"adaptive\") [UNVERIFIED]");
  if (!g.describing()) {
    if (c.gse.monitor_window.ps() <= 0) g.fail("monitor_window", "a positive duration");
    if (c.gse.publish_interval.ps() <= 0) g.fail("publish_interval", "a positive duration");
  }
  g.finish();
  if (!f.describing() && c.gse.dgsq && c.gse.mode != GseMode::kN2N) {
    g.fail("dgsq", "false with mode = \"e2e\" (DGSQ is modelled at the GSE-N2N leaf)");
  }
  if (!f.describing() && c.fabric == "gse" && c.topology.kind != "leaf_spine") {
    f.fail("kind", "\"ethernet\" on a single switch (GSE needs leaves and spines)");
  }
}

void load_security(Section& s, ScenarioConfig& c) {
  auto& sec = c.security;
  sec.kind = s.choice("kind", "none", {"none", "physec_link", "physec_channel", "macsec", "ipsec", "psp"},
                      "none; PHYSec link-level or channel-level (seed 002 §2.2.3), MACsec (IEEE "
                      "802.1AE, per link), IPsec ESP or PSP (per NIC, end to end)");
  Time lat;
  int64_t bytes = 0;
  if (sec.kind == "physec_link" || sec.kind == "physec_channel") lat = Time::ns(100);
  if (sec.kind == "macsec") {
    lat = Time::ns(200);
    bytes = 32;
  }
  if (sec.kind == "ipsec") {
    lat = Time::ns(500);
    bytes = 36;
  }
  if (sec.kind == "psp") {
    lat = Time::ns(300);
    bytes = 40;
  }
  sec.latency = s.time("latency", lat,
                       "added latency: per hop (physec_*, macsec: encrypt + decrypt) or per NIC "
                       "on each side (ipsec, psp). Defaults by kind: PHYSec 100ns (seed 002: "
                       "hundreds of ns), MACsec 200ns, IPsec 500ns, PSP 300ns [UNVERIFIED]");
  sec.bytes = s.integer("bytes", bytes, 0, 1024,
                        "bytes added per frame (macsec: SecTAG 16 + ICV 16) or per packet "
                        "(ipsec: ESP transport mode with AES-GCM, 36; psp: UDP 8 + PSP header 16 + "
                        "ICV 16); PHYSec adds none");
  sec.segment_blocks = s.integer("segment_blocks", 1024, 1, 1 << 24,
                                 "physec_channel: 64B/66B blocks per encrypted segment (each "
                                 "segment adds a D, an S and a T block) [UNVERIFIED]");
  if (s.describing()) return;
  if (sec.kind == "none" && (s.has("latency") || s.has("bytes"))) {
    s.fail("kind", "a security kind when latency or bytes are given");
  }
  if ((sec.kind == "physec_link" || sec.kind == "physec_channel") && sec.bytes != 0) {
    s.fail("bytes", "0 for PHYSec (it adds no bytes to frames; channel-level blocks are set by "
                    "segment_blocks)");
  }
  if (sec.kind == "ipsec" || sec.kind == "psp") c.transport.wire.header_bytes += sec.bytes;
}

// The cable a fault names must exist in the configured leaf-spine.
void check_cable(Section& f, const std::string& name, const ScenarioConfig& c) {
  const auto& ls = c.topology.leaf_spine;
  const int groups = (ls.servers + ls.servers_per_leaf - 1) / ls.servers_per_leaf;
  const int leaves = ls.attach == Attach::kServer ? groups : groups * ls.gpus_per_server;
  unsigned l = 0;
  unsigned sp = 0;
  unsigned k = 0;
  char tail = 0;
  const int n = std::sscanf(name.c_str(), "leaf%u-spine%u#%u%c", &l, &sp, &k, &tail);
  const bool ok = (n == 2 || n == 3) && static_cast<int>(l) < leaves && static_cast<int>(sp) < ls.spines &&
                  static_cast<int>(k) < ls.links_per_spine &&
                  name == fmt::format("leaf{}-spine{}", l, sp) + (n == 3 ? fmt::format("#{}", k) : "");
  if (!ok) {
    f.fail("link", fmt::format("a cable \"leaf<l>-spine<s>\" (optionally \"#<k>\") with l < {}, s < {}{}",
                               leaves, ls.spines,
                               ls.links_per_spine > 1 ? fmt::format(", k < {}", ls.links_per_spine) : ""));
  }
}

void load_faults(Section& s, ScenarioConfig& c) {
  c.faults.reconverge_local = s.time("reconverge_local", Time::ms(1),
                                     "Ethernet fabric: the two switches at a changed cable "
                                     "update their ECMP groups after this [UNVERIFIED]");
  c.faults.reconverge = s.time("reconverge", Time::ms(50),
                               "Ethernet fabric: every other switch reroutes after this (BGP "
                               "withdrawal after BFD detection; docs/FAULTS.md) [UNVERIFIED]");
  auto list = s.tables("events", "[[faults.events]]: link, action, at (+ flap/ber fields)");
  if (s.describing()) {
    Section e = s.describe_child("events[i]");
    e.text("link", "leaf0-spine0", "cable \"leaf<l>-spine<s>\" (\"#<k>\" for parallel links)");
    e.choice("action", "down", {"down", "up", "flap", "ber"}, "what happens to the cable");
    e.time("at", Time(), "when");
    e.time("down_for", Time::us(100), "flap: time down per cycle");
    e.time("up_for", Time::us(100), "flap: time up per cycle");
    e.integer("count", 1, 1, 1 << 20, "flap: cycles");
    e.real("ber", 0.0, 0.0, 0.5, "ber: the cable's new pre-FEC bit error rate");
    return;
  }
  if (!list.empty() && c.topology.kind != "leaf_spine") {
    s.fail("events", "no fault events on a single switch (faults act on leaf-spine cables)");
  }
  for (auto& e : list) {
    FaultSpec f;
    f.link = e.text("link", "", "cable");
    check_cable(e, f.link, c);
    const std::string action = e.choice("action", "down", {"down", "up", "flap", "ber"}, "action");
    f.action = action == "up" ? FaultAction::kUp : action == "flap" ? FaultAction::kFlap
               : action == "ber" ? FaultAction::kBer : FaultAction::kDown;
    f.at = e.time("at", Time(), "when");
    if (f.action == FaultAction::kFlap) {
      f.down_for = e.time("down_for", Time::us(100), "time down per cycle");
      f.up_for = e.time("up_for", Time::us(100), "time up per cycle");
      f.count = static_cast<int>(e.integer("count", 1, 1, 1 << 20, "cycles"));
      if (f.down_for.ps() <= 0) e.fail("down_for", "a positive duration");
      if (f.up_for.ps() <= 0) e.fail("up_for", "a positive duration");
    }
    if (f.action == FaultAction::kBer) {
      if (!e.has("ber")) e.fail("ber", "the new bit error rate (action = \"ber\")");
      f.ber = e.real("ber", 0.0, 0.0, 0.5, "pre-FEC bit error rate");
    }
    e.finish();  // rejects keys that do not belong to the action
    c.faults.events.push_back(f);
  }
}

template <typename Kinds, typename Fn>
auto find_kind(const Kinds& kinds, const std::string& name, Fn&& on_missing) {
  for (const auto& k : kinds) {
    if (name == k.name) return &k;
  }
  on_missing();
  return static_cast<decltype(&kinds[0])>(nullptr);
}

ScenarioConfig parse(const toml::table* root, const std::string& file) {
  auto ctx = std::make_shared<ReaderContext>();
  ctx->file = file;
  ScenarioConfig c;
  c.file = file;
  Section top(ctx, root, "", &c.effective);
  c.name = top.text("name", "unnamed", "scenario name");
  c.description = top.text("description", "", "one-line description");

  auto sim = top.table("simulation", "run control");
  load_simulation(sim, c);
  sim.finish();

  auto topo = top.table("topology", "the fabric's shape");
  c.topology.kind = topo.choice("kind", "leaf_spine", {"leaf_spine", "single_switch"}, "topology");
  find_kind(kTopologies, c.topology.kind, [] {})->load(topo, c.topology);
  topo.finish();

  auto net = top.table("network", "links and switches");
  load_network(net, c.network);
  net.finish();

  auto routing = top.table("routing", "path selection");
  load_routing(routing, c);
  routing.finish();
  auto fabric = top.table("fabric", "the fabric's forwarding model");
  load_fabric(fabric, c);
  fabric.finish();
  auto faults = top.table("faults", "link failures, flaps and degradation (docs/FAULTS.md)");
  load_faults(faults, c);
  faults.finish();

  auto tr = top.table("transport", "host transport");
  c.transport.kind = tr.choice("kind", "datagram", {"datagram", "roce"}, "transport");
  load_wire(tr, c.transport);
  const Rate line = c.topology.kind == "single_switch" ? c.topology.single_switch.nic_rate
                                                       : c.topology.leaf_spine.nic_rate;
  find_kind(kTransports, c.transport.kind, [] {})->load(tr, c.transport, line);
  tr.finish();
  auto sec = top.table("security", "encryption cost (docs/SECURITY.md)");
  load_security(sec, c);
  sec.finish();
  c.network.sw.max_frame_bytes = c.transport.wire.payload + c.transport.wire.header_bytes;

  auto wl = top.table("workload", "traffic");
  c.workload.kind =
      wl.choice("kind", "permutation", {"permutation", "incast", "flows", "jobs"}, "workload");
  find_kind(kWorkloads, c.workload.kind, [] {})->load(wl, c.workload, c.topology);
  // Cross-checks against the topology.
  const int hosts = c.topology.hosts();
  if (c.workload.kind == "incast") {
    if (c.workload.receiver >= static_cast<uint32_t>(hosts)) {
      wl.fail("receiver", fmt::format("a host id below the topology's {} hosts", hosts));
    }
    if (c.workload.senders > hosts - 1) {
      wl.fail("senders", fmt::format("at most {} (hosts - 1)", hosts - 1));
    }
  }
  for (size_t i = 0; i < c.workload.flows.size(); ++i) {
    const auto& f = c.workload.flows[i];
    const std::string key = fmt::format("flows[{}]", i);
    if (f.src >= static_cast<uint32_t>(hosts)) {
      wl.fail(key, fmt::format("src below the topology's {} hosts, got src = {}", hosts, f.src));
    }
    if (f.dst >= static_cast<uint32_t>(hosts)) {
      wl.fail(key, fmt::format("dst below the topology's {} hosts, got dst = {}", hosts, f.dst));
    }
    if (f.src == f.dst) wl.fail(key, "src different from dst");
  }
  for (auto& f : c.workload.flows) f.tclass = c.transport.tclass;
  wl.finish();

  auto sweep = top.table("sweep", "lists of cases, each an independent simulation");
  load_sweep(sweep, c.sweep);
  bool uses_size = false;
  bool uses_collective = false;
  for (const auto& j : c.workload.jobs) {
    for (const auto& op : j.ops) {
      uses_size = uses_size || op.sweep_bytes;
      uses_collective = uses_collective || op.sweep_collective;
    }
  }
  if (uses_size && c.sweep.sizes.empty()) {
    sweep.fail("sizes", "a list of sizes: an op has bytes = \"$size\"");
  }
  if (!uses_size && !c.sweep.sizes.empty()) {
    sweep.fail("sizes", "an op with bytes = \"$size\" to use them");
  }
  if (uses_collective && c.sweep.collectives.empty()) {
    sweep.fail("collectives", "a list of collectives: an op has type = \"$collective\"");
  }
  if (!uses_collective && !c.sweep.collectives.empty()) {
    sweep.fail("collectives", "an op with type = \"$collective\" to use them");
  }
  sweep.finish();

  auto out = top.table("output", "result files");
  load_output(out, c.output);
  out.finish();
  top.finish();
  return c;
}

std::vector<ParamDoc> describe(void (*fn)(Section&)) {
  auto ctx = std::make_shared<ReaderContext>();
  ctx->describe = true;
  Section s(ctx, nullptr, "", nullptr);
  fn(s);
  return ctx->docs;
}

}  // namespace

int TopologyConfig::hosts() const {
  if (kind == "single_switch") return single_switch.hosts;
  return leaf_spine.servers * leaf_spine.gpus_per_server;
}

ScenarioConfig load_scenario(const std::string& path, const std::vector<std::string>& overrides,
                             const uint64_t* seed_override) {
  if (!std::ifstream(path).good()) {
    throw ConfigError(fmt::format("{}: cannot open the scenario file", path));
  }
  toml::table root;
  try {
    root = toml::parse_file(path);
  } catch (const toml::parse_error& e) {
    throw ConfigError(fmt::format("{}:{}: not valid TOML: {}", path, e.source().begin.line,
                                  e.description()));
  }
  for (const auto& o : overrides) apply_override(root, o, "--set");
  if (seed_override != nullptr) {
    apply_override(root, fmt::format("simulation.seed={}", *seed_override), "--seed");
  }
  return parse(&root, path);
}

ScenarioConfig load_scenario_text(const std::string& text, const std::string& name,
                                  const std::vector<std::string>& overrides) {
  toml::table root;
  try {
    root = toml::parse(text, name);
  } catch (const toml::parse_error& e) {
    throw ConfigError(fmt::format("{}:{}: not valid TOML: {}", name, e.source().begin.line,
                                  e.description()));
  }
  for (const auto& o : overrides) apply_override(root, o, "--set");
  return parse(&root, name);
}

Catalogue describe_catalogue() {
  Catalogue cat;
  auto with_prefix = [](std::vector<ParamDoc> docs, const std::string& prefix) {
    for (auto& d : docs) d.key = prefix + d.key;
    return docs;
  };
  for (const auto& k : kTopologies) {
    auto ctx = std::make_shared<ReaderContext>();
    ctx->describe = true;
    Section s(ctx, nullptr, "topology", nullptr);
    TopologyConfig t;
    k.load(s, t);
    cat.topologies.push_back({k.name, k.description, ctx->docs});
  }
  for (const auto& k : kTransports) {
    auto ctx = std::make_shared<ReaderContext>();
    ctx->describe = true;
    Section s(ctx, nullptr, "transport", nullptr);
    TransportConfig t;
    load_wire(s, t);
    k.load(s, t, Rate::gbps(100));
    cat.transports.push_back({k.name, k.description, ctx->docs});
  }
  for (const auto& k : kPolicies) cat.policies.push_back({k.name, k.description, {}});
  for (const auto& k : kWorkloads) {
    auto ctx = std::make_shared<ReaderContext>();
    ctx->describe = true;
    Section s(ctx, nullptr, "workload", nullptr);
    WorkloadConfig w;
    if (std::string(k.name) == "flows") {
      Section item(ctx, nullptr, "workload.flows[i]", nullptr);
      describe_flow_item(item);
    } else {
      k.load(s, w, TopologyConfig{});
    }
    cat.workloads.push_back({k.name, k.description, ctx->docs});
  }
  auto common = describe([](Section& s) {
    ScenarioConfig c;
    auto sim = s.table("simulation", "run control");
    load_simulation(sim, c);
    auto net = s.table("network", "links and switches");
    load_network(net, c.network);
    auto out = s.table("output", "result files");
    load_output(out, c.output);
    auto sw = s.table("sweep", "lists of cases, each an independent simulation");
    load_sweep(sw, c.sweep);
    auto routing = s.table("routing", "path selection");
    load_routing(routing, c);
    auto fabric = s.table("fabric", "the fabric's forwarding model");
    load_fabric(fabric, c);
    auto faults = s.table("faults", "link failures, flaps and degradation (docs/FAULTS.md)");
    load_faults(faults, c);
    auto sec = s.table("security", "encryption cost (docs/SECURITY.md)");
    load_security(sec, c);
  });

  cat.common = with_prefix(common, "");
  return cat;
}

}  // namespace fabsim

namespace fabsim {

ScenarioConfig instantiate(const ScenarioConfig& base, const Collective* collective,
                           const int64_t* size, const uint64_t* seed) {
  ScenarioConfig c = base;
  c.sweep = SweepConfig{};
  for (auto& j : c.workload.jobs) {
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
  if (seed != nullptr) {
    c.seed = *seed;
    c.effective["simulation"]["seed"] = *seed;
  }
  c.effective["case"] = nlohmann::ordered_json::object();
  if (collective != nullptr) c.effective["case"]["collective"] = collective_name(*collective);
  if (size != nullptr) c.effective["case"]["size"] = *size;
  return c;
}

}  // namespace fabsim
