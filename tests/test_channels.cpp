// NCCL-like channels (issue 19 item 3; REFERENCE.md §8.8): a collective runs as `channels`
// independent rings or trees, each on a contiguous share of S and over its own connections.
// Checked here: the byte split to the byte, the expansion's counts against collective_size, the
// default count from the NIC rate, one rank pair's packets spread over both spines of a leaf-spine
// with 4 channels (and on one with 1), a connection (source port, PDC) per channel in RoCE and
// UET, channels = 1 identical to the default at 100G, and the ledger balanced throughout.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "conserved.h"
#include "helpers.h"
#include "scenario/runner.h"
#include "scenario/scenario.h"
#include "workload/collective.h"

namespace fabsim {
namespace {
using namespace literals;

// ---- the expansion -----------------------------------------------------------------------------

// Channel c carries bytes / C, one more for the first bytes mod C; the shares add up to S.
TEST(Channels, TheByteSplitIsContiguousAndExact) {
  const int64_t s = (int64_t{4} << 20) + 3;
  int64_t sum = 0;
  for (int c = 0; c < 4; ++c) {
    EXPECT_EQ(channel_share(s, 4, c), (int64_t{1} << 20) + (c < 3 ? 1 : 0)) << "channel " << c;
    sum += channel_share(s, 4, c);
  }
  EXPECT_EQ(sum, s);
  // A ring AllReduce of 4 ranks on 4 channels: each channel's first step sends its share in 4
  // chunks, and every step of every channel moves 1/n of that channel's share.
  CollectiveOptions opt;
  opt.channels = 4;
  const auto t = expand_collective(Collective::kAllReduceRing, 4, s, opt);
  ASSERT_EQ(t.size(), 4U * 2 * 3 * 4);
  std::map<int, int64_t> first_step;
  std::map<int, int64_t> moved;
  for (const auto& x : t) {
    if (x.step == 0) first_step[x.channel] += x.bytes;
    moved[x.channel] += x.bytes;
  }
  for (int c = 0; c < 4; ++c) {
    EXPECT_EQ(first_step[c], channel_share(s, 4, c)) << "channel " << c;
    EXPECT_EQ(moved[c], 2 * 3 * channel_share(s, 4, c)) << "channel " << c;
  }
  // Channels run independently: a transfer depends only on transfers of its own channel, and
  // channel c's transfers are the one-channel expansion on its share, shifted.
  for (const auto& x : t) {
    for (uint32_t d : x.deps) EXPECT_EQ(t[d].channel, x.channel);
  }
  const auto one = expand_collective(Collective::kAllReduceRing, 4, channel_share(s, 4, 1));
  for (size_t i = 0; i < one.size(); ++i) {
    const Transfer& x = t[one.size() + i];
    EXPECT_EQ(x.channel, 1);
    EXPECT_EQ(x.src, one[i].src);
    EXPECT_EQ(x.dst, one[i].dst);
    EXPECT_EQ(x.bytes, one[i].bytes);
    EXPECT_EQ(x.step, one[i].step);
    ASSERT_EQ(x.deps.size(), one[i].deps.size());
    for (size_t k = 0; k < x.deps.size(); ++k) EXPECT_EQ(x.deps[k], one[i].deps[k] + one.size());
  }
}

// AllToAll splits every peer's block over the channels: each rank pair moves exactly the bytes
// it moves with one channel.
TEST(Channels, AllToAllSplitsEachBlockAndKeepsEveryPairsBytes) {
  for (const Collective c : {Collective::kAllToAll, Collective::kAllToAllPairwise}) {
    const int64_t s = 5 * 1000 + 7;
    CollectiveOptions opt;
    opt.channels = 3;
    std::map<std::pair<uint32_t, uint32_t>, int64_t> one;
    std::map<std::pair<uint32_t, uint32_t>, int64_t> three;
    for (const auto& x : expand_collective(c, 5, s)) one[{x.src, x.dst}] += x.bytes;
    std::set<int> channels;
    for (const auto& x : expand_collective(c, 5, s, opt)) {
      three[{x.src, x.dst}] += x.bytes;
      channels.insert(x.channel);
    }
    EXPECT_EQ(one, three) << collective_name(c);
    EXPECT_EQ(channels, (std::set<int>{0, 1, 2})) << collective_name(c);
  }
}

// A channel with nothing to carry is not opened; one channel is the expansion it always was.
TEST(Channels, NoEmptyChannelAndOneChannelIsTheOldExpansion) {
  EXPECT_EQ(active_channels(Collective::kAllReduceRing, 4, 3, 8), 3);
  EXPECT_EQ(active_channels(Collective::kAllReduceRing, 4, 0, 8), 1);
  EXPECT_EQ(active_channels(Collective::kAllToAll, 4, 10, 8), 2);  // blocks of 2 or 3 bytes
  EXPECT_EQ(active_channels(Collective::kSendRecv, 2, 1 << 20, 64), 64);
  CollectiveOptions one;
  one.channels = 1;
  for (const Collective c : {Collective::kAllReduceRing, Collective::kAllReduceTree,
                             Collective::kAllToAll, Collective::kSendRecv}) {
    const auto a = expand_collective(c, 6, 1000003);
    const auto b = expand_collective(c, 6, 1000003, one);
    ASSERT_EQ(a.size(), b.size());
    for (size_t i = 0; i < a.size(); ++i) {
      EXPECT_EQ(a[i].bytes, b[i].bytes);
      EXPECT_EQ(a[i].deps, b[i].deps);
      EXPECT_EQ(b[i].channel, 0);
    }
  }
}

// The resource guard's counts match the expansion with channels too.
TEST(Channels, SizeCountsWhatTheExpansionBuilds) {
  const Collective all[] = {Collective::kAllReduceRing, Collective::kAllReduceTree,
                            Collective::kAllToAll,      Collective::kAllToAllPairwise,
                            Collective::kAllGather,     Collective::kReduceScatter,
                            Collective::kSendRecv};
  for (const Collective c : all) {
    for (const int n : {2, 3, 5, 8}) {
      for (const int64_t bytes : {int64_t{1}, int64_t{7}, int64_t{1000}, int64_t{3000001}}) {
        for (const int channels : {2, 3, 4, 8, 64}) {
          CollectiveOptions opt;
          opt.tree_chunk = 65536;
          opt.channels = channels;
          const auto t = expand_collective(c, n, bytes, opt);
          const CollectiveSize s = collective_size(c, n, bytes, opt);
          uint64_t deps = 0;
          uint64_t moved = 0;
          for (const auto& x : t) {
            deps += x.deps.size();
            moved += static_cast<uint64_t>(x.bytes);
          }
          const std::string what =
              fmt::format("{} n={} S={} channels={}", collective_name(c), n, bytes, channels);
          EXPECT_EQ(s.transfers, t.size()) << what;
          EXPECT_EQ(s.deps, deps) << what;
          EXPECT_EQ(s.bytes, moved) << what;
          // The channels move what one channel moves.
          EXPECT_EQ(moved, collective_size(c, n, bytes, CollectiveOptions{65536}).bytes) << what;
        }
      }
    }
  }
}

// NCCL's count towards a network peer: max(1 NIC, ceil(NIC / 14 GB/s)), a power of two.
TEST(Channels, TheDefaultCountFollowsTheNicRate) {
  EXPECT_EQ(nccl_net_channels(Rate::gbps(25)), 1);
  EXPECT_EQ(nccl_net_channels(Rate::gbps(100)), 1);
  EXPECT_EQ(nccl_net_channels(Rate::gbps(112)), 1);  // exactly 14 GB/s
  EXPECT_EQ(nccl_net_channels(Rate::gbps(113)), 2);
  EXPECT_EQ(nccl_net_channels(Rate::gbps(200)), 2);
  EXPECT_EQ(nccl_net_channels(Rate::gbps(400)), 4);  // 3.6 rounded up to a power of two
  EXPECT_EQ(nccl_net_channels(Rate::gbps(800)), 8);
  EXPECT_EQ(nccl_net_channels(Rate::gbps(100000)), kMaxChannels);
}

// ---- on a fabric -------------------------------------------------------------------------------

// Records the UDP source port of every data packet a NIC sends, by flow.
class SportTap : public NicExtension {
 public:
  void on_send(Packet& p) override {
    if (p.type == PacketType::kData) sports[p.flow].insert(p.sport);
  }
  bool on_receive(Packet& /*p*/) override { return true; }
  std::map<uint32_t, std::set<uint16_t>> sports;
};

// A ring AllReduce of 4 ranks, one per leaf, on a leaf-spine of 2 spines (100G everywhere,
// PFC and DCQCN on): leaf k's uplinks carry only rank k's sends to rank k + 1.
std::string ring_on_two_spines(const std::string& transport, const std::string& workload) {
  return fmt::format(R"(
[topology]
kind = "leaf_spine"
servers = 4
gpus_per_server = 1
servers_per_leaf = 1
spines = 2
nic_rate = "100Gbps"
uplink_rate = "100Gbps"
host_link_delay = "1us"
fabric_link_delay = "1us"
[transport]
{}
[workload]
kind = "jobs"
{}
[[workload.jobs]]
name = "ring"
gpus = [0, 1, 2, 3]
[[workload.jobs.ops]]
type = "allreduce_ring"
bytes = "4MiB"
)",
                     transport, workload);
}

struct RingRun {
  RunResult r;
  std::vector<uint64_t> uplinks;             // data frames per uplink of rank 0's leaf
  std::map<int, std::set<uint16_t>> sports;  // rank 0's source ports by channel
  uint64_t rank0_sent = 0;                   // data packets of rank 0's flows
};

RingRun run_ring(const std::string& transport, const std::string& workload, uint64_t seed = 1) {
  ScenarioConfig cfg = load_scenario_text(ring_on_two_spines(transport, workload), "channels.toml");
  cfg.seed = seed;
  fabsim::Run run(cfg);
  auto tap = std::make_unique<SportTap>();
  SportTap* seen = tap.get();
  run.network().host(0).set_extension(std::move(tap));
  RingRun out;
  out.r = execute_checked(run);
  const uint32_t leaf = run.topology().tors[0];
  const Switch& sw = run.network().sw(leaf);
  for (uint16_t p : run.topology().uplink_ports(leaf))
    out.uplinks.push_back(sw.port(p).counters().tx_data_packets);
  for (const auto& [flow, ports] : seen->sports) {
    const FlowSpec& spec = out.r.flows[flow].spec;
    EXPECT_EQ(spec.src_rank, 0);
    out.sports[spec.channel].insert(ports.begin(), ports.end());
  }
  for (const auto& f : out.r.flows) {
    if (f.spec.src_rank == 0) out.rank0_sent += f.packets_sent;
  }
  return out;
}

// The issue's test: with 4 channels, one rank pair's packets (rank 0 -> rank 1) leave its leaf
// on both spines; with 1 channel they take one. Each channel is one connection with its own
// source port, so its packets stay on one path.
TEST(Channels, FourChannelsSpreadOneRankPairOverBothSpines) {
  const RingRun one = run_ring("kind = \"roce\"", "channels = 1");
  const RingRun four = run_ring("kind = \"roce\"", "channels = 4");
  ASSERT_TRUE(one.r.all_done);
  ASSERT_TRUE(four.r.all_done);
  ASSERT_EQ(one.uplinks.size(), 2U);
  ASSERT_EQ(four.uplinks.size(), 2U);
  // Every data frame on the leaf's uplinks is one of rank 0's (lossless: sent once each).
  EXPECT_EQ(one.uplinks[0] + one.uplinks[1], one.rank0_sent);
  EXPECT_EQ(four.uplinks[0] + four.uplinks[1], four.rank0_sent);
  EXPECT_EQ(one.uplinks[0] == 0 || one.uplinks[1] == 0, true) << "one channel, one path";
  EXPECT_GT(four.uplinks[0], 0U) << "spine 0 unused with 4 channels";
  EXPECT_GT(four.uplinks[1], 0U) << "spine 1 unused with 4 channels";
  std::printf("[ figures ] rank 0 -> 1 data frames per uplink: 1 channel %llu / %llu, 4 channels "
              "%llu / %llu\n",
              static_cast<unsigned long long>(one.uplinks[0]),
              static_cast<unsigned long long>(one.uplinks[1]),
              static_cast<unsigned long long>(four.uplinks[0]),
              static_cast<unsigned long long>(four.uplinks[1]));
  // One source port per channel, a different one for each channel.
  ASSERT_EQ(one.sports.size(), 1U);
  EXPECT_EQ(one.sports.at(0).size(), 1U);
  ASSERT_EQ(four.sports.size(), 4U);
  std::set<uint16_t> distinct;
  for (const auto& [ch, ports] : four.sports) {
    EXPECT_EQ(ports.size(), 1U) << "channel " << ch;
    distinct.insert(ports.begin(), ports.end());
  }
  EXPECT_EQ(distinct.size(), 4U);
  // The flows carry exactly each channel's share: 2(n-1) steps of a quarter of 4 MiB each.
  std::map<int, int64_t> bytes;
  for (const auto& f : four.r.flows) bytes[f.spec.channel] += f.spec.bytes;
  for (int c = 0; c < 4; ++c) EXPECT_EQ(bytes[c], 4 * 6 * (int64_t{1} << 20) / 4) << c;
}

// QPs per connection multiply with channels: 4 channels x 2 QPs = 8 source ports for one pair.
TEST(Channels, QpsPerConnectionMultiplyWithChannels) {
  const RingRun run = run_ring("kind = \"roce\"\nqps_per_connection = 2", "channels = 4");
  ASSERT_TRUE(run.r.all_done);
  std::set<uint16_t> distinct;
  for (const auto& [ch, ports] : run.sports) {
    EXPECT_EQ(ports.size(), 2U) << "channel " << ch;
    distinct.insert(ports.begin(), ports.end());
  }
  EXPECT_EQ(distinct.size(), 8U);
}

// channels = 1 is what a 100G run did before channels existed (the default there): the same
// flows to the picosecond, and a ring over 3 seeds the same job completion times.
TEST(Channels, OneChannelIsTheDefaultAt100GAndChangesNothing) {
  for (uint64_t seed : {1, 2, 3}) {
    const RingRun def = run_ring("kind = \"roce\"", "", seed);
    const RingRun one = run_ring("kind = \"roce\"", "channels = 1", seed);
    ASSERT_EQ(def.r.flows.size(), one.r.flows.size());
    ASSERT_EQ(def.r.flows.size(), 24U);
    for (size_t i = 0; i < def.r.flows.size(); ++i) {
      EXPECT_EQ(def.r.flows[i].spec.channel, 0);
      EXPECT_EQ(def.r.flows[i].first_send, one.r.flows[i].first_send);
      EXPECT_EQ(def.r.flows[i].end, one.r.flows[i].end);
      EXPECT_EQ(def.r.flows[i].packets_sent, one.r.flows[i].packets_sent);
    }
    EXPECT_EQ(def.r.jobs[0].jct(), one.r.jobs[0].jct());
    EXPECT_EQ(def.r.events, one.r.events);
  }
}

// At 200G the default is NCCL's 2 channels; a job's own key overrides workload.channels.
TEST(Channels, DefaultFromTheNicRateAndPerJobOverride) {
  std::string text = ring_on_two_spines("kind = \"roce\"", "");
  const std::string at200 = "nic_rate = \"200Gbps\"\nuplink_rate = \"200Gbps\"";
  text.replace(text.find("nic_rate = \"100Gbps\"\nuplink_rate = \"100Gbps\""), 44, at200);
  const RunResult r = run_checked(load_scenario_text(text, "auto.toml"));
  std::set<int> channels;
  for (const auto& f : r.flows) channels.insert(f.spec.channel);
  EXPECT_EQ(channels, (std::set<int>{0, 1}));

  const std::string two_jobs = R"(
[topology]
kind = "single_switch"
hosts = 4
[transport]
kind = "roce"
[workload]
kind = "jobs"
channels = 3
[[workload.jobs]]
name = "a"
gpus = [0, 1]
[[workload.jobs.ops]]
type = "sendrecv"
bytes = "1MiB"
[[workload.jobs]]
name = "b"
gpus = [2, 3]
channels = 1
[[workload.jobs.ops]]
type = "sendrecv"
bytes = "1MiB"
)";
  const RunResult j = run_checked(load_scenario_text(two_jobs, "jobs.toml"));
  std::map<int, std::set<int>> by_job;
  for (const auto& f : j.flows) by_job[f.spec.job].insert(f.spec.channel);
  EXPECT_EQ(by_job[0], (std::set<int>{0, 1, 2}));
  EXPECT_EQ(by_job[1], (std::set<int>{0}));
}

// UET opens one PDC per channel of a host pair; GSE (over RoCE NICs) and RLTP run channels with
// a balanced ledger.
TEST(Channels, UetOpensAPdcPerChannelAndEveryTransportBalances) {
  const std::string jobs = R"(
[workload]
kind = "jobs"
channels = 4
[[workload.jobs]]
name = "pair"
gpus = [0, 16]
[[workload.jobs.ops]]
type = "sendrecv"
bytes = "1MiB"
)";
  const RunResult uet = run_checked(load_scenario_text(test::uet_fabric(32, 2, jobs), "u.toml"));
  ASSERT_TRUE(uet.all_done);
  uint64_t pdcs = 0;
  for (const auto& [k, v] : uet.transport_counters) {
    if (k == "pdcs") pdcs = v;
  }
  EXPECT_EQ(pdcs, 4U);
  const RingRun rltp = run_ring("kind = \"rltp\"", "channels = 4");
  EXPECT_TRUE(rltp.r.all_done);
  EXPECT_EQ(rltp.sports.size(), 4U);
  ScenarioConfig gse =
      load_scenario(std::string(FABSIM_SOURCE_DIR) + "/scenarios/seed002-gse-2to1.toml",
                    {"workload.channels=4", "sweep.sizes=[\"1MiB\"]",
                     "sweep.collectives=[\"allreduce_ring\"]", "sweep.seeds=[1]"});
  const auto cases = run_sweep_checked(gse, 1, true, nullptr);
  ASSERT_EQ(cases.size(), 1U);
  EXPECT_TRUE(cases[0].all_done);
}

// A count above NCCL's MAXCHANNELS is refused, naming the key.
TEST(Channels, TooManyChannelsIsAConfigError) {
  try {
    load_scenario_text(ring_on_two_spines("kind = \"roce\"", "channels = 65"), "bad.toml");
    FAIL() << "channels = 65 accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("workload.channels"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace fabsim
