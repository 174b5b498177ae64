// Link propagation with one pending event, up/down state, the loss models and the bit-error
// model; see link.h.
#include "net/link.h"

#include <cmath>  // lgamma, log1p, exp

#include "core/assert.h"
#include "net/node.h"

namespace fabsim {

namespace {
constexpr int kRsSymbols = 544;        // codeword length in 10-bit symbols
constexpr int kRsCorrectable = 15;     // (544 - 514) / 2
constexpr int64_t kRsDataBits = 5140;  // 514 data symbols x 10 bits
}  // namespace

// The tail P[X > 15] for X ~ Binomial(544, ps), summed term by term in log space so that tiny
// probabilities (1e-20 and below) keep their precision.
double rs544_codeword_failure(double ps) {
  if (ps <= 0) return 0.0;
  if (ps >= 1) return 1.0;
  const double lp = std::log(ps);
  const double lq = std::log1p(-ps);
  const double lnf = std::lgamma(kRsSymbols + 1.0);
  double tail = 0;
  for (int k = kRsCorrectable + 1; k <= kRsSymbols; ++k) {
    const double term = std::exp(lnf - std::lgamma(k + 1.0) - std::lgamma(kRsSymbols - k + 1.0) +
                                 k * lp + (kRsSymbols - k) * lq);
    tail += term;
  }
  return std::min(1.0, tail);
}

double frame_loss_probability(double ber, Fec fec, int64_t frame_bits) {
  if (ber <= 0 || frame_bits <= 0) return 0.0;
  if (fec == Fec::kNone) return -std::expm1(static_cast<double>(frame_bits) * std::log1p(-ber));
  const double ps = -std::expm1(10.0 * std::log1p(-ber));
  const double pcw = rs544_codeword_failure(ps);
  const auto codewords = static_cast<double>((frame_bits + kRsDataBits - 1) / kRsDataBits);
  return -std::expm1(codewords * std::log1p(-pcw));
}

bool in_scope(LossScope scope, LinkRole role) {
  switch (scope) {
    case LossScope::kAll:
      return true;
    case LossScope::kHostUp:
      return role == LinkRole::kHostUp;
    case LossScope::kHostDown:
      return role == LinkRole::kHostDown;
    case LossScope::kHosts:
      return role != LinkRole::kFabric;
    case LossScope::kFabric:
      return role == LinkRole::kFabric;
  }
  return false;
}

double LossModel::mean_loss() const {
  if (kind == Kind::kBernoulli) return probability;
  return (r * loss_good + p * loss_bad) / (p + r);
}

bool LossModel::active() const {
  if (kind == Kind::kBernoulli) return probability > 0;
  return loss_good > 0 || (p > 0 && loss_bad > 0);
}

Link::Link(Simulation& sim, const Config& cfg, Node* dst, uint16_t dst_port, uint64_t index,
           LinkRole role)
    : sim_(sim), dst_(dst), dst_port_(dst_port), role_(role), flight_(cfg.delay + cfg.extra_delay),
      cfg_(cfg), stream_(stream_id(StreamKind::kLink, index)) {
  set_ber(cfg.ber);
}

Link::Impairments& Link::imp() {
  if (!imp_) imp_ = std::make_unique<Impairments>(sim_.rng(stream_));
  return *imp_;
}

void Link::set_rate(Rate rate) {
  FABSIM_ASSERT(rate.bps() > 0);
  Impairments& i = imp();
  if (i.built_rate.bps() == 0) i.built_rate = cfg_.rate;
  cfg_.rate = rate;
  cached_size_ = {0, 0};
}

const LossModel& Link::loss() const {
  static const LossModel kNone;
  return imp_ ? imp_->loss : kNone;
}

void Link::set_loss(const LossModel& model) {
  FABSIM_ASSERT(model.kind == LossModel::Kind::kBernoulli
                    ? model.probability >= 0 && model.probability <= 1
                    : model.p >= 0 && model.p <= 1 && model.r > 0 && model.r <= 1 &&
                          model.loss_good >= 0 && model.loss_good <= 1 && model.loss_bad >= 0 &&
                          model.loss_bad <= 1);
  // A Bernoulli model that loses nothing is the default: no block for it.
  if (imp_ || model.active() || model.kind != LossModel::Kind::kBernoulli) imp().loss = model;
  loss_active_ = model.active();
  bad_ = false;
}

// Bernoulli makes exactly the one draw it always made (scenarios keep their figures).
// Gilbert-Elliott draws the frame's loss in the current state, then the transition.
bool Link::model_loses() {
  Impairments& m = *imp_;  // an active model has its block
  const LossModel& l = m.loss;
  if (l.kind == LossModel::Kind::kBernoulli) return m.rng.bernoulli(l.probability);
  const bool lost = m.rng.bernoulli(bad_ ? l.loss_bad : l.loss_good);
  bad_ = bad_ ? !m.rng.bernoulli(l.r) : m.rng.bernoulli(l.p);
  return lost;
}

void Link::set_ber(double ber) {
  FABSIM_ASSERT(ber >= 0 && ber < 1);
  cfg_.ber = ber;
  errors_ = ber > 0;
  if (errors_) imp();
  if (imp_) imp_->error_loss.clear();
}

void Link::lose(Packet* p, bool fault) {
  FaultCounters& f = imp().faults;
  if (fault) {
    f.last_fault_loss = sim_.now();
    ++f.fault_frames;
    f.fault_bytes += p->size;
  } else {
    ++f.error_frames;
    f.error_bytes += p->size;
  }
  sim_.drop(p, fault ? DropCause::kDeadLink : DropCause::kBitError);
}

void Link::discard(Packet* p) {
  if (is_data(p->type)) last_data_tx_ = sim_.now();
  lose(p, true);
}

void Link::transmit(Packet* p, Time sent) {
  if (is_data(p->type)) last_data_tx_ = sent;
  if (!up_) {
    lose(p, true);
    return;
  }
  if (errors_) {
    Impairments& m = *imp_;  // set_ber made it
    if (m.error_loss.size() <= p->size) m.error_loss.resize(p->size + 1, -1.0);
    double& pl = m.error_loss[p->size];
    if (pl < 0) pl = frame_loss_probability(cfg_.ber, cfg_.fec, int64_t{8} * p->size);
    if (m.rng.bernoulli(pl)) {
      lose(p, false);
      return;
    }
  }
  if (loss_active_ && p->type != PacketType::kPfc && model_loses()) {
    if (imp_->loss.kind == LossModel::Kind::kBernoulli) {
      ++imp_->lost;
      sim_.drop(p, DropCause::kRandomLoss);
    } else {
      ++imp_->burst_lost;
      sim_.drop(p, DropCause::kBurstLoss);
    }
    return;
  }
  dst_->prefetch_route(*p);  // read one event before the arrival, a flight time from now
  if (head_.p == nullptr) {
    head_ = {p, sent + flight_};
  } else {
    ring_.push_back({p, sent + flight_});
  }
  if (!armed_) {
    armed_ = true;
    set_prefetch_hint(head_.p, dst_);
    sim_.schedule(head_.arrive, this, 0);
  }
}

// Frames on the wire when the link dies are lost with it; the pending arrival event finds the
// ring empty and does nothing.
void Link::set_up(bool up) {
  if (up_ == up) return;
  up_ = up;
  if (!up) {
    if (held_ != nullptr) lose(take_held(), true);  // its port was serializing it onto the link
    if (head_.p != nullptr) lose(head_.p, true);
    head_ = {nullptr, Time()};
    while (!ring_.empty()) {
      lose(ring_.front().p, true);
      ring_.pop_front();
    }
  }
}

void Link::on_event(uint32_t /*tag*/, uint32_t /*gen*/) {
  if (head_.p == nullptr) {  // the link went down with frames on the wire
    armed_ = false;
    return;
  }
  // A link that went down and came back may hold frames sent after the pending event's time.
  if (head_.arrive > sim_.now()) {
    sim_.schedule(head_.arrive, this, 0);
    return;
  }
  Packet* p = head_.p;
  if (!ring_.empty()) {
    head_ = ring_.front();
    ring_.pop_front();
    set_prefetch_hint(head_.p, dst_);
    sim_.schedule(head_.arrive, this, 0);
  } else {
    head_ = {nullptr, Time()};
    armed_ = false;
    set_prefetch_hint(nullptr);
  }
  dst_->receive(p, dst_port_);
}

// One event ahead of an arrival (the head packet and the far node's first lines were
// prefetched the stage before): the far node prefetches what receive() reads first, and the
// ring slot of the frame behind comes in for the arrival event to make it the head.
void Link::prefetch_next() const {
  if (head_.p != nullptr) dst_->prefetch_receive(*head_.p, dst_port_);
  if (!ring_.empty()) __builtin_prefetch(&ring_.front());
}

void Link::drain() {
  if (held_ != nullptr) sim_.pool().release(take_held());
  if (head_.p != nullptr) sim_.pool().release(head_.p);
  head_ = {nullptr, Time()};
  while (!ring_.empty()) {
    sim_.pool().release(ring_.front().p);
    ring_.pop_front();
  }
}

}  // namespace fabsim
