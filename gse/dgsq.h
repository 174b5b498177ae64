// GSE data plane II, first part (seed 000 §3.1.2, §3.3; seed 002 §2.1, §2.2.2): DGSQ at the
// GSP. One object per leaf (GSE-N2N) plays both roles:
//  - source: data from its NICs waits in a virtual output queue per destination egress port,
//    created when traffic for that port appears and returned to a pool when idle; the VOQ's
//    bytes are charged to the NIC's ingress port, so when they pass the PFC threshold only
//    that NIC is paused (source-local PFC). The VOQ requests bytes, and sends only granted
//    bytes, packed into containers as in data plane I. When the pool (queues or bytes) runs
//    out, traffic falls back to ungranted forwarding, counted.
//  - destination: each egress port towards a NIC grants requested bytes in quanta, paced at
//    the port's rate (so grants over any window never exceed what the port can send: seed 000's
//    sum of grants <= C <= R), round robin or weighted among the requesting source GSPs.
// Requests and grants are real 64 B control packets; a source and a destination on the same
// leaf talk directly. Transit capacity: the spine links into the destination leaf carry every
// remote source's granted bytes (containers are sprayed over all of them), so remote grants
// share one budget at those links' rate, admitting one quantum per link ahead of it as a cap
// per link would; with GSOS, only the links the destination leaf knows to be usable count (a
// failed or failing link shrinks the budget). The grant policy (quantum, rate share, weights)
// is GSOS's when one is set.
#pragma once

#include <algorithm>      // max (merging counters)
#include <cstdint>        // byte counters
#include <deque>          // VOQ packets
#include <unordered_map>  // VOQs, sources
#include <vector>         // ports, trace

#include "core/packet.h"
#include "core/scheduler.h"
#include "core/simulation.h"
#include "gse/gse.h"
#include "net/path_selector.h"

namespace fabsim {

class Switch;
class Gsos;

/// The protocol area of a request or grant packet.
struct GrantInfo {
  uint64_t cumulative = 0;  // request: bytes ever queued; grant: bytes ever granted
  uint64_t seen = 0;        // request: bytes the source has heard granted
  uint32_t dst_port = 0;    // destination egress port (host id)
  uint32_t requester = 0;   // host on the source GSP the grant is addressed to
  uint16_t src_gsp = 0;     // source GSP (switch id)
  uint8_t refresh = 0;      // request: sent again after request_retry without a grant
};
static_assert(sizeof(GrantInfo) <= sizeof(Packet::ext));

class GseDgsq : public SwitchExtension, public EventTarget {
 public:
  GseDgsq(Simulation& sim, Switch& sw, const GseConfig& cfg, GseSourceSelector* stamp,
          std::vector<uint16_t> uplinks, std::vector<int64_t> host_of_port, int64_t framing_bytes);
  bool on_forward(Packet& p, uint16_t in_port, uint16_t out_port) override;
  void on_event(uint32_t tag, uint32_t gen) override;
  void finish() override;
  /// Reads the grant policy and the usable transit capacity from GSOS from now on.
  void set_gsos(const Gsos* g) { gsos_ = g; }

  struct Stats {
    uint64_t requests = 0;  // request packets sent (remote destinations)
    uint64_t grants = 0;    // grants issued by this GSP's egress ports
    uint64_t granted_bytes = 0;
    uint64_t fallback_packets = 0;  // sent without a VOQ because the pool was exhausted
    uint64_t pool_overruns = 0;     // joined a non-empty VOQ past the byte pool (order first)
    uint64_t voqs_created = 0;
    int64_t peak_voqs = 0;
    int64_t peak_voq_bytes = 0;  // bytes in all VOQs at once
    uint64_t hold_drops = 0;
    uint64_t ecn_marks = 0;     // marked at VOQ dequeue (voq_ecn)
    uint64_t source_waits = 0;  // a VOQ with granted bytes waited for the uplinks (source_gate)
    uint64_t request_refreshes = 0;  // requests sent again after request_retry without a grant
    uint64_t grant_repeats = 0;      // grants sent again for a refresh that had not seen them
    /// Adds another GSP's counters (peaks: the largest).
    void merge(const Stats& o) {
      requests += o.requests;
      grants += o.grants;
      granted_bytes += o.granted_bytes;
      fallback_packets += o.fallback_packets;
      pool_overruns += o.pool_overruns;
      voqs_created += o.voqs_created;
      peak_voqs = std::max(peak_voqs, o.peak_voqs);
      peak_voq_bytes = std::max(peak_voq_bytes, o.peak_voq_bytes);
      hold_drops += o.hold_drops;
      ecn_marks += o.ecn_marks;
      source_waits += o.source_waits;
      request_refreshes += o.request_refreshes;
      grant_repeats += o.grant_repeats;
    }
  };
  const Stats& stats() const { return stats_; }
  /// Grants issued: (time, egress port, bytes), when cfg.record_grants.
  struct GrantRecord {
    Time at;
    uint16_t port;
    int64_t bytes;
  };
  const std::vector<GrantRecord>& grant_trace() const { return trace_; }

 private:
  struct Voq {
    std::deque<Packet*> q;
    bool local = false;
    uint16_t local_port = 0;
    uint32_t requester = 0;
    uint16_t requester_port = 0;
    int64_t bytes = 0;      // buffer bytes queued now
    uint64_t enqueued = 0;  // cumulative wire bytes
    uint64_t requested = 0;
    uint64_t granted = 0;
    uint64_t sent = 0;
    bool requesting = false;
    bool waiting = false;       // in waiting_[head_port]: its uplink is full (source_gate)
    bool head_stamped = false;  // the head packet has its container and uplink
    uint16_t head_port = 0;     // that uplink
    Time heard;                 // the last grant, or the last request sent
  };
  struct Source {
    uint16_t gsp = 0;
    uint32_t requester = 0;
    uint64_t requested = 0;
    uint64_t granted = 0;
    double pass = 0;  // stride scheduling: lowest pass is served next
    double weight = 1;
  };
  struct PortSched {
    std::vector<Source> sources;
    Timer timer;
    bool running = false;
  };
  int64_t wire(const Packet& p) const;
  bool fallback(Packet& p, uint16_t out_port);
  void request(uint32_t dst, Voq& v);
  void on_request(uint16_t port, const GrantInfo& info);
  /// request_retry after `dst`'s VOQ last heard a grant or asked: ask again if still owed.
  void refresh(uint32_t dst);
  void arm_refresh(uint32_t dst, Time at);
  void on_grant(uint32_t dst, uint64_t cumulative);
  void try_send(uint32_t dst);
  /// Bytes uplink `port` queues beyond source_gate (<= 0: it takes another packet).
  int64_t uplink_excess(uint16_t port) const;
  /// Whether the VOQ for `dst` may move its stamped head packet to its uplink now; if not, it
  /// joins that uplink's waiting list.
  bool uplink_open(uint32_t dst, Voq& v);
  void arm_uplink(uint16_t port, int64_t excess);
  /// Serves the VOQs waiting for uplink `port` in turn while it has room.
  void drain_waiting(uint16_t port);
  void grant_next(uint16_t port);
  Packet* control(PacketType type, uint32_t src, uint32_t dst, const GrantInfo& info);

  Simulation& sim_;
  Switch& sw_;
  GseConfig cfg_;
  GseSourceSelector* stamp_;
  const Gsos* gsos_ = nullptr;
  int64_t quantum() const;
  double share() const;
  Rate transit_capacity() const;  // the usable links into this ToR
  Rate transit_rate() const;      // x transit_share
  Time transit_burst(Rate transit) const;
  std::vector<uint16_t> uplinks_;
  std::vector<int64_t> host_of_port_;  // port -> attached host id, -1 for uplinks
  int64_t framing_;
  std::unordered_map<uint32_t, Voq> voqs_;
  // Cumulative bytes per destination survive a VOQ's return to the pool: requests and grants
  // count from the stream's start, and the destination keeps its counts too.
  std::unordered_map<uint32_t, uint64_t> cumulative_;
  std::vector<PortSched> sched_;  // by port
  int64_t voq_bytes_ = 0;
  Stats stats_;
  std::vector<GrantRecord> trace_;
  // Transit capacity: the links into this ToR from the tier above carry every remote source's
  // granted bytes (containers are sprayed over all of them), so remote grants share one
  // budget, which admits one quantum per link ahead of the links' rate (transit_burst).
  Rate downlink_capacity_;  // sum of the links' rates (without GSOS)
  Rate link_rate_;          // one link's rate (a Clos: the links of a tier are equal)
  Time downlink_free_;      // when the budget has caught up with what it granted
  // Source gate: per uplink port, the remote VOQs whose head packet it cannot take yet (served
  // in turn), and a timer for when its queue will have drained to the gate (tag: port count +
  // port).
  std::vector<std::deque<uint32_t>> waiting_;
  std::vector<Timer> uplink_timer_;
  int32_t draining_ = -1;  // the port drain_waiting() serves now
  // Request refresh: one timer per remote destination host, kept when its VOQ returns to the
  // pool (a timer's generations must outlive the VOQ; tag: 2 x port count + host).
  std::unordered_map<uint32_t, Timer> refresh_timer_;
};

}  // namespace fabsim
