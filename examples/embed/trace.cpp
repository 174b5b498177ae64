// The trace reader and driver; see trace.h.
#include "examples/embed/trace.h"

#include <fmt/format.h>  // messages

#include <charconv>       // integers
#include <fstream>        // load_trace
#include <limits>         // ranges
#include <sstream>        // words of a line
#include <unordered_map>  // op ids

namespace fabsim {
namespace {

// One line being read, for messages that name the file, the line and the field.
struct Line {
  const std::string& file;
  int number;
  [[noreturn]] void fail(const std::string& what) const {
    throw TraceError(fmt::format("{}:{}: {}", file, number, what));
  }
};

int64_t integer(const Line& l, const std::string& field, const std::string& text, int64_t lo,
                int64_t hi) {
  int64_t v = 0;
  const char* end = text.data() + text.size();
  const auto [p, ec] = std::from_chars(text.data(), end, v);
  if (ec != std::errc() || p != end || v < lo || v > hi) {
    l.fail(fmt::format("{}: an integer in [{}, {}], got '{}'", field, lo, hi, text));
  }
  return v;
}

Time duration(const Line& l, const std::string& field, const std::string& text) {
  const Parsed<Time> t = parse_time(text);
  if (!t.ok() || t.value < Time()) {
    l.fail(fmt::format("{}: a time such as \"3us\", got '{}'", field, text));
  }
  return t.value;
}

int64_t bytes(const Line& l, const std::string& text) {
  const Parsed<Bytes> b = parse_bytes(text);
  if (!b.ok() || b.value < Bytes(1)) {
    l.fail(fmt::format("bytes: a size of at least 1 such as \"1MiB\", got '{}'", text));
  }
  return b.value.count();
}

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::string item;
  std::istringstream in(text);
  while (std::getline(in, item, sep)) out.push_back(item);
  return out;
}

constexpr int64_t kMaxRank = std::numeric_limits<int32_t>::max();

// "job <name> <hosts> [start=<time>]"
TraceJob read_job(const Line& l, const std::vector<std::string>& w) {
  if (w.size() < 3 || w.size() > 4) {
    l.fail("job <name> <host>,<host>,... [start=<time>]");
  }
  TraceJob j;
  j.name = w[1];
  for (const auto& h : split(w[2], ',')) {
    j.hosts.push_back(static_cast<uint32_t>(integer(l, "hosts", h, 0, kMaxRank)));
  }
  if (w.size() == 4) {
    if (w[3].rfind("start=", 0) != 0) l.fail(fmt::format("start=<time>, got '{}'", w[3]));
    j.start = duration(l, "start", w[3].substr(6));
  }
  return j;
}

// The key=value fields after an op's positional fields.
void read_options(const Line& l, const std::vector<std::string>& w, size_t from, TraceOp& op,
                  const std::unordered_map<std::string, uint32_t>& ids) {
  for (size_t i = from; i < w.size(); ++i) {
    const auto eq = w[i].find('=');
    if (eq == std::string::npos) l.fail(fmt::format("key=value, got '{}'", w[i]));
    const std::string key = w[i].substr(0, eq);
    const std::string value = w[i].substr(eq + 1);
    const bool send = op.kind == TraceOp::Kind::kSend;
    const bool message = send || op.kind == TraceOp::Kind::kRecv;
    if (key == "after") {
      for (const auto& id : split(value, ',')) {
        const auto it = ids.find(id);
        if (it == ids.end()) {
          l.fail(fmt::format("after: ops of this job written above, got '{}'", id));
        }
        op.after.push_back(it->second);
      }
    } else if (key == "tag" && message) {
      op.tag = static_cast<int32_t>(integer(l, key, value, std::numeric_limits<int32_t>::min(),
                                            std::numeric_limits<int32_t>::max()));
    } else if (key == "op" && send) {
      op.op = static_cast<int32_t>(integer(l, key, value, -1, kMaxRank));
    } else if (key == "step" && send) {
      op.step = static_cast<int32_t>(integer(l, key, value, -1, kMaxRank));
    } else {
      l.fail(fmt::format("'{}': not a key of this op (after; tag for send and recv; op and step "
                         "for send)",
                         key));
    }
  }
}

struct Kinds {
  const char* word;
  TraceOp::Kind kind;
  size_t fields;  // positional fields including id, rank and the kind
};
constexpr Kinds kKinds[] = {{"send", TraceOp::Kind::kSend, 5},
                            {"recv", TraceOp::Kind::kRecv, 5},
                            {"calc", TraceOp::Kind::kCalc, 4},
                            {"wait", TraceOp::Kind::kWait, 3}};

// "<id> <rank> <kind> ..."
TraceOp read_op(const Line& l, const std::vector<std::string>& w, const TraceJob& job,
                const std::unordered_map<std::string, uint32_t>& ids) {
  TraceOp op;
  if (w.size() < 3) l.fail("<id> <rank> send|recv|calc|wait ...");
  op.id = w[0];
  if (ids.count(op.id) != 0) {
    l.fail(fmt::format("an op id not used before in job '{}', got '{}'", job.name, op.id));
  }
  const auto ranks = static_cast<int64_t>(job.hosts.size());
  op.rank = static_cast<uint32_t>(integer(l, "rank", w[1], 0, ranks - 1));
  const Kinds* k = nullptr;
  for (const auto& c : kKinds) {
    if (w[2] == c.word) k = &c;
  }
  if (k == nullptr) l.fail(fmt::format("send, recv, calc or wait, got '{}'", w[2]));
  op.kind = k->kind;
  if (w.size() < k->fields) l.fail(fmt::format("{} fields for {}", k->fields, k->word));
  if (op.kind == TraceOp::Kind::kSend || op.kind == TraceOp::Kind::kRecv) {
    op.peer = static_cast<uint32_t>(
        integer(l, op.kind == TraceOp::Kind::kSend ? "dst" : "src", w[3], 0, ranks - 1));
    if (op.peer == op.rank) l.fail(fmt::format("a peer rank other than {}", op.rank));
    op.bytes = bytes(l, w[4]);
  } else if (op.kind == TraceOp::Kind::kCalc) {
    op.duration = duration(l, "calc", w[3]);
  }
  read_options(l, w, k->fields, op, ids);
  return op;
}

}  // namespace

Trace parse_trace(std::istream& in, const std::string& name) {
  Trace t;
  std::unordered_map<std::string, uint32_t> ids;  // of the current job
  std::string text;
  int number = 0;
  while (std::getline(in, text)) {
    ++number;
    const Line l{name, number};
    if (const auto hash = text.find('#'); hash != std::string::npos) text.resize(hash);
    std::istringstream words(text);
    std::vector<std::string> w;
    for (std::string word; words >> word;) w.push_back(word);
    if (w.empty()) continue;
    if (w[0] == "latency") {
      if (w.size() != 2) l.fail("latency <time>");
      t.latency = duration(l, "latency", w[1]);
    } else if (w[0] == "job") {
      t.jobs.push_back(read_job(l, w));
      ids.clear();
    } else {
      if (t.jobs.empty()) l.fail("a 'job' line before the first op");
      TraceJob& job = t.jobs.back();
      job.ops.push_back(read_op(l, w, job, ids));
      ids[job.ops.back().id] = static_cast<uint32_t>(job.ops.size() - 1);
    }
  }
  if (t.jobs.empty()) throw TraceError(fmt::format("{}: at least one 'job' line", name));
  return t;
}

Trace load_trace(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw TraceError(fmt::format("{}: cannot open the trace", path));
  return parse_trace(in, path);
}

TraceDriver::TraceDriver(Backend& net, const Trace& trace)
    : net_(net), trace_(trace), jobs_(trace.jobs.size()) {
  for (uint32_t j = 0; j < jobs_.size(); ++j) {
    const TraceJob& tj = trace.jobs[j];
    JobState& s = jobs_[j];
    s.id = net.add_job(tj.name, tj.hosts);
    s.missing.resize(tj.ops.size());
    s.dependents.resize(tj.ops.size());
    s.left.assign(tj.hosts.size(), 0);
    s.done_at.assign(tj.ops.size(), Time::max());
    for (uint32_t o = 0; o < tj.ops.size(); ++o) {
      const TraceOp& op = tj.ops[o];
      s.missing[o] = static_cast<uint32_t>(op.after.size());
      for (uint32_t a : op.after) s.dependents[a].push_back(o);
      ++s.left[op.rank];
      s.refs.push_back({this, j, o});
    }
    s.start = {this, j, 0};
    total_ += tj.ops.size();
  }
  // The job starts in trace order, as the jobs workload schedules its jobs' first ops.
  for (auto& s : jobs_) {
    const Time start = trace.jobs[s.start.job].start;
    net.schedule(start > net.now() ? start - net.now() : Time(),
                 {&TraceDriver::on_start, &s.start});
  }
}

void TraceDriver::on_start(void* arg) {
  const auto* r = static_cast<const Ref*>(arg);
  r->driver->start_job(r->job);
}

void TraceDriver::on_done(void* arg) {
  const auto* r = static_cast<const Ref*>(arg);
  r->driver->done(r->job, r->op);
}

void TraceDriver::start_job(uint32_t job) {
  const TraceJob& tj = trace_.jobs[job];
  JobState& s = jobs_[job];
  for (uint32_t rank = 0; rank < tj.hosts.size(); ++rank) {
    if (s.left[rank] == 0) net_.rank_finished(s.id, rank);
  }
  for (uint32_t o = 0; o < tj.ops.size(); ++o) {
    if (s.missing[o] == 0) ready(job, o);
  }
}

void TraceDriver::ready(uint32_t job, uint32_t o) {
  const TraceOp& op = trace_.jobs[job].ops[o];
  JobState& s = jobs_[job];
  const Callback handler{&TraceDriver::on_done, &s.refs[o]};
  switch (op.kind) {
    case TraceOp::Kind::kSend:
      net_.send(s.id, op.rank, op.peer, op.bytes, op.tag, handler,
                SendOptions{trace_.latency, op.op, op.step});
      return;
    case TraceOp::Kind::kRecv:
      net_.recv(s.id, op.peer, op.rank, op.bytes, op.tag, handler);
      return;
    case TraceOp::Kind::kCalc:
      net_.schedule(op.duration, handler);
      return;
    case TraceOp::Kind::kWait:
      done(job, o);
      return;
  }
}

// The op's dependents in file order, each posted as soon as its last `after` is done (as the
// jobs workload releases a transfer when its last dependency is delivered); then the rank's count.
void TraceDriver::done(uint32_t job, uint32_t o) {
  JobState& s = jobs_[job];
  s.done_at[o] = net_.now();
  ++done_;
  for (uint32_t d : s.dependents[o]) {
    if (--s.missing[d] == 0) ready(job, d);
  }
  const uint32_t rank = trace_.jobs[job].ops[o].rank;
  if (--s.left[rank] == 0) net_.rank_finished(s.id, rank);
}

}  // namespace fabsim
