// Jobs on the network: ring AllReduce and AllToAll against their alpha-beta closed forms in wire
// bytes, dependency order in the flow records, isolation of disjoint jobs, interference on the
// seed-002 2:1 preset, bandwidth definitions, and errors that name the job.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <string>

#include "conserved.h"
#include "report/writers.h"
#include "scenario/runner.h"
#include "scenario/scenario.h"
#include "scenario/sweep.h"

namespace fabsim {
namespace {
using namespace literals;

constexpr int64_t kHdr = 62 + 20;  // header + preamble/IFG bytes per packet
constexpr int64_t kAckWire = 64 + 20;

RunResult run_text(const std::string& toml, const std::vector<std::string>& sets = {}) {
  RunResult r = run_checked(load_scenario_text(toml, "jobs.toml", sets));
  EXPECT_EQ(r.packets_live_at_end, 0U) << "packets leaked from the pool";
  return r;
}

std::string one_switch_job(int hosts, const std::string& gpus, const std::string& type,
                           int64_t bytes, const char* step_latency = "0us") {
  return fmt::format(R"(
[topology]
kind = "single_switch"
hosts = {}
[transport]
kind = "roce"
[workload]
kind = "jobs"
step_latency = "{}"
[[workload.jobs]]
name = "a"
gpus = {}
[[workload.jobs.ops]]
type = "{}"
bytes = {}
)",
                     hosts, step_latency, gpus, type, bytes);
}

// One flow of m bytes on the big switch, while the sender's NIC also returns one ACK per packet
// of the flow it receives: (data + ACK wire bytes)/R, plus the last packet's store-and-forward
// hop and two link delays.
Time flow_time(int64_t m) {
  const int64_t k = (m + 4095) / 4096;
  const int64_t last = m - (k - 1) * 4096;
  const int64_t data = (k - 1) * (4096 + kHdr) + last + kHdr;
  const int64_t acks = k * kAckWire;
  return serialization_delay(data + acks, 100_Gbps) + serialization_delay(last + kHdr, 100_Gbps) +
         2_us;
}

TEST(JobClosedForm, RingAllReduceMatchesAlphaBetaWithin1Percent) {
  for (int n : {4, 8}) {
    for (int64_t S : {int64_t{4} << 20, int64_t{32} << 20}) {
      std::string gpus = "[";
      for (int r = 0; r < n; ++r) gpus += fmt::format("{}{}", r ? ", " : "", r);
      gpus += "]";
      const RunResult r = run_text(one_switch_job(n, gpus, "allreduce_ring", S, "3us"));
      ASSERT_EQ(r.jobs.size(), 1U);
      ASSERT_TRUE(r.jobs[0].done);
      // T = 2(n-1) (alpha + S/n beta): alpha = step latency + path, beta from wire bytes.
      const Time expected = (flow_time(S / n) + 3_us) * (2 * (n - 1));
      const double ratio =
          static_cast<double>(r.jobs[0].ops[0].end.ps()) / static_cast<double>(expected.ps());
      EXPECT_NEAR(ratio, 1.0, 0.01) << "n=" << n << " S=" << S;
      std::printf("[ figures ] ring allreduce n=%d S=%lld: %.3f us, closed form %.3f us\n", n,
                  static_cast<long long>(S), r.jobs[0].ops[0].end.us_f(), expected.us_f());
    }
  }
}

TEST(JobClosedForm, AllToAllWithin2Percent) {
  for (int n : {4, 8}) {
    std::string gpus = "[";
    for (int r = 0; r < n; ++r) gpus += fmt::format("{}{}", r ? ", " : "", r);
    gpus += "]";
    const int64_t S = int64_t{16} << 20;
    const RunResult r = run_text(one_switch_job(n, gpus, "alltoall", S));
    ASSERT_TRUE(r.jobs[0].done);
    // Each NIC sends n-1 flows of S/n and the ACKs of the n-1 it receives, all at once.
    const int64_t m = S / n;
    const int64_t k = (m + 4095) / 4096;
    const int64_t per_flow = k * (4096 + kHdr) - (k * 4096 - m) + k * kAckWire;
    const Time expected = serialization_delay((n - 1) * per_flow, 100_Gbps) +
                          serialization_delay(4096 + kHdr, 100_Gbps) + 2_us;
    const double ratio =
        static_cast<double>(r.jobs[0].jct().ps()) / static_cast<double>(expected.ps());
    EXPECT_NEAR(ratio, 1.0, 0.02) << "n=" << n;
    std::printf("[ figures ] alltoall n=%d S=%lld: %.3f us, closed form %.3f us\n", n,
                static_cast<long long>(S), r.jobs[0].jct().us_f(), expected.us_f());
  }
}

TEST(JobClosedForm, RingPhasesSendRecvAndTreeOnOneSwitch) {
  const std::string gpus = "[0, 1, 2, 3, 4, 5, 6, 7]";
  const int64_t S = int64_t{8} << 20;
  auto jct = [&](const char* type) {
    const RunResult r = run_text(one_switch_job(8, gpus, type, S));
    EXPECT_TRUE(r.jobs[0].done) << type;
    return r.jobs[0].jct();
  };
  // AllGather and ReduceScatter are one ring: n-1 steps of S/n.
  const Time expected_ring = flow_time(S / 8) * 7;
  for (const char* t : {"allgather", "reducescatter"}) {
    const double ratio = static_cast<double>(jct(t).ps()) / static_cast<double>(expected_ring.ps());
    EXPECT_NEAR(ratio, 1.0, 0.01) << t;
  }
  // Pairwise AllToAll: n-1 rounds, each one flow of S/n per rank sent and received.
  const double pw =
      static_cast<double>(jct("alltoall_pairwise").ps()) / static_cast<double>(expected_ring.ps());
  EXPECT_NEAR(pw, 1.0, 0.01);
  // SendRecv: one flow of S, with nothing coming back but its ACKs.
  const int64_t k = S / 4096;
  const Time one = serialization_delay(k * (4096 + kHdr), 100_Gbps) +
                   serialization_delay(4096 + kHdr, 100_Gbps) + 2_us;
  EXPECT_NEAR(static_cast<double>(jct("sendrecv").ps()) / static_cast<double>(one.ps()), 1.0, 0.01);
  // Double binary tree: completes, moves 2(n-1)S, and (unpipelined per chunk, one big switch)
  // is slower than the bandwidth-optimal ring.
  const RunResult tree = run_text(one_switch_job(8, gpus, "allreduce_tree", S));
  ASSERT_TRUE(tree.jobs[0].done);
  int64_t moved = 0;
  for (const auto& f : tree.flows) moved += f.delivered;
  EXPECT_EQ(moved, 2 * 7 * S);
  EXPECT_GT(tree.jobs[0].jct(), jct("allreduce_ring"));
}

TEST(JobOrder, NoStepStartsBeforeItsDependencyFinished) {
  // A ring AllReduce and a pairwise AllToAll across a congested 1.5:1 leaf-spine, 8 jobs.
  const std::string toml = R"(
[topology]
kind = "leaf_spine"
servers = 4
gpus_per_server = 8
spines = 3
[transport]
kind = "roce"
[workload]
kind = "jobs"
step_latency = "2us"
[[workload.jobs]]
name = "ring"
count = 4
placement = "gpu_of_each_server"
[[workload.jobs.ops]]
type = "allreduce_ring"
bytes = "2MiB"
[[workload.jobs]]
name = "pairs"
count = 4
placement = "gpu_of_each_server"
gpu = 4
[[workload.jobs.ops]]
type = "alltoall_pairwise"
bytes = "2MiB"
)";
  const RunResult r = run_text(toml);
  ASSERT_TRUE(r.all_done);
  // Parse the per-flow CSV, as a user would.
  const std::string csv = flows_csv(r);
  struct Row {
    int64_t start, end;
    int job, op, step, src, dst;
  };
  std::vector<Row> rows;
  size_t pos = csv.find('\n') + 1;
  while (pos < csv.size()) {
    const size_t eol = csv.find('\n', pos);
    std::vector<std::string> f;
    size_t a = pos;
    while (a <= eol) {
      const size_t b = std::min(csv.find(',', a), eol);
      f.push_back(csv.substr(a, b - a));
      a = b + 1;
    }
    rows.push_back({std::stoll(f[4]), std::stoll(f[6]), std::stoi(f[14]), std::stoi(f[15]),
                    std::stoi(f[16]), std::stoi(f[17]), std::stoi(f[18])});
    pos = eol + 1;
  }
  ASSERT_EQ(rows.size(), 4U * 24U + 4U * 12U);
  int checked = 0;
  for (const auto& x : rows) {
    if (x.step == 0) continue;
    const bool ring = x.job < 4;
    for (const auto& d : rows) {
      if (d.job != x.job || d.op != x.op || d.step != x.step - 1) continue;
      // Ring: what rank r forwards at step s arrived from r-1 at step s-1. Pairwise: the
      // rank's previous send and previous receive.
      const bool dep = ring ? d.dst == x.src : (d.src == x.src || d.dst == x.src);
      if (!dep) continue;
      EXPECT_GE(x.start, d.end + 2'000'000) << "job " << x.job << " step " << x.step;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 4 * 4 * 5 + 4 * 4 * 2 * 2);
}

std::string two_jobs(bool a, bool b) {
  std::string s = R"(
[topology]
kind = "single_switch"
hosts = 8
[transport]
kind = "roce"
[workload]
kind = "jobs"
)";
  if (a)
    s += "[[workload.jobs]]\nname = \"a\"\ngpus = [0, 1, 2, 3]\n[[workload.jobs.ops]]\ntype = "
         "\"allreduce_ring\"\nbytes = \"8MiB\"\n";
  if (b)
    s += "[[workload.jobs]]\nname = \"b\"\ngpus = [4, 5, 6, 7]\n[[workload.jobs.ops]]\ntype = "
         "\"alltoall\"\nbytes = \"8MiB\"\n";
  return s;
}

TEST(JobIsolation, DisjointJobsOnOneSwitchRunAsIfAlone) {
  const RunResult alone_a = run_text(two_jobs(true, false));
  const RunResult alone_b = run_text(two_jobs(false, true));
  const RunResult both = run_text(two_jobs(true, true));
  ASSERT_EQ(both.jobs.size(), 2U);
  const auto near = [](Time x, Time y) {
    return std::abs(static_cast<double>(x.ps()) / static_cast<double>(y.ps()) - 1.0);
  };
  EXPECT_LT(near(both.jobs[0].jct(), alone_a.jobs[0].jct()), 0.01);
  EXPECT_LT(near(both.jobs[1].jct(), alone_b.jobs[0].jct()), 0.01);
}

TEST(JobInterference, EightJobsOnThe2to1PresetAreSlowerThanOneAlone) {
  const std::string preset = std::string(FABSIM_SOURCE_DIR) + "/scenarios/seed002-roce-2to1.toml";
  const std::vector<std::string> common = {"sweep.collectives=[\"allreduce_ring\"]",
                                           "sweep.sizes=[\"4MiB\"]", "sweep.seeds=[1, 2, 3, 4, 5]"};
  auto eight = common;
  auto one = common;
  one.push_back("workload.jobs[0].count=1");
  const auto rows8 = aggregate(run_sweep_checked(load_scenario(preset, eight), 0, false, nullptr));
  const auto rows1 = aggregate(run_sweep_checked(load_scenario(preset, one), 0, false, nullptr));
  ASSERT_EQ(rows8.size(), 1U);
  ASSERT_TRUE(rows8[0].all_done && rows1[0].all_done);
  // The median seed's slowest job is slower than a job alone (momentary queues at shared
  // uplinks draw CNPs), and ECMP collisions at some seeds of the set (2 and 3) double it.
  EXPECT_GT(rows8[0].max_jct_us.median, rows1[0].max_jct_us.median);
  EXPECT_GT(rows8[0].max_jct_us.max, rows1[0].max_jct_us.median * 1.5);
  EXPECT_EQ(rows1[0].max_jct_us.min, rows1[0].max_jct_us.max);  // alone, seeds do not matter
  std::printf("[ figures ] 2:1 preset, ring allreduce 4 MiB, seeds 1-5: 8 jobs max JCT median "
              "%.1f us (max %.1f us), one job alone %.1f us\n",
              rows8[0].max_jct_us.median, rows8[0].max_jct_us.max, rows1[0].max_jct_us.median);
}

TEST(JobMetrics, AlgbwAndBusbwByHand) {
  RunResult r;
  JobResult j;
  j.name = "x";
  j.ranks = 4;
  j.done = true;
  j.first_send = 10_us;
  j.end = 510_us;
  OpResult op;
  op.collective = Collective::kAllReduceRing;
  op.bytes = 4 << 20;
  op.first_send = 10_us;
  op.end = 510_us;
  op.done = true;
  j.ops.push_back(op);
  r.jobs.push_back(j);
  JobResult k = j;
  k.name = "y";
  k.end = 310_us;
  r.jobs.push_back(k);
  const auto s = summarize_jobs(r);
  EXPECT_EQ(s.max_jct, 500_us);
  EXPECT_EQ(s.mean_jct, 400_us);
  // algbw = 4,194,304 B / 500 us = 8.388608 GB/s; busbw = x 2(n-1)/n = 1.5.
  EXPECT_NEAR(s.algbw_gbs, 8.388608, 1e-9);
  EXPECT_NEAR(s.busbw_gbs, 12.582912, 1e-9);
  const auto j2 = summary_json(r)["jobs"][0]["ops"][0];
  EXPECT_NEAR(j2["algbw_GBps"].get<double>(), 8.388608, 1e-9);
}

// Two ring AllReduces of a 4-rank job, 1 MiB then 3 MiB, in 400 us: op time 200 us; algbw =
// the mean size, 2 MiB = 2,097,152 B, over 200 us = 10.48576 GB/s (the first op's size would
// give 5.24288); busbw x 1.5. An AllToAll (factor (n-1)/n = 0.75) of 2 MiB in place of the
// second op weighs the factors by bytes: (1 MiB x 1.5 + 2 MiB x 0.75) / 3 MiB = 1.0, algbw =
// 1.5 MiB / 200 us = 7.86432 GB/s.
TEST(JobMetrics, MixedOpsWeighTheirBytesAndBusFactors) {
  JobResult j;
  j.ranks = 4;
  j.done = true;
  j.first_send = 0_us;
  j.end = 400_us;
  OpResult op;
  op.collective = Collective::kAllReduceRing;
  op.bytes = 1 << 20;
  j.ops.push_back(op);
  op.bytes = 3 << 20;
  j.ops.push_back(op);
  OpResult gap;
  gap.compute = true;
  gap.bytes = 0;
  j.ops.push_back(gap);  // compute gaps count for neither
  JobBandwidth b = job_bandwidth(j);
  EXPECT_EQ(b.collectives, 2);
  EXPECT_EQ(b.op_time, 200_us);
  EXPECT_NEAR(b.algbw_gbs, 10.48576, 1e-9);
  EXPECT_NEAR(b.busbw_gbs, 1.5 * 10.48576, 1e-9);
  j.ops[1].collective = Collective::kAllToAll;
  j.ops[1].bytes = 2 << 20;
  b = job_bandwidth(j);
  EXPECT_NEAR(b.algbw_gbs, 7.86432, 1e-9);
  EXPECT_NEAR(b.busbw_gbs, 7.86432, 1e-9);
}

// A run stopped early: job a sent at 10 us and is not done at 200 us (JCT so far 190 us, a
// lower bound); job b was still computing and never sent (0, not end - Time::max()). Neither
// has an op time or a bandwidth, and summary.json gives them none, nor b a first send.
TEST(JobMetrics, AnUnfinishedJobHasNoBandwidthAndOneThatNeverSentNoNegativeJct) {
  RunResult r;
  r.end_time = 200_us;
  JobResult a;
  a.name = "a";
  a.ranks = 4;
  a.first_send = 10_us;
  OpResult op;
  op.collective = Collective::kAllReduceRing;
  op.bytes = 1 << 20;
  a.ops.push_back(op);
  r.jobs.push_back(a);
  JobResult b = a;
  b.name = "b";
  b.first_send = Time::max();
  r.jobs.push_back(b);
  const auto s = summarize_jobs(r);
  EXPECT_FALSE(s.all_done);
  EXPECT_EQ(s.max_jct, 190_us);
  EXPECT_EQ(s.mean_jct, 95_us);
  EXPECT_EQ(s.op_time, Time());
  EXPECT_EQ(s.algbw_gbs, 0);
  EXPECT_EQ(job_bandwidth(a).collectives, 0);
  const auto j = summary_json(r);
  EXPECT_TRUE(j["jobs_summary"]["algbw_GBps"].is_null());
  EXPECT_TRUE(j["jobs_summary"]["op_time_ps"].is_null());
  EXPECT_TRUE(j["jobs"][1]["first_send_ps"].is_null());
  EXPECT_TRUE(j["jobs"][1]["jct_ps"].is_null());
  EXPECT_TRUE(j["jobs"][0]["ops"][0]["jct_ps"].is_null());  // the op is not done either
  EXPECT_TRUE(j["jobs"][0]["ops"][0]["end_ps"].is_null());
  EXPECT_FALSE(j["jobs"][0]["ops"][0].contains("algbw_GBps"));
  EXPECT_EQ(j["jobs"][0]["first_send_ps"], (10_us).ps());
  EXPECT_TRUE(j["flows"]["fct_p50_ps"].is_null());  // no flow completed
}

// Output requests that would produce nothing say so (the run's warnings, summary.json's
// "warnings"): a packet trace of a jobs workload (its flows are made as it goes), trace_flows
// ids past the workload's flows, and a time series whose sample_ports match no port (a single
// switch has no uplinks).
TEST(OutputRequests, ThatWouldProduceNothingWarn) {
  const std::string jobs = R"(
[topology]
kind = "single_switch"
hosts = 4
[workload]
kind = "jobs"
[[workload.jobs]]
placement = "block"
ranks = 4
[[workload.jobs.ops]]
type = "allreduce_ring"
bytes = "64KiB"
[output]
trace = true
)";
  RunResult r = run_checked(load_scenario_text(jobs, "j.toml"));
  ASSERT_EQ(r.warnings.size(), 1U);
  EXPECT_NE(r.warnings[0].find("key 'output.trace'"), std::string::npos) << r.warnings[0];
  EXPECT_TRUE(r.trace.empty());
  const std::string flows = R"(
[topology]
kind = "single_switch"
hosts = 4
[workload]
kind = "flows"
[[workload.flows]]
src = 0
dst = 1
bytes = "64KiB"
[output]
trace = true
trace_flows = [0, 7]
sample_interval = "10us"
)";
  r = run_checked(load_scenario_text(flows, "f.toml"));
  ASSERT_EQ(r.warnings.size(), 2U);
  EXPECT_NE(r.warnings[0].find("key 'output.sample_interval'"), std::string::npos) << r.warnings[0];
  EXPECT_NE(r.warnings[1].find("key 'output.trace_flows': no flow 7 (the workload has 1 flows"),
            std::string::npos)
      << r.warnings[1];
  EXPECT_FALSE(r.trace.empty());  // flow 0 is traced
  // The loader's warnings (printed when the scenario is read) are in the result too, first.
  std::string shared = jobs;
  const std::string block = "placement = \"block\"\nranks = 4";
  shared.replace(shared.find(block), block.size(), "gpus = [0, 1]");
  shared += "[[workload.jobs]]\ngpus = [1, 2]\n[[workload.jobs.ops]]\ntype = \"alltoall\"\n"
            "bytes = \"64KiB\"\n";
  r = run_checked(load_scenario_text(shared, "s.toml"));
  ASSERT_EQ(r.warnings.size(), 2U);
  EXPECT_NE(r.warnings[0].find("shares GPU 1"), std::string::npos) << r.warnings[0];
  EXPECT_NE(summary_json(r)["warnings"][0].get<std::string>().find("shares GPU 1"),
            std::string::npos);
}

TEST(JobMetrics, SpreadTakesMedianMinMax) {
  const auto odd = spread({5, 1, 3});
  EXPECT_EQ(odd.median, 3);
  EXPECT_EQ(odd.min, 1);
  EXPECT_EQ(odd.max, 5);
  EXPECT_EQ(spread({4, 1, 3, 2}).median, 2.5);
}

TEST(JobIterations, ComputeGapsAndIterationTimes) {
  const std::string toml = R"(
[topology]
kind = "single_switch"
hosts = 4
[transport]
kind = "roce"
[workload]
kind = "jobs"
[[workload.jobs]]
name = "train"
gpus = [0, 1, 2, 3]
iterations = 3
[[workload.jobs.ops]]
type = "compute"
duration = "50us"
[[workload.jobs.ops]]
type = "allreduce_ring"
bytes = "1MiB"
)";
  const RunResult r = run_text(toml);
  ASSERT_TRUE(r.jobs[0].done);
  ASSERT_EQ(r.jobs[0].iteration_times.size(), 3U);
  ASSERT_EQ(r.jobs[0].ops.size(), 6U);
  const Time allreduce = r.jobs[0].ops[1].end - r.jobs[0].ops[1].start;
  for (const Time t : r.jobs[0].iteration_times) EXPECT_EQ(t, 50_us + allreduce);
  EXPECT_EQ(r.jobs[0].ops[0].start, Time());
  EXPECT_EQ(r.jobs[0].ops[2].start, r.jobs[0].ops[1].end);  // iteration 2 starts at once
  EXPECT_EQ(r.end_time, (50_us + allreduce) * 3);
}

std::string bad_job(const std::string& job_body) {
  return "[topology]\nkind = \"single_switch\"\nhosts = 8\n[workload]\nkind = \"jobs\"\n"
         "[[workload.jobs]]\nname = \"bert\"\n" +
         job_body;
}

std::string error_of(const std::string& toml) {
  try {
    load_scenario_text(toml, "bad.toml");
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

TEST(JobErrors, NameTheJob) {
  const std::string op = "[[workload.jobs.ops]]\ntype = \"alltoall\"\nbytes = \"1MiB\"\n";
  auto e = error_of(bad_job("gpus = [0, 1, 1]\n" + op));
  EXPECT_NE(e.find("'bert'"), std::string::npos) << e;
  EXPECT_NE(e.find("GPU 1"), std::string::npos) << e;
  e = error_of(bad_job("gpus = [0, 99]\n" + op));
  EXPECT_NE(e.find("'bert'"), std::string::npos) << e;
  EXPECT_NE(e.find("99"), std::string::npos) << e;
  EXPECT_NE(e.find("does not exist"), std::string::npos) << e;
  e = error_of(bad_job("gpus = []\n" + op));
  EXPECT_NE(e.find("'bert' is empty"), std::string::npos) << e;
  e = error_of(bad_job("gpus = [0, 1]\n[[workload.jobs.ops]]\ntype = \"alltoall\"\nbytes = 0\n"));
  EXPECT_NE(e.find("'bert'"), std::string::npos) << e;
  EXPECT_NE(e.find("workload.jobs[0].ops[0].bytes"), std::string::npos) << e;
  e = error_of(bad_job("gpus = [0, 1]\n"));
  EXPECT_NE(e.find("'bert'"), std::string::npos) << e;
  e = error_of(bad_job("gpus = [0, 1]\n[[workload.jobs.ops]]\ntype = \"allscatter\"\nbytes = 1\n"));
  EXPECT_NE(e.find("'bert'"), std::string::npos) << e;
  e = error_of(
      bad_job("gpus = [0, 1]\n[[workload.jobs.ops]]\ntype = \"alltoall\"\nbytes = \"$size\"\n"));
  EXPECT_NE(e.find("sweep.sizes"), std::string::npos) << e;
}

}  // namespace
}  // namespace fabsim
