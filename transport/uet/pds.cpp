// PDS scoreboard; see pds.h.
#include "transport/uet/pds.h"

#include "core/assert.h"

namespace fabsim {

uint64_t sack_bits(const ReorderBitmap& r, uint64_t base) {
  return r.window(base);
}

static_assert(sizeof(PdsScoreboard::Slot) == 16, "one slot per PSN in the window");

namespace {
// rto x 2^level, saturating well inside the engine's horizon (a send time plus it never wraps).
Time backed_off(Time rto, unsigned level) {
  constexpr int64_t kCap = INT64_MAX / 4;
  return rto.ps() > (kCap >> level) ? Time::ps(kCap) : rto * (int64_t{1} << level);
}
}  // namespace

void PdsScoreboard::sent(uint64_t psn, Time now, uint32_t payload, uint16_t ev) {
  if (psn == nxt_) {
    slots_.push_back({});
    ++nxt_;
  } else {
    FABSIM_ASSERT(psn >= una_ && psn < nxt_ && at(psn).state == State::kOutstanding);
  }
  Slot& s = at(psn);
  if (s.sends < UINT8_MAX) ++s.sends;
  s.ev = ev;
  s.payload = payload;
  s.sent = now;
  in_flight_ += frame_bytes(payload);
  ++outstanding_;
  if (s.sends > 1) resend_fifo(s.sends).push_back({now, psn});  // a first send: the cursor finds it
}

void PdsScoreboard::acknowledge(uint64_t psn, Acked* a) {
  Slot& s = at(psn);
  if (s.state == State::kAcked) return;
  const int64_t bytes = frame_bytes(s.payload);
  if (s.state == State::kOutstanding) {
    in_flight_ -= bytes;
    --outstanding_;
  } else if (s.state == State::kQueued) {
    queued_ -= bytes;
  }
  ++a->packets;
  a->bytes += bytes;
  a->payload += s.payload;
  s.state = State::kAcked;
}

PdsScoreboard::Acked PdsScoreboard::ack(uint64_t cack, uint64_t base, uint64_t bits) {
  Acked a;
  const uint64_t upto = cack < nxt_ ? cack : nxt_;
  for (uint64_t psn = una_; psn < upto; ++psn) acknowledge(psn, &a);
  for (uint64_t i = 0; bits != 0 && i < 64; ++i, bits >>= 1) {
    const uint64_t psn = base + i;
    if ((bits & 1U) != 0 && psn >= una_ && psn < nxt_) acknowledge(psn, &a);
  }
  advance();
  return a;
}

void PdsScoreboard::queue(uint64_t psn) {
  Slot& s = at(psn);
  FABSIM_ASSERT(s.state == State::kOutstanding);
  s.state = State::kQueued;
  const int64_t bytes = frame_bytes(s.payload);
  in_flight_ -= bytes;
  --outstanding_;
  queued_ += bytes;
  rtx_.push(psn);
}

bool PdsScoreboard::nack(uint64_t psn) {
  if (psn < una_ || psn >= nxt_ || at(psn).state != State::kOutstanding) return false;
  queue(psn);
  return true;
}

uint64_t PdsScoreboard::rewind(uint64_t psn) {
  uint64_t n = 0;
  for (uint64_t q = psn < una_ ? una_ : psn; q < nxt_; ++q) {
    if (at(q).state == State::kOutstanding) {
      queue(q);
      ++n;
    }
  }
  return n;
}

uint64_t PdsScoreboard::expire(Time now, Time rto, std::vector<uint64_t>* expired) {
  uint64_t n = 0;
  for (;;) {
    const Due d = earliest(rto);
    if (d.due > now) break;  // also when nothing is outstanding (Time::max())
    queue(d.psn);            // the cursor passes it next time
    if (d.fifo != nullptr) d.fifo->pop_front();
    expired->push_back(d.psn);
    ++n;
  }
  return n;
}

void PdsScoreboard::skip_stale(Ring<Send>& f) {
  while (!f.empty()) {
    const Send& e = f.front();
    const Slot* s = slot(e.psn);
    if (s != nullptr && s->state == State::kOutstanding && s->sent == e.at) return;
    f.pop_front();  // acknowledged, queued, or sent again since
  }
}

// The cursor's first send waits one rto, the resend FIFO's front rto (no backoff) or 2 x rto
// (level 1), a deeper FIFO's rto x 2^level. On a tie the lower level is taken (the first send
// before a resend, as oldest() does).
PdsScoreboard::Due PdsScoreboard::earliest(Time rto) {
  bool first = false;
  const Send o = oldest(&first);  // settles the cursor and every FIFO's front
  Due d;
  if (o.psn == kNone) return d;
  if (backoff_ == 0) return {o.at + rto, o.psn, first ? nullptr : &resends_};
  if (first_ < nxt_) d = {at(first_).sent + rto, first_, nullptr};
  if (!resends_.empty()) {
    const Time due = resends_.front().at + backed_off(rto, 1);
    if (due < d.due) d = {due, resends_.front().psn, &resends_};
  }
  for (size_t i = 0; i < deeper_.size(); ++i) {
    Ring<Send>& f = deeper_[i];
    if (f.empty()) continue;
    const Time due = f.front().at + backed_off(rto, static_cast<unsigned>(i + 2));
    if (due < d.due) d = {due, f.front().psn, &f};
  }
  return d;
}

uint64_t PdsScoreboard::next_retransmit() const {
  while (!rtx_.empty()) {
    const uint64_t psn = rtx_.top();
    if (psn >= una_ && psn < nxt_ && slots_[psn - una_].state == State::kQueued) return psn;
    rtx_.pop();  // acknowledged while queued
  }
  return kNone;
}

uint64_t PdsScoreboard::pop_retransmit() {
  const uint64_t psn = next_retransmit();
  FABSIM_ASSERT(psn != kNone);
  rtx_.pop();
  at(psn).state = State::kOutstanding;
  queued_ -= frame_bytes(at(psn).payload);  // sent() records the new send
  return psn;
}

PdsScoreboard::Send PdsScoreboard::oldest(bool* first) {
  if (first_ < una_) first_ = una_;
  while (first_ < nxt_) {
    const Slot& s = at(first_);
    if (s.state == State::kOutstanding && s.sends == 1) break;
    ++first_;  // acknowledged, or queued (its next send is a resend): never again a first send
  }
  skip_stale(resends_);
  Send o{Time::max(), kNone};
  if (first_ < nxt_) o = {at(first_).sent, first_};
  // A NIC sends one packet per serialization time, so two sends of one PDC never share a time;
  // on a tie (scripted tests only) the first send is taken.
  if (!resends_.empty() && resends_.front().at < o.at) {
    o = resends_.front();
    if (first != nullptr) *first = false;
  } else if (first != nullptr) {
    *first = o.psn != kNone;
  }
  for (Ring<Send>& f : deeper_) {  // backoff only
    skip_stale(f);
    if (!f.empty() && f.front().at < o.at) {
      o = f.front();
      if (first != nullptr) *first = false;
    }
  }
  return o;
}

void PdsScoreboard::advance() {
  while (!slots_.empty() && slots_.front().state == State::kAcked) {
    slots_.pop_front();
    ++una_;
  }
}

}  // namespace fabsim
