// Scenario comparison tables; see compare.h.
#include "scenario/compare.h"

#include <fmt/format.h>  // tables

#include <algorithm>  // find (repeated seeds)
#include <map>        // case lookup
#include <tuple>      // case keys

#include "config/reader.h"  // ConfigError

namespace fabsim {

std::vector<uint64_t> parse_seeds(const std::string& text, const std::string& what) {
  std::vector<uint64_t> seeds;
  auto bad = [&]() {
    return ConfigError(
        fmt::format("{}: expected seeds as \"FIRST-LAST\" or \"A,B,C\" (non-negative "
                    "integers), got \"{}\"",
                    what, text));
  };
  auto number = [&](const std::string& s) {
    if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos || s.size() > 18)
      throw bad();
    return static_cast<uint64_t>(std::stoull(s));
  };
  const auto dash = text.find('-');
  if (dash != std::string::npos) {
    const uint64_t a = number(text.substr(0, dash));
    const uint64_t b = number(text.substr(dash + 1));
    if (b < a || b - a > 10000) throw bad();
    for (uint64_t s = a; s <= b; ++s) seeds.push_back(s);
    return seeds;
  }
  size_t start = 0;
  for (;;) {
    const auto comma = text.find(',', start);
    seeds.push_back(
        number(text.substr(start, comma == std::string::npos ? std::string::npos : comma - start)));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  // A repeated seed would run the same case twice and count it twice in the medians (as
  // sweep.seeds refuses).
  for (size_t i = 0; i < seeds.size(); ++i) {
    if (std::find(seeds.begin(), seeds.begin() + static_cast<std::ptrdiff_t>(i), seeds[i]) !=
        seeds.begin() + static_cast<std::ptrdiff_t>(i)) {
      throw ConfigError(fmt::format("{}: expected distinct seeds, got \"{}\" ({} appears twice)",
                                    what, text, seeds[i]));
    }
  }
  return seeds;
}

std::vector<CompareRow> compare_rows(const std::vector<CompareColumn>& cols) {
  std::vector<CompareRow> rows;
  if (cols.empty()) return rows;
  // Per column: (collective, size, seed) -> max JCT in us.
  using Key = std::tuple<std::string, int64_t, uint64_t>;
  std::vector<std::map<Key, double>> jct(cols.size());
  // A column of jobs and one of flows measure different things (a JCT, a flow's FCT): no ratio.
  std::vector<int> kind(cols.size(), -1);  // 1 jobs, 0 flows, -1 no finished case
  for (size_t c = 0; c < cols.size(); ++c) {
    for (const auto& k : cols[c].cases) {
      if (k.status != CaseStatus::kDone) continue;
      jct[c][{k.collective, k.size, k.seed}] = k.headline_us();
      kind[c] = k.has_jobs() ? 1 : 0;
    }
  }
  for (const auto& base : cols[0].rows) {
    CompareRow r;
    r.collective = base.collective;
    r.size = base.size;
    for (size_t c = 0; c < cols.size(); ++c) {
      const SweepRow* row = nullptr;
      for (const auto& x : cols[c].rows) {
        if (x.collective == base.collective && x.size == base.size) row = &x;
      }
      Spread s{-1, -1, -1};
      if (row != nullptr)
        s = {row->max_jct_us.median / 1e3, row->max_jct_us.min / 1e3, row->max_jct_us.max / 1e3};
      r.jct_ms.push_back(s);
      r.all_done.push_back(row != nullptr && row->all_done);
      const bool alike = kind[c] == kind[0];
      r.ratio.push_back(row != nullptr && alike && base.max_jct_us.median > 0
                            ? row->max_jct_us.median / base.max_jct_us.median
                            : -1);
      std::vector<double> per_seed;
      for (const auto& [key, v] : jct[0]) {
        if (!alike) break;
        if (std::get<0>(key) != base.collective || std::get<1>(key) != base.size || v <= 0)
          continue;
        const auto it = jct[c].find(key);
        if (it != jct[c].end()) per_seed.push_back(it->second / v);
      }
      r.seed_ratio.push_back(per_seed.empty() ? Spread{-1, -1, -1} : spread(per_seed));
    }
    rows.push_back(r);
  }
  return rows;
}

namespace {
std::string size_text(int64_t b) {
  if (b <= 0) return "-";
  if (b % (1 << 30) == 0) return fmt::format("{} GiB", b >> 30);
  if (b % (1 << 20) == 0) return fmt::format("{} MiB", b >> 20);
  if (b % (1 << 10) == 0) return fmt::format("{} KiB", b >> 10);
  return fmt::format("{} B", b);
}
}  // namespace

std::string compare_table(const std::vector<CompareColumn>& cols,
                          const std::vector<CompareRow>& rows) {
  std::string out;
  out += fmt::format("{:<16}{:>9}", "collective", "size");
  for (const auto& c : cols) out += fmt::format("  {:>28}", c.name.substr(0, 28));
  for (size_t c = 1; c < cols.size(); ++c)
    out += fmt::format("  {:>22}", fmt::format("ratio {}", c + 1));
  out += "\n";
  const size_t width = 25 + 30 * cols.size() + 24 * (cols.size() - 1);
  out += std::string(width, '-') + "\n";
  for (const auto& r : rows) {
    out += fmt::format("{:<16}{:>9}", r.collective.empty() ? "-" : r.collective, size_text(r.size));
    for (size_t c = 0; c < cols.size(); ++c) {
      const Spread& s = r.jct_ms[c];
      out += s.median < 0
                 ? fmt::format("  {:>28}", "missing")
                 : fmt::format("  {:>28}", fmt::format("{:.4g} [{:.4g}, {:.4g}]{}", s.median, s.min,
                                                       s.max, r.all_done[c] ? "" : "*"));
    }
    for (size_t c = 1; c < cols.size(); ++c) {
      const Spread& q = r.seed_ratio[c];
      out += r.ratio[c] < 0 ? fmt::format("  {:>22}", "-")
                            : fmt::format("  {:>22}", fmt::format("{:.2f} [{:.2f}, {:.2f}]",
                                                                  r.ratio[c], q.min, q.max));
    }
    out += "\n";
  }
  out += std::string(width, '-') + "\n";
  out += "max-job JCT in ms: median [min, max] over seeds (* = not every job finished)\n";
  bool flows = false;
  bool jobs = false;
  for (const auto& c : cols) {
    for (const auto& k : c.cases) {
      if (k.status != CaseStatus::kDone) continue;  // a case not run has no kind
      (k.has_jobs() ? jobs : flows) = true;
    }
  }
  if (flows) out += "a workload of flows (no job): the slowest flow's FCT in its place\n";
  if (flows && jobs) out += "no ratio between a column of jobs and one of flows ('-')\n";
  for (size_t c = 1; c < cols.size(); ++c) {
    out += fmt::format("ratio {}: {} / {}, ratio of medians [range of per-seed ratios]\n", c + 1,
                       cols[c].name, cols[0].name);
  }
  return out;
}

std::string compare_csv(const std::vector<CompareColumn>& cols,
                        const std::vector<CompareRow>& rows) {
  std::string out = "collective,size";
  for (size_t c = 0; c < cols.size(); ++c) {
    out +=
        fmt::format(",{0}_jct_ms_median,{0}_jct_ms_min,{0}_jct_ms_max,{0}_all_done", cols[c].name);
  }
  for (size_t c = 1; c < cols.size(); ++c) {
    out += fmt::format(",ratio_{0},ratio_{0}_seed_min,ratio_{0}_seed_max", cols[c].name);
  }
  out += "\n";
  for (const auto& r : rows) {
    out += fmt::format("{},{}", r.collective, r.size);
    for (size_t c = 0; c < cols.size(); ++c) {
      out += fmt::format(",{:.6f},{:.6f},{:.6f},{}", r.jct_ms[c].median, r.jct_ms[c].min,
                         r.jct_ms[c].max, r.all_done[c] ? 1 : 0);
    }
    for (size_t c = 1; c < cols.size(); ++c) {
      out += fmt::format(",{:.6f},{:.6f},{:.6f}", r.ratio[c], r.seed_ratio[c].min,
                         r.seed_ratio[c].max);
    }
    out += "\n";
  }
  return out;
}

}  // namespace fabsim
