// The ideal flow completion time: how long a flow takes alone on the empty network, the
// denominator of FCT slowdown (issue 16 item 4; docs/MODEL.md "FCT slowdown"). Read off the
// built network, as net/round_trip.h does: a path of fewest hops over the links, and each link's
// rate, propagation delay and per-frame costs. No topology arithmetic.
#pragma once

#include <cstdint>        // sizes
#include <unordered_map>  // node index
#include <vector>         // paths

#include "core/units.h"

namespace fabsim {

class Link;
class Network;
class Node;

/// How a flow is cut into frames: `payload` bytes per full packet, each frame the payload plus
/// `header` bytes, padded to `min_frame` (Ethernet's 64 B, FCS included). Preamble and gap are
/// the links' own (`Link::Config::framing_bytes`).
struct FrameShape {
  int64_t payload = 4096;
  int64_t header = 62;
  int64_t min_frame = 64;
};

/// Ideal FCT of `bytes` (>= 1) along `path` (the links from the source host to the destination):
///   sum over hops of (propagation delay + security latency)
///   + the flow's frames serialized one after another at the slowest hop b (the hop whose full
///     frame takes longest; the first of equals): W x 8 / R_min, where W is every frame's wire
///     bytes, summed frame by frame as the link rounds them
///   + one full frame F's serialization at every other hop (store and forward).
/// F is the flow's largest frame (one MTU frame, or the only frame of a one-packet flow). This is
/// exact when every frame is F or every hop has one rate; otherwise it exceeds the empty-network
/// time by less than one full frame per hop after b (its last, shorter frame can go sooner), so a
/// measured FCT can fall slightly below it (the slowdown report clamps at 1, as HPCC's does).
/// Zero for an empty path.
Time ideal_fct(const std::vector<const Link*>& path, int64_t bytes, const FrameShape& shape);

/// The time of one control frame of `frame` bytes (padded to `min_frame`) alone along `path`:
/// every hop's propagation delay and security latency plus the frame's serialization at every
/// hop (store and forward). An RDMA read's request, or the ACK a write completes with, on the
/// empty network. Zero for an empty path.
Time control_leg(const std::vector<const Link*>& path, int64_t frame, int64_t min_frame = 64);

/// Paths of fewest hops between hosts (hosts do not forward). Searches breadth first from one
/// source at a time and keeps the last search: ask for the flows of one source together.
class PathFinder {
 public:
  /// `frame`: the bytes of the frame that ranks equal-hop paths (below; 0 = delays only).
  explicit PathFinder(const Network& net, int64_t frame = 0);
  /// The links from host `src` to host `dst` in order: of the paths of fewest hops (those ECMP
  /// spreads over), the one whose hops sum the least propagation delay, security latency and
  /// serialization of a `frame`-byte frame (spine links of different delays:
  /// topology.spine_link_delays); ties go to the first found in port order. Empty if `dst`
  /// is unreachable or equals `src`.
  std::vector<const Link*> path(uint32_t src, uint32_t dst);
  /// The way back of path(src, dst): the links from `dst` to `src` through the same nodes, each
  /// hop the first link (in port order) between them the other way. Empty if there is none.
  std::vector<const Link*> back(uint32_t src, uint32_t dst);

 private:
  void search(uint32_t src);
  const Network& net_;
  std::unordered_map<const Node*, uint32_t> index_;  // hosts first, then switches
  std::vector<const Node*> nodes_;                   // by index
  std::vector<std::vector<const Link*>> out_;        // out-links per node
  std::vector<const Link*> via_;                     // the link each node was reached by
  std::vector<uint32_t> parent_;                     // and the node that link leaves
  std::vector<uint32_t> hops_;                       // hops from the source
  std::vector<int64_t> cost_;                        // ps of the best fewest-hop way there
  int64_t frame_ = 0;
  uint32_t from_ = UINT32_MAX;  // the source of the last search
};

/// A shortest path by hop count from host `src` to host `dst` (one search).
std::vector<const Link*> shortest_path(const Network& net, uint32_t src, uint32_t dst);

}  // namespace fabsim
