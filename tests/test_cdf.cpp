// The `cdf` workload (workload/cdf/): the shipped distributions and the sampler, the Poisson
// arrivals' offered load, the loader's errors, and a small run with its slowdown report.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>       // sqrt, ceil
#include <filesystem>  // temporary CDF files
#include <fstream>     // writing them
#include <map>         // partners
#include <string>

#include "conserved.h"
#include "core/rng.h"
#include "report/slowdown.h"
#include "report/writers.h"
#include "scenario/scenario.h"
#include "workload/cdf/cdf.h"

namespace fabsim {
namespace {

SizeCdf shipped(const std::string& name) {
  const auto text = shipped_cdf(name);
  EXPECT_TRUE(text.has_value()) << name;
  std::string error;
  auto cdf = SizeCdf::parse(text.value_or(""), &error);
  EXPECT_TRUE(cdf.has_value()) << name << ": " << error;
  return cdf.value_or(SizeCdf{});
}

TEST(Cdf, ShippedFilesAndTheirMeans) {
  EXPECT_EQ(shipped_cdf_names(),
            (std::vector<std::string_view>{"websearch", "fbhdp", "alistorage", "googlerpc"}));
  // REFERENCE.md §9.1.6 (lin = HPCC's trapezoid mean, step = Homa's right-end mean); GoogleRPC is
  // the condensed 18-point subset, whose means are computed from its points.
  struct Expect {
    const char* name;
    size_t points;
    double lin;
    double step;
  };
  const Expect expect[] = {{"websearch", 12, 1'711'250, 2'434'900},
                           {"fbhdp", 20, 120'420.75, 183'897},
                           {"alistorage", 9, 40'869.8, 67'050},
                           {"googlerpc", 18, 6'047.06131, 10'414.69794}};
  for (const auto& e : expect) {
    const SizeCdf cdf = shipped(e.name);
    EXPECT_EQ(cdf.points().size(), e.points) << e.name;
    EXPECT_NEAR(cdf.mean(CdfInterpolation::kLinear), e.lin, 0.01) << e.name;
    EXPECT_NEAR(cdf.mean(CdfInterpolation::kStep), e.step, 0.01) << e.name;
  }
  EXPECT_FALSE(shipped_cdf("nonesuch").has_value());
}

// At a point's percent both conventions give that point's size; between points, linear
// interpolates and truncates, step takes the next point.
TEST(Cdf, QuantilesMatchThePoints) {
  for (auto name : shipped_cdf_names()) {
    const SizeCdf cdf = shipped(std::string(name));
    for (const auto& p : cdf.points()) {
      const int64_t want = std::max<int64_t>(p.bytes, 1);  // a size of 0 is sent as 1 byte
      EXPECT_EQ(cdf.at_percent(p.percent, CdfInterpolation::kLinear), want) << name;
      EXPECT_EQ(cdf.at_percent(p.percent, CdfInterpolation::kStep), want) << name;
    }
  }
  const SizeCdf web = shipped("websearch");
  EXPECT_EQ(web.at_percent(53, CdfInterpolation::kLinear), 80'000);
  EXPECT_EQ(web.at_percent(46.5, CdfInterpolation::kLinear), 65'000);  // halfway 50 KB..80 KB
  EXPECT_EQ(web.at_percent(46.5, CdfInterpolation::kStep), 80'000);
  EXPECT_EQ(web.at_percent(0, CdfInterpolation::kLinear), 1);
  EXPECT_EQ(web.at_percent(7.5, CdfInterpolation::kLinear), 5'000);
  EXPECT_EQ(web.sample(0.999999, CdfInterpolation::kLinear), 29'999'333);  // 29,999,333.3 truncated
  const SizeCdf rpc = shipped("googlerpc");
  EXPECT_EQ(rpc.at_percent(6.488 / 2, CdfInterpolation::kLinear), 1);  // 1.5 B truncates to 1
  EXPECT_EQ(shipped("fbhdp").at_percent(97.5, CdfInterpolation::kLinear), 1'000'000);
}

// Each shipped file's sample mean is within 2 % of its mean, for both conventions. The count is
// at least 200,000 and enough for 2 % to be 4 standard errors: heavy tails need more
// (GoogleRPC's 0.05 % of flows between 512 KB and 15 MB carry most of its standard deviation).
TEST(Cdf, SampleMeansMatchTheFiles) {
  uint64_t stream = 0;
  for (auto name : shipped_cdf_names()) {
    const SizeCdf cdf = shipped(std::string(name));
    for (auto how : {CdfInterpolation::kLinear, CdfInterpolation::kStep}) {
      const double mean = cdf.mean(how);
      const double sd = std::sqrt(cdf.second_moment(how) - mean * mean);
      const auto n =
          static_cast<int64_t>(std::max(200'000.0, std::ceil(std::pow(4 * sd / (0.02 * mean), 2))));
      Rng rng(7, ++stream);
      long double sum = 0;
      for (int64_t i = 0; i < n; ++i)
        sum += static_cast<long double>(cdf.sample(rng.uniform(), how));
      const double got = static_cast<double>(sum / static_cast<long double>(n));
      EXPECT_NEAR(got, mean, 0.02 * mean)
          << name << (how == CdfInterpolation::kLinear ? " linear" : " step") << ", " << n
          << " samples";
    }
  }
}

std::string scenario(const std::string& workload, int hosts = 64,
                     const std::string& transport = "datagram") {
  return fmt::format(R"(
[topology]
kind = "single_switch"
hosts = {}
nic_rate = "100Gbps"
[transport]
kind = "{}"
[workload]
kind = "cdf"
{}
)",
                     hosts, transport, workload);
}

WorkloadPlan plan_of(const ScenarioConfig& cfg, uint64_t seed = 1) {
  Rng rng(seed, stream_id(StreamKind::kWorkload, 0));
  return cfg.workload.kind->plan(cfg.workload.config, cfg.topology.hosts(), rng);
}

// 64 hosts at 30 % of 100G with web search (mean 1.71 MB, one arrival per 456 us per host) for
// 3 s: about 420,000 flows, a standard error of 0.4 % of the bytes.
TEST(Cdf, OfferedLoadMatchesTheTarget) {
  const auto cfg =
      load_scenario_text(scenario("cdf = \"websearch\"\nload = 0.3\nduration = \"3s\""), "l.toml");
  const auto& c = cfg.workload.config.get<CdfWorkloadConfig>();
  EXPECT_NEAR(c.mean_gap_ps() * 1e-6, 456.3, 0.05);  // us, REFERENCE.md §9.1.7
  const WorkloadPlan p = plan_of(cfg);
  long double bytes = 0;
  for (const auto& f : p.flows) {
    bytes += static_cast<long double>(f.bytes);
    EXPECT_NE(f.src, f.dst);
    EXPECT_LT(f.dst, 64U);
    EXPECT_GT(f.start, Time());
    EXPECT_LT(f.start, Time::ms(3000));
  }
  const double load = static_cast<double>(bytes / (64 * 100e9 / 8 * 3));
  EXPECT_NEAR(load, 0.3, 0.3 * 0.02) << p.flows.size() << " flows";
  EXPECT_DOUBLE_EQ(p.summary["offered_load"].get<double>(), load);
  EXPECT_EQ(p.summary["flows"].get<size_t>(), p.flows.size());
  EXPECT_TRUE(p.slowdown);
  // Arrivals come in time order; per host, 3 s / 456 us = 6,575 flows expected.
  for (size_t i = 1; i < p.flows.size(); ++i) ASSERT_LE(p.flows[i - 1].start, p.flows[i].start);
  EXPECT_NEAR(static_cast<double>(p.flows.size()) / 64, 3e12 / c.mean_gap_ps(), 6575 * 0.05);
}

TEST(Cdf, StepInterpolationSetsTheArrivalRateFromItsMean) {
  const auto cfg = load_scenario_text(
      scenario("cdf = \"fbhdp\"\ninterpolation = \"step\"\nload = 0.5\nduration = \"20ms\""),
      "s.toml");
  const auto& c = cfg.workload.config.get<CdfWorkloadConfig>();
  EXPECT_DOUBLE_EQ(c.mean_bytes(), 183'897);
  EXPECT_NEAR(c.mean_gap_ps(), 8 * 183'897 / (100e9 * 0.5) * 1e12, 1e-3);
  const WorkloadPlan p = plan_of(cfg);
  for (const auto& f : p.flows) {
    bool on_a_point = false;
    for (const auto& pt : c.cdf.points()) on_a_point = on_a_point || pt.bytes == f.bytes;
    ASSERT_TRUE(on_a_point) << f.bytes;  // step: only the listed sizes
  }
}

TEST(Cdf, SameSeedSameFlowsAndPermutationKeepsPartners) {
  const auto cfg = load_scenario_text(
      scenario("cdf = \"alistorage\"\npattern = \"permutation\"\nduration = \"200us\"", 16),
      "p.toml");
  const WorkloadPlan a = plan_of(cfg, 5);
  const WorkloadPlan b = plan_of(cfg, 5);
  const WorkloadPlan other = plan_of(cfg, 6);
  ASSERT_EQ(a.flows.size(), b.flows.size());
  ASSERT_GT(a.flows.size(), 100U);
  bool differs = a.flows.size() != other.flows.size();
  std::map<uint32_t, uint32_t> partner;
  for (size_t i = 0; i < a.flows.size(); ++i) {
    EXPECT_EQ(a.flows[i].src, b.flows[i].src);
    EXPECT_EQ(a.flows[i].dst, b.flows[i].dst);
    EXPECT_EQ(a.flows[i].bytes, b.flows[i].bytes);
    EXPECT_EQ(a.flows[i].start, b.flows[i].start);
    if (!differs) differs = a.flows[i].bytes != other.flows[i].bytes;
    const auto [it, fresh] = partner.try_emplace(a.flows[i].src, a.flows[i].dst);
    EXPECT_EQ(it->second, a.flows[i].dst) << "host " << a.flows[i].src << " changed partner";
    EXPECT_NE(a.flows[i].src, a.flows[i].dst);
  }
  EXPECT_TRUE(differs);
  EXPECT_EQ(partner.size(), 16U);
}

// Each flow has its own connection by default (FlowSpec::channel numbers a host pair's flows in
// start order), as HPCC's ns-3 and uet-htsim open one per flow; `connections = "pair"` shares
// one per host pair (channel 0).
TEST(Cdf, EachFlowHasItsOwnConnectionUnlessAPairShares) {
  const std::string w = "cdf = \"alistorage\"\npattern = \"permutation\"\nduration = \"200us\"";
  const WorkloadPlan own = plan_of(load_scenario_text(scenario(w, 16), "c.toml"));
  const WorkloadPlan pair =
      plan_of(load_scenario_text(scenario(w + "\nconnections = \"pair\"", 16), "c.toml"));
  ASSERT_EQ(own.flows.size(), pair.flows.size());
  ASSERT_GT(own.flows.size(), 100U);
  std::map<std::pair<uint32_t, uint32_t>, int32_t> seen;
  for (size_t i = 0; i < own.flows.size(); ++i) {
    const FlowSpec& f = own.flows[i];
    const int32_t expected = seen[std::make_pair(f.src, f.dst)]++;  // 0, 1, 2... by start
    EXPECT_EQ(f.channel, expected) << i;
    EXPECT_EQ(pair.flows[i].channel, 0) << i;
    EXPECT_EQ(pair.flows[i].bytes, f.bytes);
  }
  EXPECT_EQ(seen.size(), 16U);
}

// Why it matters (16 hosts, permutation, web search at 30 % for 3 ms, RoCE): sharing a pair's
// queue pair puts short flows behind long ones, and the smallest bucket's p95 slowdown is
// hundreds; with a QP each it is near 1 (the reviewer's run: 286 against 1.19).
TEST(Cdf, SharingAConnectionQueuesShortFlowsBehindLongOnes) {
  const std::string w = "pattern = \"permutation\"\nload = 0.3\nduration = \"3ms\"";
  const auto p95_small = [&](const std::string& extra) {
    const RunResult r = run_checked(load_scenario_text(scenario(w + extra, 16, "roce"), "q.toml"));
    EXPECT_TRUE(r.all_done);
    return slowdown_by_size(r.flows, r.ideal_fct, 20)[0].p95;
  };
  const double own = p95_small("");
  const double shared = p95_small("\nconnections = \"pair\"");
  EXPECT_LT(own, 2.0);
  EXPECT_GT(shared, 20.0);
  std::printf(
      "[ figures ] cdf permutation, smallest bucket p95 slowdown: own QP %.2f, shared %.2f\n", own,
      shared);
}

std::string error_of(const std::string& toml, const std::string& file = "bad.toml") {
  try {
    load_scenario_text(toml, file);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

std::filesystem::path write_cdf(const std::string& name, const std::string& text) {
  const auto dir = std::filesystem::path(::testing::TempDir()) / "fabsim_cdf";
  std::filesystem::create_directories(dir);
  const auto path = dir / name;
  std::ofstream(path) << text;
  return path;
}

TEST(Cdf, LoaderErrorsNameTheFileKeyAndExpectation) {
  const std::string unknown = error_of(scenario("cdf = \"webserch\""));
  EXPECT_NE(unknown.find("bad.toml"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("workload.cdf"), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("\"websearch\""), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("webserch: cannot open"), std::string::npos) << unknown;

  struct Bad {
    const char* file;
    const char* text;
    const char* expect;  // in the message, after the file's name
  };
  const Bad bad[] = {
      {"flat.txt", "# sizes must grow\n0 0\n100 50\n100 100\n",
       "flat.txt line 4: expected a size above the previous 100 (sizes increase strictly), got "
       "100"},
      {"back.txt", "0 0\n100 60\n200 50\n300 100\n",
       "back.txt line 3: expected a percent above the previous 60"},
      {"short.txt", "0 0\n100 50\n200 97   # no 100\n",
       "short.txt line 3: expected the last point at percent 100, got 97"},
      {"start.txt", "\n10 5\n100 100\n", "start.txt line 2: expected the first point at percent 0"},
      {"words.txt", "0 0\n100 fifty\n", "words.txt line 2: expected a cumulative percent"},
      {"three.txt", "0 0 0\n", "three.txt line 1: expected two numbers"},
      {"empty.txt", "# nothing\n", "expected at least two points"},
  };
  for (const auto& b : bad) {
    const auto path = write_cdf(b.file, b.text);
    const std::string e = error_of(scenario(fmt::format("cdf = \"{}\"", path.string())));
    EXPECT_NE(e.find("workload.cdf"), std::string::npos) << e;
    EXPECT_NE(e.find(b.expect), std::string::npos) << e;
  }

  const std::string high = error_of(scenario("load = 1.5"));
  EXPECT_NE(high.find("bad.toml:10: key 'workload.load'"), std::string::npos) << high;
  EXPECT_NE(high.find("[0, 1]"), std::string::npos) << high;
  const std::string zero = error_of(scenario("load = 0"));
  EXPECT_NE(zero.find("workload.load': expected a fraction of the NIC rate in (0, 1]"),
            std::string::npos)
      << zero;
  EXPECT_NE(error_of(scenario("duration = \"0s\"")).find("workload.duration"), std::string::npos);
  EXPECT_NE(error_of(scenario("interpolation = \"cubic\"")).find("\"linear\", \"step\""),
            std::string::npos);
  EXPECT_NE(error_of(scenario("bytes = 100")).find("workload.bytes"), std::string::npos);
}

// Sizes written as whole reals (HPCC's generator reads them with float()) and a UTF-8 byte order
// mark are read; a fractional size, an empty file and a size past int64 are errors that say so.
TEST(Cdf, ParserTakesWholeRealsAndAByteOrderMark) {
  std::string error;
  const auto sci = SizeCdf::parse("\xEF\xBB\xBF"
                                  "0 0\n1e3 50\n2000.0 100\n",
                                  &error);
  ASSERT_TRUE(sci.has_value()) << error;
  ASSERT_EQ(sci->points().size(), 3U);
  EXPECT_EQ(sci->points()[1].bytes, 1000);
  EXPECT_EQ(sci->points()[2].bytes, 2000);
  EXPECT_FALSE(SizeCdf::parse("0 0\n100.5 100\n", &error).has_value());
  EXPECT_EQ(error, "line 2: expected a size in whole bytes (0 to 9.2e18), got \"100.5\"");
  EXPECT_FALSE(SizeCdf::parse("0 0\n99999999999999999999 100\n", &error).has_value());
  EXPECT_NE(error.find("line 2: expected a size in whole bytes"), std::string::npos) << error;
  EXPECT_FALSE(SizeCdf::parse("# nothing\n\n", &error).has_value());
  EXPECT_EQ(error, "expected at least two points (percent 0 to percent 100), found none");
  EXPECT_FALSE(SizeCdf::parse("0 0\n", &error).has_value());
  EXPECT_EQ(error, "line 1: expected at least two points (percent 0 to percent 100), got 1");
}

// A relative path is read from the scenario file's directory, not the working directory.
TEST(Cdf, RelativePathIsFromTheScenarioFile) {
  const auto cdf = write_cdf("two.txt", "# uniform 0..1000 B\n0 0\n1000 100\n");
  const auto toml = cdf.parent_path() / "two.toml";
  std::ofstream(toml) << scenario("cdf = \"two.txt\"");
  const ScenarioConfig cfg = load_scenario(toml.string(), {});
  EXPECT_DOUBLE_EQ(cfg.workload.config.get<CdfWorkloadConfig>().mean_bytes(), 500);
  EXPECT_EQ(cfg.effective["workload"]["cdf"], "two.txt");
}

// Eight hosts on one switch, RoCE with DCQCN, Facebook Hadoop at 30 % for 1 ms: every packet
// accounted for, every flow at or above its ideal FCT (one link rate: the ideal is exact), and
// a slowdown table of 20 buckets.
TEST(Cdf, SmallRunReportsSlowdown) {
  const auto cfg = load_scenario_text(
      scenario("cdf = \"fbhdp\"\nload = 0.3\nduration = \"1ms\"", 8, "roce"), "run.toml");
  const RunResult r = run_checked(cfg);
  ASSERT_TRUE(r.all_done);
  ASSERT_GT(r.flows.size(), 100U);
  ASSERT_EQ(r.ideal_fct.size(), r.flows.size());
  for (size_t i = 0; i < r.flows.size(); ++i) {
    EXPECT_GE(r.flows[i].fct(), r.ideal_fct[i]) << "flow " << i;
    EXPECT_GT(r.ideal_fct[i], Time::us(2));  // two 1 us links at least
  }
  const auto buckets = slowdown_by_size(r.flows, r.ideal_fct, 20);
  ASSERT_EQ(buckets.size(), 20U);
  size_t flows = 0;
  for (size_t b = 0; b < buckets.size(); ++b) {
    flows += buckets[b].flows;
    EXPECT_GE(buckets[b].p50, 1.0);
    EXPECT_LE(buckets[b].p50, buckets[b].p95);
    EXPECT_LE(buckets[b].p95, buckets[b].p99);
    EXPECT_LE(buckets[b].min_bytes, buckets[b].max_bytes);
    if (b > 0) {
      EXPECT_LE(buckets[b - 1].max_bytes, buckets[b].min_bytes);
    }
  }
  EXPECT_EQ(flows, r.flows.size());

  const auto json = summary_json(r);
  ASSERT_TRUE(json.contains("workload"));
  EXPECT_GT(json["workload"]["offered_load"].get<double>(), 0.0);
  EXPECT_EQ(json["slowdown"]["buckets"].size(), 20U);
  EXPECT_EQ(json["slowdown"]["completed_flows"].get<size_t>(), r.flows.size());

  const auto dir = std::filesystem::path(::testing::TempDir()) / "fabsim_cdf_run";
  write_results(r, dir.string(), true);
  std::ifstream in(dir / "slowdown.csv");
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "bucket,flows,min_bytes,max_bytes,p50,p95,p99");
  int rows = 0;
  while (std::getline(in, line)) {
    ++rows;
    double p50 = 0;
    double p95 = 0;
    double p99 = 0;
    long long bucket = 0;
    long long n = 0;
    long long lo = 0;
    long long hi = 0;
    ASSERT_EQ(std::sscanf(line.c_str(), "%lld,%lld,%lld,%lld,%lf,%lf,%lf", &bucket, &n, &lo, &hi,
                          &p50, &p95, &p99),
              7)
        << line;
    EXPECT_GE(p50, 1.0);
    EXPECT_GE(p95, 1.0);
    EXPECT_GE(p99, 1.0);
  }
  EXPECT_EQ(rows, 20);
}

// A run where no flow completed has no slowdown to report: null percentiles and no buckets,
// not the value 1 that would read as "ideal".
TEST(Cdf, NoCompletedFlowHasNoSlowdown) {
  std::vector<FlowRecord> flows(3);
  for (auto& f : flows) f.spec.bytes = 1000;
  const std::vector<Time> ideal(3, Time::us(2));
  const auto j = slowdown_json(flows, ideal, 20);
  EXPECT_EQ(j["completed_flows"].get<size_t>(), 0U);
  EXPECT_TRUE(j["p50"].is_null());
  EXPECT_TRUE(j["p95"].is_null());
  EXPECT_TRUE(j["p99"].is_null());
  EXPECT_TRUE(j["buckets"].empty());
  flows[1].done = true;
  flows[1].end = Time::us(3);  // started at 0: slowdown 1.5
  const auto one = slowdown_json(flows, ideal, 20);
  EXPECT_EQ(one["completed_flows"].get<size_t>(), 1U);
  EXPECT_DOUBLE_EQ(one["p50"].get<double>(), 1.5);
  EXPECT_DOUBLE_EQ(one["p99"].get<double>(), 1.5);
}

// Other workloads report slowdown only when asked, and never in summary.json (golden outputs).
TEST(Cdf, OtherWorkloadsReportSlowdownOnlyWhenAsked) {
  const std::string perm = R"(
[topology]
kind = "single_switch"
hosts = 4
[workload]
kind = "permutation"
bytes = "100KB"
)";
  const RunResult plain = run_checked(load_scenario_text(perm, "p.toml"));
  EXPECT_TRUE(plain.ideal_fct.empty());
  EXPECT_FALSE(summary_json(plain).contains("workload"));
  EXPECT_FALSE(summary_json(plain).contains("slowdown"));
  const RunResult asked = run_checked(load_scenario_text(perm, "p.toml", {"output.slowdown=true"}));
  ASSERT_EQ(asked.ideal_fct.size(), 4U);
  EXPECT_FALSE(summary_json(asked).contains("slowdown"));
  for (const auto& b : slowdown_by_size(asked.flows, asked.ideal_fct, 20)) EXPECT_GE(b.p50, 1.0);
}

}  // namespace
}  // namespace fabsim
