// RoCEv2 scenarios: notification-point spacing, incast with PFC and DCQCN, go-back-N under
// loss, single-flow line rate, several QPs per connection, determinism.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <cstdio>
#include <map>
#include <set>
#include <string>

#include "conserved.h"
#include "report/writers.h"
#include "scenario/runner.h"
#include "scenario/scenario.h"
#include "transport/roce.h"

namespace fabsim {
namespace {
using namespace literals;

constexpr int64_t kWire = 4096 + 62 + 20;

RunResult run_text(const std::string& toml, const std::vector<std::string>& sets = {}) {
  RunResult r = run_checked(load_scenario_text(toml, "roce.toml", sets));
  EXPECT_EQ(r.packets_live_at_end, 0U) << "packets leaked from the pool";
  return r;
}

uint64_t counter(const RunResult& r, const std::string& name) {
  for (const auto& [k, v] : r.transport_counters) {
    if (k == name) return v;
  }
  ADD_FAILURE() << "no counter " << name;
  return 0;
}

const char* kIncast = R"(
[topology]
kind = "single_switch"
hosts = 9
[network.buffer]
size = "1MiB"
[transport]
kind = "roce"
[workload]
kind = "incast"
senders = 8
receiver = 0
bytes = "1MB"
)";

TEST(RoceIncast, PfcAndDcqcnLosslessMarkedAndBounded) {
  const RunResult with = run_text(kIncast);
  const RunResult without = run_text(kIncast, {"transport.dcqcn.enabled=false"});
  ASSERT_TRUE(with.all_done);
  ASSERT_TRUE(without.all_done);
  EXPECT_EQ(with.totals.drops, 0U);
  EXPECT_EQ(without.totals.drops, 0U);
  EXPECT_GT(with.totals.ecn_marks, 0U);
  EXPECT_GT(counter(with, "cnps"), 0U);
  EXPECT_EQ(counter(with, "timeouts"), 0U);
  // T0: the receiver's link carries 8 x (244 full packets + one of 576 B payload) back to back.
  const int64_t per_flow = 244 * kWire + (576 + 62 + 20);
  const Time t0 = serialization_delay(8 * per_flow, 100_Gbps);
  // Without DCQCN the senders run at line rate and PFC keeps the bottleneck busy from the
  // arrival of the first packets until the last has left: the first full frame's way in (one
  // serialization on the host link, 1 us), T0 on the receiver's link, the last frame's 1 us
  // way out. With 100 Gb/s (80 ps per byte) every term is a whole number of picoseconds.
  const Time first_in = serialization_delay(kWire, 100_Gbps) + 1_us;
  EXPECT_EQ(without.end_time, first_in + t0 + 1_us);
  // With DCQCN: never faster than that, and at most 2 T0 (docs/VALIDATION.md: DCQCN cuts only
  // while the bottleneck queue is above Kmin, at most once per 50 us per QP, and at most by
  // half, so it can idle the bottleneck for at most as long as it kept it busy).
  EXPECT_GE(with.end_time, first_in + t0 + 1_us);  // the bottleneck can do no better
  EXPECT_LE(with.end_time.ps(), 2 * t0.ps());
  EXPECT_LT(with.totals.pause_time, without.totals.pause_time);
  EXPECT_GT(without.totals.pause_time, Time());
  std::printf("[ figures ] T0 %.3f us; DCQCN on: end %.3f us, pause %.3f us, marks %llu; "
              "off: end %.3f us, pause %.3f us\n",
              t0.us_f(), with.end_time.us_f(), with.totals.pause_time.us_f(),
              static_cast<unsigned long long>(with.totals.ecn_marks), without.end_time.us_f(),
              without.totals.pause_time.us_f());
}

TEST(RoceNotificationPoint, CnpsOfOneQpAreAnIntervalApart) {
  const RunResult r = run_text(kIncast, {"output.trace=true"});
  std::map<uint32_t, std::vector<Time>> cnps;
  for (const auto& e : r.trace) {
    if (e.kind == 'C') cnps[e.flow].push_back(e.time);
  }
  ASSERT_FALSE(cnps.empty());
  size_t total = 0;
  for (const auto& [flow, times] : cnps) {
    total += times.size();
    for (size_t i = 1; i < times.size(); ++i) {
      EXPECT_GE(times[i] - times[i - 1], 50_us) << "flow " << flow;
    }
  }
  EXPECT_EQ(total, counter(r, "cnps"));
  EXPECT_GT(total, 8U);  // several CNPs per QP: the limiter was exercised
}

// Seed 004 Fig. 11: 1 MB transfers, go-back-N almost unusable at 1 % loss. The receiver drops
// everything after a hole, and a lost last packet is only recovered by the timeout
// (4.096 us x 2^14 = 67.1 ms).
std::string sequential_transfers(int n, double loss) {
  std::string s = fmt::format(R"(
[simulation]
stop_time = "{}s"
[topology]
kind = "single_switch"
hosts = 2
[network]
loss_probability = {}
[transport]
kind = "roce"
[workload]
kind = "flows"
)",
                              n / 10 + 1, loss);
  for (int i = 0; i < n; ++i) {
    s += fmt::format("[[workload.flows]]\nsrc = 0\ndst = 1\nbytes = \"1MB\"\nstart = \"{}ms\"\n",
                     i * 100);
  }
  return s;
}

TEST(RoceGoBackN, LossCollapsesGoodput) {
  constexpr int kTransfers = 1000;
  const RunResult clean = run_text(sequential_transfers(kTransfers, 0.0));
  // 0.5 % on each of the two links of the path: 1 % of data packets lost end to end.
  const RunResult lossy = run_text(sequential_transfers(kTransfers, 0.005));
  auto goodput = [](const RunResult& r) {
    double bytes = 0;
    double seconds = 0;
    for (const auto& f : r.flows) {
      EXPECT_TRUE(f.done);
      EXPECT_EQ(f.delivered, f.spec.bytes);  // every byte, accepted only in order
      bytes += static_cast<double>(f.delivered);
      seconds += f.fct().sec_f();
    }
    return bytes * 8 / seconds;
  };
  const double g0 = goodput(clean);
  const double g1 = goodput(lossy);
  uint64_t rtx = 0;
  uint64_t ooo = 0;
  for (const auto& f : lossy.flows) {
    rtx += f.retransmissions;
    ooo += f.out_of_order;
  }
  EXPECT_GT(rtx, 0U);
  EXPECT_GT(ooo, 0U);
  EXPECT_GT(counter(lossy, "nacks"), 0U);
  EXPECT_GT(counter(lossy, "timeouts"), 0U);
  EXPECT_EQ(counter(lossy, "failed_qps"), 0U);
  // Bound (docs/VALIDATION.md): E[T1] >= T0 + p x RTO, p = 0.01 the chance the last packet is
  // lost, T0 ~ 84 us: G1/G0 <= 84 / (84 + 671) = 0.11. With ~10 tail losses in 1000 transfers
  // we allow twice that.
  EXPECT_LT(g1 / g0, 0.25) << "g0 " << g0 << " g1 " << g1;
  std::printf("[ figures ] goodput 0%%: %.2f Gb/s, 1%%: %.2f Gb/s, ratio %.4f, timeouts %llu\n",
              g0 * 1e-9, g1 * 1e-9, g1 / g0,
              static_cast<unsigned long long>(counter(lossy, "timeouts")));
  EXPECT_GT(g0, 90e9);
}

TEST(RoceSingleFlow, ReachesPayloadLineRate) {
  const RunResult r = run_text(R"(
[topology]
kind = "single_switch"
hosts = 2
[transport]
kind = "roce"
[workload]
kind = "flows"
[[workload.flows]]
src = 0
dst = 1
bytes = "10MB"
)");
  ASSERT_TRUE(r.flows[0].done);
  const double goodput = 10e6 * 8 / r.flows[0].fct().sec_f();
  const double payload_line = 100e9 * 4096.0 / kWire;
  EXPECT_GE(goodput, 0.97 * payload_line) << goodput;
  std::printf("[ figures ] single flow %.3f Gb/s = %.2f %% of payload line rate %.3f Gb/s\n",
              goodput * 1e-9, 100 * goodput / payload_line, payload_line * 1e-9);
  EXPECT_EQ(r.flows[0].retransmissions, 0U);
}

TEST(RoceQps, SeveralQpsSplitAMessageOverDistinctPorts) {
  const std::string toml = R"(
[topology]
kind = "leaf_spine"
servers = 2
gpus_per_server = 1
spines = 8
uplink_rate = "100Gbps"
[transport]
kind = "roce"
qps_per_connection = 8
[workload]
kind = "flows"
[[workload.flows]]
src = 0
dst = 1
bytes = "8MB"
)";
  const auto cfg = load_scenario_text(toml, "qps.toml");
  fabsim::Run run(cfg);
  const RunResult r = execute_checked(run);
  ASSERT_TRUE(r.all_done);
  EXPECT_EQ(r.flows[0].delivered, 8'000'000);
  int used = 0;
  const auto& leaf = run.network().sw(run.topology().tors[0]);
  for (uint16_t p : run.topology().uplink_ports(run.topology().tors[0]))
    used += leaf.port(p).counters().tx_data_packets > 0;
  EXPECT_GT(used, 1) << "8 QPs with their own source ports all hashed onto one uplink";
}

// ack_class: ACKs in the control class pass a congested switch port at once; in the QP's data
// class they queue behind its data. Hosts 1 and 2 send 10 MB each to host 0 from t = 0, so the
// switch port to host 0 gains 100 Gb/s of backlog: about 200 us of queue by 200 us. Host 0's
// 4 KB write to host 3 starts then, and its ACK comes back through that port: about 5 us with
// ACKs in the control class, about 200 us more in the data class.
TEST(RoceAckClass, AcksInTheDataClassWaitBehindTheData) {
  const std::string toml = R"(
[topology]
kind = "single_switch"
hosts = 4
[network.buffer]
size = "64MiB"
[network.pfc]
enabled = false
[transport]
kind = "roce"
cc = "none"
op = "write"
[workload]
kind = "flows"
[[workload.flows]]
src = 1
dst = 0
bytes = "10MB"
[[workload.flows]]
src = 2
dst = 0
bytes = "10MB"
[[workload.flows]]
src = 0
dst = 3
bytes = "4KB"
start = "200us"
)";
  const RunResult control = run_text(toml);
  const RunResult data = run_text(toml, {"transport.ack_class=data"});
  ASSERT_TRUE(control.all_done && data.all_done);
  EXPECT_LT(control.flows[2].fct(), 6_us);
  const double extra = static_cast<double>((data.flows[2].fct() - control.flows[2].fct()).ps());
  EXPECT_NEAR(extra / 200e6, 1.0, 0.03);  // the queue the ACK found, 200 us of 2:1 excess
  // The large flows' data is unchanged: only ACKs moved.
  EXPECT_EQ(control.flows[0].fct(), data.flows[0].fct());
}

TEST(RoceDeterminism, SameSeedSameJson) {
  const std::string toml = R"(
[topology]
kind = "leaf_spine"
servers = 8
gpus_per_server = 2
spines = 2
uplink_rate = "100Gbps"
[transport]
kind = "roce"
[workload]
kind = "permutation"
bytes = "500KB"
)";
  const auto a = summary_json(run_text(toml)).dump();
  const auto b = summary_json(run_text(toml)).dump();
  EXPECT_EQ(a, b);
  EXPECT_NE(a, summary_json(run_text(toml, {"simulation.seed=7"})).dump());
}

}  // namespace
}  // namespace fabsim
