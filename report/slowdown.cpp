// FCT slowdown by flow size; see slowdown.h.
#include "report/slowdown.h"

#include <fmt/format.h>  // CSV and table

#include <algorithm>  // sort, stable_sort, min, max

namespace fabsim {

double slowdown(Time fct, Time ideal) {
  if (ideal <= Time()) return 1.0;
  return std::max(1.0, static_cast<double>(fct.ps()) / static_cast<double>(ideal.ps()));
}

namespace {

// The completed flows' indices, by size (equal sizes in flow order).
std::vector<size_t> completed_by_size(const std::vector<FlowRecord>& flows,
                                      const std::vector<Time>& ideal) {
  std::vector<size_t> idx;
  for (size_t i = 0; i < flows.size() && i < ideal.size(); ++i) {
    if (flows[i].done) idx.push_back(i);
  }
  std::stable_sort(idx.begin(), idx.end(), [&flows](size_t a, size_t b) {
    return flows[a].spec.bytes < flows[b].spec.bytes;
  });
  return idx;
}

SlowdownBucket bucket_of(const std::vector<FlowRecord>& flows, const std::vector<Time>& ideal,
                         const size_t* first, const size_t* last) {
  SlowdownBucket b;
  b.flows = static_cast<size_t>(last - first);
  if (b.flows == 0) return b;
  std::vector<double> s;
  s.reserve(b.flows);
  b.min_bytes = flows[*first].spec.bytes;
  for (const size_t* i = first; i != last; ++i) {
    s.push_back(slowdown(flows[*i].fct(), ideal[*i]));
    b.min_bytes = std::min(b.min_bytes, flows[*i].spec.bytes);
    b.max_bytes = std::max(b.max_bytes, flows[*i].spec.bytes);
  }
  std::sort(s.begin(), s.end());
  auto pct = [&s](double p) {
    return s[std::min(s.size() - 1, static_cast<size_t>(static_cast<double>(s.size()) * p))];
  };
  b.p50 = pct(0.50);
  b.p95 = pct(0.95);
  b.p99 = pct(0.99);
  return b;
}

}  // namespace

std::vector<SlowdownBucket> slowdown_by_size(const std::vector<FlowRecord>& flows,
                                             const std::vector<Time>& ideal, int buckets) {
  const std::vector<size_t> idx = completed_by_size(flows, ideal);
  const size_t n = idx.size();
  const auto k = static_cast<size_t>(std::max(buckets, 1));
  std::vector<SlowdownBucket> out;
  for (size_t b = 0; b < k; ++b) {
    const size_t lo = b * n / k;
    const size_t hi = (b + 1) * n / k;
    if (hi > lo) out.push_back(bucket_of(flows, ideal, idx.data() + lo, idx.data() + hi));
  }
  return out;
}

SlowdownBucket slowdown_overall(const std::vector<FlowRecord>& flows,
                                const std::vector<Time>& ideal) {
  const std::vector<size_t> idx = completed_by_size(flows, ideal);
  return bucket_of(flows, ideal, idx.data(), idx.data() + idx.size());
}

std::string slowdown_csv(const std::vector<SlowdownBucket>& buckets) {
  std::string out = "bucket,flows,min_bytes,max_bytes,p50,p95,p99\n";
  for (size_t i = 0; i < buckets.size(); ++i) {
    const auto& b = buckets[i];
    out += fmt::format("{},{},{},{},{:.4f},{:.4f},{:.4f}\n", i, b.flows, b.min_bytes, b.max_bytes,
                       b.p50, b.p95, b.p99);
  }
  return out;
}

nlohmann::ordered_json slowdown_json(const std::vector<FlowRecord>& flows,
                                     const std::vector<Time>& ideal, int buckets) {
  const SlowdownBucket all = slowdown_overall(flows, ideal);
  // No completed flow has no percentile: null, not the empty bucket's default of 1.
  auto pct = [&all](double v) { return all.flows > 0 ? nlohmann::ordered_json(v) : nullptr; };
  nlohmann::ordered_json j = {{"definition", "fct / ideal fct on the empty network, clamped at 1"},
                              {"completed_flows", all.flows},
                              {"p50", pct(all.p50)},
                              {"p95", pct(all.p95)},
                              {"p99", pct(all.p99)}};
  auto rows = nlohmann::ordered_json::array();
  for (const auto& b : slowdown_by_size(flows, ideal, buckets)) {
    rows.push_back({{"flows", b.flows},
                    {"max_bytes", b.max_bytes},
                    {"p50", b.p50},
                    {"p95", b.p95},
                    {"p99", b.p99}});
  }
  j["buckets"] = rows;
  return j;
}

std::string slowdown_table(const std::vector<SlowdownBucket>& buckets) {
  std::string out =
      fmt::format("\n{:>14}{:>8}{:>10}{:>10}{:>10}\n", "size <= (B)", "flows", "p50", "p95", "p99");
  out += fmt::format("{:-<52}\n", "");
  for (const auto& b : buckets) {
    out += fmt::format("{:>14}{:>8}{:>10.2f}{:>10.2f}{:>10.2f}\n", b.max_bytes, b.flows, b.p50,
                       b.p95, b.p99);
  }
  out += "slowdown = FCT / ideal FCT on the empty network, clamped at >= 1 (HPCC's analysis)\n";
  return out;
}

}  // namespace fabsim
