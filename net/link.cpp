// Link propagation with one pending event; see link.h.
#include "net/link.h"

#include "core/assert.h"
#include "net/node.h"

namespace fabsim {

Link::Link(Simulation& sim, const Config& cfg, Node* dst, uint16_t dst_port, uint64_t index)
    : sim_(sim), cfg_(cfg), dst_(dst), dst_port_(dst_port),
      rng_(sim.rng(stream_id(StreamKind::kLink, index))) {}

void Link::transmit(Packet* p) {
  if (cfg_.loss_probability > 0 && p->type != PacketType::kPfc &&
      rng_.bernoulli(cfg_.loss_probability)) {
    ++lost_;
    sim_.pool().release(p);
    return;
  }
  ring_.push_back({p, sim_.now() + cfg_.delay});
  if (!armed_) {
    armed_ = true;
    sim_.schedule(ring_.front().arrive, this, 0);
  }
}

void Link::on_event(uint32_t /*tag*/, uint32_t /*gen*/) {
  FABSIM_ASSERT(!ring_.empty());
  Packet* p = ring_.front().p;
  ring_.pop_front();
  if (!ring_.empty()) {
    sim_.schedule(ring_.front().arrive, this, 0);
  } else {
    armed_ = false;
  }
  dst_->receive(p, dst_port_);
}

void Link::drain() {
  while (!ring_.empty()) {
    sim_.pool().release(ring_.front().p);
    ring_.pop_front();
  }
}

}  // namespace fabsim
