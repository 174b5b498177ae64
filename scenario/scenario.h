// A scenario: topology, network, routing, transport, workload and output, loaded from TOML,
// validated, and recorded in full (defaults included) in every result file.
// DESIGN.md "Scenarios and results"; the keys are listed by `fabsim list` and docs/SCENARIOS.md.
#pragma once

#include <cstdint>  // seed
#include <string>   // names
#include <vector>   // overrides, flows

#include <nlohmann/json.hpp>  // effective scenario

#include "config/reader.h"
#include "gse/gse.h"
#include "net/faults.h"
#include "net/int_stamp.h"
#include "net/switch_config.h"
#include "net/topology.h"
#include "scenario/kinds.h"
#include "transport/datagram.h"
#include "transport/flow.h"
#include "transport/roce.h"
#include "workload/job.h"

namespace fabsim {

/// `[topology]`: the kind, its typed config and the hosts it yields (workloads check against it).
struct TopologyConfig : Choice<TopologyKind> {
  HostShape shape;
  int hosts() const { return shape.hosts; }
};

struct NetworkConfig {
  SwitchConfig sw;
  int64_t framing_bytes = 20;
  LossModel loss;                          // `network.loss_probability` or `[network.loss]`
  LossScope loss_links = LossScope::kAll;  // the links `loss` applies to
  bool nic_fifo = false;                   // `network.nic_arbiter = "fifo"` (net/host.h)
  double ber = 0;                          // pre-FEC bit error rate of every link
  Fec fec = Fec::kRs544;
  /// `[network.trim]`: packet trimming on every switch queue of the data classes (REFERENCE.md
  /// §4.4; net/trim.h), installed by Run::install_trim.
  struct Trim {
    bool enabled = false;
    Bytes threshold;               // 0 = one BDP: NIC rate x the fabric's longest base round trip
    double last_hop_factor = 1.5;  // threshold multiplier on ToR ports towards hosts
    bool on_overflow = true;       // trim, not drop, when the shared buffer is full
    bool count_on_wire = false;    // the frame being serialized counts in the queue
    bool random_victim = false;    // trim the arrival or the last queued packet, at random
    Bytes size;                    // frame bytes a trimmed packet keeps (0 = all its headers)
    Rate reference_rate;           // > 0: the threshold is for a port of this rate and scales
                                   // with each port's rate at the time (0 = fixed)
    Bytes header_queue;            // control-class bytes above which a trimmed header is
                                   // dropped (0 = 2 x the port's threshold, uet-htsim)
    double share = 1.0;  // largest share of a port's bytes trimmed headers take while data waits
  } trim;
  /// `[network.int]`: the resolution of the INT record's fields (net/int_stamp.h). Hardware
  /// carries them in fixed-width fields; HPCC's ns-3 simulator keeps time in ns and bytes and
  /// queue length in units of 128 and 80 B times INT_MULTI (4 at 100G). 0 = exact.
  IntUnits int_units;
};

/// `[faults]`: the schedule and the Ethernet fabric's reconvergence (docs/FAULTS.md).
struct FaultsConfig {
  Time reconverge_local = Time::ms(1);  // [UNVERIFIED] the switches at a changed cable
  Time reconverge = Time::ms(50);       // [UNVERIFIED] every other switch (BGP + BFD)
  std::vector<FaultSpec> events;
};

/// `[transport]`: the kind with its keys, and the wire keys every kind shares.
struct TransportConfig : Choice<TransportKind> {
  WireConfig wire;
  uint8_t tclass = 3;
};

/// Lists a scenario runs over, each case an independent simulation (DESIGN.md "Scenarios").
struct SweepConfig {
  std::vector<int64_t> sizes;           // substituted for ops with bytes = "$size"
  std::vector<Collective> collectives;  // substituted for ops with type = "$collective"
  std::vector<uint64_t> seeds;          // each case runs once per seed
  bool active() const { return !sizes.empty() || !collectives.empty() || !seeds.empty(); }
};

struct OutputConfig {
  bool flows_csv = true;
  bool trace = false;
  std::vector<int64_t> trace_flows;      // empty = every flow when trace is on
  Time sample_interval;                  // 0 = no time series
  bool misorder = false;                 // meter adjacent-pair misordering at destination leaves
  std::string sample_ports = "uplinks";  // uplinks | downlinks | all
  bool slowdown = false;                 // slowdown.csv for any workload (cdf: always)
  int slowdown_buckets = 20;             // flow-size buckets of equal flow count
};

struct ScenarioConfig {
  std::string file;
  std::string name;
  std::string description;
  uint64_t seed = 1;
  Time stop_time;
  TopologyConfig topology;
  NetworkConfig network;
  Choice<PathPolicyKind> routing;  // `[routing] policy`
  Choice<FabricKind> fabric;       // `[fabric] kind`
  FaultsConfig faults;
  Choice<SecurityKind> security;  // `[security] kind`
  TransportConfig transport;
  Choice<WorkloadKind> workload;  // `[workload] kind`
  OutputConfig output;
  SweepConfig sweep;
  nlohmann::ordered_json effective;  // every key with its effective value
  /// What the loader warns about (degenerate but runnable; docs/SCENARIOS.md), each naming the
  /// file and the key; the command line prints them on stderr.
  std::vector<std::string> warnings;
  /// Bytes a run may need (scenario/resources.h); 0 = no check. Not a scenario key: the command
  /// line sets it from --max-memory, and Run checks it again on the built network.
  uint64_t memory_limit = 0;
};

/// Loads and validates `path`, applying `overrides` ("key=value") and an optional seed.
/// Throws ConfigError naming the file, the key and what was expected.
ScenarioConfig load_scenario(const std::string& path, const std::vector<std::string>& overrides,
                             const uint64_t* seed_override = nullptr);
/// Loads from TOML text (tests); `name` stands for the file in messages.
ScenarioConfig load_scenario_text(const std::string& text, const std::string& name,
                                  const std::vector<std::string>& overrides = {});

/// One case of a sweep: the scenario with "$collective" and "$size" filled and the seed set.
ScenarioConfig instantiate(const ScenarioConfig& base, const Collective* collective,
                           const int64_t* size, const uint64_t* seed);

/// What `fabsim list` prints and docs/SCENARIOS.md shows: every family with its kinds and
/// their keys, then the common keys, all from the kinds' own declarations.
struct Catalogue {
  struct Entry {
    std::string name;
    std::string description;
    std::vector<ParamDoc> params;
  };
  struct Family {
    std::string title;  // e.g. "topologies (topology.kind)"
    std::vector<Entry> kinds;
  };
  std::vector<Family> families;
  std::vector<ParamDoc> common;  // simulation, network, output, sweep, faults
};
Catalogue describe_catalogue();

}  // namespace fabsim
