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
    // Keep advancing over PSNs that had arrived, clearing their bits.
    while (held_ > 0 && test(expected_)) {
      flip(expected_);
      ++expected_;
      --held_;
      ++advanced;
    }
    high_ = std::max(high_, expected_);
    return {Arrival::kInOrder, advanced};
  }
  const uint64_t offset = psn - expected_ - 1;
  if (offset >= capacity_) return {Arrival::kBeyond};
  if (psn < high_ && test(psn)) return {Arrival::kDuplicate};
  if (psn - expected_ + 64 > bit_mask_ + 1) grow(psn - expected_);
  flip(psn);
  ++held_;
  high_ = std::max(high_, psn + 1);
  return {Arrival::kOutOfOrder};
}

void ReorderBitmap::grow(uint64_t span) {
  uint64_t bits = 128;
  while (bits < span + 64) bits *= 2;
  std::vector<uint64_t> old;
  old.swap(words_);
  const uint64_t old_mask = bit_mask_;
  words_.assign(bits / 64, 0);
  bit_mask_ = bits - 1;
  if (held_ == 0) return;
  for (uint64_t p = expected_ + 1; p < high_; ++p) {
    const uint64_t b = p & old_mask;
    if (((old[b >> 6] >> (b & 63)) & 1) != 0) flip(p);
  }
}

bool ReorderBitmap::received(uint64_t psn) const {
  if (psn < expected_) return true;
  if (psn >= high_ || psn == expected_) return false;
  return test(psn);
}

uint64_t ReorderBitmap::window(uint64_t base) const {
  uint64_t out = 0;
  if (base < expected_) {  // below the cumulative point: received
    const uint64_t n = expected_ - base;
    if (n >= 64) return ~uint64_t{0};
    out = (uint64_t{1} << n) - 1;
  }
  const uint64_t lo = std::max(base, expected_ + 1);
  const uint64_t hi = std::min(base + 64, high_);
  if (lo >= hi) return out;
  // The ring's bits from PSN lo on, low bit first, from one or two words.
  const uint64_t b = lo & bit_mask_;
  const uint64_t shift = b & 63;
  const uint64_t word = b >> 6;
  uint64_t w = words_[word] >> shift;
  if (shift != 0) w |= words_[(word + 1) & (bit_mask_ >> 6)] << (64 - shift);
  const uint64_t n = hi - lo;
  if (n < 64) w &= (uint64_t{1} << n) - 1;
  return out | (w << (lo - base));
}

// ---- sender ----------------------------------------------------------------------------------

bool SackScoreboard::sacked(uint64_t psn) const {
  if (psn < una_) return true;
  const uint64_t i = psn - una_;
  return i < sacked_.size() && sacked_[i] != 0;
}

void SackScoreboard::skip_sacked() {
  while (retx_next_ < retx_end_ && sacked(retx_next_)) ++retx_next_;
}

uint64_t SackScoreboard::ack(uint64_t cum) {
  cum = std::min(cum, nxt_);  // a receiver never acknowledges what was not sent
  if (cum <= una_) return 0;
  const uint64_t n = cum - una_;
  for (uint64_t k = std::min<uint64_t>(n, sacked_.size()); k > 0; --k) {
    sacked_count_ -= sacked_.front() != 0 ? 1 : 0;
    sacked_.pop_front();
  }
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
  newly_lost_ = 0;
  const uint64_t n = ack(cum);
  if (sacked_psn < una_ || sacked_psn >= nxt_) return n;  // stale or bogus SACK
  const uint64_t i = sacked_psn - una_;
  while (sacked_.size() <= i) sacked_.push_back(0);
  sacked_count_ += sacked_[i] == 0 ? 1 : 0;
  sacked_[i] = 1;
  if (!in_recovery_) {
    in_recovery_ = true;
    recovery_seq_ = nxt_;
    retx_next_ = std::max(retx_next_, una_);
  }
  // Every un-SACKed PSN below the SACK is lost; those at or above the old bound are news.
  for (uint64_t psn = std::max(retx_end_, una_); psn < sacked_psn; ++psn) {
    if (!sacked(psn)) ++newly_lost_;
  }
  retx_end_ = std::max(retx_end_, sacked_psn);
  skip_sacked();
  return n;
}

void SackScoreboard::timeout(bool all) {
  in_recovery_ = true;
  recovery_seq_ = nxt_;
  retx_next_ = una_;
  // retx_end_ is past the highest SACKed PSN (or snd_nxt after an earlier timeout).
  retx_end_ = all ? nxt_ : std::min(nxt_, std::max(retx_end_, una_ + 1));
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
