// NIC scheduling and demultiplexing; see host.h.
#include "net/host.h"

#include "core/assert.h"

namespace fabsim {

Host::Host(Simulation& sim, uint32_t id, std::string name, const EndpointTable& endpoints)
    : sim_(sim), id_(id), name_(std::move(name)), endpoints_(endpoints) {}

void Host::attach(Link* out) {
  port_ = sim_.arena().make<EgressPort>(sim_, this, uint16_t{0}, out, /*pulls=*/true);
}

void Host::activate(TxSource* s) {
  if (!s->on_nic_) {
    s->on_nic_ = true;
    active_.push_back(s);
  }
  set_pull_hint(active_[rr_ % active_.size()]);
  port_->kick();
}

void Host::send_control(Packet* p) {
  p->tclass = kControlClass;
  port_->enqueue(p);
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

// Round-robin over active sources, starting after the last one served. A source whose class
// is paused is skipped; one not yet due (pacing) sets the wake-up time.
Packet* Host::pull(uint16_t /*port*/, uint8_t paused_mask) {
  const Time now = sim_.now();
  Time next = Time::max();
  bool idle_seen = false;
  const size_t n = active_.size();
  for (size_t i = 0; i < n; ++i) {
    const size_t idx = (rr_ + i) % n;
    TxSource* s = active_[idx];
    const Time t = s->ready_at();
    if (t == Time::max()) {
      idle_seen = true;
      continue;
    }
    if ((paused_mask >> s->tclass()) & 1U) continue;
    if (t <= now) {
      rr_ = idx + 1;
      Packet* p = s->take(now);
      if (ext_) ext_->on_send(*p);
      if (idle_seen || s->ready_at() == Time::max()) drop_idle_sources();
      set_pull_hint(active_.empty() ? nullptr : active_[rr_ % active_.size()]);
      return p;
    }
    if (t < next) next = t;
  }
  if (idle_seen) drop_idle_sources();
  if (next != Time::max() && (!pacing_.armed() || pacing_.when() > next)) {
    pacing_.arm(sim_.scheduler(), this, 0, next);
  }
  return nullptr;
}

void Host::drop_idle_sources() {
  size_t w = 0;
  for (size_t r = 0; r < active_.size(); ++r) {
    TxSource* s = active_[r];
    if (s->ready_at() == Time::max()) {
      s->on_nic_ = false;
      if (r < rr_) --rr_;
    } else {
      active_[w++] = s;
    }
  }
  active_.resize(w);
  if (rr_ > active_.size()) rr_ = 0;
}

void Host::on_event(uint32_t tag, uint32_t gen) {
  if (pacing_.fire(sim_.scheduler(), this, tag, gen)) port_->kick();
}

}  // namespace fabsim
