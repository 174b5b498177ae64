// A scenario: topology, network, routing, transport, workload and output, loaded from TOML,
// validated, and recorded in full (defaults included) in every result file.
// DESIGN.md "Scenarios and results"; the keys are listed by `fabsim list` and docs/SCENARIOS.md.
#pragma once

#include <cstdint>  // seed
#include <string>   // names
#include <vector>   // overrides, flows

#include <nlohmann/json.hpp>  // effective scenario

#include "gse/gse.h"
#include "net/faults.h"
#include "net/switch_config.h"
#include "net/topology.h"
#include "scenario/reader.h"
#include "transport/datagram.h"
#include "transport/roce.h"
#include "transport/flow.h"
#include "workload/job.h"

namespace fabsim {

struct TopologyConfig {
  std::string kind = "leaf_spine";
  LeafSpineConfig leaf_spine;
  SingleSwitchConfig single_switch;
  int hosts() const;
};

struct NetworkConfig {
  SwitchConfig sw;
  int64_t framing_bytes = 20;
  double loss_probability = 0;
  double ber = 0;         // pre-FEC bit error rate of every link
  Fec fec = Fec::kRs544;
};

/// `[security]`: the cost of encryption (docs/SECURITY.md; seed 002 §1.2.3, §2.2.3).
struct SecurityConfig {
  std::string kind = "none";  // none | physec_link | physec_channel | macsec | ipsec | psp
  Time latency;               // per hop (link kinds) or per NIC, each way (ipsec, psp)
  int64_t bytes = 0;          // per frame (macsec) or per packet (ipsec, psp)
  int64_t segment_blocks = 1024;  // physec_channel: 64B/66B blocks per encrypted segment
  bool per_link() const { return kind == "physec_link" || kind == "physec_channel" || kind == "macsec"; }
  /// PHYSec channel-level capacity factor: a segment of N blocks becomes ceil(65 N / 64)
  /// blocks (65B compression packed into 64-bit payloads) plus a D, an S and a T block.
  int64_t scale_num() const { return kind == "physec_channel" ? (65 * segment_blocks + 63) / 64 + 3 : 1; }
  int64_t scale_den() const { return kind == "physec_channel" ? segment_blocks : 1; }
};

/// `[faults]`: the schedule and the Ethernet fabric's reconvergence (docs/FAULTS.md).
struct FaultsConfig {
  Time reconverge_local = Time::ms(1);  // [UNVERIFIED] the switches at a changed cable
  Time reconverge = Time::ms(50);       // [UNVERIFIED] every other switch (BGP + BFD)
  std::vector<FaultSpec> events;
};

struct TransportConfig {
  std::string kind = "datagram";
  WireConfig wire;
  uint8_t tclass = 3;
  DatagramConfig datagram;
  RoceConfig roce;
};

struct WorkloadConfig {
  std::string kind = "permutation";
  int64_t bytes = 0;
  Time start;
  int senders = 0;
  uint32_t receiver = 0;
  std::vector<FlowSpec> flows;  // kind = "flows"
  std::vector<JobSpec> jobs;    // kind = "jobs"
};

/// Lists a scenario runs over, each case an independent simulation (DESIGN.md "Scenarios").
struct SweepConfig {
  std::vector<int64_t> sizes;             // substituted for ops with bytes = "$size"
  std::vector<Collective> collectives;    // substituted for ops with type = "$collective"
  std::vector<uint64_t> seeds;            // each case runs once per seed
  bool active() const { return !sizes.empty() || !collectives.empty() || !seeds.empty(); }
};

struct OutputConfig {
  bool flows_csv = true;
  bool trace = false;
  std::vector<int64_t> trace_flows;  // empty = every flow when trace is on
  Time sample_interval;            // 0 = no time series
  bool misorder = false;           // meter adjacent-pair misordering at destination leaves
  std::string sample_ports = "uplinks";  // uplinks | downlinks | all
};

struct ScenarioConfig {
  std::string file;
  std::string name;
  std::string description;
  uint64_t seed = 1;
  Time stop_time;
  TopologyConfig topology;
  NetworkConfig network;
  std::string routing = "ecmp";    // ecmp | spray | flowlet (ethernet fabric)
  Time flowlet_gap = Time::us(50);
  std::string fabric = "ethernet";  // ethernet | gse
  GseConfig gse;
  FaultsConfig faults;
  SecurityConfig security;
  TransportConfig transport;
  WorkloadConfig workload;
  OutputConfig output;
  SweepConfig sweep;
  nlohmann::ordered_json effective;  // every key with its effective value
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

/// What `fabsim list` prints: the registries and every parameter with unit and default.
struct Catalogue {
  struct Entry {
    std::string name;
    std::string description;
    std::vector<ParamDoc> params;
  };
  std::vector<Entry> topologies;
  std::vector<Entry> transports;
  std::vector<Entry> policies;
  std::vector<Entry> workloads;
  std::vector<ParamDoc> common;  // simulation, network, output
};
Catalogue describe_catalogue();

}  // namespace fabsim
