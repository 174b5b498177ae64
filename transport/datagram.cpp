// Fixed-rate datagram flows; see datagram.h.
#include "transport/datagram.h"

#include <algorithm>  // max

#include "core/assert.h"
#include "core/rng.h"

namespace fabsim {

class DatagramTransport::Flow : public TxSource, public Endpoint {
 public:
  Flow(Network& net, FlowTable& flows, const DatagramConfig& cfg, uint32_t id)
      : net_(net), flows_(flows), cfg_(cfg), id_(id) {
    const FlowSpec& spec = flows[id].spec;
    const int64_t b = spec.bytes;
    packets_ = static_cast<uint64_t>((b + cfg.wire.payload - 1) / cfg.wire.payload);
    endpoint_ = net.endpoints().add(this);
    Host& h = net.host(spec.src);
    rate_ = cfg.rate.bps() > 0 ? cfg.rate : h.rate();
    if (cfg.payload_min > 0)
      rng_ = std::make_unique<Rng>(net.sim().rng(stream_id(StreamKind::kFlow, id)));
    framing_ = h.port().link()->config().framing_bytes;
  }
  void begin(Time now) {
    next_ = now;
    net_.host(flows_[id_].spec.src).activate(this);
  }

  Time ready_at() const override {
    return sent_bytes_ < flows_[id_].spec.bytes ? next_ : Time::max();
  }
  uint8_t tclass() const override { return flows_[id_].spec.tclass; }

  Packet* take(Time now) override {
    FlowRecord& r = flows_[id_];
    Packet* p = net_.sim().pool().acquire();
    int64_t payload = cfg_.wire.payload;
    if (rng_) {
      payload = cfg_.payload_min + static_cast<int64_t>(rng_->below(static_cast<uint64_t>(
                                       cfg_.wire.payload - cfg_.payload_min + 1)));
    }
    p->type = PacketType::kData;
    p->seq = next_seq_++;
    p->payload = static_cast<uint32_t>(std::min(payload, r.spec.bytes - sent_bytes_));
    sent_bytes_ += p->payload;
    // Ethernet pads a frame to its minimum, as the ideal FCT counts it (until 2026-11-29 a short
    // datagram went out below 64 B, faster than its ideal).
    p->size = static_cast<uint32_t>(
        std::max<int64_t>(p->payload + cfg_.wire.header_bytes, kMinEthernetFrame));
    p->flow = id_;
    p->endpoint = endpoint_;
    p->src = r.spec.src;
    p->dst = r.spec.dst;
    p->sport = static_cast<uint16_t>(49152 + (id_ % 16384));
    p->tclass = r.spec.tclass;
    p->ecn = cfg_.ecn_capable ? Ecn::kEct : Ecn::kNotEct;
    p->sent = now;
    flows_.sent(id_, *p, now, /*resent=*/false);
    next_ = now + serialization_delay(p->size + framing_, rate_);
    return p;
  }

  void receive(Packet* p) override {
    const Time now = net_.sim().now();
    flows_.received(id_, *p, now);
    if (seen_any_ && p->seq < highest_) ++flows_[id_].out_of_order;
    if (!seen_any_ || p->seq > highest_) highest_ = p->seq;
    seen_any_ = true;
    const int64_t bytes = p->payload;
    net_.sim().pool().release(p);
    flows_.delivered(id_, bytes, now);
  }

 private:
  Network& net_;
  FlowTable& flows_;
  const DatagramConfig& cfg_;
  uint32_t id_;
  uint32_t endpoint_ = 0;
  uint64_t packets_ = 0;
  uint64_t next_seq_ = 0;
  int64_t sent_bytes_ = 0;
  std::unique_ptr<Rng> rng_;  // random payload sizes
  Time next_;
  Rate rate_;
  int64_t framing_ = 0;
  uint64_t highest_ = 0;
  bool seen_any_ = false;
};

DatagramTransport::DatagramTransport(Network& net, FlowTable& flows, const DatagramConfig& cfg)
    : net_(net), flows_(flows), cfg_(cfg) {}

DatagramTransport::~DatagramTransport() = default;

void DatagramTransport::start(uint32_t id) {
  if (state_.size() <= id) state_.resize(id + 1);
  FABSIM_ASSERT(state_[id] == nullptr);
  state_[id] = std::make_unique<Flow>(net_, flows_, cfg_, id);
  if (flows_[id].spec.bytes == 0) {
    flows_.complete(id, net_.sim().now());
    return;
  }
  state_[id]->begin(net_.sim().now());
}

}  // namespace fabsim
