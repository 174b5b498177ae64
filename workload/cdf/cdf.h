// The `cdf` workload kind (issue 16 item 3; REFERENCE.md §9.1.7): flow sizes drawn from a
// flow-size CDF, each host an independent Poisson source at a target fraction of its NIC rate,
// for a window of time, to a uniformly random other host (HPCC's traffic generator) or to a fixed
// random partner. The distributions of the papers (web search, Facebook Hadoop, Alibaba storage,
// Google RPC) are shipped in workload/cdf/*.txt and compiled in. Registered in
// scenario/kinds.cpp; docs/WORKLOADS.md "Flow-size distributions".
#pragma once

#include <memory>       // unique_ptr
#include <optional>     // shipped lookups
#include <string>       // source name
#include <string_view>  // names
#include <vector>       // flows

#include "core/rng.h"
#include "core/units.h"
#include "transport/flow.h"
#include "workload/cdf/size_cdf.h"
#include "workload/kind.h"

namespace fabsim {

/// Where each host sends (`workload.pattern`).
enum class CdfPattern : uint8_t {
  kUniform,      // each flow to a host drawn uniformly from the other hosts (HPCC)
  kPermutation,  // every flow of a host to its partner in one random derangement
};

struct CdfWorkloadConfig {
  std::string source = "websearch";  // `cdf` as given: a shipped name or a file
  SizeCdf cdf;
  CdfInterpolation interpolation = CdfInterpolation::kLinear;
  CdfPattern pattern = CdfPattern::kUniform;
  double load = 0.3;            // fraction of each host's NIC rate
  Time duration = Time::ms(1);  // arrivals fall in [start, start + duration)
  Time start;
  Rate nic_rate = Rate::gbps(100);  // the topology's host link rate
  /// Each flow its own connection (FlowSpec::channel numbers a host pair's flows in start
  /// order: a QP, a PDC each), as HPCC's ns-3 and uet-htsim open one per flow; false: a host
  /// pair's flows share one, in order.
  bool connection_per_flow = true;

  /// Mean size under the chosen interpolation (bytes).
  double mean_bytes() const { return cdf.mean(interpolation); }
  /// Mean gap between two arrivals at one host, in picoseconds: 8 mean / (rate x load).
  double mean_gap_ps() const;
};

/// The flows of one run on `hosts` hosts, by start time (ties by source host). Each host draws
/// its gaps (exponential, rounded to the picosecond; the first one after `start`), sizes and
/// destinations from its own stream, seeded from `rng`; the permutation is drawn from `rng`
/// first. An arrival at or after start + duration is not made.
std::vector<FlowSpec> cdf_flows(const CdfWorkloadConfig& c, int hosts, Rng& rng);

/// The offered load of `flows`: their bytes / (hosts x nic_rate x duration).
double offered_load(const CdfWorkloadConfig& c, int hosts, const std::vector<FlowSpec>& flows);

/// The shipped distributions (workload/cdf/*.txt, compiled in): names in order, and one's text.
std::vector<std::string_view> shipped_cdf_names();
std::optional<std::string_view> shipped_cdf(std::string_view name);

std::unique_ptr<WorkloadKind> make_cdf_kind();

}  // namespace fabsim
