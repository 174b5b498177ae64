// Collectives expanded into transfers with dependencies (DESIGN.md "Workloads"; REFERENCE.md §6).
// A transfer is one flow from one rank to another; it may start once every transfer it depends
// on has been delivered (plus the job's per-step software latency). Ranks are indices into the
// job's GPU list, and ring order is that list's order.
//  - ring AllReduce: reduce-scatter then all-gather, 2(n-1) steps of S/n per rank; rank r's step
//    s sends what it received at step s-1 (from r-1) on to r+1.
//  - double-binary-tree AllReduce: two complementary binary trees, each reducing then
//    broadcasting half of S in pipelined chunks (NCCL 2.4 design).
//  - AllToAll: every rank sends S/n to every other rank, all at once (as NCCL issues it), or in
//    n-1 pairwise rounds (round k: r -> r+k), each round after the rank's previous send and
//    receive.
//  - AllGather, ReduceScatter: ring, n-1 steps of S/n (S is the total array, nccl-tests).
//  - SendRecv: one transfer of S bytes.
// Channels (NCCL, REFERENCE.md §8.8): with `channels` > 1 the collective runs as that many
// independent rings (trees, AllToAlls), channel c on its contiguous share of S (NCCL's
// continuous byte distribution; here in bytes: the first S mod channels channels carry one byte
// more). AllToAll and SendRecv split each peer's block the same way. Each channel's transfers are
// tagged with it, and the transports give every channel its own connection (own source port,
// own ECMP path). A channel that would carry nothing is not opened.
#pragma once

#include <cstdint>  // sizes
#include <string>   // names
#include <vector>   // transfers

#include "core/units.h"  // NIC rate of the default channel count

namespace fabsim {

enum class Collective : uint8_t {
  kAllReduceRing,
  kAllReduceTree,
  kAllToAll,
  kAllToAllPairwise,
  kAllGather,
  kReduceScatter,
  kSendRecv,
};

/// Names used in scenarios: allreduce_ring, allreduce_tree, alltoall, alltoall_pairwise,
/// allgather, reducescatter, sendrecv. `allreduce` is accepted for allreduce_ring.
const char* collective_name(Collective c);
bool parse_collective(const std::string& name, Collective* out);

struct Transfer {
  uint32_t src = 0;  // rank
  uint32_t dst = 0;  // rank
  int64_t bytes = 0;
  int32_t step = 0;            // ring step, pairwise round or tree chunk (within its channel)
  int32_t channel = 0;         // NCCL channel: its own ring or tree, and its own connections
  std::vector<uint32_t> deps;  // transfers (indices in the plan) that must be delivered first
};

struct CollectiveOptions {
  int64_t tree_chunk = 1 << 20;  // bytes per pipelined tree chunk
  uint32_t send_rank = 0;        // SendRecv source rank
  uint32_t recv_rank = 1;        // SendRecv destination rank
  int channels = 1;              // NCCL channels (REFERENCE.md §8.8), 1 to kMaxChannels
};

/// NCCL's MAXCHANNELS (REFERENCE.md §8.8: src/include/device.h).
inline constexpr int kMaxChannels = 64;

/// Channels a collective runs on when `asked` are configured: at most one per byte of S (of the
/// smallest per-peer block, S/n, for AllToAll), so no channel carries nothing; always >= 1.
int active_channels(Collective c, int n, int64_t bytes, int asked);

/// Channel `ch`'s share of `bytes` over `channels` channels: bytes / channels, one more for the
/// first bytes mod channels (contiguous pieces, NCCL's continuous byte distribution).
int64_t channel_share(int64_t bytes, int channels, int ch);

/// NCCL's channel count towards a network peer (REFERENCE.md §8.8, src/graph/paths.cc):
/// max(#NICs, ceil(NIC bandwidth / 14 GB/s)) with one NIC per rank, rounded up to a power of two
/// and capped at kMaxChannels: 1 at 100 Gb/s, 2 at 200 Gb/s, 4 at 400 Gb/s, 8 at 800 Gb/s.
int nccl_net_channels(Rate nic);

/// Expands a collective over `n` >= 2 ranks on `bytes` (nccl-tests' S) into transfers, channel
/// by channel (channel 0's transfers first); with one channel, the single ring or tree.
std::vector<Transfer> expand_collective(Collective c, int n, int64_t bytes,
                                        const CollectiveOptions& opt = {});

/// What expand_collective() returns, counted without building it (the resource guard, issue 14):
/// transfers, dependency entries and the bytes all transfers carry. Saturates at UINT64_MAX.
struct CollectiveSize {
  uint64_t transfers = 0;
  uint64_t deps = 0;
  uint64_t bytes = 0;
};
CollectiveSize collective_size(Collective c, int n, int64_t bytes,
                               const CollectiveOptions& opt = {});

/// nccl-tests bus-bandwidth factor: busbw = algbw x factor (REFERENCE.md §6.4).
double bus_factor(Collective c, int n);

/// Parent of each position in the NCCL-style in-order binary tree over n positions (root 0,
/// parent -1); the second tree of a double binary tree maps position p to rank (p + 1) mod n
/// for odd n and n - 1 - p for even n (NCCL's ncclGetDtree), so every rank is interior in at
/// most one of the two trees.
std::vector<int> btree_parents(int n);
int tree_rank(int tree, int position, int n);

}  // namespace fabsim
