// The network: owns hosts, switches and links, and wires them together. Built by a topology
// builder (topology.h); read by the results layer through its counters.
#pragma once

#include <cstdint>  // ids
#include <memory>   // unique_ptr ownership
#include <string>   // names
#include <vector>   // components

#include "core/simulation.h"
#include "net/host.h"
#include "net/link.h"
#include "net/switch.h"

namespace fabsim {

class Network {
 public:
  explicit Network(Simulation& sim) : sim_(sim) {}
  Network(const Network&) = delete;
  Network& operator=(const Network&) = delete;

  Host& add_host(std::string name);
  Switch& add_switch(const SwitchConfig& cfg, std::string name);
  /// A duplex cable: a host NIC to a switch port (links kHostUp and kHostDown). Returns the
  /// switch's port index.
  uint16_t connect(Host& h, Switch& s, const Link::Config& cfg);
  /// A duplex cable between two switches (two kFabric links). Returns the port indices {on a, on
  /// b}.
  std::pair<uint16_t, uint16_t> connect(Switch& a, Switch& b, const Link::Config& cfg);

  Simulation& sim() { return sim_; }
  EndpointTable& endpoints() { return endpoints_; }
  size_t host_count() const { return hosts_.size(); }
  Host& host(size_t i) { return *hosts_[i]; }
  const Host& host(size_t i) const { return *hosts_[i]; }
  size_t switch_count() const { return switches_.size(); }
  Switch& sw(size_t i) { return *switches_[i]; }
  const Switch& sw(size_t i) const { return *switches_[i]; }
  const std::vector<ArenaPtr<Link>>& links() const { return links_; }

  /// End of run: closes pause intervals and returns packets still queued or in flight.
  void finish();

 private:
  Link* make_link(const Link::Config& cfg, Node* dst, uint16_t dst_port, LinkRole role);
  Simulation& sim_;
  EndpointTable endpoints_;
  std::vector<std::unique_ptr<Host>> hosts_;
  std::vector<std::unique_ptr<Switch>> switches_;
  std::vector<ArenaPtr<Link>> links_;  // in the simulation's arena (line-aligned)
};

}  // namespace fabsim
