// Ideal flow completion times; see ideal_fct.h.
#include "net/ideal_fct.h"

#include <algorithm>  // max, min, reverse, find_if
#include <deque>      // breadth-first frontier

#include "net/network.h"

namespace fabsim {

Time ideal_fct(const std::vector<const Link*>& path, int64_t bytes, const FrameShape& shape) {
  if (path.empty() || bytes <= 0) return Time();
  const int64_t packets = (bytes + shape.payload - 1) / shape.payload;
  const int64_t last_payload = bytes - (packets - 1) * shape.payload;
  const int64_t full = std::max(std::min(bytes, shape.payload) + shape.header, shape.min_frame);
  const int64_t last = std::max(last_payload + shape.header, shape.min_frame);
  size_t slowest = 0;
  for (size_t h = 1; h < path.size(); ++h) {
    if (path[h]->built_frame_time(full) > path[slowest]->built_frame_time(full)) slowest = h;
  }
  Time t;
  for (size_t h = 0; h < path.size(); ++h) {
    const Link& l = *path[h];
    t += l.config().delay + l.config().extra_delay;
    if (h == slowest) {
      t += l.built_frame_time(full) * (packets - 1) + l.built_frame_time(last);
    } else {
      t += l.built_frame_time(full);
    }
  }
  return t;
}

Time control_leg(const std::vector<const Link*>& path, int64_t frame, int64_t min_frame) {
  const int64_t bytes = std::max(frame, min_frame);
  Time t;
  for (const Link* l : path)
    t += l->config().delay + l->config().extra_delay + l->built_frame_time(bytes);
  return t;
}

PathFinder::PathFinder(const Network& net, int64_t frame) : net_(net), frame_(frame) {
  const size_t hosts = net.host_count();
  out_.resize(hosts + net.switch_count());
  nodes_.resize(out_.size());
  for (size_t h = 0; h < hosts; ++h) {
    index_[&net.host(h)] = static_cast<uint32_t>(h);
    nodes_[h] = &net.host(h);
    if (const Link* l = net.host(h).port().link()) out_[h].push_back(l);
  }
  for (size_t s = 0; s < net.switch_count(); ++s) {
    const Switch& sw = net.sw(s);
    index_[&sw] = static_cast<uint32_t>(hosts + s);
    nodes_[hosts + s] = &sw;
    for (size_t p = 0; p < sw.port_count(); ++p) {
      if (const Link* l = sw.port(p).link()) out_[hosts + s].push_back(l);
    }
  }
  via_.resize(out_.size());
  parent_.resize(out_.size());
  hops_.resize(out_.size());
  cost_.resize(out_.size());
}

void PathFinder::search(uint32_t src) {
  from_ = src;
  std::fill(via_.begin(), via_.end(), nullptr);
  hops_[src] = 0;
  cost_[src] = 0;
  std::deque<uint32_t> frontier{src};
  const size_t hosts = net_.host_count();
  // Breadth first, level by level: a node's cost is final before it is expanded (every node
  // one hop nearer was expanded before it), so a later parent on the same level replaces the
  // first only if its way is strictly cheaper.
  while (!frontier.empty()) {
    const uint32_t n = frontier.front();
    frontier.pop_front();
    if (n != src && n < hosts) continue;  // hosts do not forward
    for (const Link* l : out_[n]) {
      const auto it = index_.find(l->dst());
      if (it == index_.end() || it->second == src) continue;
      const uint32_t m = it->second;
      const int64_t c = cost_[n] + (l->config().delay + l->config().extra_delay).ps() +
                        (frame_ > 0 ? l->built_frame_time(frame_).ps() : 0);
      if (via_[m] != nullptr) {
        if (hops_[m] == hops_[n] + 1 && c < cost_[m]) {
          via_[m] = l;
          parent_[m] = n;
          cost_[m] = c;
        }
        continue;
      }
      via_[m] = l;
      parent_[m] = n;
      hops_[m] = hops_[n] + 1;
      cost_[m] = c;
      frontier.push_back(m);
    }
  }
}

std::vector<const Link*> PathFinder::path(uint32_t src, uint32_t dst) {
  if (src == dst || src >= net_.host_count() || dst >= net_.host_count()) return {};
  if (src != from_) search(src);
  std::vector<const Link*> links;
  uint32_t n = dst;
  while (n != src) {
    const Link* l = via_[n];
    if (l == nullptr) return {};
    links.push_back(l);
    n = parent_[n];
  }
  std::reverse(links.begin(), links.end());
  return links;
}

std::vector<const Link*> PathFinder::back(uint32_t src, uint32_t dst) {
  if (src == dst || src >= net_.host_count() || dst >= net_.host_count()) return {};
  if (src != from_) search(src);
  std::vector<const Link*> links;  // from dst towards src: already in order
  uint32_t n = dst;
  while (n != src) {
    if (via_[n] == nullptr) return {};
    const uint32_t up = parent_[n];
    const auto it = std::find_if(out_[n].begin(), out_[n].end(),
                                 [&](const Link* l) { return l->dst() == nodes_[up]; });
    if (it == out_[n].end()) return {};
    links.push_back(*it);
    n = up;
  }
  return links;
}

std::vector<const Link*> shortest_path(const Network& net, uint32_t src, uint32_t dst) {
  return PathFinder(net).path(src, dst);
}

}  // namespace fabsim
