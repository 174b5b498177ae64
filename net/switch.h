// A switch: ingress accounting in a shared buffer with per-(ingress port, class) PFC and
// headroom (REFERENCE.md §1.3, after the HPCC ns-3 SwitchMmu), forwarding over equal-cost next
// hops chosen by a PathSelector, and egress ports with RED/ECN marking at dequeue (§1.4).
// Control-class packets (PFC, ACK, CNP) bypass admission, as in the reference.
// Per port and queue, hooks (net/hooks.h) add admission verdicts (drop, trim, mark) and
// dequeue actions (INT); RED/ECN is itself the dequeue hook the switch installs by default.
#pragma once

#include <array>        // per-class counters
#include <cstdint>      // byte counters
#include <memory>       // unique_ptr ports and hooks
#include <span>         // set_routes
#include <string>       // name
#include <type_traits>  // is_base_of (adopt_hook)
#include <vector>       // ports, routes, hooks

#include "core/rng.h"
#include "core/scheduler.h"
#include "core/simulation.h"
#include "net/hooks.h"
#include "net/node.h"
#include "net/path_selector.h"
#include "net/port.h"
#include "net/red.h"
#include "net/switch_config.h"

namespace fabsim {

class Switch : public Node, public EventTarget {
 public:
  Switch(Simulation& sim, const SwitchConfig& cfg, uint32_t id, std::string name);

  /// Adds an egress port transmitting on `out`; returns its index.
  uint16_t add_port(Link* out);
  /// Next-hop ports per destination host (index = host id); an empty set means unreachable.
  /// Hosts whose sets are equal share one group. Many hosts may point at the same set (every
  /// host behind one ToR): that is cheaper to build than a copy per host.
  void set_routes(std::span<const std::vector<uint16_t>* const> per_host);
  void set_path_selector(std::unique_ptr<PathSelector> sel) { selector_ = std::move(sel); }
  PathSelector* path_selector() const { return selector_.get(); }
  /// Adds a stage between path selection and admission (run in the order added).
  void add_extension(std::unique_ptr<SwitchExtension> ext) {
    extensions_.push_back(std::move(ext));
  }
  /// Admits and enqueues a packet an extension held (its in_port is already set).
  void inject(Packet* p, uint16_t out_port);
  /// Charges a packet an extension will hold (a VOQ) to its ingress port, with PFC towards the
  /// sender as for any buffered packet: the same buffer admission as a queued packet, without
  /// an egress queue's limit. False (and a counted drop) if the buffer refuses it.
  bool hold(Packet* p);
  /// Enqueues a packet charged by hold() on an egress port.
  void send_held(Packet* p, uint16_t out_port) { ports_[out_port].egress->enqueue(p); }
  uint64_t hold_drops() const { return hold_drops_; }
  /// The switch's RED/ECN marker (one random stream): its egress queues mark through it, and
  /// so does a VOQ held outside the egress ports (gse/dgsq.cpp), with its own thresholds and
  /// whether or not network.ecn is enabled (fabric.gse.voq_ecn decides there).
  RedMarker& red_marker() { return marker_; }

  /// Takes ownership of a hook so it lives as long as the switch; returns it for installing.
  template <typename H> H& adopt_hook(std::unique_ptr<H> h) {
    H& ref = *h;
    if constexpr (std::is_base_of_v<AdmissionHook, H>) {
      admission_hooks_.push_back(std::move(h));
    } else {
      dequeue_hooks_.push_back(std::move(h));
    }
    return ref;
  }
  /// Installs an admission hook on queue `cls` of `port` (replacing any). Control-class packets
  /// bypass admission, so `cls` is a data class.
  void set_admission_hook(uint16_t port, uint8_t cls, AdmissionHook* h);
  /// Adds a dequeue hook on queue `cls` of `port`, after those already there (RED/ECN first
  /// when network.ecn is enabled).
  void add_dequeue_hook(uint16_t port, uint8_t cls, DequeueHook* h);
  /// Frame bytes a trimmed packet keeps (0, the default: all of its headers), and beyond them
  /// the fabric header's `fabric_header` bytes on a packet that carries one (the edge strips
  /// them before the host, which then gets `bytes`). See trim_to_header.
  void set_trimmed_size(uint32_t bytes, uint32_t fabric_header = 0) {
    trimmed_size_ = bytes;
    trimmed_fabric_header_ = fabric_header;
  }
  uint32_t trimmed_size() const { return trimmed_size_; }
  /// Port `port` marks no ECN (removes the switch's RED hook from its data classes; call
  /// before other dequeue hooks are added).
  void disable_ecn(uint16_t port);
  /// The RED thresholds become `kmin` and `kmax` (network.ecn.kmin_bdp: known once the fabric
  /// is built); before the run starts.
  void set_ecn_thresholds(Bytes kmin, Bytes kmax);
  /// Packets dropped because no route to their destination was left (failed links).
  uint64_t unroutable() const { return unroutable_; }
  uint64_t unroutable_bytes() const { return unroutable_bytes_; }
  Time last_unroutable() const { return last_unroutable_; }
  /// The ports this switch currently uses towards host `dst`.
  std::vector<uint16_t> routes_to(uint32_t dst) const {
    const RouteGroup g = groups_[route_group_[dst]];
    return {group_ports_.begin() + g.first, group_ports_.begin() + g.first + g.count};
  }
  /// End of run: extensions return what they hold.
  void finish_extensions();
  /// Computes headroom and thresholds once all ports exist.
  void finalize();
  /// The host NIC rate that `scale_alpha` scales from (set by the topology builder; until
  /// then, the switch's slowest port).
  void set_nic_rate(Rate r) { nic_rate_ = r; }

  void receive(Packet* p, uint16_t port) override;
  // Prefetch hints (net/node.h): what a packet's arrival reads (switch.cpp), and the ingress
  // counters its departure credits.
  void prefetch_receive(const Packet& p, uint16_t port) const override;
  void prefetch_route(const Packet& p) const override {
    if (p.dst < route_group_.size()) __builtin_prefetch(&route_group_[p.dst]);
  }
  void prefetch_dequeue(const Packet& p) const override {
    if (p.in_port < ports_.size()) __builtin_prefetch(&ports_[p.in_port].buf[p.tclass & 7U]);
  }
  void on_dequeue(uint16_t port, Packet& p) override;
  Packet* pull(uint16_t /*port*/, uint8_t /*paused_mask*/) override { return nullptr; }
  void on_event(uint32_t tag, uint32_t gen) override;
  const std::string& name() const override { return name_; }

  size_t port_count() const { return ports_.size(); }
  /// Buffer bytes set aside for PFC headroom (every port x lossless class) and for the
  /// per-port reserve; the shared pool is what is left of the buffer (after finalize()).
  int64_t total_headroom() const { return total_headroom_; }
  int64_t total_reserve() const { return total_reserve_; }
  int64_t buffer_bytes() const { return cfg_.buffer.size.count(); }
  /// Wiring is done: releases the port table's spare capacity (a vector grown by doubling
  /// holds up to twice the ports). Before the run only: ports move.
  void shrink_ports() {
    ports_.shrink_to_fit();
    egress_.shrink_to_fit();
  }
  EgressPort& port(size_t i) { return *ports_[i].egress; }
  const EgressPort& port(size_t i) const { return *ports_[i].egress; }
  uint32_t id() const { return id_; }

  // Buffer state, for tests and observability.
  int64_t ingress_bytes(uint16_t port, uint8_t cls) const { return ports_[port].buf[cls].ingress; }
  int64_t headroom_bytes(uint16_t port, uint8_t cls) const { return ports_[port].buf[cls].hdrm; }
  int64_t headroom_size(uint16_t port) const { return ports_[port].headroom; }
  int64_t shared_used() const { return shared_used_; }
  int64_t buffer_used() const { return buffer_used_; }
  bool xoff_sent(uint16_t port, uint8_t cls) const { return (ports_[port].xoff_mask >> cls) & 1U; }
  /// Pause frames for class `cls` queued on `port` that have not started onto the wire.
  uint16_t pfc_waiting(uint16_t port, uint8_t cls) const { return ports_[port].pfc_waiting[cls]; }
  /// The current PFC XOFF threshold of `port` in shared bytes.
  int64_t pfc_threshold(uint16_t port) const;
  /// Auto headroom: bytes that can still arrive after the XOFF decision (see switch.cpp).
  static int64_t auto_headroom(const Link::Config& link, const PfcConfig& pfc, int64_t max_frame);

 private:
  struct PortState {
    ArenaPtr<EgressPort> egress;  // in the simulation's arena (line-aligned)
    int64_t headroom = 0;
    double alpha = 0;
    uint8_t xoff_mask = 0;
    // Pause frames per class this port has queued that have not started onto the wire: a MAC
    // holds the pause state, not a queue of frames, so a refresh of a class is not queued
    // behind a waiting frame of that class.
    std::array<uint16_t, kNumClasses> pfc_waiting{};
    // A class's two counters share a cache line (charge and credit read both).
    struct ClassBytes {
      int64_t ingress = 0;  // bytes charged to reserve + shared
      int64_t hdrm = 0;     // bytes charged to headroom
    };
    std::array<ClassBytes, kNumClasses> buf{};
    Timer refresh;
    Rate built_rate;  // the port's link rate at finalize(): PFC refresh timing
  };
  bool lossless(uint8_t cls) const {
    return cfg_.pfc.enabled && ((cfg_.pfc.lossless_mask >> cls) & 1U);
  }
  int64_t shared_of(const PortState& s, uint8_t cls) const;
  bool buffer_admits(uint16_t in, const Packet& p, const EgressPort* out) const;
  void accept(uint16_t in, const Packet& p);
  void charge(uint16_t in, const Packet& p);
  void credit(uint16_t in, const Packet& p);
  void trim(EgressPort& egress, Packet* p, int64_t bound);  // bound: the hook's trimmed_bound
  bool header_queue_full(EgressPort& egress, Packet& p, int64_t bound);
  void check_xoff(uint16_t in, uint8_t cls);
  void check_xon(uint16_t in, uint8_t cls);
  void send_pfc(uint16_t port, uint8_t cls, uint16_t quanta);
  Time refresh_after(const PortState& s) const;

  // What forwarding reads per packet comes first: a link prefetches the first two lines of the
  // switch it feeds one stage before prefetch_receive() (net/link.cpp).
  Simulation& sim_;
  std::vector<uint16_t> route_group_;  // host -> group
  std::vector<PortState> ports_;
  std::vector<EgressPort*> egress_;  // ports_[i].egress, dense: forwarding reads it per packet
  // Routes are stored as groups of equal-cost ports: a leaf has one group per local host and a
  // single group of uplinks shared by every remote host, so the per-host table is 2 bytes.
  struct RouteGroup {
    uint32_t first;  // index into group_ports_
    uint32_t count;
  };
  std::vector<RouteGroup> groups_;
  std::vector<uint16_t> group_ports_;
  SwitchConfig cfg_;
  uint32_t id_;
  bool stamping_hooks_ = false;         // add_dequeue_hook() was called: a hook may write the block
  uint32_t trimmed_size_ = 0;           // frame bytes a trimmed packet keeps (0 = its headers)
  uint32_t trimmed_fabric_header_ = 0;  // and a fabric header's bytes beyond them
  std::string name_;
  std::unique_ptr<PathSelector> selector_;
  std::vector<std::unique_ptr<SwitchExtension>> extensions_;
  RedMarker marker_;
  RedEcnHook red_;  // on every data class of every port when network.ecn is enabled
  std::vector<std::unique_ptr<AdmissionHook>> admission_hooks_;
  std::vector<std::unique_ptr<DequeueHook>> dequeue_hooks_;
  Rate nic_rate_;  // scale_alpha's reference (0 = the slowest port)
  int64_t total_headroom_ = 0;
  int64_t total_reserve_ = 0;
  int64_t lossless_reserve_ = 0;  // total_reserve_ when a class is lossless, else 0
  int64_t shared_used_ = 0;       // bytes in the shared pool: lossless above reserve, all lossy
  int64_t buffer_used_ = 0;       // every data byte held
  int64_t headroom_used_ = 0;     // bytes lossless classes hold in their headroom
  uint64_t hold_drops_ = 0;
  uint64_t unroutable_ = 0;
  uint64_t unroutable_bytes_ = 0;
  Time last_unroutable_;
};

}  // namespace fabsim
