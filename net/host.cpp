// NIC scheduling and demultiplexing; see host.h.
#include "net/host.h"

#include "core/assert.h"

namespace fabsim {

Host::Host(Simulation& sim, uint32_t id, std::string name, const EndpointTable& endpoints)
    : sim_(sim), id_(id), name_(std::move(name)), endpoints_(endpoints) {}

void Host::attach(Link* out) {
  port_ = sim_.arena().make<EgressPort>(sim_, this, uint16_t{0}, out, /*pulls=*/true);
}

// Where a source that becomes active joins the round robin (docs/MODEL.md "Egress ports"). "fifo":
// at the back, behind every source already waiting, as a flow joins the tail of deficit round
// robin's active list (Shreedhar and Varghese, SIGCOMM '95) and a source joins uet-htsim's NIC
// queue; in the ring that is just after the source served last, which it then stands in for
// (the turn after it is the same). "ring" (the default): before the ring's first member,
// wherever the round robin stands, so it may be served before sources that were waiting.
void Host::activate(TxSource* s) {
  if (!s->on_nic_) {
    s->on_nic_ = true;
    if (head_ == nullptr) {
      head_ = s;
      s->nic_prev_ = s->nic_next_ = s;
    } else {
      // Nothing served yet: the back is before the first; else it is after the last served.
      const bool back = fifo_ && last_ != nullptr;
      TxSource* const before = back ? last_ : head_->nic_prev_;
      s->nic_prev_ = before;
      s->nic_next_ = before->nic_next_;
      before->nic_next_->nic_prev_ = s;
      before->nic_next_ = s;
      if (back) last_ = s;
    }
    ++active_count_;
  }
  set_pull_hint(next_turn());
  port_->kick();
}

void Host::unlink(TxSource* s) {
  s->on_nic_ = false;
  if (--active_count_ == 0) {
    head_ = last_ = nullptr;
    return;
  }
  s->nic_prev_->nic_next_ = s->nic_next_;
  s->nic_next_->nic_prev_ = s->nic_prev_;
  if (head_ == s) head_ = s->nic_next_;
  if (last_ == s) last_ = s->nic_prev_;
}

void Host::send_control(Packet* p, uint8_t switch_class) {
  p->tclass = switch_class;
  port_->enqueue_as(p, kControlClass);
}

void Host::receive(Packet* p, uint16_t /*port*/) {
  if (p->type == PacketType::kPfc) {
    const auto info = p->get_ext<PfcInfo>();
    port_->apply_pause(info.cls, info.quanta);
    sim_.ledger().deliver(*p);
    sim_.pool().release(p);
    return;
  }
  if (ext_ && !ext_->on_receive(*p)) return;  // held by the NIC's reorder stage
  deliver(p);
}

void Host::prefetch_receive(const Packet& p, uint16_t /*port*/) const {
  if (p.endpoint < endpoints_.size()) {
    const auto* e = reinterpret_cast<const unsigned char*>(endpoints_.at(p.endpoint));
    __builtin_prefetch(e);
    __builtin_prefetch(e + 64);
  }
  if (is_data(p.type)) sim_.prefetch_flow(p.flow);  // the receiver counts it in its flow
  sim_.pool().prefetch_fabric(p);
}

void Host::deliver(Packet* p) {
  sim_.ledger().deliver(*p);
  ++counters_.rx_packets;
  counters_.rx_bytes += p->size;
  if (is_data(p->type)) ++counters_.rx_data_packets;
  FABSIM_ASSERT(p->endpoint < endpoints_.size());
  endpoints_.at(p->endpoint)->receive(p);
}

// Round robin over the active ring, from the source after the last served. A source without
// work leaves the ring when its turn comes; one whose class is paused is passed over; one not
// yet due (pacing) sets the wake-up time.
Packet* Host::pull(uint16_t /*port*/, uint8_t paused_mask) {
  const Time now = sim_.now();
  Time next = Time::max();
  TxSource* s = next_turn();
  for (size_t i = 0, n = active_count_; i < n; ++i) {
    TxSource* const after = s->nic_next_;
    const Time t = s->ready_at();
    if (t == Time::max()) {
      unlink(s);
    } else if (((paused_mask >> s->tclass()) & 1U) == 0) {
      if (t <= now) {
        last_ = s;
        Packet* p = s->take(now);
        if (ext_) ext_->on_send(*p);
        if (s->ready_at() == Time::max()) unlink(s);
        set_pull_hint(head_ != nullptr ? next_turn() : nullptr);
        return p;
      }
      if (t < next) next = t;
    }
    s = after;
  }
  if (next != Time::max() && (!pacing_.armed() || pacing_.when() > next)) {
    pacing_.arm(sim_.scheduler(), this, 0, next);
  }
  return nullptr;
}

void Host::on_event(uint32_t tag, uint32_t gen) {
  if (pacing_.fire(sim_.scheduler(), this, tag, gen)) port_->kick();
}

}  // namespace fabsim
