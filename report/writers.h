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

nlohmann::ordered_json summary_json(const RunResult& r);
std::string flows_csv(const RunResult& r);
std::string trace_csv(const RunResult& r);
/// The table `fabsim run` prints.
std::string summary_table(const RunResult& r);

/// Writes summary.json, flows.csv (if `flows`) and trace.csv (if any trace) into `dir`,
/// creating it. Throws std::runtime_error naming the path on failure.
void write_results(const RunResult& r, const std::string& dir, bool flows);

}  // namespace fabsim
