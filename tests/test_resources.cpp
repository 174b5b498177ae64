// The resource guard (issue 14; docs/SCENARIOS.md "Memory"): the estimate is sizeof x count of
// the structures a run allocates, and a run past the limit is refused naming the key that drives
// the estimate.
#include <gtest/gtest.h>
#include <signal.h>  // SIGINT

#include <atomic>
#include <chrono>
#include <cstring>  // memset
#include <memory>
#include <string>
#include <thread>

#include "core/scheduler.h"
#include "net/sampler.h"
#include "scenario/resources.h"
#include "scenario/runner.h"
#include "scenario/scenario.h"
#include "transport/flow.h"
#include "workload/collective.h"

namespace fabsim {
namespace {

const MemoryItem* item(const MemoryEstimate& e, const std::string& what) {
  for (const auto& m : e.items) {
    if (m.what == what) return &m;
  }
  return nullptr;
}

std::string refusal(const ScenarioConfig& c, uint64_t limit) {
  try {
    check_memory(c, estimate_command_memory(c, 1, false), limit);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "accepted";
}

TEST(Resources, FlowRecordsAreCountedBySizeof) {
  const auto c = load_scenario_text("[workload]\nkind = \"incast\"\nsenders = 15\n", "i.toml");
  const MemoryEstimate e = estimate_memory(c);
  const MemoryItem* f = item(e, "flow records");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->count, 15U);
  EXPECT_EQ(f->key, "workload.senders");
  // The flow table's record, its copy in the results, the planned spec and its start event.
  EXPECT_EQ(f->bytes, 15 * (2 * sizeof(FlowRecord) + sizeof(FlowSpec) + sizeof(Event)));
  uint64_t sum = 0;
  for (const auto& m : e.items) sum += m.bytes;
  EXPECT_EQ(e.total, sum);
  EXPECT_FALSE(e.network_exact);
}

TEST(Resources, SampleIntervalOfOnePicosecondIsRefused) {
  const auto c = load_scenario_text("[output]\nsample_interval = \"1ps\"\n", "s.toml");
  const MemoryEstimate est = estimate_memory(c);
  const MemoryItem* s = item(est, "time-series samples");
  ASSERT_NE(s, nullptr);
  // At least one uplink of a two-tier topology, from 0 to the stop time (1 s) every 1 ps.
  EXPECT_EQ(s->count, 1000000000001ULL);
  EXPECT_EQ(s->bytes, s->count * 2 * sizeof(PortSample));
  const auto e = refusal(c, uint64_t{8} << 30);
  EXPECT_NE(e.find("s.toml: key 'output.sample_interval'"), std::string::npos) << e;
  EXPECT_NE(e.find("--max-memory"), std::string::npos) << e;
  EXPECT_NE(e.find("8.0 GiB"), std::string::npos) << e;
}

TEST(Resources, CollectivesNameTheirDrivingKey) {
  const std::string tree = R"(
[workload]
kind = "jobs"
tree_chunk = 1
[[workload.jobs]]
placement = "block"
ranks = 32
[[workload.jobs.ops]]
type = "allreduce_tree"
bytes = "1GiB"
)";
  const auto t = load_scenario_text(tree, "t.toml");
  const MemoryEstimate et = estimate_memory(t);
  const MemoryItem* f = item(et, "flow records");
  ASSERT_NE(f, nullptr);
  CollectiveOptions one;
  one.tree_chunk = 1;
  EXPECT_EQ(f->count, collective_size(Collective::kAllReduceTree, 32, 1 << 30, one).transfers);
  EXPECT_EQ(f->key, "workload.tree_chunk");
  EXPECT_NE(refusal(t, uint64_t{8} << 30).find("key 'workload.tree_chunk'"), std::string::npos);
  // AllToAll over every host of a k = 32 fat tree: n^2 transfers, driven by the ranks.
  const std::string a2a = R"(
[topology]
kind = "fat_tree"
k = 32
[workload]
kind = "jobs"
[[workload.jobs]]
placement = "block"
ranks = 8192
iterations = 2
[[workload.jobs.ops]]
type = "alltoall"
bytes = "1GiB"
)";
  const auto a = load_scenario_text(a2a, "a.toml");
  const MemoryEstimate ea = estimate_memory(a);
  EXPECT_EQ(item(ea, "flow records")->count, 2ULL * 8192 * 8191);
  EXPECT_EQ(item(ea, "flow records")->key, "workload.jobs[0].ranks");
  EXPECT_EQ(item(ea, "collective plans")->count, 8192ULL * 8191);
  EXPECT_NE(refusal(a, uint64_t{1} << 30).find("key 'workload.jobs[0].ranks'"), std::string::npos);
  // Many iterations of a small job: the iterations drive it.
  const auto it = load_scenario_text(
      "[workload]\nkind = \"jobs\"\n[[workload.jobs]]\ngpus = [0, 1]\niterations = 1000000\n"
      "[[workload.jobs.ops]]\ntype = \"sendrecv\"\nbytes = 1\n",
      "it.toml");
  EXPECT_EQ(item(estimate_memory(it), "flow records")->key, "workload.jobs[0].iterations");
}

TEST(Resources, SweepsTakeTheLargestCaseTimesTheCasesAtOnce) {
  const std::string sweep = R"(
[workload]
kind = "jobs"
[[workload.jobs]]
placement = "block"
ranks = 8
[[workload.jobs.ops]]
type = "$collective"
bytes = "1MiB"
[sweep]
collectives = ["alltoall", "allreduce_ring"]
seeds = [1, 2, 3]
)";
  const auto c = load_scenario_text(sweep, "w.toml");
  const MemoryEstimate one = estimate_command_memory(c, 1, false);
  EXPECT_EQ(one.case_label, "allreduce_ring");  // 2 x 7 x 8 transfers against 8 x 7
  EXPECT_EQ(item(one, "flow records")->count, 112U);
  const MemoryEstimate four = estimate_command_memory(c, 4, false);
  EXPECT_EQ(four.total, 4 * one.total);
  EXPECT_EQ(item(four, "other cases running at once")->key, "--threads");
}

// Run counts the built network: switches, ports, links and the sampled ports exactly.
TEST(Resources, RunChecksAgainOnTheBuiltNetwork) {
  // 1001 samples per port: the loader counts at least 1 port, the built network has 16 uplinks.
  auto c = load_scenario_text(
      "[simulation]\nstop_time = \"1ms\"\n[output]\nsample_interval = \"1us\"\n", "n.toml");
  {
    const fabsim::Run run(c);
    EXPECT_GT(run.memory_estimate(), estimate_memory(c).total);  // 16 uplinks, not 1
  }
  c.memory_limit = 1 << 20;  // passes the loader's lower bound, not the count on the network
  ASSERT_LT(estimate_memory(c).total, c.memory_limit);
  try {
    const fabsim::Run run(c);
    ADD_FAILURE() << "a run past its memory limit was built";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("key 'output.sample_interval'"), std::string::npos)
        << e.what();
  }
}

// The reading is the heap, not the binary's pages: 64 MiB allocated and touched raise it by
// about 64 MiB. (Not checked: that freeing brings it back; ASan's quarantine keeps freed
// blocks.)
TEST(MemoryWatch, ResidentAnonymousMemoryFollowsTheHeap) {
  const uint64_t before = resident_anonymous_bytes();
  ASSERT_GT(before, 0U);  // /proc is there on Linux
  constexpr size_t kBytes = 64 << 20;
  auto block = std::make_unique<char[]>(kBytes);
  std::memset(block.get(), 1, kBytes);  // resident only once written
  const uint64_t during = resident_anonymous_bytes();
  EXPECT_GE(during, before + kBytes - (4 << 20));
  EXPECT_EQ(block[kBytes - 1], 1);
}

// Waits up to 5 s for `done`.
template <typename F> bool within_5s(F done) {
  for (int i = 0; i < 500; ++i) {
    if (done()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return done();
}

TEST(MemoryWatch, PastTheLimitItStopsTheRunsWithItsOwnReason) {
  std::atomic<int> flag{0};
  const MemoryWatch watch(flag, 1, std::chrono::milliseconds(1));  // any heap is past 1 B
  ASSERT_TRUE(within_5s([&] { return watch.tripped(); }));
  EXPECT_EQ(flag.load(), kStopMemory);
  EXPECT_GT(watch.reading(), 1U);
  EXPECT_EQ(watch.limit(), 1U);
}

TEST(MemoryWatch, UnderTheLimitItLeavesTheRunsAlone) {
  std::atomic<int> flag{0};
  const MemoryWatch watch(flag, uint64_t{1} << 50, std::chrono::milliseconds(1));  // 1 PiB
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(watch.tripped());
  EXPECT_EQ(flag.load(), 0);
  EXPECT_EQ(watch.reading(), 0U);
}

TEST(MemoryWatch, NoLimitMeansNoWatch) {
  std::atomic<int> flag{0};
  const MemoryWatch watch(flag, 0, std::chrono::milliseconds(1));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(watch.tripped());
  EXPECT_EQ(flag.load(), 0);
}

// A signal that came first keeps its reason (and its exit code).
TEST(MemoryWatch, ASignalThatCameFirstKeepsItsReason) {
  std::atomic<int> flag{SIGINT};
  {
    const MemoryWatch watch(flag, 1, std::chrono::milliseconds(1));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_FALSE(watch.tripped());
  }
  EXPECT_EQ(flag.load(), SIGINT);
}

// The watch sleeps a period between readings; ending it does not wait that period out.
TEST(MemoryWatch, EndsAtOnceDuringItsSleep) {
  std::atomic<int> flag{0};
  const auto t0 = std::chrono::steady_clock::now();
  {
    const MemoryWatch watch(flag, uint64_t{1} << 50, std::chrono::hours(1));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));  // asleep by now
  }
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(30));
  EXPECT_EQ(flag.load(), 0);
}

// A run the watch stops ends between two events with its results partial, as on a signal.
TEST(MemoryWatch, ARunItStopsIsMarkedWithTheFlagsValue) {
  auto c =
      load_scenario_text("[topology]\nkind = \"leaf_spine\"\nservers = 64\ngpus_per_server = 1\n"
                         "servers_per_leaf = 8\nspines = 8\n[workload]\nkind = \"permutation\"\n"
                         "bytes = \"64MiB\"\n",
                         "w.toml");
  std::atomic<int> flag{0};
  fabsim::Run run(c);
  run.stop_on(&flag);
  const MemoryWatch watch(flag, 1, std::chrono::milliseconds(1));
  ASSERT_TRUE(within_5s([&] { return watch.tripped(); }));
  const RunResult r = run.execute();
  EXPECT_EQ(run.interrupted(), kStopMemory);
  EXPECT_FALSE(r.all_done);
  EXPECT_TRUE(r.conserved());
}

}  // namespace
}  // namespace fabsim
