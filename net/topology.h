// Topology builders. Every GPU has its own NIC port (a host). Leaf-spine after seed 002 §3.1:
// servers of G GPUs, the NICs of a server on one leaf ("server" attach) or GPU k of every
// server on rail leaf k ("rail" attach); every leaf has `links_per_spine` uplinks to each spine.
// The leaf "speed-up" (加速比) is uplink capacity / downlink capacity.
#pragma once

#include <cstdint>     // counts
#include <functional>  // selector factory (build time only)
#include <memory>      // unique_ptr
#include <string>      // description
#include <vector>      // node lists

#include "net/network.h"
#include "net/path_selector.h"
#include "net/switch_config.h"

namespace fabsim {

enum class Attach : uint8_t { kServer, kRail };

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
  std::vector<Time> spine_delays;  // per spine, overrides fabric_link_delay (unequal paths)
};

struct SingleSwitchConfig {
  int hosts = 16;
  Rate nic_rate = Rate::gbps(100);
  Time host_link_delay = Time::us(1);
};

/// Creates the path selector of switch number `switch_id` (build time only).
using SelectorFactory = std::function<std::unique_ptr<PathSelector>(uint32_t switch_id)>;

/// A duplex leaf-spine cable (the unit that fails in docs/FAULTS.md).
struct Cable {
  uint32_t leaf = 0;        // leaf index
  uint32_t spine = 0;       // spine index
  uint32_t k = 0;           // parallel link number between this leaf and spine
  uint16_t leaf_port = 0;   // on the leaf switch
  uint16_t spine_port = 0;  // on the spine switch
  Link* up = nullptr;       // leaf -> spine
  Link* down = nullptr;     // spine -> leaf
  /// "leaf<l>-spine<s>", with "#<k>" when there are parallel links.
  std::string name(bool parallel) const;
  /// Both directions carry light (a cable is down when either direction is).
  bool alive() const { return up->up() && down->up(); }
};

/// What a builder made, for reports.
struct TopologyInfo {
  std::string kind;
  int hosts = 0;
  int leaves = 0;
  int spines = 0;
  int hosts_per_leaf = 0;
  double speedup = 0;  // leaf uplink : downlink capacity (0 for a single switch)
  std::vector<uint32_t> leaf_of_host;
  std::vector<uint16_t> host_port;       // per host: its port on its leaf
  std::vector<uint32_t> leaf_switches;   // switch ids
  std::vector<uint32_t> spine_switches;  // switch ids
  std::vector<std::vector<uint16_t>> leaf_uplinks;  // per leaf: its uplink port indices
  int links_per_spine = 0;
  std::vector<Cable> cables;                        // leaf-major: leaf, spine, k
  std::vector<std::vector<uint32_t>> uplink_cable;  // per leaf, per port: cable index (or ~0)
  std::vector<std::vector<uint32_t>> spine_cable;   // per spine, per port: cable index
  /// The cable called `name` (Cable::name), or -1.
  int64_t find_cable(const std::string& name) const;
};

/// Installs equal-cost routes on every switch of a leaf-spine network over the cables that
/// are alive now: a leaf uses the live uplinks to spines that still reach the destination's
/// leaf; a spine uses its live links to that leaf. No path leaves an empty set (unreachable).
/// Whether switch `sw` believes cable `cable` is alive (a routing view).
using CableView = std::function<bool(uint32_t sw, size_t cable)>;
/// With `view`, each switch routes over the cables alive in its own view; with `only`, just
/// those `count` switches (by switch id) are updated.
void install_leaf_spine_routes(Network& net, const TopologyInfo& info, const CableView& view = {},
                               const uint32_t* only = nullptr, size_t count = 0);

TopologyInfo build_leaf_spine(Network& net, const LeafSpineConfig& cfg, const SwitchConfig& sw,
                              int64_t framing_bytes, double loss, const SelectorFactory& sel);
TopologyInfo build_single_switch(Network& net, const SingleSwitchConfig& cfg,
                                 const SwitchConfig& sw, int64_t framing_bytes, double loss,
                                 const SelectorFactory& sel);

}  // namespace fabsim
