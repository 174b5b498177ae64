// Side-by-side comparison of scenarios on the same cases (issue 8; docs/VALIDATION.md): every
// scenario's sweep runs over the same seeds, and for each (collective, size) the table gives
// each scenario's max-job JCT (median, min, max over seeds) and each scenario's ratio to the
// first (the baseline): the ratio of medians and the range of per-seed ratios (the same seed
// gives the same placement and ECMP hash seed on both).
#pragma once

#include <cstdint>  // seeds
#include <string>   // names
#include <vector>   // columns

#include "scenario/sweep.h"

namespace fabsim {

struct CompareColumn {
  std::string name;  // the scenario's name (made unique)
  std::vector<SweepCase> cases;
  std::vector<SweepRow> rows;
};

struct CompareRow {
  std::string collective;
  int64_t size = 0;
  std::vector<Spread> jct_ms;  // per column; median < 0 when the column lacks the case
  std::vector<bool> all_done;
  std::vector<double> ratio;       // per column: median / baseline median (column 0: 1)
  std::vector<Spread> seed_ratio;  // per column: per-seed ratios to the baseline
};

/// Seeds from "1-10" or "1,2,5" (ConfigError naming `what` otherwise).
std::vector<uint64_t> parse_seeds(const std::string& text, const std::string& what);

std::vector<CompareRow> compare_rows(const std::vector<CompareColumn>& cols);
std::string compare_table(const std::vector<CompareColumn>& cols,
                          const std::vector<CompareRow>& rows);
std::string compare_csv(const std::vector<CompareColumn>& cols,
                        const std::vector<CompareRow>& rows);

}  // namespace fabsim
