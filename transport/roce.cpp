// RoCEv2 queue pairs; see roce.h.
#include "transport/roce.h"

#include <algorithm>      // max, min
#include <array>          // INT stack copy
#include <cstring>        // memcpy
#include <unordered_set>  // read requests already answered
#include <utility>        // pair
#include <vector>         // unanswered read parts

#include "core/assert.h"
#include "core/ring.h"  // messages and completions per QP
#include "net/int_stamp.h"
#include "net/round_trip.h"
#include "transport/selective_repeat.h"

namespace fabsim {
namespace {
constexpr uint8_t kLastOfMessage = 1;  // Packet::flags bit on a message's last packet
// Protocol area of ACKs and NACKs (transport half): the SACKed PSN, then the echoed transmit
// time of the data packet that triggered the ACK (NIC timestamps, for delay-based CCs).
constexpr uint8_t kEchoOffset = 8;
constexpr uint8_t kEchoFlag = 4;  // Packet::flags bit: an ACK/NACK echoes a transmit time
constexpr uint8_t kSackFlag = 2;  // Packet::flags bit: a NACK carries a SACKed PSN in ext
// Packet::flags bit: data this ACK acknowledges arrived CE-marked (CcNeeds::ecn_echo).
constexpr uint8_t kEcnEchoFlag = 8;
enum DeferredWhat : uint8_t { kBegin = 0, kReadRetry = 1 };
}  // namespace

// ---- sender side -----------------------------------------------------------------------------

class RoceTransport::SendQp : public TxSource, public Endpoint, public EventTarget {
 public:
  SendQp(RoceTransport& t, uint32_t src, uint32_t dst, uint64_t index, uint8_t tclass)
      : t_(t), sim_(t.net_.sim()), host_(t.net_.host(src)), src_(src), dst_(dst), tclass_(tclass),
        cc_(t.cc_.make(t.cc_context(src, dst, host_.rate(), sim_.now()))), needs_(cc_->needs()),
        rng_(sim_.rng(stream_id(StreamKind::kQp, index))), selective_(t.selective()),
        sb_(t.cap_packets_) {
    read_output();
    endpoint_ = t.net_.endpoints().add(this);
    sport_ = static_cast<uint16_t>(49152 + rng_.below(16384));
    framing_ = host_.port().link()->config().framing_bytes;
  }
  uint32_t endpoint() const { return endpoint_; }
  uint16_t sport() const { return sport_; }
  void set_peer(uint32_t recv_endpoint) { peer_ = recv_endpoint; }
  Rate rate() const { return out_.rate; }
  uint64_t cc_decreases() const { return cc_->decreases(); }
  const CcNeeds& needs() const { return needs_; }
  uint64_t max_outstanding() const { return sb_.max_outstanding(); }
  /// Reads this QP remembers having answered (tests: bounded over a long run).
  size_t answered_reads() const { return reads_.size(); }
  const CongestionControl& cc() const { return *cc_; }

  void post(uint32_t flow, int64_t bytes) {
    const int64_t mtu = t_.cfg_.wire.payload;
    const auto n = static_cast<uint64_t>((bytes + mtu - 1) / mtu);
    const auto last = static_cast<uint32_t>(bytes - static_cast<int64_t>(n - 1) * mtu);
    messages_.push_back({flow, psn_end_, psn_end_ + n, last});
    psn_end_ += n;
    if (!dead_) host_.activate(this);
  }

  Time ready_at() const override {
    if (dead_) return Time::max();
    if (selective_) {
      const uint64_t psn = sb_.next(psn_end_);
      if (psn == SackScoreboard::kNone) return Time::max();
      // The CC's window holds back new data; the holes of a recovery always go.
      if (psn == sb_.nxt() && window_ != kUnlimitedWindow &&
          static_cast<int64_t>(sb_.outstanding()) * t_.cfg_.wire.payload >= window_.count()) {
        return Time::max();
      }
      return sent_any_ ? last_send_ + gap_ + jitter_ : Time();
    }
    if (snd_nxt_ >= psn_end_) return Time::max();
    if (window_ != kUnlimitedWindow &&
        static_cast<int64_t>(snd_nxt_ - snd_una_) * t_.cfg_.wire.payload >= window_.count()) {
      return Time::max();
    }
    return sent_any_ ? last_send_ + gap_ + jitter_ : Time();
  }
  uint8_t tclass() const override { return tclass_; }
  void prefetch_take() const override { prefetch_rest(this); }

  Packet* take(Time now) override {
    uint64_t psn = 0;
    bool resent = false;
    if (selective_) {
      psn = sb_.next(psn_end_);
      resent = psn < sb_.nxt();
      if (sb_.outstanding() == 0) retry_mark_ = now;  // idle until now: nothing was waiting
      sb_.sent(psn);
    } else {
      psn = snd_nxt_++;
      resent = psn < high_sent_;
      if (!resent) high_sent_ = psn + 1;
    }
    const Message& m = message_of(psn);
    const bool last = psn + 1 == m.end_psn;
    Packet* p = sim_.pool().acquire();
    p->type = PacketType::kData;
    p->seq = psn;
    p->payload = last ? m.last_payload : static_cast<uint32_t>(t_.cfg_.wire.payload);
    // Ethernet pads a frame to its 64-byte minimum (a 4-byte RDMA write of seed 004).
    p->size = static_cast<uint32_t>(
        std::max<int64_t>(p->payload + t_.cfg_.wire.header_bytes, kMinEthernetFrame));
    p->flow = m.flow;
    p->endpoint = peer_;
    p->src = src_;
    p->dst = dst_;
    p->sport = sport_;
    p->tclass = tclass_;
    p->ecn = needs_.cnp || needs_.ecn_echo ? Ecn::kEct : Ecn::kNotEct;
    p->flags = last ? kLastOfMessage : 0;
    p->sent = now;
    if (needs_.int_stack) {  // HPCC: ask every switch on the way for a record
      request_int(sim_.pool().attach_block(*p), kMaxIntHops);
      p->size += static_cast<uint32_t>(needs_.int_bytes);
    }
    t_.flows_.sent(m.flow, *p, now, resent);
    last_send_ = now;
    if (t_.cfg_.nic_jitter > Time()) {  // NIC processing varies per packet (issue 19)
      jitter_ = Time::ps(
          static_cast<int64_t>(rng_.below(static_cast<uint64_t>(t_.cfg_.nic_jitter.ps()) + 1)));
    }
    last_wire_ = p->size + framing_;
    sent_any_ = true;
    cc_->on_sent({now, Bytes(last_wire_)});
    cc_changed(/*kick=*/false);
    if (selective_ && t_.cfg_.irn.own_timers) {
      rto_timer_.arm(sim_.scheduler(), this, kRto, now + rto());  // IRN: re-armed per send
    } else if (!rto_timer_.armed()) {  // the IB timer: from the first send, then per progress
      rto_timer_.arm(sim_.scheduler(), this, kRto, now + rto());
    }
    return p;
  }

  void receive(Packet* p) override {
    const Time now = sim_.now();
    if (p->type == t_.read_request_) {
      answer_read(p->flow, static_cast<int64_t>(p->seq));
      sim_.pool().release(p);
      return;
    }
    if (p->type == PacketType::kCnp) {  // the same under either recovery
      cc_->on_cnp({now});
      trace_front('c', p->seq);
      cc_changed(/*kick=*/true);
    } else if (selective_) {
      receive_selective(p, now);
    } else {
      receive_go_back_n(p, now);
    }
    sim_.pool().release(p);
    flush_acked();
  }

  void receive_go_back_n(Packet* p, Time now) {
    switch (p->type) {
      case PacketType::kAck: {
        trace_front('a', p->seq);
        const Bytes acked = acknowledge(p->seq);
        signal_ack(*p, now, acked);
        cc_changed(/*kick=*/acked > Bytes());
        break;
      }
      case PacketType::kNack:
        trace_front('n', p->seq);
        if (p->seq >= snd_una_) {
          const Bytes acked = acknowledge(p->seq);
          // The cumulative part may release a paced packet before the rewind, as it always has.
          if (acked > Bytes()) wake();
          const Bytes resent = payload_between(snd_una_, snd_nxt_);
          snd_nxt_ = snd_una_;  // go back N: resend everything from the hole
          // The NACK is an acknowledgement too (its cumulative part, its delay sample, its INT
          // stack), as in IRN's recovery and ns-3's ReceiveAck.
          signal_ack(*p, now, acked);
          cc_->on_nack({now, acked, resent});
          cc_changed(/*kick=*/false);
          if (!dead_) host_.activate(this);
        }
        break;
      default:
        FABSIM_ASSERT(false);
    }
  }

  // IRN (REFERENCE.md §1.8): the scoreboard decides; this turns its answers into signals.
  void receive_selective(Packet* p, Time now) {
    switch (p->type) {
      case PacketType::kAck: {
        trace_front('a', p->seq);
        sb_.ack(p->seq);
        const Bytes acked = acknowledge(sb_.una());
        signal_ack(*p, now, acked);
        cc_changed(/*kick=*/true);
        break;
      }
      case PacketType::kNack: {
        trace_front('n', p->seq);
        const bool was = sb_.in_recovery();
        if ((p->flags & kSackFlag) != 0) {
          sb_.nack(p->seq, p->get_ext_at<uint64_t, 0>());
        } else {
          sb_.ack(p->seq);
        }
        if (!was && sb_.in_recovery()) ++t_.counters_.recoveries;
        const Bytes acked = acknowledge(sb_.una());
        // A SACK NACK is also an acknowledgement (cumulative part, delay sample) during recovery.
        signal_ack(*p, now, acked);
        // The holes this NACK revealed; a NACK repeating a known hole reports nothing lost.
        const Bytes resent =
            (p->flags & kSackFlag) != 0
                ? Bytes(static_cast<int64_t>(sb_.newly_lost()) * t_.cfg_.wire.payload)
                : Bytes();
        cc_->on_nack({now, acked, resent});
        cc_changed(/*kick=*/true);
        // SACKs leave fewer packets in flight: a timer armed with rto_high may now be due with
        // rto_low (counted from now; it never moves later here).
        if (rto_timer_.armed() && now + rto() < rto_timer_.when()) {
          rto_timer_.arm(sim_.scheduler(), this, kRto, now + rto());
        }
        break;
      }
      default:
        FABSIM_ASSERT(false);
    }
  }

  void on_event(uint32_t tag, uint32_t gen) override {
    if (tag == kCc) {
      if (!cc_timer_.fire(sim_.scheduler(), this, tag, gen)) return;
      cc_->on_timer(sim_.now());
      cc_changed(/*kick=*/true);
      return;
    }
    if (!rto_timer_.fire(sim_.scheduler(), this, tag, gen) || snd_una_ >= sent_end() || dead_)
      return;
    // The QP's retry budget counts IB local ACK timeouts (rto_base x 2^rto_exponent) without
    // progress, as the IB retry counter does. Go-back-N's timer is that timeout. IRN's own
    // timers (rto_low, rto_high) resend far sooner and count only when a whole IB timeout has
    // passed since the last progress or counted retry: a PFC pause, which they cannot tell
    // from a loss, does not use up the budget within a millisecond and end the QP.
    const bool counted =
        !selective_ || !t_.cfg_.irn.own_timers || sim_.now() - retry_mark_ >= t_.cfg_.rto(retries_);
    if (counted) {
      retry_mark_ = sim_.now();
      if (++retries_ > t_.cfg_.retry_limit) {  // the fatal expiry rewinds nothing
        dead_ = true;
        ++t_.counters_.failed_qps;
        return;
      }
    }
    ++t_.counters_.timeouts;
    ++t_.flows_[message_of(snd_una_).flow].timeouts;
    trace_front('t', snd_una_);
    if (selective_) {
      sb_.timeout(t_.cfg_.irn.timeout_resends_all);  // resend what is lost (IrnConfig)
    } else {
      snd_nxt_ = snd_una_;
    }
    cc_->on_timeout({sim_.now(), retries_});
    cc_changed(/*kick=*/false);
    rto_timer_.arm(sim_.scheduler(), this, kRto, sim_.now() + rto());
    host_.activate(this);
  }

 private:
  enum Tag : uint32_t { kRto = 0, kCc = 1 };
  struct Message {
    uint32_t flow;
    uint64_t first_psn;
    uint64_t end_psn;  // exclusive
    uint32_t last_payload;
  };

  const Message& message_of(uint64_t psn) const {
    for (size_t i = 0; i < messages_.size(); ++i) {
      if (psn < messages_[i].end_psn) return messages_[i];
    }
    FABSIM_ASSERT(false);
    return messages_.back();
  }

  void trace_front(char kind, uint64_t psn) {
    if (messages_.empty()) return;
    const uint32_t flow = messages_.front().flow;
    if (t_.flows_[flow].trace) t_.flows_.trace({sim_.now(), flow, kind, psn, 0});
  }

  // Payload bytes of PSNs [from, to) among the messages still held.
  Bytes payload_between(uint64_t from, uint64_t to) const {
    const int64_t mtu = t_.cfg_.wire.payload;
    int64_t bytes = 0;
    for (size_t i = 0; i < messages_.size(); ++i) {
      const Message& m = messages_[i];
      if (m.first_psn >= to) break;
      if (m.end_psn <= from) continue;
      const uint64_t hi = std::min(to, m.end_psn);
      bytes += static_cast<int64_t>(hi - std::max(from, m.first_psn)) * mtu;
      if (hi == m.end_psn) bytes -= mtu - m.last_payload;
    }
    return Bytes(bytes);
  }

  // An ACK's signals to the CC: its INT stack first (HPCC), then the acknowledgement with the
  // round trip measured from the echoed NIC transmit time to this NIC's receipt.
  void signal_ack(const Packet& p, Time now, Bytes acked) {
    if (needs_.int_stack && p.block != 0) {
      const ExtBlock& b = sim_.pool().block(p);
      IntSignal sig;
      sig.now = now;
      sig.hops = int_header(b).hops;
      for (int i = 0; i < sig.hops; ++i) {
        const IntHop h = int_hop(b, i);
        sig.hop[static_cast<size_t>(i)] = {Bytes(h.qlen), Bytes(static_cast<int64_t>(h.tx_bytes)),
                                           h.ts, Rate::mbps(h.rate_mbps)};
      }
      sig.seq = p.seq;
      sig.next_seq = sent_end();
      ++t_.counters_.int_acks;
      t_.counters_.int_records += static_cast<uint64_t>(sig.hops);
      cc_->on_int(sig);
    }
    AckSignal a{now, acked};
    if ((p.flags & kEchoFlag) != 0) a.rtt = now - Time::ps(p.get_ext_at<int64_t, kEchoOffset>());
    a.ecn_echo = (p.flags & kEcnEchoFlag) != 0;
    a.seq = p.seq;
    a.next_seq = sent_end();
    cc_->on_ack(a);
  }

  // One past the highest PSN sent: what a timeout may have to recover.
  uint64_t sent_end() const { return selective_ ? sb_.nxt() : high_sent_; }

  Time rto() const {
    if (out_.rto > Time()) return out_.rto;  // the CC's own rule (Swift, REFERENCE.md §2.2)
    const IrnConfig& irn = t_.cfg_.irn;
    if (!selective_ || !irn.own_timers) return t_.cfg_.rto(retries_);
    // Packets in flight: SACKed ones have arrived (the IRN paper's rule; conweave counts them).
    return sb_.in_flight() <= static_cast<uint64_t>(irn.low_packets) ? irn.rto_low : irn.rto_high;
  }

  // A read request for `bytes` of flow `flow` reached this QP's host (the data's source).
  // The QP remembers the reads it answered so that a retried request is not answered twice;
  // a finished read is forgotten (a late duplicate of it is ignored by the `done` check), in
  // sweeps whenever the set has grown past twice its size after the last sweep plus a slack,
  // so it holds at most 2 x (reads in progress) + the slack + 1: amortised O(1), bounded
  // however many reads the QP serves.
  void answer_read(uint32_t flow, int64_t bytes) {
    if (t_.flows_[flow].done) return;         // a late duplicate of a finished read
    if (!reads_.insert(flow).second) return;  // a retried request: already answered
    if (reads_.size() > 2 * reads_kept_ + kReadSweepSlack) {
      std::erase_if(reads_, [this](uint32_t f) { return t_.flows_[f].done; });
      reads_kept_ = reads_.size();
    }
    post(flow, bytes);
  }

  // Write completions found while acknowledging, reported once the QP's state is settled
  // (a completion may start the next flow on this very QP).
  void flush_acked() {
    if (acked_flows_.empty()) return;
    reporting_.swap(acked_flows_);  // both keep their capacity
    for (const uint32_t f : reporting_) t_.part_done(t_.write_parts_, f, sim_.now());
    reporting_.clear();
  }

  // Cumulative acknowledgement up to `psn` (exclusive); returns the payload bytes it newly
  // acknowledges (0 for a stale one). The caller wakes the QP.
  Bytes acknowledge(uint64_t psn) {
    if (psn <= snd_una_) return {};
    const Bytes acked = payload_between(snd_una_, psn);
    snd_una_ = psn;
    retries_ = 0;
    retry_mark_ = sim_.now();
    while (!messages_.empty() && messages_.front().end_psn <= snd_una_) {
      if (t_.cfg_.op == RdmaOp::kWrite) acked_flows_.push_back(messages_.front().flow);
      messages_.pop_front();
    }
    snd_nxt_ = std::max(snd_nxt_, snd_una_);
    if (snd_una_ >= sent_end()) {
      rto_timer_.cancel();
    } else {
      rto_timer_.arm(sim_.scheduler(), this, kRto, sim_.now() + rto());
    }
    return acked;
  }

  // Offers the QP to the NIC when it has data to send.
  void wake() {
    if (dead_) return;
    if (selective_ ? sb_.next(psn_end_) != SackScoreboard::kNone : snd_nxt_ < psn_end_) {
      host_.activate(this);
    }
  }

  // Current rate and window: the CC's, the window capped by max_inflight.
  void read_output() {
    out_ = cc_->output();
    window_ = out_.window;
    if (t_.cfg_.max_inflight > 0) window_ = std::min(window_, Bytes(t_.cfg_.max_inflight));
  }

  // The CC was signalled: re-read its output, recompute the pacing gap, re-arm its timer.
  void cc_changed(bool kick) {
    read_output();
    const Rate rate = out_.rate;
    if (sent_any_ && (rate != gap_rate_ || last_wire_ != gap_wire_)) {
      gap_bytes_ = serialization_delay(last_wire_, rate);
      gap_rate_ = rate;
      gap_wire_ = last_wire_;
    }
    gap_ = std::max(gap_bytes_, out_.gap);  // a per-packet floor (Swift below one packet)
    rearm_cc_timer(*cc_, cc_timer_, sim_.scheduler(), this, kCc);
    if (kick) wake();
  }

  RoceTransport& t_;
  Simulation& sim_;
  Host& host_;
  uint32_t src_;
  uint32_t dst_;
  uint8_t tclass_;
  uint32_t endpoint_ = 0;
  uint32_t peer_ = 0;
  uint16_t sport_ = 0;
  int64_t framing_ = 0;
  std::unique_ptr<CongestionControl> cc_;
  CcNeeds needs_;  // fixed for the QP's lifetime
  CcOutput out_;   // as of the last signal
  Bytes window_;   // out_.window, capped by max_inflight
  Ring<Message> messages_;
  uint64_t psn_end_ = 0;    // next PSN to assign to new data
  uint64_t snd_una_ = 0;    // oldest unacknowledged PSN
  uint64_t snd_nxt_ = 0;    // next PSN to send
  uint64_t high_sent_ = 0;  // one past the highest PSN ever sent
  Time last_send_;
  Time gap_;        // least time to the next packet: gap_bytes_, or the CC's per-packet gap
  Time gap_bytes_;  // serialization of the last packet at the current rate
  Rate gap_rate_;   // the rate and size gap_bytes_ was computed for
  int64_t gap_wire_ = 0;
  int64_t last_wire_ = 0;
  bool sent_any_ = false;
  bool dead_ = false;
  int retries_ = 0;  // consecutive timeouts without progress (IRN: IB timeouts, see on_event)
  Time retry_mark_;  // the last progress or counted retry (IRN)
  Timer rto_timer_;
  Timer cc_timer_;
  Rng rng_;                             // the QP's stream: its source port, then NIC jitter
  Time jitter_;                         // extra delay before the next packet (nic_jitter)
  bool selective_;                      // IRN recovery: sb_ holds snd_una / snd_nxt
  SackScoreboard sb_;                   // selective repeat only
  std::unordered_set<uint32_t> reads_;  // flows whose read request this QP answered
  size_t reads_kept_ = 0;               // reads_'s size after its last sweep
  static constexpr size_t kReadSweepSlack = 64;
  std::vector<uint32_t> acked_flows_;  // write parts fully acknowledged, to report
  std::vector<uint32_t> reporting_;    // the batch being reported
};

// ---- receiver side ---------------------------------------------------------------------------

class RoceTransport::RecvQp : public Endpoint, public EventTarget {
 public:
  // `needs`: what the paired sender's CC asks of this receiver (CNPs and their spacing).
  // `tclass`: the data's traffic class (ACKs and NACKs take it in the switches with
  // ack_class = "data").
  RecvQp(RoceTransport& t, uint32_t host, uint32_t peer_host, uint16_t sport, uint32_t peer_ep,
         const CcNeeds& needs, uint8_t tclass)
      : t_(t), sim_(t.net_.sim()), host_(t.net_.host(host)), self_(host), peer_host_(peer_host),
        sport_(sport), peer_ep_(peer_ep),
        ack_class_(t.cfg_.ack_in_data_class ? tclass : kControlClass), cnp_(needs.cnp),
        ecn_echo_(needs.ecn_echo), pacer_(needs.cnp_interval),
        int_bytes_(needs.int_stack ? needs.int_bytes : -1), selective_(t.selective()),
        bitmap_(t.cap_packets_), half_cap_(std::max<uint64_t>(1, t.cap_packets_ / 2)) {
    endpoint_ = t.net_.endpoints().add(this);
  }
  uint32_t endpoint() const { return endpoint_; }

  void receive(Packet* p) override {
    const Time now = sim_.now();
    t_.flows_.received(p->flow, *p, now);
    echo_ = p->sent;  // the next ACK or NACK echoes the latest data packet's transmit time
    if (t_.cfg_.op == RdmaOp::kRead) {
      last_arrival_ = now;
      if (last_seen_flow_ != p->flow) {
        last_seen_flow_ = p->flow;
        seen_.insert(p->flow);
      }
    }
    if (int_bytes_ >= 0 && p->block != 0) keep_int(sim_.pool().block(*p));
    if (p->ecn == Ecn::kCe) {
      if (ecn_echo_) ce_pending_ = true;
      if (cnp_) {
        last_marked_flow_ = p->flow;
        if (pacer_.on_marked(now)) {
          send_control(PacketType::kCnp, p->seq, p->flow);
        } else if (!cnp_timer_.armed()) {
          cnp_timer_.arm(sim_.scheduler(), this, 0, pacer_.pending_until());
        }
      }
    }
    if (selective_) {
      receive_selective(*p, now);
    } else if (p->seq == expected_) {
      ++expected_;
      deliver(p->flow, p->payload, now);
      ++pending_packets_;
      pending_bytes_ += p->payload;
      const auto& cfg = t_.cfg_;
      if (pending_packets_ >= cfg.ack_every_packets ||
          (cfg.ack_every_bytes > 0 && pending_bytes_ >= cfg.ack_every_bytes) ||
          (p->flags & kLastOfMessage) != 0) {
        send_ack();
      }
    } else if (p->seq > expected_) {
      ++t_.flows_[p->flow].out_of_order;  // go-back-N drops it
      if (!nacked_ || nack_psn_ != expected_ || now - nack_time_ >= t_.cfg_.nack_interval) {
        nacked_ = true;
        nack_psn_ = expected_;
        nack_time_ = now;
        ++t_.counters_.nacks;
        send_control(PacketType::kNack, expected_);
      }
    } else {
      send_ack();  // a duplicate: its ACK may have been lost
    }
    sim_.pool().release(p);
  }

  /// True once a data packet of `flow` arrived here (read mode): its request was answered.
  bool has_data_of(uint32_t flow) const { return seen_.count(flow) != 0; }
  /// When data of any flow last arrived here (read mode): the source is answering.
  Time last_arrival() const { return last_arrival_; }
  /// Sends a read request for `bytes` of `flow` to the paired sender (the data's source).
  void request_read(uint32_t flow, int64_t bytes) {
    ++t_.counters_.read_requests;
    send_control(t_.read_request_, static_cast<uint64_t>(bytes), flow);
  }

  void on_event(uint32_t tag, uint32_t gen) override {
    if (cnp_timer_.fire(sim_.scheduler(), this, tag, gen) && pacer_.on_timer(sim_.now())) {
      send_control(PacketType::kCnp, 0, last_marked_flow_);
    }
  }

 private:
  // IRN's receiver (REFERENCE.md §1.8): out-of-order packets are placed and SACKed with a
  // NACK carrying the cumulative ACK; while a hole is open every arrival is NACKed; when the
  // last hole fills an ACK ends the sender's recovery.
  void receive_selective(const Packet& p, Time now) {
    const bool had_holes = bitmap_.has_holes();
    const ReorderBitmap::Result r = bitmap_.arrive(p.seq);
    expected_ = bitmap_.expected();
    const bool accepted =
        r.kind == ReorderBitmap::Arrival::kInOrder || r.kind == ReorderBitmap::Arrival::kOutOfOrder;
    if (accepted && (p.flags & kLastOfMessage) != 0) learn_end(p.seq + 1, p.flow);
    complete_passed(now);
    switch (r.kind) {
      case ReorderBitmap::Arrival::kInOrder:
        deliver(p.flow, p.payload, now);
        if (bitmap_.has_holes()) {
          send_sack(p.seq);
        } else if (had_holes) {
          send_ack();
        } else {
          ++pending_packets_;
          pending_bytes_ += p.payload;
          const auto& cfg = t_.cfg_;
          // Coalescing never waits for more than half the BDP cap: the sender may have no more
          // outstanding, and would wait for its timeout instead.
          if (pending_packets_ >= cfg.ack_every_packets ||
              static_cast<uint64_t>(pending_packets_) >= half_cap_ ||
              (cfg.ack_every_bytes > 0 && pending_bytes_ >= cfg.ack_every_bytes) ||
              (p.flags & kLastOfMessage) != 0) {
            send_ack();
          }
        }
        break;
      case ReorderBitmap::Arrival::kOutOfOrder:
        ++t_.flows_[p.flow].out_of_order;
        deliver(p.flow, p.payload, now);  // placed directly (RDMA write semantics)
        send_sack(p.seq);
        break;
      case ReorderBitmap::Arrival::kDuplicate:
        if (p.seq < expected_) {
          send_ack();  // its ACK may have been lost
        } else if (!nacked_ || nack_psn_ != p.seq || now - nack_time_ >= t_.cfg_.nack_interval) {
          nacked_ = true;
          nack_psn_ = p.seq;
          nack_time_ = now;
          send_sack(p.seq);
        }
        break;
      case ReorderBitmap::Arrival::kBeyond:
        ++t_.counters_.beyond_bitmap;  // discarded; the sender's timeout recovers it
        break;
    }
  }

  // A message completes when the cumulative point passes its last PSN: placed out of order, it
  // still completes in order (RDMA completion semantics; a write completes at its initiator).
  void learn_end(uint64_t end, uint32_t flow) {
    size_t i = ends_.size();
    while (i > 0 && ends_[i - 1].first > end) --i;
    ends_.insert(i, {end, flow});
  }
  void complete_passed(Time now) {
    while (!ends_.empty() && ends_.front().first <= expected_) {
      const uint32_t flow = ends_.front().second;
      ends_.pop_front();
      if (t_.cfg_.op != RdmaOp::kWrite) t_.part_done(t_.recv_parts_, flow, now);
    }
  }

  void send_sack(uint64_t psn) {
    ++t_.counters_.nacks;
    ++t_.counters_.sacks;
    pending_packets_ = 0;
    pending_bytes_ = 0;
    send_control(PacketType::kNack, expected_, 0, psn);
  }

  void deliver(uint32_t flow, uint32_t bytes, Time now) {
    if (t_.cfg_.op == RdmaOp::kWrite || selective_) {
      // A write completes at its initiator, on the ACK; under selective repeat a message
      // completes when the cumulative point passes its end (complete_passed).
      t_.flows_[flow].delivered += bytes;
    } else {
      t_.flows_.delivered(flow, bytes, now);
    }
  }
  void send_ack() {
    pending_packets_ = 0;
    pending_bytes_ = 0;
    ++t_.counters_.acks;
    send_control(PacketType::kAck, expected_);
  }
  // `sack`: a selective-repeat NACK's SACKed PSN (kNoSack for none).
  static constexpr uint64_t kNoSack = UINT64_MAX;
  void send_control(PacketType type, uint64_t psn, uint32_t flow = 0, uint64_t sack = kNoSack) {
    if (type == PacketType::kCnp) {
      ++t_.counters_.cnps;
      if (t_.flows_.size() > flow && t_.flows_[flow].trace) {
        t_.flows_.trace({sim_.now(), flow, 'C', psn, 0});
      }
    }
    Packet* p = sim_.pool().acquire();
    p->type = type;
    p->seq = psn;
    p->size = static_cast<uint32_t>(t_.cfg_.wire.control_bytes);
    p->src = self_;
    p->dst = peer_host_;
    p->sport = sport_;
    p->endpoint = peer_ep_;
    p->flow = flow;
    p->sent = sim_.now();
    if (sack != kNoSack) {
      p->flags = kSackFlag;
      p->set_ext_at<uint64_t, 0>(sack);
    }
    if (type == PacketType::kAck || type == PacketType::kNack) {
      p->flags |= kEchoFlag;
      if (ce_pending_) {  // the next ACK or NACK echoes it (IRN NACKs every arrival in recovery)
        p->flags |= kEcnEchoFlag;
        ce_pending_ = false;
      }
      p->set_ext_at<int64_t, kEchoOffset>(echo_.ps());
      if (int_bytes_ >= 0) {  // HPCC: the stack of the latest data packet rides back
        ExtBlock& b = sim_.pool().attach_block(*p);
        std::memcpy(b.bytes + ExtBlock::kFabricOffset, int_copy_.data(), int_copy_.size());
        p->size += static_cast<uint32_t>(int_bytes_);
      }
    }
    host_.send_control(p, type == PacketType::kAck || type == PacketType::kNack ? ack_class_
                                                                                : kControlClass);
  }

  RoceTransport& t_;
  Simulation& sim_;
  Host& host_;
  uint32_t self_;
  uint32_t peer_host_;
  uint16_t sport_;
  uint32_t peer_ep_;
  uint8_t ack_class_;  // the switches' class for ACKs and NACKs (RoceConfig::ack_in_data_class)
  uint32_t endpoint_ = 0;
  uint64_t expected_ = 0;
  int pending_packets_ = 0;
  int64_t pending_bytes_ = 0;
  bool nacked_ = false;
  uint64_t nack_psn_ = 0;
  Time nack_time_;
  bool cnp_;                 // notification point on: congestion marks are answered with CNPs
  bool ecn_echo_;            // congestion marks are echoed in ACKs (CcNeeds::ecn_echo)
  bool ce_pending_ = false;  // a CE-marked packet arrived since the last ACK or NACK
  CnpPacer pacer_;
  Timer cnp_timer_;
  uint32_t last_marked_flow_ = 0;
  // The INT stack (header and records) of the latest data packet.
  static constexpr size_t kIntBytes =
      kIntHopsOffset - kIntHeaderOffset + kMaxIntHops * sizeof(IntHop);
  void keep_int(const ExtBlock& b) {
    std::memcpy(int_copy_.data(), b.bytes + ExtBlock::kFabricOffset, kIntBytes);
  }
  Time echo_;
  int int_bytes_;  // the INT header's wire bytes; -1 when the sender's CC wants no INT
  std::array<unsigned char, kIntBytes> int_copy_{};
  bool selective_;
  ReorderBitmap bitmap_;               // selective repeat only
  uint64_t half_cap_;                  // selective repeat: ACK at least every half BDP cap
  std::unordered_set<uint32_t> seen_;  // read mode: flows with data here
  uint32_t last_seen_flow_ = UINT32_MAX;
  Time last_arrival_;                         // read mode: the last data arrival of any flow
  Ring<std::pair<uint64_t, uint32_t>> ends_;  // (one past last PSN, flow), by PSN
};

// ---- transport -------------------------------------------------------------------------------

Time RoceConfig::rto(int expiries) const {
  // Shifts past the range of Time saturate: such a timeout never fires within a run.
  constexpr int kMaxShift = 62;
  const int shift = rto_exponent + (rto_backoff ? expiries : 0);
  const Int128 ps = static_cast<Int128>(rto_base.ps()) << std::min(shift, kMaxShift);
  constexpr Int128 kCap = Time::max().ps() / 2;  // leaves room for now + rto
  return Time::ps(static_cast<int64_t>(std::min(ps, kCap)));
}

RoceTransport::RoceTransport(Network& net, FlowTable& flows, const RoceConfig& cfg)
    : net_(net), flows_(flows), cfg_(cfg), cc_(cfg.cc) {
  // Its own packet kind: GSE switches treat the core's kRequest as a DGSQ request.
  read_request_ = net.sim().packet_kinds().reserve(cfg.name, 1).kind(0, /*data=*/false);
  const int64_t payload = cfg_.wire.payload;
  if (net.host_count() > 0) {
    base_rtt_ = longest_base_rtt(net, payload + cfg_.wire.header_bytes, cfg_.wire.control_bytes);
    needs_int_ = cc_.make(cc_context(0, 0, net.host(0).rate(), Time()))->needs().int_stack;
  }
  if (selective() && net.host_count() > 0) {
    // Derived: the longest unloaded round trip's bytes at the NIC rate in whole frames
    // (headers counted, preamble and gap not: the IRN paper's BDP / MTU, as UET's window and
    // the ECN thresholds count it, net/round_trip.h); given: payload bytes, in whole packets.
    const int64_t frame = payload + cfg_.wire.header_bytes;
    const int64_t cap = cfg_.irn.bdp_cap;
    cap_packets_ = static_cast<uint64_t>(
        cap == 0 ? bdp_in_whole_frames(net, frame, cfg_.wire.control_bytes) / frame
                 : std::max<int64_t>(1, (cap + payload - 1) / payload));
  }
}

RoceTransport::~RoceTransport() = default;

CcContext RoceTransport::cc_context(uint32_t src, uint32_t dst, Rate line, Time start) {
  CcContext ctx;
  ctx.line = line;
  ctx.start = start;
  ctx.mss = cfg_.wire.payload;
  ctx.header_bytes = cfg_.wire.header_bytes;
  ctx.base_rtt = base_rtt_;
  if (cc_.kind->uses_hops() && src != dst) {
    auto& hops = hops_[src];
    if (hops.empty()) hops = switch_hops(net_, src);
    ctx.hops = hops[dst];
  }
  return ctx;
}

RoceTransport::Connection& RoceTransport::connection_of(uint32_t id) {
  const FlowSpec& spec = flows_[id].spec;
  if (!cfg_.qp_per_flow) return connection(spec.src, spec.dst, spec.channel, spec.tclass);
  auto& slot = flow_conns_[id];
  if (!slot) slot = make_connection(spec.src, spec.dst, spec.tclass);
  return *slot;
}

std::unique_ptr<RoceTransport::Connection>
RoceTransport::make_connection(uint32_t src, uint32_t dst, uint8_t tclass) {
  auto c = std::make_unique<Connection>();
  for (int i = 0; i < cfg_.qps_per_connection; ++i) {
    auto s = std::make_unique<SendQp>(*this, src, dst, next_qp_++, tclass);
    auto r =
        std::make_unique<RecvQp>(*this, dst, src, s->sport(), s->endpoint(), s->needs(), tclass);
    s->set_peer(r->endpoint());
    c->send.push_back(std::move(s));
    c->recv.push_back(std::move(r));
  }
  order_.push_back(c.get());
  return c;
}

RoceTransport::Connection& RoceTransport::connection(uint32_t src, uint32_t dst, int channel,
                                                     uint8_t tclass) {
  FABSIM_ASSERT(channel >= 0);
  Channels& pair = conns_[(static_cast<uint64_t>(src) << 32) | dst];
  if (pair.size() <= static_cast<size_t>(channel)) pair.resize(static_cast<size_t>(channel) + 1);
  auto& slot = pair[static_cast<size_t>(channel)];
  if (!slot) slot = make_connection(src, dst, tclass);
  return *slot;
}

const RoceTransport::Connection* RoceTransport::first_connection(uint32_t src, uint32_t dst) const {
  const auto it = conns_.find((static_cast<uint64_t>(src) << 32) | dst);
  return it == conns_.end() || it->second.empty() ? nullptr : it->second[0].get();
}

void RoceTransport::start(uint32_t id) {
  const FlowSpec& spec = flows_[id].spec;
  const Time now = net_.sim().now();
  if (spec.bytes == 0) {
    flows_.complete(id, now);
    return;
  }
  // The host posts the operation (command latency); the first operation of a host pair then
  // waits for its connection to be set up, and later ones for that set-up to finish.
  Time at = now + cfg_.command_latency;
  if (cfg_.connection_setup > Time()) {
    const uint64_t key = (static_cast<uint64_t>(spec.src) << 32) | spec.dst;
    const auto [it, fresh] = conn_ready_.try_emplace(key, at + cfg_.connection_setup);
    at = std::max(at, it->second);
  }
  if (at > now) {
    defer(at, id, kBegin);
  } else {
    begin(id);
  }
}

void RoceTransport::begin(uint32_t id) {
  const FlowSpec& spec = flows_[id].spec;
  Connection& c = connection_of(id);
  if (cfg_.op == RdmaOp::kRead) {
    send_read_request(id, /*retry=*/false);
    return;
  }
  const auto k = static_cast<int64_t>(c.send.size());
  const int64_t per = spec.bytes / k;
  const int64_t rem = spec.bytes % k;
  int parts = 0;
  for (int64_t i = 0; i < k; ++i) {
    const int64_t b = per + (i < rem ? 1 : 0);
    if (b > 0) {
      c.send[i]->post(id, b);
      ++parts;
    }
  }
  if (cfg_.op == RdmaOp::kWrite) {
    write_parts_[id] = parts;
  } else if (selective()) {
    recv_parts_[id] = parts;
  }
}

// A read: the data's destination asks each QP part of the connection for its share. A part
// whose request drew no data of the flow within a retransmission timeout is asked again (its
// request or data was lost), unless data of earlier reads kept arriving on it meanwhile: the
// source answers a QP's requests in order, so a read queued behind others waits, and the source
// is answering (IB resets the requester's timer on every response). The retry budget counts
// IB timeouts, as a QP's does (SendQp::on_event): with IRN's own timers a request is asked
// again every rto_low, but counts only once a whole IB timeout (rto_base x 2^rto_exponent,
// backed off with rto_backoff) has passed since the last counted one. When the count passes
// retry_limit with no answer, the flow's source is a failed sender (the run did not finish).
void RoceTransport::send_read_request(uint32_t id, bool retry) {
  const FlowSpec& spec = flows_[id].spec;
  Connection& c = connection_of(id);
  const Time now = net_.sim().now();
  const auto k = static_cast<int64_t>(c.recv.size());
  const int64_t per = spec.bytes / k;
  const int64_t rem = spec.bytes % k;
  const bool fast = selective() && cfg_.irn.own_timers;  // IRN's rto_low between requests
  ReadState& st = read_state_[id];
  std::vector<size_t> unanswered;
  bool answering = false;
  int parts = 0;
  for (int64_t i = 0; i < k; ++i) {
    const int64_t b = per + (i < rem ? 1 : 0);
    if (b <= 0) continue;
    ++parts;
    const auto q = static_cast<size_t>(i);
    if (c.recv[q]->has_data_of(id)) continue;  // the source ignores a request it answered
    unanswered.push_back(q);
    if (retry && c.recv[q]->last_arrival() > st.asked) answering = true;
  }
  if (!retry && selective()) recv_parts_.try_emplace(id, parts);
  if (unanswered.empty()) return;
  if (answering) {  // earlier reads' data came since the last request: wait on
    st.asked = now;
    st.mark = now;
    st.counted = 0;
    defer(now + (fast ? cfg_.irn.rto_low : cfg_.rto(0)), id, kReadRetry);
    return;
  }
  if (!retry) {
    st.mark = now;
  } else if (!fast || now - st.mark >= cfg_.rto(st.counted)) {
    st.mark = now;
    if (++st.counted > cfg_.retry_limit) {  // retry_limit IB timeouts retried, none answered
      ++counters_.failed_qps;
      return;
    }
  }
  for (const size_t q : unanswered) {
    const int64_t b = per + (static_cast<int64_t>(q) < rem ? 1 : 0);
    c.recv[q]->request_read(id, b);
  }
  st.asked = now;
  defer(now + (fast ? cfg_.irn.rto_low : cfg_.rto(st.counted)), id, kReadRetry);
}

void RoceTransport::defer(Time at, uint32_t id, uint8_t what) {
  deferred_.push({at, deferred_order_++, id, what});
  const Time next = deferred_.top().at;
  if (!deferred_timer_.armed() || deferred_timer_.when() != next) {
    deferred_timer_.arm(net_.sim().scheduler(), this, 0, next);
  }
}

void RoceTransport::on_event(uint32_t tag, uint32_t gen) {
  if (!deferred_timer_.fire(net_.sim().scheduler(), this, tag, gen)) return;
  const Time now = net_.sim().now();
  while (!deferred_.empty() && deferred_.top().at <= now) {
    const Deferred d = deferred_.top();
    deferred_.pop();
    if (d.what == kBegin) {
      begin(d.flow);
    } else if (!flows_[d.flow].done) {
      send_read_request(d.flow, /*retry=*/true);  // a part has had no response yet
    }
  }
  if (!deferred_.empty()) deferred_timer_.arm(net_.sim().scheduler(), this, 0, deferred_.top().at);
}

void RoceTransport::part_done(std::unordered_map<uint32_t, int>& parts, uint32_t id, Time now) {
  const auto it = parts.find(id);
  if (it == parts.end() || --it->second > 0) return;
  parts.erase(it);
  read_state_.erase(id);
  flows_.complete(id, now);
}

void RoceTransport::finish() {}

uint64_t RoceTransport::rate_cuts() const {
  uint64_t n = 0;
  for (const Connection* c : order_) {
    for (const auto& qp : c->send) n += qp->cc_decreases();
  }
  return n;
}

std::vector<std::pair<std::string, uint64_t>> RoceTransport::counters() const {
  std::vector<std::pair<std::string, uint64_t>> c = {
      {"acks", counters_.acks},         {"nacks", counters_.nacks},
      {"cnps", counters_.cnps},         {"rate_cuts", rate_cuts()},
      {"timeouts", counters_.timeouts}, {"failed_qps", counters_.failed_qps}};
  if (selective()) {
    c.insert(c.end(), {{"sacks", counters_.sacks},
                       {"recoveries", counters_.recoveries},
                       {"beyond_bitmap", counters_.beyond_bitmap},
                       {"bdp_cap_packets", cap_packets_}});
  }
  if (cfg_.op == RdmaOp::kRead) c.emplace_back("read_requests", counters_.read_requests);
  if (needs_int_) {
    c.insert(c.end(), {{"int_acks", counters_.int_acks}, {"int_records", counters_.int_records}});
  }
  return c;
}

const CongestionControl* RoceTransport::qp_cc(uint32_t src, uint32_t dst, int qp) const {
  const Connection* c = first_connection(src, dst);
  if (c == nullptr || qp >= static_cast<int>(c->send.size())) return nullptr;
  return &c->send[qp]->cc();
}

size_t RoceTransport::answered_reads(uint32_t src, uint32_t dst, int qp) const {
  const Connection* c = first_connection(src, dst);
  if (c == nullptr || qp >= static_cast<int>(c->send.size())) return 0;
  return c->send[qp]->answered_reads();
}

int64_t RoceTransport::max_outstanding_bytes(uint32_t src, uint32_t dst, int qp) const {
  const Connection* c = first_connection(src, dst);
  if (c == nullptr || qp >= static_cast<int>(c->send.size())) return 0;
  return static_cast<int64_t>(c->send[qp]->max_outstanding()) * cfg_.wire.payload;
}

Rate RoceTransport::qp_rate(uint32_t src, uint32_t dst, int qp) const {
  const Connection* c = first_connection(src, dst);
  if (c == nullptr || qp >= static_cast<int>(c->send.size())) return Rate(0);
  return c->send[qp]->rate();
}

}  // namespace fabsim
