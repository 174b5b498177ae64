// The scale-up fabric's fluid; see scale_up.h.
#include "workload/scale_up.h"

#include <algorithm>  // remove_if
#include <cmath>      // llround
#include <limits>     // infinity

#include "core/assert.h"

namespace fabsim {

ScaleUpFabric::Server& ScaleUpFabric::server(uint32_t id) {
  if (servers_.size() <= id) servers_.resize(id + 1);
  return servers_[id];
}

uint32_t ScaleUpFabric::port_of(Server& s, uint32_t gpu, bool egress, double capacity) {
  for (uint32_t i = 0; i < s.ports.size(); ++i) {
    if (s.ports[i].gpu == gpu && s.ports[i].egress == egress) {
      // One rate per port: a run has one workload kind, whose [workload.gpu] scale_up_rate
      // every job shares (add()'s contract).
      FABSIM_ASSERT(s.ports[i].capacity == capacity);
      return i;
    }
  }
  s.ports.push_back({gpu, egress, capacity});
  return static_cast<uint32_t>(s.ports.size() - 1);
}

void ScaleUpFabric::add(uint32_t id, uint32_t src, uint32_t dst, int64_t bytes, Rate rate,
                        uint64_t cookie, Time now) {
  FABSIM_ASSERT(bytes > 0 && src != dst && rate.bps() > 0);
  Server& s = server(id);
  FABSIM_ASSERT(now >= s.since);
  if (now > s.since) settle(s);  // adds at an earlier instant take their shares from then
  advance(s, now);
  const double capacity = static_cast<double>(rate.bps()) * 1e-12;
  Transfer t;
  t.src = src;
  t.dst = dst;
  t.cookie = cookie;
  t.bits = static_cast<double>(bytes) * 8;
  t.out = port_of(s, src, true, capacity);
  t.in = port_of(s, dst, false, capacity);
  t.finish = Time::max();  // no share yet
  s.transfers.push_back(t);
  s.unshared = true;
}

void ScaleUpFabric::settle(Server& s) {
  if (s.unshared) share(s, s.since);
}

Time ScaleUpFabric::next_drain(uint32_t id) {
  if (id >= servers_.size()) return Time::max();
  Server& s = servers_[id];
  settle(s);
  Time next = Time::max();
  for (const Transfer& t : s.transfers) next = std::min(next, t.finish);
  return next;
}

void ScaleUpFabric::drain(uint32_t id, Time now, std::vector<uint64_t>* done) {
  if (id >= servers_.size()) return;
  Server& s = servers_[id];
  if (now > s.since) settle(s);
  advance(s, now);
  auto gone = std::remove_if(s.transfers.begin(), s.transfers.end(), [&](const Transfer& t) {
    if (t.finish > now) return false;
    done->push_back(t.cookie);
    return true;
  });
  if (gone == s.transfers.end() && !s.unshared) return;
  s.transfers.erase(gone, s.transfers.end());
  share(s, now);
}

const std::vector<ScaleUpFabric::Transfer>& ScaleUpFabric::transfers(uint32_t id) {
  static const std::vector<Transfer> kNone;
  if (id >= servers_.size()) return kNone;
  settle(servers_[id]);
  return servers_[id].transfers;
}

void ScaleUpFabric::advance(Server& s, Time now) {
  const double elapsed = static_cast<double>((now - s.since).ps());
  if (elapsed > 0) {
    for (Transfer& t : s.transfers) t.bits = std::max(0.0, t.bits - t.rate * elapsed);
  }
  s.since = now;
}

// Progressive filling: the port whose capacity left per unassigned transfer is smallest fixes
// the share of every unassigned transfer through it; their other ports lose that share; repeat.
// Ties go to the lower port index, so the result does not depend on anything but the inputs.
void ScaleUpFabric::share(Server& s, Time now) {
  s.unshared = false;
  const size_t np = s.ports.size();
  std::vector<double>& left = left_;
  std::vector<uint32_t>& users = users_;
  std::vector<bool>& fixed = fixed_;
  left.resize(np);
  users.assign(np, 0);
  for (size_t p = 0; p < np; ++p) left[p] = s.ports[p].capacity;
  for (const Transfer& t : s.transfers) {
    ++users[t.out];
    ++users[t.in];
  }
  fixed.assign(s.transfers.size(), false);
  size_t unfixed = s.transfers.size();
  while (unfixed > 0) {
    size_t best = np;
    double best_share = std::numeric_limits<double>::infinity();
    for (size_t p = 0; p < np; ++p) {
      if (users[p] == 0) continue;
      const double per = left[p] / users[p];
      if (per < best_share) {
        best_share = per;
        best = p;
      }
    }
    FABSIM_ASSERT(best < np);
    best_share = std::max(best_share, 0.0);
    for (size_t i = 0; i < s.transfers.size(); ++i) {
      Transfer& t = s.transfers[i];
      if (fixed[i] || (t.out != best && t.in != best)) continue;
      fixed[i] = true;
      --unfixed;
      t.rate = best_share;
      left[t.out] -= best_share;
      left[t.in] -= best_share;
      --users[t.out];
      --users[t.in];
    }
  }
  for (Transfer& t : s.transfers) {
    FABSIM_ASSERT(t.rate > 0);
    t.finish = now + Time::ps(std::llround(t.bits / t.rate));
  }
}

}  // namespace fabsim
