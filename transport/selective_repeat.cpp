// Selective repeat state machines; see selective_repeat.h.
#include "transport/selective_repeat.h"

#include <algorithm>  // max, min

namespace fabsim {

// ---- receiver --------------------------------------------------------------------------------

ReorderBitmap::Result ReorderBitmap::arrive(uint64_t psn) {
  if (psn < expected_) return {Arrival::kDuplicate};
  if (psn == expected_) {
    ++expected_;
    uint64_t advanced = 1;
    // bits_[0] stands for the new expected_: pop it; if it had arrived, keep advancing.
    while (!bits_.empty()) {
      const bool got = bits_.front();
      bits_.pop_front();
      if (!got) break;
      ++expected_;
      --held_;
      ++advanced;
    }
    return {Arrival::kInOrder, advanced};
  }
  const uint64_t offset = psn - expected_ - 1;
  if (offset >= capacity_) return {Arrival::kBeyond};
  if (offset < bits_.size() && bits_[offset]) return {Arrival::kDuplicate};
  if (offset >= bits_.size()) bits_.resize(offset + 1, false);
  bits_[offset] = true;
  ++held_;
  return {Arrival::kOutOfOrder};
}

bool ReorderBitmap::received(uint64_t psn) const {
  if (psn < expected_) return true;
  if (psn == expected_) return false;
  const uint64_t offset = psn - expected_ - 1;
  return offset < bits_.size() && bits_[offset];
}

// ---- sender ----------------------------------------------------------------------------------

bool SackScoreboard::sacked(uint64_t psn) const {
  if (psn < una_) return true;
  const uint64_t i = psn - una_;
  return i < sacked_.size() && sacked_[i];
}

void SackScoreboard::skip_sacked() {
  while (retx_next_ < retx_end_ && sacked(retx_next_)) ++retx_next_;
}

uint64_t SackScoreboard::ack(uint64_t cum) {
  cum = std::min(cum, nxt_);  // a receiver never acknowledges what was not sent
  if (cum <= una_) return 0;
  const uint64_t n = cum - una_;
  const uint64_t shift = std::min<uint64_t>(n, sacked_.size());
  sacked_.erase(sacked_.begin(), sacked_.begin() + static_cast<std::ptrdiff_t>(shift));
  una_ = cum;
  // The episode ends; holes it learnt and has not resent yet stay pending, and a hole already
  // resent is not resent again by the next episode (only a timeout resends it).
  if (in_recovery_ && una_ >= recovery_seq_) in_recovery_ = false;
  retx_next_ = std::max(retx_next_, una_);
  retx_end_ = std::max(retx_end_, retx_next_);
  skip_sacked();
  return n;
}

uint64_t SackScoreboard::nack(uint64_t cum, uint64_t sacked_psn) {
  const uint64_t n = ack(cum);
  if (sacked_psn < una_ || sacked_psn >= nxt_) return n;  // stale or bogus SACK
  const uint64_t i = sacked_psn - una_;
  if (sacked_.size() <= i) sacked_.resize(i + 1, false);
  sacked_[i] = true;
  if (!in_recovery_) {
    in_recovery_ = true;
    recovery_seq_ = nxt_;
    retx_next_ = std::max(retx_next_, una_);
  }
  retx_end_ = std::max(retx_end_, sacked_psn);  // every un-SACKed PSN below it is lost
  skip_sacked();
  return n;
}

void SackScoreboard::timeout() {
  in_recovery_ = true;
  recovery_seq_ = nxt_;
  retx_next_ = una_;
  retx_end_ = nxt_;
  skip_sacked();
}

uint64_t SackScoreboard::next(uint64_t psn_end) const {
  if (retx_next_ < retx_end_) return retx_next_;
  if (nxt_ < psn_end && nxt_ - una_ < cap_) return nxt_;
  return kNone;
}

void SackScoreboard::sent(uint64_t psn) {
  if (retx_next_ < retx_end_ && psn == retx_next_) {
    ++retx_next_;
    skip_sacked();
  } else if (psn == nxt_) {
    ++nxt_;
    max_outstanding_ = std::max(max_outstanding_, nxt_ - una_);
  }
}

}  // namespace fabsim
