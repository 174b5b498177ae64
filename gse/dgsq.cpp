// DGSQ request/grant; see dgsq.h.
#include "gse/dgsq.h"

#include <algorithm>  // min

#include "core/assert.h"
#include "gse/gsos.h"
#include "net/switch.h"

namespace fabsim {

GseDgsq::GseDgsq(Simulation& sim, Switch& sw, const GseConfig& cfg, GseSourceSelector* stamp,
                 std::vector<uint16_t> uplinks, std::vector<int64_t> host_of_port,
                 int64_t framing_bytes)
    : sim_(sim), sw_(sw), cfg_(cfg), stamp_(stamp), uplinks_(std::move(uplinks)),
      host_of_port_(std::move(host_of_port)), framing_(framing_bytes), sched_(host_of_port_.size()),
      waiting_(host_of_port_.size()), uplink_timer_(host_of_port_.size()) {
  int64_t bps = 0;
  for (uint16_t up : uplinks_) bps += sw_.port(up).link()->config().rate.bps();  // symmetric links
  downlink_capacity_ = Rate(bps);
  if (!uplinks_.empty()) link_rate_ = sw_.port(uplinks_.front()).link()->config().rate;
}

int64_t GseDgsq::quantum() const {
  return gsos_ != nullptr ? gsos_->grant_policy().quantum : cfg_.grant_quantum;
}
double GseDgsq::share() const {
  return gsos_ != nullptr ? gsos_->grant_policy().rate_share : cfg_.grant_rate;
}
Rate GseDgsq::transit_capacity() const {
  return gsos_ == nullptr ? downlink_capacity_
                          : gsos_->ingress_capacity(gsos_->tor_index(sw_.id()));
}
Rate GseDgsq::transit_rate() const {
  return Rate(
      static_cast<int64_t>(static_cast<double>(transit_capacity().bps()) * cfg_.transit_share));
}

// How far the transit budget may run ahead of now. The budget stands for a cap on each usable
// link into this ToR, and each link's cap, like an egress port's, admits one quantum beyond its
// rate x window; so the budget admits one quantum per link: n at once, then the sum of their
// rates. (Admitting one quantum in all, a port whose remote grant fell within one quantum's
// time at the budget's rate of another port's (0.34 us at 4 x 100G) waited, and restarted its
// own pacing from the late grant: the time was lost although the links were far from full,
// 2.7 % of a k = 8 fat tree AllToAll's JCT; docs/gse.md.)
Time GseDgsq::transit_burst(Rate transit) const {
  if (link_rate_.bps() <= 0) return {};
  // GSOS counts the usable links (a degraded one still counts); without it, the capacity in
  // links of the built rate.
  const int64_t links = std::max<int64_t>(
      1, gsos_ != nullptr ? gsos_->ingress_links(gsos_->tor_index(sw_.id()))
                          : (transit_capacity().bps() + link_rate_.bps() / 2) / link_rate_.bps());
  return serialization_delay(quantum(), transit) * (links - 1);
}

// Bytes the destination port will send for `p`: frame + preamble/gap, without the GSE header
// (the destination GSP removes it). Grants and requests count these.
int64_t GseDgsq::wire(const Packet& p) const {
  return p.size + framing_;
}

Packet* GseDgsq::control(PacketType type, uint32_t src, uint32_t dst, const GrantInfo& info) {
  Packet* p = sim_.pool().acquire();
  p->type = type;
  p->size = 64;
  p->tclass = kControlClass;
  p->src = src;
  p->dst = dst;
  p->sport = static_cast<uint16_t>(49152 + (info.src_gsp % 16384));
  p->set_ext(info);
  p->sent = sim_.now();
  sim_.ledger().inject(*p);
  return p;
}

// The VOQ pool is exhausted: the packet goes on without a grant (the shared queue), counted.
bool GseDgsq::fallback(Packet& p, uint16_t out_port) {
  ++stats_.fallback_packets;
  if (host_of_port_[out_port] >= 0) return true;  // a local port: plain forwarding
  const uint16_t up =
      stamp_->stamp_and_choose(p, uplinks_.data(), static_cast<uint32_t>(uplinks_.size()));
  sw_.inject(&p, up);
  return false;
}

bool GseDgsq::on_forward(Packet& p, uint16_t in_port, uint16_t out_port) {
  if (p.type == PacketType::kRequest || p.type == PacketType::kGrant) {
    if (host_of_port_[out_port] < 0) return true;  // passing through towards another leaf
    const auto info = p.get_ext<GrantInfo>();
    if (p.type == PacketType::kRequest) {
      on_request(out_port, info);
    } else {
      on_grant(info.dst_port, info.cumulative);
    }
    sim_.ledger().deliver(p);
    sim_.pool().release(&p);
    return false;
  }
  if (!is_data(p.type) || host_of_port_[in_port] < 0 || p.tclass == kControlClass) return true;
  auto it = voqs_.find(p.dst);
  if (it == voqs_.end()) {
    const bool room = static_cast<int64_t>(voqs_.size()) < cfg_.voq_pool_queues &&
                      voq_bytes_ + p.size <= cfg_.voq_pool_bytes;
    if (!room) return fallback(p, out_port);
    it = voqs_.emplace(p.dst, Voq{}).first;
    Voq& v = it->second;
    const uint64_t base = cumulative_[p.dst];
    v.enqueued = v.requested = v.granted = v.sent = base;
    v.local = host_of_port_[out_port] >= 0;
    v.local_port = out_port;
    v.requester = p.src;
    v.requester_port = in_port;
    ++stats_.voqs_created;
    stats_.peak_voqs = std::max<int64_t>(stats_.peak_voqs, static_cast<int64_t>(voqs_.size()));
  } else if (voq_bytes_ + p.size > cfg_.voq_pool_bytes) {
    // Past the byte pool, a packet whose VOQ still holds older ones joins them: forwarded at
    // once it would take a container ahead of theirs, and the destination would put it before
    // them (until 2026-11-29 it did: go-back-N NICs NACKed each). The shared buffer and
    // source-local PFC bound the VOQ instead. An empty VOQ's packet goes on ungranted.
    if (it->second.q.empty()) return fallback(p, out_port);
    ++stats_.pool_overruns;
  }
  Voq& v = it->second;
  const auto w = static_cast<uint64_t>(wire(p));
  // A packet for another leaf leaves with a GSE header: reserve its bytes in the buffer now so
  // that what is charged here is what the uplink credits when it sends the packet.
  if (!v.local) p.size += static_cast<uint32_t>(cfg_.header_bytes);
  if (!sw_.hold(&p)) {
    ++stats_.hold_drops;
    sim_.drop(&p, DropCause::kBuffer);
    return false;
  }
  v.q.push_back(&p);
  v.bytes += p.size;
  v.enqueued += w;
  voq_bytes_ += p.size;
  stats_.peak_voq_bytes = std::max(stats_.peak_voq_bytes, voq_bytes_);
  const uint32_t dst = p.dst;
  // Keep the destination's view of the demand at most one quantum behind, and, while the VOQ
  // holds the bytes, at least one quantum ahead of what it has granted (as far as the grants
  // received tell): a VOQ that fills slowly (one of many sources of a port) would otherwise have
  // its next bytes heard of a quantum or a request-grant loop later, and the port, its known
  // demand used up, idled meanwhile (docs/gse.md "Requests").
  const auto q = static_cast<uint64_t>(quantum());
  if (v.requested < v.granted + q || v.enqueued - v.requested >= q) request(dst, v);
  try_send(dst);
  return false;
}

void GseDgsq::request(uint32_t dst, Voq& v) {
  v.requesting = true;
  v.requested = v.enqueued;
  GrantInfo info;
  info.cumulative = v.requested;
  info.dst_port = dst;
  info.requester = v.requester;
  info.src_gsp = static_cast<uint16_t>(sw_.id());
  if (v.local) {
    on_request(v.local_port, info);
    return;
  }
  ++stats_.requests;
  info.seen = v.granted;
  v.heard = sim_.now();
  sw_.receive(control(PacketType::kRequest, v.requester, dst, info), v.requester_port);
  arm_refresh(dst, sim_.now() + cfg_.request_retry);
}

// Requests and grants are packets and can be lost (bit errors, a dead cable, random loss). A
// VOQ owed grants that heard none for request_retry asks again with its cumulative request
// (a lost request: the destination learns the demand) and the grants it has seen (a lost grant:
// the destination repeats its cumulative grant). Both are idempotent, so a refresh that crosses
// a grant in flight costs one 64 B frame and changes nothing.
void GseDgsq::arm_refresh(uint32_t dst, Time at) {
  Timer& t = refresh_timer_[dst];
  if (!t.armed()) {
    t.arm(sim_.scheduler(), this, static_cast<uint32_t>(2 * sched_.size()) + dst, at);
  }
}

void GseDgsq::refresh(uint32_t dst) {
  auto it = voqs_.find(dst);
  if (it == voqs_.end()) return;
  Voq& v = it->second;
  if (v.local || v.granted >= v.requested) return;  // owed nothing: no watch
  const Time due = v.heard + cfg_.request_retry;
  if (sim_.now() < due) {
    arm_refresh(dst, due);
    return;
  }
  ++stats_.request_refreshes;
  GrantInfo info;
  info.cumulative = v.requested;
  info.seen = v.granted;
  info.dst_port = dst;
  info.requester = v.requester;
  info.src_gsp = static_cast<uint16_t>(sw_.id());
  info.refresh = 1;
  v.heard = sim_.now();
  sw_.receive(control(PacketType::kRequest, v.requester, dst, info), v.requester_port);
  arm_refresh(dst, sim_.now() + cfg_.request_retry);
}

void GseDgsq::on_request(uint16_t port, const GrantInfo& info) {
  const uint16_t gsp = info.src_gsp;
  const uint32_t requester = info.requester;
  const uint64_t cumulative = info.cumulative;
  PortSched& ps = sched_[port];
  Source* src = nullptr;
  double floor = 0;
  bool any = false;
  for (auto& s : ps.sources) {
    if (s.gsp == gsp) src = &s;
    if (s.requested > s.granted && (!any || s.pass < floor)) {
      floor = s.pass;
      any = true;
    }
  }
  if (src == nullptr) {
    ps.sources.push_back(Source{});
    src = &ps.sources.back();
    src->gsp = gsp;
    src->weight = gsos_ != nullptr                  ? gsos_->grant_policy().weight(gsp)
                  : gsp < cfg_.grant_weights.size() ? cfg_.grant_weights[gsp]
                                                    : 1.0;
  }
  if (src->requested <= src->granted) src->pass = std::max(src->pass, floor);  // rejoin fairly
  src->requester = requester;
  src->requested = std::max(src->requested, cumulative);
  if (info.refresh != 0 && src->granted > info.seen) {
    // The source has not heard of grants issued: the last was lost. Repeat it (cumulative, so
    // no bytes are granted twice and the port's pacing is not charged again).
    ++stats_.grant_repeats;
    GrantInfo g;
    g.cumulative = src->granted;
    g.src_gsp = gsp;
    g.requester = requester;
    g.dst_port = static_cast<uint32_t>(host_of_port_[port]);
    sw_.receive(control(PacketType::kGrant, g.dst_port, requester, g), port);
  }
  if (!ps.running) {
    ps.running = true;
    grant_next(port);
  }
}

// Grants one quantum to the waiting source with the lowest pass, then waits the time the port
// needs to send those bytes: grants never outrun the port.
void GseDgsq::grant_next(uint16_t port) {
  PortSched& ps = sched_[port];
  // Egress flow control: while the port queues more than the gate (its own ACKs and CNPs take
  // part of its rate), grants wait for it to drain.
  // With the lookahead, what counts is the queue the port will still hold when this grant's
  // data arrives, one request-grant loop from now: the port drains meanwhile, and gating on
  // the queue of now left it idle for the rest of the loop (three tiers: about 8 us at 100G).
  const EgressPort& egress = sw_.port(port);
  const Rate port_rate = egress.link()->config().rate;
  const int64_t drained = cfg_.gate_lookahead ? bytes_in(cfg_.grant_loop, port_rate) : 0;
  const int64_t queued = egress.data_queued_bytes() - drained;
  if (cfg_.grant_gate > 0 && queued > cfg_.grant_gate) {
    ps.timer.arm(sim_.scheduler(), this, port,
                 sim_.now() + serialization_delay(queued - cfg_.grant_gate, port_rate));
    return;
  }
  // Remote sources wait while the links into this ToR are fully granted (one quantum per link
  // ahead of their rate); local ones (same ToR) do not cross them.
  const Rate transit = transit_rate();
  const Time burst = transit.bps() > 0 ? transit_burst(transit) : Time();
  const bool remote_ok =
      !cfg_.transit_caps || transit.bps() == 0 || downlink_free_ <= sim_.now() + burst;
  Source* best = nullptr;
  bool remote_waiting = false;
  for (auto& s : ps.sources) {
    if (s.requested <= s.granted) continue;
    if (s.gsp != sw_.id() && !remote_ok) {
      remote_waiting = true;
      continue;
    }
    if (best == nullptr || s.pass < best->pass) best = &s;
  }
  if (best == nullptr) {
    if (remote_waiting) {
      ps.timer.arm(sim_.scheduler(), this, port, downlink_free_ - burst);
    } else {
      ps.running = false;
    }
    return;
  }
  const auto g = static_cast<int64_t>(
      std::min<uint64_t>(static_cast<uint64_t>(quantum()), best->requested - best->granted));
  best->granted += static_cast<uint64_t>(g);
  best->pass += static_cast<double>(g) / best->weight;
  ++stats_.grants;
  stats_.granted_bytes += static_cast<uint64_t>(g);
  if (cfg_.record_grants) trace_.push_back({sim_.now(), port, g});
  const auto dst_host = static_cast<uint32_t>(host_of_port_[port]);
  GrantInfo info;
  info.cumulative = best->granted;
  info.src_gsp = best->gsp;
  info.requester = best->requester;
  info.dst_port = dst_host;
  const Rate rate(static_cast<int64_t>(
      static_cast<double>(sw_.port(port).link()->config().rate.bps()) * share()));
  if (best->gsp != sw_.id() && cfg_.transit_caps && transit.bps() > 0) {
    downlink_free_ = std::max(downlink_free_, sim_.now()) + serialization_delay(g, transit);
  }
  if (best->gsp == sw_.id()) {
    on_grant(dst_host, best->granted);  // a source on this leaf: no packet needed
  } else {
    sw_.receive(control(PacketType::kGrant, dst_host, best->requester, info), port);
  }
  ps.timer.arm(sim_.scheduler(), this, port, sim_.now() + serialization_delay(g, rate));
}

void GseDgsq::on_event(uint32_t tag, uint32_t gen) {
  if (tag >= 2 * sched_.size()) {
    const uint32_t dst = tag - static_cast<uint32_t>(2 * sched_.size());
    if (refresh_timer_[dst].fire(sim_.scheduler(), this, tag, gen)) refresh(dst);
    return;
  }
  if (tag >= sched_.size()) {
    const auto port = static_cast<uint16_t>(tag - sched_.size());
    if (uplink_timer_[port].fire(sim_.scheduler(), this, tag, gen)) drain_waiting(port);
    return;
  }
  PortSched& ps = sched_[tag];
  if (!ps.timer.fire(sim_.scheduler(), this, tag, gen)) return;
  grant_next(static_cast<uint16_t>(tag));
}

void GseDgsq::on_grant(uint32_t dst, uint64_t cumulative) {
  auto it = voqs_.find(dst);
  if (it == voqs_.end()) return;
  Voq& v = it->second;
  v.granted = std::max(v.granted, cumulative);
  v.heard = sim_.now();
  if (v.enqueued > v.requested) {
    request(dst, v);  // demand grew since the last request
  } else if (v.granted >= v.requested) {
    v.requesting = false;
  }
  try_send(dst);
}

// Sends granted packets of the VOQ for `dst` (if it still exists: a local request can be
// granted, sent and its VOQ returned to the pool within the call that requested).
void GseDgsq::try_send(uint32_t dst) {
  auto it = voqs_.find(dst);
  if (it == voqs_.end()) return;
  Voq& v = it->second;
  while (!v.q.empty() && v.sent < v.granted) {
    Packet* p = v.q.front();
    if (!v.local && !v.head_stamped) {
      // Its container and uplink (stamping adds the header bytes reserved in the buffer).
      p->size -= static_cast<uint32_t>(cfg_.header_bytes);
      v.head_port =
          stamp_->stamp_and_choose(*p, uplinks_.data(), static_cast<uint32_t>(uplinks_.size()));
      v.head_stamped = true;
    } else if (!v.local) {
      // It waited: its uplink's cable may have failed meanwhile (as this GSP knows).
      v.head_port = stamp_->repin_stamped(*p, uplinks_.data(),
                                          static_cast<uint32_t>(uplinks_.size()), v.head_port);
    }
    if (!v.local && cfg_.source_gate > 0 && !uplink_open(dst, v)) break;
    // A VOQ is a queue like an egress port's: RED/ECN on its depth, so the NIC's DCQCN slows
    // down when its traffic waits for grants (without PFC nothing else would).
    if (cfg_.voq_ecn &&
        sw_.red_marker().mark(*p, v.bytes, Bytes(cfg_.voq_ecn_kmin), Bytes(cfg_.voq_ecn_kmax))) {
      ++stats_.ecn_marks;
    }
    v.q.pop_front();
    v.bytes -= p->size;
    voq_bytes_ -= p->size;
    if (v.local) {
      v.sent += static_cast<uint64_t>(wire(*p));
      sw_.send_held(p, v.local_port);
    } else {
      v.sent += static_cast<uint64_t>(wire(*p) - cfg_.header_bytes);
      v.head_stamped = false;
      sw_.send_held(p, v.head_port);
    }
  }
  if (v.q.empty() && !v.requesting && v.sent >= v.enqueued) {
    cumulative_[dst] = v.sent;
    voqs_.erase(it);  // back to the pool
  }
}

int64_t GseDgsq::uplink_excess(uint16_t port) const {
  // (A dead cable's port still drains at its rate, its frames lost: waiting ends.)
  return sw_.port(port).data_queued_bytes() - cfg_.source_gate;
}

// The traffic manager's uplink scheduler pulls from the VOQs while the uplink has room; a VOQ
// whose head packet's uplink (its container's) is full, or has others waiting, waits its turn
// with its bytes still in the VOQ. Without this, granted bytes the uplinks could not carry (a
// source GSP that lost an uplink is granted by destinations that know nothing of it) piled up
// in the uplink queues, where neither voq_ecn nor source-local PFC saw them, until the shared
// buffer overflowed (docs/gse.md "Source gate").
bool GseDgsq::uplink_open(uint32_t dst, Voq& v) {
  if (v.waiting) return false;
  const uint16_t port = v.head_port;
  const int64_t excess = uplink_excess(port);
  if (excess <= 0 && (draining_ == port || waiting_[port].empty())) return true;
  v.waiting = true;
  waiting_[port].push_back(dst);
  ++stats_.source_waits;
  arm_uplink(port, excess);
  return false;
}

void GseDgsq::arm_uplink(uint16_t port, int64_t excess) {
  const Rate rate = sw_.port(port).link()->config().rate;
  const Time at = sim_.now() + (excess > 0 ? serialization_delay(excess, rate) : Time());
  Timer& t = uplink_timer_[port];
  if (!t.armed() || at < t.when()) {
    t.arm(sim_.scheduler(), this, static_cast<uint32_t>(sched_.size() + port), at);
  }
}

void GseDgsq::drain_waiting(uint16_t port) {
  draining_ = port;
  auto& w = waiting_[port];
  while (!w.empty()) {
    const int64_t excess = uplink_excess(port);
    if (excess > 0) {
      arm_uplink(port, excess);
      break;
    }
    const uint32_t dst = w.front();
    w.pop_front();
    auto it = voqs_.find(dst);
    if (it == voqs_.end()) continue;
    it->second.waiting = false;
    try_send(dst);  // joins a waiting list again when an uplink fills before its grant is sent
  }
  draining_ = -1;
}

void GseDgsq::finish() {
  for (auto& [dst, v] : voqs_) {
    for (Packet* p : v.q) sim_.pool().release(p);
    v.q.clear();
  }
}

}  // namespace fabsim
