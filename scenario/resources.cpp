// The resource guard; see resources.h.
#include "scenario/resources.h"

#include <fmt/format.h>  // messages
#include <unistd.h>      // sysconf (physical memory)

#include <algorithm>  // max
#include <array>      // size units
#include <cstdio>     // /proc/self/statm

#include "core/assert.h"     // FABSIM_CHECK
#include "core/packet.h"     // kNumClasses
#include "core/scheduler.h"  // Event
#include "net/host.h"
#include "net/link.h"
#include "net/port.h"
#include "net/sampler.h"  // PortSample
#include "net/switch.h"
#include "transport/flow.h"       // FlowRecord, FlowSpec, TraceEvent
#include "workload/collective.h"  // Transfer

namespace fabsim {
namespace {

uint64_t sat_mul(uint64_t a, uint64_t b) {
  return a != 0 && b > UINT64_MAX / a ? UINT64_MAX : a * b;
}
uint64_t sat_add(uint64_t a, uint64_t b) {
  return b > UINT64_MAX - a ? UINT64_MAX : a + b;
}

// Per switch port beyond its EgressPort: the switch's ingress and headroom byte counters per
// class (Switch::PortState).
constexpr uint64_t kPortCounters = 2 * kNumClasses * sizeof(int64_t);
// Per switch and host: the switch's route table holds a 2-byte group index per host.
constexpr uint64_t kRouteEntry = sizeof(uint16_t);
// Per flow of a job: JobRunner's owner entry (job, transfer, generation).
constexpr uint64_t kFlowOwner = 3 * sizeof(uint32_t);

MemoryItem network_item(const ScenarioConfig& cfg, const NetworkCounts* net) {
  MemoryItem m;
  m.what = "network";
  m.key = "topology";
  if (net != nullptr) {
    m.count = net->hosts;
    m.bytes = sat_mul(net->hosts, sizeof(Host) + sizeof(EgressPort));
    m.bytes = sat_add(m.bytes, sat_mul(net->switches, sizeof(Switch)));
    m.bytes = sat_add(m.bytes, sat_mul(net->switch_ports, sizeof(EgressPort) + kPortCounters));
    m.bytes = sat_add(m.bytes, sat_mul(net->links, sizeof(Link)));
    m.bytes = sat_add(m.bytes, sat_mul(sat_mul(net->switches, net->hosts), kRouteEntry));
    m.why = fmt::format("{}, {} hosts, {} switches, {} switch ports, {} links", cfg.topology.name(),
                        net->hosts, net->switches, net->switch_ports, net->links);
    return m;
  }
  // Before the topology is built only its hosts are known: each has a NIC with its port, a
  // cable (two links) and a ToR port, and every switch routes to it.
  const auto hosts = static_cast<uint64_t>(std::max(cfg.topology.hosts(), 0));
  m.count = hosts;
  m.bytes = sat_mul(hosts, sizeof(Host) + 2 * sizeof(EgressPort) + kPortCounters +
                               2 * sizeof(Link) + kRouteEntry);
  m.why = fmt::format("{}, {} hosts (a lower bound: switches are counted once the topology is "
                      "built)",
                      cfg.topology.name(), hosts);
  return m;
}

// Ports the sampler records: on the built network, or at least the hosts' ToR ports.
uint64_t sampled_ports(const ScenarioConfig& cfg, const NetworkCounts* net) {
  if (net != nullptr) return net->sampled_ports;
  if (cfg.output.sample_ports == "uplinks") return cfg.topology.shape.tiers >= 2 ? 1 : 0;
  return static_cast<uint64_t>(std::max(cfg.topology.hosts(), 0));
}

}  // namespace

const MemoryItem& MemoryEstimate::largest() const {
  FABSIM_CHECK(!items.empty());
  const MemoryItem* best = &items.front();
  for (const auto& m : items) {
    if (m.bytes > best->bytes) best = &m;
  }
  return *best;
}

void MemoryEstimate::add(MemoryItem item) {
  total = sat_add(total, item.bytes);
  items.push_back(std::move(item));
}

MemoryEstimate estimate_memory(const ScenarioConfig& cfg, const NetworkCounts* net) {
  MemoryEstimate e;
  e.network_exact = net != nullptr;
  e.add(network_item(cfg, net));

  const int hosts = net != nullptr ? static_cast<int>(net->hosts) : cfg.topology.hosts();
  const WorkloadDemand d = cfg.workload.kind->demand(cfg.workload.config, hosts);
  {
    // The flow table's records, their copy in the results, the planned specs with the start
    // event each is scheduled with and, for jobs, the runner's owner entry of each flow.
    MemoryItem m{"flow records", d.key, d.why, d.flows, 0, 0};
    m.result_bytes = sat_mul(d.flows, sizeof(FlowRecord));
    m.bytes = sat_mul(d.flows, 2 * sizeof(FlowRecord) + (d.planned > 0 ? 0 : kFlowOwner));
    m.bytes = sat_add(m.bytes, sat_mul(d.planned, sizeof(FlowSpec) + sizeof(Event)));
    e.add(std::move(m));
  }
  if (d.plan_transfers > 0) {
    // Each job's current op: its transfers with their dependency lists, and the runner's
    // per-transfer count of missing dependencies and list of dependents.
    MemoryItem m{"collective plans", d.key, d.why, d.plan_transfers, 0, 0};
    m.bytes = sat_mul(d.plan_transfers,
                      sizeof(Transfer) + sizeof(uint32_t) + sizeof(std::vector<uint32_t>));
    m.bytes = sat_add(m.bytes, sat_mul(d.plan_deps, 2 * sizeof(uint32_t)));
    m.bytes = sat_add(m.bytes, sat_mul(d.ranks, sizeof(uint32_t)));
    e.add(std::move(m));
  }
  if (cfg.output.sample_interval > Time()) {
    // A sample of every sampled port each interval from 0 while the run lasts (at most the
    // stop time), kept by the sampler and copied into the results.
    const uint64_t ports = sampled_ports(cfg, net);
    const auto per_port =
        static_cast<uint64_t>(cfg.stop_time.ps() / cfg.output.sample_interval.ps()) + 1;
    MemoryItem m;
    m.what = "time-series samples";
    m.key = "output.sample_interval";
    m.count = sat_mul(ports, per_port);
    m.result_bytes = sat_mul(m.count, sizeof(PortSample));
    m.bytes = sat_mul(m.count, 2 * sizeof(PortSample));
    m.why = fmt::format("every {} up to simulation.stop_time = {}: {} samples of {}{} port(s) "
                        "(output.sample_ports = \"{}\")",
                        to_string(cfg.output.sample_interval), to_string(cfg.stop_time), per_port,
                        net != nullptr ? "" : "at least ", ports, cfg.output.sample_ports);
    e.add(std::move(m));
  }
  if (cfg.output.trace && d.flows > 0) {
    // At least a send and a receive event per data packet of the traced flows, in the flow
    // table and in the results.
    const auto payload = static_cast<uint64_t>(std::max<int64_t>(cfg.transport.wire.payload, 1));
    uint64_t bytes = d.bytes;
    if (!cfg.output.trace_flows.empty()) {
      const uint64_t traced = std::min<uint64_t>(cfg.output.trace_flows.size(), d.flows);
      bytes = static_cast<uint64_t>(static_cast<long double>(bytes) * traced / d.flows);
    }
    MemoryItem m;
    m.what = "trace events";
    m.key = "output.trace";
    m.count = sat_mul(bytes / payload + 1, 2);
    m.result_bytes = sat_mul(m.count, sizeof(TraceEvent));
    m.bytes = sat_mul(m.count, 2 * sizeof(TraceEvent));
    m.why = fmt::format("a send and a receive event per packet of {} B traced", bytes);
    e.add(std::move(m));
  }
  return e;
}

MemoryEstimate estimate_command_memory(const ScenarioConfig& cfg, unsigned concurrent,
                                       bool keep_results) {
  if (!cfg.sweep.active()) return estimate_memory(cfg);
  // Seeds do not change what a case allocates: one estimate per (collective, size).
  const auto& sw = cfg.sweep;
  const size_t nc = std::max<size_t>(1, sw.collectives.size());
  const size_t ns = std::max<size_t>(1, sw.sizes.size());
  const size_t cases = nc * ns * std::max<size_t>(1, sw.seeds.size());
  MemoryEstimate best;
  bool any = false;
  for (size_t c = 0; c < nc; ++c) {
    for (size_t s = 0; s < ns; ++s) {
      const Collective* col = sw.collectives.empty() ? nullptr : &sw.collectives[c];
      const int64_t* size = sw.sizes.empty() ? nullptr : &sw.sizes[s];
      MemoryEstimate e = estimate_memory(instantiate(cfg, col, size, nullptr));
      if (any && e.total < best.total) continue;  // ties: the later (larger) size
      any = true;
      best = std::move(e);
      best.case_label = fmt::format("{}{}{}", col != nullptr ? collective_name(*col) : "",
                                    col != nullptr && size != nullptr ? " " : "",
                                    size != nullptr ? fmt::format("{} B", *size) : "");
    }
  }
  const uint64_t one = best.total;
  uint64_t kept = 0;
  for (const auto& m : best.items) kept = sat_add(kept, m.result_bytes);
  const uint64_t at_once = std::min<uint64_t>(std::max(concurrent, 1U), cases);
  if (at_once > 1) {
    best.add({"other cases running at once", "--threads",
              fmt::format("{} cases at once, each up to the largest", at_once), at_once - 1,
              sat_mul(at_once - 1, one), 0});
  }
  if (keep_results && cases > 1) {
    best.add({"finished cases' results", "sweep",
              fmt::format("{} cases keep their results until written", cases), cases,
              sat_mul(cases - 1, kept), 0});
  }
  return best;
}

void check_memory(const ScenarioConfig& cfg, const MemoryEstimate& est, uint64_t limit) {
  if (limit == 0 || est.total <= limit) return;
  const MemoryItem& m = est.largest();
  throw ConfigError(
      fmt::format("{}: key '{}': the run needs about {} of memory{}, more than the limit of {} "
                  "(--max-memory): {} {} ({})",
                  cfg.file, m.key, memory_text(est.total),
                  est.case_label.empty() ? "" : fmt::format(" (largest case: {})", est.case_label),
                  memory_text(limit), m.what, memory_text(m.bytes), m.why));
}

uint64_t default_memory_limit() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long page = ::sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return 0;
  return sat_mul(static_cast<uint64_t>(pages), static_cast<uint64_t>(page)) / 2;
}

std::string memory_text(uint64_t bytes) {
  constexpr std::array<const char*, 6> kUnits{"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024) return fmt::format("{} B", bytes);
  auto v = static_cast<long double>(bytes) / 1024;
  size_t u = 0;
  while (v >= 1024 && u + 1 < kUnits.size()) {
    v /= 1024;
    ++u;
  }
  return fmt::format("{:.1f} {}", static_cast<double>(v), kUnits[u]);
}

std::string describe_memory(const MemoryEstimate& est, uint64_t limit) {
  std::string out =
      fmt::format("memory estimate: {}{} (limit {}{})\n", memory_text(est.total),
                  est.case_label.empty() ? "" : fmt::format(", largest case {}", est.case_label),
                  limit == 0 ? "none" : memory_text(limit), limit == 0 ? "" : ", --max-memory");
  for (const auto& m : est.items) {
    out += fmt::format("  {:<28} {:>10}  {}: {}\n", m.what, memory_text(m.bytes), m.key, m.why);
  }
  if (!est.network_exact) {
    out += "  (network and sampled ports: lower bounds until the topology is built; run and "
           "validate check again on the built network)\n";
  }
  return out;
}

uint64_t resident_anonymous_bytes() {
  // statm: size resident shared text lib data dt, in pages; "shared" is the resident pages
  // backed by a file or shared memory.
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return 0;
  unsigned long long size = 0;
  unsigned long long resident = 0;
  unsigned long long shared = 0;
  const int n = std::fscanf(f, "%llu %llu %llu", &size, &resident, &shared);
  std::fclose(f);
  const long page = ::sysconf(_SC_PAGESIZE);
  if (n != 3 || page <= 0 || shared > resident) return 0;
  return sat_mul(resident - shared, static_cast<uint64_t>(page));
}

MemoryWatch::MemoryWatch(std::atomic<int>& flag, uint64_t limit, std::chrono::milliseconds period)
    : flag_(flag), limit_(limit), period_(period) {
  FABSIM_CHECK(period_.count() > 0);
  if (limit_ == 0) return;
  thread_ = std::jthread([this](const std::stop_token& stop) { watch(stop); });
}

MemoryWatch::~MemoryWatch() {
  if (!thread_.joinable()) return;
  thread_.request_stop();  // wakes the wait below
  thread_.join();
}

void MemoryWatch::watch(const std::stop_token& stop) {
  std::unique_lock lock(mutex_);
  while (!stop.stop_requested()) {
    const uint64_t now = resident_anonymous_bytes();
    if (now > limit_) {
      int expected = 0;  // a signal that came first keeps its reason
      if (flag_.compare_exchange_strong(expected, kStopMemory, std::memory_order_relaxed)) {
        reading_.store(now, std::memory_order_release);
        tripped_.store(true, std::memory_order_release);
      }
      return;
    }
    wake_.wait_for(lock, stop, period_, [] { return false; });
  }
}

}  // namespace fabsim
