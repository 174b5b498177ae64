// Shared by the topology builders: records every switch, host attachment and cable into the
// topology contract as the network is wired, then indexes it, installs up/down routes and the
// path selectors (topology.h).
#pragma once

#include <cstdint>  // ids
#include <string>   // names

#include "net/topology.h"

namespace fabsim {

class ClosBuilder {
 public:
  ClosBuilder(Network& net, std::string kind, const SwitchConfig& sw, int64_t framing_bytes);
  /// A link configuration with the builder's framing (loss models are set on the built
  /// network, scenario/runner.cpp).
  Link::Config link(Rate rate, Time delay) const;
  Host& add_host(std::string name) { return net_.add_host(std::move(name)); }
  /// Adds a switch; ToRs are numbered in the order they are added.
  Switch& add_switch(std::string name, SwitchRole role, int tier, uint32_t pod = 0);
  /// Connects host `h` to ToR switch `tor` (a switch id).
  void attach(uint32_t h, uint32_t tor, const Link::Config& link);
  /// A cable from `lower` up to `upper` (switch ids, adjacent tiers); `parallel` when the pair
  /// has several links (the name carries "#k").
  void connect(uint32_t lower, uint32_t upper, const Link::Config& link, uint32_t k = 0,
               bool parallel = false);
  /// Indexes the contract, installs routes, path selectors and buffer thresholds.
  TopologyInfo finish(const SelectorFactory& sel);
  TopologyInfo& info() { return info_; }

 private:
  Network& net_;
  SwitchConfig sw_;
  int64_t framing_;
  TopologyInfo info_;
};

}  // namespace fabsim
