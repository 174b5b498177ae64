// Result writers: the JSON summary (effective scenario + seed + figures, nothing wall-clock),
// the per-flow CSV, the trace CSV, and the human-readable table printed by `fabsim run`.
#pragma once

#include <string>  // paths, text

#include <nlohmann/json.hpp>  // summary

#include "report/results.h"

namespace fabsim {

/// FCT statistics of the completed flows, in picoseconds.
struct FctSummary {
  size_t flows = 0;
  size_t completed = 0;
  Time p50, p99, max, mean;
  double goodput_gbps = 0;  // delivered payload bits / (last end - first start)
};
FctSummary summarize_fct(const RunResult& r);

/// Job figures of a run: the headline is the slowest job (max JCT), as seed 002 reports.
struct JobsSummary {
  size_t jobs = 0;
  bool all_done = false;
  Time max_jct;
  Time mean_jct;
  /// The slowest job's JCT per collective operation it ran (its JCT divided by the number of
  /// collective ops, iterations included): the "time" of an nccl-tests row.
  Time op_time;
  int64_t bytes = 0;  // S of the first collective op
  const char* collective = "";
  int ranks = 0;
  double algbw_gbs = 0;  // S / op_time, GB/s (1e9 B/s) as nccl-tests prints
  double busbw_gbs = 0;  // algbw x bus factor
};
JobsSummary summarize_jobs(const RunResult& r);

/// A finished job's bandwidth over its collective ops, as nccl-tests computes it per op
/// (algbw = S / time, busbw = algbw x the collective's bus factor), over the job's JCT: algbw =
/// the ops' mean size / (JCT / ops), busbw = algbw x the ops' bus factors weighted by their
/// bytes. Zeros (collectives 0) for a job that is not done or ran no collective.
struct JobBandwidth {
  int collectives = 0;
  Time op_time;  // JCT / collectives
  double algbw_gbs = 0;
  double busbw_gbs = 0;
};
JobBandwidth job_bandwidth(const JobResult& job);

/// A training job's figures (workload "training"): mean iteration time, samples per second, and
/// the share of the iterations not covered by the busiest GPU's compute (communication exposed).
struct TrainingFigures {
  Time mean_iteration;
  double samples_per_s = 0;
  double exposed = 0;
};
TrainingFigures training_figures(const JobResult& job);

nlohmann::ordered_json summary_json(const RunResult& r);
/// The conservation ledger block of summary.json (docs/MODEL.md "The conservation ledger").
nlohmann::ordered_json ledger_json(const RunResult& r);
std::string flows_csv(const RunResult& r);
std::string trace_csv(const RunResult& r);
/// Sampled ports: time, node, port, queued data bytes, utilisation since the previous sample.
std::string timeseries_csv(const RunResult& r);
/// The table `fabsim run` prints.
std::string summary_table(const RunResult& r);

/// Writes summary.json, flows.csv (if `flows`), trace.csv (if any trace), timeseries.csv (if
/// sampled) and slowdown.csv (if the run reports slowdown) into `dir`, creating it. Throws
/// std::runtime_error naming the path on failure.
void write_results(const RunResult& r, const std::string& dir, bool flows);

}  // namespace fabsim
