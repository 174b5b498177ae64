// Ultra Ethernet PDS (packet delivery sublayer) state machines without packets (REFERENCE.md
// §4.2; UE spec 1.0 §3.5): the sender's per-PSN scoreboard of a PDC and the receiver's SACK
// state. They know sequence numbers and times only, so tests script ACKs, NACKs and timeouts
// PSN by PSN and check the exact state, as transport/selective_repeat.h does for IRN.
//
// Sender (`PdsScoreboard`): every PSN in [una, nxt) is outstanding, acknowledged, or queued for
// retransmission. An ACK carries the cumulative point CACK (every PSN below it arrived) and a
// 64-bit SACK bitmap from a base PSN; a NACK names one PSN (a trimmed packet, or under ROD the
// PSN the receiver expects); a timeout expires the outstanding PSNs whose timeout has come (one
// RTO after their latest send, or more with backoff, below). Retransmissions go before new
// data, lowest PSN first. Without backoff the RTO timer's deadline is the oldest outstanding
// send time plus the RTO, the older of two candidates, both found without a search:
//  - first sends go out in PSN order at increasing times, so the oldest first send still
//    outstanding is the lowest PSN sent once and still outstanding; a cursor finds it and only
//    moves forward (a PSN acknowledged or queued never has its first send outstanding again);
//  - resends are kept in a FIFO of (time, PSN): times only grow, so the front is the oldest
//    once stale entries (acknowledged or resent since) are skipped.
// With RTO backoff (UE spec 1.0 §3.5: RTO = RTO_INIT x 2^retry, REFERENCE.md §4.2) the k-th
// resend of a PSN (NACK-, trim- or timeout-driven alike) times out after rto x 2^min(k, cap):
// resends of one retry level share one FIFO, still in time order, so the earliest deadline
// (deadline()) is the least of the cursor's and cap FIFO fronts'. A send can then be due before
// the timer's deadline, so the sender re-arms it on a send due earlier. Without
// backoff (uet-htsim's fixed RTO) every resend is in one FIFO, as every send waits one rto.
// A slot is 16 bytes (state, send count, entropy, payload, send time): the frame bytes are the
// framing function of the payload, not stored. No per-packet allocation: the slot ring and the
// resend FIFO allocate on first use and grow to the largest window (docs/PERFORMANCE.md).
//
// Receiver: RUD and RUDI accept any PSN inside the window and report SACK bits; ROD accepts only
// the expected PSN (the reorder bitmap with capacity 0 beyond it). `sack_bits` reads 64 bits of
// the receiver's ReorderBitmap from a base.
#pragma once

#include <cstdint>     // PSNs
#include <functional>  // greater
#include <queue>       // retransmission queue
#include <vector>      // its storage

#include "core/assert.h"
#include "core/ring.h"  // per-PSN state
#include "core/units.h"
#include "transport/selective_repeat.h"

namespace fabsim {

/// The 64 SACK bits of `r` from `base` (bit i: base + i has arrived; below expected counts).
uint64_t sack_bits(const ReorderBitmap& r, uint64_t base);

/// The SACK base the receiver reports for an arrival of `psn` (REFERENCE.md §4.2, as uet-htsim:
/// the 64-bit window ends at the arriving PSN, but never starts below the cumulative point).
inline uint64_t sack_base(uint64_t psn, uint64_t cack) {
  const uint64_t from = psn >= 63 ? psn - 63 : 0;
  return from > cack ? from : cack;
}

class PdsScoreboard {
 public:
  static constexpr uint64_t kNone = UINT64_MAX;
  enum class State : uint8_t { kOutstanding, kAcked, kQueued };
  struct Slot {
    State state = State::kOutstanding;
    uint8_t sends = 0;     // times sent (1 = never retransmitted); saturates at 255
    uint16_t ev = 0;       // entropy value of the latest send
    uint32_t payload = 0;  // payload bytes
    Time sent;             // latest send
  };

  /// Frame bytes of a packet: max(payload + header_bytes, min_frame) (in-flight accounting).
  explicit PdsScoreboard(uint32_t header_bytes = 0, uint32_t min_frame = 0)
      : header_(header_bytes), min_frame_(min_frame) {}
  int64_t frame_bytes(uint32_t payload) const {
    const int64_t f = int64_t{payload} + header_;
    return f > min_frame_ ? f : min_frame_;
  }

  /// Records a send of `psn` at `now`: `psn` == nxt() (new data) or a PSN popped from
  /// pop_retransmit(). `payload`: its payload bytes; `ev`: its entropy value. Sends of one
  /// scoreboard come at non-decreasing times.
  void sent(uint64_t psn, Time now, uint32_t payload, uint16_t ev);

  /// What an ACK newly acknowledged.
  struct Acked {
    uint64_t packets = 0;
    int64_t bytes = 0;    // frame bytes
    int64_t payload = 0;  // payload bytes
  };
  /// ACK: every PSN below `cack` and every PSN base + i with bit i of `bits` set has arrived.
  Acked ack(uint64_t cack, uint64_t base, uint64_t bits);
  /// NACK of `psn`: queued for retransmission if still outstanding. True if queued.
  bool nack(uint64_t psn);
  /// ROD: the receiver expects `psn` and dropped what followed: every outstanding PSN from
  /// `psn` on is queued again (go-back-N). Returns how many were queued.
  uint64_t rewind(uint64_t psn);
  /// RTO backoff: a PSN's k-th resend times out after rto x 2^min(k, max_exponent); 0 (the
  /// default) = every send after one rto. Set before the first send.
  void set_backoff(uint8_t max_exponent) {
    FABSIM_ASSERT(nxt_ == 0 && max_exponent <= kMaxBackoff);
    backoff_ = max_exponent;
    deeper_.resize(max_exponent > 1 ? max_exponent - 1U : 0U);
  }
  static constexpr uint8_t kMaxBackoff = 16;
  /// Queues every outstanding PSN whose timeout (its latest send + its rto, see set_backoff)
  /// is at or before `now`, appending each to `*expired` (earliest timeout first); returns how
  /// many.
  uint64_t expire(Time now, Time rto, std::vector<uint64_t>* expired);
  /// When the earliest outstanding PSN times out with base timeout `rto` (Time::max() if
  /// nothing is outstanding).
  Time deadline(Time rto) { return earliest(rto).due; }

  /// The lowest PSN queued for retransmission (kNone if none); pop_retransmit() takes it.
  uint64_t next_retransmit() const;
  uint64_t pop_retransmit();
  bool has_retransmit() const { return next_retransmit() != kNone; }

  /// The send time of the oldest outstanding PSN (Time::max() if none; with backoff it need
  /// not be the first to time out: see deadline()).
  Time oldest_outstanding() { return oldest().at; }

  uint64_t una() const { return una_; }
  uint64_t nxt() const { return nxt_; }
  /// Frame bytes sent and neither acknowledged nor queued again.
  int64_t in_flight_bytes() const { return in_flight_; }
  /// Frame bytes queued for retransmission.
  int64_t queued_bytes() const { return queued_; }
  uint64_t outstanding_packets() const { return outstanding_; }
  /// The slot of `psn` in [una, nxt), or null.
  const Slot* slot(uint64_t psn) const {
    return psn >= una_ && psn < nxt_ ? &slots_[psn - una_] : nullptr;
  }
  /// The slot the next new PSN's sent() writes (null if the ring must grow first): a prefetch
  /// hint only.
  const Slot* next_slot() const { return slots_.next_slot(); }

 private:
  Slot& at(uint64_t psn) { return slots_[psn - una_]; }
  void acknowledge(uint64_t psn, Acked* a);
  void queue(uint64_t psn);
  void advance();  // moves una past acknowledged PSNs
  struct Send {
    Time at;
    uint64_t psn;
  };
  /// The oldest outstanding send ({Time::max(), kNone} if none); `first` tells which candidate
  /// it is (the cursor's first send, else the resend FIFO's front).
  Send oldest(bool* first = nullptr);
  /// The outstanding PSN that times out first, and the FIFO it heads (null: the cursor's first
  /// send).
  struct Due {
    Time due = Time::max();
    uint64_t psn = kNone;
    Ring<Send>* fifo = nullptr;
  };
  Due earliest(Time rto);
  /// The resend FIFO of a PSN sent `sends` times (>= 2).
  Ring<Send>& resend_fifo(uint8_t sends) {
    const unsigned level = sends - 1U < backoff_ ? sends - 1U : backoff_;
    return level <= 1 ? resends_ : deeper_[level - 2];
  }
  /// Drops the front entries of `f` that no longer stand for an outstanding send.
  void skip_stale(Ring<Send>& f);

  uint64_t una_ = 0;
  uint64_t nxt_ = 0;
  uint64_t first_ = 0;  // no PSN below it has its first send outstanding
  int64_t in_flight_ = 0;
  int64_t queued_ = 0;
  uint64_t outstanding_ = 0;
  int64_t header_;
  int64_t min_frame_;
  Ring<Slot> slots_;    // slots_[i]: PSN una_ + i
  Ring<Send> resends_;  // resends in time order (of retry level 1 with backoff; stale entries
                        // skipped lazily)
  std::vector<Ring<Send>> deeper_;  // backoff: resends of retry level 2 + i
  uint8_t backoff_ = 0;
  // Queued PSNs, lowest first; an entry whose PSN was acknowledged meanwhile is skipped.
  mutable std::priority_queue<uint64_t, std::vector<uint64_t>, std::greater<>> rtx_;
};

}  // namespace fabsim
