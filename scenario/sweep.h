// Sweeps: every (collective, size, seed) case of a scenario runs as an independent simulation,
// several at once on the machine's cores; results aggregate over seeds into one nccl-tests-like
// table (size, time, algbw, busbw) with median, min and max.
#pragma once

#include <cstdint>     // sizes, seeds
#include <functional>  // progress callback (not on a hot path)
#include <string>      // names
#include <vector>      // cases

#include "report/results.h"
#include "report/writers.h"
#include "scenario/runner.h"
#include "scenario/scenario.h"

namespace fabsim {

/// How far a case got: a signal (StopFlag) stops the case that runs and starts no other.
enum class CaseStatus : uint8_t { kDone, kInterrupted, kNotStarted };
const char* case_status_name(CaseStatus s);  // "done", "interrupted", "not_started"

struct SweepCase {
  std::string collective;  // "" when the scenario does not sweep collectives
  int64_t size = 0;        // 0 when it does not sweep sizes
  uint64_t seed = 0;
  JobsSummary jobs;
  FctSummary flows;
  Time end_time;
  bool all_done = false;
  bool complete = false;         // all done and no sender failed
  std::string ledger_violation;  // "" when the conservation ledger balanced (RunResult::conserved)
  std::vector<std::string> warnings;  // found when the case's run was built (Run::warnings)
  uint64_t events = 0;
  double wall_seconds = 0;
  CaseStatus status = CaseStatus::kDone;
  RunResult result;  // full result (kept only when asked for)
  /// The case's headline in us: the slowest job's JCT, or with no job (a workload of flows)
  /// the slowest flow's FCT; and the mean of the same (jobs' JCTs or flows' FCTs).
  bool has_jobs() const { return jobs.jobs > 0; }
  Time headline() const { return has_jobs() ? jobs.max_jct : flows.max; }
  Time mean() const { return has_jobs() ? jobs.mean_jct : flows.mean; }
  double headline_us() const { return headline().us_f(); }
  double mean_us() const { return mean().us_f(); }
};

/// The distinct warnings of `cases`, in the order first found (cases of one scenario mostly
/// share them).
std::vector<std::string> sweep_warnings(const std::vector<SweepCase>& cases);

/// Whether every case ran to its end (none interrupted or left out).
bool all_cases_ran(const std::vector<SweepCase>& cases);

/// Statistic over seeds: median (mean of the middle two for an even count), min, max.
struct Spread {
  double median = 0;
  double min = 0;
  double max = 0;
};
Spread spread(std::vector<double> values);

struct SweepRow {
  std::string collective;
  int64_t size = 0;
  int ranks = 0;
  size_t seeds = 0;
  bool all_done = true;
  bool flows = false;  // no job in the cases: max_jct_us and mean_jct_us are flows' FCTs
  Spread max_jct_us;
  Spread mean_jct_us;
  Spread op_time_us;
  Spread algbw_gbs;
  Spread busbw_gbs;
};

/// Runs every case of `cfg.sweep` with up to `threads` simulations at once (0 = one per core).
/// `keep_results` keeps each case's full RunResult (for per-case files). `progress` is called
/// after each finished case (from the worker thread that ran it, serialised). Once `*stop` is
/// set, the running cases stop (kInterrupted, their partial results kept) and no other starts
/// (kNotStarted). An error in a case (e.g. the resource guard) is rethrown once the other
/// running cases end.
std::vector<SweepCase>
run_sweep(const ScenarioConfig& cfg, unsigned threads, bool keep_results,
          const std::function<void(const SweepCase&, size_t, size_t)>& progress,
          const StopFlag* stop = nullptr);
/// The cases that run at once: `threads` (0 = one per core), at most one per case.
unsigned sweep_threads(const ScenarioConfig& cfg, unsigned threads);
/// Rows over the cases that ran to their end (kDone).
std::vector<SweepRow> aggregate(const std::vector<SweepCase>& cases);

std::string sweep_table(const std::vector<SweepRow>& rows);
/// One row per case; when not every case ran, with a last column `status`.
std::string sweep_cases_csv(const std::vector<SweepCase>& cases);
std::string sweep_rows_csv(const std::vector<SweepRow>& rows);
/// When not every case ran: an "interrupted" block (`reason`, e.g. "SIGINT", and the counts)
/// and each case's "status".
nlohmann::ordered_json sweep_json(const ScenarioConfig& cfg, const std::vector<SweepRow>& rows,
                                  const std::vector<SweepCase>& cases,
                                  const std::string& reason = "");

}  // namespace fabsim
