// Ultra Ethernet transport (seed 001 background; REFERENCE.md §4; UE spec 1.0 §3.5): PDS
// delivery modes over packet delivery contexts (PDCs), per-packet entropy for spraying,
// recovery of trimmed packets by NACK, and a congestion control of the cc/ interface (NSCC in
// issue 17's plan; "none" works alone).
//
// A PDC joins a source and a destination host in one traffic class, one per NCCL channel of
// the flows (FlowSpec::channel; REFERENCE.md §8.8: connections are held per channel); the flows
// between them are SES messages sent over it in order of arrival (a message is many packets).
// Modes (`mode`):
//  - RUD, reliable unordered: the receiver places every packet at once, ACKs carry the
//    cumulative PSN (CACK) and a 64-bit SACK bitmap, trimmed packets are NACKed, the sender
//    resends NACKed and timed-out PSNs only, each on a fresh entropy;
//  - ROD, reliable ordered: the receiver accepts only the expected PSN and NACKs a gap once per
//    round trip; the sender goes back to the NACKed PSN; one entropy per PDC (one path);
//  - RUDI, reliable unordered for idempotent operations: every packet is answered on its own
//    and resent until answered; the receiver keeps no order and counts duplicates;
//  - UUD, unreliable unordered: no ACK, no resend, no congestion control; a lost packet is lost.
// A message completes when all its bytes have arrived (`completion = "delivered"`) or when the
// sender has every ACK (`"acked"`, as uet-htsim measures FCT).
// Header bytes on the wire: Ethernet + IPv4 + UDP (46 B), PDS (12 B) and SES (44 B), unless the
// scenario sets transport.header_bytes (e.g. 64, uet-htsim's data header). The entropy rides in
// the UDP source port (UDP encapsulation, §4.3): switches hash it with the rest of the 5-tuple,
// so spraying is the switches' own ECMP (routing.policy must be "ecmp").
#pragma once

#include <cstdint>        // PSNs
#include <memory>         // PDCs
#include <string>         // counter names
#include <unordered_map>  // PDCs by host pair
#include <utility>        // pair
#include <vector>         // counters

#include "cc/registry.h"
#include "lb/entropy.h"
#include "net/network.h"
#include "transport/flow.h"
#include "transport/kind.h"
#include "transport/transport.h"
#include "transport/uet/credit.h"

namespace fabsim {

enum class PdsMode : uint8_t { kRud, kRod, kRudi, kUud };

/// Packet::flags bit of a UET data packet that sets its PDC up (SYN, REFERENCE.md §4.2): RUD and
/// ROD set it until the first ACK returns; RUDI and UUD, with no PDC state, never do.
inline constexpr uint8_t kUetSyn = 0x08;
/// UetConfig::inflight_cap: what caps the bytes a PDC has in flight.
enum class InflightCap : uint8_t { kAuto, kMaxWindow, kOff };

struct UetConfig {
  WireConfig wire;
  PdsMode mode = PdsMode::kRud;
  EntropyConfig entropy;
  /// The receiver ACKs once this many frame bytes arrived since its last ACK (and at once on
  /// the PDC's first data packet, ECN, a duplicate, an ACK request, the end of a message, or an
  /// arrival that fills a hole). 16 KiB (REFERENCE.md §4.2).
  int64_t ack_every_bytes = 16384;
  /// The receiver's coalescing timer: data held unacknowledged (below ack_every) is ACKed at
  /// most this long after the first of it arrived; 0 = none (uet-htsim). Without it a PDC whose
  /// packets leave far apart (255 PDCs taking turns at a NIC: 85 us) times out on data that
  /// arrived. [UNVERIFIED]: the spec leaves ACK coalescing to the implementation; a few us, well
  /// below the RTO (15 us at least), as delayed-ACK timers are.
  Time ack_delay = Time::us(10);
  bool ack_delay_given = false;  // the scenario set it (a lowered ack_delay is then a warning)
  /// Retransmission timeout (0 = 15 us + 6 drain times at the NIC rate of a switch queue: the
  /// trim threshold (one BDP unless given) with trimming, five BDP without: uet-htsim's rule
  /// and auto queue, REFERENCE.md §9.3.3).
  Time rto;
  /// RTO backoff (UE spec 1.0: RTO = RTO_INIT x 2^retry, REFERENCE.md §4.2): a PSN's k-th
  /// resend times out after rto x 2^min(k, rto_backoff). 0 = a fixed RTO for every send, as
  /// uet-htsim. The cap is [UNVERIFIED]: the spec leaves the retry limit to the implementation.
  uint8_t rto_backoff = 0;
  /// Retry rounds with no answer from the target after which a PDC gives up at the next (the
  /// run reports a failed sender and does not finish). A round: the oldest outstanding send
  /// times out, or with receiver credit a whole rto passes without a grant while a request is
  /// unanswered, at least one rto after the last round began (the expiries of the PSNs sent just
  /// after it belong to it). An ACK, NACK or Close answer ends the count; a grant ends only the
  /// rounds without grants. Also the Close frames an initiator resends unanswered before it ends
  /// the PDC on its side. UUD never retries: a limit with it is refused.
  /// 0 = never give up, as uet-htsim. [UNVERIFIED]: the spec leaves the value to the
  /// implementation (an RC QP's is 7, transport.retry_limit).
  int retry_limit = 0;
  /// Most frame bytes in flight per PDC (0 = 1.5 x BDP, NSCC's maxwnd, REFERENCE.md §4.5), unless
  /// inflight_cap lifts it; a window-based CC's window applies as well. Also receiver credit's
  /// ceiling and speculative window, and the PSN range's base.
  int64_t max_window = 0;
  /// The byte cap on a PDC's flight: kAuto = none for receiver credit alone on a trimming
  /// fabric (the grants pace the sender, REFERENCE.md §4.6), max_window otherwise.
  InflightCap inflight_cap = InflightCap::kAuto;
  /// ROD: a NACK for the same expected PSN is not repeated within this time (0 = one base RTT).
  Time rod_nack_interval;
  /// RUD/ROD: an idle PDC is closed (a Close control frame and its answer) after `close_after`.
  bool pdc_close = true;
  Time close_after = Time::us(100);  // [UNVERIFIED]: the spec leaves it to the implementation
  bool complete_on_ack = false;      // completion = "acked"
  bool trimming = false;             // the fabric trims (network.trim.enabled): NSCC's target
  int64_t trim_threshold = 0;        // its threshold (0 = one BDP): the RTO
  double trim_scale = 1.0;           // at a port of the NIC's rate (reference_rate)
  CcConfig cc;
  /// Receiver credit (RCCC, REFERENCE.md §4.6): a sender sends only what the receiver's pacer
  /// granted, after a speculative first window. With or without a window CC (cc = "none").
  bool receiver_credit = false;
  CreditConfig credit;           // quantum, divide, fix (max_credit, mtu, caps: derived)
  CreditFixConfig credit_fix;    // c0 (grant = c0 x 4,096 B), and seed 001's beta, k, m
  int64_t credit_unit = 4096;    // the MTU of the grant formula (credit_mtu)
  double pacer_fraction = 0.99;  // the pacer grants this fraction of the NIC rate
  int64_t spec_window = -1;      // speculative credit of a new PDC (-1 = the max window)
  int64_t fix_cap = 0;           // seed 001's cap (0 = 2/3 of the max window: one BDP)
  bool fix_nic_scope = true;     // the cap holds the NIC's credit (else each PDC's)
  bool fix_flag_ones = true;     // the flag: target field all 1s (else all 0s)
  Time credit_timer;             // shortest time between two grants (0 = paced by the quanta)
  int credit_trace_host = -1;    // credit_trace.csv: issued and used credit of this receiver
  /// Fabric feedback on each receiver's pacer rate (credit.h FabricFeedback): -1 = on when
  /// credit runs alone (cc = "none") on a fabric whose ToRs are oversubscribed (uet-htsim's
  /// rule), 0 = off, 1 = on.
  int fabric_feedback = -1;
  FabricFeedbackConfig feedback;      // min_rate <= 0: max(0.01, 0.9 / the ToR oversubscription)
  double feedback_period_rtts = 1.5;  // period in base RTTs, each drawn from x [0.75, 1.25)
};

class UetTransport : public Transport {
 public:
  UetTransport(Network& net, FlowTable& flows, const UetConfig& cfg);
  ~UetTransport() override;
  void start(uint32_t id) override;
  void finish() override;
  std::vector<std::pair<std::string, uint64_t>> counters() const override;
  uint64_t failed_senders() const override { return counters_.failed_pdcs; }
  bool needs_int() const override { return needs_int_; }
  CompletionLegs completion_legs() const override {
    return {false, cfg_.complete_on_ack, cfg_.wire.control_bytes};
  }
  std::vector<std::pair<std::string, std::string>> files() const override;

  /// The derived timeout, window and base round trip every PDC runs with.
  Time rto() const { return rto_; }
  /// The receivers' coalescing timer as it runs (ack_delay, lowered to leave the RTO room).
  Time ack_delay() const { return cfg_.ack_delay; }
  int64_t max_window() const { return max_window_; }
  /// The byte cap every PDC's flight runs under (INT64_MAX: none; UetConfig::inflight_cap).
  int64_t inflight_cap() const { return inflight_cap_; }
  /// The most frame bytes the first PDC from `src` to `dst` ever had in flight (tests), or 0.
  int64_t peak_in_flight(uint32_t src, uint32_t dst) const;
  Time base_rtt() const { return base_rtt_; }
  /// The congestion control of the first PDC opened from `src` to `dst` (tests), or null.
  const CongestionControl* pdc_cc(uint32_t src, uint32_t dst) const;

  struct Counters {
    uint64_t acks = 0;              // ACKs sent (RUDI responses included)
    uint64_t ack_requests = 0;      // ReqAck control packets sent (a cut window stranded data)
    uint64_t delayed_acks = 0;      // ACKs sent by the receivers' coalescing timers
    uint64_t nacks = 0;             // NACKs sent
    uint64_t trimmed_nacks = 0;     // of which for a trimmed packet
    uint64_t timeouts = 0;          // PSNs expired by the retransmission timer
    uint64_t rtx_nack = 0;          // retransmissions after a NACK (or ROD rewind)
    uint64_t rtx_timeout = 0;       // retransmissions after a timeout
    uint64_t spurious = 0;          // data arrivals already received (duplicates)
    uint64_t trims_seen = 0;        // trimmed headers that reached a receiver
    uint64_t out_of_window = 0;     // arrivals beyond the receiver's window (discarded)
    uint64_t pdcs = 0;              // PDCs opened (set up by SYN data packets)
    uint64_t closes = 0;            // Close frames sent (resends included)
    uint64_t failed_pdcs = 0;       // PDCs that gave up after retry_limit retry rounds
    uint64_t stale = 0;             // data arrivals for a closed PDC (discarded)
    uint64_t stale_nacks = 0;       // ROD: NACKs drawn by data sent before the go-back they ask for
    uint64_t grants = 0;            // credit packets sent by receivers' pacers
    uint64_t credit_requests = 0;   // credit request control packets sent
    uint64_t credit_reasks = 0;     // credit requests re-sent after an RTO without grants
    uint64_t credit_repeats = 0;    // grants repeating a pull number for a starved sender
    uint64_t flagged = 0;           // data packets carrying seed 001's flag
    uint64_t feedback_periods = 0;  // fabric feedback periods run by receivers' pacers
    uint64_t feedback_decreases = 0;  // of which decided a decrease (at the floor too)
  };
  const Counters& stats() const { return counters_; }
  /// Receiver credit: the ledger of the PDC from `src` to `dst`, and summed over all PDCs.
  CreditLedger credit_ledger(uint32_t src, uint32_t dst) const;
  CreditLedger credit_total() const;
  /// The sending PDCs' entropy choices, summed (tests).
  EntropyStats entropy_stats() const;
  /// The pacer state of the PDC from `src` to `dst` at its receiver (tests).
  const CreditScheduler* pacer(uint32_t host) const;
  /// The fabric feedback of `host`'s pacer (null when off or no PDC sends to it).
  const FabricFeedback* feedback(uint32_t host) const;
  struct CreditSample {
    Time at;
    int64_t issued = 0;  // cumulative credit the traced receiver granted
    int64_t used = 0;    // cumulative frame bytes its senders sent against credit
  };
  const std::vector<CreditSample>& credit_trace() const { return credit_trace_; }

 private:
  class Pacer;
  class Pdc;
  class PdcReceiver;
  struct Pair {
    std::unique_ptr<Pdc> send;
    std::unique_ptr<PdcReceiver> recv;
  };
  Pair& pair(uint32_t src, uint32_t dst, uint8_t tclass, int channel);

  Network& net_;
  FlowTable& flows_;
  UetConfig cfg_;
  Time base_rtt_;
  Time rto_;
  int64_t max_window_ = 0;
  int64_t inflight_cap_ = 0;     // max_window_, or INT64_MAX (none)
  uint64_t window_packets_ = 0;  // receiver reorder window, in packets
  bool needs_int_ = false;
  // By (host pair, traffic class), then by channel (null until first used).
  std::unordered_map<uint64_t, std::vector<std::unique_ptr<Pair>>> pairs_;
  std::vector<Pair*> order_;  // creation order (determinism)
  std::unordered_map<uint32_t, std::vector<int>> hops_;
  Counters counters_;
  PacketType close_{};        // PDS control: Close
  PacketType close_ack_{};    // PDS control: the target's answer to a Close
  PacketType credit_{};       // PDS control: Credit (cumulative pull number in seq)
  PacketType credit_req_{};   // PDS control: Credit Request (pull target in ext)
  PacketType req_ack_{};      // PDS control: ReqAck (the sender asks for an ACK)
  bool feedback_on_ = false;  // the pacers run fabric feedback (fabric_feedback resolved)
  std::vector<std::unique_ptr<Pacer>> pacers_;  // by receiving host, built on first use
  std::vector<int64_t> nic_credit_;  // by host: credit held over its PDCs (seed 001 scope)
  std::vector<int> sending_pdcs_;    // by host: PDCs with data (pull target divisor)
  std::vector<CreditSample> credit_trace_;
  int64_t trace_issued_ = 0;
  int64_t trace_used_ = 0;
  Pacer& pacer_of(uint32_t host);
  void trace_credit(int64_t issued, int64_t used);
};

std::unique_ptr<TransportKind> make_uet_kind();

}  // namespace fabsim
