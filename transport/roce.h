// RoCEv2 reliable connection (seed 002 §1.2; REFERENCE.md §1.5-1.7): queue pairs on each NIC,
// messages segmented into MTU packets, congestion control per QP behind the cc/ interface
// (DCQCN by default; DESIGN.md "Seams: CC interface") with pacing at its rate and its window,
// coalesced cumulative ACKs, go-back-N with a NACK on a sequence gap, and an InfiniBand-style
// retransmission timeout (4.096 us x 2^exponent, with a retry limit).
// A connection between two hosts has `qps_per_connection` QPs (NCCL opens several), each with
// its own UDP source port, so ECMP can place them on different paths; a message is split
// evenly over them and completes when all its bytes have arrived in order.
#pragma once

#include <cstdint>        // PSNs, counters
#include <memory>         // connection ownership
#include <unordered_map>  // connections by host pair
#include <vector>         // QPs

#include "cc/registry.h"
#include "net/network.h"
#include "transport/flow.h"
#include "transport/transport.h"

namespace fabsim {

struct RoceConfig {
  WireConfig wire;
  int qps_per_connection = 1;
  /// ACK coalescing: an ACK after every `ack_every_packets` in-order packets, or once
  /// `ack_every_bytes` payload bytes (0 = off) accumulated, and always at a message's end.
  int ack_every_packets = 1;
  int64_t ack_every_bytes = 0;
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

class RoceTransport : public Transport {
 public:
  RoceTransport(Network& net, FlowTable& flows, const RoceConfig& cfg);
  ~RoceTransport() override;
  void start(uint32_t id) override;
  void finish() override;
  std::vector<std::pair<std::string, uint64_t>> counters() const override;
  uint64_t failed_senders() const override { return counters_.failed_qps; }

  /// Current CC pacing rate of the `qp`-th QP from `src` to `dst` (tests), or 0 if none.
  Rate qp_rate(uint32_t src, uint32_t dst, int qp = 0) const;

  struct Counters {
    uint64_t cnps = 0;        // CNPs sent by notification points
    uint64_t nacks = 0;       // NACKs sent by receivers
    uint64_t acks = 0;        // ACKs sent
    uint64_t timeouts = 0;    // retransmission timeouts
    uint64_t failed_qps = 0;  // QPs that exhausted their retries
    uint64_t rate_cuts = 0;   // CNPs applied at reaction points
  };
  const Counters& stats() const { return counters_; }

 private:
  class SendQp;
  class RecvQp;
  struct Connection {
    std::vector<std::unique_ptr<SendQp>> send;
    std::vector<std::unique_ptr<RecvQp>> recv;
  };
  Connection& connection(uint32_t src, uint32_t dst, uint8_t tclass);

  Network& net_;
  FlowTable& flows_;
  RoceConfig cfg_;
  CcConfig cc_;  // what each new QP's congestion control is built from
  std::unordered_map<uint64_t, std::unique_ptr<Connection>> conns_;
  std::vector<Connection*> order_;  // creation order, for deterministic iteration
  uint64_t next_qp_ = 0;
  Counters counters_;
};

}  // namespace fabsim
