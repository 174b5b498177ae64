// Every scenario test asserts the conservation ledger (core/ledger.h, issue 14 item 6): tests
// run scenarios through these wrappers instead of run_scenario() and Run::execute().
#pragma once

#include <gtest/gtest.h>

#include "scenario/runner.h"
#include "scenario/sweep.h"

namespace fabsim {

/// Expects `r`'s ledger to balance (every injected packet delivered, dropped by a cause, or in
/// flight) and every packet to have gone back to the pool at teardown.
inline void expect_conserved(const RunResult& r) {
  EXPECT_TRUE(r.ledger.closed) << "the run's ledger was never closed";
  EXPECT_TRUE(r.conserved()) << r.name << ": " << conservation_violation(r);
  EXPECT_EQ(r.packets_live_at_end, 0U) << "packets leaked from the pool";
}

inline RunResult run_checked(const ScenarioConfig& cfg) {
  RunResult r = run_scenario(cfg);
  expect_conserved(r);
  return r;
}

inline RunResult execute_checked(Run& run) {
  RunResult r = run.execute();
  expect_conserved(r);
  return r;
}

/// run_sweep, expecting every case's ledger to balance.
inline std::vector<SweepCase>
run_sweep_checked(const ScenarioConfig& cfg, unsigned threads, bool keep_results,
                  const std::function<void(const SweepCase&, size_t, size_t)>& progress) {
  std::vector<SweepCase> cases = run_sweep(cfg, threads, keep_results, progress);
  for (const SweepCase& c : cases) EXPECT_EQ(c.ledger_violation, "") << "seed " << c.seed;
  return cases;
}

}  // namespace fabsim
