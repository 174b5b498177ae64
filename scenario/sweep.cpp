// Sweep execution and aggregation; see sweep.h.
#include "scenario/sweep.h"

#include <fmt/format.h>  // tables

#include <algorithm>  // sort, find
#include <atomic>     // work counter
#include <exception>  // errors of a case, rethrown
#include <map>        // grouping by case
#include <mutex>      // progress serialisation
#include <thread>     // workers

#include "scenario/runner.h"

namespace fabsim {

Spread spread(std::vector<double> v) {
  Spread s;
  if (v.empty()) return s;
  std::sort(v.begin(), v.end());
  s.min = v.front();
  s.max = v.back();
  const size_t n = v.size();
  s.median = n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  return s;
}

const char* case_status_name(CaseStatus s) {
  switch (s) {
    case CaseStatus::kDone:
      return "done";
    case CaseStatus::kInterrupted:
      return "interrupted";
    case CaseStatus::kNotStarted:
      return "not_started";
  }
  return "?";
}

bool all_cases_ran(const std::vector<SweepCase>& cases) {
  return std::all_of(cases.begin(), cases.end(),
                     [](const SweepCase& c) { return c.status == CaseStatus::kDone; });
}

unsigned sweep_threads(const ScenarioConfig& cfg, unsigned threads) {
  const auto& sw = cfg.sweep;
  const size_t cases = std::max<size_t>(1, sw.collectives.size()) *
                       std::max<size_t>(1, sw.sizes.size()) * std::max<size_t>(1, sw.seeds.size());
  if (threads == 0) threads = std::max(1U, std::thread::hardware_concurrency());
  return static_cast<unsigned>(std::min<size_t>(threads, cases));
}

namespace {
struct CaseSpec {
  const Collective* collective;
  const int64_t* size;
  const uint64_t* seed;
};
}  // namespace

std::vector<SweepCase>
run_sweep(const ScenarioConfig& cfg, unsigned threads, bool keep_results,
          const std::function<void(const SweepCase&, size_t, size_t)>& progress,
          const StopFlag* stop) {
  const auto& sw = cfg.sweep;
  std::vector<CaseSpec> specs;
  const size_t nc = std::max<size_t>(1, sw.collectives.size());
  const size_t ns = std::max<size_t>(1, sw.sizes.size());
  const size_t nseed = std::max<size_t>(1, sw.seeds.size());
  for (size_t c = 0; c < nc; ++c) {
    for (size_t s = 0; s < ns; ++s) {
      for (size_t k = 0; k < nseed; ++k) {
        specs.push_back({sw.collectives.empty() ? nullptr : &sw.collectives[c],
                         sw.sizes.empty() ? nullptr : &sw.sizes[s],
                         sw.seeds.empty() ? nullptr : &sw.seeds[k]});
      }
    }
  }
  std::vector<SweepCase> out(specs.size());
  for (size_t i = 0; i < specs.size(); ++i) {
    SweepCase& c = out[i];
    c.collective = specs[i].collective != nullptr ? collective_name(*specs[i].collective) : "";
    c.size = specs[i].size != nullptr ? *specs[i].size : 0;
    c.seed = specs[i].seed != nullptr ? *specs[i].seed : cfg.seed;
    c.status = CaseStatus::kNotStarted;
  }
  std::atomic<size_t> next{0};
  std::atomic<size_t> finished{0};
  std::atomic<bool> failed{false};
  std::exception_ptr error;
  std::mutex mu;
  auto run_case = [&](size_t i) {
    if (stop != nullptr && stop->load() != 0) return;  // stays kNotStarted
    const CaseSpec& spec = specs[i];
    Run run(instantiate(cfg, spec.collective, spec.size, spec.seed));
    run.stop_on(stop);
    RunResult r = run.execute();
    SweepCase& c = out[i];
    c.status = run.interrupted() != 0 ? CaseStatus::kInterrupted : CaseStatus::kDone;
    c.jobs = summarize_jobs(r);
    c.flows = summarize_fct(r);
    c.end_time = r.end_time;
    c.all_done = r.all_done;
    c.complete = r.complete();
    if (!r.conserved()) c.ledger_violation = conservation_violation(r);
    c.warnings = run.warnings();  // the run's own: the loader's were printed once for all
    c.events = r.events;
    c.wall_seconds = r.wall_seconds;
    if (keep_results) c.result = std::move(r);
    if (c.status != CaseStatus::kDone) return;
    const size_t done = finished.fetch_add(1) + 1;
    if (progress) {
      const std::lock_guard<std::mutex> lock(mu);
      progress(c, done, specs.size());
    }
  };
  auto worker = [&]() {
    for (;;) {
      if (failed.load() || (stop != nullptr && stop->load() != 0)) return;
      const size_t i = next.fetch_add(1);
      if (i >= specs.size()) return;
      try {
        run_case(i);
      } catch (...) {
        const std::lock_guard<std::mutex> lock(mu);
        if (!error) error = std::current_exception();
        failed.store(true);
        return;
      }
    }
  };
  threads = sweep_threads(cfg, threads);
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
  return out;
}

std::vector<SweepRow> aggregate(const std::vector<SweepCase>& cases) {
  std::vector<SweepRow> rows;
  std::map<std::pair<std::string, int64_t>, size_t> index;
  std::vector<std::vector<const SweepCase*>> groups;
  for (const auto& c : cases) {
    if (c.status != CaseStatus::kDone) continue;
    const auto key = std::make_pair(c.collective, c.size);
    auto [it, fresh] = index.try_emplace(key, groups.size());
    if (fresh) groups.emplace_back();
    groups[it->second].push_back(&c);
  }
  for (const auto& g : groups) {
    SweepRow row;
    row.collective = g.front()->collective;
    row.size = g.front()->size;
    row.ranks = g.front()->jobs.ranks;
    row.seeds = g.size();
    std::vector<double> mx, mean, op, alg, bus;
    row.flows = !g.front()->has_jobs();
    for (const auto* c : g) {
      row.all_done = row.all_done && c->all_done;
      mx.push_back(c->headline_us());
      mean.push_back(c->mean_us());
      op.push_back(c->jobs.op_time.us_f());
      alg.push_back(c->jobs.algbw_gbs);
      bus.push_back(c->jobs.busbw_gbs);
    }
    row.max_jct_us = spread(mx);
    row.mean_jct_us = spread(mean);
    row.op_time_us = spread(op);
    row.algbw_gbs = spread(alg);
    row.busbw_gbs = spread(bus);
    rows.push_back(row);
  }
  return rows;
}

std::string sweep_table(const std::vector<SweepRow>& rows) {
  std::string out = fmt::format("{:<18}{:>12}{:>6}{:>15}{:>24}{:>13}{:>13}{:>15}\n", "collective",
                                "size (B)", "seeds", "max JCT (us)", "[min, max] (us)",
                                "algbw (GB/s)", "busbw (GB/s)", "mean JCT (us)");
  out += fmt::format("{:-<116}\n", "");
  for (const auto& r : rows) {
    out += fmt::format(
        "{:<18}{:>12}{:>6}{:>15.1f}{:>24}{:>13.2f}{:>13.2f}{:>15.1f}{}\n",
        r.collective.empty() ? "-" : r.collective, r.size, r.seeds, r.max_jct_us.median,
        fmt::format("[{:.1f}, {:.1f}]", r.max_jct_us.min, r.max_jct_us.max), r.algbw_gbs.median,
        r.busbw_gbs.median, r.mean_jct_us.median, r.all_done ? "" : "  (not all done)");
  }
  out += "max JCT: the slowest job; algbw = size / (its JCT per collective op); busbw = algbw x "
         "nccl-tests factor; medians over seeds\n";
  if (std::any_of(rows.begin(), rows.end(), [](const SweepRow& r) { return r.flows; })) {
    out += "a workload of flows (no job): max JCT = the slowest flow's FCT, mean JCT = the mean "
           "FCT; no algbw or busbw\n";
  }
  return out;
}

std::string sweep_cases_csv(const std::vector<SweepCase>& cases) {
  const bool status = !all_cases_ran(cases);
  std::string out =
      "collective,size,seed,ranks,jobs,all_done,max_jct_ps,mean_jct_ps,op_time_ps,algbw_GBps,"
      "busbw_GBps,end_ps,events";
  out += status ? ",status\n" : "\n";
  for (const auto& c : cases) {
    out += fmt::format("{},{},{},{},{},{},{},{},{},{:.4f},{:.4f},{},{}", c.collective, c.size,
                       c.seed, c.jobs.ranks, c.jobs.jobs, c.all_done ? 1 : 0, c.headline().ps(),
                       c.mean().ps(), c.jobs.op_time.ps(), c.jobs.algbw_gbs, c.jobs.busbw_gbs,
                       c.end_time.ps(), c.events);
    out += status ? fmt::format(",{}\n", case_status_name(c.status)) : "\n";
  }
  return out;
}

std::string sweep_rows_csv(const std::vector<SweepRow>& rows) {
  std::string out =
      "collective,size,ranks,seeds,all_done,max_jct_us_median,max_jct_us_min,max_jct_us_max,"
      "mean_jct_us_median,algbw_GBps_median,algbw_GBps_min,algbw_GBps_max,busbw_GBps_median,"
      "busbw_GBps_min,busbw_GBps_max\n";
  for (const auto& r : rows) {
    out += fmt::format(
        "{},{},{},{},{},{:.3f},{:.3f},{:.3f},{:.3f},{:.4f},{:.4f},{:.4f},{:.4f},{:.4f},"
        "{:.4f}\n",
        r.collective, r.size, r.ranks, r.seeds, r.all_done ? 1 : 0, r.max_jct_us.median,
        r.max_jct_us.min, r.max_jct_us.max, r.mean_jct_us.median, r.algbw_gbs.median,
        r.algbw_gbs.min, r.algbw_gbs.max, r.busbw_gbs.median, r.busbw_gbs.min, r.busbw_gbs.max);
  }
  return out;
}

std::vector<std::string> sweep_warnings(const std::vector<SweepCase>& cases) {
  std::vector<std::string> out;
  for (const auto& c : cases) {
    for (const auto& w : c.warnings) {
      if (std::find(out.begin(), out.end(), w) == out.end()) out.push_back(w);
    }
  }
  return out;
}

nlohmann::ordered_json sweep_json(const ScenarioConfig& cfg, const std::vector<SweepRow>& rows,
                                  const std::vector<SweepCase>& cases, const std::string& reason) {
  nlohmann::ordered_json j;
  j["name"] = cfg.name;
  const bool status = !all_cases_ran(cases);
  if (status) {
    size_t n[3] = {0, 0, 0};
    for (const auto& c : cases) ++n[static_cast<size_t>(c.status)];
    j["interrupted"] = {{"reason", reason.empty() ? "stopped" : reason},
                        {"finished", n[0]},
                        {"interrupted", n[1]},
                        {"not_started", n[2]}};
  }
  j["scenario"] = cfg.effective;
  // The loader's warnings (printed once when the scenario was read), then the cases' own.
  std::vector<std::string> warnings = cfg.warnings;
  for (const auto& w : sweep_warnings(cases)) {
    if (std::find(warnings.begin(), warnings.end(), w) == warnings.end()) warnings.push_back(w);
  }
  if (!warnings.empty()) j["warnings"] = warnings;
  auto jr = nlohmann::ordered_json::array();
  for (const auto& r : rows) {
    auto sp = [](const Spread& s) {
      return nlohmann::ordered_json{{"median", s.median}, {"min", s.min}, {"max", s.max}};
    };
    jr.push_back({{"collective", r.collective},
                  {"size", r.size},
                  {"ranks", r.ranks},
                  {"seeds", r.seeds},
                  {"all_done", r.all_done},
                  {"max_jct_us", sp(r.max_jct_us)},
                  {"mean_jct_us", sp(r.mean_jct_us)},
                  {"op_time_us", sp(r.op_time_us)},
                  {"algbw_GBps", sp(r.algbw_gbs)},
                  {"busbw_GBps", sp(r.busbw_gbs)}});
  }
  j["rows"] = jr;
  auto jc = nlohmann::ordered_json::array();
  for (const auto& c : cases) {
    jc.push_back({{"collective", c.collective},
                  {"size", c.size},
                  {"seed", c.seed},
                  {"all_done", c.all_done},
                  {"max_jct_ps", c.headline().ps()},
                  {"mean_jct_ps", c.mean().ps()},
                  {"algbw_GBps", c.jobs.algbw_gbs},
                  {"busbw_GBps", c.jobs.busbw_gbs}});
    if (status) jc.back()["status"] = case_status_name(c.status);
  }
  j["cases"] = jc;
  return j;
}

}  // namespace fabsim
