// Training iterations (issue 19): the task-graph runner and the training workload. With an ideal
// network an iteration is its compute alone; a 1F1B pipeline idles (p-1)/(m+p-1) of the time;
// with one link per rank the iteration equals compute plus the ring AllReduce's alpha-beta time;
// the LLaMA2-13B FLOP count is the reference's.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>  // find (dependencies), sort
#include <map>        // collectives by group size, communicators
#include <set>        // groups per communicator
#include <string>     // scenarios

#include "conserved.h"
#include "scenario/runner.h"
#include "scenario/scenario.h"
#include "workload/training/training.h"

namespace fabsim {
namespace {

// A small dense model (4 layers, h 1024) on `hosts` hosts of one switch at 100 Gb/s.
std::string small(int hosts, const std::string& parallel, const std::string& extra,
                  int64_t vocab = 0) {
  return fmt::format(R"(
name = "train"
[simulation]
stop_time = "100s"
[topology]
kind = "single_switch"
hosts = {0}
nic_rate = "100Gbps"
host_link_delay = "1us"
[transport]
kind = "roce"
[workload]
kind = "training"
{2}
[workload.model]
layers = 4
hidden = 1024
heads = 8
kv_heads = 8
ffn = 4096
vocab = {3}
seq = 512
[workload.parallel]
{1}
)",
                     hosts, parallel, extra, vocab);
}

TrainingConfig small_config(int tp, int pp, int dp, int global_batch, int64_t vocab = 0) {
  TrainingConfig c;
  c.model.layers = 4;
  c.model.hidden = 1024;
  c.model.heads = 8;
  c.model.kv_heads = 8;
  c.model.ffn = 4096;
  c.model.vocab = vocab;
  c.model.seq = 512;
  c.parallel.tp = tp;
  c.parallel.pp = pp;
  c.parallel.dp = dp;
  c.parallel.global_batch = global_batch;
  return c;
}

Time iteration(const std::string& text) {
  const RunResult r = run_checked(load_scenario_text(text, "train.toml"));
  EXPECT_TRUE(r.complete());
  EXPECT_EQ(r.jobs.size(), 1U);
  return r.jobs.at(0).iteration_times.at(0);
}

// REFERENCE.md §8.2: LLaMA2-13B, one 4,096-token sequence, forward + backward without
// recomputation: 3.57e14 FLOPs; its parameter count 13,015,864,320.
TEST(Training, Llama13bFlopsAndParametersAreTheReferences) {
  ModelConfig m;  // the llama2-13b preset
  const double per_token = m.layers * (m.attention_flops_per_token() + m.mlp_flops_per_token()) +
                           2.0 * static_cast<double>(m.hidden * m.vocab);
  EXPECT_NEAR(3.0 * per_token * 4096, 3.57e14, 0.005e14);
  EXPECT_EQ(m.params(), 13'015'864'320);  // the final norm included
}

// With an ideal network the iteration is each rank's compute, run back to back: m micro-batches
// x layers x (forward + backward), plus the LM head's 3 x forward, exactly.
TEST(Training, IdealNetworkIterationIsTheComputeAlone) {
  TrainingConfig c = small_config(2, 1, 2, 8, 32000);
  const Time layer = layer_forward_time(c);
  const Time got = iteration(
      small(4, "tp = 2\npp = 1\ndp = 2\nglobal_batch = 8", "ideal_network = true", 32000));
  const TaskGraph g = build_training_graph(c);
  Time compute;
  for (const GraphNode& n : g.nodes) {
    if (n.kind == GraphNode::Kind::kCompute && n.rank == 0) compute += n.duration;
  }
  EXPECT_EQ(got, compute);
  // m = 8 / 2 = 4 micro-batches of 512 tokens, each 3 x the forward FLOPs of 4 layers and the
  // LM head, split over t = 2, at 312 TFLOP/s x 0.5 (each phase rounds to the picosecond).
  const double per_token =
      c.model.layers * (c.model.attention_flops_per_token() + c.model.mlp_flops_per_token()) +
      2.0 * 1024 * 32000;
  const double seconds = 4 * 512 * 3 * per_token / 2 / (312e12 * 0.5);
  EXPECT_NEAR(compute.sec_f(), seconds, 1e-9);
  EXPECT_GT(compute, layer * 48);
}

// 1F1B on a compute-only pipeline (ideal network, no LM head so the stages are equal): the
// iteration is (m + p - 1)(t_f + t_b), so the idle share is (p - 1) / (m + p - 1).
TEST(Training, OneFOneBBubbleIsPMinusOneOverMPlusPMinusOne) {
  for (const auto& [p, m] : {std::pair{4, 8}, std::pair{2, 6}, std::pair{4, 4}}) {
    const TrainingConfig c = small_config(1, p, 1, m);
    const TaskGraph g = build_training_graph(c);
    Time stage;  // one micro-batch through one stage, forward and backward
    for (const GraphNode& n : g.nodes) {
      if (n.kind == GraphNode::Kind::kCompute && n.rank == 0) stage += n.duration;
    }
    stage = stage / m;
    const Time got =
        iteration(small(p, fmt::format("tp = 1\npp = {}\ndp = 1\nglobal_batch = {}", p, m),
                        "ideal_network = true"));
    EXPECT_EQ(got, stage * (m + p - 1)) << "p " << p << " m " << m;
    const double idle = 1.0 - static_cast<double>((stage * m).ps()) / static_cast<double>(got.ps());
    EXPECT_NEAR(idle, static_cast<double>(p - 1) / (m + p - 1), 1e-9);
  }
}

// Data parallel over 4 hosts of one switch, one link per rank, the gradients reduced once after
// the backward (no overlap): the iteration is the compute plus a ring AllReduce of the rank's
// gradients, 2(n-1) steps of S/n at the link's payload rate (less the ACKs) plus a per-step
// latency, within 1 %.
TEST(Training, DataParallelIterationIsComputePlusTheRingAllReduce) {
  const TrainingConfig c = small_config(1, 1, 4, 4);
  const TaskGraph g = build_training_graph(c);
  Time compute;
  for (const GraphNode& n : g.nodes) {
    if (n.kind == GraphNode::Kind::kCompute && n.rank == 0) compute += n.duration;
  }
  const Time got =
      iteration(small(4, "tp = 1\npp = 1\ndp = 4\nglobal_batch = 4", "dp_overlap = false"));
  const int64_t grads = c.model.layers * c.model.layer_params() * 2;  // bf16, no LM head
  const int n = 4;
  const double payload = 4096, frame = 4096 + 62 + 20;  // RoCE header, preamble and gap
  // Every link direction also carries the ACKs (one 64 B frame per packet, RoCE's default) of
  // the ring flow going the other way.
  const double ack = 64 + 20;
  const double step_bytes = static_cast<double>(grads) / n;
  const double step_s = step_bytes * (frame + ack) / payload * 8 / 100e9;
  const double alpha_s = 2 * 1e-6 + frame * 8 / 100e9;  // two 1 us hops and a store and forward
  const double ring_s = 2 * (n - 1) * (step_s + alpha_s);
  EXPECT_NEAR(got.sec_f(), compute.sec_f() + ring_s, 0.01 * got.sec_f())
      << "compute " << compute.us_f() << " us, ring " << ring_s * 1e6 << " us";
  EXPECT_GT(got, compute);
}

// Overlap hides the buckets behind the last micro-batch's backward: never slower than none.
TEST(Training, BucketsOverlapTheBackward) {
  const std::string p = "tp = 1\npp = 1\ndp = 4\nglobal_batch = 4";
  const Time none = iteration(small(4, p, "dp_overlap = false"));
  const Time overlap = iteration(small(4, p, "dp_overlap = true\nbucket = \"4MB\""));
  EXPECT_LT(overlap, none);
}

// A two-layer model with TP 4 on servers of 4 GPUs, one leaf per server, 100 Gb/s.
std::string servers_of_four(int servers, int dp, const std::string& workload_keys) {
  return fmt::format(R"(
name = "tp"
[simulation]
stop_time = "100s"
[topology]
kind = "leaf_spine"
servers = {0}
gpus_per_server = 4
servers_per_leaf = 1
spines = 2
nic_rate = "100Gbps"
uplink_rate = "100Gbps"
[workload]
kind = "training"
{2}
[workload.model]
layers = 2
hidden = 1024
heads = 8
kv_heads = 8
ffn = 4096
vocab = 0
seq = 512
[workload.parallel]
tp = 4
pp = 1
dp = {1}
global_batch = 2
)",
                     servers, dp, workload_keys);
}

// The distributed optimizer (REFERENCE.md §8.3): ReduceScatter of each gradient bucket during
// backward, the optimizer step on the shard once all of a rank's buckets are in, then the
// AllGather of the updated parameters. Every AllGather depends on the optimizer step of each
// rank of its group, and no AllGather is an input of anything the step waits for.
TEST(Training, TheDistributedOptimizerGathersParametersAfterItsStep) {
  TrainingConfig c = small_config(1, 1, 4, 4);
  c.dp_algorithm = DpAlgorithm::kReduceScatterAllGather;
  c.dp_overlap = true;
  c.bucket_bytes = 4'000'000;
  c.optimizer_time = Time::us(100);
  const TaskGraph g = build_training_graph(c);
  std::map<uint32_t, uint32_t> step;  // rank -> its optimizer node (the 100 us compute)
  int scatters = 0;
  int gathers = 0;
  for (uint32_t i = 0; i < g.nodes.size(); ++i) {
    const GraphNode& n = g.nodes[i];
    if (n.kind == GraphNode::Kind::kCompute && n.duration == Time::us(100)) step[n.rank] = i;
    if (n.kind == GraphNode::Kind::kCollective && n.collective == Collective::kReduceScatter)
      ++scatters;
  }
  ASSERT_EQ(step.size(), 4U);
  for (uint32_t i = 0; i < g.nodes.size(); ++i) {
    const GraphNode& n = g.nodes[i];
    if (n.kind != GraphNode::Kind::kCollective || n.collective != Collective::kAllGather) continue;
    ++gathers;
    for (const uint32_t r : n.group) {
      EXPECT_NE(std::find(n.deps.begin(), n.deps.end(), step.at(r)), n.deps.end())
          << "gather " << i << " does not wait for rank " << r << "'s step";
      EXPECT_GT(i, step.at(r));
    }
  }
  EXPECT_GT(scatters, 1);  // several buckets
  EXPECT_EQ(gathers, scatters);
}

// Tensor parallel inside a server goes over the scale-up fabric: no flow crosses the network.
TEST(Training, TensorParallelInsideAServerStaysOffTheNetwork) {
  fabsim::Run run(load_scenario_text(servers_of_four(2, 2, ""), "tp.toml"));
  const RunResult r = execute_checked(run);
  ASSERT_TRUE(r.complete());
  for (const FlowRecord& f : r.flows) {
    // Only the DP AllReduce, between the two servers (rank r and r + 4).
    EXPECT_EQ(f.spec.src / 4 == f.spec.dst / 4, false) << f.spec.src << " -> " << f.spec.dst;
  }
  EXPECT_FALSE(r.flows.empty());
}

// Channels split a collective into parallel rings with their own connections; over the
// scale-up fabric they share one link, so a TP-only iteration does not get faster with more.
TEST(Training, ChannelsShareTheScaleUpLink) {
  const Time one = iteration(servers_of_four(1, 1, "channels = 1"));
  const Time four = iteration(servers_of_four(1, 1, "channels = 4"));
  EXPECT_NEAR(four.us_f(), one.us_f(), 0.001 * one.us_f());
}

// The training graph gives each process group one communicator: every DP bucket of a rank set
// shares one, TP and DP groups differ, the expert-DP group differs from the dense DP group,
// and pipeline sends have none.
TEST(Training, EachProcessGroupIsOneCommunicator) {
  TrainingConfig c = small_config(2, 2, 4, 8);
  c.model.experts = 4;
  c.model.top_k = 2;
  c.parallel.ep = 2;
  c.bucket_bytes = 1'000'000;  // several buckets per stage
  const TaskGraph g = build_training_graph(c);
  std::map<uint32_t, std::set<std::pair<std::string, std::vector<uint32_t>>>> by_comm;
  std::map<uint32_t, int> uses;
  int sends = 0;
  for (const GraphNode& n : g.nodes) {
    if (n.kind != GraphNode::Kind::kCollective) continue;
    if (n.collective == Collective::kSendRecv) {
      EXPECT_EQ(n.comm, 0U);
      ++sends;
      continue;
    }
    ASSERT_NE(n.comm, 0U);
    std::vector<uint32_t> ranks = n.group;
    std::sort(ranks.begin(), ranks.end());
    by_comm[n.comm].insert({g.categories[n.category], ranks});
    ++uses[n.comm];
  }
  EXPECT_GT(sends, 0);
  std::set<std::pair<std::string, std::vector<uint32_t>>> seen;
  int dp_groups = 0;
  bool several_buckets = false;
  for (const auto& [comm, groups] : by_comm) {
    EXPECT_EQ(groups.size(), 1U) << "communicator " << comm << " mixes groups";
    EXPECT_TRUE(seen.insert(*groups.begin()).second) << "two communicators for one group";
    if (groups.begin()->first == "dp") {
      ++dp_groups;
      several_buckets = several_buckets || uses[comm] > 1;
    }
  }
  // Dense DP groups (one per tp x pp: 4 ranks) and expert-DP groups (d / ep = 2 ranks each).
  EXPECT_EQ(dp_groups, 2 * 2 + 2 * 2 * 2);
  EXPECT_TRUE(several_buckets);

  // With ep = 1 an expert-DP group has the dense DP group's ranks but is its own process
  // group: the expert buckets do not queue behind the dense ones.
  c.parallel.ep = 1;
  const TaskGraph one = build_training_graph(c);
  std::map<std::vector<uint32_t>, std::set<uint32_t>> comms_of_ranks;
  for (const GraphNode& n : one.nodes) {
    if (n.kind != GraphNode::Kind::kCollective || one.categories[n.category] != "dp") continue;
    std::vector<uint32_t> ranks = n.group;
    std::sort(ranks.begin(), ranks.end());
    comms_of_ranks[ranks].insert(n.comm);
  }
  ASSERT_EQ(comms_of_ranks.size(), 4U);  // tp x pp DP groups
  for (const auto& [ranks, comms] : comms_of_ranks) EXPECT_EQ(comms.size(), 2U);
}

// MoE: a Mixtral-like layer with ep = 2 adds the dispatch and combine AllToAll, 4 per layer and
// micro-batch.
TEST(Training, ExpertParallelAddsFourAllToAllsPerLayerAndMicroBatch) {
  TrainingConfig c = small_config(1, 1, 2, 4);
  c.model.experts = 4;
  c.model.top_k = 2;
  c.parallel.ep = 2;
  const TaskGraph g = build_training_graph(c);
  int a2a = 0;
  for (const GraphNode& n : g.nodes) {
    if (n.kind == GraphNode::Kind::kCollective && n.collective == Collective::kAllToAll) ++a2a;
  }
  EXPECT_EQ(a2a, 4 * c.model.layers * c.parallel.micro_batches());
  EXPECT_EQ(g.check(), "");
}

// With expert parallelism a rank holds experts / ep of a layer's experts, and their gradients
// are reduced over the d / ep ranks that hold the same ones; the dense gradients (attention,
// router, norms) over all d (§8.3). Before, every rank reduced all experts' gradients over all
// d: a Mixtral layer with ep = d = 4 moved 10x the data-parallel bytes it should.
TEST(Training, ExpertGradientsAreReducedOverTheirExpertDataParallelGroup) {
  for (const int ep : {2, 4}) {
    TrainingConfig c = small_config(1, 1, 4, 4);
    c.model.experts = 8;
    c.model.top_k = 2;
    c.parallel.ep = ep;
    c.dp_overlap = false;  // one bucket of each kind per stage
    const TaskGraph g = build_training_graph(c);
    const int64_t h = c.model.hidden;
    const int64_t dense = c.model.layers * (c.model.layer_params() - c.model.expert_params());
    const int64_t experts = c.model.layers * (8 / ep) * 3 * h * c.model.ffn;
    std::map<size_t, std::vector<int64_t>> by_group;  // group size -> bucket bytes
    for (const GraphNode& n : g.nodes) {
      if (n.kind == GraphNode::Kind::kCollective && n.collective == Collective::kAllReduceRing) {
        by_group[n.group.size()].push_back(n.bytes);
      }
    }
    EXPECT_EQ(by_group[4], std::vector<int64_t>{dense * c.grad_bytes}) << "ep " << ep;
    if (ep == 4) {
      EXPECT_EQ(by_group.count(1), 0U);  // one rank per group: no expert traffic
      EXPECT_EQ(by_group.size(), 1U);
    } else {
      // Two groups of 2 (dp 0 and 2, dp 1 and 3), each the local experts' gradients.
      EXPECT_EQ(by_group[2], (std::vector<int64_t>(2, experts * c.grad_bytes))) << "ep " << ep;
    }
    EXPECT_EQ(g.check(), "");
  }
}

// Full recomputation replays each layer's forward before its backward, its two TP AllReduces
// included (§8.3; AICB doubles that communication): 6 per layer and micro-batch, not 4.
TEST(Training, RecomputationReplaysTheForwardsAllReduces) {
  for (const bool recompute : {false, true}) {
    TrainingConfig c = small_config(2, 1, 1, 2);
    c.recompute = recompute;
    const TaskGraph g = build_training_graph(c);
    int tp = 0;
    Time compute;
    for (const GraphNode& n : g.nodes) {
      if (n.kind == GraphNode::Kind::kCollective && g.categories[n.category] == "tp") ++tp;
      if (n.kind == GraphNode::Kind::kCompute && n.rank == 0) compute += n.duration;
    }
    EXPECT_EQ(tp, (recompute ? 6 : 4) * c.model.layers * c.parallel.micro_batches());
    // Compute per rank: 3 forwards (4 with recomputation) per layer and micro-batch.
    EXPECT_EQ(compute, layer_forward_time(c) *
                           ((recompute ? 4 : 3) * c.model.layers * c.parallel.micro_batches()));
    EXPECT_EQ(g.check(), "");
  }
}

// TP AllReduces run on the compute stream: the next micro-batch's forward waits for the last
// backward AllReduce of the one before, so with one stage two micro-batches take exactly twice
// one (before, on stage 0 the forward overlapped that AllReduce).
TEST(Training, TheNextMicroBatchWaitsForTheLastBackwardAllReduce) {
  auto run = [](int global_batch) {
    return iteration(
        small(2, fmt::format("tp = 2\npp = 1\ndp = 1\nglobal_batch = {}", global_batch), ""));
  };
  const Time one = run(1);
  const Time two = run(2);
  EXPECT_NEAR(static_cast<double>(two.ps()), 2.0 * static_cast<double>(one.ps()),
              1e-4 * static_cast<double>(one.ps()));
}

TEST(Training, RefusesALayoutThatDoesNotFit) {
  EXPECT_THROW(
      load_scenario_text(small(4, "tp = 2\npp = 1\ndp = 4\nglobal_batch = 8", ""), "big.toml"),
      std::exception);
  EXPECT_THROW(
      load_scenario_text(small(4, "tp = 1\npp = 3\ndp = 1\nglobal_batch = 3", ""), "pp.toml"),
      std::exception);
}

// Megatron splits heads, key-value groups and FFN columns over the TP ranks: tp = 3 with 8
// heads has no layout (it used to validate and divide the FLOPs by 3); tp = 4 does.
TEST(Training, RefusesATensorDegreeThatDoesNotDivideTheHeads) {
  EXPECT_NO_THROW(
      load_scenario_text(small(4, "tp = 4\npp = 1\ndp = 1\nglobal_batch = 1", ""), "tp4.toml"));
  try {
    load_scenario_text(small(3, "tp = 3\npp = 1\ndp = 1\nglobal_batch = 1", ""), "tp3.toml");
    ADD_FAILURE() << "tp = 3 with 8 heads was accepted";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("workload.parallel.tp"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("a divisor of model.heads = 8"), std::string::npos)
        << e.what();
  }
}

// An expert-parallel rank holds experts / ep whole experts: ep must divide the experts.
TEST(Training, RefusesAnExpertDegreeThatDoesNotDivideTheExperts) {
  const std::string layout = "tp = 1\npp = 1\ndp = 4\nep = 4\nglobal_batch = 4";
  std::string six = small(4, layout, "");
  six.replace(six.find("seq = 512"), 9, "seq = 512\nexperts = 6\ntop_k = 2");
  std::string eight = small(4, layout, "");
  eight.replace(eight.find("seq = 512"), 9, "seq = 512\nexperts = 8\ntop_k = 2");
  EXPECT_NO_THROW(load_scenario_text(eight, "eight.toml"));
  try {
    load_scenario_text(six, "six.toml");
    ADD_FAILURE() << "ep = 4 with 6 experts was accepted";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("a divisor of model.experts = 6"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace fabsim
