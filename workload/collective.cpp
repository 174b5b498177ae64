// Collective expansion; see collective.h.
#include "workload/collective.h"

#include <algorithm>  // min, max, clamp
#include <array>      // name table

namespace fabsim {
namespace {

struct Named {
  Collective c;
  const char* name;
};
constexpr std::array<Named, 7> kNames{{{Collective::kAllReduceRing, "allreduce_ring"},
                                       {Collective::kAllReduceTree, "allreduce_tree"},
                                       {Collective::kAllToAll, "alltoall"},
                                       {Collective::kAllToAllPairwise, "alltoall_pairwise"},
                                       {Collective::kAllGather, "allgather"},
                                       {Collective::kReduceScatter, "reducescatter"},
                                       {Collective::kSendRecv, "sendrecv"}}};

// Chunk c of S split into n nearly equal parts (the first S mod n get one byte more).
int64_t part(int64_t bytes, int n, int c) {
  return bytes / n + (c < static_cast<int>(bytes % n) ? 1 : 0);
}

int mod(int a, int n) {
  return ((a % n) + n) % n;
}

// Rank r's block for rank r + k (AllToAll): S/n bytes, of which channel `ch` of `channels`
// carries its share.
Transfer to_peer(int r, int k, int n, int64_t bytes, int ch, int channels) {
  Transfer t;
  t.src = static_cast<uint32_t>(r);
  t.dst = static_cast<uint32_t>((r + k) % n);
  t.bytes = part(part(bytes, n, (r + k) % n), channels, ch);
  return t;
}

// Ring over ranks 0..n-1 for `steps` steps; step 0 sends chunk first_chunk(r), later steps
// forward what arrived. Appends to `out`; the first step may depend on `after` (a whole phase).
void ring(std::vector<Transfer>& out, int n, int64_t bytes, int steps, int step0, int chunk_shift,
          const std::vector<uint32_t>& after) {
  const auto base = static_cast<uint32_t>(out.size());
  for (int s = 0; s < steps; ++s) {
    for (int r = 0; r < n; ++r) {
      Transfer t;
      t.src = static_cast<uint32_t>(r);
      t.dst = static_cast<uint32_t>((r + 1) % n);
      t.bytes = part(bytes, n, mod(r - s + chunk_shift, n));
      t.step = step0 + s;
      if (s > 0) {
        t.deps.push_back(base + static_cast<uint32_t>((s - 1) * n + mod(r - 1, n)));
      } else if (!after.empty()) {
        // The first step of a second phase continues the ring: rank r's last receive.
        t.deps.push_back(after[static_cast<size_t>(mod(r - 1, n))]);
      }
      out.push_back(std::move(t));
    }
  }
}

void tree_allreduce(std::vector<Transfer>& out, int n, int64_t bytes, int64_t chunk) {
  const std::vector<int> parent = btree_parents(n);
  std::vector<std::vector<int>> children(n);
  for (int p = 1; p < n; ++p) children[parent[p]].push_back(p);
  for (int tree = 0; tree < 2; ++tree) {
    const int64_t data = tree == 0 ? bytes - bytes / 2 : bytes / 2;
    if (data == 0) continue;
    const int64_t chunks = (data + chunk - 1) / chunk;
    for (int64_t j = 0; j < chunks; ++j) {
      const int64_t size = std::min(chunk, data - j * chunk);
      // Reduce towards the root, children before parents (deepest first).
      std::vector<uint32_t> up(n, 0);  // position -> transfer carrying chunk j to its parent
      std::vector<int> order;          // positions in breadth-first order from the root
      order.push_back(0);
      for (size_t i = 0; i < order.size(); ++i) {
        for (int c : children[order[i]]) order.push_back(c);
      }
      for (size_t i = order.size(); i-- > 1;) {
        const int p = order[i];
        Transfer t;
        t.src = static_cast<uint32_t>(tree_rank(tree, p, n));
        t.dst = static_cast<uint32_t>(tree_rank(tree, parent[p], n));
        t.bytes = size;
        t.step = static_cast<int32_t>(j);
        for (int c : children[p]) t.deps.push_back(up[c]);
        up[p] = static_cast<uint32_t>(out.size());
        out.push_back(std::move(t));
      }
      // Broadcast from the root once the root has every child's contribution.
      std::vector<uint32_t> down(n, 0);  // position -> transfer bringing the result to it
      for (size_t i = 1; i < order.size(); ++i) {
        const int p = order[i];
        const int q = parent[p];
        Transfer t;
        t.src = static_cast<uint32_t>(tree_rank(tree, q, n));
        t.dst = static_cast<uint32_t>(tree_rank(tree, p, n));
        t.bytes = size;
        t.step = static_cast<int32_t>(j);
        if (q == 0) {
          for (int c : children[0]) t.deps.push_back(up[c]);
        } else {
          t.deps.push_back(down[q]);
        }
        down[p] = static_cast<uint32_t>(out.size());
        out.push_back(std::move(t));
      }
    }
  }
}

}  // namespace

const char* collective_name(Collective c) {
  for (const auto& n : kNames) {
    if (n.c == c) return n.name;
  }
  return "?";
}

bool parse_collective(const std::string& name, Collective* out) {
  if (name == "allreduce") {
    *out = Collective::kAllReduceRing;
    return true;
  }
  for (const auto& n : kNames) {
    if (name == n.name) {
      *out = n.c;
      return true;
    }
  }
  return false;
}

std::vector<int> btree_parents(int n) {
  std::vector<int> parent(n, -1);
  for (int p = 1; p < n; ++p) {
    const int low = p & -p;           // lowest set bit: the node's level
    int up = (p ^ low) | (low << 1);  // clear it and set the next: the parent one level up
    if (up >= n) up = p ^ low;        // beyond the end: the nearest ancestor below
    parent[p] = up;
  }
  return parent;
}

int tree_rank(int tree, int position, int n) {
  if (tree == 0) return position;
  // NCCL's ncclGetDtree over this binary tree (whose leaves are the odd positions): shifted by
  // one for odd n, mirrored for even n, so a leaf of one tree is interior in the other. (The
  // opposite pairing, mirrored odd n, maps odd positions to odd ranks: n = 5 left rank 2
  // interior in both trees, carrying 3 S where each rank should carry at most 2 S.)
  return n % 2 == 1 ? (position + 1) % n : n - 1 - position;
}

namespace {

// Channel `ch` of `channels` of a collective on `bytes` (its share already taken, except for
// AllToAll, whose blocks are split per peer): appended to `out`, its dependencies within it.
void expand_channel(std::vector<Transfer>& out, Collective c, int n, int64_t bytes,
                    const CollectiveOptions& opt, int ch, int channels) {
  const auto base = static_cast<uint32_t>(out.size());
  switch (c) {
    case Collective::kAllReduceRing: {
      ring(out, n, bytes, n - 1, 0, 0, {});
      std::vector<uint32_t> last(n);
      for (int r = 0; r < n; ++r) last[r] = base + static_cast<uint32_t>((n - 2) * n + r);
      // All-gather: rank r now owns reduced chunk r+1 and circulates it.
      ring(out, n, bytes, n - 1, n - 1, 1, last);
      break;
    }
    case Collective::kReduceScatter:
      ring(out, n, bytes, n - 1, 0, 0, {});
      break;
    case Collective::kAllGather:
      ring(out, n, bytes, n - 1, 0, 0, {});
      break;
    case Collective::kAllReduceTree:
      tree_allreduce(out, n, bytes, opt.tree_chunk);
      break;
    case Collective::kAllToAll:
      for (int r = 0; r < n; ++r) {
        for (int k = 1; k < n; ++k) out.push_back(to_peer(r, k, n, bytes, ch, channels));
      }
      break;
    case Collective::kAllToAllPairwise:
      for (int k = 1; k < n; ++k) {
        for (int r = 0; r < n; ++r) {
          Transfer t = to_peer(r, k, n, bytes, ch, channels);
          t.step = k - 1;
          if (k > 1) {
            const auto prev = base + static_cast<uint32_t>((k - 2) * n);
            t.deps.push_back(prev + static_cast<uint32_t>(r));                    // my last send
            t.deps.push_back(prev + static_cast<uint32_t>(mod(r - (k - 1), n)));  // my last receive
          }
          out.push_back(std::move(t));
        }
      }
      break;
    case Collective::kSendRecv: {
      Transfer t;
      t.src = opt.send_rank;
      t.dst = opt.recv_rank;
      t.bytes = bytes;
      out.push_back(std::move(t));
      break;
    }
  }
  for (size_t i = base; i < out.size(); ++i) out[i].channel = ch;
}

bool splits_blocks(Collective c) {
  return c == Collective::kAllToAll || c == Collective::kAllToAllPairwise;
}

}  // namespace

int active_channels(Collective c, int n, int64_t bytes, int asked) {
  if (asked <= 1) return 1;
  const int64_t unit = splits_blocks(c) ? bytes / std::max(n, 1) : bytes;
  return static_cast<int>(std::clamp<int64_t>(unit, 1, asked));
}

int64_t channel_share(int64_t bytes, int channels, int ch) {
  return part(bytes, channels, ch);
}

int nccl_net_channels(Rate nic) {
  // NCCL_P2P_PER_CHANNEL_NET_BW = 14 GB/s (10^9 B/s) = 112 Gb/s per channel.
  constexpr int64_t kPerChannelBps = int64_t{14} * 8 * 1000 * 1000 * 1000;
  const int64_t need = std::max<int64_t>(1, (nic.bps() + kPerChannelBps - 1) / kPerChannelBps);
  int channels = 1;
  while (channels < need && channels < kMaxChannels) channels *= 2;
  return channels;
}

std::vector<Transfer> expand_collective(Collective c, int n, int64_t bytes,
                                        const CollectiveOptions& opt) {
  std::vector<Transfer> out;
  const int channels = active_channels(c, n, bytes, opt.channels);
  for (int ch = 0; ch < channels; ++ch) {
    const int64_t share = splits_blocks(c) ? bytes : channel_share(bytes, channels, ch);
    expand_channel(out, c, n, share, opt, ch, channels);
  }
  return out;
}

namespace {
uint64_t sat_mul(uint64_t a, uint64_t b) {
  return a != 0 && b > UINT64_MAX / a ? UINT64_MAX : a * b;
}
uint64_t sat_add(uint64_t a, uint64_t b) {
  return b > UINT64_MAX - a ? UINT64_MAX : a + b;
}

// One channel on `bytes` (AllToAll: the whole S; its blocks' shares sum to it over channels).
// The counts follow the loops of expand_channel() above (tests/test_collective.cpp checks them
// against it): a ring of s steps has s x n transfers, each step after the first depending on one
// transfer (the second phase of AllReduce also its first step); a tree chunk has n - 1
// transfers up and n - 1 down, where the root has one child (btree_parents), so its broadcast
// depends on one transfer and every other transfer on one per child.
CollectiveSize channel_size(Collective c, int n, int64_t bytes, const CollectiveOptions& opt) {
  CollectiveSize s;
  const auto un = static_cast<uint64_t>(n);
  const auto ub = static_cast<uint64_t>(std::max<int64_t>(bytes, 0));
  switch (c) {
    case Collective::kAllReduceRing:
      s.transfers = 2 * (un - 1) * un;
      s.deps = (2 * un - 3) * un;
      s.bytes = sat_mul(2 * (un - 1), ub);
      break;
    case Collective::kReduceScatter:
    case Collective::kAllGather:
      s.transfers = (un - 1) * un;
      s.deps = (un - 2) * un;
      s.bytes = sat_mul(un - 1, ub);
      break;
    case Collective::kAllToAll:
      s.transfers = un * (un - 1);
      s.bytes = sat_mul(un - 1, ub);
      break;
    case Collective::kAllToAllPairwise:
      s.transfers = un * (un - 1);
      s.deps = 2 * un * (un - 2);
      s.bytes = sat_mul(un - 1, ub);
      break;
    case Collective::kSendRecv:
      s.transfers = 1;
      s.bytes = ub;
      break;
    case Collective::kAllReduceTree: {
      const auto chunk = static_cast<uint64_t>(std::max<int64_t>(opt.tree_chunk, 1));
      for (const uint64_t data : {ub - ub / 2, ub / 2}) {
        const uint64_t chunks = data / chunk + (data % chunk != 0 ? 1 : 0);
        s.transfers = sat_add(s.transfers, sat_mul(chunks, 2 * (un - 1)));
        s.deps = sat_add(s.deps, sat_mul(chunks, 2 * (un - 2) + 1));
        s.bytes = sat_add(s.bytes, sat_mul(data, 2 * (un - 1)));
      }
      break;
    }
  }
  return s;
}

}  // namespace

// Channels repeat one channel's transfers and dependencies on their shares; the bytes of all
// channels add up to one channel's on S (AllToAll blocks are split, not repeated).
CollectiveSize collective_size(Collective c, int n, int64_t bytes, const CollectiveOptions& opt) {
  const int channels = active_channels(c, n, bytes, opt.channels);
  if (splits_blocks(c)) {
    CollectiveSize s = channel_size(c, n, bytes, opt);
    s.transfers = sat_mul(s.transfers, static_cast<uint64_t>(channels));
    s.deps = sat_mul(s.deps, static_cast<uint64_t>(channels));
    return s;
  }
  CollectiveSize s;
  for (int ch = 0; ch < channels; ++ch) {
    const CollectiveSize one = channel_size(c, n, channel_share(bytes, channels, ch), opt);
    s.transfers = sat_add(s.transfers, one.transfers);
    s.deps = sat_add(s.deps, one.deps);
    s.bytes = sat_add(s.bytes, one.bytes);
  }
  return s;
}

double bus_factor(Collective c, int n) {
  const double dn = n;
  switch (c) {
    case Collective::kAllReduceRing:
    case Collective::kAllReduceTree:
      return 2 * (dn - 1) / dn;
    case Collective::kAllToAll:
    case Collective::kAllToAllPairwise:
    case Collective::kAllGather:
    case Collective::kReduceScatter:
      return (dn - 1) / dn;
    case Collective::kSendRecv:
      return 1.0;
  }
  return 1.0;
}

}  // namespace fabsim
