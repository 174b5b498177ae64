// fabsim compare's table: both fabrics' rows and ratios on a tiny real case, per-seed ratio
// ranges on scripted cases, and the --seeds syntax.
#include <gtest/gtest.h>

#include "conserved.h"
#include "scenario/compare.h"
#include "scenario/scenario.h"

namespace fabsim {
namespace {
using namespace literals;

SweepCase scripted(const std::string& coll, int64_t size, uint64_t seed, double jct_us) {
  SweepCase c;
  c.collective = coll;
  c.size = size;
  c.seed = seed;
  c.all_done = true;
  c.jobs.jobs = 1;
  c.jobs.max_jct = Time::ps(static_cast<int64_t>(jct_us * 1e6));
  return c;
}

TEST(Compare, RatiosOfMediansAndPerSeedRanges) {
  CompareColumn a{"roce", {}, {}};
  CompareColumn b{"gse", {}, {}};
  const double ra[] = {100, 200, 300};
  const double rb[] = {50, 300, 150};
  for (uint64_t s = 0; s < 3; ++s) {
    a.cases.push_back(scripted("alltoall", 1 << 20, s + 1, ra[s]));
    b.cases.push_back(scripted("alltoall", 1 << 20, s + 1, rb[s]));
  }
  a.rows = aggregate(a.cases);
  b.rows = aggregate(b.cases);
  const auto rows = compare_rows({a, b});
  ASSERT_EQ(rows.size(), 1U);
  EXPECT_DOUBLE_EQ(rows[0].jct_ms[0].median, 0.2);
  EXPECT_DOUBLE_EQ(rows[0].jct_ms[1].median, 0.15);
  EXPECT_DOUBLE_EQ(rows[0].ratio[1], 0.75);          // 150 / 200
  EXPECT_DOUBLE_EQ(rows[0].seed_ratio[1].min, 0.5);  // seed 1 and seed 3
  EXPECT_DOUBLE_EQ(rows[0].seed_ratio[1].max, 1.5);  // seed 2
  const std::string table = compare_table({a, b}, rows);
  EXPECT_NE(table.find("0.75 [0.50, 1.50]"), std::string::npos) << table;
  EXPECT_NE(table.find("ratio 2: gse / roce"), std::string::npos) << table;
}

TEST(Compare, ATinyRealCaseGivesBothFabricsRowsAndARatio) {
  const std::string text = R"(
[topology]
kind = "leaf_spine"
servers = 2
gpus_per_server = 2
spines = 2
[transport]
kind = "roce"
[workload]
kind = "jobs"
[[workload.jobs]]
placement = "block"
ranks = 4
[[workload.jobs.ops]]
type = "$collective"
bytes = "$size"
[sweep]
collectives = ["alltoall", "allreduce_ring"]
sizes = ["64KiB"]
seeds = [1, 2]
)";
  std::vector<CompareColumn> cols;
  for (const char* fabric : {"ethernet", "gse"}) {
    const auto cfg = load_scenario_text(text, "tiny.toml", {std::string("fabric.kind=") + fabric});
    CompareColumn c{fabric, run_sweep_checked(cfg, 1, false, {}), {}};
    c.rows = aggregate(c.cases);
    cols.push_back(std::move(c));
  }
  const auto rows = compare_rows(cols);
  ASSERT_EQ(rows.size(), 2U);
  for (const auto& r : rows) {
    EXPECT_GT(r.jct_ms[0].median, 0);
    EXPECT_GT(r.jct_ms[1].median, 0);
    EXPECT_TRUE(r.all_done[0] && r.all_done[1]);
    EXPECT_NEAR(r.ratio[1], r.jct_ms[1].median / r.jct_ms[0].median, 1e-12);
  }
  const std::string csv = compare_csv(cols, rows);
  EXPECT_NE(csv.find("ratio_gse"), std::string::npos);
}

// A workload of flows has no job: its cases stand on the slowest flow's FCT (and the mean
// FCT), not on JCTs of 0. Seeds 1-3 with slowest FCTs 30, 10, 20 us: median 20 us; the second
// column's 15, 10, 40: median 15, ratio 15 / 20 = 0.75, per seed 0.5 to 2.
TEST(Compare, AWorkloadOfFlowsStandsOnItsSlowestFlow) {
  CompareColumn a{"a", {}, {}};
  CompareColumn b{"b", {}, {}};
  const double fa[] = {30, 10, 20};
  const double fb[] = {15, 10, 40};
  for (uint64_t s = 0; s < 3; ++s) {
    for (auto [col, us] : {std::pair{&a, fa[s]}, std::pair{&b, fb[s]}}) {
      SweepCase c;
      c.seed = s + 1;
      c.all_done = true;
      c.flows.max = Time::ps(static_cast<int64_t>(us * 1e6));
      c.flows.mean = Time::ps(static_cast<int64_t>(us * 1e6 / 2));
      col->cases.push_back(c);
    }
  }
  a.rows = aggregate(a.cases);
  b.rows = aggregate(b.cases);
  ASSERT_EQ(a.rows.size(), 1U);
  EXPECT_TRUE(a.rows[0].flows);
  EXPECT_DOUBLE_EQ(a.rows[0].max_jct_us.median, 20);
  EXPECT_DOUBLE_EQ(a.rows[0].mean_jct_us.median, 10);
  const auto rows = compare_rows({a, b});
  EXPECT_DOUBLE_EQ(rows[0].ratio[1], 0.75);
  EXPECT_DOUBLE_EQ(rows[0].seed_ratio[1].min, 0.5);
  EXPECT_DOUBLE_EQ(rows[0].seed_ratio[1].max, 2.0);
  EXPECT_NE(compare_table({a, b}, rows).find("slowest flow's FCT"), std::string::npos);
  EXPECT_NE(sweep_table(a.rows).find("slowest flow's FCT"), std::string::npos);
  // cases.csv and summary.json's cases carry the same headline (30 us of seed 1), and the
  // sweep's summary.json the loader's warnings with the cases'.
  EXPECT_NE(sweep_cases_csv(a.cases).find(",1,30000000,15000000,"), std::string::npos)
      << sweep_cases_csv(a.cases);
  ScenarioConfig cfg = load_scenario_text("", "s.toml");
  cfg.warnings = {"s.toml: a loader warning"};
  a.cases[0].warnings = {"s.toml: a run warning"};
  const auto j = sweep_json(cfg, a.rows, a.cases, "");
  EXPECT_EQ(j["cases"][0]["max_jct_ps"], 30'000'000);
  ASSERT_EQ(j["warnings"].size(), 2U);
  EXPECT_EQ(j["warnings"][0], "s.toml: a loader warning");
  // A column of jobs beside one of flows: no ratio (a JCT over an FCT means nothing).
  CompareColumn jobs{"jobs", {}, {}};
  for (uint64_t s = 0; s < 3; ++s) jobs.cases.push_back(scripted("", 0, s + 1, 25));
  jobs.rows = aggregate(jobs.cases);
  const auto mixed = compare_rows({jobs, a});
  EXPECT_EQ(mixed[0].ratio[1], -1);
  EXPECT_NE(compare_table({jobs, a}, mixed).find("no ratio between a column of jobs"),
            std::string::npos);
}

TEST(Compare, SeedListsAndRanges) {
  EXPECT_EQ(parse_seeds("1-4", "--seeds"), (std::vector<uint64_t>{1, 2, 3, 4}));
  EXPECT_EQ(parse_seeds("7,3,9", "--seeds"), (std::vector<uint64_t>{7, 3, 9}));
  EXPECT_THROW(parse_seeds("4-1", "--seeds"), ConfigError);
  EXPECT_THROW(parse_seeds("a,b", "--seeds"), ConfigError);
  EXPECT_THROW(parse_seeds("", "--seeds"), ConfigError);
  EXPECT_THROW(parse_seeds("1,1,1", "--seeds"), ConfigError);  // would count each case thrice
  EXPECT_THROW(parse_seeds("3,5,3", "--seeds"), ConfigError);
}

}  // namespace
}  // namespace fabsim
