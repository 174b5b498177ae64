// See round_trip.h.
#include "net/round_trip.h"

#include <algorithm>      // max
#include <queue>          // Dijkstra's frontier
#include <unordered_map>  // distance by node
#include <utility>        // pair
#include <vector>         // heap storage

#include "net/network.h"

namespace fabsim {
namespace {

// Out-links of a node: a host's NIC link or every port of a switch.
template <typename F> void for_each_out_link(Node* n, F&& f) {
  if (auto* h = dynamic_cast<Host*>(n)) {
    if (h->port().link() != nullptr) f(h->port().link());
    return;
  }
  if (auto* s = dynamic_cast<Switch*>(n)) {
    for (size_t i = 0; i < s->port_count(); ++i) {
      if (s->port(i).link() != nullptr) f(s->port(i).link());
    }
  }
}

Time hop_time(const Link& l, int64_t frame) {
  const auto& c = l.config();
  return serialization_delay(frame + c.framing_bytes + c.overhead_bytes, c.rate) + c.delay +
         c.extra_delay;
}

}  // namespace

Time longest_base_rtt(Network& net, int64_t data_frame, int64_t ack_frame) {
  if (net.host_count() < 2) return Time();
  using Entry = std::pair<int64_t, Node*>;  // (ps, node)
  std::priority_queue<Entry, std::vector<Entry>, std::greater<>> frontier;
  std::unordered_map<Node*, int64_t> dist;
  Node* origin = &net.host(0);
  dist[origin] = 0;
  frontier.push({0, origin});
  while (!frontier.empty()) {
    const auto [d, n] = frontier.top();
    frontier.pop();
    if (d > dist[n]) continue;
    if (n != origin && dynamic_cast<Host*>(n) != nullptr) continue;  // hosts do not forward
    for_each_out_link(n, [&](Link* l) {
      // The same hop carries the data out and the acknowledgement back (symmetric cables).
      const int64_t nd = d + (hop_time(*l, data_frame) + hop_time(*l, ack_frame)).ps();
      auto it = dist.find(l->dst());
      if (it == dist.end() || nd < it->second) {
        dist[l->dst()] = nd;
        frontier.push({nd, l->dst()});
      }
    });
  }
  int64_t longest = 0;
  for (size_t i = 1; i < net.host_count(); ++i) {
    const auto it = dist.find(&net.host(i));
    if (it != dist.end()) longest = std::max(longest, it->second);
  }
  return Time::ps(longest);
}

int64_t bdp_in_whole_frames(Network& net, int64_t frame, int64_t ack_frame) {
  const int64_t bdp = bytes_in(longest_base_rtt(net, frame, ack_frame), net.host(0).rate());
  return std::max<int64_t>(1, (bdp + frame - 1) / frame) * frame;
}

std::vector<int> switch_hops(Network& net, uint32_t src) {
  std::vector<int> out(net.host_count(), -1);
  std::unordered_map<Node*, int> seen;  // node -> links from src
  std::vector<Node*> frontier{&net.host(src)};
  seen[&net.host(src)] = 0;
  std::unordered_map<Node*, uint32_t> host_id;
  for (size_t i = 0; i < net.host_count(); ++i) host_id[&net.host(i)] = static_cast<uint32_t>(i);
  out[src] = 0;
  for (int depth = 1; !frontier.empty(); ++depth) {
    std::vector<Node*> next;
    for (Node* n : frontier) {
      if (n != &net.host(src) && dynamic_cast<Host*>(n) != nullptr) continue;  // hosts end paths
      for_each_out_link(n, [&](Link* l) {
        if (!seen.try_emplace(l->dst(), depth).second) return;
        next.push_back(l->dst());
        const auto it = host_id.find(l->dst());
        if (it != host_id.end()) out[it->second] = depth - 1;  // links - 1 = switches
      });
    }
    frontier = std::move(next);
  }
  return out;
}

double tor_oversubscription(Network& net) {
  double worst = 1;
  for (size_t i = 0; i < net.switch_count(); ++i) {
    const Switch& sw = net.sw(i);
    double hosts = 0, fabric = 0;
    for (size_t p = 0; p < sw.port_count(); ++p) {
      const Link* l = sw.port(p).link();
      const auto bps = static_cast<double>(l->config().rate.bps());
      if (l->role() == LinkRole::kHostDown) hosts += bps;
      if (l->role() == LinkRole::kFabric) fabric += bps;
    }
    if (hosts > 0 && fabric > 0) worst = std::max(worst, hosts / fabric);
  }
  return worst;
}

}  // namespace fabsim
