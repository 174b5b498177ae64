// The resource guard (issue 14; docs/SCENARIOS.md "Memory"): before the big allocations of a
// run, its memory is estimated from the scenario as the sum of sizeof x count of the structures
// that grow with it (the network's hosts, switches, ports and links; flow records; collective
// plans; time-series samples; trace events), and a run past the limit (`--max-memory`, default
// half of physical memory) is refused with the key that drives the estimate, instead of dying
// in std::bad_alloc (or being killed) hours later.
#pragma once

#include <cstdint>      // byte counts
#include <string>       // keys, messages
#include <string_view>  // origin of the limit
#include <vector>       // items

#include "scenario/scenario.h"

namespace fabsim {

/// One term of an estimate: `count` things of one kind, driven by `key`.
struct MemoryItem {
  std::string what;  // e.g. "flow records"
  std::string key;   // e.g. "output.sample_interval", "workload.jobs[0].ranks", "topology"
  std::string why;   // how the count follows from the scenario
  uint64_t count = 0;
  uint64_t bytes = 0;         // saturating at UINT64_MAX
  uint64_t result_bytes = 0;  // the part a finished case keeps in its results
};

struct MemoryEstimate {
  std::vector<MemoryItem> items;
  uint64_t total = 0;
  /// False: the network's share is a lower bound from the host count (the topology is not
  /// built yet); true: counted on the built network.
  bool network_exact = false;
  std::string case_label;  // a sweep: the largest case, e.g. "alltoall 536870912 B"
  const MemoryItem& largest() const;
  void add(MemoryItem item);
};

/// What a built topology holds, for the exact estimate (Run counts it before anything else).
struct NetworkCounts {
  uint64_t hosts = 0;
  uint64_t switches = 0;
  uint64_t switch_ports = 0;
  uint64_t links = 0;
  uint64_t sampled_ports = 0;  // output.sample_ports on this topology
};

/// The memory of one run of `cfg` (sweep variables filled). Without `net`, the network's share
/// and the sampled ports are lower bounds from the topology's host count.
MemoryEstimate estimate_memory(const ScenarioConfig& cfg, const NetworkCounts* net = nullptr);

/// The memory of running `cfg`: one run, or a sweep's largest case times the cases that run at
/// once (`concurrent`), plus every case's results when they are kept for the output files.
MemoryEstimate estimate_command_memory(const ScenarioConfig& cfg, unsigned concurrent,
                                       bool keep_results);

/// Throws ConfigError (exit 2) when `est.total` exceeds `limit` (0 = no limit), naming the file,
/// the largest item's key, the estimate and the limit.
void check_memory(const ScenarioConfig& cfg, const MemoryEstimate& est, uint64_t limit);

/// The default limit: half of the machine's physical memory.
uint64_t default_memory_limit();
/// "1.50 GiB", "512 B".
std::string memory_text(uint64_t bytes);
/// The estimate as a few lines (what `validate` prints).
std::string describe_memory(const MemoryEstimate& est, uint64_t limit);

}  // namespace fabsim
