// The congestion-control interface (DESIGN.md "Seams: CC interface", "Layers"; STYLE.md 7):
// one algorithm instance per sender (a QP, a connection) that the transport feeds with plain
// signals and reads for a pacing rate and a window. cc/ knows nothing about packets or links;
// the transport turns what arrives into signals. The signals cover what REFERENCE.md's
// algorithms consume: CNPs (DCQCN §1.6), RTT samples (TIMELY §2.1, Swift §2.2), per-hop INT
// records (HPCC §2.3), ECN echo, NACKs and timeouts (NSCC §4.5), receiver credit (RCCC §4.6).
#pragma once

#include <array>    // INT hop records
#include <cstdint>  // INT64_MAX

#include "core/scheduler.h"
#include "core/units.h"

namespace fabsim {

/// The window of a purely rate-based algorithm: it never blocks on bytes in flight.
inline constexpr Bytes kUnlimitedWindow = Bytes(INT64_MAX);
/// An RTT field that carries no sample.
inline constexpr Time kNoRttSample = Time::max();
/// HPCC's INT stack depth (REFERENCE.md §2.3: maxHop = 5).
inline constexpr int kMaxIntSignalHops = 5;

/// Bytes were put on the wire for this sender (framing included): DCQCN's byte counter.
struct SentSignal {
  Time now;
  Bytes bytes;
};

/// An acknowledgement arrived; `acked` is 0 for a duplicate.
struct AckSignal {
  Time now;
  Bytes acked;              // payload bytes newly acknowledged
  Time rtt = kNoRttSample;  // round-trip sample carried by this ACK, if any
  bool ecn_echo = false;    // the acknowledged data arrived congestion-marked
  /// Sequence positions (transport units, e.g. PSNs): what this ACK acknowledges cumulatively,
  /// and the sender's next new position. "Once per round trip" updates (TIMELY, HPCC) commit
  /// when `seq` passes the `next_seq` remembered at the previous commit.
  uint64_t seq = 0;
  uint64_t next_seq = 0;
  /// What a transport that reports the receiver's byte count fills in (UET's ACK_CC,
  /// REFERENCE.md §4.5); 0 when it does not. `received`: frame bytes (headers included) the
  /// receiver newly accepted, as it reported them. `in_flight`: the sender's frame bytes in
  /// flight after this ACK. `receiver_penalty`: the receiver's window penalty (rcv_cwnd_pend),
  /// 255 = none. `counts_bytes`: the transport fills these in (an ACK with nothing new then
  /// has received = 0, not "unreported").
  Bytes received{};
  Bytes in_flight{};
  uint8_t receiver_penalty = 255;
  bool counts_bytes = false;
};

/// A receiver reported a gap (go-back-N) or a trimmed packet.
struct NackSignal {
  Time now;
  Bytes acked;   // payload bytes newly acknowledged by the NACK's cumulative part
  Bytes resent;  // payload bytes the sender will send again
  /// A trim NACK (REFERENCE.md §4.4): the packet was cut to its header in the fabric, at the
  /// last hop (TRIMMED_LASTHOP) or before it (TRIMMED). False: a gap or loss (go-back-N).
  bool trimmed = false;
  bool last_hop = false;
  Time rtt = kNoRttSample;  // from the NACKed packet's transmit time, if known
  Bytes in_flight{};        // the sender's frame bytes in flight after the NACK; 0 = not reported
};

/// A congestion notification packet (DCQCN notification point) arrived.
struct CnpSignal {
  Time now;
};

/// The retransmission timer expired.
struct TimeoutSignal {
  Time now;
  int consecutive = 1;  // expiries in a row without progress, this one included
  Bytes resent{};       // payload bytes the sender will send again; 0 = not reported
};

/// A round-trip sample not tied to an acknowledgement (timestamp echo, probe).
struct DelaySignal {
  Time now;
  Time rtt;
};

/// One hop's INT record, stamped by the egress port at dequeue (REFERENCE.md §2.3).
struct IntHopSignal {
  Bytes queue;     // egress queue length
  Bytes tx_bytes;  // cumulative bytes the port has sent
  Time timestamp;  // when the record was stamped
  Rate link_rate;
};

/// The INT stack an ACK carried back, first hop first.
struct IntSignal {
  Time now;
  int hops = 0;  // valid entries in `hop`
  std::array<IntHopSignal, kMaxIntSignalHops> hop{};
  uint64_t seq = 0;       // as AckSignal::seq
  uint64_t next_seq = 0;  // as AckSignal::next_seq
};

/// A receiver granted credit to send `credit` more bytes.
struct CreditSignal {
  Time now;
  Bytes credit;
};

/// What an algorithm tells the sender after any signal: how fast and how much.
struct CcOutput {
  Rate rate;                        // pacing rate; the line rate when nothing is paced
  Bytes window = kUnlimitedWindow;  // bytes allowed in flight
  /// Least time from one packet's start to the next one's, whatever their sizes (0 = none):
  /// pacing by packets where `rate` paces by bytes (Swift below one packet of window).
  Time gap{};
  /// The retransmission timeout of the algorithm's own rule (Swift's), 0 = the transport's.
  /// RoCE uses it in place of its own timeouts; UET keeps the PDS's (docs/MODEL.md).
  Time rto{};
};

/// What an algorithm asks of its transport and the receiver; fixed for its lifetime.
struct CcNeeds {
  /// Data packets are ECN-capable and the receiver answers congestion marks with CNPs, at
  /// most one per `cnp_interval` per QP (the DCQCN notification point, REFERENCE.md §1.5).
  bool cnp = false;
  Time cnp_interval;
  /// Switches stamp an INT record per hop on data packets and ACKs carry the stack back
  /// (HPCC, REFERENCE.md §2.3); the INT header's bytes ride on the wire.
  bool int_stack = false;
  int int_bytes = 0;  // the INT header's bytes on every data packet and ACK
  /// Data packets are ECN-capable and every ACK says whether data it acknowledges arrived
  /// congestion-marked (AckSignal::ecn_echo), without CNPs (NSCC, REFERENCE.md §4.5).
  bool ecn_echo = false;
};

/// What an algorithm instance is built for: the sender's NIC and path, known at set-up.
struct CcContext {
  Rate line;           // the NIC rate
  Time start;          // when the sender starts
  int64_t mss = 4096;  // payload bytes per full packet
  /// Frame bytes beyond the payload of a data packet: the transport's headers on the wire
  /// (NSCC's MTU is mss + this unless its own key says otherwise). 0 = not given.
  int64_t header_bytes = 0;
  /// The bytes one full data packet counts against a window in the transport's own check: RoCE
  /// counts payload bytes (ns-3 and the RoCE QP compare PSN ranges), UET frame bytes (the PDS
  /// counts frames in flight, as uet-htsim). A CC that keeps its window in packets (Swift) gives
  /// it as packets x this, so a window of N packets lets N packets out. 0 = mss.
  int64_t window_packet_bytes = 0;
  /// The fabric's longest unloaded round trip (net/round_trip.h): HPCC's T with GLOBAL_T,
  /// and the base of its window (line x T). 0 when the transport does not know it.
  Time base_rtt;
  int hops = 0;  // switches between sender and receiver (Swift's hop scaling); 0 = unknown
  /// The fabric trims data packets instead of dropping them (NSCC's target, REFERENCE.md §4.5).
  bool trimming = false;
  /// A receiver-credit CC (RCCC, REFERENCE.md §4.6) runs beside this one: NSCC then does not
  /// cut its window for a last-hop trim.
  bool receiver_credit = false;
};

/// A congestion-control algorithm behind one interface, rate- or window-based. Signals it
/// does not use are ignored (the defaults). An algorithm with timers reports the earliest time
/// it must run in next_timer(); the transport keeps one pending event for it and calls
/// on_timer() then (STYLE.md 5). After any call the transport re-reads output() and
/// next_timer().
class CongestionControl {
 public:
  virtual ~CongestionControl() = default;

  virtual CcNeeds needs() const = 0;
  /// True when the window limits sending; false when only the rate does.
  virtual bool window_based() const = 0;
  virtual CcOutput output() const = 0;
  /// Rate or window decreases so far, for the run's counters (0 where a CC does not count).
  virtual uint64_t decreases() const { return 0; }

  virtual void on_sent(const SentSignal& /*s*/) {}
  virtual void on_ack(const AckSignal& /*s*/) {}
  virtual void on_nack(const NackSignal& /*s*/) {}
  virtual void on_cnp(const CnpSignal& /*s*/) {}
  virtual void on_timeout(const TimeoutSignal& /*s*/) {}
  virtual void on_delay(const DelaySignal& /*s*/) {}
  virtual void on_int(const IntSignal& /*s*/) {}
  virtual void on_credit(const CreditSignal& /*s*/) {}

  /// Earliest time on_timer() must run; Time::max() when nothing is pending.
  virtual Time next_timer() const { return Time::max(); }
  /// Runs every internal timer due at or before `now`.
  virtual void on_timer(Time /*now*/) {}
};

/// Keeps a transport's one pending event for its CC's timers (CongestionControl::next_timer):
/// cancels it when nothing is pending, re-arms it when the deadline moved.
inline void rearm_cc_timer(const CongestionControl& cc, Timer& timer, Scheduler& s,
                           EventTarget* target, uint32_t tag) {
  const Time next = cc.next_timer();
  if (next == Time::max()) {
    timer.cancel();
  } else if (!timer.armed() || timer.when() != next) {
    timer.arm(s, target, tag, next);
  }
}

}  // namespace fabsim
