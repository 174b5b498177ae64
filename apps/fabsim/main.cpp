// fabsim command line: run, validate, list, plot, compare.
#include <CLI/CLI.hpp>   // command line
#include <fmt/format.h>  // output
#include <signal.h>      // sigaction (SIGINT, SIGTERM)
#include <unistd.h>      // getpid (temporary script name)

#include <algorithm>   // max of exit codes
#include <atomic>      // the stop flag
#include <chrono>      // progress line
#include <cstdio>      // stderr
#include <cstdlib>     // system (plot script)
#include <exception>   // top-level errors
#include <filesystem>  // output directories
#include <fstream>     // result files
#include <stdexcept>   // write errors
#include <string>      // arguments
#include <vector>      // overrides

#include "plot_script.h"
#include "report/writers.h"
#include "scenario/compare.h"
#include "scenario/resources.h"
#include "scenario/runner.h"
#include "scenario/scenario.h"
#include "scenario/sweep.h"

namespace fabsim {
namespace {

// Exit codes (README "Exit codes"): 0 every flow finished and no sender failed; 1 an internal
// error; 2 bad input (the message names the file and key), including a run the resource guard
// refuses (--max-memory) or stops (its heap grew past the limit: MemoryWatch); 3 the run, or a case
// of a sweep or comparison, ended with unfinished flows or failed senders (results are still
// written); 128 + the signal's number when SIGINT (130) or SIGTERM (143) stopped a run, sweep or
// comparison: the finished cases and the partial one are written and marked interrupted.
constexpr int kExitIncomplete = 3;
constexpr int kExitSignalBase = 128;

// The one piece of process-wide state: the signal that asked to stop (0: none). A signal
// handler may only store to a lock-free atomic; the simulations poll it between events
// (Run::stop_on), and the sweeps before each case.
std::atomic<int> g_stop{0};
static_assert(std::atomic<int>::is_always_lock_free);

// The first reason to stop is kept (a later signal, or the memory watch, does not replace it):
// the reason printed and the exit code are read from the flag at different times.
extern "C" void on_stop_signal(int sig) {
  int none = 0;
  g_stop.compare_exchange_strong(none, sig, std::memory_order_relaxed);
}

// SIGINT and SIGTERM stop at the next safe point; SA_RESETHAND makes a second one end the
// process at once. A signal ignored on entry (a background job of a non-interactive shell, or
// nohup) stays ignored.
void install_stop_handlers() {
  for (const int sig : {SIGINT, SIGTERM}) {
    struct sigaction old {};
    if (::sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_IGN) continue;
    struct sigaction sa {};
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESETHAND;
    ::sigaction(sig, &sa, nullptr);
  }
}

// What stopped a run: a signal, or the memory watch (scenario/resources.h).
std::string signal_name(int sig) {
  if (sig == kStopMemory) return "the memory limit (--max-memory)";
  if (sig == SIGINT) return "SIGINT";
  if (sig == SIGTERM) return "SIGTERM";
  return fmt::format("signal {}", sig);
}

// The exit code of a stopped run: 128 + the signal's number, or 2 when the memory watch stopped
// it (the resource guard refusing a run that grew past the limit).
int stop_exit(int stop) {
  return stop == kStopMemory ? 2 : kExitSignalBase + stop;
}

void print_warnings(const ScenarioConfig& cfg) {
  for (const auto& w : cfg.warnings) std::fprintf(stderr, "fabsim: warning: %s\n", w.c_str());
}

// A workload that starts nothing (kind "external") is for a program that drives fabsim through
// the embedding API (docs/EMBEDDING.md); from the command line the run would be empty, which
// issue 14 made an error.
void require_traffic(const ScenarioConfig& cfg) {
  if (!cfg.workload.kind->starts(cfg.workload.config).empty()) return;
  throw ConfigError(fmt::format("{}: workload.kind: a workload that starts traffic (\"{}\" starts "
                                "none: a program drives it through the embedding API, "
                                "docs/EMBEDDING.md)",
                                cfg.file, cfg.workload.name()));
}

// The resource guard before anything is built or written (scenario/resources.h); Run checks
// again on the built network.
void guard_memory(ScenarioConfig& cfg, uint64_t limit, unsigned concurrent, bool keep_results) {
  cfg.memory_limit = limit;
  check_memory(cfg, estimate_command_memory(cfg, concurrent, keep_results), limit);
}

// 1 (internal error) with a line on stderr if a case's conservation ledger did not balance.
int ledger_exit(const std::vector<SweepCase>& cases, const std::string& name) {
  for (const auto& c : cases) {
    if (c.ledger_violation.empty()) continue;
    std::fprintf(stderr,
                 "fabsim: internal error: %s: seed %llu: the conservation ledger does not "
                 "balance: %s\n",
                 name.c_str(), static_cast<unsigned long long>(c.seed), c.ledger_violation.c_str());
    return 1;
  }
  return 0;
}

// The exit code of a set of cases, with a line on stderr naming the first incomplete one.
int cases_exit(const std::vector<SweepCase>& cases, const std::string& name) {
  if (const int ledger = ledger_exit(cases, name)) return ledger;
  size_t bad = 0;
  for (const auto& c : cases) bad += c.complete || c.status != CaseStatus::kDone ? 0 : 1;
  if (bad == 0) return 0;
  std::fprintf(stderr,
               "fabsim: %s: %zu of %zu cases ended with unfinished flows or failed "
               "senders (exit %d)\n",
               name.c_str(), bad, cases.size(), kExitIncomplete);
  return kExitIncomplete;
}

// Prints simulated time, wall time and events/s on stderr, once a second after the first 2 s.
class StderrProgress : public ProgressHook {
 public:
  void on_progress(Time now, uint64_t events) override {
    const auto t = std::chrono::steady_clock::now();
    const double wall = std::chrono::duration<double>(t - start_).count();
    if (wall < 2.0 || wall - last_ < 1.0) return;
    last_ = wall;
    std::fprintf(stderr, "\r[fabsim] simulated %.3f us  wall %.1f s  %.2f M events/s   ",
                 now.us_f(), wall, static_cast<double>(events) / wall * 1e-6);
    printed_ = true;
  }
  void done() const {
    if (printed_) std::fprintf(stderr, "\n");
  }

 private:
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  double last_ = 0;
  bool printed_ = false;
};

void write_text(const std::string& path, const std::string& text) {
  std::ofstream f(path);
  if (!f || !(f << text)) throw std::runtime_error(path + ": cannot write");
}

void print_params(const std::vector<ParamDoc>& params) {
  for (const auto& p : params) {
    if (p.type == "table") continue;
    fmt::print("    {:<34} {:<14} {}  [{}]\n", p.key,
               p.default_value.empty() ? "\"\"" : p.default_value, p.description, p.type);
  }
}

void print_catalogue() {
  const auto cat = describe_catalogue();
  auto section = [](const char* title, const std::vector<Catalogue::Entry>& entries) {
    fmt::print("{}\n", title);
    for (const auto& e : entries) {
      fmt::print("  {:<16} {}\n", e.name, e.description);
      print_params(e.params);
    }
    fmt::print("\n");
  };
  for (const auto& f : cat.families) section(f.title.c_str(), f.kinds);
  fmt::print("common parameters\n");
  print_params(cat.common);
}

std::string case_label(const SweepCase& c) {
  std::string label = c.collective.empty() ? "case" : c.collective;
  if (c.size > 0) label += fmt::format("-{}", c.size);
  return label + fmt::format("-seed{}", c.seed);
}

// An --out directory written safely (issue 14): results go to a staging directory beside it,
// created before anything is simulated (so an unwritable place fails at once), and replace the
// directory only when complete, so no file of an earlier run mixes in and a failed run leaves
// the old results as they were. An existing directory is replaced only if it is empty or holds
// a fabsim result (summary.json or compare.csv): `--out .` never deletes a user's files.
class OutputDir {
 public:
  explicit OutputDir(std::string final) : final_(std::move(final)) {
    if (final_.empty()) return;
    namespace fs = std::filesystem;
    while (final_.size() > 1 && final_.back() == '/') final_.pop_back();
    std::error_code ec;
    if (fs::exists(final_, ec)) {
      const bool result =
          fs::exists(final_ + "/summary.json") || fs::exists(final_ + "/compare.csv");
      if (!fs::is_directory(final_) || (!fs::is_empty(final_, ec) && !result)) {
        throw ConfigError(fmt::format("--out {}: expected a new or empty directory, or an earlier "
                                      "fabsim result to replace (it holds other files)",
                                      final_));
      }
    }
    staging_ = final_ + ".partial-" + std::to_string(::getpid());
    fs::remove_all(staging_, ec);
    if (!fs::create_directories(staging_, ec) || ec) {
      throw std::runtime_error(fmt::format("--out {}: cannot create {} ({})", final_, staging_,
                                           ec ? ec.message() : "exists"));
    }
  }
  OutputDir(const OutputDir&) = delete;
  OutputDir& operator=(const OutputDir&) = delete;
  ~OutputDir() {
    std::error_code ec;
    if (!staging_.empty()) std::filesystem::remove_all(staging_, ec);
  }
  bool active() const { return !final_.empty(); }
  /// Where to write now.
  const std::string& path() const { return staging_; }
  const std::string& final_path() const { return final_; }
  /// Replaces the directory with what was written.
  void commit() {
    namespace fs = std::filesystem;
    fs::remove_all(final_);
    fs::rename(staging_, final_);
    staging_.clear();
  }

 private:
  std::string final_;
  std::string staging_;
};

// A run's files; an interrupted run's summary.json starts with "interrupted": the signal and
// the simulated time it stopped at (its figures cover the run up to then).
void write_run_dir(const RunResult& r, const std::string& dir, bool flows_csv,
                   const std::string& interrupted) {
  write_results(r, dir, flows_csv);
  if (interrupted.empty()) return;
  nlohmann::ordered_json j;
  j["interrupted"] = {{"reason", interrupted}, {"at_ps", r.end_time.ps()}};
  const nlohmann::ordered_json summary = summary_json(r);
  for (const auto& [key, value] : summary.items()) j[key] = value;
  write_text(dir + "/summary.json", j.dump(2) + "\n");
}

// Every case that ran: the finished ones, and an interrupted one with its partial result marked.
void write_sweep_dir(const ScenarioConfig& cfg, const std::vector<SweepRow>& rows,
                     const std::vector<SweepCase>& cases, const std::string& out,
                     const std::string& interrupted) {
  std::filesystem::create_directories(out);
  write_text(out + "/summary.json", sweep_json(cfg, rows, cases, interrupted).dump(2) + "\n");
  write_text(out + "/sweep.csv", sweep_rows_csv(rows));
  write_text(out + "/cases.csv", sweep_cases_csv(cases));
  for (const auto& c : cases) {
    if (c.status == CaseStatus::kNotStarted) continue;
    write_run_dir(c.result, out + "/cases/" + case_label(c), cfg.output.flows_csv,
                  c.status == CaseStatus::kInterrupted ? interrupted : "");
  }
}

// The line an interrupted sweep prints (stdout and stderr), e.g. "1 of 3 cases finished, ...".
std::string cases_progress(const std::vector<SweepCase>& cases) {
  size_t n[3] = {0, 0, 0};
  for (const auto& c : cases) ++n[static_cast<size_t>(c.status)];
  return fmt::format("{} of {} cases finished, {} interrupted, {} not started", n[0], cases.size(),
                     n[1], n[2]);
}

int sweep_command(ScenarioConfig cfg, const std::string& out_arg, unsigned threads,
                  uint64_t max_memory) {
  const auto t0 = std::chrono::steady_clock::now();
  guard_memory(cfg, max_memory, sweep_threads(cfg, threads), !out_arg.empty());
  OutputDir dir(out_arg);
  const std::string& out = dir.path();
  const auto cases = run_sweep(
      cfg, threads, !out.empty(),
      [](const SweepCase& c, size_t done, size_t total) {
        std::fprintf(stderr, "[fabsim] case %zu/%zu: %s seed %llu: %s %.1f us (%.2f s wall)\n",
                     done, total, case_label(c).c_str(), static_cast<unsigned long long>(c.seed),
                     c.has_jobs() ? "max JCT" : "slowest FCT", c.headline_us(), c.wall_seconds);
      },
      &g_stop);
  for (const auto& w : sweep_warnings(cases))
    std::fprintf(stderr, "fabsim: warning: %s\n", w.c_str());
  const bool interrupted = !all_cases_ran(cases);
  const std::string reason = interrupted ? signal_name(g_stop.load()) : "";
  const auto rows = aggregate(cases);
  fmt::print("scenario {}: {} cases\n{}", cfg.name, cases.size(), sweep_table(rows));
  if (interrupted) {
    fmt::print("INTERRUPTED by {}: {}; the table covers the finished cases\n", reason,
               cases_progress(cases));
  }
  if (dir.active()) {
    write_sweep_dir(cfg, rows, cases, out, reason);
    dir.commit();
    fmt::print("results written to {}/{}\n", dir.final_path(),
               interrupted ? " (marked interrupted)" : "");
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::fprintf(stderr, "[fabsim] sweep wall %.3f s\n", wall);
  if (interrupted) {
    if (const int ledger = ledger_exit(cases, cfg.name)) return ledger;
    const int code = stop_exit(g_stop.load());
    std::fprintf(stderr, "fabsim: %s: interrupted by %s: %s (exit %d)\n", cfg.name.c_str(),
                 reason.c_str(), cases_progress(cases).c_str(), code);
    return code;
  }
  return cases_exit(cases, cfg.name);
}

// Runs the embedded matplotlib script with Debian's interpreter (the python3 first on PATH may
// not see python3-matplotlib).
int plot_command(const std::vector<std::string>& dirs, const std::string& out, bool quiet = false) {
  for (const auto& d : dirs) {
    if (!std::filesystem::is_directory(d)) throw std::runtime_error(d + ": not a result directory");
  }
  const std::string python = "/usr/bin/python3";
  if (!std::filesystem::exists(python)) {
    throw std::runtime_error(python + " not found: install python3-matplotlib (make deps)");
  }
  const auto script = std::filesystem::temp_directory_path() /
                      ("fabsim-plot-" + std::to_string(::getpid()) + ".py");
  write_text(script.string(), kPlotScript);
  std::string cmd =
      python + " '" + script.string() + "' '" + (out.empty() ? dirs.front() + "/plots" : out) + "'";
  for (const auto& d : dirs) cmd += " '" + d + "'";
  if (quiet) cmd += " > /dev/null";
  const int rc = std::system(cmd.c_str());
  std::filesystem::remove(script);
  return rc == 0 ? 0 : 1;
}

// FILE or FILE@key=value@key=value: the scenario with `sets`, then its own overrides.
ScenarioConfig load_compare_arg(const std::string& arg, const std::vector<std::string>& sets) {
  std::vector<std::string> own = sets;
  const auto at = arg.find('@');
  if (at == std::string::npos) return load_scenario(arg, own);
  size_t start = at + 1;
  for (;;) {
    const auto next = arg.find('@', start);
    own.push_back(arg.substr(start, next == std::string::npos ? std::string::npos : next - start));
    if (next == std::string::npos) break;
    start = next + 1;
  }
  return load_scenario(arg.substr(0, at), own);
}

// Runs every scenario's sweep over the same seeds, prints the side-by-side table and writes
// one results directory per scenario, compare.csv, compare.txt and the JCT-vs-size figure.
int compare_command(const std::vector<std::string>& files, const std::vector<std::string>& sets,
                    const std::string& seeds_text, const std::string& out_arg, unsigned threads,
                    bool plot, uint64_t max_memory) {
  std::vector<ScenarioConfig> cfgs;
  for (const auto& arg : files) cfgs.push_back(load_compare_arg(arg, sets));
  const std::vector<uint64_t> seeds =
      seeds_text.empty() ? std::vector<uint64_t>{} : parse_seeds(seeds_text, "--seeds");
  for (auto& cfg : cfgs) {
    print_warnings(cfg);
    require_traffic(cfg);
    if (!seeds.empty()) cfg.sweep.seeds = seeds;
    if (!cfg.sweep.active()) cfg.sweep.seeds = {cfg.seed};
    guard_memory(cfg, max_memory, sweep_threads(cfg, threads), !out_arg.empty());
  }
  OutputDir dir(out_arg);
  const std::string& out = dir.path();
  std::vector<CompareColumn> cols;
  std::string reason;  // the signal that stopped the comparison
  std::vector<std::string> not_started;
  for (auto& cfg : cfgs) {
    CompareColumn col;
    // A name already taken gets the first free suffix -2, -3, ... (each column has its own
    // directory and CSV columns; a given name may itself end in such a suffix).
    col.name = cfg.name;
    const auto taken = [&cols](const std::string& n) {
      return std::any_of(cols.begin(), cols.end(), [&n](const auto& c) { return c.name == n; });
    };
    for (int dup = 2; taken(col.name); ++dup) col.name = fmt::format("{}-{}", cfg.name, dup);
    if (!reason.empty()) {  // stopped: the later scenarios do not start
      not_started.push_back(col.name);
      cols.push_back(std::move(col));
      continue;
    }
    const auto t0 = std::chrono::steady_clock::now();
    const bool tty = isatty(2) != 0;
    col.cases = run_sweep(
        cfg, threads, !out.empty(),
        [&col, tty](const SweepCase& /*c*/, size_t done, size_t total) {
          if (tty)
            std::fprintf(stderr, "\r[fabsim] %s: case %zu/%zu   ", col.name.c_str(), done, total);
        },
        &g_stop);
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::fprintf(stderr, "%s[fabsim] %s: %zu cases, %.1f s wall\n", tty ? "\r" : "",
                 col.name.c_str(), col.cases.size(), wall);
    for (const auto& w : sweep_warnings(col.cases))
      std::fprintf(stderr, "fabsim: warning: %s\n", w.c_str());
    if (!all_cases_ran(col.cases)) {
      reason = signal_name(g_stop.load());
      std::fprintf(stderr, "fabsim: %s: interrupted by %s: %s\n", col.name.c_str(), reason.c_str(),
                   cases_progress(col.cases).c_str());
    }
    col.rows = aggregate(col.cases);
    if (!out.empty()) {
      write_sweep_dir(cfg, col.rows, col.cases, out + "/" + col.name, reason);
      for (auto& c : col.cases) c.result = RunResult{};  // free the per-case detail once written
    }
    cols.push_back(std::move(col));
  }
  const auto rows = compare_rows(cols);
  std::string table = compare_table(cols, rows);
  if (!reason.empty()) {
    std::string which;
    for (const auto& n : not_started) which += (which.empty() ? "" : ", ") + n;
    table += fmt::format("INTERRUPTED by {}: the table covers the cases that finished{}\n", reason,
                         which.empty() ? "" : "; not started: " + which);
  }
  fmt::print("{}", table);
  int status = 0;
  // An internal error (1: a ledger that does not balance) outranks an incomplete case (3).
  for (const auto& c : cols) {
    const int one = cases_exit(c.cases, c.name);
    if (one == 1 || status == 1) {
      status = 1;
    } else {
      status = std::max(status, one);
    }
  }
  if (!reason.empty() && status != 1) status = stop_exit(g_stop.load());
  if (!dir.active()) return status;
  write_text(out + "/compare.txt", table);
  write_text(out + "/compare.csv", compare_csv(cols, rows));
  if (!reason.empty()) {
    dir.commit();
    fmt::print("results written to {}/ (marked interrupted; no figure)\n", dir.final_path());
    std::fprintf(stderr, "fabsim: comparison interrupted by %s (exit %d)\n", reason.c_str(),
                 status);
    return status;
  }
  int plot_status = 0;
  if (plot) {
    std::vector<std::string> dirs;
    for (const auto& c : cols) dirs.push_back(out + "/" + c.name);
    std::fflush(stdout);
    plot_status = plot_command(dirs, out + "/plots", /*quiet=*/true);
  }
  dir.commit();
  fmt::print("results written to {}/ (compare.csv, compare.txt, one directory per scenario)\n",
             dir.final_path());
  if (plot && plot_status == 0) {
    // Jobs give the JCT figure; flow-size workloads (cdf) the slowdown figure.
    for (const char* figure : {"jct_vs_size", "slowdown"}) {
      const std::string png = fmt::format("{}/plots/{}.png", dir.final_path(), figure);
      if (std::filesystem::exists(png)) fmt::print("figure: {} (and .svg)\n", png);
    }
  } else if (plot) {
    std::fprintf(stderr,
                 "fabsim: the figure could not be drawn (is python3-matplotlib installed?)\n");
    return 1;
  }
  return status;
}

int run_command(const std::string& file, const std::vector<std::string>& sets,
                const std::string& out, const uint64_t* seed, unsigned threads,
                uint64_t max_memory) {
  ScenarioConfig cfg = load_scenario(file, sets, seed);
  print_warnings(cfg);
  require_traffic(cfg);
  if (cfg.sweep.active()) return sweep_command(std::move(cfg), out, threads, max_memory);
  guard_memory(cfg, max_memory, 1, false);
  OutputDir dir(out);
  StderrProgress progress;
  // The simulation is released before the report is built: the results are plain copies, and
  // the fabric, its packets and the transports would otherwise sit under the summary and
  // flow tables, adding them to the run's peak memory.
  const std::string name = cfg.name;
  const bool flows_csv = cfg.output.flows_csv;
  RunResult r;
  int signal = 0;
  uint64_t memory_estimate = 0;
  {
    Run run(std::move(cfg));  // the run holds the only copy of a large scenario
    for (const auto& w : run.warnings()) std::fprintf(stderr, "fabsim: warning: %s\n", w.c_str());
    run.stop_on(&g_stop);
    r = run.execute(&progress, 1 << 18);
    signal = run.interrupted();
    memory_estimate = run.memory_estimate();
  }
  progress.done();
  const std::string interrupted = signal != 0 ? signal_name(signal) : "";
  if (!interrupted.empty()) {
    fmt::print("INTERRUPTED by {} at {:.3f} us simulated: the figures cover the run until then\n",
               interrupted, r.end_time.us_f());
  }
  fmt::print("{}", summary_table(r));
  if (dir.active()) {
    write_run_dir(r, dir.path(), flows_csv, interrupted);
    dir.commit();
    fmt::print("results written to {}/{}\n", out,
               interrupted.empty() ? "" : " (marked interrupted)");
  }
  std::fprintf(stderr,
               "[fabsim] wall %.3f s, %llu events, %.2f M events/s, sim/wall %.3g, memory "
               "estimate %s\n",
               r.wall_seconds, static_cast<unsigned long long>(r.events),
               r.wall_seconds > 0 ? static_cast<double>(r.events) / r.wall_seconds * 1e-6 : 0.0,
               r.wall_seconds > 0 ? r.end_time.sec_f() / r.wall_seconds : 0.0,
               memory_text(memory_estimate).c_str());
  if (!r.conserved()) {
    std::fprintf(stderr,
                 "fabsim: internal error: %s: the conservation ledger does not balance: %s\n",
                 name.c_str(), conservation_violation(r).c_str());
    return 1;
  }
  if (!interrupted.empty()) {
    const int code = stop_exit(signal);
    std::fprintf(stderr, "fabsim: %s: interrupted by %s at %.3f us simulated (exit %d)\n",
                 name.c_str(), interrupted.c_str(), r.end_time.us_f(), code);
    return code;
  }
  if (!r.complete()) {
    std::fprintf(stderr,
                 "fabsim: %s: the run ended with unfinished flows or failed senders "
                 "(exit %d)\n",
                 name.c_str(), kExitIncomplete);
    return kExitIncomplete;
  }
  return 0;
}

// --max-memory SIZE (the project's size units; 0 = no limit), or half of physical memory.
uint64_t memory_limit(const std::string& text) {
  if (text.empty()) return default_memory_limit();
  const auto p = parse_bytes(text);
  if (!p.ok()) {
    throw ConfigError(
        fmt::format("--max-memory: expected {} (0 = no limit), got \"{}\"", p.error, text));
  }
  return static_cast<uint64_t>(p.value.count());
}

// Builds the first case of `cfg` (a sweep's first collective and size, at the scenario's
// seed) without running it, under the memory limit `run` would apply, and returns the warnings
// the build found. What only the built network shows (a PFC headroom that takes the buffer, an
// RTO below a window's round trip, INT with departure marking, a built network over the limit)
// is then an error or a warning of `validate` too, not first of `run`. The other cases of a
// sweep build the same network (a 65,536-host one takes about 20 s): each is checked against
// the limit with its own workload on the first case's network counts, without a build.
std::vector<std::string> build_first_case(const ScenarioConfig& cfg, uint64_t max_memory) {
  const auto& sw = cfg.sweep;
  const auto collective = [&](size_t c) {
    return sw.collectives.empty() ? nullptr : &sw.collectives[c];
  };
  const auto size = [&](size_t s) { return sw.sizes.empty() ? nullptr : &sw.sizes[s]; };
  ScenarioConfig first = instantiate(cfg, collective(0), size(0), &cfg.seed);
  first.memory_limit = max_memory;
  const Run run(std::move(first));
  const NetworkCounts counts = run.network_counts();
  for (size_t c = 0; c < std::max<size_t>(1, sw.collectives.size()); ++c) {
    for (size_t s = 0; s < std::max<size_t>(1, sw.sizes.size()); ++s) {
      const ScenarioConfig other = instantiate(cfg, collective(c), size(s), &cfg.seed);
      check_memory(other, estimate_memory(other, &counts), max_memory);
    }
  }
  return run.warnings();
}

int validate_command(const std::string& file, const std::vector<std::string>& sets,
                     uint64_t max_memory) {
  ScenarioConfig cfg = load_scenario(file, sets);
  print_warnings(cfg);
  require_traffic(cfg);
  // One case at a time; `run` adds the sweep's cases that run at once (--threads).
  const MemoryEstimate est = estimate_command_memory(cfg, 1, false);
  fmt::print("{}", describe_memory(est, max_memory));
  std::fflush(stdout);
  check_memory(cfg, est, max_memory);
  for (const auto& w : build_first_case(cfg, max_memory)) {
    std::fprintf(stderr, "fabsim: warning: %s\n", w.c_str());
  }
  fmt::print("{}: valid ({} hosts, transport {}, workload {})\n", file, cfg.topology.hosts(),
             cfg.transport.name(), cfg.workload.name());
  return 0;
}

// The options of every subcommand, filled by CLI11.
struct Options {
  std::string file;
  std::vector<std::string> sets;
  std::string out;
  uint64_t seed = 0;
  unsigned threads = 0;
  std::vector<std::string> files;  // plot: result dirs; compare: scenarios
  std::string seeds;               // compare
  bool no_plot = false;            // compare
  std::string max_memory;          // run, validate, compare
};

struct Subcommands {
  CLI::App* run;
  CLI::Option* seed;
  CLI::App* validate;
  CLI::App* list;
  CLI::App* plot;
  CLI::App* compare;
};

Subcommands declare(CLI::App& app, Options& o) {
  Subcommands c{};
  c.run = app.add_subcommand("run", "run a scenario and print its summary table");
  c.run->add_option("scenario", o.file, "scenario TOML file")->required();
  c.run->add_option("--set", o.sets, "override a key: --set network.ecn.kmin=10KB (repeatable)");
  c.run->add_option("--out", o.out, "directory for summary.json, flows.csv and trace.csv");
  c.seed = c.run->add_option("--seed", o.seed, "RNG seed (overrides simulation.seed)");
  c.run->add_option("--threads", o.threads, "sweep cases run at once (0 = one per core)");
  constexpr const char* kMemoryDoc =
      "refuse a run whose estimated memory exceeds this, e.g. 8GiB (default half of physical "
      "memory; 0 = no limit)";
  c.run->add_option("--max-memory", o.max_memory, kMemoryDoc);
  c.validate = app.add_subcommand("validate", "check a scenario without running it, and print "
                                              "its memory estimate");
  c.validate->add_option("scenario", o.file, "scenario TOML file")->required();
  c.validate->add_option("--set", o.sets, "override a key (repeatable)");
  c.validate->add_option("--max-memory", o.max_memory, kMemoryDoc);
  c.list = app.add_subcommand("list", "every kind of every family and every parameter");
  c.plot = app.add_subcommand("plot", "draw JCT vs size, FCT CDF, time series and FCT slowdown "
                                      "vs flow size (PNG, SVG)");
  c.plot->add_option("results", o.files, "result directories written by run --out")->required();
  c.plot->add_option("--out", o.out, "where to write the figures (default FIRST_DIR/plots)");
  c.compare = app.add_subcommand("compare", "run scenarios on the same cases and print their "
                                            "JCTs side by side, with ratios to the first");
  c.compare
      ->add_option("scenarios", o.files,
                   "scenario files, the first the baseline; "
                   "FILE@key=value@... overrides keys of that one only")
      ->required()
      ->expected(2, 16);
  c.compare->add_option("--set", o.sets, "override a key in every scenario (repeatable)");
  c.compare->add_option("--seeds", o.seeds,
                        "seeds for every scenario: FIRST-LAST or A,B,C "
                        "(default: each scenario's sweep.seeds)");
  c.compare->add_option("--out", o.out,
                        "directory for compare.csv, compare.txt, the figure and "
                        "each scenario's results");
  c.compare->add_option("--threads", o.threads, "cases run at once (0 = one per core)");
  c.compare->add_flag("--no-plot", o.no_plot, "do not draw the JCT-vs-size figure");
  c.compare->add_option("--max-memory", o.max_memory, kMemoryDoc);
  return c;
}

// After a command the memory watch stopped (exit 2, results marked interrupted): what it read,
// against what. A watch that tripped only after the simulations had finished (while the
// report was written) stopped nothing and says nothing.
void report_memory_stop(const MemoryWatch& watch, int code) {
  if (!watch.tripped() || code != 2) return;
  std::fprintf(stderr,
               "fabsim: the process's resident memory (heap) reached %s, past the limit of %s "
               "(--max-memory, default half of physical memory; 0 = no limit): the estimate "
               "checked before the run is a lower bound, docs/SCENARIOS.md \"Memory\"\n",
               memory_text(watch.reading()).c_str(), memory_text(watch.limit()).c_str());
}

int dispatch(const Subcommands& c, const Options& o) {
  if (c.run->parsed()) {
    install_stop_handlers();
    const uint64_t limit = memory_limit(o.max_memory);
    const MemoryWatch watch(g_stop, limit);
    const int code = run_command(o.file, o.sets, o.out, c.seed->count() > 0 ? &o.seed : nullptr,
                                 o.threads, limit);
    report_memory_stop(watch, code);
    return code;
  }
  if (c.validate->parsed()) return validate_command(o.file, o.sets, memory_limit(o.max_memory));
  if (c.list->parsed()) {
    print_catalogue();
    return 0;
  }
  if (c.plot->parsed()) return plot_command(o.files, o.out);
  if (c.compare->parsed()) {
    install_stop_handlers();
    const uint64_t limit = memory_limit(o.max_memory);
    const MemoryWatch watch(g_stop, limit);
    const int code = compare_command(o.files, o.sets, o.seeds, o.out, o.threads, !o.no_plot, limit);
    report_memory_stop(watch, code);
    return code;
  }
  return 0;
}

}  // namespace
}  // namespace fabsim

int main(int argc, char** argv) {
  CLI::App app{"fabsim: packet-level simulator of AI-datacenter scale-out networks"};
  app.require_subcommand(1);
  fabsim::Options options;
  const fabsim::Subcommands commands = fabsim::declare(app, options);
  CLI11_PARSE(app, argc, argv);
  try {
    return fabsim::dispatch(commands, options);
  } catch (const fabsim::ConfigError& e) {
    std::fprintf(stderr, "fabsim: error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fabsim: error: %s\n", e.what());
    return 1;
  }
}
