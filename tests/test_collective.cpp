// Collective expansion: transfer counts, bytes per rank, dependencies, tree shapes, bus factors.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "workload/collective.h"

namespace fabsim {
namespace {

std::map<uint32_t, int64_t> sent_per_rank(const std::vector<Transfer>& t) {
  std::map<uint32_t, int64_t> out;
  for (const auto& x : t) out[x.src] += x.bytes;
  return out;
}

TEST(Collective, RingAllReduceStepsBytesAndDependencies) {
  constexpr int n = 4;
  constexpr int64_t S = 4 * 1000003;  // not a multiple of n x MTU
  const auto t = expand_collective(Collective::kAllReduceRing, n, S);
  ASSERT_EQ(t.size(), static_cast<size_t>(2 * (n - 1) * n));
  for (const auto& [rank, bytes] : sent_per_rank(t)) {
    EXPECT_NEAR(static_cast<double>(bytes), 2.0 * (n - 1) * S / n, 2 * (n - 1)) << rank;
  }
  for (size_t i = 0; i < t.size(); ++i) {
    const auto& x = t[i];
    EXPECT_EQ(x.dst, (x.src + 1) % n);
    EXPECT_EQ(x.step, static_cast<int>(i / n));
    if (x.step == 0) {
      EXPECT_TRUE(x.deps.empty());
    } else {
      ASSERT_EQ(x.deps.size(), 1U);
      const auto& dep = t[x.deps[0]];
      EXPECT_EQ(dep.step, x.step - 1);  // what it forwards arrived at the previous step
      EXPECT_EQ(dep.dst, x.src);
    }
  }
}

TEST(Collective, RingChunksFollowReduceScatterThenAllGather) {
  constexpr int n = 3;
  const auto t = expand_collective(Collective::kAllReduceRing, n, 3 * 100 + 2);
  // Chunk sizes 101, 101, 100: rank r sends chunk (r - s) mod n in reduce-scatter and, in
  // all-gather, the reduced chunk (r + 1 - s') mod n it owns.
  auto size_of = [](int c) { return c < 2 ? 101 : 100; };
  for (const auto& x : t) {
    const int s = x.step;
    const int r = static_cast<int>(x.src);
    const int chunk = s < n - 1 ? ((r - s) % n + n) % n : ((r + 1 - (s - (n - 1))) % n + n) % n;
    EXPECT_EQ(x.bytes, size_of(chunk)) << "rank " << r << " step " << s;
  }
}

TEST(Collective, AllGatherAndReduceScatterAreOneRing) {
  for (auto c : {Collective::kAllGather, Collective::kReduceScatter}) {
    const auto t = expand_collective(c, 8, 8 << 20);
    EXPECT_EQ(t.size(), 7U * 8U);
    for (const auto& [rank, bytes] : sent_per_rank(t)) EXPECT_EQ(bytes, 7 * (1 << 20)) << rank;
  }
}

TEST(Collective, AllToAllAllAtOnceAndPairwise) {
  constexpr int n = 5;
  const auto all = expand_collective(Collective::kAllToAll, n, 5 * 1000);
  ASSERT_EQ(all.size(), static_cast<size_t>(n * (n - 1)));
  std::set<std::pair<uint32_t, uint32_t>> pairs;
  for (const auto& x : all) {
    EXPECT_TRUE(x.deps.empty());
    EXPECT_NE(x.src, x.dst);
    EXPECT_EQ(x.bytes, 1000);
    pairs.insert({x.src, x.dst});
  }
  EXPECT_EQ(pairs.size(), all.size());
  const auto pw = expand_collective(Collective::kAllToAllPairwise, n, 5 * 1000);
  ASSERT_EQ(pw.size(), all.size());
  for (const auto& x : pw) {
    EXPECT_EQ(x.dst, (x.src + static_cast<uint32_t>(x.step) + 1) % n);
    if (x.step == 0) {
      EXPECT_TRUE(x.deps.empty());
    } else {
      ASSERT_EQ(x.deps.size(), 2U);
      EXPECT_EQ(pw[x.deps[0]].src, x.src);  // my previous send
      EXPECT_EQ(pw[x.deps[1]].dst, x.src);  // my previous receive
      EXPECT_EQ(pw[x.deps[0]].step, x.step - 1);
    }
  }
}

TEST(Collective, DoubleBinaryTreeShapes) {
  const auto parent = btree_parents(8);
  const std::vector<int> expected = {-1, 2, 4, 2, 0, 6, 4, 6};
  EXPECT_EQ(parent, expected);
  // The two trees are complementary: a rank's edges over both (its parent and children in
  // each) are at most 4, so it moves at most 2 S each way (S/2 per edge and tree); with n > 2
  // every rank but 0 (the first tree's root) is interior in one tree at most. Even n mirrors,
  // odd n shifts by one (NCCL's ncclGetDtree); the mirror for odd n gives rank 2 of n = 5 six
  // edges (3 S), interior in both trees.
  for (int n = 2; n <= 33; ++n) {
    const auto par = btree_parents(n);
    std::set<int> interior0;
    std::set<int> interior1;
    std::vector<int> edges(n, 0);
    for (int p = 1; p < n; ++p) {
      ASSERT_GE(par[p], 0);
      ASSERT_LT(par[p], n);
      interior0.insert(tree_rank(0, par[p], n));
      interior1.insert(tree_rank(1, par[p], n));
      for (int t = 0; t < 2; ++t) {
        ++edges[tree_rank(t, p, n)];
        ++edges[tree_rank(t, par[p], n)];
      }
    }
    for (int r = 0; r < n; ++r) EXPECT_LE(edges[r], 4) << "n " << n << " rank " << r;
    for (int r : interior0) {
      if (r != 0) {
        EXPECT_EQ(interior1.count(r), 0U) << "n " << n << " rank " << r;
      }
    }
    // Tree 1 is a permutation of the ranks.
    std::set<int> ranks;
    for (int p = 0; p < n; ++p) ranks.insert(tree_rank(1, p, n));
    EXPECT_EQ(ranks.size(), static_cast<size_t>(n));
  }
}

TEST(Collective, TreeAllReduceMovesEachHalfUpAndDown) {
  constexpr int n = 8;
  constexpr int64_t S = 8 << 20;
  CollectiveOptions o;
  o.tree_chunk = 1 << 20;
  const auto t = expand_collective(Collective::kAllReduceTree, n, S, o);
  // Two trees x 4 chunks x (7 up + 7 down).
  ASSERT_EQ(t.size(), 2U * 4U * 14U);
  int64_t total = 0;
  for (size_t i = 0; i < t.size(); ++i) {
    total += t[i].bytes;
    for (uint32_t d : t[i].deps) EXPECT_LT(d, i);  // dependencies come first: a valid order
  }
  EXPECT_EQ(total, 2 * (n - 1) * S);  // each half crosses n - 1 edges twice
}

TEST(Collective, BusFactorsAreNcclTests) {
  EXPECT_DOUBLE_EQ(bus_factor(Collective::kAllReduceRing, 4), 1.5);
  EXPECT_DOUBLE_EQ(bus_factor(Collective::kAllReduceTree, 8), 1.75);
  EXPECT_DOUBLE_EQ(bus_factor(Collective::kAllToAll, 4), 0.75);
  EXPECT_DOUBLE_EQ(bus_factor(Collective::kAllGather, 8), 0.875);
  EXPECT_DOUBLE_EQ(bus_factor(Collective::kReduceScatter, 2), 0.5);
  EXPECT_DOUBLE_EQ(bus_factor(Collective::kSendRecv, 2), 1.0);
}

// The resource guard counts transfers without expanding them: the counts match the expansion.
TEST(Collective, SizeCountsWhatTheExpansionBuilds) {
  const Collective all[] = {Collective::kAllReduceRing, Collective::kAllReduceTree,
                            Collective::kAllToAll,      Collective::kAllToAllPairwise,
                            Collective::kAllGather,     Collective::kReduceScatter,
                            Collective::kSendRecv};
  for (const Collective c : all) {
    for (const int n : {2, 3, 4, 5, 7, 8, 16, 33}) {
      for (const int64_t bytes : {int64_t{1}, int64_t{1000}, int64_t{1} << 20, int64_t{3000001}}) {
        CollectiveOptions opt;
        opt.tree_chunk = 65536;
        const auto t = expand_collective(c, n, bytes, opt);
        const CollectiveSize s = collective_size(c, n, bytes, opt);
        uint64_t deps = 0;
        uint64_t moved = 0;
        for (const auto& x : t) {
          deps += x.deps.size();
          moved += static_cast<uint64_t>(x.bytes);
        }
        EXPECT_EQ(s.transfers, t.size()) << collective_name(c) << " n=" << n << " S=" << bytes;
        EXPECT_EQ(s.deps, deps) << collective_name(c) << " n=" << n << " S=" << bytes;
        // Ring steps and AllToAll send parts of S/n: the sum is exactly (steps) x S.
        EXPECT_EQ(s.bytes, moved) << collective_name(c) << " n=" << n << " S=" << bytes;
      }
    }
  }
  // A tree chunk of 1 byte on 1 GiB: counted, not built (about 4e9 transfers), and saturating.
  CollectiveOptions tiny;
  tiny.tree_chunk = 1;
  EXPECT_EQ(collective_size(Collective::kAllReduceTree, 32, int64_t{1} << 30, tiny).transfers,
            (uint64_t{1} << 30) * 62);
  EXPECT_EQ(collective_size(Collective::kAllReduceTree, 1 << 30, INT64_MAX, tiny).transfers,
            UINT64_MAX);
}

TEST(Collective, NamesRoundTrip) {
  for (auto c : {Collective::kAllReduceRing, Collective::kAllReduceTree, Collective::kAllToAll,
                 Collective::kAllToAllPairwise, Collective::kAllGather, Collective::kReduceScatter,
                 Collective::kSendRecv}) {
    Collective back{};
    ASSERT_TRUE(parse_collective(collective_name(c), &back));
    EXPECT_EQ(back, c);
  }
  Collective a{};
  EXPECT_TRUE(parse_collective("allreduce", &a));
  EXPECT_EQ(a, Collective::kAllReduceRing);
  EXPECT_FALSE(parse_collective("allscatter", &a));
}

}  // namespace
}  // namespace fabsim
