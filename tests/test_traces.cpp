// Trace workloads (issue 19 item 4; REFERENCE.md §8.5, §8.6): the shipped SimAI/AICB file and
// Chakra trace become exactly the task graphs their formats' semantics give (every node's kind,
// rank or group, bytes, duration and dependencies), bad input is refused naming the file, the
// line or node and what was expected, and both example scenarios run with a balanced ledger.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <filesystem>  // temporary trace files
#include <fstream>     // writing them
#include <map>         // expected groups
#include <set>         // communicators
#include <string>      // dumps
#include <vector>      // nodes

#include "conserved.h"
#include "scenario/runner.h"
#include "scenario/scenario.h"
#include "workload/trace/chakra.h"
#include "workload/trace/simai.h"

namespace fabsim {
namespace {

const std::string kRoot = FABSIM_SOURCE_DIR;
const std::string kSimaiExample = kRoot + "/examples/traces/simai-example.txt";
const std::string kChakraExample = kRoot + "/examples/traces/chakra-example";

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A fresh directory under the system's temporary one, removed with the object.
class TempDir {
 public:
  TempDir() {
    path_ = std::filesystem::temp_directory_path() /
            fmt::format("fabsim-traces-{}-{}",
                        ::testing::UnitTest::GetInstance()->current_test_info()->name(), count_++);
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string write(const std::string& name, const std::string& bytes) const {
    const std::string p = (path_ / name).string();
    std::ofstream(p, std::ios::binary) << bytes;
    return p;
  }
  std::string path() const { return path_.string(); }

 private:
  std::filesystem::path path_;
  static inline int count_ = 0;
};

// One line per node: kind, rank or group, bytes, duration, category and dependencies.
std::string dump(const TaskGraph& g) {
  std::string out;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const GraphNode& n = g.nodes[i];
    std::string what;
    switch (n.kind) {
      case GraphNode::Kind::kCompute:
        what = fmt::format("compute r{} {}", n.rank, to_string(n.duration));
        break;
      case GraphNode::Kind::kDelay:
        what = fmt::format("delay {}", to_string(n.duration));
        break;
      case GraphNode::Kind::kCollective:
        what = fmt::format("{} {{{}}} {} B", collective_name(n.collective), fmt::join(n.group, ","),
                           n.bytes);
        break;
    }
    out += fmt::format("{}: {} [{}] <- [{}]\n", i, what, g.categories[n.category],
                       fmt::join(n.deps, ","));
  }
  return out;
}

// A scenario of `hosts` hosts on one switch running a trace workload with `workload` keys.
std::string scenario(int hosts, const std::string& workload) {
  return fmt::format(R"(
name = "trace"
[simulation]
stop_time = "10s"
[topology]
kind = "single_switch"
hosts = {}
nic_rate = "100Gbps"
[transport]
kind = "roce"
[workload]
{}
)",
                     hosts, workload);
}

// --- SimAI / AICB -------------------------------------------------------------------------------

TEST(Traces, SimaiReadsTheShippedFile) {
  const SimaiParse p = parse_simai(read(kSimaiExample), "simai-example.txt");
  ASSERT_EQ(p.error, "");
  EXPECT_TRUE(p.warnings.empty());
  const SimaiWorkload& w = p.workload;
  EXPECT_EQ(w.policy, "HYBRID_TRANSFORMER_FWD_IN_BCKWD");
  EXPECT_TRUE(w.fwd_in_bckwd);
  EXPECT_EQ(w.tp, 2);
  EXPECT_EQ(w.ep, 2);
  EXPECT_EQ(w.dp(), 4);
  EXPECT_EQ(w.pp, 1);
  EXPECT_EQ(w.vpp, 4);
  EXPECT_EQ(w.ga, 1);
  EXPECT_EQ(w.pp_comm, 0);
  EXPECT_EQ(w.all_gpus, 8);
  ASSERT_EQ(w.layers.size(), 4U);
  const SimaiLayer& moe = w.layers[2];
  EXPECT_EQ(moe.name, "moe");
  EXPECT_EQ(moe.line, 5);
  EXPECT_EQ(moe.fwd_compute, Time::us(60));
  EXPECT_EQ(moe.fwd.type, SimaiComm::kAllToAll);
  EXPECT_EQ(moe.fwd.group, SimaiGroup::kEp);
  EXPECT_EQ(moe.fwd.bytes, 131072);
  EXPECT_EQ(moe.ig.group, SimaiGroup::kEp);
  EXPECT_EQ(moe.wg_compute, Time::us(50));
  EXPECT_EQ(moe.wg.type, SimaiComm::kAllReduce);
  EXPECT_EQ(moe.wg.group, SimaiGroup::kDpEp);
  EXPECT_EQ(moe.update, Time::ns(100));
  EXPECT_EQ(w.layers[0].fwd.bytes, 2048);  // raised when the graph is built, not when read
  EXPECT_EQ(w.layers[0].ig.type, SimaiComm::kNone);
  EXPECT_EQ(w.layers[0].wg.group, SimaiGroup::kDp);  // no suffix: weight gradients on DP
  EXPECT_EQ(w.layers[1].ig.group, SimaiGroup::kTp);  // no suffix: input gradients on TP
}

// SimAI's MockNcclGroup with TP 2, EP 2 over 8 ranks (r = tp + 2 dp): DP 4, DP_EP 2.
TEST(Traces, SimaiGroupsAreSimAIs) {
  SimaiWorkload w;
  w.tp = 2;
  w.ep = 2;
  w.all_gpus = 8;
  using G = std::vector<std::vector<uint32_t>>;
  EXPECT_EQ(simai_groups(w, SimaiGroup::kTp), (G{{0, 1}, {2, 3}, {4, 5}, {6, 7}}));
  EXPECT_EQ(simai_groups(w, SimaiGroup::kDp), (G{{0, 2, 4, 6}, {1, 3, 5, 7}}));
  EXPECT_EQ(simai_groups(w, SimaiGroup::kEp), (G{{0, 2}, {1, 3}, {4, 6}, {5, 7}}));
  EXPECT_EQ(simai_groups(w, SimaiGroup::kDpEp), (G{{0, 4}, {1, 5}, {2, 6}, {3, 7}}));
  w.ep = 4;  // DP_EP groups of one rank
  EXPECT_EQ(simai_groups(w, SimaiGroup::kEp), (G{{0, 2, 4, 6}, {1, 3, 5, 7}}));
  EXPECT_EQ(simai_groups(w, SimaiGroup::kDpEp), (G{{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}}));
}

// One step of SimAI's walk as every rank takes it: a compute phase on all ranks, or a collective
// over every group of a kind followed by its update delay; blocking or not.
struct Step {
  bool compute = true;
  Time duration;  // compute
  Collective collective = Collective::kAllReduceRing;
  const char* group = "";  // tp, dp, ep, dp_ep
  int64_t bytes = 0;
  bool blocking = true;
};
Step comp(int64_t us) {
  return {true, Time::us(us)};
}
Step coll(Collective c, const char* group, int64_t bytes, bool blocking = true) {
  return {false, Time(), c, group, bytes, blocking};
}

// Checks that `g` is exactly `steps` over `w`'s ranks (update `update` after every collective),
// each node depending on exactly the last blocking step of each of its ranks (one pass).
void expect_walk(const TaskGraph& g, const SimaiWorkload& w, const std::vector<Step>& steps,
                 Time update) {
  const auto n = static_cast<uint32_t>(w.all_gpus);
  std::vector<int64_t> prev(n, -1);  // per rank: its last blocking step
  size_t at = 0;
  auto deps = [](std::vector<int64_t> d) {
    std::vector<uint32_t> out;
    for (int64_t x : d) {
      if (x >= 0) out.push_back(static_cast<uint32_t>(x));
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  };
  for (const Step& st : steps) {
    if (st.compute) {
      for (uint32_t r = 0; r < n; ++r, ++at) {
        ASSERT_LT(at, g.nodes.size());
        const GraphNode& c = g.nodes[at];
        EXPECT_EQ(c.kind, GraphNode::Kind::kCompute) << "node " << at;
        EXPECT_EQ(c.rank, r) << "node " << at;
        EXPECT_EQ(c.duration, st.duration) << "node " << at;
        EXPECT_EQ(c.deps, deps({prev[r]})) << "node " << at;
        prev[r] = static_cast<int64_t>(at);
      }
      continue;
    }
    const SimaiGroup kind = std::map<std::string, SimaiGroup>{
        {"tp", SimaiGroup::kTp},
        {"dp", SimaiGroup::kDp},
        {"ep", SimaiGroup::kEp},
        {"dp_ep",
         SimaiGroup::kDpEp}}.at(st.group);
    for (const auto& members : simai_groups(w, kind)) {
      ASSERT_LT(at + 1, g.nodes.size());
      const GraphNode& c = g.nodes[at];
      EXPECT_EQ(c.kind, GraphNode::Kind::kCollective) << "node " << at;
      EXPECT_EQ(c.collective, st.collective) << "node " << at;
      EXPECT_EQ(c.group, members) << "node " << at;
      EXPECT_EQ(c.bytes, st.bytes) << "node " << at;
      EXPECT_EQ(g.categories[c.category], st.group) << "node " << at;
      std::vector<int64_t> d;
      for (uint32_t r : members) d.push_back(prev[r]);
      EXPECT_EQ(c.deps, deps(d)) << "node " << at;
      const GraphNode& u = g.nodes[at + 1];
      EXPECT_EQ(u.kind, GraphNode::Kind::kDelay) << "node " << at + 1;
      EXPECT_EQ(u.duration, update) << "node " << at + 1;
      EXPECT_EQ(u.deps, (std::vector<uint32_t>{static_cast<uint32_t>(at)})) << "node " << at + 1;
      EXPECT_EQ(g.categories[u.category], "update");
      if (st.blocking) {
        for (uint32_t r : members) prev[r] = static_cast<int64_t>(at + 1);
      }
      at += 2;
    }
  }
  EXPECT_EQ(at, g.nodes.size());
  EXPECT_EQ(g.check(), "");
}

// The shipped file (TP 2, EP 2 on 8 ranks), walked as SimAI's FWD_IN_BCKWD walk: forward over
// the lines (the embedding's 2,048 B AllReduce raised to 4,096), then backward from the last
// line, the weight-gradient collectives not blocking.
TEST(Traces, SimaiExampleBecomesSimAIsWalk) {
  const SimaiParse p = parse_simai(read(kSimaiExample), "simai-example.txt");
  ASSERT_EQ(p.error, "");
  const TaskGraph g = build_simai_graph(p.workload, 1);
  using C = Collective;
  const std::vector<Step> steps{// forward: embedding, attention, moe, lm_head
                                comp(20), coll(C::kAllReduceRing, "tp", 4096),    //
                                comp(50), coll(C::kAllReduceRing, "tp", 262144),  //
                                comp(60), coll(C::kAllToAll, "ep", 131072),       //
                                comp(30),
                                // backward: lm_head, moe, attention, embedding
                                comp(30), comp(20), coll(C::kAllGather, "dp", 262144, false),  //
                                comp(60), coll(C::kAllToAll, "ep", 131072),                    //
                                comp(50), coll(C::kAllReduceRing, "dp_ep", 524288, false),     //
                                comp(50), coll(C::kAllReduceRing, "tp", 262144),               //
                                comp(40), coll(C::kReduceScatter, "dp", 524288, false),        //
                                comp(20), comp(10), coll(C::kAllReduceRing, "dp", 1048576, false)};
  expect_walk(g, p.workload, steps, Time::ns(100));
  EXPECT_EQ(g.nodes.size(), 156U);  // 12 compute phases x 8 ranks, 30 collectives, 30 delays
  EXPECT_EQ(g.categories,
            (std::vector<std::string>{"compute", "tp", "update", "ep", "dp", "dp_ep"}));
  // Each rank set of a group kind is one communicator: collectives over the same ranks and of
  // the same kind share one, and no two kinds or rank sets do.
  std::map<std::pair<uint16_t, std::vector<uint32_t>>, std::set<uint32_t>> comm_of;
  std::set<uint32_t> all;
  for (const GraphNode& n : g.nodes) {
    if (n.kind != GraphNode::Kind::kCollective) continue;
    EXPECT_NE(n.comm, 0U);
    comm_of[{n.category, n.group}].insert(n.comm);
    all.insert(n.comm);
  }
  for (const auto& [key, comms] : comm_of) EXPECT_EQ(comms.size(), 1U);
  EXPECT_EQ(all.size(), comm_of.size());
}

// Two ranks, TP 1 (so the forward AllReduce has a group of one rank and moves nothing), DP 2.
// Line a's update is 5 ns, line b's 1 us.
const char* kTwoLines =
    "HYBRID_TRANSFORMER model_parallel_NPU_group: 1 ep: 1 pp: 1 vpp: 1 ga: 1 all_gpus: 2 "
    "pp_comm: 0\n"
    "2\n"
    "a -1 10 NONE 0 20 NONE 0 30 ALLREDUCE 1000 5\n"
    "b\t-1\t40\tALLREDUCE\t100\t50\tNONE\t0\t60\tALLGATHER\t2000\t1000\n";

// Without the iteration barrier, the passes are one graph: a line's forward in pass 1 waits for
// its weight-gradient collective (and update) of pass 0, and for nothing else of pass 0.
TEST(Traces, SimaiPassesLinkThroughTheWeightGradients) {
  const SimaiParse p = parse_simai(kTwoLines, "two.txt");
  ASSERT_EQ(p.error, "");
  EXPECT_EQ(dump(build_simai_graph(p.workload, 2)),
            "0: compute r0 10ns [compute] <- []\n"
            "1: compute r1 10ns [compute] <- []\n"
            "2: compute r0 40ns [compute] <- [0]\n"
            "3: compute r1 40ns [compute] <- [1]\n"
            "4: compute r0 50ns [compute] <- [2]\n"
            "5: compute r1 50ns [compute] <- [3]\n"
            "6: compute r0 60ns [compute] <- [4]\n"
            "7: compute r1 60ns [compute] <- [5]\n"
            "8: allgather {0,1} 2000 B [dp] <- [6,7]\n"
            "9: delay 1us [update] <- [8]\n"
            "10: compute r0 20ns [compute] <- [6]\n"
            "11: compute r1 20ns [compute] <- [7]\n"
            "12: compute r0 30ns [compute] <- [10]\n"
            "13: compute r1 30ns [compute] <- [11]\n"
            "14: allreduce_ring {0,1} 1000 B [dp] <- [12,13]\n"
            "15: delay 5ns [update] <- [14]\n"
            "16: compute r0 10ns [compute] <- [12,15]\n"
            "17: compute r1 10ns [compute] <- [13,15]\n"
            "18: compute r0 40ns [compute] <- [9,16]\n"
            "19: compute r1 40ns [compute] <- [9,17]\n"
            "20: compute r0 50ns [compute] <- [18]\n"
            "21: compute r1 50ns [compute] <- [19]\n"
            "22: compute r0 60ns [compute] <- [20]\n"
            "23: compute r1 60ns [compute] <- [21]\n"
            "24: allgather {0,1} 2000 B [dp] <- [22,23]\n"
            "25: delay 1us [update] <- [24]\n"
            "26: compute r0 20ns [compute] <- [22]\n"
            "27: compute r1 20ns [compute] <- [23]\n"
            "28: compute r0 30ns [compute] <- [26]\n"
            "29: compute r1 30ns [compute] <- [27]\n"
            "30: allreduce_ring {0,1} 1000 B [dp] <- [28,29]\n"
            "31: delay 5ns [update] <- [30]\n");
}

Time simai_run(const std::string& file, const std::string& keys, size_t iterations) {
  const RunResult r = run_checked(load_scenario_text(
      scenario(
          2, fmt::format("kind = \"simai\"\nfile = \"{}\"\nideal_network = true\n{}", file, keys)),
      "simai.toml"));
  EXPECT_TRUE(r.complete());
  EXPECT_EQ(r.jobs.size(), 1U);
  EXPECT_EQ(r.jobs.at(0).iteration_times.size(), iterations);
  return r.jobs.at(0).end - r.jobs.at(0).first_send;
}

// With an ideal network the run is the compute and update delays on the critical path: rank 0
// computes 10 + 40 + 50 + 60 ns, line b's AllGather then waits 1 us; the rank goes on with 20 +
// 30 ns, and line a's AllReduce at 210 ns ends its update at 215 ns. An iteration ends at
// 1,160 ns. Without the barrier, pass 1's line a starts at 215 ns (its own weight gradient),
// line b waits for b's at 1,160 ns, and the run ends 1,150 ns after that with b's update.
TEST(Traces, SimaiTimingWithAnIdealNetwork) {
  TempDir dir;
  const std::string file = dir.write("two.txt", kTwoLines);
  EXPECT_EQ(simai_run(file, "", 1), Time::ns(1160));
  EXPECT_EQ(simai_run(file, "iterations = 2", 2), Time::ns(2320));
  EXPECT_EQ(simai_run(file, "iterations = 2\niteration_barrier = false", 1), Time::ns(2310));
}

// FWD_IN_BCKWD's recomputation: line 2 initiates, line 0 is the checkpoint below it, so before
// line 2's input gradient every rank recomputes lines 0 and 1 forward (with their collectives).
// Forward sizes below 4,096 B are raised to 4,096 there too; line 2's 8,192 B are not.
TEST(Traces, SimaiRecomputesFromTheCheckpoint) {
  const SimaiParse p = parse_simai(
      "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 2 ep: 1 pp: 1 vpp: 3 ga: 1 "
      "all_gpus: 2 checkpoints: 1 0 checkpoint_initiates: 1 2 pp_comm: 0\n"
      "3\n"
      "l0 -1 1 ALLREDUCE 100 2 NONE 0 3 NONE 0 0\n"
      "l1 -1 4 NONE 0 5 NONE 0 6 NONE 0 0\n"
      "l2 -1 7 NONE 0 8 ALLREDUCE 8192 9 NONE 0 0\n",
      "ckpt.txt");
  ASSERT_EQ(p.error, "");
  EXPECT_EQ(p.workload.checkpoints, std::vector<int>{0});
  EXPECT_EQ(p.workload.checkpoint_initiates, std::vector<int>{2});
  EXPECT_EQ(dump(build_simai_graph(p.workload, 1)),
            "0: compute r0 1ns [compute] <- []\n"
            "1: compute r1 1ns [compute] <- []\n"
            "2: allreduce_ring {0,1} 4096 B [tp] <- [0,1]\n"
            "3: compute r0 4ns [compute] <- [2]\n"
            "4: compute r1 4ns [compute] <- [2]\n"
            "5: compute r0 7ns [compute] <- [3]\n"
            "6: compute r1 7ns [compute] <- [4]\n"
            "7: compute r0 1ns [compute] <- [5]\n"
            "8: compute r1 1ns [compute] <- [6]\n"
            "9: allreduce_ring {0,1} 4096 B [tp] <- [7,8]\n"
            "10: compute r0 4ns [compute] <- [9]\n"
            "11: compute r1 4ns [compute] <- [9]\n"
            "12: compute r0 8ns [compute] <- [10]\n"
            "13: compute r1 8ns [compute] <- [11]\n"
            "14: allreduce_ring {0,1} 8192 B [tp] <- [12,13]\n"
            "15: compute r0 9ns [compute] <- [14]\n"
            "16: compute r1 9ns [compute] <- [14]\n"
            "17: compute r0 5ns [compute] <- [15]\n"
            "18: compute r1 5ns [compute] <- [16]\n"
            "19: compute r0 6ns [compute] <- [17]\n"
            "20: compute r1 6ns [compute] <- [18]\n"
            "21: compute r0 2ns [compute] <- [19]\n"
            "22: compute r1 2ns [compute] <- [20]\n"
            "23: compute r0 3ns [compute] <- [21]\n"
            "24: compute r1 3ns [compute] <- [22]\n");
}

// Comm types as SimAI's parser reads them: by prefix in its order, then the suffix; an unknown
// string is no communication, a known prefix with another suffix has no group (both warned).
TEST(Traces, SimaiReadsCommTypesAsSimAIDoes) {
  const SimaiParse p = parse_simai(
      "HYBRID_TRANSFORMER model_parallel_NPU_group: 2 ep: 2 pp: 1 vpp: 1 ga: 1 all_gpus: 8 "
      "pp_comm: 0\n"
      "2\n"
      "x -1 1 BROADCAST 10 1 ALLREDUCEALLTOALL 10 1 ALLTOALL 10 1\n"
      "y -1 1 ALLGATHER_EP 10 1 REDUCESCATTER_DP_EP 10 1 ALLREDUCE_FOO 10 1\n",
      "types.txt");
  ASSERT_EQ(p.error, "");
  const auto& x = p.workload.layers[0];
  const auto& y = p.workload.layers[1];
  EXPECT_EQ(x.fwd.type, SimaiComm::kNone);
  EXPECT_EQ(x.ig.type, SimaiComm::kAllReduce);
  EXPECT_EQ(x.ig.group, SimaiGroup::kNone);
  EXPECT_EQ(x.wg.type, SimaiComm::kAllToAll);
  EXPECT_EQ(x.wg.group, SimaiGroup::kDp);
  EXPECT_EQ(y.fwd.type, SimaiComm::kAllGather);
  EXPECT_EQ(y.fwd.group, SimaiGroup::kEp);
  EXPECT_EQ(y.ig.type, SimaiComm::kReduceScatter);
  EXPECT_EQ(y.ig.group, SimaiGroup::kDpEp);
  EXPECT_EQ(y.wg.type, SimaiComm::kAllReduce);
  EXPECT_EQ(y.wg.group, SimaiGroup::kNone);
  ASSERT_EQ(p.warnings.size(), 3U);
  EXPECT_EQ(p.warnings[0],
            "types.txt:3: comm type 'ALLREDUCEALLTOALL' (1 time): SimAI reads it by its prefix as "
            "a collective with no group (its parser tests ALLREDUCE before ALLREDUCEALLTOALL); "
            "fabsim moves nothing for it");
  EXPECT_NE(p.warnings[1].find("types.txt:4: comm type 'ALLREDUCE_FOO' (1 time)"),
            std::string::npos);
  EXPECT_EQ(p.warnings[2],
            "types.txt:3: comm type 'BROADCAST' (1 time): not a SimAI collective, read as no "
            "communication (as SimAI reads it)");
  // What moves: x's weight-gradient AllToAll over DP, y's forward AllGather over EP and its
  // input-gradient ReduceScatter over DP_EP.
  const TaskGraph g = build_simai_graph(p.workload, 1);
  std::map<std::string, int> colls;
  for (const GraphNode& n : g.nodes) {
    if (n.kind == GraphNode::Kind::kCollective) {
      colls[fmt::format("{} {}", collective_name(n.collective), g.categories[n.category])] += 1;
    }
  }
  EXPECT_EQ(colls, (std::map<std::string, int>{
                       {"alltoall dp", 2}, {"allgather ep", 4}, {"reducescatter dp_ep", 4}}));
}

TEST(Traces, SimaiRefusesBadFiles) {
  const std::string h =
      "HYBRID_TRANSFORMER model_parallel_NPU_group: 2 ep: 1 pp: 1 vpp: 1 ga: 1 all_gpus: 4 "
      "pp_comm: 0\n";
  const std::string ok = "l -1 1 NONE 0 1 NONE 0 1 NONE 0 0\n";
  const std::vector<std::pair<std::string, std::string>> cases{
      {"", "f.txt:1: line 1: the parallelism policy, then key: value tokens"},
      {"FOO all_gpus: 4\n1\n" + ok,
       "f.txt:1: field 1 (parallelism policy): one of DATA, HYBRID_TRANSFORMER, "
       "HYBRID_TRANSFORMER_FWD_IN_BCKWD, HYBRID_DLRM"},
      {"MICRO all_gpus: 4\n1\n" + ok,
       "f.txt:1: field 1 (parallelism policy): HYBRID_TRANSFORMER or "
       "HYBRID_TRANSFORMER_FWD_IN_BCKWD (fabsim replays SimAI's transformer walks; AICB writes "
       "the latter), got 'MICRO'"},
      {"HYBRID_TRANSFORMER model_parallel_NPU_group: 2\n1\n" + ok,
       "f.txt:1: key 'all_gpus:': the number of ranks"},
      {"HYBRID_TRANSFORMER model_parallel_NPU_group: 2 all_gpus: x\n1\n" + ok,
       "f.txt:1: key 'all_gpus:': a value from 0 to 16777216, got 'x'"},
      {"HYBRID_TRANSFORMER all_gpus: 4\n1\n" + ok,
       "f.txt:1: key 'model_parallel_NPU_group:': the tensor-parallel group size"},
      {"HYBRID_TRANSFORMER model_parallel_NPU_group: 3 ep: 1 all_gpus: 4\n1\n" + ok,
       "f.txt:1: key 'model_parallel_NPU_group:': a divisor of all_gpus = 4, got 3"},
      {"HYBRID_TRANSFORMER model_parallel_NPU_group: 1 ep: 3 all_gpus: 4\n1\n" + ok,
       "f.txt:1: key 'ep:': a divisor of DP = all_gpus / TP = 4"},
      {h + "x\n" + ok, "f.txt:2: line 2: the number N of layer lines, an integer >= 1, got 'x'"},
      {h + "2\n" + ok, "2 layer lines (N on line 2), found 1"},
      {h + "1\n" + ok + ok, "f.txt:4: no more than N = 1 layer lines (N on line 2)"},
      {h + "1\nl -1 1 NONE 0 1 NONE 0 1 NONE 0\n",
       "f.txt:3: a layer line of 12 fields (name, dependency, then compute ns, comm type, comm "
       "bytes for forward, input gradient and weight gradient, then the update ns), got 11"},
      {h + "1\nl x 1 NONE 0 1 NONE 0 1 NONE 0 0\n",
       "f.txt:3: field 2 (dependency): an integer (AICB writes -1), got 'x'"},
      {h + "1\nl -1 1.5 NONE 0 1 NONE 0 1 NONE 0 0\n",
       "f.txt:3: field 3 (forward compute time, ns): an integer from 0 to"},
      {h + "1\nl -1 1 ALLREDUCE -4 1 NONE 0 1 NONE 0 0\n",
       "f.txt:3: field 5 (forward comm bytes): an integer from 0 to"},
      {h + "1\nl -1 1 NONE 0 1 NONE 0 1 ALLGATHER 1e6 0\n",
       "f.txt:3: field 11 (weight-gradient comm bytes): an integer from 0 to"},
      {h + "1\nl -1 1 NONE 0 1 NONE 0 1 NONE 0 -100\n",
       "f.txt:3: field 12 (update time, ns): an integer from 0 to"},
      {"HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 1 all_gpus: 1 checkpoints: 3 "
       "0\n1\n" +
           ok,
       "f.txt:1: key 'checkpoints:': a count, then that many layer indices"},
      {"HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 1 all_gpus: 1 checkpoints: 1 "
       "3\n1\n" +
           ok,
       "f.txt:1: key 'checkpoints:': layer indices below N = 1, got 3"},
      {"HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 1 all_gpus: 1 "
       "checkpoint_initiates: 1 0\n1\n" +
           ok,
       "f.txt:1: key 'checkpoint_initiates:': layer 0 needs a checkpoint below it"},
  };
  for (const auto& [text, expected] : cases) {
    const SimaiParse p = parse_simai(text, "f.txt");
    EXPECT_NE(p.error.find(expected), std::string::npos)
        << "input:\n"
        << text << "\nerror: " << p.error << "\nexpected: " << expected;
  }
}

// SimAI's own warning (absent or zero keys); tp 0 reads as all_gpus.
TEST(Traces, SimaiWarnsAsSimAIDoes) {
  const SimaiParse p = parse_simai(
      "HYBRID_TRANSFORMER model_parallel_NPU_group: 0 all_gpus: 4\n1\nl -1 1 ALLREDUCE 8 1 NONE "
      "0 1 NONE 0 0\n",
      "w.txt");
  ASSERT_EQ(p.error, "");
  EXPECT_EQ(p.workload.tp, 4);
  EXPECT_EQ(p.workload.ep, 1);
  ASSERT_EQ(p.warnings.size(), 1U);
  EXPECT_NE(p.warnings[0].find("w.txt:1: tp 0, ep -1, pp -1, vpp -1, ga -1, pp_comm -1"),
            std::string::npos);
  EXPECT_NE(p.warnings[0].find("SimAI warns 'Input workload format mismatch'"), std::string::npos);
}

TEST(Traces, SimaiScenarioErrorsNameTheKeyAndFile) {
  TempDir dir;
  auto load = [](const std::string& keys, int hosts = 8) {
    return load_scenario_text(scenario(hosts, "kind = \"simai\"\n" + keys), "s.toml");
  };
  auto error = [&](const std::string& keys, int hosts = 8) -> std::string {
    try {
      load(keys, hosts);
    } catch (const ConfigError& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(error("").find("key 'workload.file': expected the path of a SimAI/AICB workload "
                           "file"),
            std::string::npos);
  EXPECT_NE(error("file = \"missing.txt\"")
                .find("key 'workload.file': expected a readable SimAI/AICB workload file"),
            std::string::npos);
  const std::string bad = dir.write("bad.txt", "HYBRID_TRANSFORMER all_gpus: 4\n");
  EXPECT_NE(error(fmt::format("file = \"{}\"", bad))
                .find(fmt::format("key 'workload.file': expected a SimAI/AICB workload file ({}:1: "
                                  "key 'model_parallel_NPU_group:'",
                                  bad)),
            std::string::npos);
  EXPECT_NE(error(fmt::format("file = \"{}\"", kSimaiExample), 4)
                .find("expected a trace whose 8 ranks from GPU first = 0 fit in the topology's 4 "
                      "hosts"),
            std::string::npos);
  const std::string warned =
      dir.write("w.txt", "HYBRID_TRANSFORMER model_parallel_NPU_group: 2 ep: 1 pp: 1 vpp: 1 ga: 1 "
                         "all_gpus: 2 pp_comm: 0\n1\nl -1 1 BROADCAST 8 1 NONE 0 1 NONE 0 0\n");
  const ScenarioConfig cfg = load(fmt::format("file = \"{}\"", warned));
  ASSERT_EQ(cfg.warnings.size(), 1U);
  EXPECT_NE(
      cfg.warnings[0].find("key 'workload.file': " + warned + ":3: comm type 'BROADCAST' (1 time)"),
      std::string::npos);
}

TEST(Traces, SimaiExampleScenarioRuns) {
  const ScenarioConfig cfg = load_scenario(kRoot + "/scenarios/trace-simai-example.toml", {});
  const RunResult r = run_checked(cfg);
  EXPECT_TRUE(r.complete());
  ASSERT_EQ(r.jobs.size(), 1U);
  EXPECT_EQ(r.jobs[0].name, "simai");
  EXPECT_EQ(r.jobs[0].ranks, 8);
  EXPECT_EQ(r.jobs[0].iteration_times.size(), 2U);
  // The compute on one rank's critical path bounds an iteration from below: forward 160 us,
  // backward 160 + 120 us.
  for (Time t : r.jobs[0].iteration_times) EXPECT_GT(t, Time::us(440));
}

// --- Chakra ---------------------------------------------------------------------------------

TEST(Traces, ChakraReadsTheShippedTrace) {
  EtRank r0;
  ASSERT_EQ(read_chakra_file(kChakraExample + ".0.et", &r0), "");
  EXPECT_EQ(r0.version, "0.0.4");
  ASSERT_EQ(r0.nodes.size(), 9U);
  const EtNode& meta = r0.nodes[0];
  EXPECT_EQ(meta.type, static_cast<int32_t>(EtNodeType::kMetadata));
  EXPECT_EQ(meta.inputs_values.substr(0, 4), "['[{");
  const EtNode& fwd = r0.nodes[1];
  EXPECT_EQ(fwd.name, "forward");
  EXPECT_EQ(fwd.type, static_cast<int32_t>(EtNodeType::kComp));
  EXPECT_EQ(fwd.duration_us, 40U);
  EXPECT_EQ(fwd.data_deps, std::vector<uint64_t>{0});
  const EtNode& send = r0.nodes[2];
  EXPECT_EQ(send.type, static_cast<int32_t>(EtNodeType::kSend));
  EXPECT_EQ(send.comm_src, 0);
  EXPECT_EQ(send.comm_dst, 2);
  EXPECT_EQ(send.comm_size, 262144);
  EXPECT_EQ(send.comm_tag, 1);
  const EtNode& ar = r0.nodes[5];
  EXPECT_EQ(ar.type, static_cast<int32_t>(EtNodeType::kColl));
  EXPECT_EQ(ar.comm_type, static_cast<int64_t>(EtCollective::kAllReduce));
  EXPECT_EQ(ar.comm_size, 1048576);
  EXPECT_EQ(ar.pg_name, "1");
  EXPECT_EQ(r0.nodes[8].pg_name, "0");
}

std::vector<EtRank> read_example() {
  std::vector<EtRank> ranks(4);
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(read_chakra_file(fmt::format("{}.{}.et", kChakraExample, r), &ranks[r]), "");
  }
  return ranks;
}

// The shipped 4-rank trace (tools/make_traces.py): ranks 0, 1 forward and send their
// activations to 2, 3, which send gradients back; each stage's AllReduce on its process group
// ("1" = {0, 1}, "2" = {2, 3}, from the METADATA node), an AllGather of 64 KiB per rank (S =
// 256 KiB) and an AllToAll over all ranks. The per-rank nodes merge into one node per
// collective and per send/receive pair; METADATA nodes complete at once; ctrl_deps are ignored.
TEST(Traces, ChakraExampleBecomesThisGraph) {
  const ChakraGraph g = build_chakra_graph(read_example(), {});
  ASSERT_EQ(g.error, "");
  EXPECT_TRUE(g.warnings.empty());
  EXPECT_EQ(dump(g.graph), "0: compute r0 40us [compute] <- []\n"
                           "1: compute r1 40us [compute] <- []\n"
                           "2: sendrecv {0,2} 262144 B [sendrecv] <- [0]\n"
                           "3: compute r2 40us [compute] <- [2]\n"
                           "4: compute r2 80us [compute] <- [3]\n"
                           "5: sendrecv {1,3} 262144 B [sendrecv] <- [1]\n"
                           "6: compute r3 40us [compute] <- [5]\n"
                           "7: compute r3 80us [compute] <- [6]\n"
                           "8: allreduce_ring {2,3} 1048576 B [allreduce_ring] <- [4,7]\n"
                           "9: sendrecv {2,0} 262144 B [sendrecv] <- [4]\n"
                           "10: compute r0 80us [compute] <- [0,9]\n"
                           "11: sendrecv {3,1} 262144 B [sendrecv] <- [7]\n"
                           "12: compute r1 80us [compute] <- [1,11]\n"
                           "13: allreduce_ring {0,1} 1048576 B [allreduce_ring] <- [10,12]\n"
                           "14: allgather {0,1,2,3} 262144 B [allgather] <- [8,13]\n"
                           "15: compute r0 10us [compute] <- [14]\n"
                           "16: compute r1 10us [compute] <- [14]\n"
                           "17: compute r2 10us [compute] <- [14]\n"
                           "18: compute r3 10us [compute] <- [14]\n"
                           "19: alltoall {0,1,2,3} 131072 B [alltoall] <- [15,16,17,18]\n");
  EXPECT_EQ(g.counts, (std::map<std::string, uint64_t>{{"COMM_COLL_NODE", 12},
                                                       {"COMM_RECV_NODE", 4},
                                                       {"COMM_SEND_NODE", 4},
                                                       {"COMP_NODE", 12},
                                                       {"METADATA_NODE", 4}}));
  ChakraOptions total;
  total.allgather_per_rank = false;
  EXPECT_EQ(build_chakra_graph(read_example(), total).graph.nodes[14].bytes, 65536);
  // Each process group is one communicator (numbered as first met: "1", the default group of
  // the AllGather and the AllToAll, "2"); send/receives have none.
  std::vector<uint32_t> comms;
  for (const GraphNode& n : g.graph.nodes) comms.push_back(n.comm);
  EXPECT_EQ(comms,
            (std::vector<uint32_t>{0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2}));
  // Rendezvous: a send waits for its receiver's dependencies too (rank 0's forward for the
  // gradient coming back from rank 2).
  ChakraOptions rendezvous;
  rendezvous.eager_p2p = false;
  const std::string r = dump(build_chakra_graph(read_example(), rendezvous).graph);
  EXPECT_NE(r.find("9: sendrecv {2,0} 262144 B [sendrecv] <- [0,4]\n"
                   "10: compute r0 80us [compute] <- [9]\n"),
            std::string::npos)
      << r;
}

// Small hand-made traces for the rules and the errors.
EtNode comp_node(uint64_t id, uint64_t us, std::vector<uint64_t> deps = {}) {
  EtNode e;
  e.id = id;
  e.name = fmt::format("c{}", id);
  e.type = static_cast<int32_t>(EtNodeType::kComp);
  e.duration_us = us;
  e.data_deps = std::move(deps);
  return e;
}
EtNode coll_node(uint64_t id, EtCollective c, int64_t bytes, std::vector<uint64_t> deps = {},
                 std::optional<std::string> pg = std::nullopt) {
  EtNode e;
  e.id = id;
  e.name = fmt::format("k{}", id);
  e.type = static_cast<int32_t>(EtNodeType::kColl);
  e.comm_type = static_cast<int64_t>(c);
  e.comm_size = bytes;
  e.data_deps = std::move(deps);
  e.pg_name = std::move(pg);
  return e;
}
EtNode p2p_node(uint64_t id, bool send, int64_t peer, int64_t bytes, int64_t tag,
                std::vector<uint64_t> deps = {}) {
  EtNode e;
  e.id = id;
  e.name = fmt::format("p{}", id);
  e.type = static_cast<int32_t>(send ? EtNodeType::kSend : EtNodeType::kRecv);
  (send ? e.comm_dst : e.comm_src) = peer;
  e.comm_size = bytes;
  e.comm_tag = tag;
  e.data_deps = std::move(deps);
  return e;
}
std::vector<EtRank> ranks_of(std::vector<std::vector<EtNode>> nodes) {
  std::vector<EtRank> out;
  for (size_t r = 0; r < nodes.size(); ++r) {
    out.push_back({fmt::format("t.{}.et", r), "", std::move(nodes[r])});
  }
  return out;
}

// Rules beyond the example: pass-through nodes hand their dependencies on, BROADCAST is a delay
// of its duration, a process group named nowhere is the ranks that use it (warned), a group of
// one rank moves nothing, send/receive pairs match by tag and order.
TEST(Traces, ChakraMergingRules) {
  EtNode mem;
  mem.id = 9;
  mem.type = static_cast<int32_t>(EtNodeType::kMemLoad);
  mem.data_deps = {1};
  EtNode bcast = coll_node(3, EtCollective::kBroadcast, 100, {2});
  bcast.duration_us = 7;
  const auto traces =
      ranks_of({{comp_node(1, 5), mem, coll_node(2, EtCollective::kAllReduce, 64, {9}, "tp"), bcast,
                 p2p_node(4, true, 2, 10, 7, {3}), p2p_node(5, true, 2, 20, 8, {3}),
                 coll_node(6, EtCollective::kAllReduce, 8, {}, "solo")},
                {coll_node(1, EtCollective::kAllReduce, 64, {}, "tp")},
                {p2p_node(1, false, 0, 20, 8), p2p_node(2, false, 0, 10, 7, {1})}});
  const ChakraGraph g = build_chakra_graph(traces, {});
  ASSERT_EQ(g.error, "");
  // Eager sends wait for the sender alone, so the receive order on rank 2 does not hold the
  // tag-7 send back.
  EXPECT_EQ(dump(g.graph), "0: compute r0 5us [compute] <- []\n"
                           "1: allreduce_ring {0,1} 64 B [allreduce_ring] <- [0]\n"
                           "2: delay 7us [broadcast] <- [1]\n"
                           "3: sendrecv {0,2} 10 B [sendrecv] <- [2]\n"
                           "4: sendrecv {0,2} 20 B [sendrecv] <- [2]\n");
  ASSERT_EQ(g.warnings.size(), 2U);
  EXPECT_EQ(g.warnings[0], "process group 'solo' is defined by no comm-group file or METADATA "
                           "node: taken as the ranks whose traces hold a collective on it, {0}");
  EXPECT_NE(g.warnings[1].find("process group 'tp'"), std::string::npos);
  // Rendezvous: the tag-7 send waits for rank 2's receive of tag 8 first.
  ChakraOptions rendezvous;
  rendezvous.eager_p2p = false;
  EXPECT_NE(dump(build_chakra_graph(traces, rendezvous).graph)
                .find("3: sendrecv {0,2} 20 B [sendrecv] <- [2]\n"
                      "4: sendrecv {0,2} 10 B [sendrecv] <- [2,3]\n"),
            std::string::npos);
}

// Issue order, control dependencies, CPU operations and communicators (a review against
// ASTRA-sim's feeder and NCCL's streams):
//  - collectives pair up in each file's dependency order, not its byte order;
//  - ctrl_deps order nodes as data_deps do (ctrl_deps = false: ignored);
//  - an is_cpu_op compute node is a delay beside the GPU stream;
//  - one process group is one communicator, so its collectives run one at a time;
//  - eager send/receive: a ring where each rank sends, then receives after its own send, runs
//    (rendezvous would deadlock, and says so).
TEST(Traces, ChakraIssueOrderControlDepsCpuOpsAndCommunicators) {
  using C = EtCollective;
  // Rank 1 writes its AllGather (which depends on its AllReduce) first.
  const ChakraGraph order = build_chakra_graph(
      ranks_of({{coll_node(1, C::kAllReduce, 8), coll_node(2, C::kAllGather, 8, {1})},
                {coll_node(2, C::kAllGather, 8, {1}), coll_node(1, C::kAllReduce, 8)}}),
      {});
  ASSERT_EQ(order.error, "");
  EXPECT_EQ(dump(order.graph), "0: allreduce_ring {0,1} 8 B [allreduce_ring] <- []\n"
                               "1: allgather {0,1} 16 B [allgather] <- [0]\n");
  EXPECT_EQ(order.graph.nodes[0].comm, order.graph.nodes[1].comm);
  EXPECT_NE(order.graph.nodes[0].comm, 0U);

  EtNode after = coll_node(2, C::kAllReduce, 64);
  after.ctrl_deps = {1};
  EtNode cpu = comp_node(3, 100);
  cpu.cpu_op = true;
  const auto traces =
      ranks_of({{comp_node(1, 100), after, cpu}, {coll_node(1, C::kAllReduce, 64)}});
  EXPECT_EQ(dump(build_chakra_graph(traces, {}).graph),
            "0: compute r0 100us [compute] <- []\n"
            "1: allreduce_ring {0,1} 64 B [allreduce_ring] <- [0]\n"
            "2: delay 100us [cpu] <- []\n");
  ChakraOptions data_only;
  data_only.ctrl_deps = false;
  EXPECT_NE(dump(build_chakra_graph(traces, data_only).graph)
                .find("allreduce_ring {0,1} 64 B [allreduce_ring] <- []"),
            std::string::npos);
  EtNode dangling = comp_node(1, 1);
  dangling.ctrl_deps = {7};
  EXPECT_NE(build_chakra_graph(ranks_of({{dangling}}), {})
                .error.find("t.0.et: node 1 'c1': ctrl_deps: a node id of the same file, got 7"),
            std::string::npos);

  std::vector<std::vector<EtNode>> ring(3);
  for (int64_t r = 0; r < 3; ++r) {
    ring[r] = {p2p_node(1, true, (r + 1) % 3, 1000, 0),
               p2p_node(2, false, (r + 2) % 3, 1000, 0, {1}), comp_node(3, 5, {2})};
  }
  const ChakraGraph eager = build_chakra_graph(ranks_of(ring), {});
  ASSERT_EQ(eager.error, "");
  EXPECT_EQ(dump(eager.graph), "0: sendrecv {0,1} 1000 B [sendrecv] <- []\n"
                               "1: sendrecv {1,2} 1000 B [sendrecv] <- []\n"
                               "2: compute r1 5us [compute] <- [0,1]\n"
                               "3: sendrecv {2,0} 1000 B [sendrecv] <- []\n"
                               "4: compute r0 5us [compute] <- [0,3]\n"
                               "5: compute r2 5us [compute] <- [1,3]\n");
  ChakraOptions rendezvous;
  rendezvous.eager_p2p = false;
  EXPECT_NE(build_chakra_graph(ranks_of(ring), rendezvous).error.find("would deadlock"),
            std::string::npos);
}

TEST(Traces, ChakraRefusesBadTraces) {
  using C = EtCollective;
  EtNode unknown = comp_node(1, 1);
  unknown.type = 12;
  EtNode no_type = coll_node(1, C::kAllReduce, 8);
  no_type.comm_type.reset();
  const std::vector<std::pair<std::vector<std::vector<EtNode>>, std::string>> cases{
      {{{comp_node(1, 1), comp_node(1, 2)}}, "t.0.et: node id 1 appears twice"},
      {{{comp_node(1, 1, {5})}},
       "t.0.et: node 1 'c1': data_deps: a node id of the same file, "
       "got 5"},
      {{{comp_node(1, 1, {2}), comp_node(2, 1, {1})}},
       "t.0.et: node 1 'c1': its data_deps and ctrl_deps form a cycle"},
      {{{unknown}}, "t.0.et: node 1 'c1': type: a NodeType from 0 to 7, got 12"},
      {{{no_type}, {}}, "t.0.et: node 1 'k1': a COMM_COLL_NODE needs a comm_type"},
      {{{coll_node(1, C::kReduce, 8)}, {coll_node(1, C::kReduce, 8)}},
       "t.0.et: node 1 'k1': comm_type: ALL_REDUCE, ALL_GATHER, REDUCE_SCATTER, ALL_TO_ALL or "
       "BROADCAST (fabsim maps these; ASTRA-sim stops on the others too), got REDUCE"},
      {{{coll_node(1, C::kAllReduce, -1)}, {}}, "t.0.et: node 1 'k1': comm_size: bytes from 0"},
      {{{coll_node(1, C::kAllReduce, 8)}, {}},
       "the collective 1 (in issue order) of process group '' (comm_type 0, 8 bytes) "
       "is missing from the traces of ranks {1}: every rank of its group {0, 1} must issue it"},
      {{{coll_node(1, C::kAllReduce, 8)}, {coll_node(1, C::kAllReduce, 16)}},
       "t.1.et: node 1 'k1': the collective 1 (in issue order) of process group '' has comm_type "
       "0 and comm_size 16 here but 0 and 8 on rank 0 (k1): the members of a "
       "collective must agree"},
      {{{coll_node(1, C::kAllReduce, 8), coll_node(2, C::kAllGather, 8, {1})},
        {coll_node(1, C::kAllGather, 8), coll_node(2, C::kAllReduce, 8, {1})}},
       "comm_type 2 and comm_size 8 here but 0 and 8 on rank 0"},
      {{{coll_node(1, C::kAllReduce, 8, {}, "a"), coll_node(2, C::kAllReduce, 8, {1}, "b")},
        {coll_node(1, C::kAllReduce, 8, {}, "b"), coll_node(2, C::kAllReduce, 8, {1}, "a")}},
       "waits, through the other ranks' dependencies, for itself: the ranks issue their "
       "collectives or send/receives in orders that would deadlock"},
      {{{p2p_node(1, true, 1, 8, 0)}, {}},
       "t.0.et: node 1 'p1': 1 sends from rank 0 to rank 1 with tag 0 but 0 matching receives "
       "in rank 1's trace"},
      {{{}, {p2p_node(1, false, 0, 8, 3)}},
       "t.1.et: node 1 'p1': receives from rank 0 with tag 3, but rank 0's trace sends rank 1 "
       "nothing with that tag"},
      {{{p2p_node(1, true, 1, 8, 0)}, {p2p_node(1, false, 0, 9, 0)}},
       "t.1.et: node 1 'p1': receives 9 bytes, but its matching send (t.0.et: node 1 'p1') sends "
       "8"},
      {{{p2p_node(1, true, 0, 8, 0)}},
       "t.0.et: node 1 'p1': comm_dst: another rank below 1, "
       "got 0"},
      {{{p2p_node(1, true, 1, 8, 0)}, {p2p_node(1, true, 5, 8, 0)}},
       "t.1.et: node 1 'p1': comm_dst: another rank below 2, got 5"},
  };
  for (const auto& [nodes, expected] : cases) {
    const ChakraGraph g = build_chakra_graph(ranks_of(nodes), {});
    EXPECT_NE(g.error.find(expected), std::string::npos)
        << "error: " << g.error << "\nexpected: " << expected;
  }
  EtNode wrong_src = p2p_node(1, true, 1, 8, 0);
  wrong_src.comm_src = 1;
  EXPECT_NE(build_chakra_graph(ranks_of({{wrong_src}, {}}), {})
                .error.find("t.0.et: node 1 'p1': comm_src: this file's rank 0 (or absent), got 1"),
            std::string::npos);
  ChakraOptions groups;
  groups.pg_ranks["x"] = {1, 2};
  EXPECT_NE(
      build_chakra_graph(ranks_of({{coll_node(1, C::kAllReduce, 8, {}, "x")}, {}, {}}), groups)
          .error.find("t.0.et: node 1 'k1': process group 'x' is {1, 2}, which does not "
                      "hold this rank 0"),
      std::string::npos);
  groups.pg_ranks["x"] = {1, 1};
  EXPECT_NE(build_chakra_graph(ranks_of({{}, {}}), groups)
                .error.find("the comm-group file: process group 'x' names a rank twice"),
            std::string::npos);
}

// A length-prefixed message: varint32 length, then the bytes.
std::string message(const std::string& body) {
  std::string out;
  size_t n = body.size();
  do {
    out.push_back(static_cast<char>((n & 0x7f) | (n > 0x7f ? 0x80 : 0)));
    n >>= 7;
  } while (n > 0);
  return out + body;
}

TEST(Traces, ChakraRefusesBadFiles) {
  TempDir dir;
  EtRank r;
  EXPECT_EQ(read_chakra_file(dir.path() + "/none.0.et", &r),
            dir.path() + "/none.0.et: cannot open");
  const std::string empty = dir.write("empty.0.et", "");
  EXPECT_EQ(read_chakra_file(empty, &r), empty + ": a GlobalMetadata message first, got an empty "
                                                 "file");
  const std::string cut = dir.write("cut.0.et", message("") + "\x05\x08");
  EXPECT_EQ(read_chakra_file(cut, &r),
            cut + ": byte 1: a message length (varint32) and that many bytes, got less");
  const std::string varint = dir.write("varint.0.et", message("") + "\xff");
  EXPECT_EQ(read_chakra_file(varint, &r), varint + ": byte 1: a message length (varint32) and "
                                                   "that many bytes, got the end of the file");
  // Field 3 (type) as a length-delimited field: not a Node.
  const std::string garbage = dir.write("garbage.0.et", message("") + message("\x1a\x05"));
  EXPECT_EQ(read_chakra_file(garbage, &r),
            garbage + ": byte 1: a Node message, which does not parse (message 2 of the file)");
  // comm_size as a string attribute: Node{id 1, attr{name "comm_size", string_val "x"}}.
  const std::string attr = std::string("\x52\x0f\x0a\x09", 4) + "comm_size" + "\xea\x01\x01x";
  // A file without its GlobalMetadata: the first message is a Node (field 1, an integer id).
  const std::string no_meta = dir.write("nometa.0.et", message(std::string("\x08\x01\x18\x04", 4)));
  EXPECT_EQ(read_chakra_file(no_meta, &r),
            no_meta + ": byte 0: a GlobalMetadata message first, got a message whose first field "
                      "is not length-delimited (a Node? the file may lack its GlobalMetadata)");
  const std::string bad_attr = dir.write("attr.0.et", message("") + message("\x08\x01" + attr));
  EXPECT_EQ(read_chakra_file(bad_attr, &r),
            bad_attr + ": node 1 '': attribute comm_size: an integer (int64_val by convention)");
}

TEST(Traces, ChakraScenarioKeys) {
  TempDir dir;
  auto error = [](const std::string& keys, int hosts = 4) -> std::string {
    try {
      load_scenario_text(scenario(hosts, "kind = \"chakra\"\n" + keys), "s.toml");
    } catch (const ConfigError& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(error("").find("key 'workload.trace': expected the prefix of a Chakra trace's "
                           "<prefix>.<rank>.et files"),
            std::string::npos);
  EXPECT_NE(error("trace = \"/nonexistent/t\"")
                .find("key 'workload.trace': expected a Chakra trace, rank 0's file "
                      "/nonexistent/t.0.et at least"),
            std::string::npos);
  EXPECT_NE(
      error(fmt::format("trace = \"{}\"\nranks = 5", kChakraExample))
          .find(fmt::format("key 'workload.trace': expected a Chakra execution trace ({}.4.et: "
                            "cannot open)",
                            kChakraExample)),
      std::string::npos);
  EXPECT_NE(error(fmt::format("trace = \"{}\"", kChakraExample), 3)
                .find("expected a trace whose 4 ranks from GPU first = 0 fit in the topology's 3 "
                      "hosts"),
            std::string::npos);
  const std::string json = dir.write("groups.json", "{\"1\": [0, 1], \"2\": [2, 3]}");
  const std::string clash = dir.write("clash.json", "{\"1\": [0, 2]}");
  EXPECT_EQ(error(fmt::format("trace = \"{}\"\ncomm_groups = \"{}\"", kChakraExample, json)), "");
  EXPECT_NE(error(fmt::format("trace = \"{}\"\ncomm_groups = \"{}\"", kChakraExample, clash))
                .find("METADATA process group '1' is {0, 1} here but {0, 2} elsewhere"),
            std::string::npos);
  const std::string list = dir.write("list.json", "[0, 1]");
  EXPECT_NE(error(fmt::format("trace = \"{}\"\ncomm_groups = \"{}\"", kChakraExample, list))
                .find("key 'workload.comm_groups': expected a JSON object of process group -> "
                      "list of ranks"),
            std::string::npos);
  // Rank discovery stops at a missing file; a later rank's file makes that an error.
  const std::string node = message(std::string("\x08\x01\x18\x04\x38\x01", 6));  // COMP, 1 us
  for (int r : {0, 1, 3}) dir.write(fmt::format("gap.{}.et", r), message("") + node);
  EXPECT_NE(error(fmt::format("trace = \"{}/gap\"", dir.path()))
                .find(fmt::format("key 'workload.trace': expected every rank's file from 0 up: "
                                  "{0}/gap.3.et exists but {0}/gap.2.et does not",
                                  dir.path())),
            std::string::npos);
  EXPECT_EQ(error(fmt::format("trace = \"{}/gap\"\nranks = 2", dir.path())), "");
  // Two ranks only: the METADATA node's groups name ranks 2 and 3.
  EXPECT_NE(error(fmt::format("trace = \"{}\"\nranks = 2", kChakraExample))
                .find("process group '2': ranks below the 2 traces, got 3"),
            std::string::npos);
}

TEST(Traces, ChakraExampleScenarioRuns) {
  const ScenarioConfig cfg = load_scenario(kRoot + "/scenarios/trace-chakra-example.toml", {});
  const RunResult r = run_checked(cfg);
  EXPECT_TRUE(r.complete());
  ASSERT_EQ(r.jobs.size(), 1U);
  EXPECT_EQ(r.jobs[0].name, "chakra");
  EXPECT_EQ(r.jobs[0].ranks, 4);
  ASSERT_EQ(r.jobs[0].iteration_times.size(), 1U);
  // Rank 0's chain computes 40 + 80 + 10 us, waiting for rank 2's 40 + 80 us between.
  EXPECT_GT(r.jobs[0].iteration_times[0], Time::us(250));
}

}  // namespace
}  // namespace fabsim
