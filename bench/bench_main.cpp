// Benchmarks (not timed tests; STYLE.md rule 31).
//   fabsim_bench                       Google Benchmark micro-benchmarks (scheduler)
//   fabsim_bench scenario FILE [K=V..] runs one scenario and prints one JSON line: wall time,
//                                      events/s, delivered data packets per wall-second,
//                                      simulated-to-wall ratio and peak memory (ru_maxrss).
// Run each scenario in its own process so that peak memory belongs to that scenario alone.
#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <sys/resource.h>  // getrusage

#include <cstring>  // strcmp
#include <string>
#include <vector>

#include "core/rng.h"
#include "core/scheduler.h"
#include "scenario/runner.h"
#include "scenario/scenario.h"

namespace fabsim {
namespace {

class Sink : public EventTarget {
 public:
  void on_event(uint32_t tag, uint32_t /*gen*/) override { sum_ += tag; }
  uint64_t sum_ = 0;
};

// Hold model: N pending events; each pop schedules one new event a random 0..`horizon` ps
// later, as a busy component re-arms itself. 1 us stays within the scheduler's wheel (a link's
// delay); 100 us sends most events through its far heap first (timers).
void hold(benchmark::State& state, int64_t horizon) {
  const auto n = static_cast<size_t>(state.range(0));
  Scheduler s;
  Sink sink;
  Rng rng(1, 1);
  const auto span = static_cast<uint64_t>(horizon);
  for (size_t i = 0; i < n; ++i)
    s.schedule(Time::ps(static_cast<int64_t>(rng.below(span))), &sink, 1);
  for (auto _ : state) {
    const Event e = s.pop();
    s.schedule(e.time() + Time::ps(static_cast<int64_t>(rng.below(span))), &sink, 1);
  }
  state.SetItemsProcessed(state.iterations());
}
void BM_SchedulerHold(benchmark::State& state) {
  hold(state, 1000000);
}
void BM_SchedulerHoldFar(benchmark::State& state) {
  hold(state, 100000000);
}
// Burst: one handler schedules N events at the current time (a collective step starting every
// transfer at once), then they run. Cost per event should not grow with N.
void BM_SchedulerBurst(benchmark::State& state) {
  const auto n = static_cast<size_t>(state.range(0));
  Scheduler s;
  Sink sink;
  s.schedule(Time(), &sink, 0);
  for (auto _ : state) {
    const Event first = s.pop();
    for (size_t i = 0; i < n; ++i) s.schedule(first.time(), &sink, 1);
    for (size_t i = 1; i < n; ++i) s.pop();
    s.schedule(first.time() + Time::ns(1), &sink, 0);
    s.pop();
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * n));
}
BENCHMARK(BM_SchedulerBurst)->Arg(1024)->Arg(65536)->Arg(262144);
BENCHMARK(BM_SchedulerHold)->Arg(64)->Arg(1024)->Arg(16384)->Arg(262144);
BENCHMARK(BM_SchedulerHoldFar)->Arg(64)->Arg(1024)->Arg(16384)->Arg(262144);

int run_scenario_bench(const std::string& file, const std::vector<std::string>& sets) {
  const ScenarioConfig cfg = load_scenario(file, sets);
  Run run(cfg);
  const RunResult r = run.execute();
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  const double w = r.wall_seconds;
  fmt::print(
      "{{\"scenario\": \"{}\", \"hosts\": {}, \"flows\": {}, \"all_done\": {}, "
      "\"simulated_us\": {:.3f}, \"wall_s\": {:.3f}, \"events\": {}, \"events_per_s\": {:.0f}, "
      "\"data_packets\": {}, \"data_packets_per_wall_s\": {:.0f}, \"sim_to_wall\": {:.3g}, "
      "\"peak_rss_mib\": {:.1f}}}\n",
      r.name, r.hosts, r.flows.size(), r.all_done, r.end_time.us_f(), w, r.events,
      static_cast<double>(r.events) / w, r.totals.data_packets_delivered,
      static_cast<double>(r.totals.data_packets_delivered) / w, r.end_time.sec_f() / w,
      static_cast<double>(ru.ru_maxrss) / 1024.0);
  return 0;
}

}  // namespace
}  // namespace fabsim

int main(int argc, char** argv) {
  if (argc >= 3 && std::strcmp(argv[1], "scenario") == 0) {
    std::vector<std::string> sets(argv + 3, argv + argc);
    try {
      return fabsim::run_scenario_bench(argv[2], sets);
    } catch (const std::exception& e) {
      fmt::print(stderr, "fabsim_bench: {}\n", e.what());
      return 2;
    }
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
