// Switch pipeline: ingress accounting -> forwarding -> path selection -> egress queue.
// See switch.h; buffer/PFC rules after REFERENCE.md §1.3, ECN after §1.4.
#include "net/switch.h"

#include <algorithm>  // max, min
#include <bit>        // popcount
#include <map>        // route group deduplication (build time)

#include "core/assert.h"

namespace fabsim {

Switch::Switch(Simulation& sim, const SwitchConfig& cfg, uint32_t id, std::string name)
    : sim_(sim), cfg_(cfg), id_(id), name_(std::move(name)),
      marker_(cfg.ecn, sim.rng(stream_id(StreamKind::kSwitch, id))), red_(marker_) {}

uint16_t Switch::add_port(Link* out) {
  const auto idx = static_cast<uint16_t>(ports_.size());
  PortState s;
  s.egress = sim_.arena().make<EgressPort>(sim_, this, idx, out);
  s.egress->set_dwrr(cfg_.dwrr_weights, cfg_.max_frame_bytes);
  if (cfg_.ecn.enabled) {
    for (uint8_t c = 0; c < kControlClass; ++c) {
      s.egress->set_dequeue_hook(c, &red_, cfg_.ecn.at_departure);
    }
  }
  egress_.push_back(s.egress.get());
  ports_.push_back(std::move(s));
  return idx;
}

void Switch::set_admission_hook(uint16_t port, uint8_t cls, AdmissionHook* h) {
  FABSIM_ASSERT(port < ports_.size() && cls < kControlClass);
  ports_[port].egress->set_admission_hook(cls, h);
}

// One hook per queue is a plain pointer; a second one on the same queue turns the slot into a
// chain (owned here) so the common case stays a single virtual call.
void Switch::add_dequeue_hook(uint16_t port, uint8_t cls, DequeueHook* h) {
  FABSIM_ASSERT(port < ports_.size() && cls < kNumClasses);
  EgressPort& e = *ports_[port].egress;
  // A stamping hook runs when the packet starts; a queue whose marking runs at departure would
  // need both points (the scenario loader refuses the combination).
  FABSIM_CHECK(!e.at_departure(cls));
  stamping_hooks_ = true;
  DequeueHook* cur = e.dequeue_hook(cls);
  if (cur == nullptr) {
    e.set_dequeue_hook(cls, h);
    return;
  }
  auto* chain = dynamic_cast<DequeueChain*>(cur);
  if (chain == nullptr) {
    chain = &adopt_hook(std::make_unique<DequeueChain>());
    chain->add(cur);
    e.set_dequeue_hook(cls, chain);
  }
  chain->add(h);
}

void Switch::disable_ecn(uint16_t port) {
  FABSIM_ASSERT(port < ports_.size());
  EgressPort& e = *ports_[port].egress;
  for (uint8_t c = 0; c < kControlClass; ++c) {
    FABSIM_ASSERT(e.dequeue_hook(c) == nullptr || e.dequeue_hook(c) == &red_);
    e.set_dequeue_hook(c, nullptr);
  }
}

void Switch::set_ecn_thresholds(Bytes kmin, Bytes kmax) {
  cfg_.ecn.kmin = kmin;
  cfg_.ecn.kmax = kmax;
  marker_.set_thresholds(kmin, kmax);
}

void Switch::set_routes(std::span<const std::vector<uint16_t>* const> per_host) {
  route_group_.assign(per_host.size(), 0);
  groups_.clear();
  group_ports_.clear();
  std::map<std::vector<uint16_t>, uint16_t> seen;  // by content: equal sets share a group
  const std::vector<uint16_t>* last = nullptr;     // the set of the host before, and its group
  uint16_t last_group = 0;
  for (size_t h = 0; h < per_host.size(); ++h) {
    const std::vector<uint16_t>* set = per_host[h];
    FABSIM_ASSERT(set != nullptr);
    if (set != last) {
      auto [it, fresh] = seen.try_emplace(*set, static_cast<uint16_t>(groups_.size()));
      if (fresh) {
        FABSIM_ASSERT(groups_.size() < 65535);
        groups_.push_back(
            {static_cast<uint32_t>(group_ports_.size()), static_cast<uint32_t>(set->size())});
        group_ports_.insert(group_ports_.end(), set->begin(), set->end());
      }
      last = set;
      last_group = it->second;
    }
    route_group_[h] = last_group;
  }
}

// Headroom holds the frame whose arrival crosses the XOFF threshold and what arrives after the
// XOFF decision. A frame is charged when its last bit is in, all of it: the one that would pass
// the threshold goes to the headroom whole (charge()) and is what sends XOFF (check_xoff()), so
// it is in the headroom before the pause leaves. Then the pause frame may wait behind one
// maximum frame on our egress, and crosses the link; the upstream port finishes the frame it
// is sending; and everything already on the wire in both directions lands. So:
// max frame + 2 x one-way BDP + 2 x max frame on the wire + the pause frame + response time x
// rate. The one-way time is the link's flight time, a security layer's latency included.
// Until 2026-11-29 the crossing frame was left out: 8 later frames of 4,158 B fit 33,440 B at
// 100G and 1 us, but the crossing frame and those 8 did not, and a lossless class dropped
// (irn-permutation with a 4 MiB buffer).
int64_t Switch::auto_headroom(const Link::Config& link, const PfcConfig& pfc, int64_t max_frame) {
  const int64_t bdp = bytes_in(link.delay + link.extra_delay, link.rate);
  const int64_t frame_wire = max_frame + link.framing_bytes;
  const int64_t pause_wire = 64 + link.framing_bytes;
  return max_frame + 2 * bdp + 2 * frame_wire + pause_wire + bytes_in(pfc.response_time, link.rate);
}

void Switch::finalize() {
  Rate slowest = Rate(INT64_MAX);
  for (const auto& s : ports_) slowest = std::min(slowest, s.egress->link()->config().rate);
  const int lossless_classes = std::popcount(static_cast<unsigned>(cfg_.pfc.lossless_mask));
  total_headroom_ = 0;
  for (auto& s : ports_) {
    const auto& link = s.egress->link()->config();
    s.built_rate = link.rate;
    s.headroom = cfg_.pfc.headroom.count() > 0
                     ? cfg_.pfc.headroom.count()
                     : auto_headroom(link, cfg_.pfc, cfg_.max_frame_bytes);
    s.alpha = cfg_.pfc.alpha;
    if (cfg_.pfc.scale_alpha) {
      // HPCC ns-3 (third.cc): the shift 3 (alpha 1/8) drops by one per doubling of the port's
      // rate above the NIC rate, never below 0: alpha x rate / NIC rate, at most 1.
      const Rate ref = nic_rate_.bps() > 0 ? nic_rate_ : slowest;
      const double ratio = static_cast<double>(link.rate.bps()) / static_cast<double>(ref.bps());
      if (ratio > 1) s.alpha = std::min(s.alpha * ratio, std::max(s.alpha, 1.0));
    }
    if (cfg_.pfc.enabled) total_headroom_ += s.headroom * lossless_classes;
  }
  total_reserve_ = static_cast<int64_t>(ports_.size()) * cfg_.buffer.reserve.count() *
                   std::max(1, cfg_.pfc.enabled ? lossless_classes : 1);
  lossless_reserve_ = cfg_.pfc.enabled && lossless_classes > 0 ? total_reserve_ : 0;
}

int64_t Switch::pfc_threshold(uint16_t port) const {
  if (cfg_.pfc.mode == PfcThreshold::kStatic) return cfg_.pfc.xoff.count();
  const int64_t free_bytes =
      cfg_.buffer.size.count() - total_headroom_ - total_reserve_ - shared_used_;
  return std::max<int64_t>(
      0, static_cast<int64_t>(static_cast<double>(free_bytes) * ports_[port].alpha));
}

// A lossless class's bytes beyond its reserve; every byte of a lossy class (the reserve is per
// lossless class: lossy traffic lives in the shared pool).
int64_t Switch::shared_of(const PortState& s, uint8_t cls) const {
  if (!lossless(cls)) return s.buf[cls].ingress;
  return std::max<int64_t>(0, s.buf[cls].ingress - cfg_.buffer.reserve.count());
}

// The shared buffer's decision for `p` from ingress `in`. Lossless classes drop only when both
// the headroom and the shared pool are exhausted; lossy classes need free buffer and, when
// joining an egress queue `out`, a queue within egress_alpha x free buffer (a held packet has
// no egress queue yet).
bool Switch::buffer_admits(uint16_t in, const Packet& p, const EgressPort* out) const {
  const PortState& s = ports_[in];
  const int64_t size = p.size;
  if (lossless(p.tclass)) {
    return !(size + s.buf[p.tclass].hdrm > s.headroom &&
             size + shared_of(s, p.tclass) > pfc_threshold(in));
  }
  // The headroom and the lossless classes' reserves are set apart whole, used or not (an MMU
  // carves its guaranteed minimums out of the buffer before the shared pool): lossy bytes live
  // in the shared pool only. Until 2026-11-29 the unused reserve counted as free, and the bytes
  // held could pass the buffer by up to the whole reserve.
  const int64_t free_bytes =
      cfg_.buffer.size.count() - total_headroom_ - lossless_reserve_ - shared_used_;
  if (size > free_bytes) return false;
  return out == nullptr || static_cast<double>(out->queued_bytes(p.tclass) + size) <=
                               cfg_.buffer.egress_alpha * static_cast<double>(free_bytes);
}

// Charges an admitted packet to its ingress port and pauses the sender if that crossed XOFF.
void Switch::accept(uint16_t in, const Packet& p) {
  charge(in, p);
  if (lossless(p.tclass)) check_xoff(in, p.tclass);
}

void Switch::charge(uint16_t in, const Packet& p) {
  PortState& s = ports_[in];
  const int64_t size = p.size;
  const int64_t reserve = cfg_.buffer.reserve.count();
  const int64_t after = s.buf[p.tclass].ingress + size;
  buffer_used_ += size;
  if (!lossless(p.tclass)) {
    s.buf[p.tclass].ingress = after;
    shared_used_ += size;
  } else if (after <= reserve) {
    s.buf[p.tclass].ingress = after;
  } else if (after - reserve > pfc_threshold(in)) {
    s.buf[p.tclass].hdrm += size;
    headroom_used_ += size;
  } else {
    s.buf[p.tclass].ingress = after;
    shared_used_ += std::min(size, after - reserve);
  }
}

void Switch::credit(uint16_t in, const Packet& p) {
  PortState& s = ports_[in];
  const int64_t size = p.size;
  const int64_t from_hdrm = std::min(s.buf[p.tclass].hdrm, size);
  const int64_t rest = size - from_hdrm;
  const int64_t from_shared = std::min(rest, shared_of(s, p.tclass));
  s.buf[p.tclass].hdrm -= from_hdrm;
  s.buf[p.tclass].ingress -= rest;
  headroom_used_ -= from_hdrm;
  shared_used_ -= from_shared;
  buffer_used_ -= size;
  FABSIM_ASSERT(s.buf[p.tclass].ingress >= 0 && shared_used_ >= 0 && buffer_used_ >= 0 &&
                headroom_used_ >= 0);
}

void Switch::check_xoff(uint16_t in, uint8_t cls) {
  PortState& s = ports_[in];
  if ((s.xoff_mask >> cls) & 1U) return;
  if (s.buf[cls].hdrm > 0 || shared_of(s, cls) >= pfc_threshold(in)) {
    s.xoff_mask = static_cast<uint8_t>(s.xoff_mask | (1U << cls));
    send_pfc(in, cls, cfg_.pfc.pause_quanta);
    // Refresh the pause before it lapses at the upstream port.
    if (!s.refresh.armed())
      s.refresh.arm(sim_.scheduler(), this, in, sim_.now() + refresh_after(s));
  }
}

void Switch::check_xon(uint16_t in, uint8_t cls) {
  PortState& s = ports_[in];
  if (!((s.xoff_mask >> cls) & 1U) || s.buf[cls].hdrm > 0) return;
  const int64_t shared = shared_of(s, cls);
  const bool resume =
      cfg_.pfc.mode == PfcThreshold::kStatic
          ? shared <= cfg_.pfc.xon.count()
          : shared == 0 || shared + cfg_.pfc.resume_offset.count() <= pfc_threshold(in);
  if (resume) {
    s.xoff_mask = static_cast<uint8_t>(s.xoff_mask & ~(1U << cls));
    send_pfc(in, cls, 0);
    if (s.xoff_mask == 0) s.refresh.cancel();
  }
}

void Switch::send_pfc(uint16_t port, uint8_t cls, uint16_t quanta) {
  Packet* f = sim_.pool().acquire();
  f->type = PacketType::kPfc;
  f->size = 64;
  f->tclass = kControlClass;
  f->set_ext(PfcInfo{cls, quanta});
  sim_.ledger().inject(*f);
  ++ports_[port].egress->counters().pfc_sent;
  ++ports_[port].pfc_waiting[cls];
  ports_[port].egress->enqueue_pause(f);
}

void Switch::on_event(uint32_t tag, uint32_t gen) {
  PortState& s = ports_[tag];
  if (!s.refresh.fire(sim_.scheduler(), this, tag, gen) || s.xoff_mask == 0) return;
  // A pause frame still waits for the wire (behind the frame being sent): it renews the pause
  // when it goes, and a refresh queued behind it would only lengthen the queue. Without this, a
  // refresh period shorter than the wait (pause_quanta = 1: 0.64 ns at 400 Gb/s against a
  // 1.7 ns pause frame) queued frames faster than the port could send them, without bound.
  for (uint8_t c = 0; c < kNumClasses; ++c) {
    if (((s.xoff_mask >> c) & 1U) && s.pfc_waiting[c] == 0) {
      send_pfc(static_cast<uint16_t>(tag), c, cfg_.pfc.pause_quanta);
    }
  }
  s.refresh.arm(sim_.scheduler(), this, tag, sim_.now() + refresh_after(s));
}

// Half the pause the upstream port applies: quanta x 512 bit times at ITS rate, which the
// link it sends on sets. Cables are built with one rate both ways and a degrade fault only
// lowers a direction's rate, so the built rate gives the shortest the pause can be: a
// refresh at half of that never lets it lapse, whichever direction is degraded. Never more
// often than one pause frame's time on the wire, the fastest the port can send them (a pause
// of one or two quanta lapses between frames whatever the refresh does).
Time Switch::refresh_after(const PortState& s) const {
  const Link::Config& link = s.egress->link()->config();
  const Rate rate = s.built_rate.bps() > 0 ? s.built_rate : link.rate;
  return std::max(serialization_delay(static_cast<int64_t>(cfg_.pfc.pause_quanta) * 32, rate),
                  serialization_delay(64 + link.framing_bytes, rate));
}

// One event before a packet arrives (net/link.cpp): its ingress buffer counters; when a hook
// stamps packets, the fabric half of its extension block (a packet that finds its port idle
// leaves in the arrival event); and the egress port it will join, when the route is a single
// port or the selector can say without choosing (ECMP hashes). The route entry that names the
// port was prefetched when the packet went onto the wire (prefetch_route), a flight time ago.
void Switch::prefetch_receive(const Packet& p, uint16_t port) const {
  if (port < ports_.size()) __builtin_prefetch(&ports_[port].buf[p.tclass & 7U]);
  if (stamping_hooks_) sim_.pool().prefetch_fabric(p);
  if (p.dst < route_group_.size()) {
    const RouteGroup g = groups_[route_group_[p.dst]];
    if (g.count != 0) {
      const uint16_t* ports = &group_ports_[g.first];
      const uint16_t out = g.count == 1 && !selector_->sees_single_paths()
                               ? ports[0]
                               : selector_->peek(p, ports, g.count);
      if (out < egress_.size()) egress_[out]->prefetch_enqueue();
    }
  }
}

void Switch::receive(Packet* p, uint16_t in) {
  if (p->type == PacketType::kPfc) {
    const auto info = p->get_ext<PfcInfo>();
    ports_[in].egress->apply_pause(info.cls, info.quanta);
    sim_.ledger().deliver(*p);
    sim_.pool().release(p);
    return;
  }
  FABSIM_ASSERT(p->dst < route_group_.size());
  const RouteGroup g = groups_[route_group_[p->dst]];
  if (g.count == 0) {  // unreachable (every path failed): lost to the fault
    ++unroutable_;
    unroutable_bytes_ += p->size;
    last_unroutable_ = sim_.now();
    sim_.drop(p, DropCause::kUnroutable);
    return;
  }
  const uint16_t* ports = &group_ports_[g.first];
  const uint16_t out = g.count == 1 && !selector_->sees_single_paths()
                           ? ports[0]
                           : selector_->select(*p, ports, g.count);
  p->in_port = in;
  for (auto& ext : extensions_) {
    if (!ext->on_forward(*p, in, out)) return;  // held (e.g. a reorder buffer)
  }
  inject(p, out);
}

bool Switch::hold(Packet* p) {
  if (!buffer_admits(p->in_port, *p, nullptr)) {
    ++hold_drops_;
    return false;
  }
  accept(p->in_port, *p);
  return true;
}

void Switch::finish_extensions() {
  for (auto& ext : extensions_) ext->finish();
}

void Switch::inject(Packet* p, uint16_t out) {
  const uint16_t in = p->in_port;
  EgressPort& egress = *egress_[out];
  if (p->tclass == kControlClass) {
    // With trimming the control class is uet-htsim's header queue: every header-only packet
    // (ACK, NACK, credit, trimmed header) that finds it over the bound is dropped. Pause frames
    // never come here (send_pfc queues them at the port). An empty class takes any packet, so
    // the common case (ACKs drain at strict priority) costs one load, not the hook's call.
    if (egress.queued_bytes(kControlClass) > 0) {
      if (const AdmissionHook* h = egress.header_bound_hook()) [[unlikely]] {
        if (header_queue_full(egress, *p, h->trimmed_bound(egress))) return;
      }
    }
    egress.enqueue(p);
    return;
  }
  bool room = buffer_admits(in, *p, &egress);
  if (AdmissionHook* h = egress.admission_hook(p->tclass)) [[unlikely]] {
    switch (h->on_enqueue(*p, egress, room)) {
      case Admission::kAdmit:
        break;
      case Admission::kMark:
        if (p->ecn == Ecn::kEct) {
          p->ecn = Ecn::kCe;
          ++egress.counters().enqueue_marks;
        }
        break;
      case Admission::kDrop:
        ++egress.counters().drops;
        ++egress.counters().hook_drops;
        sim_.drop(p, DropCause::kAdmission);
        return;
      case Admission::kTrim:
        trim(egress, p, h->trimmed_bound(egress));
        return;
      case Admission::kTrimTail:
        if (Packet* tail = egress.take_trimmable_tail(p->tclass)) {
          credit(tail->in_port, *tail);  // it leaves the buffer as if sent
          if (lossless(tail->tclass)) check_xon(tail->in_port, tail->tclass);
          trim(egress, tail, h->trimmed_bound(egress));
          room = buffer_admits(in, *p, &egress);
          break;
        }
        trim(egress, p, h->trimmed_bound(egress));
        return;
    }
  }
  if (!room) {
    ++egress.counters().drops;
    ++egress.counters().buffer_drops;
    sim_.drop(p, DropCause::kBuffer);
    return;
  }
  accept(in, *p);
  egress.enqueue(p);
}

// Cuts `p` to its header and sends it on in the control class (no buffer charge, strict
// priority); the ledger counts the payload as trimmed. A header that finds the control class
// over the trimmed class's bound is dropped (its payload stays counted as trimmed).
void Switch::trim(EgressPort& egress, Packet* p, int64_t bound) {
  sim_.ledger().trim(*p);
  const uint32_t fabric = (p->flags & kFabricHeader) != 0 ? trimmed_fabric_header_ : 0;
  trim_to_header(*p, trimmed_size_ > 0 ? trimmed_size_ + fabric : 0);
  if (egress.link()->role() == LinkRole::kHostDown) p->flags |= kTrimmedLastHop;
  ++egress.counters().trims;
  if (header_queue_full(egress, *p, bound)) return;
  egress.enqueue(p);
}

// Drops `p` (a buffer drop) if the control class of `egress` would pass `bound` (> 0) with it.
bool Switch::header_queue_full(EgressPort& egress, Packet& p, int64_t bound) {
  if (bound <= 0 || egress.queued_bytes(kControlClass) + static_cast<int64_t>(p.size) <= bound) {
    return false;
  }
  ++egress.counters().drops;
  ++egress.counters().buffer_drops;
  sim_.drop(&p, DropCause::kBuffer);
  return true;
}

void Switch::on_dequeue(uint16_t port, Packet& p) {
  if (p.tclass == kControlClass) {
    if (p.type == PacketType::kPfc) --ports_[port].pfc_waiting[p.get_ext<PfcInfo>().cls];
    return;
  }
  credit(p.in_port, p);
  if (lossless(p.tclass)) check_xon(p.in_port, p.tclass);
  // RED/ECN and any other dequeue hooks run next, from the port (EgressPort::start).
}

}  // namespace fabsim
