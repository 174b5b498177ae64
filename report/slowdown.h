// FCT slowdown by flow size (issue 16 item 4; docs/MODEL.md "FCT slowdown"), reported as the
// HPCC paper's analysis (analysis/fct_analysis.py, REFERENCE.md §9.2.5) does: each completed
// flow's slowdown = FCT / ideal FCT (net/ideal_fct.h), clamped at >= 1; the flows sorted by size
// and split into buckets of equal flow count; per bucket its largest size and the p50, p95 and
// p99 slowdown.
#pragma once

#include <cstdint>  // sizes
#include <string>   // CSV
#include <vector>   // buckets

#include <nlohmann/json.hpp>  // summary block

#include "core/units.h"
#include "transport/flow.h"

namespace fabsim {

struct SlowdownBucket {
  size_t flows = 0;
  int64_t min_bytes = 0;
  int64_t max_bytes = 0;  // the bucket's largest flow: its x in the plot
  double p50 = 1;
  double p95 = 1;
  double p99 = 1;
};

/// Slowdown of one flow: fct / ideal, at least 1 (1 when ideal is 0).
double slowdown(Time fct, Time ideal);

/// The completed flows of `flows` (`ideal[i]` is flow i's ideal FCT) sorted by size (equal sizes
/// in flow order) and split into `buckets` buckets: bucket b holds sorted flows [b n / B,
/// (b + 1) n / B), so the counts differ by at most one; an empty bucket (fewer flows than
/// buckets) is left out. Percentile p of a bucket of k flows is its sorted slowdowns' element
/// floor(k p) (fct_analysis.py's get_pctl), at most the last.
std::vector<SlowdownBucket> slowdown_by_size(const std::vector<FlowRecord>& flows,
                                             const std::vector<Time>& ideal, int buckets);
/// Every completed flow as one bucket (the run's overall p50, p95, p99).
SlowdownBucket slowdown_overall(const std::vector<FlowRecord>& flows,
                                const std::vector<Time>& ideal);

/// slowdown.csv: bucket, flows, min_bytes, max_bytes, p50, p95, p99.
std::string slowdown_csv(const std::vector<SlowdownBucket>& buckets);
/// summary.json's "slowdown" block; its overall p50, p95 and p99 are null when no flow
/// completed.
nlohmann::ordered_json slowdown_json(const std::vector<FlowRecord>& flows,
                                     const std::vector<Time>& ideal, int buckets);
/// The table `fabsim run` prints below its summary.
std::string slowdown_table(const std::vector<SlowdownBucket>& buckets);

}  // namespace fabsim
