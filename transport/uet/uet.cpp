// Ultra Ethernet PDCs; see uet.h.
#include "transport/uet/uet.h"

#include <algorithm>  // max, min
#include <cmath>      // llround

#include <fmt/format.h>

#include "core/assert.h"
#include "core/ring.h"  // messages per PDC
#include "net/round_trip.h"
#include "transport/selective_repeat.h"
#include "transport/uet/pds.h"

namespace fabsim {
namespace {
constexpr uint16_t kUetPort = 4793;     // UDP destination port of UET (REFERENCE.md §4.3)
constexpr int64_t kUdpIpEthBytes = 46;  // Ethernet 14 + FCS 4 + IPv4 20 + UDP 8
// Packet::flags bits (transport-owned 0x01..0x10).
constexpr uint8_t kAckRequest = 0x01;  // data: the sender asks for an ACK now (AR)
constexpr uint8_t kEndOfMessage = 0x02;
constexpr uint8_t kRetransmit = 0x04;  // data: a resend (RETX); the receiver ACKs it at once
constexpr uint8_t kSyn = kUetSyn;      // data: the PDC is being set up (no ACK seen yet)
constexpr uint8_t kReask = 0x04;       // credit request: no grant came for an RTO
constexpr uint8_t kEcnEcho = 0x01;     // ACK: the data that triggered it arrived with CE
// ACK: no data packet triggered it (a ReqAck's answer, or the coalescing timer's): no RTT
// sample, no entropy feedback.
constexpr uint8_t kAckNoTrigger = 0x02;
constexpr uint8_t kNackTrimmed = 0x02;  // NACK: for a trimmed packet
constexpr uint8_t kNackRodGap = 0x04;   // NACK: ROD, the receiver expects this PSN
// NACK for a packet trimmed at the switch port towards its receiver (UET_TRIMMED_LASTHOP,
// REFERENCE.md §4.4), and whether it had been CE-marked before (uet-htsim's ecn_echo).
constexpr uint8_t kNackLastHop = 0x08;
constexpr uint8_t kNackEcnEcho = 0x10;
// Data: the pull target (24 bits on the wire, REFERENCE.md §4.6) in Packet::ext at offset 0.
// Credit request: the same. The receiver widens it to 64 bits around its highest target.
constexpr uint64_t kTargetMask = 0xFFFFFF;
// ACK layout in Packet::ext (transport half): SACK bits, then the SACK base and the PSN of the
// data that triggered the ACK, both relative to the CACK in Packet::seq.
constexpr size_t kBaseOffset = 8;
constexpr size_t kTriggerOffset = 12;
// NACK layout: the CACK at offset 0, then when the data that drew it was sent (its Packet::sent,
// echoed as a timestamp): a ROD sender tells a NACK of its old flight from one of its go-back.
constexpr size_t kNackSentOffset = 8;

// RUD and ROD keep sequence state per PDC, set up and torn down; RUDI and UUD keep none here.
bool has_pdc_life(PdsMode m) {
  return m == PdsMode::kRud || m == PdsMode::kRod;
}

// The 64-bit pull number nearest `ref` whose low 24 bits are `wire` (pull numbers wrap like
// sequence numbers).
uint64_t widen_target(uint32_t wire, uint64_t ref) {
  const uint64_t delta = (wire - ref) & kTargetMask;
  if (delta < (kTargetMask + 1) / 2) return ref + delta;
  const uint64_t back = kTargetMask + 1 - delta;
  return ref >= back ? ref - back : 0;
}

const char* mode_name(PdsMode m) {
  switch (m) {
    case PdsMode::kRud:
      return "rud";
    case PdsMode::kRod:
      return "rod";
    case PdsMode::kRudi:
      return "rudi";
    case PdsMode::kUud:
      return "uud";
  }
  return "?";
}
}  // namespace

// ---- receiver credit pacer (one per receiving host) ------------------------------------------

// A tick that grants nothing still takes the pacing time of this many quanta (uet-htsim).
constexpr int64_t kZeroTickQuanta = 4;

class UetTransport::Pacer : public EventTarget {
 public:
  Pacer(UetTransport& t, uint32_t host, const CreditPacerConfig& cfg)
      : t_(t), sim_(t.net_.sim()), host_(t.net_.host(host)), self_(host), sched_(cfg) {
    if (t.feedback_on_) {
      feedback_ = std::make_unique<FabricFeedback>(t.cfg_.feedback);
      // The period's jitter: a stream of the host's own, apart from its other streams.
      rng_ =
          std::make_unique<Rng>(sim_.rng(stream_id(StreamKind::kHost, (uint64_t{1} << 40) | host)));
    }
  }
  /// A packet reached one of this host's receivers: fabric feedback counts it.
  void count(const Packet& p) {
    if (!feedback_) return;
    const bool trimmed = (p.flags & kTrimmed) != 0;
    feedback_->on_packet(trimmed, (p.flags & kTrimmedLastHop) != 0,
                         is_data(p.type) && p.ecn == Ecn::kCe);
    if (!period_.armed()) period_.arm(sim_.scheduler(), this, kPeriod, sim_.now() + next_period());
  }
  const FabricFeedback* feedback() const { return feedback_.get(); }
  /// A sending PDC whose receiver is here: its index in the scheduler.
  uint32_t add(uint32_t src, uint32_t sender_ep) {
    peers_.push_back({src, sender_ep});
    return sched_.add_sender();
  }
  CreditScheduler& sched() { return sched_; }
  const CreditScheduler& sched() const { return sched_; }
  /// Sends sender `s` its latest pull number again, granting nothing new (grants are
  /// cumulative: it makes good the ones that were lost).
  void repeat(uint32_t s, Time now) {
    CreditScheduler::Grant g;
    g.sender = s;
    g.pull = sched_.latest_pull(s);
    ++t_.counters_.credit_repeats;
    send(g, now);
  }
  /// New demand: tick now, unless the last grant's pacing time is still running.
  void wake() {
    if (timer_.armed() || !sched_.has_work()) return;
    timer_.arm(sim_.scheduler(), this, 0, std::max(sim_.now(), next_));
  }
  void on_event(uint32_t tag, uint32_t gen) override {
    if (tag == kPeriod) {
      if (!period_.fire(sim_.scheduler(), this, tag, gen)) return;
      feedback_->period();
      ++t_.counters_.feedback_periods;
      if (feedback_->decreased()) ++t_.counters_.feedback_decreases;
      // An idle host with nothing left to recover stops; its next packet starts the periods.
      if (!feedback_->settled())
        period_.arm(sim_.scheduler(), this, kPeriod, sim_.now() + next_period());
      return;
    }
    if (!timer_.fire(sim_.scheduler(), this, tag, gen)) return;
    const Time now = sim_.now();
    CreditScheduler::Grant g;
    if (!sched_.tick(&g)) return;  // nothing to grant: sleep until new demand
    if (g.quanta > 0) send(g, now);
    Time pace = per_quantum() * (g.quanta > 0 ? g.quanta : kZeroTickQuanta);
    if (feedback_ && feedback_->rate() < 1) {
      pace = Time::ps(std::llround(static_cast<double>(pace.ps()) / feedback_->rate()));
    }
    next_ = now + std::max(pace, t_.cfg_.credit_timer);
    if (sched_.has_work()) timer_.arm(sim_.scheduler(), this, 0, next_);
  }

 private:
  static constexpr uint32_t kPeriod = 1;  // timer tag of the fabric feedback period
  // Pacing time of one credit quantum at pacer_fraction of the rate this host's traffic arrives
  // at (the ToR's port towards it) as it is now, recomputed when the rate changes.
  Time per_quantum() {
    const int64_t bps = host_.inbound_rate().bps();
    if (bps != rate_bps_) {
      rate_bps_ = bps;
      const double paced = static_cast<double>(bps) * t_.cfg_.pacer_fraction;
      per_quantum_ = Time::ps(
          static_cast<int64_t>(static_cast<double>(t_.cfg_.credit.quantum) * 8e12 / paced + 0.5));
    }
    return per_quantum_;
  }
  Time next_period() {
    const double f = t_.cfg_.feedback_period_rtts * (0.75 + 0.5 * rng_->uniform());
    return Time::ps(std::llround(static_cast<double>(t_.base_rtt_.ps()) * f));
  }
  struct Peer {
    uint32_t host;
    uint32_t endpoint;
  };
  void send(const CreditScheduler::Grant& g, Time now) {
    const Peer& peer = peers_[g.sender];
    Packet* p = sim_.pool().acquire();
    p->type = t_.credit_;
    p->seq = g.pull;
    p->size = static_cast<uint32_t>(t_.cfg_.wire.control_bytes);
    p->src = self_;
    p->dst = peer.host;
    p->sport = static_cast<uint16_t>(ev_++ & 0x7F);  // credit packets cycle 7-bit entropies
    p->dport = kUetPort;
    p->endpoint = peer.endpoint;
    p->sent = now;
    ++t_.counters_.grants;
    if (static_cast<int>(self_) == t_.cfg_.credit_trace_host) {
      t_.trace_credit(g.quanta * t_.cfg_.credit.quantum, 0);
    }
    host_.send_control(p);
  }

  UetTransport& t_;
  Simulation& sim_;
  Host& host_;
  uint32_t self_;
  CreditScheduler sched_;
  int64_t rate_bps_ = 0;  // the NIC rate per_quantum_ was computed for
  Time per_quantum_;
  std::vector<Peer> peers_;
  Timer timer_;
  Time next_;  // the earliest next tick (the pacing time of the last grant)
  uint32_t ev_ = 0;
  std::unique_ptr<FabricFeedback> feedback_;  // null unless fabric feedback is on
  std::unique_ptr<Rng> rng_;                  // the period's jitter
  Timer period_;
};

// ---- sender ----------------------------------------------------------------------------------

class UetTransport::Pdc : public TxSource, public Endpoint, public EventTarget {
 public:
  Pdc(UetTransport& t, uint32_t src, uint32_t dst, uint8_t tclass, uint64_t index)
      : t_(t), sim_(t.net_.sim()), host_(t.net_.host(src)), src_(src), dst_(dst), tclass_(tclass),
        mode_(t.cfg_.mode), framing_(host_.port().link()->config().framing_bytes),
        entropy_(t.cfg_.entropy, sim_.rng(stream_id(StreamKind::kQp, index))) {
    CcContext ctx;
    ctx.line = host_.rate();
    ctx.start = sim_.now();
    ctx.mss = t.cfg_.wire.payload;
    ctx.header_bytes = t.cfg_.wire.header_bytes;
    ctx.window_packet_bytes = t.cfg_.wire.payload + t.cfg_.wire.header_bytes;  // full_frame()
    ctx.base_rtt = t.base_rtt_;
    ctx.trimming = t.cfg_.trimming;
    ctx.receiver_credit = t.cfg_.receiver_credit;
    if (t.cfg_.receiver_credit) credit_ = std::make_unique<CreditSource>(t.cfg_.credit);
    sb_.set_backoff(t.cfg_.rto_backoff);
    if (t.cfg_.cc.kind->uses_hops()) {
      auto& hops = t.hops_[src];
      if (hops.empty()) hops = switch_hops(t.net_, src);
      ctx.hops = hops[dst];
    }
    cc_ = t.cfg_.cc.make(ctx);
    endpoint_ = t.net_.endpoints().add(this);
    if (mode_ == PdsMode::kRod) rod_ev_ = entropy_.next(sim_.now());  // ROD keeps one path
    read_output();
    // A PDC's events are its timers': the scheduler brings in their lines ahead (the lines it
    // fetches for any target are the PDC's first, where no timer is).
    set_prefetch_hint(&rto_timer_, &close_timer_);
  }
  uint32_t endpoint() const { return endpoint_; }
  void set_peer(uint32_t ep) { peer_ = ep; }
  const CongestionControl& cc() const { return *cc_; }
  int64_t peak_in_flight() const { return peak_in_flight_; }
  const CreditSource* credit() const { return credit_.get(); }
  const EntropyStats& entropy_stats() const { return entropy_.stats(); }
  /// This PDC's credit ledger; credit it holds counts as wasted only with nothing to send.
  CreditLedger credit_ledger() const {
    CreditLedger l = credit_->ledger();
    if (!messages_.empty()) l.held = 0;
    return l;
  }
  uint32_t src() const { return src_; }
  uint32_t dst() const { return dst_; }

  void post(uint32_t flow, int64_t bytes) {
    if (state_ == State::kFailed) return;  // the connection is gone: the message never goes
    const int64_t mtu = t_.cfg_.wire.payload;
    const auto n = static_cast<uint64_t>((bytes + mtu - 1) / mtu);
    const auto last = static_cast<uint32_t>(bytes - static_cast<int64_t>(n - 1) * mtu);
    if (messages_.empty()) ++t_.sending_pdcs_[src_];
    messages_.push_back({flow, psn_end_, psn_end_ + n, last});
    psn_end_ += n;
    backlog_ += frame_bytes(mtu) * static_cast<int64_t>(n - 1) + frame_bytes(last);
    idle_timer_.cancel();
    if (state_ == State::kClosed) {
      open();
    } else if (credit_) {
      check_starved(sim_.now());  // no data in flight may carry the new demand
    }
    host_.activate(this);
  }

  // Retransmissions and new data alike wait for room in the window (the CC throttles the
  // resends of trimmed packets too); one packet may always be in flight.
  // New PSNs also stay within the receiver's reorder window of the oldest unacknowledged one
  // (the spec's maximum PSN range), so nothing arrives beyond it.
  Time ready_at() const override {
    if (state_ != State::kOpen) return Time::max();           // a close is under way
    if (credit_ && !credit_->can_send()) return Time::max();  // waits for a grant
    if (!sb_.has_retransmit()) {
      const uint64_t next = mode_ == PdsMode::kUud ? uud_next_ : sb_.nxt();
      if (next >= psn_end_) return Time::max();
      if (mode_ != PdsMode::kUud && next - sb_.una() >= t_.window_packets_) return Time::max();
    }
    if (mode_ != PdsMode::kUud && sb_.in_flight_bytes() > 0 &&
        sb_.in_flight_bytes() + full_frame() > window_) {
      return Time::max();
    }
    return sent_any_ ? last_send_ + gap_ : Time();
  }
  uint8_t tclass() const override { return tclass_; }

  // The NIC's hint brought in the first two lines; take() and what it calls read most of the
  // rest (the scoreboard, the CC, the entropy selector, the timers, the message ring), which in
  // an all-to-all (127 PDCs per NIC) is rarely still in cache.
  // The flow record take() counts the packet in and the scoreboard slot it writes are in no
  // line of the PDC; the hints to them are in the first two, which the NIC's hint brought in
  // two events ago.
  void prefetch_take() const override {
    prefetch_rest(this);
    __builtin_prefetch(slot_hint_, 1);
    if (record_hint_ != nullptr) FlowTable::prefetch(record_hint_);
  }

  Packet* take(Time now) override {
    const bool resend = sb_.has_retransmit();
    uint64_t psn = 0;
    if (resend) {
      psn = sb_.pop_retransmit();
    } else if (mode_ == PdsMode::kUud) {
      psn = uud_next_++;
    } else {
      psn = sb_.nxt();
    }
    const Message& m = sending_message(psn);
    const bool last = psn + 1 == m.end_psn;
    Packet* p = sim_.pool().acquire();
    p->type = PacketType::kData;
    p->seq = psn;
    p->payload = last ? m.last_payload : static_cast<uint32_t>(t_.cfg_.wire.payload);
    p->size = static_cast<uint32_t>(frame_bytes(p->payload));
    if (!resend) backlog_ -= p->size;
    p->flow = m.flow;
    p->endpoint = peer_;
    p->src = src_;
    p->dst = dst_;
    p->sport = mode_ == PdsMode::kRod ? rod_ev_ : entropy_.next(now);
    p->dport = kUetPort;
    p->tclass = tclass_;
    p->ecn = mode_ == PdsMode::kUud ? Ecn::kNotEct : Ecn::kEct;
    p->flags = static_cast<uint8_t>((last ? kEndOfMessage : 0) | (resend ? kRetransmit : 0) |
                                    (syn_ ? kSyn : 0));
    p->sent = now;
    if (credit_) charge_credit(*p);
    if (mode_ != PdsMode::kUud) {
      sb_.sent(psn, now, p->payload, p->sport);
      slot_hint_ = sb_.next_slot();
      peak_in_flight_ = std::max(peak_in_flight_, sb_.in_flight_bytes());
      // Ask for an ACK when nothing more can follow soon: nothing left to send, or the window
      // (or the PSN range) is full, resends waiting or not (REFERENCE.md §4.2, the AR flag).
      const bool more = sb_.has_retransmit() || sb_.nxt() < psn_end_;
      // With receiver credit also when the credit is spent (uet-htsim's sender does the same):
      // the next packet waits for a grant, maybe long.
      if (!more || sb_.in_flight_bytes() + full_frame() > window_ ||
          sb_.nxt() - sb_.una() >= t_.window_packets_ || (credit_ && !credit_->can_send())) {
        p->flags |= kAckRequest;
      }
      if ((p->flags & (kAckRequest | kRetransmit)) != 0) asked_ = psn;  // ACKed on arrival
      // With backoff a send can be due before the armed deadline (a backed-off resend's):
      // a send is due no sooner than one rto from now, so re-arm only if that is earlier.
      // Without backoff the armed deadline is never later than now + rto.
      if (!rto_timer_.armed() || now + t_.rto_ < rto_timer_.when()) arm_rto();
    }
    t_.flows_.sent(m.flow, *p, now, resend);
    if (mode_ == PdsMode::kUud && last) messages_.pop_front();  // nothing will acknowledge it
    last_send_ = now;
    sent_any_ = true;
    const int64_t wire = p->size + framing_;
    cc_->on_sent({now, Bytes(wire)});
    last_wire_ = wire;
    cc_changed(/*kick=*/false);
    return p;
  }

  void receive(Packet* p) override {
    const Time now = sim_.now();
    if (state_ == State::kFailed) {  // late answers to a PDC that gave up
      if (p->type == t_.credit_) {
        credit_->grant(p->seq);
        credit_->expire();  // nothing will be sent on it
        sync_credit();
      }
      sim_.pool().release(p);
      return;
    }
    credit_rounds_ = 0;  // the target answers (retry_round)
    if (p->type != t_.credit_) timeout_rounds_ = 0;
    if (p->type == t_.close_ack_) {
      // An answer to an earlier PDC's Close (delayed past that PDC's end) is not this one's.
      if (p->seq == close_end_) on_close_ack(now);
      sim_.pool().release(p);
      return;
    }
    if (credit_) {
      credit_->end_speculation();  // the first ACK, NACK or grant ends it
      sync_credit();
    }
    if (p->type == t_.credit_) {
      awaiting_grant_ = false;
      granted_since_watch_ = true;
      credit_->grant(p->seq);
      // An open PDC keeps its credit while idle: slow pulls exist so that its next message
      // starts on credit (REFERENCE.md §4.1, §4.6). A closing PDC sends nothing more.
      if (state_ != State::kOpen) credit_->expire();
      sync_credit();
      sim_.pool().release(p);
      wake();
      return;
    }
    syn_ = false;  // the target holds the PDC: the setup is over
    if (p->type == PacketType::kAck) {
      on_ack(*p, now);
    } else {
      FABSIM_ASSERT(p->type == PacketType::kNack);
      on_nack(*p, now);
    }
    sim_.pool().release(p);
    complete_acked(now);
    if (credit_) check_starved(now);
    if (sb_.una() >= sb_.nxt() && !sb_.has_retransmit()) {
      rto_timer_.cancel();
      if (messages_.empty() && t_.cfg_.pdc_close && has_pdc_life(mode_)) {
        idle_timer_.arm(sim_.scheduler(), this, kIdle, now + t_.cfg_.close_after);
      }
    } else {
      arm_rto();
    }
    check_stranded(now);
    wake();
  }

  void on_event(uint32_t tag, uint32_t gen) override {
    const Time now = sim_.now();
    if (tag == kCc) {
      if (!cc_timer_.fire(sim_.scheduler(), this, tag, gen)) return;
      cc_->on_timer(now);
      cc_changed(/*kick=*/true);
      check_stranded(now);
      return;
    }
    if (tag == kStarved) {
      if (starved_timer_.fire(sim_.scheduler(), this, tag, gen)) check_starved(now, /*timer=*/true);
      return;
    }
    if (tag == kWatch) {
      if (watch_timer_.fire(sim_.scheduler(), this, tag, gen)) on_watch(now);
      return;
    }
    if (tag == kIdle || tag == kClose) {
      if (!(tag == kIdle ? idle_timer_ : close_timer_).fire(sim_.scheduler(), this, tag, gen))
        return;
      if (tag == kIdle && (state_ != State::kOpen || !messages_.empty())) return;
      if (tag == kClose && t_.cfg_.retry_limit > 0 && ++close_resends_ > t_.cfg_.retry_limit) {
        // The target never answered: the initiator ends the PDC on its side. No data is lost
        // (every PSN was acknowledged before the Close), so nothing fails.
        on_close_ack(now);
        return;
      }
      send_close(now);
      return;
    }
    if (!rto_timer_.fire(sim_.scheduler(), this, tag, gen)) return;
    expired_.clear();
    sb_.expire(now, t_.rto_, &expired_);
    int64_t resent = 0;
    for (const uint64_t psn : expired_) {
      resent += sb_.slot(psn)->payload;
      ++t_.counters_.timeouts;
      ++t_.counters_.rtx_timeout;
      const uint32_t flow = message_of(psn).flow;
      ++t_.flows_[flow].timeouts;
      if (t_.flows_[flow].trace) t_.flows_.trace({now, flow, 't', psn, 0});
      entropy_.feedback(sb_.slot(psn)->ev, now, EvFeedback::kTimeout);
    }
    if (!expired_.empty()) {
      if (credit_) {
        credit_->end_speculation();
        sync_credit();
        // Resends need credit; with none, ask for it (at most once per round trip). The
        // watch (check_starved) asks again if neither the request nor a grant gets through.
        if (!credit_->can_send() && now - last_request_ >= t_.base_rtt_) request_credit(now);
        if (!credit_->can_send() && !watch_timer_.armed()) watch(now);
      }
      ++consecutive_timeouts_;
      if (retry_round(now, /*credit_round=*/false)) return;
      if (mode_ == PdsMode::kRod) sb_.rewind(sb_.una());  // in order: everything after it too
      TimeoutSignal sig{now, consecutive_timeouts_};
      sig.resent = Bytes(resent);
      cc_->on_timeout(sig);
      cc_changed(/*kick=*/false);
      check_stranded(now);  // the resends wait behind a full window of packets in flight
    }
    arm_rto();
    wake();
  }

 private:
  enum Tag : uint32_t { kRto = 0, kCc = 1, kIdle = 2, kClose = 3, kStarved = 4, kWatch = 5 };
  // PDC life (UE spec 1.0 §3.5.8, REFERENCE.md §4.2): set up by the first data packets, which
  // carry SYN until the first ACK returns (no round trip of its own); closed after
  // `close_after` idle by a Close control frame that the target answers, resent after an RTO
  // if either is lost. A message posted meanwhile waits for the answer, then opens a new PDC.
  // kFailed: the PDC gave up after retry_limit retry rounds (fail()); it sends nothing more.
  enum class State : uint8_t { kClosed, kOpen, kClosing, kFailed };

  void open() {
    state_ = State::kOpen;
    // Only a PDC the target keeps state for is set up; UUD, with no ACK, sent SYN on every
    // packet until 2026-11-29 (no byte on the wire: a flag).
    syn_ = has_pdc_life(mode_);
    ++t_.counters_.pdcs;
    if (credit_) {
      credit_->open();  // a new PDC starts speculating
      sync_credit();
      // Nothing of the closed PDC's requests is owed to the new one.
      starved_timer_.cancel();
      watch_timer_.cancel();
      awaiting_grant_ = false;
      // Without speculation (speculate = false) no data packet may go before a grant, so
      // none would carry the demand: a Credit Request does.
      check_starved(sim_.now());
    }
  }

  // A PDS control frame from this PDC's initiator to its target.
  Packet* control(PacketType type, Time now) {
    Packet* p = sim_.pool().acquire();
    p->type = type;
    p->size = static_cast<uint32_t>(t_.cfg_.wire.control_bytes);
    p->src = src_;
    p->dst = dst_;
    p->sport = entropy_.next(now);
    p->dport = kUetPort;
    p->endpoint = peer_;
    p->sent = now;
    return p;
  }

  // The retry limit (UetConfig::retry_limit). A retry round begins when the oldest outstanding
  // send times out (a timeout round), or, with receiver credit, when a whole rto passes without
  // a grant while a request is unanswered (a credit round: resends that wait for credit arm no
  // timer), at least one rto after the last round began: the PSNs sent just after the oldest
  // expire within that rto and belong to its round, as one RC QP timer's expiry covers its
  // whole flight. An answer on the data path (an ACK, even of a duplicate, a NACK, a Close's
  // answer) ends both counts: the target is there, however slowly it answers. A grant ends the
  // credit rounds only: grants can keep coming over a path where the data dies (bit errors).
  // Past `retry_limit` rounds of both kinds the PDC gives up (fail()). True if it did.
  bool retry_round(Time now, bool credit_round) {
    if (now - last_round_ >= t_.rto_) {
      ++(credit_round ? credit_rounds_ : timeout_rounds_);
      last_round_ = now;
    }
    const int rounds = timeout_rounds_ + credit_rounds_;
    if (t_.cfg_.retry_limit == 0 || rounds <= t_.cfg_.retry_limit) return false;
    fail();
    return true;
  }

  // A PDC that gave up, as an RC QP past its retry count: the sender reports an error for its
  // messages (they do not complete, unless completion = "delivered" and all their data had
  // arrived), later messages posted to this PDC are not sent, and the run reports a failed
  // sender and does not finish. It stays failed: a path that recovers later does not revive
  // it. Packets already sent still arrive or drop as the ledger counts.
  void fail() {
    state_ = State::kFailed;
    ++t_.counters_.failed_pdcs;
    for (Timer* timer :
         {&rto_timer_, &cc_timer_, &idle_timer_, &close_timer_, &starved_timer_, &watch_timer_}) {
      timer->cancel();
    }
    if (!messages_.empty()) --t_.sending_pdcs_[src_];  // no longer a sender of this NIC
    if (credit_) {
      credit_->end_speculation();  // speculative credit left is zeroed, not expired
      credit_->expire();
      sync_credit();
    }
  }

  void send_close(Time now) {
    if (state_ != State::kClosing) {
      close_resends_ = 0;
      // The PDC's end, fixed at the first Close: a message posted while it closes extends
      // psn_end_ for the next PDC, and a resent Close carrying that would make the target take
      // the next PDC's PSNs for stale (a lost Close, then a resend after a new message: the
      // second flow never completed).
      close_end_ = psn_end_;
    }
    state_ = State::kClosing;
    if (credit_) {  // the PDC ends: credit it holds is never sent against
      credit_->expire();
      sync_credit();
    }
    Packet* p = control(t_.close_, now);
    p->seq = close_end_;  // the PDC's end: anything below it from now on is stale
    ++t_.counters_.closes;
    host_.send_control(p);
    close_timer_.arm(sim_.scheduler(), this, kClose, now + t_.rto_);
  }

  void on_close_ack(Time now) {
    if (state_ != State::kClosing) return;  // the answer to a resent Close
    close_timer_.cancel();
    state_ = State::kClosed;
    if (!messages_.empty()) {
      open();
      host_.activate(this);
    }
    (void)now;
  }

  struct Message {
    uint32_t flow;
    uint64_t first_psn;
    uint64_t end_psn;  // exclusive
    uint32_t last_payload;
  };

  int64_t full_frame() const { return t_.cfg_.wire.payload + t_.cfg_.wire.header_bytes; }

  const Message& message_of(uint64_t psn) const {
    if (psn >= sending_.first_psn && psn < sending_.end_psn) return sending_;  // in cache
    for (size_t i = 0; i < messages_.size(); ++i) {
      if (psn < messages_[i].end_psn) return messages_[i];
    }
    FABSIM_ASSERT(false);
    return messages_.back();
  }
  /// message_of(psn), keeping a copy of the message take() sends from in the PDC's own lines
  /// (the ring's buffer is one more miss per packet in an all-to-all). Messages never change
  /// once posted, and PSN ranges are never reused, so the copy stays right for its PSNs.
  const Message& sending_message(uint64_t psn) {
    if (psn < sending_.first_psn || psn >= sending_.end_psn) {
      sending_ = message_of(psn);  // from the ring: the copy does not hold psn
      record_hint_ = &t_.flows_[sending_.flow];
    }
    return sending_;
  }

  void on_ack(const Packet& p, Time now) {
    const uint64_t cack = p.seq;
    const uint64_t bits = p.get_ext_at<uint64_t, 0>();
    const uint64_t base = cack + p.get_ext_at<uint32_t, kBaseOffset>();
    const uint64_t trigger =
        static_cast<uint64_t>(static_cast<int64_t>(cack) + p.get_ext_at<int32_t, kTriggerOffset>());
    const bool ecn = (p.flags & kEcnEcho) != 0;
    // The round trip of the packet that triggered the ACK, from the sender's own record of its
    // send (a NIC timestamp); none if it was sent more than once (Karn).
    Time rtt = kNoRttSample;
    const PdsScoreboard::Slot* s = (p.flags & kAckNoTrigger) != 0 ? nullptr : sb_.slot(trigger);
    if (s != nullptr) {
      if (s->state != PdsScoreboard::State::kAcked && s->sends == 1) rtt = now - s->sent;
      entropy_.feedback(s->ev, now, ecn ? EvFeedback::kEcn : EvFeedback::kGood);
    }
    // RUDI: a response answers its own request only (REFERENCE.md §4.2: no PDC state at the
    // target, one response per request by its pkt_id), so a lost response costs a resend even
    // when later ones arrive; RUD and ROD take the cumulative point and the SACK bits.
    const PdsScoreboard::Acked a =
        mode_ == PdsMode::kRudi ? sb_.ack(sb_.una(), trigger, 1) : sb_.ack(cack, base, bits);
    if (a.packets > 0) consecutive_timeouts_ = 0;
    AckSignal sig{now, Bytes(a.payload)};
    sig.rtt = rtt;
    sig.ecn_echo = ecn;
    sig.seq = sb_.una();
    sig.next_seq = sb_.nxt();
    sig.received = Bytes(a.bytes);  // frame bytes newly acknowledged (ACK_CC's rcvd_bytes)
    sig.in_flight = Bytes(sb_.in_flight_bytes());
    sig.counts_bytes = true;
    cc_->on_ack(sig);
    cc_changed(/*kick=*/false);
  }

  void on_nack(const Packet& p, Time now) {
    const uint64_t psn = p.seq;
    if (mode_ == PdsMode::kRod) {
      // Everything below the expected PSN arrived; go back to it.
      sb_.ack(psn, psn, 0);
      // Unless this PDC already went back to it, or below it, after the data that drew this
      // NACK was sent: every PSN from the go-back's on was queued again then, and the rest of
      // the old flight (later PSNs, trimmed copies; overtaken by the resends after an entropy
      // change) keeps arriving and drawing NACKs that say nothing the go-back did not answer.
      // Going back again would resend copies still in flight (a 16:1 incast with trimming had
      // 1,674 duplicates and twice RUD's completion time before this check).
      const Time drawn_by = Time::ps(p.get_ext_at<int64_t, kNackSentOffset>());
      if (went_back_ && psn >= back_psn_ && drawn_by < back_at_) {
        ++t_.counters_.stale_nacks;
        return;
      }
      went_back_ = true;
      back_psn_ = psn;
      back_at_ = now;
      const uint64_t n = sb_.rewind(psn);
      t_.counters_.rtx_nack += n;
      if (n > 0) {
        NackSignal sig{now, Bytes(), Bytes(static_cast<int64_t>(n) * t_.cfg_.wire.payload)};
        sig.trimmed = (p.flags & kNackTrimmed) != 0;
        sig.last_hop = (p.flags & kNackLastHop) != 0;
        sig.in_flight = Bytes(sb_.in_flight_bytes());
        cc_->on_nack(sig);
        cc_changed(/*kick=*/false);
      }
      return;
    }
    // The cumulative part first: what arrived in order before the gap frees the window (not
    // for RUDI, whose target answers packet by packet).
    const PdsScoreboard::Acked a = mode_ == PdsMode::kRudi
                                       ? PdsScoreboard::Acked{}
                                       : sb_.ack(p.get_ext_at<uint64_t, 0>(), 0, 0);
    const PdsScoreboard::Slot* s = sb_.slot(psn);
    if (s == nullptr) return;
    const uint16_t ev = s->ev;
    const auto payload = static_cast<int64_t>(s->payload);
    const Time rtt = s->sends == 1 ? now - s->sent : kNoRttSample;
    if (!sb_.nack(psn)) return;  // already acknowledged or queued
    ++t_.counters_.rtx_nack;
    // A trim at the receiver's own port says nothing against the path (uet-htsim's
    // processNack): the entropy is good, or ECN if the packet had been marked on the way.
    const bool last_hop = (p.flags & kNackLastHop) != 0;
    entropy_.feedback(ev, now,
                      !last_hop                       ? EvFeedback::kNack
                      : (p.flags & kNackEcnEcho) != 0 ? EvFeedback::kEcn
                                                      : EvFeedback::kGood);
    NackSignal sig{now, Bytes(a.payload), Bytes(payload)};
    sig.trimmed = (p.flags & kNackTrimmed) != 0;
    sig.last_hop = last_hop;
    sig.rtt = rtt;
    sig.in_flight = Bytes(sb_.in_flight_bytes());
    cc_->on_nack(sig);
    cc_changed(/*kick=*/false);
  }

  // Messages whose every PSN is acknowledged leave the PDC; with completion = "acked" that
  // completes them (the initiator's view, as uet-htsim measures FCT).
  void complete_acked(Time now) {
    while (!messages_.empty() && messages_.front().end_psn <= sb_.una()) {
      const uint32_t flow = messages_.front().flow;
      messages_.pop_front();
      if (messages_.empty()) --t_.sending_pdcs_[src_];
      if (t_.cfg_.complete_on_ack) t_.flows_.complete(flow, now);
    }
  }

  int64_t frame_bytes(int64_t payload) const {
    return sb_.frame_bytes(static_cast<uint32_t>(payload));
  }

  // The pull target rides in every data packet (24 bits, REFERENCE.md §4.6); with seed 001's
  // fix, a sender whose credit passed the cap when the packet was built sends the flag (all 1s
  // or all 0s) instead, and a real target that happens to look like the flag asks for one
  // quantum more.
  uint32_t wire_target(bool flagged) {
    const int64_t cwnd = cc_window_ == kUnlimitedWindow ? -1 : cc_window_.count();
    const int active = t_.sending_pdcs_[src_];
    const uint64_t flag = t_.cfg_.fix_flag_ones ? kTargetMask : 0;
    if (flagged) {
      ++t_.counters_.flagged;
      advertised_flag_ = true;
      return static_cast<uint32_t>(flag);
    }
    uint64_t target = credit_->pull_target(backlog_, sb_.queued_bytes(), cwnd, active);
    if (t_.cfg_.credit.fix && (target & kTargetMask) == flag) ++target;
    advertised_ = target;
    advertised_flag_ = false;
    return static_cast<uint32_t>(target & kTargetMask);
  }

  // The target is computed after the packet's credit and backlog are debited, as uet-htsim
  // does; the flag test (credit above the cap) is made before.
  void charge_credit(Packet& p) {
    // Seed 001's "accumulated credit" of the sender: this PDC's, or its NIC's over every PDC
    // (fix_scope), which is what a NIC shared by several receivers' credit accumulates.
    const bool flagged =
        credit_->flagged_at(t_.cfg_.fix_nic_scope ? t_.nic_credit_[src_] : credit_->credit());
    credit_->spend(p.size);
    sync_credit();
    p.set_ext_at<uint32_t, 0>(wire_target(flagged));
    if (static_cast<int>(dst_) == t_.cfg_.credit_trace_host) t_.trace_credit(0, p.size);
  }

  // Data to send, no credit, and nothing in flight: no data packet will tell the receiver of
  // demand it has not heard yet (a new message after the last target was granted in full, or
  // the last packets carried seed 001's flag instead of a target), so a Credit Request does.
  // When the receiver has heard the demand, its grants will come.
  bool starved() const {
    const bool data = sb_.has_retransmit() || sb_.nxt() < psn_end_;
    return state_ == State::kOpen && !credit_->can_send() && data && sb_.in_flight_bytes() == 0;
  }
  // The receiver has not heard the demand: the last packets carried the flag instead of a
  // target, or the demand grew past the last target sent and that one was granted in full.
  // Else the receiver still owes grants up to the last target it heard: they will come.
  bool unheard() const {
    const int64_t cwnd = cc_window_ == kUnlimitedWindow ? -1 : cc_window_.count();
    const uint64_t target =
        credit_->pull_target(backlog_, sb_.queued_bytes(), cwnd, t_.sending_pdcs_[src_]);
    return advertised_flag_ || (target > advertised_ && credit_->pull() >= advertised_);
  }
  void check_starved(Time now, bool timer = false) {
    if (!starved()) return;
    const bool ask = unheard() || (timer && awaiting_grant_);
    if (ask && (timer || !starved_timer_.armed())) {
      request_credit(now);
      starved_timer_.arm(sim_.scheduler(), this, kStarved, now + t_.rto_);
    }
    if (!watch_timer_.armed()) watch(now);
  }

  // The watch over a starved sender's grants. Requests and grants can be lost: the request
  // sent after a timeout has no timer of its own, and a lost last grant leaves the receiver
  // holding the demand met (no later grant makes it good: grants are cumulative) while the
  // sender holds nothing. Each RTO while starved: if no grant came in the whole period and
  // a request is unanswered or grants are owed (the pull number below the last target sent),
  // a request flagged as a re-ask goes, and the receiver answers it with its pull number.
  // Grants that keep coming, however slowly (a receiver serving many senders), and a demand
  // met in full (the receiver's idle list then serves the sender) ask nothing.
  void watch(Time now) {
    granted_since_watch_ = false;
    watch_timer_.arm(sim_.scheduler(), this, kWatch, now + t_.rto_);
  }
  void on_watch(Time now) {
    if (!starved()) return;  // the next starvation starts a new watch
    if (granted_since_watch_) {
      watch(now);  // grants are coming: keep watching
    } else if (awaiting_grant_ || credit_->pull() < advertised_) {
      if (retry_round(now, /*credit_round=*/true)) return;  // a whole rto without a grant
      ++t_.counters_.credit_reasks;
      request_credit(now, /*reask=*/true);
      watch(now);
    } else if (unheard()) {
      // Demand the receiver never heard: a timeout queued resends after the last target was
      // granted in full, or the packets that carried it were flagged (seed 001), and the
      // timeout's own request was held back (at most one per round trip; rto can be shorter).
      // No data packet can tell it, so a request does (it is then awaited, and re-asked).
      request_credit(now);
      watch(now);
    }
    // Else the demand was met in full and the receiver's lists serve the sender: nothing to
    // watch for (a run that goes still here shows as stalled, not as a timer ticking on).
  }

  void sync_credit() {
    const int64_t c = credit_->credit();
    t_.nic_credit_[src_] += c - reported_credit_;
    reported_credit_ = c;
  }

  // A Credit Request control packet (PDS type 8) carrying the pull target.
  void request_credit(Time now, bool reask = false) {
    last_request_ = now;
    awaiting_grant_ = true;
    ++t_.counters_.credit_requests;
    Packet* p = control(t_.credit_req_, now);
    p->set_ext_at<uint32_t, 0>(wire_target(/*flagged=*/false));
    // Before any ACK the request may be the PDC's first packet (no speculation): it carries
    // SYN and the next PSN, so the target sets the PDC up instead of taking it for stale.
    p->seq = sb_.nxt();
    if (syn_) p->flags |= kSyn;
    if (reask) p->flags |= kReask;
    host_.send_control(p);
  }

  // A window cut can strand data: the AR flag goes on a packet whose send fills the window, but
  // an ACK that cuts the window after the sends leaves packets in flight that asked for
  // nothing, fewer than ack_every bytes of them, so the target waits for more data and the
  // sender for an ACK until the RTO (a 15:1 incast without trimming stalled 4 PDCs for 296 us).
  // The sender then asks with the spec's ReqAck control packet (ctl_type 1, REFERENCE.md §4.2)
  // carrying its next PSN: the target ACKs at once and at every arrival below that PSN (a
  // ReqAck can overtake the data it asks about). Once per stranding: not while a packet that
  // draws an ACK (AR or a resend) is outstanding, nor when nothing was sent since the last
  // ReqAck (every packet in flight is below its PSN). Not resent: a lost ReqAck or answer is
  // left to the RTO. Also after a timeout: its resends wait behind the stranded packets.
  void check_stranded(Time now) {
    if (state_ != State::kOpen || (mode_ != PdsMode::kRud && mode_ != PdsMode::kRod)) return;
    if (sb_.in_flight_bytes() == 0 || sb_.in_flight_bytes() + full_frame() <= window_) return;
    if (!sb_.has_retransmit() && sb_.nxt() >= psn_end_) return;  // nothing waits to go
    if (sb_.nxt() <= req_ack_end_) return;  // nothing new since: each arrival is ACKed
    if (const PdsScoreboard::Slot* s = sb_.slot(asked_)) {
      if (s->state == PdsScoreboard::State::kOutstanding) return;
    }
    Packet* p = control(t_.req_ack_, now);
    p->seq = sb_.nxt();
    p->flow = message_of(sb_.una()).flow;
    req_ack_end_ = sb_.nxt();
    ++t_.counters_.ack_requests;
    host_.send_control(p);
  }

  void arm_rto() {
    const Time due = sb_.deadline(t_.rto_);
    if (due == Time::max()) {
      rto_timer_.cancel();
      return;
    }
    rto_timer_.arm(sim_.scheduler(), this, kRto, std::max(due, sim_.now()));
  }

  void wake() {
    if (sb_.has_retransmit() || (mode_ == PdsMode::kUud ? uud_next_ : sb_.nxt()) < psn_end_) {
      host_.activate(this);
    }
  }

  void read_output() {
    const CcOutput out = cc_->output();
    rate_ = out.rate;
    cc_gap_ = out.gap;
    cc_window_ = out.window;
    window_ = t_.inflight_cap_;
    if (out.window != kUnlimitedWindow) window_ = std::min(window_, out.window.count());
    window_ = std::max(window_, full_frame());  // one packet may always go
  }

  void cc_changed(bool kick) {
    read_output();
    if (sent_any_) gap_ = std::max(serialization_delay(last_wire_, rate_), cc_gap_);
    rearm_cc_timer(*cc_, cc_timer_, sim_.scheduler(), this, kCc);
    if (kick) wake();
  }

  UetTransport& t_;
  Simulation& sim_;
  Host& host_;
  uint32_t src_;
  uint32_t dst_;
  uint8_t tclass_;
  PdsMode mode_;
  // What ready_at() reads comes first: the NIC prefetches a PDC's first lines before pulling
  // from it (Host::pull's hint).
  State state_ = State::kClosed;
  bool sent_any_ = false;
  bool syn_ = false;
  int64_t window_ = 0;
  const FlowRecord* record_hint_ = nullptr;  // the flow take() sent from last (prefetch_take)
  const PdsScoreboard::Slot* slot_hint_ = nullptr;  // the slot of the next new PSN (prefetch_take)
  uint32_t endpoint_ = 0;
  uint32_t peer_ = 0;
  uint64_t psn_end_ = 0;
  int64_t peak_in_flight_ = 0;  // the most frame bytes ever in flight (tests)
  uint64_t close_end_ = 0;      // the closing PDC's end (its Close frames carry it)
  Time last_send_;
  Time gap_;
  std::unique_ptr<CreditSource> credit_;  // receiver credit (RCCC) only
  PdsScoreboard sb_{static_cast<uint32_t>(t_.cfg_.wire.header_bytes), kMinEthernetFrame};
  uint64_t uud_next_ = 0;                  // UUD keeps no scoreboard
  uint64_t asked_ = PdsScoreboard::kNone;  // the latest PSN sent with AR or as a resend
  uint64_t req_ack_end_ = 0;  // the latest ReqAck's PSN: arrivals below it are ACKed at once
  std::unique_ptr<CongestionControl> cc_;
  Rate rate_;
  Time cc_gap_;  // the CC's per-packet gap (CcOutput::gap)
  int64_t last_wire_ = 0;
  int64_t framing_;  // preamble, SFD and gap bytes of the NIC's link
  EntropySelector entropy_;
  uint16_t rod_ev_ = 0;
  bool went_back_ = false;  // ROD: the PDC went back to back_psn_ at back_at_ (on_nack)
  uint64_t back_psn_ = 0;
  Time back_at_;
  Ring<Message> messages_;
  Message sending_{0, 0, 0, 0};  // sending_message()'s copy (an empty range at first)
  int consecutive_timeouts_ = 0;
  int timeout_rounds_ = 0;  // retry rounds since the last answer on the data path (retry_round)
  int credit_rounds_ = 0;   // credit rounds since anything came from the target
  Time last_round_ = Time::ps(-(int64_t{1} << 60));  // when the last round began (long ago)
  int close_resends_ = 0;                            // Close frames resent unanswered (retry_limit)
  int64_t backlog_ = 0;                              // frame bytes of PSNs not yet sent
  Bytes cc_window_ = kUnlimitedWindow;
  Time last_request_ = Time::ps(-(int64_t{1} << 60));  // long ago
  Timer rto_timer_;
  Timer cc_timer_;
  Timer idle_timer_;
  Timer close_timer_;
  Timer starved_timer_;               // receiver credit: re-requests credit while starved
  Timer watch_timer_;                 // receiver credit: the watch over a starved sender's grants
  int64_t reported_credit_ = 0;       // this PDC's share of the NIC's credit sum
  uint64_t advertised_ = 0;           // the last pull target sent
  bool advertised_flag_ = false;      // the last data packet carried seed 001's flag instead
  bool awaiting_grant_ = false;       // a credit request is unanswered
  bool granted_since_watch_ = false;  // a grant came since the watch was armed
  std::vector<uint64_t> expired_;     // scratch for the timer
};

// ---- receiver --------------------------------------------------------------------------------

class UetTransport::PdcReceiver : public Endpoint, public EventTarget {
 public:
  PdcReceiver(UetTransport& t, uint32_t host, uint32_t peer_host, uint32_t peer_ep)
      : t_(t), sim_(t.net_.sim()), host_(t.net_.host(host)), self_(host), peer_host_(peer_host),
        peer_ep_(peer_ep), mode_(t.cfg_.mode),
        bitmap_(t.cfg_.mode == PdsMode::kRod ? 0 : t.window_packets_) {
    endpoint_ = t.net_.endpoints().add(this);
    if (t.cfg_.receiver_credit) {
      pacer_ = &t.pacer_of(host);
      credit_index_ = pacer_->add(peer_host, peer_ep);
    }
  }
  uint32_t endpoint() const { return endpoint_; }
  int64_t credit_issued() const {
    return pacer_ != nullptr ? pacer_->sched().issued(credit_index_) : 0;
  }

  void receive(Packet* p) override {
    const Time now = sim_.now();
    const uint64_t psn = p->seq;
    if (p->type == t_.close_) {
      on_close(p);
      return;
    }
    if (p->type == t_.req_ack_) {
      on_req_ack(p);
      return;
    }
    if (!open_) {
      // A closed PDC: anything of the old one is stale (the spec tells PDCs apart by their
      // IDs; here the PSNs keep counting across PDCs of a host pair, so the PSN does it).
      if (psn < closed_end_ || (has_pdc_life(mode_) && (p->flags & kSyn) == 0)) {
        ++t_.counters_.stale;
        sim_.pool().release(p);
        return;
      }
      open_ = true;
      accepted_any_ = false;  // the new PDC's first packet is ACKed at once
    }
    if (pacer_ != nullptr) {
      pacer_->count(*p);
      // Data, trimmed headers and credit requests all carry the pull target (or the flag).
      read_target(*p);
      if (p->type == t_.credit_req_) {
        // A re-ask: the sender heard no grant for an RTO while owed some, so grants were lost
        // (perhaps the last one, which no later grant makes good). Repeat the pull number.
        if ((p->flags & kReask) != 0) pacer_->repeat(credit_index_, now);
        sim_.pool().release(p);
        return;
      }
    }
    if ((p->flags & kTrimmed) != 0) {
      ++t_.counters_.trims_seen;
      if (mode_ == PdsMode::kUud) {
        // Nobody resends: the payload is lost (the ledger counts it as trimmed).
      } else if (bitmap_.received(psn)) {
        send_ack(*p, psn, false);
      } else if (mode_ == PdsMode::kRod && psn != bitmap_.expected()) {
        nack_gap(*p, now);  // a later PSN: the expected one is the gap to go back to
      } else {
        ++t_.counters_.trimmed_nacks;
        // Only a NACK, even when the packet asked for an ACK (AR): UE 1.0.3 answers a trimmed
        // packet with a UET_TRIMMED NACK, and its TRIMMED_ACK code (a NACK that also
        // acknowledged) was removed (REFERENCE.md §4.2, NACK codes); uet-htsim's
        // UecSink::processTrimmed sends the NACK alone. The NACK carries the cumulative point;
        // the resend draws the ACK the request asked for, with the SACK bits. (Until 2026-11-28
        // an ACK went with it: 167,429 extra ACKs in the 128:1 incast, 230,149 against htsim's
        // 62,651.)
        uint8_t code = kNackTrimmed;
        if ((p->flags & kTrimmedLastHop) != 0) code |= kNackLastHop;
        if (p->ecn == Ecn::kCe) code |= kNackEcnEcho;
        send_nack(*p, psn, code);
        if (mode_ == PdsMode::kRod) {  // the expected PSN: NACKed, as nack_gap would have
          nacked_ = true;
          nack_psn_ = psn;
          nack_time_ = now;
        }
      }
      sim_.pool().release(p);
      return;
    }
    t_.flows_.received(p->flow, *p, now);
    if (seen_any_ && psn < highest_) ++t_.flows_[p->flow].out_of_order;
    if (!seen_any_ || psn > highest_) highest_ = psn;
    seen_any_ = true;
    const bool ce = p->ecn == Ecn::kCe;
    if (mode_ == PdsMode::kUud) {
      deliver(p->flow, p->payload, now);
      sim_.pool().release(p);
      return;
    }
    const ReorderBitmap::Result r = bitmap_.arrive(psn);
    switch (r.kind) {
      case ReorderBitmap::Arrival::kDuplicate:
        ++t_.counters_.spurious;
        send_ack(*p, psn, ce);
        break;
      case ReorderBitmap::Arrival::kBeyond:
        if (mode_ == PdsMode::kRod) {
          nack_gap(*p, now);
        } else {
          ++t_.counters_.out_of_window;
        }
        break;
      case ReorderBitmap::Arrival::kInOrder:
      case ReorderBitmap::Arrival::kOutOfOrder:
        deliver(p->flow, p->payload, now);
        pending_bytes_ += p->size;  // frame bytes, as uet-htsim counts them [code: uec.cpp]
        // At once also when this arrival filled a hole (the cumulative point jumped): the
        // sender may be waiting on exactly that PSN, and nothing else may follow to carry it.
        // And at once for the PDC's first data packet (REFERENCE.md §4.2, as uet-htsim's sink):
        // its round trip, taken before the sender's own window has queued anything, is the
        // sender's first base-RTT sample.
        // And at once for a resend, or while a NACKed PSN is still missing: the sender is
        // recovering with a small window, and may be waiting for exactly this ACK to resend.
        if (mode_ == PdsMode::kRudi || ce ||
            (p->flags & (kAckRequest | kEndOfMessage | kRetransmit)) != 0 || r.advanced > 1 ||
            !accepted_any_ || bitmap_.expected() < nacked_end_ || psn < ack_below_ ||
            pending_bytes_ >= t_.cfg_.ack_every_bytes) {
          send_ack(*p, psn, ce);
        } else if (t_.cfg_.ack_delay > Time()) {
          hold_ack(*p, now);
        }
        accepted_any_ = true;
        break;
    }
    sim_.pool().release(p);
  }

 private:
  void deliver(uint32_t flow, uint32_t bytes, Time now) {
    if (t_.cfg_.complete_on_ack) {
      t_.flows_[flow].delivered += bytes;  // completes at the sender, on the ACK
    } else {
      t_.flows_.delivered(flow, bytes, now);
    }
  }

  Packet* control(const Packet& data, PacketType type, uint64_t seq) {
    Packet* p = sim_.pool().acquire();
    p->type = type;
    p->seq = seq;
    p->size = static_cast<uint32_t>(t_.cfg_.wire.control_bytes);
    p->src = self_;
    p->dst = peer_host_;
    p->sport = data.sport;  // the entropy echoed (the sender learns which path it was)
    p->dport = kUetPort;
    p->endpoint = peer_ep_;
    p->flow = data.flow;
    p->sent = sim_.now();
    return p;
  }

  // ACK (RUDI: the response) for the arrival of `psn`: CACK, then 64 SACK bits from the base.
  // `triggered`: false for an ACK that no data packet drew (a ReqAck's answer, the timer's).
  void send_ack(const Packet& data, uint64_t psn, bool ce, bool triggered = true) {
    pending_bytes_ = 0;
    holding_ = false;
    ++t_.counters_.acks;
    const uint64_t cack = bitmap_.expected();
    const uint64_t base = sack_base(psn, cack);
    Packet* p = control(data, PacketType::kAck, cack);
    p->set_ext_at<uint64_t, 0>(sack_bits(bitmap_, base));
    p->set_ext_at<uint32_t, kBaseOffset>(static_cast<uint32_t>(base - cack));
    p->set_ext_at<int32_t, kTriggerOffset>(
        static_cast<int32_t>(static_cast<int64_t>(psn) - static_cast<int64_t>(cack)));
    if (ce) p->flags = kEcnEcho;
    if (!triggered) p->flags = kAckNoTrigger;
    if (t_.flows_[data.flow].trace) t_.flows_.trace({sim_.now(), data.flow, 'a', cack, 0});
    host_.send_control(p);
  }

  // The coalescing timer (UetConfig::ack_delay): data held unacknowledged is ACKed at most
  // ack_delay after the first of it arrived. A PDC whose packets come far apart (many PDCs
  // taking turns at the sending NIC) would otherwise wait for ack_every bytes past the RTO. One
  // timer per PDC, armed when held data begins and left armed (lazily) when an ACK goes first.
  void hold_ack(const Packet& data, Time now) {
    if (!holding_) {
      holding_ = true;
      held_since_ = now;
    }
    held_sport_ = data.sport;
    held_flow_ = data.flow;
    if (!ack_timer_.armed()) {
      ack_timer_.arm(sim_.scheduler(), this, 0, held_since_ + t_.cfg_.ack_delay);
    }
  }

  void on_event(uint32_t tag, uint32_t gen) override {
    if (!ack_timer_.fire(sim_.scheduler(), this, tag, gen) || !holding_) return;
    const Time due = held_since_ + t_.cfg_.ack_delay;
    if (due > sim_.now()) {  // an ACK went since the timer was armed; newer data is held
      ack_timer_.arm(sim_.scheduler(), this, 0, due);
      return;
    }
    ++t_.counters_.delayed_acks;
    Packet stand_in;  // what send_ack reads of the data it answers
    stand_in.sport = held_sport_;
    stand_in.flow = held_flow_;
    // No trigger: the data waited up to ack_delay, so its round trip would mislead the CC.
    send_ack(stand_in, seen_any_ ? highest_ : bitmap_.expected(), false, /*triggered=*/false);
  }

  void send_nack(const Packet& data, uint64_t psn, uint8_t code) {
    ++t_.counters_.nacks;
    Packet* p = control(data, PacketType::kNack, psn);
    p->flags = code;
    p->set_ext_at<uint64_t, 0>(bitmap_.expected());  // the NACK carries the CACK too
    p->set_ext_at<int64_t, kNackSentOffset>(data.sent.ps());
    if ((code & kNackTrimmed) != 0 && psn + 1 > nacked_end_) nacked_end_ = psn + 1;
    if (t_.flows_[data.flow].trace) t_.flows_.trace({sim_.now(), data.flow, 'n', psn, 0});
    host_.send_control(p);
  }

  // ReqAck (check_stranded): ACK now what has arrived, and every arrival below its PSN at once.
  // One for a closed PDC is stale (its ACK would answer for the next PDC's PSNs).
  void on_req_ack(Packet* req) {
    if (req->seq <= closed_end_) {  // of a PDC closed since (PSNs count on across PDCs)
      ++t_.counters_.stale;
    } else {
      ack_below_ = std::max(ack_below_, req->seq);
      // Nothing of the PDC arrived yet: the data it asks about follows, ACKed as it arrives.
      if (open_ && accepted_any_) {
        send_ack(*req, seen_any_ ? highest_ : bitmap_.expected(), false, /*triggered=*/false);
      }
    }
    sim_.pool().release(req);
  }

  // Close: every PSN below the sender's end was acknowledged, so the target frees the PDC and
  // answers; a repeated Close (its answer was lost) is answered again.
  void on_close(Packet* close) {
    // A late Close of a PDC the initiator ended on its own (retry_limit) while the next is
    // open: a real Close's end is above every PSN of its PDC.
    if (open_ && seen_any_ && close->seq <= highest_) {
      ++t_.counters_.stale;
      sim_.pool().release(close);
      return;
    }
    if (open_) {
      open_ = false;
      closed_end_ = close->seq;
      if (pacer_ != nullptr) pacer_->sched().close(credit_index_);
    }
    Packet* p = sim_.pool().acquire();
    p->type = t_.close_ack_;
    p->seq = close->seq;
    p->size = static_cast<uint32_t>(t_.cfg_.wire.control_bytes);
    p->src = self_;
    p->dst = peer_host_;
    p->sport = close->sport;
    p->dport = kUetPort;
    p->endpoint = peer_ep_;
    p->sent = sim_.now();
    sim_.pool().release(close);
    host_.send_control(p);
  }

  void read_target(const Packet& p) {
    const auto wire = p.get_ext_at<uint32_t, 0>();
    const bool flagged =
        t_.cfg_.credit.fix && wire == (t_.cfg_.fix_flag_ones ? kTargetMask : uint64_t{0});
    CreditScheduler& s = pacer_->sched();
    s.on_data(credit_index_, flagged ? 0 : widen_target(wire, s.highest_target(credit_index_)),
              flagged);
    pacer_->wake();
  }

  // ROD: a packet beyond the expected PSN; NACK the expected one, once per interval.
  void nack_gap(const Packet& data, Time now) {
    const uint64_t expected = bitmap_.expected();
    if (nacked_ && nack_psn_ == expected && now - nack_time_ < t_.cfg_.rod_nack_interval) return;
    nacked_ = true;
    nack_psn_ = expected;
    nack_time_ = now;
    send_nack(data, expected, kNackRodGap);
  }

  UetTransport& t_;
  Simulation& sim_;
  Host& host_;
  uint32_t self_;
  uint32_t peer_host_;
  uint32_t peer_ep_;
  PdsMode mode_;
  uint32_t endpoint_ = 0;
  bool open_ = false;
  uint64_t closed_end_ = 0;  // PSNs below it belong to closed PDCs
  Pacer* pacer_ = nullptr;   // this host's credit pacer (receiver credit only)
  uint32_t credit_index_ = 0;
  ReorderBitmap bitmap_;
  int64_t pending_bytes_ = 0;
  uint64_t highest_ = 0;
  bool seen_any_ = false;
  bool accepted_any_ = false;  // a data packet was placed (the first is ACKed at once)
  uint64_t nacked_end_ = 0;    // one past the highest PSN NACKed for a trim
  uint64_t ack_below_ = 0;     // a ReqAck's PSN: arrivals below it are ACKed at once
  bool holding_ = false;       // data is held unacknowledged (the coalescing timer runs)
  Time held_since_;            // when the first of it arrived
  uint16_t held_sport_ = 0;    // the latest held arrival's entropy and flow (the ACK echoes)
  uint32_t held_flow_ = 0;
  Timer ack_timer_;
  bool nacked_ = false;
  uint64_t nack_psn_ = 0;
  Time nack_time_;
};

// ---- transport -------------------------------------------------------------------------------

UetTransport::UetTransport(Network& net, FlowTable& flows, const UetConfig& cfg)
    : net_(net), flows_(flows), cfg_(cfg) {
  if (net.host_count() == 0) return;
  const int64_t frame = cfg_.wire.payload + cfg_.wire.header_bytes;
  base_rtt_ = longest_base_rtt(net, frame, cfg_.wire.control_bytes);
  const Rate line = net.host(0).rate();
  const int64_t bdp = bytes_in(base_rtt_, line);
  const int64_t bdp_frames = bdp_in_whole_frames(net, frame, cfg_.wire.control_bytes);
  // uet-htsim's rule (REFERENCE.md §9.3.3): 15 us + 6 drain times of a switch queue, the queue
  // being the trim threshold with trimming (one BDP unless given: htsim's queue is its
  // threshold, -q or auto) and five BDP without (its auto queue: untrimmed data waits in five
  // BDP before it is dropped). One BDP without trimming timed out the first windows of a 15:1
  // incast 436 times, none of it lost; a 1 MB threshold with a one-BDP RTO, 223 times
  // (Uet.TheDefaultRtoCountsFiveBdpOfQueueWithoutTrimming).
  // With a reference rate the trim threshold, auto or given, scales with the port's rate.
  const int64_t queue_frames =
      !cfg_.trimming
          ? 5 * bdp_frames
          : std::llround(
                static_cast<double>(cfg_.trim_threshold > 0 ? cfg_.trim_threshold : bdp_frames) *
                cfg_.trim_scale);
  rto_ = cfg_.rto > Time() ? cfg_.rto : Time::us(15) + serialization_delay(6 * queue_frames, line);
  max_window_ = cfg_.max_window > 0 ? cfg_.max_window : std::max<int64_t>(frame, 3 * bdp / 2);
  // A given RTO shorter than one full window's round trip on an empty fabric: every window
  // times out and resends data that was not lost (Uet.EveryTimeoutComesItsBackedOffRto...:
  // 1 us against 12 us, 388 timeouts for 100 packets).
  const Time window_rtt = base_rtt_ + serialization_delay(max_window_, line);
  if (cfg_.rto > Time() && cfg_.rto < window_rtt) {
    net.sim().warn(fmt::format(
        "key 'transport.uet.rto': {} is shorter than a full window's round trip on an empty "
        "fabric, {} (base RTT {} + max_window {} B at {}): senders will time out and resend "
        "data that was not lost",
        to_string(cfg_.rto), to_string(window_rtt), to_string(base_rtt_), max_window_,
        to_string(line)));
  }
  // The sender hears a held packet's ACK about a base RTT + ack_delay after sending it: the
  // delay leaves at least half the RTO's room over the base RTT to queueing, or data that
  // arrived times out (a 5 kB trim threshold, RTO 17.4 us against a 9.6 us round trip: 65,101
  // timeouts with 10 us).
  // The default is lowered quietly (documented); a given value with a warning.
  const Time room = rto_ > base_rtt_ ? (rto_ - base_rtt_) / 2 : Time();
  if (cfg_.ack_delay > room) {
    if (cfg_.ack_delay_given) {
      net.sim().warn(fmt::format(
          "key 'transport.uet.ack_delay': {} leaves too little of the RTO, {}, over the base "
          "RTT, {}, for queueing: the receivers' coalescing timer runs at {}",
          to_string(cfg_.ack_delay), to_string(rto_), to_string(base_rtt_), to_string(room)));
    }
    cfg_.ack_delay = room;
  }
  // The PSN range: new PSNs stay this close to the oldest unacknowledged one, so the receiver's
  // reorder window holds them. Twice a capped flight (retransmissions run ahead of the
  // cumulative point by up to a window); an uncapped flight can fill all of it.
  window_packets_ = static_cast<uint64_t>(2 * max_window_ / cfg_.wire.payload + 64);
  // The byte cap on a PDC's flight: max_window, except for credit alone on a trimming fabric
  // under "auto", where the grants alone pace the sender (REFERENCE.md §4.6: a source sends
  // while credit > 0, as uet-htsim's; the PSN range still bounds it). Without trimming nothing
  // tells a credit-only receiver about a fabric queue, and uncapped data waits there past the
  // RTO (four senders on a 2:1 uplink: 561 timeouts, the last FCT 433 against 338 us), so the
  // cap stays.
  const bool credit_alone = cfg_.receiver_credit && cfg_.cc.kind == &none_cc();
  inflight_cap_ = cfg_.inflight_cap == InflightCap::kOff ||
                          (cfg_.inflight_cap == InflightCap::kAuto && credit_alone && cfg_.trimming)
                      ? INT64_MAX
                      : max_window_;
  if (cfg_.rod_nack_interval == Time()) cfg_.rod_nack_interval = base_rtt_;
  const PacketKindBlock kinds = net.sim().packet_kinds().reserve("uet", 5);
  close_ = kinds.kind(0, /*data=*/false);
  close_ack_ = kinds.kind(1, /*data=*/false);
  credit_ = kinds.kind(2, /*data=*/false);
  credit_req_ = kinds.kind(3, /*data=*/false);
  req_ack_ = kinds.kind(4, /*data=*/false);
  sending_pdcs_.assign(net.host_count(), 0);
  nic_credit_.assign(net.host_count(), 0);
  if (cfg_.receiver_credit) {
    // The sender's credit ceiling and speculative window are the max window (uet-htsim's
    // configured maxwnd, 1.5 BDP); seed 001's cap defaults to one BDP.
    cfg_.credit.max_credit = max_window_;
    cfg_.credit.mtu = frame;
    cfg_.credit.spec_window = cfg_.spec_window >= 0 ? cfg_.spec_window : max_window_;
    cfg_.credit.fix_cap = cfg_.fix_cap > 0 ? cfg_.fix_cap : 2 * max_window_ / 3;
    pacers_.resize(net.host_count());
    // Fabric feedback: uet-htsim turns it on for credit alone on an oversubscribed fabric.
    const double oversub = tor_oversubscription(net);
    feedback_on_ = cfg_.fabric_feedback > 0 ||
                   (cfg_.fabric_feedback < 0 && cfg_.cc.kind == &none_cc() && oversub > 1 + 1e-9);
    if (cfg_.feedback.min_rate <= 0) cfg_.feedback.min_rate = std::max(0.01, 0.9 / oversub);
  }
}

UetTransport::Pacer& UetTransport::pacer_of(uint32_t host) {
  auto& p = pacers_[host];
  if (!p) {
    CreditPacerConfig c;
    c.quantum = cfg_.credit.quantum;
    c.mtu = cfg_.credit_unit;
    c.slow_budget = max_window_;
    c.fix = cfg_.credit.fix;
    c.fix_cfg = cfg_.credit_fix;
    p = std::make_unique<Pacer>(*this, host, c);
  }
  return *p;
}

void UetTransport::trace_credit(int64_t issued, int64_t used) {
  trace_issued_ += issued;
  trace_used_ += used;
  const Time now = net_.sim().now();
  // One row per 100 ns at most: the last values of the interval.
  if (!credit_trace_.empty() && now - credit_trace_.back().at < Time::ns(100)) {
    credit_trace_.back().issued = trace_issued_;
    credit_trace_.back().used = trace_used_;
    return;
  }
  credit_trace_.push_back({now, trace_issued_, trace_used_});
}

const CreditScheduler* UetTransport::pacer(uint32_t host) const {
  return host < pacers_.size() && pacers_[host] ? &pacers_[host]->sched() : nullptr;
}

const FabricFeedback* UetTransport::feedback(uint32_t host) const {
  return host < pacers_.size() && pacers_[host] ? pacers_[host]->feedback() : nullptr;
}

CreditLedger UetTransport::credit_ledger(uint32_t src, uint32_t dst) const {
  CreditLedger l;
  for (const Pair* p : order_) {
    if (p->send->src() != src || p->send->dst() != dst) continue;
    if (p->send->credit() != nullptr) l += p->send->credit_ledger();
    l.issued += p->recv->credit_issued();
  }
  return l;
}

EntropyStats UetTransport::entropy_stats() const {
  EntropyStats s;
  for (const Pair* p : order_) {
    const EntropyStats& e = p->send->entropy_stats();
    s.recycled += e.recycled;
    s.random += e.random;
    s.skipped += e.skipped;
    s.freezes += e.freezes;
  }
  return s;
}

CreditLedger UetTransport::credit_total() const {
  CreditLedger l;
  for (const Pair* p : order_) {
    if (p->send->credit() != nullptr) l += p->send->credit_ledger();
    l.issued += p->recv->credit_issued();
  }
  return l;
}

// credit.csv: the credit ledger per host, as a sender (its PDCs' credit) and as a receiver (the
// PDCs sending to it); credit_trace.csv: issued and used credit over time for one receiver.
std::vector<std::pair<std::string, std::string>> UetTransport::files() const {
  if (!cfg_.receiver_credit) return {};
  std::vector<CreditLedger> as_sender(net_.host_count());
  std::vector<CreditLedger> as_receiver(net_.host_count());
  for (const Pair* p : order_) {
    CreditLedger l = p->send->credit_ledger();
    l.issued = p->recv->credit_issued();
    as_sender[p->send->src()] += l;
    as_receiver[p->send->dst()] += l;
  }
  std::string csv =
      "host,role,issued,received,spec,used,clipped,zeroed_spec,expired,remaining,held_idle,"
      "wasted\n";
  auto row = [&csv](size_t h, const char* role, const CreditLedger& l) {
    csv +=
        fmt::format("{},{},{},{},{},{},{},{},{},{},{},{}\n", h, role, l.issued, l.received, l.spec,
                    l.used, l.clipped, l.zeroed_spec, l.expired, l.remaining, l.held, l.wasted());
  };
  for (size_t h = 0; h < as_sender.size(); ++h) {
    if (as_sender[h].spec + as_sender[h].received > 0) row(h, "sender", as_sender[h]);
    if (as_receiver[h].issued > 0) row(h, "receiver", as_receiver[h]);
  }
  std::vector<std::pair<std::string, std::string>> out{{"credit.csv", csv}};
  if (cfg_.credit_trace_host >= 0) {
    std::string t = "time_us,issued_bytes,used_bytes\n";
    for (const CreditSample& c : credit_trace_) {
      t += fmt::format("{:.3f},{},{}\n", c.at.us_f(), c.issued, c.used);
    }
    out.emplace_back("credit_trace.csv", t);
  }
  return out;
}

UetTransport::~UetTransport() = default;

UetTransport::Pair& UetTransport::pair(uint32_t src, uint32_t dst, uint8_t tclass, int channel) {
  FABSIM_ASSERT(channel >= 0);
  const uint64_t key =
      (static_cast<uint64_t>(src) << 36) | (static_cast<uint64_t>(dst) << 4) | (tclass & 0x0FU);
  auto& channels = pairs_[key];
  if (channels.size() <= static_cast<size_t>(channel))
    channels.resize(static_cast<size_t>(channel) + 1);
  auto& slot = channels[static_cast<size_t>(channel)];
  if (!slot) {
    slot = std::make_unique<Pair>();
    slot->send = std::make_unique<Pdc>(*this, src, dst, tclass, order_.size());
    slot->recv = std::make_unique<PdcReceiver>(*this, dst, src, slot->send->endpoint());
    slot->send->set_peer(slot->recv->endpoint());
    order_.push_back(slot.get());
  }
  return *slot;
}

void UetTransport::start(uint32_t id) {
  const FlowSpec& spec = flows_[id].spec;
  if (spec.bytes == 0) {
    flows_.complete(id, net_.sim().now());
    return;
  }
  pair(spec.src, spec.dst, spec.tclass, spec.channel).send->post(id, spec.bytes);
}

void UetTransport::finish() {}

int64_t UetTransport::peak_in_flight(uint32_t src, uint32_t dst) const {
  for (const Pair* p : order_) {
    if (p->send->src() == src && p->send->dst() == dst) return p->send->peak_in_flight();
  }
  return 0;
}

const CongestionControl* UetTransport::pdc_cc(uint32_t src, uint32_t dst) const {
  for (const Pair* p : order_) {
    if (p->send->src() == src && p->send->dst() == dst) return &p->send->cc();
  }
  return nullptr;
}

std::vector<std::pair<std::string, uint64_t>> UetTransport::counters() const {
  std::vector<std::pair<std::string, uint64_t>> c{{"acks", counters_.acks},
                                                  {"ack_requests", counters_.ack_requests},
                                                  {"delayed_acks", counters_.delayed_acks},
                                                  {"nacks", counters_.nacks},
                                                  {"trimmed_nacks", counters_.trimmed_nacks},
                                                  {"trims_seen", counters_.trims_seen},
                                                  {"timeouts", counters_.timeouts},
                                                  {"rtx_nack", counters_.rtx_nack},
                                                  {"rtx_timeout", counters_.rtx_timeout},
                                                  {"duplicates", counters_.spurious},
                                                  {"out_of_window", counters_.out_of_window},
                                                  {"pdcs", counters_.pdcs},
                                                  {"pdc_closes", counters_.closes},
                                                  {"stale", counters_.stale}};
  if (cfg_.retry_limit > 0) c.emplace_back("failed_pdcs", counters_.failed_pdcs);
  if (cfg_.mode == PdsMode::kRod) c.emplace_back("stale_nacks", counters_.stale_nacks);
  if (!cfg_.receiver_credit) return c;
  if (feedback_on_) {
    c.insert(c.end(), {{"feedback_periods", counters_.feedback_periods},
                       {"feedback_decreases", counters_.feedback_decreases}});
  }
  const CreditLedger l = credit_total();
  const auto u = [](int64_t v) { return static_cast<uint64_t>(v); };
  c.insert(c.end(), {{"credit_grants", counters_.grants},
                     {"credit_requests", counters_.credit_requests},
                     {"credit_reasks", counters_.credit_reasks},
                     {"credit_repeats", counters_.credit_repeats},
                     {"credit_flagged", counters_.flagged},
                     {"credit_issued", u(l.issued)},
                     {"credit_received", u(l.received)},
                     {"credit_spec", u(l.spec)},
                     {"credit_used", u(l.used)},
                     {"credit_clipped", u(l.clipped)},
                     {"credit_zeroed_spec", u(l.zeroed_spec)},
                     {"credit_expired", u(l.expired)},
                     {"credit_remaining", u(std::max<int64_t>(l.remaining, 0))},
                     {"credit_held_idle", u(l.held)},
                     {"credit_wasted", u(l.wasted())}});
  return c;
}

// ---- the kind --------------------------------------------------------------------------------

namespace {

// Receiver credit (RCCC) and seed 001's fix: keys in [transport.uet].
void load_credit(Section& u, UetConfig* c) {
  c->receiver_credit = u.boolean(
      "receiver_credit", false,
      "RCCC (REFERENCE.md §4.6): the receiver's pacer grants credit at pacer_fraction of its "
      "NIC rate, a sender sends only with credit (a new PDC speculates one max window first); "
      "with cc = \"none\" credit alone, else together with the window CC");
  c->credit.quantum = u.bytes("credit_quantum", Bytes(c->credit.quantum), Bytes(1), Bytes(65536),
                              "bytes per pull number (uet-htsim's 256 B) [UNVERIFIED]")
                          .count();
  c->credit_fix.c0 = u.real("credit_coefficient", c->credit_fix.c0, 0.01, 1024,
                            "CBRC's MTU coefficient: a grant is this x credit_mtu (uet-htsim: 4 "
                            "x 4,096 B = 16 KiB, whatever the MTU)");
  const int64_t unit = u.bytes("credit_mtu", Bytes(4096), Bytes(256), Bytes(1 << 20),
                               "the MTU of the grant formula (uet-htsim's built-in 4,096 B)")
                           .count();
  c->pacer_fraction = u.real("pacer_fraction", c->pacer_fraction, 0.01, 1.0,
                             "the pacer grants credit at this fraction of the NIC rate (0.99)");
  const bool speculate =
      u.boolean("speculate", true, "a new PDC sends a speculative window before any credit");
  const int64_t spec = u.bytes("spec_window", Bytes(0), Bytes(0), Bytes(int64_t{1} << 40),
                               "speculative credit of a new PDC (0 = the max window, 1.5 BDP)")
                           .count();
  c->spec_window = !speculate ? 0 : spec > 0 ? spec : -1;
  c->credit.divide = u.boolean("divide_pull_target", true,
                               "divide the pull target by the PDCs sending from the NIC "
                               "(uet-htsim)");
  c->credit.fix = u.boolean("credit_waste_fix", false,
                            "seed 001: a sender whose credit passes fix_cap flags its data; "
                            "the receiver then cuts that sender's grant coefficient (AIMD, ASL "
                            "and ISL) at each credit-timer tick, and restores it when the flag "
                            "stops [UNVERIFIED formulas]");
  c->fix_cap = u.bytes("fix_cap", Bytes(0), Bytes(0), Bytes(int64_t{1} << 40),
                       "seed 001: the accumulated-credit cap (0 = 2/3 of the max window, one "
                       "BDP) [UNVERIFIED]")
                   .count();
  c->credit_fix.beta = u.real("fix_beta", c->credit_fix.beta, 0.0, 1.0,
                              "seed 001: multiplicative decrease per consecutive flagged packet "
                              "(ASL c0 x beta^n, ISL floor(k x beta^n)) [UNVERIFIED]");
  c->credit_fix.k = static_cast<int>(
      u.integer("fix_k", c->credit_fix.k, 1, 1024,
                "seed 001: the ISL credit coefficient k (slow pulls grant k x credit_mtu) "
                "[UNVERIFIED]"));
  c->credit_fix.m = static_cast<int>(
      u.integer("fix_m", c->credit_fix.m, 0, 1024,
                "seed 001: the ISL additive step m per tick after the flag stops, never above k "
                "[UNVERIFIED]"));
  c->fix_nic_scope =
      u.choice("fix_scope", "nic", {"nic", "pdc"},
               "seed 001: whose accumulated credit is held against fix_cap: the sending NIC's "
               "over all its PDCs (the patent's sender) or each PDC's own [UNVERIFIED]") == "nic";
  c->fix_flag_ones =
      u.choice("fix_flag", "ones", {"ones", "zeros"},
               "seed 001: the flag is the 24-bit target field all 1s or all 0s") == "ones";
  c->credit_timer =
      u.time("credit_timer", c->credit_timer,
             "the receiver's credit timer: the shortest time between two grants "
             "(0 = the granted quanta at the pacing rate; 4 quanta for a tick that grants none)");
  c->credit_trace_host = static_cast<int>(
      u.integer("credit_trace_host", -1, -1, INT32_MAX,
                "write credit_trace.csv: credit this receiver issued and its senders used, "
                "over time (-1 = none)"));
  c->credit_unit = unit;
  // Fabric feedback on the pacer rate (credit.h FabricFeedback; uet-htsim's OversubscribedCC).
  const std::string fb = u.choice(
      "fabric_feedback", "auto", {"auto", "on", "off"},
      "receiver credit: each receiver slows its pacer when its data shows fabric congestion "
      "(ECN, headers trimmed before the last hop; REFERENCE.md §4.6 'oversubscription "
      "feedback', uet-htsim's rule); auto = on for credit alone (cc = \"none\") when the ToRs "
      "are oversubscribed, as uet-htsim");
  c->fabric_feedback = fb == "on" ? 1 : fb == "off" ? 0 : -1;
  FabricFeedbackConfig& f = c->feedback;
  f.target = u.real("feedback_target", f.target, 0.0, 1.0,
                    "fabric feedback: average ECN fraction above which the rate decreases "
                    "[UNVERIFIED: uet-htsim's 0.3]");
  f.alpha = u.real("feedback_alpha", f.alpha, 0.0, 1.0,
                   "fabric feedback: weight of a period's ECN fraction in the average "
                   "[UNVERIFIED: uet-htsim's 0.5]");
  f.md = u.real("feedback_md", f.md, 0.0, 1.0,
                "fabric feedback: decrease per unit of the average above the target "
                "[UNVERIFIED: uet-htsim's 0.5]");
  f.ai = u.real("feedback_ai", f.ai, 0.0, 1.0,
                "fabric feedback: increase per period, doubled over consecutive periods "
                "without ECN [UNVERIFIED: uet-htsim's 0.01]");
  f.min_rate = u.real("feedback_min_rate", 0.0, 0.0, 1.0,
                      "fabric feedback: the lowest rate, as a fraction of the pacer's (0 = "
                      "max(0.01, 0.9 / the ToR oversubscription), uet-htsim's)");
  c->feedback_period_rtts =
      u.real("feedback_period", c->feedback_period_rtts, 0.01, 1000.0,
             "fabric feedback: the period in base round trips, each one drawn from 0.75 to "
             "1.25 times it [UNVERIFIED: uet-htsim's 1.5]");
}

class UetKind final : public TransportKind {
 public:
  std::string_view name() const override { return "uet"; }
  std::string_view description() const override {
    return "Ultra Ethernet transport (REFERENCE.md §4): PDS modes rud|rod|rudi|uud, per-packet "
           "entropy spraying, SACK/NACK recovery of trimmed packets; keys in [transport.uet]";
  }
  KindConfig load(Section& s, const TransportEnv& env) const override {
    UetConfig c;
    c.wire = env.wire;
    auto u = s.table("uet", "Ultra Ethernet PDS and SES (REFERENCE.md §4.2-4.3)");
    const std::string mode =
        u.choice("mode", "rud", {"rud", "rod", "rudi", "uud"},
                 "PDS delivery: rud = reliable unordered, rod = reliable ordered (one path, "
                 "go-back-N), rudi = reliable unordered idempotent (per-packet responses), "
                 "uud = unreliable (no ACK, no resend)");
    for (PdsMode m : {PdsMode::kRud, PdsMode::kRod, PdsMode::kRudi, PdsMode::kUud}) {
      if (mode == mode_name(m)) c.mode = m;
    }
    const int64_t pds = u.integer("pds_header_bytes", 12, 0, 256,
                                  "PDS header bytes on every data packet (REFERENCE.md §4.2)");
    const int64_t ses = u.integer("ses_header_bytes", 44, 0, 256,
                                  "SES header bytes on every data packet [UNVERIFIED]");
    if (!s.has("header_bytes")) c.wire.header_bytes = kUdpIpEthBytes + pds + ses;
    c.ack_every_bytes =
        u.bytes("ack_every", Bytes(c.ack_every_bytes), Bytes(1), Bytes(int64_t{1} << 40),
                "the receiver ACKs after this many frame bytes (and at once on "
                "ECN, a duplicate, an ACK request or a message's end)")
            .count();
    c.ack_delay_given = u.has("ack_delay");
    c.ack_delay = u.time("ack_delay", c.ack_delay,
                         "the receiver's coalescing timer: data held unacknowledged is ACKed at "
                         "most this long after the first of it arrived (0 = none, as uet-htsim; "
                         "lowered to half the RTO's room over the base RTT, with a warning if "
                         "given) [UNVERIFIED: the spec leaves coalescing to the implementation]");
    c.rto = u.time("rto", c.rto,
                   "retransmission timeout (0 = 15 us + 6 x the drain time at the NIC rate of a "
                   "switch queue: the trim threshold with trimming, five BDP without: "
                   "uet-htsim's rule)");
    c.rto_backoff = static_cast<uint8_t>(u.integer(
        "rto_backoff", c.rto_backoff, 0, PdsScoreboard::kMaxBackoff,
        "RTO backoff (UE spec: RTO_INIT x 2^retry): a packet's k-th resend times out after rto x "
        "2^min(k, rto_backoff); 0 = a fixed RTO, as uet-htsim [UNVERIFIED: the cap]"));
    c.retry_limit = static_cast<int>(u.integer(
        "retry_limit", c.retry_limit, 0, 255,
        "retry rounds (the oldest outstanding send timed out, or with credit a whole rto "
        "passed without a grant, one rto after the last round) with no answer from the target "
        "(ACK, NACK; a grant ends only the rounds without grants) before a PDC gives up at the "
        "next (the run does not finish), and unanswered "
        "Close resends before the initiator ends a PDC; 0 = never, as uet-htsim [UNVERIFIED: "
        "the spec leaves it to the implementation]"));
    c.max_window =
        u.bytes("max_window", Bytes(c.max_window), Bytes(0), Bytes(int64_t{1} << 40),
                "frame bytes in flight per PDC (see inflight_cap), and receiver credit's "
                "ceiling and speculative window (0 = 1.5 x BDP, NSCC's maxwnd)")
            .count();
    const std::string cap = u.choice(
        "inflight_cap", "auto", {"auto", "max_window", "none"},
        "the byte cap on a PDC's flight: max_window, or none (the PSN range, credit and the CC's "
        "window still apply); auto = none for receiver credit alone (cc = \"none\") on a "
        "trimming fabric, where grants pace the sender (REFERENCE.md §4.6, as uet-htsim), else "
        "max_window");
    c.inflight_cap = cap == "max_window" ? InflightCap::kMaxWindow
                     : cap == "none"     ? InflightCap::kOff
                                         : InflightCap::kAuto;
    c.rod_nack_interval = u.time("rod_nack_interval", c.rod_nack_interval,
                                 "ROD: no repeated NACK for one expected PSN within this "
                                 "(0 = the base round trip)");
    c.complete_on_ack =
        u.choice("completion", "delivered", {"delivered", "acked"},
                 "a message completes when its last byte arrives (delivered) or when the "
                 "sender holds every ACK (acked, as uet-htsim measures FCT)") == "acked";
    c.pdc_close = u.boolean("pdc_close", c.pdc_close,
                            "RUD/ROD: close an idle PDC with a Close frame and its answer (two "
                            "control frames; a message posted meanwhile waits for the answer)");
    c.close_after =
        u.time("close_after", c.close_after, "idle time before a PDC is closed [UNVERIFIED]");
    c.entropy = load_entropy_config(u);
    load_credit(u, &c);
    if (!u.describing() && c.mode == PdsMode::kUud && c.complete_on_ack) {
      u.fail("completion", "\"delivered\" with mode = \"uud\" (nothing acknowledges UUD)");
    }
    if (!u.describing() && c.mode == PdsMode::kUud && c.retry_limit > 0) {
      u.fail("retry_limit", "0 with mode = \"uud\" (UUD never retries, so nothing would count)");
    }
    if (!u.describing() && c.receiver_credit && !has_pdc_life(c.mode)) {
      u.fail("receiver_credit", "false with mode = \"rudi\" or \"uud\" (credit runs per PDC: "
                                "rud or rod)");
    }
    u.finish();
    c.trimming = env.trimming;
    c.trim_threshold = env.trim_threshold;
    c.trim_scale = env.trim_scale;
    c.cc = load_cc(s, env, "nscc");
    if (!s.describing() && c.inflight_cap == InflightCap::kOff && !c.receiver_credit &&
        c.cc.kind == &none_cc()) {
      u.fail("inflight_cap", "\"auto\" or \"max_window\" with cc = \"none\" and no "
                             "receiver_credit (nothing else would pace the sender)");
    }
    if (!s.describing()) {
      const CcNeeds needs = c.cc.make(env.line, Time())->needs();
      if (needs.cnp || needs.int_stack) {
        s.fail("cc", "a congestion control that needs neither CNPs nor INT (UET echoes ECN in "
                     "its ACKs): nscc, none, timely or swift");
      }
    }
    return KindConfig::of(c);
  }
  // The scenario has already put header_bytes() (plus any security header) into `wire`.
  std::unique_ptr<Transport> build(Network& net, FlowTable& flows, const KindConfig& cfg,
                                   const WireConfig& wire) const override {
    UetConfig c = cfg.get<UetConfig>();
    c.wire = wire;
    return std::make_unique<UetTransport>(net, flows, c);
  }
  bool handles_trim() const override { return true; }
  bool bdp_ecn_defaults() const override { return true; }
  int64_t header_bytes(const KindConfig& cfg, const WireConfig& /*wire*/) const override {
    return cfg.get<UetConfig>().wire.header_bytes;
  }
};

}  // namespace

std::unique_ptr<TransportKind> make_uet_kind() {
  return std::make_unique<UetKind>();
}

}  // namespace fabsim
