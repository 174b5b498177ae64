// A host NIC port (every GPU has its own, seed 002 §3.1). It obeys PFC from its leaf, sends
// control packets (ACK, CNP) at strict priority, and schedules data among its active transmit
// sources (queue pairs, datagram flows) round-robin, honouring each source's pacing time.
// The active sources form a ring, like the active list of deficit round robin (Shreedhar and
// Varghese, SIGCOMM 1995): a source joins when it gets work (where: set_fifo, the scenario's
// network.nic_arbiter: behind every waiting source, the list's tail, or before the ring's
// first member), and leaves when its turn finds it without any (ready_at() is Time::max(): a window
// full, a credit spent, nothing posted). A source that gets work again before its turn keeps its
// place. A turn costs the sources it passes over, not every active source: a host with a
// thousand connections waiting on their windows (an all-to-all) sends in constant time.
// Received packets go to the endpoint named in the packet (the transport's receiver or sender).
#pragma once

#include <cstdint>  // ids
#include <memory>   // unique_ptr port
#include <string>   // name
#include <vector>   // endpoint table

#include "core/packet.h"
#include "core/scheduler.h"
#include "core/simulation.h"
#include "net/node.h"
#include "net/port.h"

namespace fabsim {

/// A sender of data through a NIC (a QP, a datagram flow). The NIC pulls one packet at a time.
class TxSource {
 public:
  virtual ~TxSource() = default;
  /// Earliest time the next packet may leave (pacing); Time::max() when nothing is pending.
  virtual Time ready_at() const = 0;
  virtual uint8_t tclass() const = 0;
  /// Builds the next packet; called at a time >= ready_at().
  virtual Packet* take(Time now) = 0;
  /// Prefetches what take() reads beyond the source's first two lines (which the NIC's pull
  /// hint brings in). A hint only: it must change no state.
  virtual void prefetch_take() const {}

 protected:
  /// For prefetch_take(): every line of `*source` after its first two, with no load (a hint
  /// that read the source's own fields would wait for the lines it is fetching).
  template <typename T> static void prefetch_rest(const T* source) {
    const auto* b = reinterpret_cast<const char*>(source);
    for (size_t off = 128; off < sizeof(T); off += 64) __builtin_prefetch(b + off);
  }

 private:
  friend class Host;
  bool on_nic_ = false;           // in the NIC's active ring
  TxSource* nic_prev_ = nullptr;  // its neighbours there
  TxSource* nic_next_ = nullptr;
};

/// Receives packets addressed to it (Packet::endpoint); it owns each packet it is given.
class Endpoint {
 public:
  virtual ~Endpoint() = default;
  virtual void receive(Packet* p) = 0;
};

/// Per-simulation table of endpoints, indexed by Packet::endpoint.
class EndpointTable {
 public:
  uint32_t add(Endpoint* e) {
    table_.push_back(e);
    return static_cast<uint32_t>(table_.size() - 1);
  }
  Endpoint* at(uint32_t id) const { return table_[id]; }
  size_t size() const { return table_.size(); }

 private:
  std::vector<Endpoint*> table_;
};

/// A NIC-side stage (GSE-E2E): sees every data packet the NIC sends, and every packet it
/// receives before the endpoint (returning false keeps it; Host::deliver hands it on later).
class NicExtension {
 public:
  virtual ~NicExtension() = default;
  virtual void on_send(Packet& p) = 0;
  virtual bool on_receive(Packet& p) = 0;
  virtual void finish() {}
};

struct HostCounters {
  uint64_t rx_packets = 0;
  uint64_t rx_data_packets = 0;
  uint64_t rx_bytes = 0;
};

class Host : public Node, public EventTarget {
 public:
  Host(Simulation& sim, uint32_t id, std::string name, const EndpointTable& endpoints);

  /// Connects the NIC's single port to its egress link.
  void attach(Link* out);
  /// Puts `s` on the NIC's round robin (no-op if already on it) and tries to send: behind
  /// every waiting source with set_fifo(true), else before the ring's first member.
  void activate(TxSource* s);
  /// Where a source that becomes active joins the NIC's round robin (network.nic_arbiter):
  /// false (the default, "ring"): before the ring's first member, wherever the round robin
  /// stands; true ("fifo"): behind every source already waiting.
  void set_fifo(bool fifo) { fifo_ = fifo; }
  /// Sends a control packet (ACK, NACK, CNP) ahead of data. `switch_class`: the traffic class
  /// the switches queue it in (the strict-priority control class, or a data class: ACKs that
  /// share their QP's queue, as a switch classifying on DSCP/PCP puts them).
  void send_control(Packet* p, uint8_t switch_class = kControlClass);
  /// Re-evaluates sending (after a source's pacing time moved earlier).
  void kick() { port_->kick(); }
  void set_extension(std::unique_ptr<NicExtension> ext) { ext_ = std::move(ext); }
  NicExtension* extension() const { return ext_.get(); }
  /// Hands a received packet to its endpoint (after a NIC extension released it).
  void deliver(Packet* p);

  void receive(Packet* p, uint16_t port) override;
  /// Prefetch hint (net/node.h): the endpoint a delivery calls, and the fabric half of the
  /// packet's extension block (an INT stack the receiver copies or the sender reads).
  void prefetch_receive(const Packet& p, uint16_t port) const override;
  void on_dequeue(uint16_t /*port*/, Packet& /*p*/) override {}
  Packet* pull(uint16_t port, uint8_t paused_mask) override;
  void prefetch_pull() const override {
    if (head_ != nullptr) next_turn()->prefetch_take();
  }
  void on_event(uint32_t tag, uint32_t gen) override;
  const std::string& name() const override { return name_; }

  uint32_t id() const { return id_; }
  EgressPort& port() { return *port_; }
  const EgressPort& port() const { return *port_; }
  Rate rate() const { return port_->link()->config().rate; }
  /// The link that brings this host its traffic (the ToR's port towards it), once connected.
  void set_inbound(Link* in) { inbound_ = in; }
  Link* inbound() const { return inbound_; }
  /// The rate traffic arrives at, as it is now (the sending rate if not connected).
  Rate inbound_rate() const { return inbound_ != nullptr ? inbound_->config().rate : rate(); }
  const HostCounters& counters() const { return counters_; }
  size_t active_sources() const { return active_count_; }

 private:
  /// Takes `s` out of the active ring; the round robin goes on with the source after it.
  void unlink(TxSource* s);
  /// The source the next turn starts at: the one after the last served, else the first.
  TxSource* next_turn() const { return last_ != nullptr ? last_->nic_next_ : head_; }
  Simulation& sim_;
  uint32_t id_;
  std::string name_;
  const EndpointTable& endpoints_;
  ArenaPtr<EgressPort> port_;  // in the simulation's arena (line-aligned)
  Link* inbound_ = nullptr;    // set_inbound
  TxSource* head_ = nullptr;   // a member of the active ring, where it starts (null: empty)
  // The source served last (or the one before it, if it left; with fifo_, the newest arrival
  // behind it, which takes its place at the back): the next turn is the one after it.
  TxSource* last_ = nullptr;
  bool fifo_ = false;
  size_t active_count_ = 0;
  Timer pacing_;
  HostCounters counters_;
  std::unique_ptr<NicExtension> ext_;
};

}  // namespace fabsim
