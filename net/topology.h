// The topology contract (DESIGN.md "Seams"; issue 13 item 2). Every topology is a Clos of
// switch tiers: tier 1 is the edge (ToR, leaf or rail switch) where hosts attach, tiers above
// it are aggregation and spine/core. A builder yields the switches with their role, tier and
// pod, the host attachment, and every inter-switch cable (one lower and one upper end); routing
// is up/down over equal-cost groups for any number of tiers (`install_routes`). Everything
// above the topology (GSE's port ids and transit capacity, fault repair, reports, samplers)
// asks this contract; nobody computes leaf or spine numbers.
//
// Kinds: leaf_spine and rail (two tiers, seed 002 §3.1 and rail-optimized clusters),
// fat_tree (k-ary three tiers, Al-Fares et al. SIGCOMM'08), single_switch (one tier).
#pragma once

#include <cstdint>      // counts
#include <functional>   // selector factory, cable views (build and reconvergence time only)
#include <memory>       // unique_ptr
#include <string>       // names
#include <string_view>  // kind names
#include <vector>       // node lists

#include <nlohmann/json.hpp>  // summary block

#include "config/reader.h"
#include "config/registry.h"
#include "net/network.h"
#include "net/path_selector.h"
#include "net/switch_config.h"

namespace fabsim {

inline constexpr uint32_t kNoCable = ~0U;
inline constexpr uint32_t kNotTor = ~0U;

enum class SwitchRole : uint8_t {
  kTor,          // tier 1: hosts attach here (ToR, leaf, rail switch)
  kAggregation,  // a middle tier of a three-tier Clos
  kSpine,        // the top tier (spine, core)
};

/// A duplex cable between a switch and one in the tier above (the unit that fails in
/// docs/FAULTS.md).
struct Cable {
  uint32_t lower = 0;       // switch id, tier t
  uint32_t upper = 0;       // switch id, tier t + 1
  uint16_t lower_port = 0;  // on the lower switch
  uint16_t upper_port = 0;  // on the upper switch
  uint32_t k = 0;           // parallel link number between these two switches
  Link* up = nullptr;       // lower -> upper
  Link* down = nullptr;     // upper -> lower
  std::string base;         // "<lower name>-<upper name>"
  bool parallel = false;    // the pair has more than one link: the name carries "#<k>"
  std::string name() const { return parallel ? base + "#" + std::to_string(k) : base; }
  /// Both directions carry light (a cable is down when either direction is).
  bool alive() const { return up->up() && down->up(); }
};

/// What a builder made: the contract every layer above reads.
struct TopologyInfo {
  std::string kind;
  int hosts = 0;
  int tiers = 0;                      // switch tiers: 1 single switch, 2 leaf-spine, 3 fat tree
  std::vector<SwitchRole> role;       // by switch id
  std::vector<uint8_t> tier;          // by switch id (1 = ToR)
  std::vector<uint32_t> pod;          // by switch id (0 without pods)
  std::vector<uint32_t> tors;         // switch ids of tier 1, by ToR index
  std::vector<uint32_t> tor_index;    // by switch id: its ToR index, or kNotTor
  std::vector<uint32_t> tor_of_host;  // per host: ToR index
  std::vector<uint16_t> host_port;    // per host: its port on its ToR
  std::vector<Cable> cables;
  std::vector<std::vector<uint32_t>> port_cable;   // [switch id][port]: cable or kNoCable
  std::vector<std::vector<uint32_t>> up_cables;    // [switch id]: cables to the tier above
  std::vector<std::vector<uint32_t>> down_cables;  // [switch id]: cables to the tier below
  double speedup = 0;            // ToR uplink : downlink capacity (0 for a single switch)
  nlohmann::ordered_json extra;  // kind-specific figures for the summary (e.g. fat tree k)

  uint32_t switch_count() const { return static_cast<uint32_t>(role.size()); }
  uint32_t tor_switch_of_host(uint32_t host) const { return tors[tor_of_host[host]]; }
  int hosts_per_tor() const;
  /// Switch ids of the top tier (spines, cores), in id order.
  std::vector<uint32_t> top_tier() const { return switches_in_tier(tiers); }
  /// Switch ids of tier `t`, in id order.
  std::vector<uint32_t> switches_in_tier(int t) const;
  /// The ports of `sw` that lead to the tier above, in cable order.
  std::vector<uint16_t> uplink_ports(uint32_t sw) const;
  bool is_uplink(uint32_t sw, uint16_t port) const;
  /// The cable called `name` (Cable::name; "#0" may be left out), or -1.
  int64_t find_cable(const std::string& name) const;
  /// A few example cable names, for error messages.
  std::string example_cables() const;
  /// The summary.json "topology" block.
  nlohmann::ordered_json summary() const;
  /// One line for the summary table.
  std::string describe() const;
};

/// Up/down reachability of every ToR from every switch over the cables alive in one view:
/// `down(sw, t)` going only down, `any(sw, t)` up then down (valley-free Clos paths).
class ClosReach {
 public:
  ClosReach(const TopologyInfo& topo, const std::vector<uint8_t>& alive);
  bool down(uint32_t sw, uint32_t tor) const { return bit(down_, sw, tor); }
  bool any(uint32_t sw, uint32_t tor) const { return bit(any_, sw, tor); }

 private:
  bool bit(const std::vector<uint64_t>& v, uint32_t sw, uint32_t tor) const {
    return ((v[sw * words_ + tor / 64] >> (tor % 64)) & 1U) != 0;
  }
  size_t words_;
  std::vector<uint64_t> down_;
  std::vector<uint64_t> any_;
};

/// The equal-cost next hops of switch `sw` towards ToR `tor` (not its own) in one view: down
/// where the ToR is below, else up through switches that reach it going down, else up through
/// any that reach it. Ports in cable order; empty when unreachable.
std::vector<uint16_t> next_hops(const TopologyInfo& topo, const ClosReach& reach,
                                const std::vector<uint8_t>& alive, uint32_t sw, uint32_t tor);

/// Whether switch `sw` believes cable `cable` is alive (a routing view).
using CableView = std::function<bool(uint32_t sw, size_t cable)>;
/// Installs equal-cost up/down routes on every switch over the cables alive now, or with
/// `view` each switch over the cables alive in its own view; with `only`, just those `count`
/// switches (by id). A destination with no path gets an empty set (unroutable).
void install_routes(Network& net, const TopologyInfo& topo, const CableView& view = {},
                    const uint32_t* only = nullptr, size_t count = 0);

/// Creates the path selector of switch number `switch_id` (build time only).
using SelectorFactory = std::function<std::unique_ptr<PathSelector>(uint32_t switch_id)>;

/// What every builder needs besides its own config.
struct TopologyEnv {
  SwitchConfig sw;
  int64_t framing_bytes = 20;
  SelectorFactory selector;
};

/// Hosts as the workload sees them: GPUs grouped into servers (placement by server).
struct HostShape {
  int hosts = 0;
  int servers = 0;  // 0: the topology has no server grouping
  int gpus_per_server = 0;
  Rate nic_rate;  // each host's link rate (DCQCN presets scale with it)
  int tiers = 0;  // switch tiers
};

/// The topology family: one object per kind, registered in scenario/kinds.cpp.
class TopologyKind {
 public:
  virtual ~TopologyKind() = default;
  virtual std::string_view name() const = 0;
  virtual std::string_view description() const = 0;
  /// Declares and reads the kind's keys of `[topology]` (describe mode: declares only).
  virtual KindConfig load(Section& s) const = 0;
  virtual HostShape shape(const KindConfig& cfg) const = 0;
  /// Builds switches, hosts and links into `net`, installs routes and path selectors.
  virtual TopologyInfo build(Network& net, const KindConfig& cfg, const TopologyEnv& env) const = 0;
};

// ---- the shipped kinds ------------------------------------------------------------------------

enum class Attach : uint8_t { kServer, kRail };

/// Two tiers after seed 002 §3.1: servers of G GPUs, the NICs of a server on one leaf ("server"
/// attach) or GPU k of every server on rail leaf k ("rail" attach); every leaf has
/// `links_per_spine` uplinks to each spine. Speed-up (加速比) = uplink / downlink capacity.
struct LeafSpineConfig {
  int servers = 4;
  int gpus_per_server = 8;
  int servers_per_leaf = 1;  // server attach: servers sharing one leaf
  Attach attach = Attach::kServer;
  int spines = 4;
  int links_per_spine = 1;
  Rate nic_rate = Rate::gbps(100);
  Rate uplink_rate = Rate::gbps(400);
  Time host_link_delay = Time::us(1);
  Time fabric_link_delay = Time::us(1);
  std::vector<Time> spine_delays;   // per spine, overrides fabric_link_delay (unequal paths)
  const char* leaf_name = "leaf";   // switch names: "rail" for the rail kind
  const char* kind = "leaf_spine";  // the kind that built it, for reports
  int leaves() const;
  int hosts_per_leaf() const;
};

struct SingleSwitchConfig {
  int hosts = 16;
  Rate nic_rate = Rate::gbps(100);
  Time host_link_delay = Time::us(1);
};

/// A k-ary fat tree (three tiers, k pods): per pod k/2 ToRs and k/2 aggregation switches, and
/// (k/2)^2 / agg_oversubscription cores. Oversubscription as host count: a ToR has
/// k/2 x tor_oversubscription hosts for its k/2 uplinks; an aggregation switch has k/2 ToR
/// links and (k/2) / agg_oversubscription core links.
struct FatTreeConfig {
  int k = 4;
  int pods = 0;  // pods built (0 = k); fewer than k leaves core ports unused (HPCC's fat.txt)
  double tor_oversubscription = 1;
  double agg_oversubscription = 1;
  int gpus_per_server = 1;  // consecutive hosts of one ToR form a server
  Rate nic_rate = Rate::gbps(100);
  Rate link_rate = Rate::gbps(100);  // every switch-switch link
  Time host_link_delay = Time::us(1);
  Time fabric_link_delay = Time::us(1);
  int hosts_per_tor() const;
  int agg_uplinks() const;
  int pod_count() const { return pods > 0 ? pods : k; }
  int hosts() const { return pod_count() * (k / 2) * hosts_per_tor(); }
};

TopologyInfo build_leaf_spine(Network& net, const LeafSpineConfig& cfg, const SwitchConfig& sw,
                              int64_t framing_bytes, const SelectorFactory& sel);
TopologyInfo build_single_switch(Network& net, const SingleSwitchConfig& cfg,
                                 const SwitchConfig& sw, int64_t framing_bytes,
                                 const SelectorFactory& sel);
TopologyInfo build_fat_tree(Network& net, const FatTreeConfig& cfg, const SwitchConfig& sw,
                            int64_t framing_bytes, const SelectorFactory& sel);

std::unique_ptr<TopologyKind> make_leaf_spine_kind();
std::unique_ptr<TopologyKind> make_rail_kind();
std::unique_ptr<TopologyKind> make_fat_tree_kind();
std::unique_ptr<TopologyKind> make_single_switch_kind();

}  // namespace fabsim
