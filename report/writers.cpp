// Result writers; see writers.h.
#include "report/writers.h"

#include <fmt/format.h>  // tables and CSV

#include <filesystem>  // create_directories
#include <fstream>     // files
#include <stdexcept>   // runtime_error

#include "core/stats.h"

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

nlohmann::ordered_json summary_json(const RunResult& r) {
  nlohmann::ordered_json j;
  j["name"] = r.name;
  j["seed"] = r.seed;
  j["scenario"] = r.scenario;
  j["topology"] = {{"kind", r.topology_kind}, {"hosts", r.hosts}, {"leaves", r.leaves},
                   {"spines", r.spines}, {"speedup", r.speedup}};
  const auto s = summarize_fct(r);
  j["end_time_ps"] = r.end_time.ps();
  j["all_flows_done"] = r.all_done;
  j["events"] = r.events;
  j["flows"] = {{"count", s.flows},         {"completed", s.completed},
                {"fct_p50_ps", s.p50.ps()}, {"fct_p99_ps", s.p99.ps()},
                {"fct_max_ps", s.max.ps()}, {"fct_mean_ps", s.mean.ps()},
                {"goodput_gbps", s.goodput_gbps}};
  uint64_t rtx = 0;
  uint64_t ooo = 0;
  for (const auto& f : r.flows) {
    rtx += f.retransmissions;
    ooo += f.out_of_order;
  }
  j["flows"]["retransmissions"] = rtx;
  j["flows"]["out_of_order"] = ooo;
  j["network"] = {{"drops", r.totals.drops},
                  {"ecn_marks", r.totals.ecn_marks},
                  {"pfc_frames", r.totals.pfc_frames},
                  {"link_losses", r.totals.link_losses},
                  {"pause_time_ps", r.totals.pause_time.ps()},
                  {"host_pause_time_ps", r.totals.host_pause_time.ps()},
                  {"data_packets_delivered", r.totals.data_packets_delivered}};
  nlohmann::ordered_json tr = {{"kind", r.transport_kind}};
  for (const auto& [k, v] : r.transport_counters) tr[k] = v;
  j["transport"] = tr;
  auto ports = nlohmann::ordered_json::array();
  for (const auto& p : r.ports) {
    ports.push_back({{"node", p.node}, {"port", p.port}, {"tx_bytes", p.tx_bytes},
                     {"drops", p.drops}, {"ecn_marks", p.ecn_marks}, {"pfc_sent", p.pfc_sent},
                     {"paused_ps", p.paused.ps()}});
  }
  j["ports"] = ports;
  return j;
}

std::string flows_csv(const RunResult& r) {
  std::string out =
      "flow,src,dst,bytes,start_ps,first_send_ps,end_ps,fct_ps,delivered,packets_sent,"
      "packets_received,retransmissions,out_of_order,ecn_marked\n";
  for (size_t i = 0; i < r.flows.size(); ++i) {
    const auto& f = r.flows[i];
    const int64_t first = f.first_send == Time::max() ? -1 : f.first_send.ps();
    const int64_t end = f.done ? f.end.ps() : -1;
    const int64_t fct = f.done ? f.fct().ps() : -1;
    out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", i, f.spec.src, f.spec.dst,
                       f.spec.bytes, f.spec.start.ps(), first, end, fct, f.delivered,
                       f.packets_sent, f.packets_received, f.retransmissions, f.out_of_order,
                       f.ecn_marked);
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
std::string us(Time t) { return fmt::format("{:.3f}", t.us_f()); }
}  // namespace

std::string summary_table(const RunResult& r) {
  const auto s = summarize_fct(r);
  std::string out;
  out += fmt::format("scenario {}  seed {}  transport {}  topology {} ({} hosts", r.name,
                     r.seed, r.transport_kind, r.topology_kind, r.hosts);
  if (r.topology_kind == "leaf_spine") {
    out += fmt::format(", {} leaves, {} spines, speed-up {:.2f}:1", r.leaves, r.spines, r.speedup);
  }
  out += ")\n";
  out += fmt::format("{:<28}{:>16}\n", "metric", "value");
  out += fmt::format("{:-<44}\n", "");
  auto row = [&out](const std::string& k, const std::string& v) {
    out += fmt::format("{:<28}{:>16}\n", k, v);
  };
  row("flows completed", fmt::format("{}/{}", s.completed, s.flows));
  row("FCT p50 (us)", us(s.p50));
  row("FCT p99 (us)", us(s.p99));
  row("FCT max (us)", us(s.max));
  row("goodput (Gbps)", fmt::format("{:.2f}", s.goodput_gbps));
  row("simulated time (us)", us(r.end_time));
  row("PFC pause time (us)", us(r.totals.pause_time));
  row("PFC frames", fmt::format("{}", r.totals.pfc_frames));
  row("ECN marks", fmt::format("{}", r.totals.ecn_marks));
  row("drops", fmt::format("{}", r.totals.drops));
  row("link losses", fmt::format("{}", r.totals.link_losses));
  uint64_t rtx = 0;
  uint64_t ooo = 0;
  for (const auto& f : r.flows) {
    rtx += f.retransmissions;
    ooo += f.out_of_order;
  }
  row("retransmissions", fmt::format("{}", rtx));
  row("out-of-order arrivals", fmt::format("{}", ooo));
  for (const auto& [k, v] : r.transport_counters) row(r.transport_kind + " " + k, fmt::format("{}", v));
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
  if (ec) throw std::runtime_error(fmt::format("{}: cannot create directory: {}", dir, ec.message()));
  const std::filesystem::path d(dir);
  write_file(d / "summary.json", summary_json(r).dump(2) + "\n");
  if (flows) write_file(d / "flows.csv", flows_csv(r));
  if (!r.trace.empty()) write_file(d / "trace.csv", trace_csv(r));
}

}  // namespace fabsim
