// Result writers; see writers.h.
#include "report/writers.h"

#include <fmt/format.h>  // tables and CSV

#include <filesystem>  // create_directories
#include <fstream>
#include <functional>  // table rows (not a hot path)     // files
#include <stdexcept>   // runtime_error

#include "core/stats.h"
#include "report/slowdown.h"

namespace fabsim {

FctSummary summarize_fct(const RunResult& r) {
  FctSummary s;
  s.flows = r.flows.size();
  Histogram h;
  int64_t bytes = 0;
  Time first = Time::max();
  Time last;
  for (const auto& f : r.flows) {
    bytes += f.delivered;
    if (f.spec.start < first) first = f.spec.start;
    if (f.done) {
      ++s.completed;
      h.add(f.fct().ps());
      if (f.end > last) last = f.end;
    }
  }
  if (!h.empty()) {
    s.p50 = Time::ps(h.percentile(50));
    s.p99 = Time::ps(h.percentile(99));
    s.max = Time::ps(h.max());
    s.mean = Time::ps(static_cast<int64_t>(h.mean()));
  }
  if (s.completed < s.flows) last = r.end_time;
  if (last > first && first != Time::max()) {
    s.goodput_gbps = static_cast<double>(bytes) * 8.0 / (last - first).sec_f() * 1e-9;
  }
  return s;
}

TrainingFigures training_figures(const JobResult& job) {
  TrainingFigures t;
  Time total;
  for (Time i : job.iteration_times) total += i;
  if (job.iteration_times.empty() || total <= Time()) return t;
  t.mean_iteration = total / static_cast<int64_t>(job.iteration_times.size());
  t.samples_per_s = static_cast<double>(job.samples_per_iteration) / t.mean_iteration.sec_f();
  t.exposed = 1.0 - static_cast<double>(job.max_compute.ps()) / static_cast<double>(total.ps());
  return t;
}

JobsSummary summarize_jobs(const RunResult& r) {
  JobsSummary s;
  s.jobs = r.jobs.size();
  s.all_done = true;
  if (r.jobs.empty()) return s;
  long double sum = 0;
  const JobResult* slowest = nullptr;
  for (const auto& j : r.jobs) {
    s.all_done = s.all_done && j.done;
    // An unfinished job counts the time since its first send (none yet: 0), a lower bound.
    const Time jct = j.done                        ? j.jct()
                     : j.first_send == Time::max() ? Time()
                                                   : r.end_time - j.first_send;
    sum += static_cast<long double>(jct.ps());
    if (slowest == nullptr || jct > s.max_jct) {
      s.max_jct = jct;
      slowest = &j;
    }
  }
  s.mean_jct = Time::ps(static_cast<int64_t>(sum / static_cast<long double>(r.jobs.size())));
  for (const auto& op : slowest->ops) {
    if (op.compute) continue;
    s.bytes = op.bytes;
    s.collective = collective_name(op.collective);
    s.ranks = slowest->ranks;
    break;
  }
  // Bandwidth only for a finished slowest job: a truncated window is not an op's time.
  const JobBandwidth b = job_bandwidth(*slowest);
  s.op_time = b.op_time;
  s.algbw_gbs = b.algbw_gbs;
  s.busbw_gbs = b.busbw_gbs;
  return s;
}

JobBandwidth job_bandwidth(const JobResult& job) {
  JobBandwidth b;
  if (!job.done || job.jct() <= Time()) return b;
  int64_t total = 0;
  double weighted = 0;  // sum of bytes x bus factor
  double factor = 0;
  bool same = true;
  for (const auto& op : job.ops) {
    if (op.compute) continue;
    const double f = bus_factor(op.collective, job.ranks);
    if (b.collectives++ == 0) factor = f;
    same = same && f == factor;
    total += op.bytes;
    weighted += static_cast<double>(op.bytes) * f;
  }
  if (b.collectives == 0 || total == 0) return JobBandwidth{};
  b.op_time = job.jct() / b.collectives;
  if (b.op_time <= Time()) return JobBandwidth{};
  const double mean = static_cast<double>(total) / b.collectives;
  b.algbw_gbs = mean / b.op_time.sec_f() * 1e-9;
  b.busbw_gbs = b.algbw_gbs * (same ? factor : weighted / static_cast<double>(total));
  return b;
}

namespace {

// One job's entry of summary.json: its times, per-iteration times and every op.
nlohmann::ordered_json job_json(const JobResult& job) {
  // A job that has not sent has no first send; one not done has no end or JCT.
  const auto when = [](bool known, Time t) {
    return known ? nlohmann::ordered_json(t.ps()) : nlohmann::ordered_json();
  };
  nlohmann::ordered_json o = {
      {"name", job.name},
      {"ranks", job.ranks},
      {"done", job.done},
      {"first_send_ps", when(job.first_send != Time::max(), job.first_send)},
      {"end_ps", when(job.done, job.end)},
      {"jct_ps", when(job.done, job.jct())}};
  auto iters = nlohmann::ordered_json::array();
  for (auto t : job.iteration_times) iters.push_back(t.ps());
  o["iteration_ps"] = iters;
  if (job.samples_per_iteration > 0 && !job.iteration_times.empty()) {
    const TrainingFigures t = training_figures(job);
    o["samples_per_s"] = t.samples_per_s;
    o["mean_iteration_ps"] = t.mean_iteration.ps();
    o["max_compute_ps"] = job.max_compute.ps();
    o["exposed_communication"] = t.exposed;
  }
  auto ops = nlohmann::ordered_json::array();
  for (const auto& op : job.ops) {
    nlohmann::ordered_json e = {{"iteration", op.iteration},
                                {"index", op.index},
                                {"type", op.compute ? "compute" : collective_name(op.collective)},
                                {"bytes", op.bytes},
                                {"start_ps", op.start.ps()},
                                {"end_ps", when(op.done, op.end)},
                                {"jct_ps", when(op.done, op.jct())}};
    if (op.done && !op.compute && op.jct() > Time()) {
      const double algbw = static_cast<double>(op.bytes) / op.jct().sec_f() * 1e-9;
      e["algbw_GBps"] = algbw;
      e["busbw_GBps"] = algbw * bus_factor(op.collective, job.ranks);
    }
    ops.push_back(e);
  }
  o["ops"] = ops;
  return o;
}

// The ports with pauses, drops or marks.
nlohmann::ordered_json ports_json(const RunResult& r) {
  auto ports = nlohmann::ordered_json::array();
  for (const auto& p : r.ports) {
    ports.push_back({{"node", p.node},
                     {"port", p.port},
                     {"tx_bytes", p.tx_bytes},
                     {"drops", p.drops},
                     {"ecn_marks", p.ecn_marks},
                     {"pfc_sent", p.pfc_sent},
                     {"paused_ps", p.paused.ps()}});
  }
  return ports;
}

}  // namespace

nlohmann::ordered_json summary_json(const RunResult& r) {
  nlohmann::ordered_json j;
  j["name"] = r.name;
  j["seed"] = r.seed;
  j["scenario"] = r.scenario;
  j["topology"] = r.topology;
  const auto s = summarize_fct(r);
  j["end_time_ps"] = r.end_time.ps();
  j["all_flows_done"] = r.all_done;
  j["failed_senders"] = r.failed_senders;
  if (r.stalled_at != Time::max()) j["stalled_at_ps"] = r.stalled_at.ps();
  if (!r.warnings.empty()) j["warnings"] = r.warnings;
  j["events"] = r.events;
  j["flows"] = {{"count", s.flows},
                {"completed", s.completed},
                {"fct_p50_ps", s.p50.ps()},
                {"fct_p99_ps", s.p99.ps()},
                {"fct_max_ps", s.max.ps()},
                {"fct_mean_ps", s.mean.ps()},
                {"goodput_gbps", s.goodput_gbps}};
  if (s.completed == 0) {  // no FCT to take percentiles of (as the slowdown block)
    for (const char* k : {"fct_p50_ps", "fct_p99_ps", "fct_max_ps", "fct_mean_ps"})
      j["flows"][k] = nullptr;
  }
  uint64_t rtx = 0;
  uint64_t ooo = 0;
  for (const auto& f : r.flows) {
    rtx += f.retransmissions;
    ooo += f.out_of_order;
  }
  j["flows"]["retransmissions"] = rtx;
  j["flows"]["out_of_order"] = ooo;
  if (!r.workload.is_null()) j["workload"] = r.workload;
  if (r.slowdown_in_summary && !r.ideal_fct.empty()) {
    j["slowdown"] = slowdown_json(r.flows, r.ideal_fct, r.slowdown_buckets);
  }
  j["network"] = {{"drops", r.totals.drops},
                  {"ecn_marks", r.totals.ecn_marks},
                  {"trims", r.totals.trims},
                  {"pfc_frames", r.totals.pfc_frames},
                  {"link_losses", r.totals.link_losses},
                  {"pause_time_ps", r.totals.pause_time.ps()},
                  {"host_pause_time_ps", r.totals.host_pause_time.ps()},
                  {"data_packets_delivered", r.totals.data_packets_delivered}};
  if (!r.jobs.empty()) {
    const auto js = summarize_jobs(r);
    j["jobs_summary"] = {{"jobs", js.jobs},
                         {"all_done", js.all_done},
                         {"max_jct_ps", js.max_jct.ps()},
                         {"mean_jct_ps", js.mean_jct.ps()},
                         {"op_time_ps", js.op_time.ps()},
                         {"collective", js.collective},
                         {"bytes", js.bytes},
                         {"ranks", js.ranks},
                         {"algbw_GBps", js.algbw_gbs},
                         {"busbw_GBps", js.busbw_gbs}};
    if (js.op_time <= Time()) {  // the slowest job did not finish or ran no collective
      for (const char* k : {"op_time_ps", "algbw_GBps", "busbw_GBps"})
        j["jobs_summary"][k] = nullptr;
    }
    auto jobs = nlohmann::ordered_json::array();
    for (const auto& job : r.jobs) jobs.push_back(job_json(job));
    j["jobs"] = jobs;
  }
  j["fabric"] = r.fabric;
  nlohmann::ordered_json tr = {{"kind", r.transport_kind}};
  for (const auto& [k, v] : r.transport_counters) tr[k] = v;
  j["transport"] = tr;
  j["ports"] = ports_json(r);
  j["ledger"] = ledger_json(r);
  return j;
}

namespace {
nlohmann::ordered_json tally_json(const Tally& t) {
  return {{"packets", t.packets}, {"bytes", t.bytes}};
}
nlohmann::ordered_json class_ledger_json(const ClassLedger& c) {
  nlohmann::ordered_json dropped;
  for (int d = 0; d < kDropCauses; ++d) {
    dropped[std::string(drop_cause_name(static_cast<DropCause>(d)))] = tally_json(c.dropped[d]);
  }
  return {{"injected", tally_json(c.injected)},
          {"delivered", tally_json(c.delivered)},
          {"dropped", dropped},
          {"trimmed_bytes", c.trimmed_bytes},
          {"in_flight", tally_json(c.in_flight)}};
}
}  // namespace

nlohmann::ordered_json ledger_json(const RunResult& r) {
  nlohmann::ordered_json j;
  j["balanced"] = r.conserved();
  j["bytes"] = "payload";
  auto classes = nlohmann::ordered_json::array();
  for (int c = 0; c < kNumClasses; ++c) {
    const ClassLedger& l = r.ledger.classes[c];
    if (l.injected.packets == 0 && l.dropped_total().packets == 0 && l.delivered.packets == 0) {
      continue;
    }
    nlohmann::ordered_json row = {{"class", c}};
    row.update(class_ledger_json(l));
    classes.push_back(row);
  }
  j["classes"] = classes;
  j["total"] = class_ledger_json(r.ledger.total());
  j["unsent_packets"] = r.ledger.unsent;
  if (!r.conserved()) j["violation"] = conservation_violation(r);
  return j;
}

std::string flows_csv(const RunResult& r) {
  std::string out =
      "flow,src,dst,bytes,start_ps,first_send_ps,end_ps,fct_ps,delivered,packets_sent,"
      "packets_received,retransmissions,out_of_order,ecn_marked,job,op,step,src_rank,dst_rank\n";
  for (size_t i = 0; i < r.flows.size(); ++i) {
    const auto& f = r.flows[i];
    const int64_t first = f.first_send == Time::max() ? -1 : f.first_send.ps();
    const int64_t end = f.done ? f.end.ps() : -1;
    const int64_t fct = f.done ? f.fct().ps() : -1;
    out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", i, f.spec.src,
                       f.spec.dst, f.spec.bytes, f.spec.start.ps(), first, end, fct, f.delivered,
                       f.packets_sent, f.packets_received, f.retransmissions, f.out_of_order,
                       f.ecn_marked, f.spec.job, f.spec.op, f.spec.step, f.spec.src_rank,
                       f.spec.dst_rank);
  }
  return out;
}

std::string timeseries_csv(const RunResult& r) {
  // Utilisation of a sample = fraction of the time since the previous sample of the same port
  // that its link was transmitting (preamble and gap included: 1.0 is line rate).
  std::string out = "time_ps,node,port,queue_bytes,tx_bytes,utilization\n";
  std::vector<Time> last_busy(r.series.size());
  std::vector<int64_t> last_t(r.series.size(), -1);
  for (const auto& s : r.samples) {
    const auto& ser = r.series[s.series];
    double util = 0;
    if (last_t[s.series] >= 0 && s.time.ps() > last_t[s.series]) {
      util = static_cast<double>((s.busy - last_busy[s.series]).ps()) /
             static_cast<double>(s.time.ps() - last_t[s.series]);
    }
    last_busy[s.series] = s.busy;
    last_t[s.series] = s.time.ps();
    out += fmt::format("{},{},{},{},{},{:.4f}\n", s.time.ps(), ser.node, ser.port, s.queue_bytes,
                       s.tx_bytes, util);
  }
  return out;
}

std::string trace_csv(const RunResult& r) {
  std::string out = "time_ps,flow,event,seq,bytes\n";
  for (const auto& e : r.trace) {
    out += fmt::format("{},{},{},{},{}\n", e.time.ps(), e.flow, e.kind, e.seq, e.bytes);
  }
  return out;
}

namespace {
std::string us(Time t) {
  return fmt::format("{:.3f}", t.us_f());
}
}  // namespace

namespace {

using Row = std::function<void(const std::string&, const std::string&)>;

// Losses by cause and each failed cable's last use, when anything was lost or failed.
void fault_rows(const nlohmann::ordered_json& f, const Row& row) {
  const bool any = f.contains("cables") || f["lost_to_errors_frames"].get<uint64_t>() > 0 ||
                   f["lost_to_faults_frames"].get<uint64_t>() > 0;
  if (!any) return;
  row("lost to faults (frames)", fmt::format("{}", f["lost_to_faults_frames"].get<uint64_t>()));
  row("lost to bit errors (frames)", fmt::format("{}", f["lost_to_errors_frames"].get<uint64_t>()));
  row("congestion drops (frames)", fmt::format("{}", f["congestion_drops_frames"].get<uint64_t>()));
  row("retransmitted (bytes)", fmt::format("{}", f["retransmitted_bytes"].get<uint64_t>()));
  if (!f.contains("cables")) return;
  for (const auto& c : f["cables"]) {
    row(c["link"].get<std::string>() + " last use (us)",
        fmt::format("{:.3f}", c["last_use_after_fault_us"].get<double>()));
  }
}

// One line per job: JCT and the bandwidths of its first collective.
std::string jobs_table(const RunResult& r) {
  std::string training;
  for (const auto& job : r.jobs) {
    if (job.samples_per_iteration == 0 || job.iteration_times.empty()) continue;
    const TrainingFigures t = training_figures(job);
    training += fmt::format("{}: iteration {} us, {:.3f} samples/s, exposed communication {:.1f} % "
                            "(busiest GPU computes {} us)\n",
                            job.name, us(t.mean_iteration), t.samples_per_s, 100 * t.exposed,
                            us(job.max_compute / static_cast<int64_t>(job.iteration_times.size())));
  }
  const auto js = summarize_jobs(r);
  std::string out = fmt::format("\n{:<12}{:>6}{:>16}{:>14}{:>14}\n", "job", "ranks", "JCT (us)",
                                "algbw (GB/s)", "busbw (GB/s)");
  out += fmt::format("{:-<62}\n", "");
  for (const auto& job : r.jobs) {
    std::string alg = "-";
    std::string bus = "-";
    if (const JobBandwidth b = job_bandwidth(job); b.collectives > 0) {
      alg = fmt::format("{:.2f}", b.algbw_gbs);
      bus = fmt::format("{:.2f}", b.busbw_gbs);
    }
    out += fmt::format("{:<12}{:>6}{:>16}{:>14}{:>14}\n", job.name, job.ranks,
                       job.done ? us(job.jct()) : "not done", alg, bus);
  }
  out += fmt::format("{:-<62}\n", "");
  out += fmt::format("max JCT {} us, mean JCT {} us over {} jobs{}\n", us(js.max_jct),
                     us(js.mean_jct), js.jobs, js.all_done ? "" : " (not all done)");
  return out + training;
}

}  // namespace

std::string summary_table(const RunResult& r) {
  const auto s = summarize_fct(r);
  std::string out;
  out += fmt::format("scenario {}  seed {}  transport {}  topology {}\n", r.name, r.seed,
                     r.transport_kind, r.topology_line);
  if (!r.complete()) {
    // Jobs too: a job in its compute phase at the stop time has no flow yet ("0 of 0 flows").
    size_t jobs_left = 0;
    for (const auto& j : r.jobs) jobs_left += j.done ? 0 : 1;
    const std::string jobs =
        r.jobs.empty() ? "" : fmt::format(", {} of {} jobs unfinished", jobs_left, r.jobs.size());
    out += fmt::format("INCOMPLETE: {} of {} flows unfinished{} at {} us, {} senders failed\n",
                       s.flows - s.completed, s.flows, jobs, us(r.end_time), r.failed_senders);
    if (r.stalled_at != Time::max()) {
      out += fmt::format("  nothing was left to happen after {} us (no packet and no timer: "
                         "nothing recovers what is missing)\n",
                         us(r.stalled_at));
    }
  }
  out += fmt::format("{:<28}{:>16}\n", "metric", "value");
  out += fmt::format("{:-<44}\n", "");
  const Row row = [&out](const std::string& k, const std::string& v) {
    out += fmt::format("{:<28}{:>16}\n", k, v);
  };
  row("flows completed", fmt::format("{}/{}", s.completed, s.flows));
  row("FCT p50 (us)", us(s.p50));
  row("FCT p99 (us)", us(s.p99));
  row("FCT max (us)", us(s.max));
  row("goodput (Gbps)", fmt::format("{:.2f}", s.goodput_gbps));
  if (r.workload.contains("offered_load")) {
    row("offered load (target)",
        fmt::format("{:.4f} ({:.2f})", r.workload["offered_load"].get<double>(),
                    r.workload["target_load"].get<double>()));
  }
  row("simulated time (us)", us(r.end_time));
  row("PFC pause time (us)", us(r.totals.pause_time));
  row("PFC frames", fmt::format("{}", r.totals.pfc_frames));
  row("ECN marks", fmt::format("{}", r.totals.ecn_marks));
  if (r.totals.trims > 0) row("trims", fmt::format("{}", r.totals.trims));
  const ClassLedger ledger = r.ledger.total();
  row("drops (all causes)", fmt::format("{}", ledger.dropped_total().packets));
  for (int d = 0; d < kDropCauses; ++d) {
    if (ledger.dropped[d].packets == 0) continue;
    row(fmt::format("  {}", drop_cause_name(static_cast<DropCause>(d))),
        fmt::format("{}", ledger.dropped[d].packets));
  }
  if (ledger.in_flight.packets > 0) {
    row("packets in flight at end", fmt::format("{}", ledger.in_flight.packets));
  }
  uint64_t rtx = 0;
  uint64_t ooo = 0;
  for (const auto& f : r.flows) {
    rtx += f.retransmissions;
    ooo += f.out_of_order;
  }
  row("retransmissions", fmt::format("{}", rtx));
  row("out-of-order arrivals", fmt::format("{}", ooo));
  for (const auto& [k, v] : r.transport_counters)
    row(r.transport_kind + " " + k, fmt::format("{}", v));
  if (r.fabric.contains("misorder")) {
    row("misordered pairs (%)",
        fmt::format("{:.3f}", 100 * r.fabric["misorder"]["fraction"].get<double>()));
  }
  for (const auto& [k, v] : r.fabric_rows) row(k, v);
  if (r.fabric.contains("faults")) fault_rows(r.fabric["faults"], row);
  if (!r.jobs.empty()) out += jobs_table(r);
  if (!r.ideal_fct.empty()) {
    out += slowdown_table(slowdown_by_size(r.flows, r.ideal_fct, r.slowdown_buckets));
  }
  return out;
}

namespace {
void write_file(const std::filesystem::path& path, const std::string& text) {
  std::ofstream f(path);
  if (!f) throw std::runtime_error(fmt::format("{}: cannot write", path.string()));
  f << text;
  if (!f) throw std::runtime_error(fmt::format("{}: write failed", path.string()));
}
}  // namespace

void write_results(const RunResult& r, const std::string& dir, bool flows) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    throw std::runtime_error(fmt::format("{}: cannot create directory: {}", dir, ec.message()));
  const std::filesystem::path d(dir);
  write_file(d / "summary.json", summary_json(r).dump(2) + "\n");
  if (flows) write_file(d / "flows.csv", flows_csv(r));
  if (!r.trace.empty()) write_file(d / "trace.csv", trace_csv(r));
  for (const auto& [name, text] : r.transport_files) write_file(d / name, text);
  if (!r.samples.empty()) write_file(d / "timeseries.csv", timeseries_csv(r));
  if (!r.ideal_fct.empty()) {
    write_file(d / "slowdown.csv",
               slowdown_csv(slowdown_by_size(r.flows, r.ideal_fct, r.slowdown_buckets)));
  }
}

}  // namespace fabsim
