// Time series: queue depth and utilisation samples against a flow at line rate.
#include <gtest/gtest.h>

#include "conserved.h"
#include "report/writers.h"
#include "scenario/runner.h"
#include "scenario/scenario.h"

namespace fabsim {
namespace {
using namespace literals;

TEST(Sampler, LineRateFlowShowsFullUtilisationAndNoQueue) {
  const auto cfg = load_scenario_text(R"(
[topology]
kind = "single_switch"
hosts = 3
[transport]
kind = "datagram"
[workload]
kind = "flows"
[[workload.flows]]
src = 1
dst = 0
bytes = "4MB"
[output]
sample_interval = "10us"
sample_ports = "downlinks"
)",
                                      "ts.toml");
  const RunResult r = run_checked(cfg);
  ASSERT_TRUE(r.all_done);
  ASSERT_EQ(r.series.size(), 3U);  // the switch's three host ports
  EXPECT_EQ(r.sample_interval, 10_us);
  const std::string csv = timeseries_csv(r);
  // Port 0 carries the flow back to back: its link is busy all the time in the steady state.
  int steady = 0;
  size_t pos = csv.find('\n') + 1;
  while (pos < csv.size()) {
    const size_t eol = csv.find('\n', pos);
    const std::string line = csv.substr(pos, eol - pos);
    pos = eol + 1;
    const auto c1 = line.find(',');
    const auto c2 = line.find(',', c1 + 1);
    const auto c3 = line.find(',', c2 + 1);
    const auto c4 = line.find(',', c3 + 1);
    const auto c5 = line.find(',', c4 + 1);
    const int64_t t = std::stoll(line.substr(0, c1));
    const int port = std::stoi(line.substr(c2 + 1, c3 - c2 - 1));
    const int64_t queue = std::stoll(line.substr(c3 + 1, c4 - c3 - 1));
    const double util = std::stod(line.substr(c5 + 1));
    EXPECT_LE(queue, 4158) << line;  // at most the packet behind the one on the wire
    if (port == 0 && t >= 20'000'000 && t <= 300'000'000) {
      EXPECT_NEAR(util, 1.0, 1e-4) << line;
      ++steady;
    }
    if (port != 0) {
      EXPECT_EQ(util, 0.0) << line;
    }
  }
  EXPECT_GE(steady, 25);
}

}  // namespace
}  // namespace fabsim
