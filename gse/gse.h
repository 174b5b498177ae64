// GSE data plane I (seeds 000 §3.1.1, §3.3; 002 §2.1, §2.2.1): PKTC container spraying and
// container reordering. docs/gse.md records every choice the seeds leave open.
//  - The source GSP (the leaf in GSE-N2N) numbers the packets of each (source GSP,
//    destination egress port) stream into virtual fixed-length containers, stamps a GSE header
//    (container id, sequence in the container, source GSP, destination port), and sends every
//    packet of a container on the same uplink; successive containers spread over the uplinks.
//  - The GSF (spine) forwards on the GSE header and keeps a container on one link where it has
//    parallel links.
//  - The destination GSP restores container order per stream before the NIC, removes the
//    header, and gives up on a container that does not complete within a timeout.
#pragma once

#include <algorithm>      // max (merging counters)
#include <cstdint>        // ids
#include <map>            // buffered containers
#include <memory>         // owned state
#include <unordered_map>  // streams
#include <vector>         // masks, records

#include "core/packet.h"
#include "core/scheduler.h"
#include "core/simulation.h"
#include "lb/ecmp.h"
#include "net/host.h"
#include "net/path_selector.h"

namespace fabsim {

class Switch;
class Gsos;

enum class ContainerRule : uint8_t {
  kCumulative,  // seed 000 §3.3: container id = cumulative bytes before the packet / length
  kOverflow,    // seed 002 §2.2.1: a packet that would overflow the container opens the next
};
enum class ContainerPath : uint8_t {
  kIndex,        // seed 000: uplink = container id mod number of uplinks
  kLeastQueued,  // the local uplink with the fewest queued bytes when the container opens
  kWeighted,     // smooth weighted round robin over the uplinks (by their rates)
  kAdaptive,     // fewest bytes queued on the local uplink plus the GSF's published backlog
                 // on its downlink to the destination leaf (GSF back-pressure, gsos.h)
};

enum class GseMode : uint8_t {
  kN2N,  // RoCE NICs unchanged: the leaf is the GSP, the spine the GSF
  kE2E,  // the NIC is the GSP; the leaf acts as a GSF and pins each container to one uplink
};

struct GseConfig {
  bool enabled = false;
  GseMode mode = GseMode::kN2N;
  int64_t header_bytes = 16;        // [UNVERIFIED] no field list published
  int64_t container_bytes = 16384;  // seed 002 §3.2: 16 KB
  ContainerRule rule = ContainerRule::kCumulative;
  ContainerPath path = ContainerPath::kIndex;
  // Give up on an incomplete container after this; 0 = derived: twice the fabric's round trip
  // (grant_loop), grown to twice the longest wait that ended with the container complete or
  // with it arriving after a timeout gave up on it (the reordering seen), at most
  // reorder_timeout_max. [UNVERIFIED] factors.
  Time reorder_timeout;
  Time reorder_timeout_max = Time::us(100);  // [UNVERIFIED]
  int64_t reorder_buffer = 0;  // bytes a reorder stage may hold; 0 = what the switch buffer admits
  bool record_containers = false;  // keep (stream, container, uplink) for tests
  // DGSQ (data plane II)
  bool dgsq = false;
  int64_t grant_quantum = 16384;  // bytes per grant (one container by default)
  double grant_rate = 1.0;        // share of the port's rate granted at most
  int64_t grant_gate = 32768;     // no grant while the port queues more (egress flow control)
  // The source GSP takes granted packets out of its VOQs only while the uplinks it may use
  // queue at most this per link on average: the traffic manager's uplink scheduler pulls from
  // the VOQs, so bytes it cannot send yet stay in them (charged to the NIC's port, seen by
  // voq_ecn and source-local PFC). 0 = off: granted bytes go at once to the uplink queues.
  int64_t source_gate = 32768;
  bool gate_lookahead = true;   // the gate looks one request-grant loop ahead (see dgsq.cpp)
  Time grant_loop;              // that loop's delay, from the topology (set at installation)
  bool transit_caps = true;     // grants to remote sources within the GSFs' capacity
  double transit_share = 0.97;  // share of the spine links' rate granted (ACKs cross too)
  // A VOQ that waited this long for grants while owed some asks again (its request or a grant
  // may have been lost); 0 = derived: 10 request-grant loops. [UNVERIFIED] the seeds give no
  // recovery for lost requests or grants.
  Time request_retry;
  int64_t voq_pool_queues = 4096;              // VOQs a GSP can have at once
  int64_t voq_pool_bytes = int64_t{64} << 20;  // bytes all its VOQs can hold
  std::vector<double> grant_weights;           // per source GSP (leaf) id; empty = round robin
  bool record_grants = false;
  bool voq_ecn = false;            // RED/ECN marks at VOQ dequeue on the VOQ depth
  int64_t voq_ecn_kmin = 262144;   // [UNVERIFIED] VOQ depth with no marking
  int64_t voq_ecn_kmax = 1048576;  // [UNVERIFIED] VOQ depth marked with network.ecn.pmax
  // GSOS: fault notice and back-pressure (gsos.h, docs/FAULTS.md)
  Time detect = Time::us(1);      // [UNVERIFIED] a device notices its link died (loss of signal)
  Time notice_hop = Time::us(1);  // [UNVERIFIED] physical-layer notice, per hop
  Time monitor_window = Time::us(10);   // FEC error counting window
  double ber_threshold = 2.4e-4;        // declare failing above this pre-FEC BER (KP4 FEC's limit)
  Time publish_interval = Time::us(2);  // [UNVERIFIED] GSF downlink state publication period
  // On learning of a failed or failing cable, a destination GSP stops waiting for missing
  // containers after this (they may have been lost with it) instead of reorder_timeout.
  Time fault_flush = Time::us(5);  // [UNVERIFIED] about the fabric's worst one-way latency
};

/// The GSE header fields, stored in the fabric half of Packet::ext (16 bytes).
struct GseHeader {
  uint32_t container = 0;
  uint32_t dst_port = 0;    // global id of the destination edge egress port (GSOS numbering)
  uint16_t src_gsp = 0;     // source GSP (switch) id
  uint16_t seq = 0;         // packet number within the container
  uint16_t prev_count = 0;  // packets in the stream's previous non-empty container
  uint16_t prev_gap = 0;    // container id minus the previous non-empty one's (0: none)
};
static_assert(sizeof(GseHeader) == 16);
inline GseHeader gse_header(const Packet& p) {
  return p.get_ext_at<GseHeader, kFabricExtOffset>();
}
inline void set_gse_header(Packet& p, const GseHeader& h) {
  p.set_ext_at<GseHeader, kFabricExtOffset>(h);
  p.flags = static_cast<uint8_t>(p.flags | kFabricHeader);
}

/// The derived reorder timeout before any reordering is seen: twice the request-grant loop (a
/// round trip between the farthest ToRs), at least 1 us, at most reorder_timeout_max.
Time derived_reorder_timeout(const GseConfig& cfg);

/// Where a reorder stage releases packets: a switch port (N2N) or a NIC's endpoints (E2E).
class ReleaseSink {
 public:
  virtual ~ReleaseSink() = default;
  /// Passes on a packet that was never held.
  virtual void release(Packet* p, uint16_t out) = 0;
  /// Takes a packet into the reorder buffer's memory; false = no room (the packet is dropped).
  virtual bool hold(Packet* /*p*/) { return true; }
  /// Passes on a packet that hold() accepted.
  virtual void release_held(Packet* p, uint16_t out) { release(p, out); }
};

/// Numbers one stream's packets into containers (pure; unit-tested against scripted sizes).
class ContainerAssigner {
 public:
  ContainerAssigner(ContainerRule rule, int64_t length) : rule_(rule), length_(length) {}
  struct Assignment {
    uint32_t container = 0;
    uint16_t seq = 0;
    bool opened = false;      // this packet opened the container
    uint16_t prev_count = 0;  // packets in the previous non-empty container (0: none)
    uint16_t prev_gap = 0;    // container - previous non-empty container (0: none)
  };
  /// Assigns a packet of `bytes` (wire bytes) to a container.
  Assignment assign(int64_t bytes);

 private:
  ContainerRule rule_;
  int64_t length_;
  int64_t cumulative_ = 0;
  int64_t fill_ = 0;
  uint32_t current_ = 0;
  uint16_t count_ = 0;  // packets in the current container
  bool any_ = false;
  uint16_t prev_count_ = 0;
  uint16_t prev_gap_ = 0;
};

/// The source GSP: container numbering, header, one uplink per container.
class GseSourceSelector : public PathSelector {
 public:
  GseSourceSelector(Switch& sw, const GseConfig& cfg, std::vector<bool> uplink, uint64_t seed,
                    int64_t framing_bytes);
  uint16_t select(Packet& p, const uint16_t* ports, uint32_t n) override;
  bool sees_single_paths() const override { return true; }
  /// Numbers `p` into its stream's container, stamps the header and returns its uplink. With
  /// DGSQ this runs when the VOQ sends the packet, not when the switch forwards it.
  uint16_t stamp_and_choose(Packet& p, const uint16_t* ports, uint32_t n);
  /// For a stamped packet still waiting to go out of `port`: if this GSP now knows that port's
  /// cable to be unusable, moves the packet's container (it and the rest of its stream's open
  /// container) to a usable uplink and returns it; otherwise returns `port`.
  uint16_t repin_stamped(const Packet& p, const uint16_t* ports, uint32_t n, uint16_t port);
  void set_deferred(bool d) { deferred_ = d; }
  /// Fault views and back-pressure come from `g` (nullptr: a fault-free fabric, no back-pressure).
  void set_gsos(const Gsos* g) { gsos_ = g; }

  struct Record {
    uint32_t dst;
    uint32_t container;
    uint16_t port;
  };
  const std::vector<Record>& records() const { return records_; }
  uint64_t containers() const { return containers_; }
  /// Open containers moved off an uplink that became unusable.
  uint64_t repinned() const { return repinned_; }

 private:
  struct Stream {
    ContainerAssigner assigner;
    uint16_t port = 0;
    uint64_t offset = 0;  // per-stream rotation of the index choice (see choose())
  };
  uint16_t choose(const uint16_t* ports, uint32_t n, uint32_t container, uint64_t offset,
                  uint32_t dst);
  Switch& sw_;
  const Gsos* gsos_ = nullptr;
  std::vector<uint16_t> usable_;  // scratch: candidates left after the fault view
  GseConfig cfg_;
  std::vector<bool> uplink_;
  EcmpSelector ecmp_;
  int64_t framing_;
  std::unordered_map<uint32_t, Stream> streams_;  // by destination egress port
  std::vector<int64_t> credit_;                   // weighted round robin state, per uplink
  std::vector<Record> records_;
  uint64_t containers_ = 0;
  uint64_t repinned_ = 0;
  bool deferred_ = false;
};

/// The GSF (spine, or the leaf in GSE-E2E): forwards on the GSE header; where it has several
/// equal links it keeps each container on one of them, rotating by container id.
class GseCoreSelector : public PathSelector {
 public:
  /// `divisor`: the product of the up-going fan-outs of the tiers below this switch (1 for a
  /// ToR in GSE-E2E, the ToRs' uplink count for an aggregation switch). Each tier takes its own
  /// digit of the container index, so containers that reached this switch through one choice
  /// below still spread over all of its ports.
  GseCoreSelector(uint64_t seed, uint64_t divisor) : ecmp_(seed), divisor_(divisor) {}
  uint16_t select(Packet& p, const uint16_t* ports, uint32_t n) override;
  /// Excludes links this switch (`sw`) knows to be failed or failing.
  void set_gsos(const Gsos* g, uint32_t sw) {
    gsos_ = g;
    sw_ = sw;
  }

 private:
  EcmpSelector ecmp_;
  uint64_t divisor_;
  const Gsos* gsos_ = nullptr;
  uint32_t sw_ = 0;
  std::vector<uint16_t> usable_;
};

/// The destination GSP: container-order release per (source GSP, destination port) stream.
class GseReorder : public SwitchExtension, public EventTarget {
 public:
  GseReorder(Simulation& sim, ReleaseSink& sink, const GseConfig& cfg, std::vector<bool> host_port);
  bool on_forward(Packet& p, uint16_t in_port, uint16_t out_port) override;
  void on_event(uint32_t tag, uint32_t gen) override;
  void finish() override;
  /// A fault notice: containers missing now are waited for until `deadline` at most, and for
  /// one reorder_timeout after it a new gap is waited for fault_flush only (a container lost
  /// with the cable shows as a gap when its successors arrive).
  void flush_by(Time deadline);

  struct Stats {
    uint64_t packets = 0;    // GSE packets that reached this destination GSP
    uint64_t held = 0;       // of those, held for order
    uint64_t timeouts = 0;   // waits that ended without the container completing
    Time timeout;            // the stage's timeout at the end (derived ones adapt)
    uint64_t gaps = 0;       // losses seen at once: a container's packet numbers skipped
    uint64_t overflows = 0;  // the reorder memory was full: the stream released what it held
    uint64_t flushed = 0;    // packets released early, behind a gap (timeout, gap, overflow)
    uint64_t flushes = 0;    // fault notices that shortened the wait
    uint64_t late = 0;       // packets of a container already given up
    uint64_t dropped = 0;    // refused by the buffer (always 0: a full buffer flushes instead)
    int64_t held_bytes = 0;  // now
    int64_t peak_bytes = 0;
    int64_t peak_packets = 0;
    long double byte_time = 0;  // integral of held bytes over time (byte x ps)
    /// Adds another GSP's counters (peaks: the largest).
    void merge(const Stats& o) {
      packets += o.packets;
      held += o.held;
      timeouts += o.timeouts;
      gaps += o.gaps;
      overflows += o.overflows;
      flushed += o.flushed;
      flushes += o.flushes;
      late += o.late;
      dropped += o.dropped;
      peak_bytes = std::max(peak_bytes, o.peak_bytes);
      timeout = std::max(timeout, o.timeout);
      held_bytes += o.held_bytes;
      peak_packets = std::max(peak_packets, o.peak_packets);
      byte_time += o.byte_time;
    }
  };
  const Stats& stats() const { return stats_; }

 private:
  struct Held {
    Packet* p;
    uint16_t out;
  };
  /// What arrived of a container so far: its packets come over one path in order, so a packet
  /// number beyond `expect` means the ones between were lost.
  struct Arrivals {
    uint16_t expect = 0;  // next packet number
    bool lossy = false;   // a packet number was skipped: the container cannot complete
  };
  struct Stream {
    uint32_t cur = 0;                                // container being released
    uint16_t released = 0;                           // packets of cur released
    std::map<uint32_t, std::vector<Held>> buffered;  // later containers, arrival order
    std::unordered_map<uint32_t, uint16_t> count;    // container -> packets (from successors)
    std::unordered_map<uint32_t, uint32_t> next;     // container -> next non-empty container
    std::unordered_map<uint32_t, Arrivals> seen;     // containers >= cur
    Timer timer;
    Time blocked_since = Time::max();  // when a packet was last held behind cur (max: none)
    // The containers timeouts gave up waiting for in the last reorder_timeout_max, with when
    // the wait began: each packet of one that arrives after all, within reorder_timeout_max of
    // that start, measures a wait that would have been needed (derived timeouts only).
    std::map<uint32_t, Time> gave_up;
  };
  void release(Stream& s, Packet* p, uint16_t out, bool held);
  void advance(uint32_t index);
  /// Gives up waiting: releases every held packet in container order and makes the last held
  /// container (or `at_least`, if later) the current one. Returns the new current container.
  uint32_t give_up(uint32_t index, uint32_t at_least);
  /// Whether the current container is known to be incomplete (a packet of it was lost).
  bool cur_lossy(Stream& s) const;
  bool held_limit_reached(const Packet& p) const {
    return cfg_.reorder_buffer > 0 && stats_.held_bytes + p.size > cfg_.reorder_buffer;
  }
  void account(int64_t delta_bytes, int64_t delta_packets);
  Time wait() const { return sim_.now() < fast_until_ ? cfg_.fault_flush : timeout_; }
  /// A blocked stream's current container completed after `waited`: derived timeouts grow to
  /// cover reordering of that size.
  void observe_wait(Time waited);

  Simulation& sim_;
  ReleaseSink& sink_;
  GseConfig cfg_;
  std::vector<bool> host_port_;
  std::unordered_map<uint64_t, uint32_t> index_;  // (src GSP, dst port) -> stream
  std::vector<std::unique_ptr<Stream>> streams_;
  Stats stats_;
  int64_t held_packets_ = 0;
  Time last_change_;
  Time fast_until_;    // after a fault notice: short waits until then
  Time timeout_;       // the wait for an incomplete container now
  Time longest_wait_;  // the longest wait that ended with the container complete
};

/// Releases into a switch's egress ports (GSE-N2N destination leaf).
class SwitchSink : public ReleaseSink {
 public:
  explicit SwitchSink(Switch& sw) : sw_(sw) {}
  void release(Packet* p, uint16_t out) override;
  /// Held packets live in the switch's shared buffer, charged to the uplink they came in on,
  /// so a filling reorder buffer raises PFC towards the spine like any queue.
  bool hold(Packet* p) override;
  void release_held(Packet* p, uint16_t out) override;

 private:
  Switch& sw_;
};

/// GSE-E2E at a NIC: container numbering of what the NIC sends, reordering of what it receives.
class GseNic : public NicExtension, public ReleaseSink {
 public:
  GseNic(Simulation& sim, Host& host, const GseConfig& cfg, int64_t framing_bytes);
  void on_send(Packet& p) override;
  bool on_receive(Packet& p) override { return reorder_.on_forward(p, 0, 0); }
  void release(Packet* p, uint16_t /*out*/) override { host_.deliver(p); }
  void finish() override { reorder_.finish(); }
  const GseReorder& reorder() const { return reorder_; }
  GseReorder& reorder() { return reorder_; }
  uint64_t containers() const { return containers_; }

 private:
  Host& host_;
  GseConfig cfg_;
  int64_t framing_;
  std::unordered_map<uint32_t, ContainerAssigner> streams_;  // by destination egress port
  GseReorder reorder_;
  uint64_t containers_ = 0;
};

}  // namespace fabsim
