// The embedding API (api/fabsim_api.h; issue 19 item 5; docs/EMBEDDING.md): the shipped example
// and traces generated from jobs replay through the API to exactly the flows, job times, events
// and ledger of the `jobs` workload run of the same scenario; the receive rule (before or after
// arrival), matching in issue order, timers and the clock, several jobs at once, and errors.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <fstream>  // the shipped example
#include <sstream>  // traces from text
#include <string>
#include <vector>

#include "api/fabsim_api.h"
#include "conserved.h"
#include "examples/embed/trace.h"
#include "helpers.h"
#include "scenario/runner.h"
#include "workload/collective.h"

namespace fabsim {
namespace {
using namespace literals;

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string example(const std::string& file) {
  return std::string(FABSIM_SOURCE_DIR) + "/examples/embed/" + file;
}

// The trace that makes the embedding API do what JobRunner does for `jobs` (workload/job.cpp):
// per op instance k, a recv and a send per transfer of the expanded collective (the recvs all
// posted at the start, the sends in transfer order, each after the recvs of its dependencies,
// the first ones after the previous op), then a wait for every recv: the op's end. A compute op
// is a calc after the previous op. Flows carry op = k and the transfer's step, as JobRunner's.
std::string trace_of(const std::vector<JobSpec>& jobs, Time latency) {
  std::string t = fmt::format("latency {}ps\n", latency.ps());
  for (const JobSpec& job : jobs) {
    std::string hosts;
    for (auto g : job.gpus) hosts += fmt::format("{}{}", hosts.empty() ? "" : ",", g);
    t += fmt::format("job {} {} start={}ps\n", job.name, hosts, job.start.ps());
    const int n = static_cast<int>(job.gpus.size());
    int k = 0;
    int tag = 0;
    std::string prev;  // the previous op's end
    for (int it = 0; it < job.iterations; ++it) {
      for (const OpSpec& op : job.ops) {
        const std::string after = prev.empty() ? "" : " after=" + prev;
        if (op.compute) {
          t += fmt::format("c{} 0 calc {}ps{}\n", k, op.duration.ps(), after);
          prev = fmt::format("c{}", k++);
          continue;
        }
        const auto plan = expand_collective(op.collective, n, op.bytes, op.options);
        std::string recvs;
        for (size_t i = 0; i < plan.size(); ++i) {
          t += fmt::format("r{}.{} {} recv {} {} tag={}\n", k, i, plan[i].dst, plan[i].src,
                           plan[i].bytes, tag + static_cast<int>(i));
          recvs += fmt::format("{}r{}.{}", recvs.empty() ? "" : ",", k, i);
        }
        for (size_t i = 0; i < plan.size(); ++i) {
          std::string deps;
          for (auto d : plan[i].deps)
            deps += fmt::format("{}r{}.{}", deps.empty() ? "" : ",", k, d);
          if (plan[i].deps.empty()) deps = prev;
          t += fmt::format("s{}.{} {} send {} {} tag={} op={} step={}{}\n", k, i, plan[i].src,
                           plan[i].dst, plan[i].bytes, tag + static_cast<int>(i), k, plan[i].step,
                           deps.empty() ? "" : " after=" + deps);
        }
        t += fmt::format("e{} 0 wait after={}\n", k, recvs);
        prev = fmt::format("e{}", k++);
        tag += static_cast<int>(plan.size());
      }
    }
  }
  return t;
}

// Replays `trace` through the API on `network` (a scenario without a workload).
RunResult replay(const std::string& network, const std::string& trace_text) {
  Backend net(load_embedded_scenario_text(network, "embed.toml"));
  std::istringstream in(trace_text);
  const Trace trace = parse_trace(in, "embed.trace");
  TraceDriver driver(net, trace);
  net.run();
  EXPECT_EQ(driver.ops_done(), driver.ops());
  EXPECT_EQ(net.unmatched_recvs(), 0U);
  EXPECT_EQ(net.unclaimed_messages(), 0U);
  RunResult r = net.finish();
  expect_conserved(r);
  return r;
}

// Every figure a flow and a job have, the events and the ledger: identical.
void expect_same(const RunResult& jobs, const RunResult& api) {
  ASSERT_EQ(jobs.flows.size(), api.flows.size());
  for (size_t i = 0; i < jobs.flows.size(); ++i) {
    const FlowRecord& a = jobs.flows[i];
    const FlowRecord& b = api.flows[i];
    SCOPED_TRACE(fmt::format("flow {}", i));
    EXPECT_EQ(a.spec.src, b.spec.src);
    EXPECT_EQ(a.spec.dst, b.spec.dst);
    EXPECT_EQ(a.spec.bytes, b.spec.bytes);
    EXPECT_EQ(a.spec.start, b.spec.start);
    EXPECT_EQ(a.spec.tclass, b.spec.tclass);
    EXPECT_EQ(a.spec.job, b.spec.job);
    EXPECT_EQ(a.spec.op, b.spec.op);
    EXPECT_EQ(a.spec.step, b.spec.step);
    EXPECT_EQ(a.spec.src_rank, b.spec.src_rank);
    EXPECT_EQ(a.spec.dst_rank, b.spec.dst_rank);
    EXPECT_EQ(a.first_send, b.first_send);
    EXPECT_EQ(a.end, b.end);
    EXPECT_EQ(a.packets_sent, b.packets_sent);
    EXPECT_EQ(a.retransmissions, b.retransmissions);
    EXPECT_EQ(a.ecn_marked, b.ecn_marked);
  }
  ASSERT_EQ(jobs.jobs.size(), api.jobs.size());
  for (size_t j = 0; j < jobs.jobs.size(); ++j) {
    SCOPED_TRACE(fmt::format("job {}", j));
    EXPECT_EQ(jobs.jobs[j].name, api.jobs[j].name);
    EXPECT_EQ(jobs.jobs[j].ranks, api.jobs[j].ranks);
    EXPECT_TRUE(jobs.jobs[j].done);
    EXPECT_TRUE(api.jobs[j].done);
    EXPECT_EQ(jobs.jobs[j].first_send, api.jobs[j].first_send);
    EXPECT_EQ(jobs.jobs[j].end, api.jobs[j].end);
  }
  EXPECT_EQ(jobs.events, api.events);
  EXPECT_EQ(jobs.end_time, api.end_time);
  EXPECT_TRUE(api.all_done);
  EXPECT_EQ(jobs.ledger.total().injected, api.ledger.total().injected);
  EXPECT_EQ(jobs.ledger.total().delivered, api.ledger.total().delivered);
  EXPECT_EQ(jobs.ledger.total().in_flight, api.ledger.total().in_flight);
  EXPECT_EQ(jobs.transport_counters, api.transport_counters);
}

// The `jobs` workload of one ring AllReduce of 4 MiB per job, as ring.trace and two_jobs.trace
// write them out by hand.
constexpr const char* kRingJobA = R"(
[[workload.jobs]]
name = "a"
gpus = [0, 4, 8, 12]
[[workload.jobs.ops]]
type = "allreduce_ring"
bytes = "4MiB"
)";
constexpr const char* kRingJobB = R"(
[[workload.jobs]]
name = "b"
gpus = [1, 5, 9, 13]
[[workload.jobs.ops]]
type = "allreduce_ring"
bytes = "4MiB"
)";

TEST(Embed, TheShippedExampleMatchesTheJobsRunToThePicosecond) {
  const std::string network = read_file(example("ring.toml"));
  ASSERT_FALSE(network.empty());
  const std::string jobs_toml = network + "\n[workload]\nkind = \"jobs\"\n" + kRingJobA;
  const RunResult jobs = run_checked(load_scenario_text(jobs_toml, "ring-jobs.toml"));
  const RunResult api = replay(network, read_file(example("ring.trace")));
  expect_same(jobs, api);
  ASSERT_EQ(api.flows.size(), 24U);
  std::printf("[ figures ] ring.trace: JCT %.3f us through the API, %.3f us as a jobs run; "
              "%llu events each\n",
              api.jobs[0].jct().us_f(), jobs.jobs[0].jct().us_f(),
              static_cast<unsigned long long>(api.events));
}

TEST(Embed, TwoJobsAtOnceMatchTheJobsRun) {
  const std::string network = read_file(example("ring.toml"));
  const std::string jobs_toml = network + "\n[workload]\nkind = \"jobs\"\n" + kRingJobA + kRingJobB;
  const RunResult jobs = run_checked(load_scenario_text(jobs_toml, "two-jobs.toml"));
  const RunResult api = replay(network, read_file(example("two_jobs.trace")));
  expect_same(jobs, api);
  ASSERT_EQ(api.jobs.size(), 2U);
  // Each flow carries its own job's id and ranks, and stays on that job's hosts.
  for (const FlowRecord& f : api.flows) {
    ASSERT_TRUE(f.spec.job == 0 || f.spec.job == 1);
    EXPECT_EQ(f.spec.src % 4, static_cast<uint32_t>(f.spec.job));
    EXPECT_EQ(f.spec.src, static_cast<uint32_t>(f.spec.src_rank * 4 + f.spec.job));
    EXPECT_EQ(f.spec.dst, static_cast<uint32_t>(f.spec.dst_rank * 4 + f.spec.job));
  }
  std::printf("[ figures ] two_jobs.trace: JCT a %.3f us, b %.3f us (ring.trace alone: see "
              "above)\n",
              api.jobs[0].jct().us_f(), api.jobs[1].jct().us_f());
}

// Traces written from the jobs workload's own plan replay to the same run, over collectives
// with several dependencies (tree), pairwise rounds, compute gaps, iterations, a step latency,
// transports and two jobs on shared hosts.
TEST(Embed, TracesOfJobsReplayToTheSameRun) {
  struct Case {
    const char* what;
    std::string network;
    std::string workload;
  };
  const std::string one_switch = R"(
[topology]
kind = "single_switch"
hosts = 8
[transport]
kind = "datagram"
)";
  const std::string leaf_spine_roce = R"(
[topology]
kind = "leaf_spine"
servers = 4
gpus_per_server = 2
spines = 2
uplink_rate = "100Gbps"
[transport]
kind = "roce"
)";
  const std::vector<Case> cases = {
      {"tree allreduce, datagram, step latency", one_switch, R"(
[workload]
kind = "jobs"
step_latency = "3us"
tree_chunk = "128KiB"
[[workload.jobs]]
name = "t"
gpus = [0, 1, 2, 3, 4, 5, 6]
[[workload.jobs.ops]]
type = "allreduce_tree"
bytes = "1MiB"
)"},
      {"ring, compute, pairwise alltoall, 2 iterations, roce", leaf_spine_roce, R"(
[workload]
kind = "jobs"
step_latency = "1us"
[[workload.jobs]]
name = "m"
gpus = [0, 2, 4, 6]
iterations = 2
[[workload.jobs.ops]]
type = "compute"
duration = "5us"
[[workload.jobs.ops]]
type = "allreduce_ring"
bytes = "1MiB"
[[workload.jobs.ops]]
type = "alltoall_pairwise"
bytes = "512KiB"
)"},
      {"two jobs on shared hosts, alltoall and allgather, roce", leaf_spine_roce, R"(
[workload]
kind = "jobs"
[[workload.jobs]]
name = "x"
gpus = [0, 1, 2, 3]
[[workload.jobs.ops]]
type = "alltoall"
bytes = "1MiB"
[[workload.jobs]]
name = "y"
gpus = [3, 2, 5, 6, 7]
start = "2us"
[[workload.jobs.ops]]
type = "allgather"
bytes = "2MiB"
[[workload.jobs.ops]]
type = "sendrecv"
bytes = "64KiB"
src_rank = 4
dst_rank = 0
)"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    const ScenarioConfig cfg = load_scenario_text(c.network + c.workload, "jobs.toml");
    Rng rng(1, 0);
    const std::vector<JobSpec> jobs =
        cfg.workload.kind->plan(cfg.workload.config, cfg.topology.hosts(), rng).jobs;
    ASSERT_FALSE(jobs.empty());
    const RunResult expected = run_checked(cfg);
    const RunResult api = replay(c.network, trace_of(jobs, jobs[0].step_latency));
    expect_same(expected, api);
    std::printf("[ figures ] %s: %zu flows, max end %.3f us, %llu events, identical\n", c.what,
                api.flows.size(), api.end_time.us_f(), static_cast<unsigned long long>(api.events));
  }
}

// --- the receive rule, matching, timers -------------------------------------------------------

constexpr const char* kTwoHosts = R"(
name = "embed-unit"
[topology]
kind = "single_switch"
hosts = 4
[transport]
kind = "roce"
)";

// What the handlers saw: when each ran, in order.
struct Seen {
  explicit Seen(Backend* n) : net(n) {}
  Backend* net;
  std::vector<std::pair<char, Time>> calls;  // 's' send handler, 'r' recv handler, 't' timer
  bool in_call = false;                      // inside an API call of the test itself
  bool ran_inside_call = false;
};
void on_sent(void* arg) {
  auto* s = static_cast<Seen*>(arg);
  s->calls.emplace_back('s', s->net->now());
  s->ran_inside_call = s->ran_inside_call || s->in_call;
}
void on_received(void* arg) {
  auto* s = static_cast<Seen*>(arg);
  s->calls.emplace_back('r', s->net->now());
  s->ran_inside_call = s->ran_inside_call || s->in_call;
}

TEST(Embed, ARecvPostedBeforeArrivalRunsAtDeliveryAfterTheSendHandler) {
  Backend net(load_embedded_scenario_text(kTwoHosts, "unit.toml"));
  Seen seen{&net};
  const JobId job = net.add_job("p", {2, 1});
  net.recv(job, 0, 1, 1 << 20, 5, {on_received, &seen});
  const MessageId m = net.send(job, 0, 1, 1 << 20, 5, {on_sent, &seen});
  EXPECT_EQ(net.unmatched_recvs(), 0U);
  EXPECT_EQ(net.unclaimed_messages(), 0U);
  net.run();
  ASSERT_EQ(seen.calls.size(), 2U);
  const Time end = net.flow(m).end;
  EXPECT_EQ(seen.calls[0], std::make_pair('s', end));
  EXPECT_EQ(seen.calls[1], std::make_pair('r', end));
  EXPECT_TRUE(net.message(m).delivered);
  EXPECT_TRUE(net.message(m).received);
  // The flow is tagged as the job layer tags one: job, ranks, hosts.
  const FlowSpec& f = net.flow(m).spec;
  EXPECT_EQ(f.job, 0);
  EXPECT_EQ(f.src_rank, 0);
  EXPECT_EQ(f.dst_rank, 1);
  EXPECT_EQ(f.src, 2U);
  EXPECT_EQ(f.dst, 1U);
  EXPECT_EQ(f.start, Time());
  expect_conserved(net.finish());
}

TEST(Embed, ARecvPostedAfterArrivalRunsInItsOwnEventWhenPosted) {
  Backend net(load_embedded_scenario_text(kTwoHosts, "unit.toml"));
  Seen seen{&net};
  const JobId job = net.add_job("p", {0, 1});
  const MessageId m = net.send(job, 0, 1, 100000, 0, {on_sent, &seen});
  net.run();
  ASSERT_TRUE(net.message(m).delivered);
  const Time end = net.flow(m).end;
  EXPECT_EQ(net.unclaimed_messages(), 1U);  // delivered, no recv yet
  // Later, from outside the loop: the handler does not run inside recv(), but in the next run,
  // at the time of the call.
  const Time later = net.now() + 10_us;
  net.run_until(later);
  EXPECT_EQ(net.now(), later);
  seen.in_call = true;
  net.recv(job, 0, 1, 100000, 0, {on_received, &seen});
  seen.in_call = false;
  EXPECT_EQ(seen.calls.size(), 1U);
  EXPECT_EQ(net.unclaimed_messages(), 0U);
  net.run();
  ASSERT_EQ(seen.calls.size(), 2U);
  EXPECT_EQ(seen.calls[0], std::make_pair('s', end));
  EXPECT_EQ(seen.calls[1], std::make_pair('r', later));
  EXPECT_FALSE(seen.ran_inside_call);
  expect_conserved(net.finish());
}

// From a timer (inside the loop): a recv posted after arrival still waits for its own event.
struct LateRecv {
  Backend* net;
  JobId job;
  Seen* seen;
};
void post_late_recv(void* arg) {
  auto* l = static_cast<LateRecv*>(arg);
  l->seen->in_call = true;
  l->net->recv(l->job, 1, 0, 4096, 9, {on_received, l->seen});
  l->seen->in_call = false;
}

TEST(Embed, ARecvPostedFromAHandlerAfterArrivalRunsAtThatTime) {
  Backend net(load_embedded_scenario_text(kTwoHosts, "unit.toml"));
  Seen seen{&net};
  const JobId job = net.add_job("p", {0, 3});
  const MessageId m = net.send(job, 1, 0, 4096, 9, {on_sent, &seen});
  LateRecv late{&net, job, &seen};
  net.schedule(50_us, {post_late_recv, &late});
  net.run();
  ASSERT_EQ(seen.calls.size(), 2U);
  EXPECT_LT(net.flow(m).end, 50_us);
  EXPECT_EQ(seen.calls[1], std::make_pair('r', 50_us));
  EXPECT_FALSE(seen.ran_inside_call);
  expect_conserved(net.finish());
}

TEST(Embed, ARecvPostedWhileTheMessageIsInFlightRunsAtDelivery) {
  Backend net(load_embedded_scenario_text(kTwoHosts, "unit.toml"));
  Seen seen{&net};
  const JobId job = net.add_job("p", {0, 1});
  const MessageId m = net.send(job, 0, 1, 1 << 20, 0, {on_sent, &seen});
  net.run_until(10_us);  // the message takes about 85 us at 100G
  ASSERT_FALSE(net.message(m).delivered);
  net.recv(job, 0, 1, 1 << 20, 0, {on_received, &seen});
  net.run();
  ASSERT_EQ(seen.calls.size(), 2U);
  EXPECT_EQ(seen.calls[1], std::make_pair('r', net.flow(m).end));
  expect_conserved(net.finish());
}

// The k-th recv of (job, src, dst, bytes, tag) takes the k-th send of it, in call order; a recv
// of another size or tag, or of another job, does not match.
struct Order {
  Backend* net;
  std::vector<int> received;  // which recv ran, in order
};
template <int K> void got(void* arg) {
  static_cast<Order*>(arg)->received.push_back(K);
}

TEST(Embed, ReceivesMatchSendsInIssueOrderPerJobRanksTagAndSize) {
  Backend net(load_embedded_scenario_text(kTwoHosts, "unit.toml"));
  Order order{&net, {}};
  const JobId a = net.add_job("a", {0, 1});
  const JobId b = net.add_job("b", {0, 1});  // the same hosts, its own ranks
  // Two sends of one key, the second starting 5 us later so that it arrives last; then a send
  // of another tag, one of another size, one of another job.
  const MessageId first = net.send(a, 0, 1, 200000, 1);
  const MessageId second = net.send(a, 0, 1, 200000, 1, {}, SendOptions{5_us, 0, 0});
  net.send(a, 0, 1, 200000, 2);
  net.send(a, 0, 1, 100000, 1);
  net.send(b, 0, 1, 200000, 1);
  net.recv(a, 0, 1, 200000, 1, {got<1>, &order});  // takes `first`
  net.recv(a, 0, 1, 200000, 1, {got<2>, &order});  // takes `second`
  net.recv(a, 0, 1, 200000, 3, {got<3>, &order});  // no such send
  net.recv(b, 1, 0, 200000, 1, {got<4>, &order});  // wrong direction in job b
  EXPECT_EQ(net.unmatched_recvs(), 2U);
  EXPECT_EQ(net.unclaimed_messages(), 3U);
  net.run();
  EXPECT_EQ(order.received, (std::vector<int>{1, 2}));
  EXPECT_TRUE(net.message(first).received);
  EXPECT_TRUE(net.message(second).received);
  EXPECT_LT(net.flow(first).end, net.flow(second).end);
  EXPECT_EQ(net.flow(second).spec.start, 5_us);
  EXPECT_EQ(net.unmatched_recvs(), 2U);
  EXPECT_EQ(net.unclaimed_messages(), 3U);
  const RunResult r = net.finish();
  expect_conserved(r);
  EXPECT_EQ(r.flows.size(), 5U);
  EXPECT_FALSE(r.all_done);  // no rank said it finished
}

// Timers run at now() + delay in call order; run_until() brings the clock to its limit; once
// every rank of every job has finished, the loop stops.
struct Clock {
  Backend* net;
  std::vector<Time> at;
};
void tick(void* arg) {
  auto* c = static_cast<Clock*>(arg);
  c->at.push_back(c->net->now());
}
void tick_and_schedule(void* arg) {
  auto* c = static_cast<Clock*>(arg);
  c->at.push_back(c->net->now());
  c->net->schedule(Time(), {tick, c});  // zero delay: later in the same instant
}
struct Finisher {
  Backend* net;
  JobId job;
};
void finish_ranks(void* arg) {
  auto* f = static_cast<Finisher*>(arg);
  f->net->rank_finished(f->job, 0);
  f->net->rank_finished(f->job, 1);
}

TEST(Embed, TimersTheClockAndTheStopWhenEveryRankFinished) {
  Backend net(load_embedded_scenario_text(kTwoHosts, "unit.toml"));
  Clock clock{&net, {}};
  EXPECT_TRUE(net.idle());
  net.schedule(7_us, {tick, &clock});
  net.schedule(3_us, {tick_and_schedule, &clock});
  net.schedule(3_us, {tick, &clock});
  net.run_until(5_us);
  EXPECT_EQ(clock.at, (std::vector<Time>{3_us, 3_us, 3_us}));
  EXPECT_EQ(net.now(), 5_us);
  net.run();
  EXPECT_EQ(clock.at.back(), 7_us);
  EXPECT_TRUE(net.idle());
  const JobId job = net.add_job("j", {0, 1});
  Finisher fin{&net, job};
  net.schedule(10_us, {finish_ranks, &fin});
  net.schedule(20_us, {tick, &clock});  // never runs: everything finished at 17 us
  net.run();
  EXPECT_EQ(net.now(), 17_us);
  EXPECT_EQ(clock.at.size(), 4U);
  const RunResult r = net.finish();
  expect_conserved(r);
  ASSERT_EQ(r.jobs.size(), 1U);
  EXPECT_TRUE(r.jobs[0].done);
  EXPECT_EQ(r.jobs[0].end, 17_us);
  EXPECT_TRUE(r.all_done);
}

// --- scenarios, misuse, traces ------------------------------------------------------------------

TEST(Embed, AScenarioWithoutAWorkloadIsExternalAndOneWithTrafficIsRefused) {
  const ScenarioConfig none = load_embedded_scenario_text(kTwoHosts, "unit.toml");
  EXPECT_EQ(none.workload.name(), "external");
  EXPECT_NO_THROW(Backend{none});
  const std::string flows = std::string(kTwoHosts) + R"(
[workload]
kind = "flows"
[[workload.flows]]
src = 0
dst = 1
)";
  const ScenarioConfig busy = load_embedded_scenario_text(flows, "busy.toml");
  try {
    Backend net(busy);
    FAIL() << "a scenario whose workload starts flows was accepted";
  } catch (const ApiError& e) {
    EXPECT_NE(std::string(e.what()).find("busy.toml: workload.kind"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("\"flows\""), std::string::npos) << e.what();
  }
  // The command line's loader keeps its default: no workload is a permutation.
  EXPECT_EQ(load_scenario_text(kTwoHosts, "unit.toml").workload.name(), "permutation");
  // An explicit kind "external" needs no help, and takes no key.
  EXPECT_THROW(
      load_scenario_text(std::string(kTwoHosts) + "[workload]\nkind = \"external\"\nbytes = 1\n",
                         "x.toml"),
      ConfigError);
}

TEST(Embed, MisuseNamesTheCallAndWhatWasExpected) {
  Backend net(load_embedded_scenario_text(kTwoHosts, "unit.toml"));
  auto message = [](auto&& call) {
    try {
      call();
    } catch (const ApiError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message([&] {
              net.add_job("x", {0, 4});
            }),
            "add_job: job 'x' rank 1: a host id below the topology's 4 hosts, got 4");
  EXPECT_EQ(message([&] {
              net.add_job("x", {1, 1});
            }),
            "add_job: job 'x': distinct hosts (two ranks on host 1)");
  const JobId j = net.add_job("x", {0, 1});
  EXPECT_EQ(message([&] { net.send(j, 0, 2, 10, 0); }),
            "send: rank 2 of job 'x': a rank below its 2 ranks");
  EXPECT_EQ(message([&] { net.send(j + 1, 0, 1, 10, 0); }),
            "send: job 1: a job id from add_job(), below 1");
  EXPECT_EQ(message([&] { net.send(j, 1, 1, 10, 0); }),
            "send: job 'x': a destination rank other than the source, got 1 to 1");
  EXPECT_EQ(message([&] { net.send(j, 0, 1, 0, 0); }),
            "send: job 'x' rank 0 to 1: at least 1 byte, got 0");
  EXPECT_EQ(message([&] { net.schedule(Time::ps(-1), {}); }),
            "schedule: a delay of at least 0, got -1 ps");
  const RunResult r = net.finish();
  expect_conserved(r);
  EXPECT_EQ(message([&] { net.finish(); }), "finish: called after finish()");
  EXPECT_EQ(message([&] { net.send(j, 0, 1, 10, 0); }), "send: called after finish()");
}

TEST(Embed, TraceErrorsNameTheFileTheLineAndTheField) {
  auto error = [](const std::string& text) {
    std::istringstream in(text);
    try {
      parse_trace(in, "bad.trace");
    } catch (const TraceError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error("job a 0,1\ns 0 send 1 10 after=r\n"),
            "bad.trace:2: after: ops of this job written above, got 'r'");
  EXPECT_EQ(error("job a 0,1\ns 0 send 2 10\n"), "bad.trace:2: dst: an integer in [0, 1], got '2'");
  EXPECT_EQ(error("job a 0,1\ns 0 send 1 10\ns 1 recv 0 10\n"),
            "bad.trace:3: an op id not used before in job 'a', got 's'");
  EXPECT_EQ(error("job a 0,1\nc 0 calc 5us step=1\n"),
            "bad.trace:2: 'step': not a key of this op (after; tag for send and recv; op and "
            "step for send)");
  EXPECT_EQ(error("s 0 send 1 10\n"), "bad.trace:1: a 'job' line before the first op");
  EXPECT_EQ(error("job a 0,1\nx 0 jump\n"), "bad.trace:2: send, recv, calc or wait, got 'jump'");
  EXPECT_EQ(error("# nothing\n"), "bad.trace: at least one 'job' line");
}

}  // namespace
}  // namespace fabsim
