// Rank placement and repetition of the trace kinds; see placement.h.
#include "workload/trace/placement.h"

#include <fmt/format.h>  // messages

#include <algorithm>  // max
#include <limits>     // saturation

#include "workload/collective.h"

namespace fabsim {

TracePlacement load_placement(Section& s, const HostShape& hosts) {
  TracePlacement p;
  auto g = s.table("gpu", "the scale-up fabric inside a server (as the training kind's)");
  p.scale_up_rate = g.rate("scale_up_rate", Rate::gbps(2400),
                           "per-direction rate of each GPU's scale-up ports (NVLink through an "
                           "NVSwitch; 2400 Gb/s = 300 GB/s, A100), shared max-min fairly by the "
                           "transfers that use a port [UNVERIFIED]; 0: every transfer crosses the "
                           "network",
                           "no scale-up fabric");
  p.scale_up_latency =
      g.time("scale_up_latency", Time::us(2), "latency of a scale-up transfer [UNVERIFIED]");
  g.finish();
  p.iterations = static_cast<int>(s.integer("iterations", 1, 1, 1 << 20, "iterations"));
  p.start = s.time("start", Time(), "start of the first iteration");
  p.first = static_cast<uint32_t>(
      s.integer("first", 0, 0, INT32_MAX, "GPU of rank 0; rank r on GPU first + r"));
  p.ideal_network = s.boolean("ideal_network", false,
                              "every transfer takes no time: the iteration is its compute");
  const int64_t ch = s.integer("channels", 0, 0, kMaxChannels,
                               "NCCL channels per collective (0 = NCCL's count towards a network "
                               "peer for the NIC rate, REFERENCE.md §8.8)");
  p.channels = ch > 0 ? static_cast<int>(ch) : nccl_net_channels(hosts.nic_rate);
  if (s.describing()) return p;
  p.server.assign(static_cast<size_t>(hosts.hosts), -1);
  if (hosts.servers > 0 && hosts.gpus_per_server > 0) {
    for (int h = 0; h < hosts.hosts; ++h) p.server[h] = h / hosts.gpus_per_server;
  }
  return p;
}

void check_placement(const Section& s, const TracePlacement& p, const HostShape& hosts,
                     uint32_t ranks, std::string_view key) {
  if (int64_t{p.first} + ranks > hosts.hosts) {
    s.fail(key, fmt::format("a trace whose {} ranks from GPU first = {} fit in the topology's {} "
                            "hosts",
                            ranks, p.first, hosts.hosts));
  }
}

GraphJob trace_job(const std::string& name, std::shared_ptr<const TaskGraph> graph, uint32_t ranks,
                   const TracePlacement& p, int iterations) {
  GraphJob j;
  j.name = name;
  j.graph = std::move(graph);
  for (uint32_t r = 0; r < ranks; ++r) {
    j.gpus.push_back(p.first + r);
    j.server.push_back(p.server[p.first + r]);
  }
  j.iterations = iterations;
  j.start = p.start;
  j.ideal_network = p.ideal_network;
  j.channels = p.channels;
  j.scale_up_rate = p.scale_up_rate;
  j.scale_up_latency = p.scale_up_latency;
  return j;
}

WorkloadDemand graph_demand(const TaskGraph& g, int iterations, int channels,
                            const std::string& key) {
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  const auto times = static_cast<uint64_t>(iterations);
  auto add = [&](uint64_t& to, uint64_t n) {
    to = n > 0 && times > (kMax - to) / n ? kMax : to + n * times;
  };
  WorkloadDemand d;
  CollectiveOptions opt;
  opt.channels = channels;
  for (const GraphNode& n : g.nodes) {
    if (n.kind != GraphNode::Kind::kCollective) continue;
    const CollectiveSize z =
        collective_size(n.collective, static_cast<int>(n.group.size()), n.bytes, opt);
    add(d.flows, z.transfers);
    add(d.bytes, z.bytes);
    d.plan_transfers = std::max(d.plan_transfers, z.transfers);
    d.plan_deps = std::max(d.plan_deps, z.deps);
  }
  d.ranks = g.ranks();
  d.key = key;
  d.why = fmt::format("{} graph nodes per iteration x {} iterations", g.nodes.size(), iterations);
  return d;
}

}  // namespace fabsim
