// The resource guard (issue 14; docs/SCENARIOS.md "Memory"): before the big allocations of a
// run, its memory is estimated from the scenario as the sum of sizeof x count of the structures
// that grow with it (the network's hosts, switches, ports and links; flow records; collective
// plans; time-series samples; trace events), and a run past the limit (`--max-memory`, default
// half of physical memory) is refused with the key that drives the estimate, instead of dying
// in std::bad_alloc (or being killed) hours later.
#pragma once

#include <atomic>              // the stop flag the watch sets
#include <chrono>              // the watch's period
#include <condition_variable>  // the watch's sleep, cut short by its stop
#include <cstdint>             // byte counts
#include <mutex>               // the watch's sleep
#include <string>              // keys, messages
#include <thread>              // the watch
#include <vector>              // items

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

/// The process's resident anonymous memory in bytes: its resident pages less those backed by
/// files or shared (/proc/self/statm), i.e. the heap and anonymous mappings the estimate models,
/// without the binary's and the shared libraries' pages. 0 where /proc is not readable.
uint64_t resident_anonymous_bytes();

/// The value the memory watch stores in the stop flag: not a signal number (those are > 0).
inline constexpr int kStopMemory = -1;

/// The resource guard while runs go on. The estimate before a run is a lower bound (packets in
/// flight, transport state and the scheduler's nodes are not in it, docs/SCENARIOS.md
/// "Memory"), so a run it admits can still grow past the limit. A thread reads
/// resident_anonymous_bytes() every `period`; once it passes `limit` (0: no watch) it stores
/// kStopMemory in `flag` unless a signal got there first, and the runs stop between two events
/// as on SIGINT, their partial results written and marked. Reading costs one small /proc read a
/// period, off the simulation's thread.
class MemoryWatch {
 public:
  MemoryWatch(std::atomic<int>& flag, uint64_t limit,
              std::chrono::milliseconds period = std::chrono::milliseconds(100));
  ~MemoryWatch();  // stops and joins the thread at once
  MemoryWatch(const MemoryWatch&) = delete;
  MemoryWatch& operator=(const MemoryWatch&) = delete;

  /// Whether the watch stopped the runs.
  bool tripped() const { return tripped_.load(std::memory_order_acquire); }
  /// The reading that passed the limit (0 until tripped()).
  uint64_t reading() const { return reading_.load(std::memory_order_acquire); }
  uint64_t limit() const { return limit_; }

 private:
  void watch(const std::stop_token& stop);

  std::atomic<int>& flag_;
  uint64_t limit_;
  std::chrono::milliseconds period_;
  std::atomic<bool> tripped_{false};
  std::atomic<uint64_t> reading_{0};
  std::mutex mutex_;
  std::condition_variable_any wake_;
  std::jthread thread_;  // last: started once the members above exist
};

}  // namespace fabsim
