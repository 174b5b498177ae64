// Selective repeat as two state machines (REFERENCE.md §1.8, IRN: Mittal et al., SIGCOMM'18;
// seed 004 §3.3, RLTP's bitmap + NACK): the receiver's reorder bitmap and the sender's SACK
// scoreboard with its recovery episode. They know sequence numbers only, nothing of packets,
// so the RoCE QP (recovery = "irn") and RLTP drive the same code and the tests can script a
// loss sequence and check the exact state after every step.
//
// Receiver: packets at or beyond `expected` are accepted into a bitmap of `capacity` packets;
// the cumulative point advances over every contiguous arrival. An out-of-order arrival is
// answered with a NACK carrying the cumulative ACK and the arriving PSN (a one-packet SACK).
// Sender: NACK(cum, sacked) records the SACK; the first one of an episode enters recovery with
// recovery_seq = snd_nxt; every un-SACKed PSN below the highest SACKed one is a hole,
// retransmitted once, before new data. Recovery ends when the cumulative ACK passes
// recovery_seq. A timeout enters recovery over everything outstanding (SACKed PSNs skipped).
// BDP flow control: a new PSN may go only while (snd_nxt - snd_una) < the cap in packets.
#pragma once

#include <cstdint>  // sequence numbers
#include <vector>   // the receiver's ring of bit words

#include "core/ring.h"  // the sender's SACK marks, sliding with snd_una

namespace fabsim {

/// The receiver's reorder bitmap.
class ReorderBitmap {
 public:
  /// `capacity`: packets beyond `expected` it can hold (IRN: the BDP cap in packets).
  explicit ReorderBitmap(uint64_t capacity) : capacity_(capacity) {}

  enum class Arrival : uint8_t {
    kInOrder,     // psn == expected: the cumulative point advanced
    kOutOfOrder,  // accepted beyond a hole
    kDuplicate,   // already received (below expected, or its bit is set)
    kBeyond,      // past the bitmap: discarded (BDP-FC keeps a correct sender from this)
  };
  struct Result {
    Arrival kind;
    uint64_t advanced = 0;  // PSNs that became in order with this arrival
  };
  Result arrive(uint64_t psn);

  uint64_t expected() const { return expected_; }
  /// True while some PSN beyond `expected` has arrived (a hole is open).
  bool has_holes() const { return held_ > 0; }
  /// PSNs received beyond `expected`.
  uint64_t held() const { return held_; }
  bool received(uint64_t psn) const;
  /// received() of PSNs `base` .. `base` + 63 as one word, bit i for `base` + i (a SACK).
  uint64_t window(uint64_t base) const;
  uint64_t capacity() const { return capacity_; }

 private:
  // The PSNs held beyond `expected_` are bits of a ring of words, PSN p at bit p mod the ring's
  // size (a power of two at least the span held): O(1) per test and 64 PSNs per word read.
  bool test(uint64_t psn) const {
    const uint64_t b = psn & bit_mask_;
    return ((words_[b >> 6] >> (b & 63)) & 1) != 0;
  }
  void flip(uint64_t psn) {
    const uint64_t b = psn & bit_mask_;
    words_[b >> 6] ^= uint64_t{1} << (b & 63);
  }
  void grow(uint64_t span);  // a ring of at least `span` + 64 bits, the held bits kept

  uint64_t capacity_;
  uint64_t expected_ = 0;
  uint64_t held_ = 0;
  uint64_t high_ = 0;  // one past the highest PSN held (expected_ when none is)
  uint64_t bit_mask_ = 0;
  std::vector<uint64_t> words_;  // set bits: exactly the PSNs held, all in (expected_, high_)
};

/// The sender's scoreboard and recovery state over PSNs [snd_una, snd_nxt).
class SackScoreboard {
 public:
  /// `cap`: BDP flow-control cap in packets outstanding (snd_nxt - snd_una).
  explicit SackScoreboard(uint64_t cap) : cap_(cap) {}

  /// Cumulative acknowledgement up to `cum` (exclusive). Returns the PSNs newly acknowledged.
  uint64_t ack(uint64_t cum);
  /// NACK: cumulative part `cum`, SACK of `sacked`. Returns the PSNs newly acknowledged.
  uint64_t nack(uint64_t cum, uint64_t sacked);
  /// Retransmission timeout: recover everything outstanding that is not SACKed (`all`, as
  /// REFERENCE.md §1.8 and conweave rewind to snd_una), or only snd_una and the un-SACKed PSNs
  /// below the highest SACKed one (`all` false: a timeout enters recovery as a NACK does, and a
  /// PSN counts as lost only once a later one was SACKed).
  void timeout(bool all = true);

  /// The next PSN to send: the next hole while recovering, else snd_nxt if BDP-FC and
  /// `psn_end` (one past the last PSN with data) allow; `kNone` if nothing may go.
  static constexpr uint64_t kNone = UINT64_MAX;
  uint64_t next(uint64_t psn_end) const;
  /// Records that `psn` (the value next() returned) was sent.
  void sent(uint64_t psn);

  uint64_t una() const { return una_; }
  uint64_t nxt() const { return nxt_; }
  bool in_recovery() const { return in_recovery_; }
  uint64_t recovery_seq() const { return recovery_seq_; }
  /// PSNs the last nack() newly found lost: unSACKed PSNs below its SACK that no earlier NACK
  /// or timeout had marked. A receiver NACKs every arrival while a hole stays open, so most
  /// NACKs find none (a loss is reported to CC once, not once per NACK that repeats it).
  uint64_t newly_lost() const { return newly_lost_; }
  /// Holes left to retransmit in this episode.
  bool retransmit_pending() const { return retx_next_ < retx_end_; }
  uint64_t retx_next() const { return retx_next_; }
  uint64_t retx_end() const { return retx_end_; }
  bool sacked(uint64_t psn) const;
  uint64_t outstanding() const { return nxt_ - una_; }
  /// Outstanding PSNs not SACKed: the packets still in flight as far as the sender knows (IRN's
  /// RTO_low test counts these).
  uint64_t in_flight() const { return nxt_ - una_ - sacked_count_; }
  uint64_t cap() const { return cap_; }
  /// The most PSNs ever outstanding at once.
  uint64_t max_outstanding() const { return max_outstanding_; }

 private:
  void skip_sacked();  // moves retx_next_ past SACKed PSNs

  uint64_t cap_;
  uint64_t una_ = 0;
  uint64_t nxt_ = 0;
  bool in_recovery_ = false;
  uint64_t recovery_seq_ = 0;
  uint64_t retx_next_ = 0;  // next PSN to examine for a hole
  uint64_t retx_end_ = 0;   // holes are below this (highest SACKed + 1, or snd_nxt on timeout)
  uint64_t max_outstanding_ = 0;
  uint64_t newly_lost_ = 0;
  uint64_t sacked_count_ = 0;  // PSNs in [una_, nxt_) SACKed
  Ring<uint8_t> sacked_;  // sacked_[i] != 0: una_ + i was SACKed (nothing allocated before a SACK)
};

}  // namespace fabsim
