// What the trace workload kinds (simai, chakra; issue 19 item 4) share: where a trace's ranks run
// and how its task graph repeats. Rank r runs on GPU (host) `first + r`; the keys mirror the
// training kind's (workload/training/), so a trace and a modelled iteration run on the same
// terms: iterations, start, ideal network, NCCL channels (REFERENCE.md §8.8) and the scale-up
// fabric inside a server [UNVERIFIED rate and latency].
#pragma once

#include <cstdint>  // ranks
#include <memory>   // shared graphs
#include <string>   // job names
#include <vector>   // servers

#include "config/reader.h"
#include "core/units.h"
#include "net/topology.h"
#include "workload/graph.h"
#include "workload/kind.h"

namespace fabsim {

struct TracePlacement {
  uint32_t first = 0;  // GPU of rank 0
  int iterations = 1;
  Time start;
  bool ideal_network = false;
  int channels = 1;
  Rate scale_up_rate;
  Time scale_up_latency;
  std::vector<int32_t> server;  // per host (-1: the topology has no servers)
};

/// Reads `first`, `iterations`, `start`, `ideal_network`, `channels` and the `gpu` table
/// (scale_up_rate, scale_up_latency) of `[workload]`.
TracePlacement load_placement(Section& s, const HostShape& hosts);

/// Fails on `key` unless `ranks` ranks from GPU `p.first` fit in the topology's hosts.
void check_placement(const Section& s, const TracePlacement& p, const HostShape& hosts,
                     uint32_t ranks, std::string_view key);

/// The job that runs `graph` over `ranks` ranks placed by `p`, `iterations` times.
GraphJob trace_job(const std::string& name, std::shared_ptr<const TaskGraph> graph, uint32_t ranks,
                   const TracePlacement& p, int iterations);

/// The resource guard's figures for `iterations` runs of `g` with `channels` channels.
WorkloadDemand graph_demand(const TaskGraph& g, int iterations, int channels,
                            const std::string& key);

}  // namespace fabsim
