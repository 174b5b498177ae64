// RoCEv2 reliable connection (seed 002 §1.2; REFERENCE.md §1.5-1.8): queue pairs on each NIC,
// messages segmented into MTU packets, congestion control per QP behind the cc/ interface
// (DCQCN by default; DESIGN.md "Seams: CC interface") with pacing at its rate and its window,
// coalesced cumulative ACKs, and one of two loss recoveries:
//  - go-back-N (`recovery = "gbn"`, the RoCE default): a NACK on a sequence gap, the receiver
//    drops out-of-order packets, the sender rewinds; an InfiniBand-style retransmission timeout
//    (4.096 us x 2^exponent, with a retry limit);
//  - selective repeat (`recovery = "irn"`, IRN, REFERENCE.md §1.8; transport/selective_repeat.h):
//    a receiver bitmap, NACKs carrying the cumulative ACK and the arriving PSN, retransmission
//    of the holes only, BDP flow control, RTO_low / RTO_high.
// The RDMA operation (`op`) says what a flow is: "send" completes when the last byte is at the
// receiver; "write" completes at the initiator when the ACK of its last byte returns; "read":
// the flow's destination asks its source with a read request, and completes when the last byte
// of the response arrives. A command latency (host software posting the operation) and a
// connection setup time (first use of a host pair) delay the start (seed 004 §3.3, §5.1).
// RLTP (seed 004, transport/rltp/) is this machinery with its own header and defaults.
// A connection between two hosts has `qps_per_connection` QPs (NCCL opens several), each with
// its own UDP source port, so ECMP can place them on different paths; a message is split
// evenly over them and completes when all its bytes have arrived in order. NCCL holds its
// connections per channel (REFERENCE.md §8.8), so a host pair has one connection per channel
// its flows name (FlowSpec::channel), each with its own QPs and source ports.
#pragma once

#include <cstdint>        // PSNs, counters
#include <memory>         // connection ownership
#include <queue>          // deferred starts
#include <string>         // kind name
#include <unordered_map>  // connections by host pair
#include <vector>         // QPs

#include "cc/registry.h"
#include "net/network.h"
#include "transport/flow.h"
#include "transport/transport.h"

namespace fabsim {

/// How a QP recovers lost packets.
enum class Recovery : uint8_t { kGoBackN, kSelective };
/// What a flow is as an RDMA operation, and where it completes (see the header comment).
enum class RdmaOp : uint8_t { kSend, kWrite, kRead };

/// IRN's parameters (REFERENCE.md §1.8: the IRN paper's values).
struct IrnConfig {
  Time rto_low = Time::us(100);   // timeout while at most `low_packets` are in flight
  Time rto_high = Time::us(320);  // timeout otherwise
  int low_packets = 3;            // N of RTO_low: packets sent, neither ACKed nor SACKed
  /// On a timeout, resend everything outstanding and not SACKed (REFERENCE.md §1.8, conweave's
  /// rewind to snd_una); false: snd_una and the un-SACKed PSNs below the highest SACKed one.
  bool timeout_resends_all = true;
  /// IRN's own timers (rto_low, rto_high); false: only the IB local ACK timeout
  /// (RoceConfig::rto), conweave-ns3's rule when PFC is on (REFERENCE.md §1.8).
  bool own_timers = true;
  /// BDP flow control: payload bytes outstanding per QP (0 = the frames the NIC line rate sends
  /// in the fabric's longest unloaded round trip, net/round_trip.h, as packets). Also the
  /// receiver bitmap's reach.
  int64_t bdp_cap = 0;
};

struct RoceConfig {
  WireConfig wire;
  std::string name = "roce";  // the kind's name (RLTP reuses the machinery)
  Recovery recovery = Recovery::kGoBackN;
  IrnConfig irn;
  RdmaOp op = RdmaOp::kSend;
  Time command_latency;   // before the initiator acts on a flow (host software, seed 004 §5.1)
  Time connection_setup;  // added once, on a host pair's first flow (QP setup)
  int qps_per_connection = 1;
  /// Every flow gets QPs of its own (HPCC ns-3 opens one per flow); default: the flows of a
  /// host pair share its QPs and are sent in order.
  bool qp_per_flow = false;
  /// Per-packet NIC processing jitter: each packet may leave up to this much later than its
  /// pacing allows, uniform, from the QP's random stream (0 = none) [UNVERIFIED magnitude].
  Time nic_jitter;
  /// ACK coalescing: an ACK after every `ack_every_packets` in-order packets, or once
  /// `ack_every_bytes` payload bytes (0 = off) accumulated, and always at a message's end.
  int ack_every_packets = 1;
  int64_t ack_every_bytes = 0;
  /// Where the switches queue ACKs and NACKs: false, the strict-priority control class; true,
  /// the class of the QP's data (a switch that classifies on DSCP/PCP sees the QP's marking on
  /// its ACKs too; HPCC's ns-3 does so for every CC). The NIC sends them ahead of data either
  /// way; CNPs stay in the control class.
  bool ack_in_data_class = false;
  /// A NACK for the same expected PSN is not repeated within this interval (HPCC ns-3).
  Time nack_interval = Time::us(500);
  /// Retransmission timeout = rto_base x 2^rto_exponent (IB local ACK timeout).
  Time rto_base = Time::ps(4'096'000);
  int rto_exponent = 14;
  /// Consecutive timeouts without progress before the QP gives up (IB retry count).
  int retry_limit = 7;
  bool rto_backoff = false;  // double the timeout after each consecutive expiry
  /// Outstanding bytes per QP (0 = unlimited, as RoCE RC writes have no window); a
  /// window-based CC's window applies as well.
  int64_t max_inflight = 0;
  /// The congestion control each QP runs (`transport.cc`; default DCQCN, paper parameters).
  CcConfig cc;

  /// The timeout after `expiries` consecutive expiries without progress: rto_base x
  /// 2^rto_exponent, doubled per expiry when rto_backoff is on (saturates, never overflows).
  Time rto(int expiries) const;
};

class RoceTransport : public Transport, public EventTarget {
 public:
  RoceTransport(Network& net, FlowTable& flows, const RoceConfig& cfg);
  ~RoceTransport() override;
  void start(uint32_t id) override;
  void finish() override;
  std::vector<std::pair<std::string, uint64_t>> counters() const override;
  uint64_t failed_senders() const override { return counters_.failed_qps; }
  bool needs_int() const override { return needs_int_; }
  CompletionLegs completion_legs() const override {
    return {cfg_.op == RdmaOp::kRead, cfg_.op == RdmaOp::kWrite, cfg_.wire.control_bytes};
  }

  void on_event(uint32_t tag, uint32_t gen) override;

  /// Current CC pacing rate of the `qp`-th QP from `src` to `dst` (channel 0; tests), or 0.
  Rate qp_rate(uint32_t src, uint32_t dst, int qp = 0) const;
  /// The most payload bytes a QP from `src` to `dst` (channel 0) ever had outstanding
  /// (selective repeat; tests of BDP flow control), or 0 if none.
  int64_t max_outstanding_bytes(uint32_t src, uint32_t dst, int qp = 0) const;
  /// Reads the `qp`-th QP from `src` to `dst` (channel 0) remembers having answered (tests: the
  /// set stays bounded over many reads), or 0.
  size_t answered_reads(uint32_t src, uint32_t dst, int qp = 0) const;
  /// The congestion control of the `qp`-th QP from `src` to `dst` (channel 0; tests), or null.
  const CongestionControl* qp_cc(uint32_t src, uint32_t dst, int qp = 0) const;
  /// The BDP cap each selective-repeat QP runs with, in packets (0 under go-back-N).
  uint64_t bdp_cap_packets() const { return cap_packets_; }

  struct Counters {
    uint64_t cnps = 0;        // CNPs sent by notification points
    uint64_t nacks = 0;       // NACKs sent by receivers
    uint64_t acks = 0;        // ACKs sent
    uint64_t timeouts = 0;    // retransmission timeouts
    uint64_t failed_qps = 0;  // QPs that exhausted their retries
    // selective repeat
    uint64_t sacks = 0;          // NACKs carrying a SACK (out-of-order arrivals)
    uint64_t recoveries = 0;     // recovery episodes entered on a NACK
    uint64_t beyond_bitmap = 0;  // arrivals past the receiver bitmap (discarded)
    uint64_t read_requests = 0;  // read requests sent (retries included)
    // in-band telemetry (a CC that reads INT)
    uint64_t int_acks = 0;     // ACKs and NACKs that carried an INT stack back
    uint64_t int_records = 0;  // hop records they carried
  };
  const Counters& stats() const { return counters_; }

 private:
  class SendQp;
  class RecvQp;
  struct Connection {
    std::vector<std::unique_ptr<SendQp>> send;
    std::vector<std::unique_ptr<RecvQp>> recv;
  };
  /// A host pair's connections by channel (built on first use; null until then).
  using Channels = std::vector<std::unique_ptr<Connection>>;
  Connection& connection(uint32_t src, uint32_t dst, int channel, uint8_t tclass);
  /// Channel 0's connection from `src` to `dst` (the test accessors), or null.
  const Connection* first_connection(uint32_t src, uint32_t dst) const;
  /// Flow `id`'s connection: its host pair's for its channel, or its own with qp_per_flow.
  Connection& connection_of(uint32_t id);
  std::unique_ptr<Connection> make_connection(uint32_t src, uint32_t dst, uint8_t tclass);
  /// The operation of flow `id` begins now (after its command latency and setup).
  void begin(uint32_t id);
  void defer(Time at, uint32_t id, uint8_t what);
  void send_read_request(uint32_t id, bool retry);
  /// One QP's part of flow `id` is done (`parts`: write_parts_ at the sender on its last ACK,
  /// recv_parts_ at the receiver when its cumulative point passes); the last part completes it.
  void part_done(std::unordered_map<uint32_t, int>& parts, uint32_t id, Time now);
  bool selective() const { return cfg_.recovery == Recovery::kSelective; }
  /// The reaction points' rate cuts (DCQCN; a ConnectX check cuts once for its CNPs).
  uint64_t rate_cuts() const;
  /// What a QP's congestion control is built for (NIC, payload, fabric round trip, hops).
  CcContext cc_context(uint32_t src, uint32_t dst, Rate line, Time start);

  Network& net_;
  FlowTable& flows_;
  RoceConfig cfg_;
  CcConfig cc_;  // what each new QP's congestion control is built from
  std::unordered_map<uint64_t, Channels> conns_;                          // by host pair
  std::unordered_map<uint32_t, std::unique_ptr<Connection>> flow_conns_;  // qp_per_flow
  std::vector<Connection*> order_;  // creation order, for deterministic iteration
  uint64_t next_qp_ = 0;
  Counters counters_;
  uint64_t cap_packets_ = 0;  // selective repeat: BDP cap in packets
  Time base_rtt_;             // the fabric's longest unloaded round trip (net/round_trip.h)
  bool needs_int_ = false;    // the CC reads INT
  std::unordered_map<uint32_t, std::vector<int>> hops_;  // per source host: switches to each host
  PacketType read_request_;  // this transport's packet kind for read requests
  struct Deferred {
    Time at;
    uint64_t order;  // FIFO among equal times (determinism)
    uint32_t flow;
    uint8_t what;  // kBegin or kReadRetry
    bool operator>(const Deferred& o) const { return at != o.at ? at > o.at : order > o.order; }
  };
  std::priority_queue<Deferred, std::vector<Deferred>, std::greater<>> deferred_;
  uint64_t deferred_order_ = 0;
  Timer deferred_timer_;
  std::unordered_map<uint32_t, int> write_parts_;  // write: QP parts not yet acknowledged
  std::unordered_map<uint32_t, int> recv_parts_;   // selective send/read: parts not yet in order
  struct ReadState {
    int counted = 0;  // IB timeouts retried without an answer (the retry budget)
    Time mark;        // the first request, or the last counted retry
    Time asked;       // the last request, or the last time earlier reads' data was seen waiting
  };
  std::unordered_map<uint32_t, ReadState> read_state_;  // per read flow not yet complete
  std::unordered_map<uint64_t, Time> conn_ready_;       // host pair -> setup done
};

}  // namespace fabsim
