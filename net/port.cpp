// Egress scheduling and pause handling; see port.h.
#include "net/port.h"

#include <algorithm>  // max
#include <bit>        // countr_zero
#include <cstddef>    // ptrdiff_t
#include <new>        // placement of the queue lines

#include "core/assert.h"
#include "net/node.h"

namespace fabsim {

EgressPort::EgressPort(Simulation& sim, Node* owner, uint16_t index, Link* link, bool pulls)
    : sim_(sim), owner_(owner), link_(link), index_(index), pulls_(pulls) {
  q_ = first_q_.data();
  FABSIM_ASSERT(reinterpret_cast<const unsigned char*>(first_q_.data()) -
                    reinterpret_cast<const unsigned char*>(this) ==
                static_cast<std::ptrdiff_t>(kFirstLinesOffset));
  slot_.fill(kNoQueue);
  quantum_.fill(kDefaultQuantum);
}

EgressPort::~EgressPort() {
  if (q_ == first_q_.data()) return;  // the members go with the port
  for (size_t i = 0; i < kNumClasses; ++i) q_[i].~ClassQueue();
}

EgressPort::ClassQueue& EgressPort::add_queue(uint8_t c) {
  FABSIM_ASSERT(c < kNumClasses && slot_[c] == kNoQueue);
  // The port's own two lines first (a data class and the control class), then room for all
  // eight in the arena; the port's lines are left empty (a port's third class is rare).
  if (nq_ == kFirstLines) {
    auto* next = static_cast<ClassQueue*>(sim_.arena().allocate(kNumClasses * sizeof(ClassQueue)));
    for (size_t i = 0; i < kNumClasses; ++i) new (&next[i]) ClassQueue();
    for (uint8_t i = 0; i < nq_; ++i) next[i] = std::move(q_[i]);
    q_ = next;
  }
  ClassQueue& k = q_[nq_];
  if (c < kControlClass) {
    k.admission = admission_[c];
    k.quantum = quantum_[c];
  } else {
    k.quantum = 0;  // the control class: strict priority, no cap on trimmed headers
  }
  k.dequeue = dequeue_[c];
  slot_[c] = nq_++;
  return k;
}

void EgressPort::set_admission_hook(uint8_t cls, AdmissionHook* h) {
  FABSIM_CHECK(cls < kControlClass);  // the control class bypasses admission
  admission_[cls] = h;
  if (slot_[cls] != kNoQueue) q_[slot_[cls]].admission = h;
  bound_cls_ = kNoQueue;
  for (uint8_t c = 0; c < kControlClass && bound_cls_ == kNoQueue; ++c) {
    if (admission_[c] != nullptr && admission_[c]->trimmed_bound(*this) > 0) bound_cls_ = c;
  }
}

void EgressPort::set_dequeue_hook(uint8_t cls, DequeueHook* h, bool at_departure) {
  FABSIM_CHECK(cls < kNumClasses);
  dequeue_[cls] = h;
  const auto bit = static_cast<uint8_t>(1U << cls);
  const bool start = h != nullptr && !at_departure;
  const bool end = h != nullptr && at_departure;
  hooked_ = static_cast<uint8_t>(start ? hooked_ | bit : hooked_ & ~bit);
  departs_ = static_cast<uint8_t>(end ? departs_ | bit : departs_ & ~bit);
  if (slot_[cls] != kNoQueue) q_[slot_[cls]].dequeue = h;
}

void EgressPort::set_dwrr(const std::array<uint32_t, kNumClasses>& weights, int64_t quantum_bytes) {
  for (uint8_t c = 0; c < kControlClass; ++c) {
    const int64_t q = static_cast<int64_t>(weights[c] == 0 ? 1 : weights[c]) * quantum_bytes;
    FABSIM_CHECK(q > 0 && q <= UINT32_MAX);
    quantum_[c] = static_cast<uint32_t>(q);
    if (slot_[c] != kNoQueue) q_[slot_[c]].quantum = q;
  }
}

void EgressPort::set_trimmed_share(double share) {
  FABSIM_CHECK(share > 0 && share <= 1);
  const auto permille = static_cast<int64_t>(share * 1000 + 0.5);
  ClassQueue& k = queue(kControlClass);
  k.quantum = permille >= 1000 ? 0 : std::max<int64_t>(1, permille);
  k.deficit = 0;
}

void EgressPort::enqueue_pause(Packet* p) {
  ClassQueue& k = queue(kControlClass);
  size_t i = 0;  // behind the pause frames already waiting, which keep their order (XOFF, XON)
  while (i < k.q.size() && k.q[i]->type == PacketType::kPfc) ++i;
  k.q.insert(i, p);
  k.bytes += p->size;
  nonempty_ = static_cast<uint8_t>(nonempty_ | (1U << kControlClass));
  kick();  // the head changed: a busy port re-arms with it as the prefetch hint
}

void EgressPort::enqueue_as(Packet* p, uint8_t cls) {
  FABSIM_ASSERT(cls < kNumClasses && p->tclass < kNumClasses);
  const uint8_t before = nonempty_;
  ClassQueue& k = queue(cls);
  k.q.push_back(p);
  k.bytes += p->size;
  if (cls != kControlClass) data_bytes_ += p->size;
  nonempty_ = static_cast<uint8_t>(nonempty_ | (1U << cls));
  if (cls != kControlClass && k.bytes > counters_.peak_queue_bytes) {
    counters_.peak_queue_bytes = k.bytes;
  }
  // Behind a busy wire, with a packet already waiting in the class the end-of-frame event will
  // most likely serve, nothing that event depends on changes: its timer is armed (a busy port
  // with a waiting packet always has one) and its prefetch hint, that class's head, stands (a
  // packet joining that class goes behind its head). Skipping the re-arm saves reading the
  // head's queue slot, a cache miss in a large fabric.
  if (before != 0 && busy() && likely_class(before) == likely_class(nonempty_)) return;
  kick();
}

// One event per frame only where needed: a frame hands itself to the link when its
// serialization starts (the link knows when it will have left), so the port needs a kTxDone
// event only if something may be waiting when the wire frees up. A switch port schedules one
// when a packet joins its queue while it is busy; a NIC port, whose sources it pulls from,
// always does.
void EgressPort::kick() {
  if (busy()) {
    if (pulls_ || nonempty_ != 0) arm_tx_done();
    return;
  }
  if (departure_ != 0) [[unlikely]]
    depart();
  if (Packet* p = select()) start(p);
}

Packet* EgressPort::take_trimmable_tail(uint8_t cls) {
  if (slot_[cls] == kNoQueue) return nullptr;
  ClassQueue& k = q_[slot_[cls]];
  if (k.q.empty()) return nullptr;
  Packet* p = k.q.back();
  if (!is_data(p->type) || (p->flags & kTrimmed) != 0 || p->payload == 0) return nullptr;
  k.q.pop_back();
  k.bytes -= p->size;
  if (cls != kControlClass) data_bytes_ -= p->size;
  if (k.q.empty()) {
    nonempty_ = static_cast<uint8_t>(nonempty_ & ~(1U << cls));
    k.deficit = 0;  // an empty queue keeps no DWRR credit, however it emptied
  }
  return p;
}

Packet* EgressPort::pop(uint8_t cls) {
  ClassQueue& k = q_[slot_[cls]];  // it holds a packet
  Packet* p = k.q.front();
  k.q.pop_front();
  k.bytes -= p->size;
  if (cls != kControlClass) data_bytes_ -= p->size;
  if (k.q.empty()) nonempty_ = static_cast<uint8_t>(nonempty_ & ~(1U << cls));
  return p;
}

// Strict priority for the control class, then a packet pulled from the owner (a NIC's queue
// pairs), then DWRR over the queued data classes. Paused classes are skipped.
Packet* EgressPort::select() {
  constexpr uint8_t kControlBit = 1U << kControlClass;
  auto eligible = static_cast<uint8_t>(nonempty_ & ~paused_mask_);
  if ((eligible & kControlBit) && pulls_ && paused_mask_ != 0) [[unlikely]] {
    // A NIC's control line holds ACKs the switches carry in a data class (ack_class = "data"):
    // while the switch pauses that class the line waits, as a NIC's ACK queue does (ns-3's
    // RdmaEgressQueue checks the ACK class's pause before serving its ACK queue).
    if (paused(q_[slot_[kControlClass]].q.front()->tclass)) eligible &= ~kControlBit;
  }
  if (eligible & kControlBit) {
    // The control line's quantum is the trimmed headers' share in permille (0: no cap).
    if (q_[slot_[kControlClass]].quantum == 0) return pop(kControlClass);
    return select_capped(eligible);
  }
  if (pulls_) {
    if (Packet* p = owner_->pull(index_, paused_mask_)) return p;
  }
  return select_data(eligible);
}

// The trimmed headers' cap (set_trimmed_share): while data waits, a trimmed header at the head
// of the control class goes only when the bytes it was given are paid back by data, at
// share / (1 - share) of them; anything else in the control class goes first, as ever. The
// control line's deficit is that balance, in bytes x 1000.
Packet* EgressPort::select_capped(uint8_t eligible) {
  constexpr uint8_t kControlBit = 1U << kControlClass;
  ClassQueue& k = q_[slot_[kControlClass]];
  const auto data = static_cast<uint8_t>(eligible & ~kControlBit);
  if (data == 0) {
    k.deficit = 0;  // no data waits: the cap has nothing to protect
    return pop(kControlClass);
  }
  if ((k.q.front()->flags & kTrimmed) == 0 || k.deficit <= 0) {
    Packet* p = pop(kControlClass);
    if ((p->flags & kTrimmed) != 0) k.deficit += int64_t{p->size} * (1000 - k.quantum);
    return p;
  }
  Packet* p = select_data(data);
  k.deficit = std::max<int64_t>(0, k.deficit - int64_t{p->size} * k.quantum);
  return p;
}

// DWRR over the eligible data classes.
inline Packet* EgressPort::select_data(uint8_t eligible) {
  if (eligible == 0) return nullptr;
  if ((eligible & (eligible - 1)) == 0) {
    // One eligible class: it has the link to itself; DWRR state restarts when others join.
    const auto c = static_cast<uint8_t>(std::countr_zero(eligible));
    q_[slot_[c]].deficit = 0;
    turn_started_ = false;
    rr_ = c;
    return pop(c);
  }
  for (;;) {
    const uint8_t c = rr_;
    if (slot_[c] == kNoQueue) {  // never had a packet
      rr_ = static_cast<uint8_t>((c + 1) % kControlClass);
      turn_started_ = false;
      continue;
    }
    ClassQueue& k = q_[slot_[c]];
    if ((eligible >> c) & 1U) {
      if (!turn_started_) {
        k.deficit += k.quantum;
        turn_started_ = true;
      }
      const Packet* head = k.q.front();
      if (k.deficit >= head->size) {
        k.deficit -= head->size;
        Packet* p = pop(c);
        if (k.q.empty()) k.deficit = 0;
        return p;
      }
    } else if (k.q.empty()) {
      k.deficit = 0;
    }
    rr_ = static_cast<uint8_t>((c + 1) % kControlClass);
    turn_started_ = false;
  }
}

void EgressPort::start(Packet* p) {
  if (!link_->up() && !pulls_) [[unlikely]] {
    discard_all(p);
    return;
  }
  if (pulls_) sim_.ledger().inject(*p);  // a NIC: every packet it sends enters the network
  owner_->on_dequeue(index_, *p);
  if ((hooked_ >> p->tclass) & 1U) dequeue_hook(p->tclass)->on_dequeue(*p, *this);
  const Time ser = link_->serialization(*p);
  busy_ += ser;
  tx_end_ = sim_.now() + ser;
  tx_size_ = p->size;
  ++counters_.tx_packets;
  counters_.tx_bytes += p->size;
  if (is_data(p->type)) ++counters_.tx_data_packets;
  if (at_departure(p->tclass)) [[unlikely]] {
    departure_ = static_cast<uint8_t>(p->tclass + 1);
    if (link_->flight() == Time() && link_->up()) {
      // On a link without delay the frame would reach the next hop at the instant it ends,
      // perhaps before the port's event: it waits here and goes onto the link at depart().
      departure_ |= kHeld;
      link_->hold(p);
      arm_tx_done();
      return;
    }
  }
  link_->transmit(p, tx_end_);
  if (pulls_ || nonempty_ != 0) arm_tx_done();
}

// A port loses its link's carrier at once: what waits in its queues is dropped as the link's
// loss, each packet's ingress charge credited as at a dequeue (so PFC resumes). Until
// 2026-11-28 the queue drained onto the dead link at line rate, holding buffer for as long.
void EgressPort::discard_all(Packet* p) {
  do {
    owner_->on_dequeue(index_, *p);
    link_->discard(p);
  } while ((p = select()) != nullptr);
}

// The end of a frame whose class's hook runs at departure (kick() at that instant, from the
// end-of-frame event or an earlier arrival). The hook sees the queue as it is then, what
// arrived during the frame included; the frame is still on the wire (it left at the start,
// to arrive at the same time as ever) unless the link lost it. A port has no event at a
// frame's end when nothing joined its queues during the frame (see kick()): that queue is
// then empty at the departure, where RED does not mark and draws nothing, so a later kick
// skips the hook. A departure hook must be one that does nothing on an empty queue.
void EgressPort::depart() {
  const auto cls = static_cast<uint8_t>((departure_ & ~kHeld) - 1);
  const bool held = (departure_ & kHeld) != 0;
  departure_ = 0;
  if (held) {
    FABSIM_ASSERT(sim_.now() == tx_end_);  // a held frame's end has an event
    Packet* p = link_->take_held();
    if (p == nullptr) return;  // lost with the link (Link::set_up)
    // Onto the link first, so that a frame the link loses is not marked, as with a delay.
    link_->transmit(p, tx_end_);
  }
  // Nothing to do on an empty queue, or one where the hook would not act (RED below Kmin): the
  // frame is not even looked up (a cache miss).
  if (sim_.now() != tx_end_) return;
  DequeueHook* h = dequeue_hook(cls);
  if (!h->may_act(*this, cls)) return;
  if (Packet* p = link_->on_wire(tx_end_)) h->on_dequeue(*p, *this);
}

// The class select() most likely serves next: the control class (strict priority) when it
// holds a packet and is not paused, else the lowest data class that may send. A hint only:
// DWRR and the trimmed headers' cap may choose another. Until 2026-11-29 the hint was the
// lowest busy class, a data class whenever data and ACKs shared a port, so the ACK that
// select() took next had not been prefetched.
uint8_t EgressPort::likely_class(uint8_t busy) const {
  constexpr uint8_t kControlBit = 1U << kControlClass;
  const auto eligible = static_cast<uint8_t>(busy & ~paused_mask_);
  if ((eligible & kControlBit) != 0) return kControlClass;
  return static_cast<uint8_t>(std::countr_zero(eligible != 0 ? eligible : busy));
}

// The packet most likely to start next (see likely_class()), or else the source a NIC will
// pull from, is what the end-of-frame event reads first; Scheduler::pop prefetches it.
void EgressPort::arm_tx_done() {
  if (nonempty_ != 0) {
    ClassQueue& k = q_[slot_[likely_class(nonempty_)]];
    set_prefetch_hint(k.q.front(), &k.q.front());
  } else {
    set_prefetch_hint(pulls_ ? owner_->pull_hint() : nullptr);
  }
  tx_timer_.arm(sim_.scheduler(), this, kTxDone, tx_end_);
}

// One event ahead of the end of frame of a switch port, its head packet (hinted at the
// previous stage) tells which ingress counters the owner will credit and which extension
// block a dequeue hook stamps, and the link the next frame goes onto is known. A NIC's hint may be
// a queue pair rather than a packet: it has none.
void EgressPort::prefetch_next() const {
  if (pulls_) {
    if (nonempty_ == 0) owner_->prefetch_pull();  // no control frame first: a source's turn
    return;
  }
  if (nonempty_ == 0 || prefetch_hint() == nullptr) return;
  const Packet& head = *static_cast<const Packet*>(prefetch_hint());
  owner_->prefetch_dequeue(head);
  __builtin_prefetch(link_);
  __builtin_prefetch(&q_[slot_[likely_class(nonempty_)]], 1);  // the queue line pop() reads
  // A dequeue hook writes into the fabric half of the packet's extension block (INT records:
  // the header, then one record per hop).
  if (hooked_ != 0) sim_.pool().prefetch_fabric(head);
}

void EgressPort::on_event(uint32_t tag, uint32_t gen) {
  if (tag == kPauseExpiry) {
    if (!pause_->timer.fire(sim_.scheduler(), this, tag, gen)) return;
    for (uint8_t c = 0; c < kNumClasses; ++c) {
      if (paused(c) && pause_->until[c] <= sim_.now()) resume(c);
    }
    arm_pause_expiry();
    kick();
    return;
  }
  if (tx_timer_.fire(sim_.scheduler(), this, tag, gen)) kick();
}

void EgressPort::apply_pause(uint8_t cls, uint16_t quanta) {
  FABSIM_ASSERT(cls < kNumClasses);
  ++counters_.pfc_received;
  if (quanta == 0) {
    if (paused(cls)) {
      resume(cls);
      arm_pause_expiry();
      kick();
    }
    return;
  }
  // 1 quantum = 512 bit times at the link rate.
  const Time duration =
      serialization_delay(static_cast<int64_t>(quanta) * 64, link_->config().rate);
  if (!pause_) pause_ = std::make_unique<PauseState>();
  if (!paused(cls)) {
    paused_mask_ = static_cast<uint8_t>(paused_mask_ | (1U << cls));
    pause_->since[cls] = sim_.now();
  }
  pause_->until[cls] = sim_.now() + duration;
  arm_pause_expiry();
}

void EgressPort::resume(uint8_t cls) {
  paused_mask_ = static_cast<uint8_t>(paused_mask_ & ~(1U << cls));
  pause_->total[cls] += sim_.now() - pause_->since[cls];
}

void EgressPort::arm_pause_expiry() {
  Time earliest = Time::max();
  for (uint8_t c = 0; c < kNumClasses; ++c) {
    if (paused(c) && pause_->until[c] < earliest) earliest = pause_->until[c];
  }
  if (earliest == Time::max()) {
    pause_->timer.cancel();
  } else if (!pause_->timer.armed() || pause_->timer.when() != earliest) {
    pause_->timer.arm(sim_.scheduler(), this, kPauseExpiry, earliest);
  }
}

void EgressPort::finish() {
  for (uint8_t c = 0; c < kNumClasses; ++c) {
    if (paused(c)) {
      pause_->total[c] += sim_.now() - pause_->since[c];
      pause_->since[c] = sim_.now();
    }
    if (slot_[c] == kNoQueue) continue;
    while (!q_[slot_[c]].q.empty()) sim_.pool().release(pop(c));
    q_[slot_[c]].bytes = 0;
  }
  data_bytes_ = 0;
}

}  // namespace fabsim
