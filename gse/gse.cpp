// GSE PKTC spraying and container reordering; see gse.h.
#include "gse/gse.h"

#include "core/assert.h"
#include "core/rng.h"
#include "gse/gsos.h"
#include "net/switch.h"

namespace fabsim {
namespace {
// Adds the GSE header for container assignment `a` at source GSP `src` (its bytes count).
void stamp(Packet& p, const ContainerAssigner::Assignment& a, uint16_t src, int64_t header_bytes) {
  GseHeader h;
  h.container = a.container;
  h.dst_port = p.dst;
  h.src_gsp = src;
  h.seq = a.seq;
  h.prev_count = a.prev_count;
  h.prev_gap = a.prev_gap;
  set_gse_header(p, h);
  p.size += static_cast<uint32_t>(header_bytes);
}
}  // namespace

ContainerAssigner::Assignment ContainerAssigner::assign(int64_t bytes) {
  uint32_t id = current_;
  if (rule_ == ContainerRule::kCumulative) {
    id = static_cast<uint32_t>(cumulative_ / length_);
    cumulative_ += bytes;
  } else if (any_ && count_ > 0 && fill_ + bytes > length_) {
    id = current_ + 1;
  }
  Assignment a;
  if (!any_ || id != current_) {
    if (any_) {
      prev_count_ = count_;
      prev_gap_ = static_cast<uint16_t>(id - current_);
    }
    current_ = id;
    count_ = 0;
    fill_ = 0;
    any_ = true;
    a.opened = true;
  }
  fill_ += bytes;
  a.container = id;
  a.seq = count_++;
  a.prev_count = prev_count_;
  a.prev_gap = prev_gap_;
  return a;
}

GseSourceSelector::GseSourceSelector(Switch& sw, const GseConfig& cfg, std::vector<bool> uplink,
                                     uint64_t seed, int64_t framing_bytes)
    : sw_(sw), cfg_(cfg), uplink_(std::move(uplink)), ecmp_(seed), framing_(framing_bytes),
      credit_(uplink_.size(), 0) {}

// Index choice: container id mod uplinks, rotated by a per-stream offset. Without the offset
// every stream starting together sends its container c on uplink c at the same moment, so the
// streams' containers collide (docs/gse.md).
uint16_t GseSourceSelector::choose(const uint16_t* ports, uint32_t n, uint32_t container,
                                   uint64_t offset, uint32_t dst) {
  // Paths through a cable this GSP knows to be failed or failing are not candidates (with no
  // path left, the container goes where it would have gone).
  n = narrow_to_usable(gsos_, sw_.id(), dst, ports, n, usable_);
  switch (cfg_.path) {
    case ContainerPath::kIndex:
      return ports[(container + offset) % n];
    case ContainerPath::kLeastQueued: {
      // Ties go to the index choice's neighbour order, so equal queues still spread.
      uint32_t best = container % n;
      int64_t best_bytes = INT64_MAX;
      for (uint32_t k = 0; k < n; ++k) {
        const uint32_t i = (container + k) % n;
        const EgressPort& e = sw_.port(ports[i]);
        int64_t q = e.data_queued_bytes();
        if (e.busy()) q += 1;  // a frame on the wire counts a little
        if (q < best_bytes) {
          best_bytes = q;
          best = i;
        }
      }
      return ports[best];
    }
    case ContainerPath::kWeighted: {
      // Smooth weighted round robin, each uplink weighted by its rate in Gb/s.
      int64_t total = 0;
      uint32_t best = 0;
      for (uint32_t k = 0; k < n; ++k) {
        const int64_t w =
            std::max<int64_t>(1, sw_.port(ports[k]).link()->config().rate.bps() / 1'000'000'000);
        credit_[ports[k]] += w;
        total += w;
        if (credit_[ports[k]] > credit_[ports[best]]) best = k;
      }
      credit_[ports[best]] -= total;
      return ports[best];
    }
    case ContainerPath::kAdaptive: {
      // Local uplink backlog plus the backlog the GSF behind it published for its link to the
      // destination ToR; ties rotate like the index choice.
      uint32_t best = 0;
      int64_t best_bytes = INT64_MAX;
      for (uint32_t k = 0; k < n; ++k) {
        const uint32_t i = static_cast<uint32_t>((container + offset + k) % n);
        const EgressPort& e = sw_.port(ports[i]);
        int64_t q = e.data_queued_bytes();
        if (gsos_ != nullptr) q += gsos_->published_backlog(sw_.id(), ports[i], dst);
        if (q < best_bytes) {
          best_bytes = q;
          best = i;
        }
      }
      return ports[best];
    }
  }
  return ports[0];
}

uint16_t GseSourceSelector::select(Packet& p, const uint16_t* ports, uint32_t n) {
  if (!is_data(p.type) || !uplink_[ports[0]]) {
    // Control packets (ACK, CNP, request, grant) are not containerised but avoid known faults.
    if (n == 1) return ports[0];
    n = narrow_to_usable(gsos_, sw_.id(), p.dst, ports, n, usable_);
    return n == 1 ? ports[0] : ecmp_.select(p, ports, n);
  }
  if (deferred_) return ports[0];  // DGSQ holds it and stamps when it is granted
  return stamp_and_choose(p, ports, n);
}

uint16_t GseSourceSelector::stamp_and_choose(Packet& p, const uint16_t* ports, uint32_t n) {
  auto [it, fresh] = streams_.try_emplace(
      p.dst, Stream{ContainerAssigner(cfg_.rule, cfg_.container_bytes), 0,
                    splitmix64((static_cast<uint64_t>(sw_.id()) << 32) | p.dst)});
  Stream& s = it->second;
  const auto a = s.assigner.assign(p.size + cfg_.header_bytes + framing_);
  if (a.opened) {
    ++containers_;
    s.port = choose(ports, n, a.container, s.offset, p.dst);
  } else if (gsos_ != nullptr && gsos_->faults_known(sw_.id())) {
    // The open container's uplink became unusable: the rest of the container moves (its
    // packets already sent are lost with the link, so it cannot complete anyway).
    uint16_t keep = 0;
    if (gsos_->filter(sw_.id(), p.dst, &s.port, 1, &keep) == 0) {
      s.port = choose(ports, n, a.container, s.offset, p.dst);
      ++repinned_;
    }
  }
  stamp(p, a, static_cast<uint16_t>(sw_.id()), cfg_.header_bytes);
  if (cfg_.record_containers) records_.push_back({p.dst, a.container, s.port});
  return s.port;
}

uint16_t GseSourceSelector::repin_stamped(const Packet& p, const uint16_t* ports, uint32_t n,
                                          uint16_t port) {
  if (gsos_ == nullptr || !gsos_->faults_known(sw_.id())) return port;
  uint16_t keep = 0;
  if (gsos_->filter(sw_.id(), p.dst, &port, 1, &keep) != 0) return port;
  auto it = streams_.find(p.dst);
  FABSIM_ASSERT(it != streams_.end());  // the packet was stamped for this stream
  const uint16_t moved = choose(ports, n, gse_header(p).container, it->second.offset, p.dst);
  if (it->second.port == port) it->second.port = moved;  // the open container follows
  ++repinned_;
  return moved;
}

// A container's port is its digit over every equal-cost port; while that port is usable the
// container keeps it, and only the containers of an excluded port spread over the usable ones.
// (Until 2026-11-29 the digit was taken over the usable ports alone, so a fault notice moved
// half-sent containers off live links too: their later packets overtook the earlier ones, and
// the destination took the jump for a loss.)
uint16_t GseCoreSelector::select(Packet& p, const uint16_t* ports, uint32_t n) {
  const uint16_t* const all = ports;
  const uint32_t n_all = n;
  n = narrow_to_usable(gsos_, sw_, p.dst, ports, n, usable_);
  if (n == 1) return ports[0];
  if (!is_data(p.type) || (p.flags & kFabricHeader) == 0) return ecmp_.select(p, ports, n);
  const GseHeader h = gse_header(p);
  const uint64_t offset = splitmix64((static_cast<uint64_t>(h.src_gsp) << 32) | h.dst_port);
  const uint64_t digit = (h.container + offset) / divisor_;
  if (n != n_all) {
    const uint16_t home = all[digit % n_all];
    for (uint32_t k = 0; k < n; ++k) {
      if (ports[k] == home) return home;
    }
  }
  return ports[digit % n];
}

GseReorder::GseReorder(Simulation& sim, ReleaseSink& sink, const GseConfig& cfg,
                       std::vector<bool> host_port)
    : sim_(sim), sink_(sink), cfg_(cfg), host_port_(std::move(host_port)) {
  timeout_ = cfg_.reorder_timeout > Time() ? cfg_.reorder_timeout : derived_reorder_timeout(cfg_);
  stats_.timeout = timeout_;
}

Time derived_reorder_timeout(const GseConfig& cfg) {
  return std::min(std::max(cfg.grant_loop * 2, Time::us(1)), cfg.reorder_timeout_max);
}

void GseReorder::observe_wait(Time waited) {
  if (cfg_.reorder_timeout > Time() || waited <= longest_wait_) return;
  longest_wait_ = waited;
  timeout_ = std::min(std::max(timeout_, waited * 2), cfg_.reorder_timeout_max);
  stats_.timeout = timeout_;
}

void SwitchSink::release(Packet* p, uint16_t out) {
  sw_.inject(p, out);
}
bool SwitchSink::hold(Packet* p) {
  return sw_.hold(p);
}
void SwitchSink::release_held(Packet* p, uint16_t out) {
  sw_.send_held(p, out);
}

GseNic::GseNic(Simulation& sim, Host& host, const GseConfig& cfg, int64_t framing_bytes)
    : host_(host), cfg_(cfg), framing_(framing_bytes), reorder_(sim, *this, cfg, {true}) {}

// Numbered as the NIC dequeues the packet, in wire bytes, per destination egress port.
void GseNic::on_send(Packet& p) {
  if (!is_data(p.type)) return;
  auto [it, fresh] =
      streams_.try_emplace(p.dst, ContainerAssigner(cfg_.rule, cfg_.container_bytes));
  const auto a = it->second.assign(p.size + cfg_.header_bytes + framing_);
  if (a.opened) ++containers_;
  stamp(p, a, static_cast<uint16_t>(host_.id()), cfg_.header_bytes);
}

void GseReorder::account(int64_t delta_bytes, int64_t delta_packets) {
  stats_.byte_time += static_cast<long double>(stats_.held_bytes) *
                      static_cast<long double>((sim_.now() - last_change_).ps());
  last_change_ = sim_.now();
  stats_.held_bytes += delta_bytes;
  held_packets_ += delta_packets;
  if (stats_.held_bytes > stats_.peak_bytes) stats_.peak_bytes = stats_.held_bytes;
  if (held_packets_ > stats_.peak_packets) stats_.peak_packets = held_packets_;
}

void GseReorder::release(Stream& s, Packet* p, uint16_t out, bool held) {
  ++s.released;
  if (held) {
    sink_.release_held(p, out);
  } else {
    sink_.release(p, out);
  }
}

bool GseReorder::cur_lossy(Stream& s) const {
  const auto it = s.seen.find(s.cur);
  return it != s.seen.end() && it->second.lossy;
}

// Loss shows in two ways. A container's packets come over one path in order, so a skipped
// packet number is a loss seen at once. Once that container is the current one (every earlier
// container complete: REFERENCE.md §5, a container is released only after those before it),
// it cannot complete, and everything held behind it is released (the transport recovers the
// gap; holding the rest only delays its loss signal). A gap in a later container does not
// release the earlier ones, which are intact and on their way: releasing them early made RoCE
// see holes that were not losses (until 2026-11-28). A lost last packet shows as a container
// that does not complete: the timeout releases everything held.
bool GseReorder::on_forward(Packet& p, uint16_t /*in_port*/, uint16_t out_port) {
  if ((p.flags & kFabricHeader) == 0 || !host_port_[out_port]) return true;
  const GseHeader h = gse_header(p);
  p.flags = static_cast<uint8_t>(p.flags & ~kFabricHeader);  // the NIC gets plain RoCE
  p.size -= static_cast<uint32_t>(cfg_.header_bytes);
  ++stats_.packets;
  const uint64_t key = (static_cast<uint64_t>(h.src_gsp) << 32) | h.dst_port;
  auto [it, fresh] = index_.try_emplace(key, static_cast<uint32_t>(streams_.size()));
  if (fresh) streams_.push_back(std::make_unique<Stream>());
  const uint32_t index = it->second;
  Stream& s = *streams_[index];
  if (h.container < s.cur) {
    ++stats_.late;  // its container was given up: deliver at once
    // The container a timeout gave up waiting for was not lost but slow: the derived timeout
    // grows to cover that wait, as when a container completes late. Without this, a path skew
    // longer than the current timeout timed out on every container and taught nothing. Only
    // the container the stream waited for teaches: the ones held behind it that were still
    // arriving at the give-up did not block it. Each of its packets does (the wait it needed
    // ended with the last), while the wait is at most reorder_timeout_max: later than that it
    // is taken as lost, as at the pruning in on_event.
    if (const auto g = s.gave_up.find(h.container); g != s.gave_up.end()) {
      const Time waited = sim_.now() - g->second;
      if (waited <= cfg_.reorder_timeout_max) {
        observe_wait(waited);
      } else {
        s.gave_up.erase(g);
      }
    }
    sink_.release(&p, out_port);
    return false;
  }
  if (h.prev_gap > 0) {
    const uint32_t prev = h.container - h.prev_gap;
    if (prev >= s.cur) {
      s.count[prev] = h.prev_count;
      s.next[prev] = h.container;
    }
  }
  Arrivals& a = s.seen[h.container];
  if (h.seq > a.expect) {
    a.lossy = true;
    ++stats_.gaps;
  }
  a.expect = std::max<uint16_t>(a.expect, static_cast<uint16_t>(h.seq + 1));
  if (h.container > s.cur && cur_lossy(s)) {
    // The stream waits for a container that cannot complete: stop waiting, up to this
    // container at least.
    give_up(index, h.container);
  }
  if (h.container < s.cur) {  // released behind a later container: out of order
    ++stats_.late;
    sink_.release(&p, out_port);
  } else if (h.container == s.cur) {
    release(s, &p, out_port, false);
    if (cur_lossy(s) && !s.buffered.empty()) give_up(index, s.cur);
  } else if (held_limit_reached(p) || !sink_.hold(&p)) {
    ++stats_.overflows;  // no memory to wait in: release what is held, then this packet
    give_up(index, h.container);
    if (h.container < s.cur) {
      ++stats_.late;
      sink_.release(&p, out_port);
    } else {
      release(s, &p, out_port, false);
    }
  } else {
    ++stats_.held;
    if (s.buffered.empty()) s.blocked_since = sim_.now();
    s.buffered[h.container].push_back({&p, out_port});
    account(p.size, 1);
    if (!s.timer.armed()) s.timer.arm(sim_.scheduler(), this, index, sim_.now() + wait());
  }
  advance(index);
  return false;
}

uint32_t GseReorder::give_up(uint32_t index, uint32_t at_least) {
  Stream& s = *streams_[index];
  uint32_t last = std::max(s.cur, at_least);
  if (!s.buffered.empty()) last = std::max(last, s.buffered.rbegin()->first);
  if (last != s.cur) {
    s.cur = last;
    s.released = 0;
  }
  auto buffered = std::move(s.buffered);
  s.buffered.clear();
  for (auto& [c, held] : buffered) {
    for (const Held& x : held) {
      account(-static_cast<int64_t>(x.p->size), -1);
      ++stats_.flushed;
      if (c == s.cur) {
        release(s, x.p, x.out, true);
      } else {
        sink_.release_held(x.p, x.out);
      }
    }
  }
  // Forget what concerns containers before the new current one.
  std::erase_if(s.count, [&s](const auto& e) { return e.first < s.cur; });
  std::erase_if(s.next, [&s](const auto& e) { return e.first < s.cur; });
  std::erase_if(s.seen, [&s](const auto& e) { return e.first < s.cur; });
  s.timer.cancel();
  s.blocked_since = Time::max();
  return s.cur;
}

// Moves past every complete container, releasing the next one's buffered packets in arrival
// order (they came over one path, so they are in order among themselves).
void GseReorder::advance(uint32_t index) {
  Stream& s = *streams_[index];
  bool moved = false;
  for (;;) {
    const auto c = s.count.find(s.cur);
    if (c == s.count.end() || s.released < c->second) break;
    const auto nx = s.next.find(s.cur);
    FABSIM_ASSERT(nx != s.next.end());
    const uint32_t next = nx->second;
    s.count.erase(c);
    s.next.erase(nx);
    s.seen.erase(s.cur);
    s.cur = next;
    s.released = 0;
    moved = true;
    const auto b = s.buffered.find(s.cur);
    if (b != s.buffered.end()) {
      std::vector<Held> held = std::move(b->second);
      s.buffered.erase(b);
      for (const Held& x : held) {
        account(-static_cast<int64_t>(x.p->size), -1);
        release(s, x.p, x.out, true);
      }
    }
  }
  if (moved && s.blocked_since != Time::max()) observe_wait(sim_.now() - s.blocked_since);
  if (moved && cur_lossy(s) && !s.buffered.empty()) {
    give_up(index, s.cur);  // the new current container lost a packet: it cannot complete
    return;
  }
  if (s.buffered.empty()) {
    s.timer.cancel();
    s.blocked_since = Time::max();
  } else if (moved) {
    s.blocked_since = sim_.now();
    s.timer.arm(sim_.scheduler(), this, index, sim_.now() + wait());
  }
}

void GseReorder::on_event(uint32_t tag, uint32_t gen) {
  Stream& s = *streams_[tag];
  if (!s.timer.fire(sim_.scheduler(), this, tag, gen) || s.buffered.empty()) return;
  // Its missing packets are taken as lost: release everything held behind them at once.
  ++stats_.timeouts;
  // Remember what it waited for, and since when, for as long as a wait can teach (a container
  // later than reorder_timeout_max is taken as lost: it would only set the cap).
  if (cfg_.reorder_timeout <= Time()) {  // a derived timeout learns; a given one does not
    const Time now = sim_.now();
    std::erase_if(s.gave_up,
                  [&](const auto& e) { return now - e.second > cfg_.reorder_timeout_max; });
    s.gave_up.emplace(s.cur, s.blocked_since);
  }
  give_up(tag, s.cur);
  advance(tag);
}

void GseReorder::flush_by(Time deadline) {
  fast_until_ = std::max(fast_until_, sim_.now() + timeout_);
  bool any = false;
  for (uint32_t i = 0; i < streams_.size(); ++i) {
    Stream& s = *streams_[i];
    if (s.buffered.empty() || (s.timer.armed() && s.timer.when() <= deadline)) continue;
    s.timer.arm(sim_.scheduler(), this, i, deadline);
    any = true;
  }
  if (any) ++stats_.flushes;
}

void GseReorder::finish() {
  for (auto& s : streams_) {
    for (auto& [c, held] : s->buffered) {
      for (const Held& x : held) sim_.pool().release(x.p);
    }
    s->buffered.clear();
  }
  account(-stats_.held_bytes, -held_packets_);
}

}  // namespace fabsim
