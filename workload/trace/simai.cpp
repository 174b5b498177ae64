// SimAI / AICB workload files; see simai.h.
#include "workload/trace/simai.h"

#include <fmt/format.h>  // messages

#include <algorithm>     // sort, unique
#include <array>         // tables
#include <charconv>      // from_chars
#include <filesystem>    // paths relative to the scenario file
#include <fstream>       // the file
#include <iterator>      // istreambuf_iterator
#include <limits>        // bounds
#include <map>           // warnings by token
#include <optional>      // parsed numbers
#include <system_error>  // errc
#include <tuple>         // checkpoint lists
#include <utility>       // move

#include "core/assert.h"
#include "workload/trace/placement.h"

namespace fabsim {
namespace {

constexpr uint32_t kNoNode = std::numeric_limits<uint32_t>::max();
constexpr int64_t kMaxNs = INT64_MAX / 4 / 1000;  // kDurationHorizon in ns
constexpr int64_t kMaxBytes = int64_t{1} << 53;

// SimAI's policy names (Workload.cc decode_parallelsim); fabsim replays the transformer walks.
struct PolicyRow {
  std::string_view name;
  bool replayed;
  bool fwd_in_bckwd;
};
constexpr std::array<PolicyRow, 11> kPolicies{{
    {"DATA", false, false},
    {"HYBRID_TRANSFORMER", true, false},
    {"HYBRID_TRANSFORMER_FWD_IN_BCKWD", true, true},
    {"HYBRID_DLRM", false, false},
    {"HYBRID_DLRM_ENHANCED", false, false},
    {"MODEL", false, false},
    {"HYBRID_DATA_MODEL", false, false},
    {"HYBRID_MODEL_DATA", false, false},
    {"HYBRID_CUSTOMIZED", false, false},
    {"MICRO", false, false},
    {"DISTRIBUTED_INFERENCE", false, false},
}};

// Comm-type prefixes in the order SimAI tests them (Workload.cc initialize_workload): the first
// that the string starts with decides the type, so ALLREDUCEALLTOALL... is an AllReduce.
struct CommRow {
  std::string_view prefix;
  SimaiComm type;
};
constexpr std::array<CommRow, 5> kComms{{
    {"ALLREDUCE", SimaiComm::kAllReduce},
    {"ALLTOALL", SimaiComm::kAllToAll},
    {"ALLREDUCEALLTOALL", SimaiComm::kAllReduce},  // never reached: ALLREDUCE matches first
    {"ALLGATHER", SimaiComm::kAllGather},
    {"REDUCESCATTER", SimaiComm::kReduceScatter},
}};

// What follows the prefix: nothing = the column's default group, _EP, _DP_EP; anything else
// leaves the collective without a group.
struct SuffixRow {
  std::string_view suffix;
  SimaiGroup group;  // kNone: the column's default
};
constexpr std::array<SuffixRow, 3> kSuffixes{{
    {"", SimaiGroup::kNone},
    {"_EP", SimaiGroup::kEp},
    {"_DP_EP", SimaiGroup::kDpEp},
}};

struct CommInfo {
  std::string_view simai;  // the column's name in messages
  SimaiGroup default_group;
};
// The three comm columns of a layer line: fields 4-5, 7-8, 10-11.
constexpr std::array<CommInfo, 3> kColumns{{
    {"forward", SimaiGroup::kTp},
    {"input-gradient", SimaiGroup::kTp},
    {"weight-gradient", SimaiGroup::kDp},
}};

std::vector<std::string_view> split(std::string_view line) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
    const size_t b = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r') ++i;
    if (i > b) out.push_back(line.substr(b, i - b));
  }
  return out;
}

std::optional<int64_t> integer(std::string_view s) {
  int64_t v = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

// Parser state: the file's name for messages, the first error.
class Parser {
 public:
  explicit Parser(std::string name) : name_(std::move(name)) {}

  SimaiParse run(std::string_view text) {
    std::vector<std::string_view> lines;
    for (size_t b = 0; b <= text.size();) {
      size_t e = text.find('\n', b);
      if (e == std::string_view::npos) e = text.size();
      lines.push_back(text.substr(b, e - b));
      b = e + 1;
    }
    if (!header(lines.empty() ? std::string_view() : lines[0])) return done();
    if (lines.size() < 2 || split(lines[1]).empty()) {
      fail(2, "line 2: the number N of layer lines");
      return done();
    }
    const auto n_tokens = split(lines[1]);
    const auto n = integer(n_tokens[0]);
    if (n_tokens.size() != 1 || !n || *n < 1 || *n > 10'000'000) {
      fail(2, fmt::format("line 2: the number N of layer lines, an integer >= 1, got '{}'",
                          std::string(lines[1])));
      return done();
    }
    size_t i = 2;
    while (static_cast<int64_t>(out_.workload.layers.size()) < *n) {
      while (i < lines.size() && split(lines[i]).empty()) ++i;
      if (i >= lines.size()) {
        fail(static_cast<int>(lines.size()), fmt::format("{} layer lines (N on line 2), found {}",
                                                         *n, out_.workload.layers.size()));
        return done();
      }
      if (!layer(lines[i], static_cast<int>(i + 1))) return done();
      ++i;
    }
    for (; i < lines.size(); ++i) {
      if (split(lines[i]).empty()) continue;
      fail(static_cast<int>(i + 1),
           fmt::format("no more than N = {} layer lines (N on line 2), found another", *n));
      return done();
    }
    if (!checkpoints()) return done();
    for (const auto& [token, where] : unread_) {
      out_.warnings.push_back(fmt::format(
          "{}:{}: comm type '{}' ({} time{}): {}", name_, where.first_line, token, where.count,
          where.count == 1 ? "" : "s", where.grouped ? kNoGroup : kNoComm));
    }
    return done();
  }

 private:
  static constexpr std::string_view kNoComm =
      "not a SimAI collective, read as no communication (as SimAI reads it)";
  static constexpr std::string_view kNoGroup =
      "SimAI reads it by its prefix as a collective with no group (its parser tests ALLREDUCE "
      "before ALLREDUCEALLTOALL); fabsim moves nothing for it";

  struct Unread {
    int first_line = 0;
    int count = 0;
    bool grouped = false;  // a known prefix without a group (else: no collective at all)
  };

  SimaiParse done() { return std::move(out_); }

  void fail(int line, const std::string& what) {
    if (out_.error.empty()) out_.error = fmt::format("{}:{}: {}", name_, line, what);
  }

  bool header(std::string_view line) {
    const auto tokens = split(line);
    if (tokens.empty()) {
      fail(1, "line 1: the parallelism policy, then key: value tokens");
      return false;
    }
    const PolicyRow* policy = nullptr;
    for (const PolicyRow& p : kPolicies) {
      if (p.name == tokens[0]) policy = &p;
    }
    if (policy == nullptr) {
      std::string names;
      for (const PolicyRow& p : kPolicies)
        names += fmt::format("{}{}", names.empty() ? "" : ", ", p.name);
      fail(1, fmt::format("field 1 (parallelism policy): one of {}, got '{}'", names,
                          std::string(tokens[0])));
      return false;
    }
    if (!policy->replayed) {
      fail(1, fmt::format("field 1 (parallelism policy): HYBRID_TRANSFORMER or "
                          "HYBRID_TRANSFORMER_FWD_IN_BCKWD (fabsim replays SimAI's transformer "
                          "walks; AICB writes the latter), got '{}'",
                          std::string(tokens[0])));
      return false;
    }
    SimaiWorkload& w = out_.workload;
    w.policy = std::string(tokens[0]);
    w.fwd_in_bckwd = policy->fwd_in_bckwd;
    // The integer keys; SimAI takes the token after each key (the last occurrence wins).
    struct Key {
      std::string_view name;
      int64_t* value;
      int64_t hi;
    };
    int64_t tp = -1, ep = -1, pp = -1, vpp = -1, ga = -1, all = -1, pp_comm = -1;
    const std::array<Key, 8> keys{{{"model_parallel_NPU_group:", &tp, 1 << 24},
                                   {"ep:", &ep, 1 << 24},
                                   {"pp:", &pp, 1 << 24},
                                   {"vpp:", &vpp, 1 << 24},
                                   {"ga:", &ga, 1 << 24},
                                   {"all_gpus:", &all, 1 << 24},
                                   {"pp_comm:", &pp_comm, kMaxBytes},
                                   {"pp_comm", &pp_comm, kMaxBytes}}};
    for (size_t i = 1; i < tokens.size(); ++i) {
      for (const Key& k : keys) {
        if (tokens[i] != k.name) continue;
        const auto v = i + 1 < tokens.size() ? integer(tokens[i + 1]) : std::nullopt;
        if (!v || *v < 0 || *v > k.hi) {
          fail(1, fmt::format("key '{}': a value from 0 to {}, got '{}'", k.name, k.hi,
                              i + 1 < tokens.size() ? std::string(tokens[i + 1]) : ""));
          return false;
        }
        *k.value = *v;
      }
      // FWD_IN_BCKWD only (as SimAI): a count, then that many layer indices.
      const std::array<std::pair<std::string_view, std::vector<int>*>, 2> lists{
          {{"checkpoints:", &w.checkpoints}, {"checkpoint_initiates:", &w.checkpoint_initiates}}};
      for (const auto& [key, list] : lists) {
        if (!w.fwd_in_bckwd || tokens[i] != key) continue;
        const auto count = i + 1 < tokens.size() ? integer(tokens[i + 1]) : std::nullopt;
        if (!count || *count < 0 || *count > 1 << 24 ||
            i + 2 + static_cast<size_t>(*count) > tokens.size()) {
          fail(1, fmt::format("key '{}': a count, then that many layer indices", key));
          return false;
        }
        list->clear();
        for (int64_t j = 0; j < *count; ++j) {
          const auto layer = integer(tokens[i + 2 + static_cast<size_t>(j)]);
          if (!layer || *layer < 0 || *layer > INT32_MAX) {
            fail(1,
                 fmt::format("key '{}': layer index {} of {}: an integer >= 0, got '{}'", key,
                             j + 1, *count, std::string(tokens[i + 2 + static_cast<size_t>(j)])));
            return false;
          }
          list->push_back(static_cast<int>(*layer));
        }
      }
    }
    if (all <= 0) {
      fail(1, "key 'all_gpus:': the number of ranks, > 0 (fabsim places that many ranks)");
      return false;
    }
    if (tp < 0) {
      fail(1, "key 'model_parallel_NPU_group:': the tensor-parallel group size");
      return false;
    }
    // SimAI's check (Workload.cc): warn when a key is 0 (or, here, absent) or pp_comm does not
    // agree with pp.
    const bool pp_one = pp == 1;
    if (tp == 0 || ep <= 0 || pp <= 0 || vpp <= 0 || ga <= 0 || (!pp_one && pp_comm <= 0) ||
        (pp_one && pp_comm > 0)) {
      out_.warnings.push_back(fmt::format(
          "{}:1: tp {}, ep {}, pp {}, vpp {}, ga {}, pp_comm {} (-1: absent): a key is 0 or "
          "absent, "
          "or pp_comm disagrees with pp (SimAI warns 'Input workload format mismatch'); tp 0 "
          "reads as all_gpus and ep 0 as 1",
          name_, tp, ep, pp, vpp, ga, pp_comm));
    }
    w.all_gpus = static_cast<int>(all);
    w.tp = tp == 0 ? w.all_gpus : static_cast<int>(tp);
    w.ep = ep <= 0 ? 1 : static_cast<int>(ep);
    w.pp = static_cast<int>(std::max<int64_t>(pp, 0));
    w.vpp = static_cast<int>(std::max<int64_t>(vpp, 0));
    w.ga = static_cast<int>(std::max<int64_t>(ga, 0));
    w.pp_comm = std::max<int64_t>(pp_comm, 0);
    if (w.all_gpus % w.tp != 0) {
      fail(1, fmt::format("key 'model_parallel_NPU_group:': a divisor of all_gpus = {}, got {}",
                          w.all_gpus, w.tp));
      return false;
    }
    if (w.dp() % w.ep != 0) {
      fail(1, fmt::format("key 'ep:': a divisor of DP = all_gpus / TP = {} (SimAI: 'The group "
                          "division method is incorrect'), got {}",
                          w.dp(), w.ep));
      return false;
    }
    return true;
  }

  bool time_field(std::string_view tok, int line, int field, std::string_view what, Time* out) {
    const auto v = integer(tok);
    if (!v || *v < 0 || *v > kMaxNs) {
      fail(line, fmt::format("field {} ({}, ns): an integer from 0 to {}, got '{}'", field, what,
                             kMaxNs, std::string(tok)));
      return false;
    }
    *out = Time::ns(*v);
    return true;
  }

  bool comm_field(std::string_view type, std::string_view bytes, int line, int field,
                  const CommInfo& col, SimaiCollective* out) {
    const auto v = integer(bytes);
    if (!v || *v < 0 || *v > kMaxBytes) {
      fail(line, fmt::format("field {} ({} comm bytes): an integer from 0 to {}, got '{}'",
                             field + 1, col.simai, kMaxBytes, std::string(bytes)));
      return false;
    }
    out->bytes = *v;
    if (type == "NONE") return true;
    for (const CommRow& c : kComms) {
      if (!type.starts_with(c.prefix)) continue;
      for (const SuffixRow& s : kSuffixes) {
        if (type.substr(c.prefix.size()) != s.suffix) continue;
        out->type = c.type;
        out->group = s.group == SimaiGroup::kNone ? col.default_group : s.group;
        return true;
      }
      out->type = c.type;  // with no group
      note(type, line, true);
      return true;
    }
    note(type, line, false);
    return true;
  }

  void note(std::string_view type, int line, bool grouped) {
    Unread& u = unread_[std::string(type)];
    if (u.count++ == 0) u.first_line = line;
    u.grouped = grouped;
  }

  bool layer(std::string_view text, int line) {
    const auto f = split(text);
    if (f.size() != 12) {
      fail(line, fmt::format("a layer line of 12 fields (name, dependency, then compute ns, comm "
                             "type, comm bytes for forward, input gradient and weight gradient, "
                             "then the update ns), got {}",
                             f.size()));
      return false;
    }
    SimaiLayer l;
    l.name = std::string(f[0]);
    l.line = line;
    if (!integer(f[1])) {
      fail(line, fmt::format("field 2 (dependency): an integer (AICB writes -1), got '{}'",
                             std::string(f[1])));
      return false;
    }
    const bool ok = time_field(f[2], line, 3, "forward compute time", &l.fwd_compute) &&
                    comm_field(f[3], f[4], line, 4, kColumns[0], &l.fwd) &&
                    time_field(f[5], line, 6, "input-gradient compute time", &l.ig_compute) &&
                    comm_field(f[6], f[7], line, 7, kColumns[1], &l.ig) &&
                    time_field(f[8], line, 9, "weight-gradient compute time", &l.wg_compute) &&
                    comm_field(f[9], f[10], line, 10, kColumns[2], &l.wg) &&
                    time_field(f[11], line, 12, "update time", &l.update);
    if (!ok) return false;
    out_.workload.layers.push_back(std::move(l));
    return true;
  }

  // FWD_IN_BCKWD's recomputation: SimAI walks down from an initiating line to the nearest
  // checkpoint at or below it, then forward until the next initiating line. fabsim takes the
  // files where that is well defined: indices within the file, and for every initiating line a
  // checkpoint strictly below it with no other initiating line between.
  bool checkpoints() {
    const SimaiWorkload& w = out_.workload;
    const int n = static_cast<int>(w.layers.size());
    std::vector<bool> is_checkpoint(static_cast<size_t>(n)), initiates(static_cast<size_t>(n));
    for (const auto& [key, list, flags] :
         {std::tuple{"checkpoints:", &w.checkpoints, &is_checkpoint},
          std::tuple{"checkpoint_initiates:", &w.checkpoint_initiates, &initiates}}) {
      for (int c : *list) {
        if (c >= n) {
          fail(1, fmt::format("key '{}': layer indices below N = {}, got {}", key, n, c));
          return false;
        }
        (*flags)[static_cast<size_t>(c)] = true;
      }
    }
    for (int i = 0; i < n; ++i) {
      if (!initiates[static_cast<size_t>(i)]) continue;
      int c = i - 1;
      while (c >= 0 && !is_checkpoint[static_cast<size_t>(c)] && !initiates[static_cast<size_t>(c)])
        --c;
      if (c < 0 || !is_checkpoint[static_cast<size_t>(c)]) {
        fail(1, fmt::format("key 'checkpoint_initiates:': layer {} needs a checkpoint below it "
                            "with no initiating layer between (SimAI recomputes from there)",
                            i));
        return false;
      }
    }
    return true;
  }

  std::string name_;
  SimaiParse out_;
  std::map<std::string, Unread> unread_;
};

// The graph of `passes` SimAI walks; see build_simai_graph().
class Builder {
 public:
  explicit Builder(const SimaiWorkload& w) : w_(w), n_(static_cast<uint32_t>(w.all_gpus)) {
    const std::array<std::pair<SimaiGroup, const char*>, 4> kinds{{{SimaiGroup::kTp, "tp"},
                                                                   {SimaiGroup::kDp, "dp"},
                                                                   {SimaiGroup::kEp, "ep"},
                                                                   {SimaiGroup::kDpEp, "dp_ep"}}};
    for (const auto& [g, name] : kinds) {
      groups_[static_cast<size_t>(g)] = simai_groups(w, g);
      names_[static_cast<size_t>(g)] = name;
    }
  }

  TaskGraph build(int passes) {
    const size_t layers = w_.layers.size();
    std::vector<bool> initiates(layers), checkpoint(layers);
    for (int c : w_.checkpoint_initiates) initiates[static_cast<size_t>(c)] = true;
    for (int c : w_.checkpoints) checkpoint[static_cast<size_t>(c)] = true;
    prev_.assign(n_, kNoNode);
    wg_done_.assign(layers, std::vector<uint32_t>(n_, kNoNode));
    for (int pass = 0; pass < passes; ++pass) {
      std::vector<std::vector<uint32_t>> wg_before = std::move(wg_done_);
      wg_done_.assign(layers, std::vector<uint32_t>(n_, kNoNode));
      for (size_t i = 0; i < layers; ++i) {
        const SimaiLayer& l = w_.layers[i];
        compute(l.fwd_compute, pass > 0 ? &wg_before[i] : nullptr);
        collective(l.fwd, l.update, w_.fwd_in_bckwd, nullptr);
      }
      for (size_t i = layers; i-- > 0;) {
        const SimaiLayer& l = w_.layers[i];
        if (w_.fwd_in_bckwd && initiates[i]) {
          size_t c = i - 1;
          while (!checkpoint[c]) --c;  // the parser checked that one exists below i
          for (size_t j = c; j < i; ++j) {
            compute(w_.layers[j].fwd_compute, nullptr);
            collective(w_.layers[j].fwd, w_.layers[j].update, true, nullptr);
          }
        }
        compute(l.ig_compute, nullptr);
        collective(l.ig, l.update, false, nullptr);
        compute(l.wg_compute, nullptr);
        collective(l.wg, l.update, false, &wg_done_[i]);
      }
    }
    return std::move(g_);
  }

 private:
  // One compute node per rank, after the rank's previous step (and `wait`'s node, if any).
  void compute(Time duration, const std::vector<uint32_t>* wait) {
    for (uint32_t r = 0; r < n_; ++r) {
      GraphNode c;
      c.kind = GraphNode::Kind::kCompute;
      c.rank = r;
      c.duration = duration;
      if (prev_[r] != kNoNode) c.deps.push_back(prev_[r]);
      if (wait != nullptr && (*wait)[r] != kNoNode) c.deps.push_back((*wait)[r]);
      std::sort(c.deps.begin(), c.deps.end());
      c.category = 0;
      prev_[r] = g_.add(std::move(c));
    }
  }

  // One collective per group instance, then its update delay; blocking (`done` null): each
  // member's next step waits for it; else it is recorded in `done` per rank.
  void collective(const SimaiCollective& s, Time update, bool raise, std::vector<uint32_t>* done) {
    if (s.type == SimaiComm::kNone || s.group == SimaiGroup::kNone) return;
    const auto& groups = groups_[static_cast<size_t>(s.group)];
    if (groups.empty() || groups[0].size() < 2) return;
    int64_t bytes = s.bytes;
    if (raise && bytes > 0 && bytes < 4096) bytes = 4096;  // SimAI's forward minimum
    const uint16_t category = g_.category(names_[static_cast<size_t>(s.group)]);
    for (size_t k = 0; k < groups.size(); ++k) {
      const auto& members = groups[k];
      GraphNode c;
      c.kind = GraphNode::Kind::kCollective;
      c.collective = collective_of(s.type);
      c.group = members;
      c.bytes = bytes;
      c.category = category;
      // Each group instance (a TP, DP, EP or DP_EP rank set) is one NCCL communicator: its
      // collectives run one at a time (workload/graph.h).
      c.comm = comms_
                   .try_emplace({static_cast<size_t>(s.group), k},
                                static_cast<uint32_t>(comms_.size() + 1))
                   .first->second;
      for (uint32_t r : members) {
        if (prev_[r] != kNoNode) c.deps.push_back(prev_[r]);
      }
      std::sort(c.deps.begin(), c.deps.end());
      c.deps.erase(std::unique(c.deps.begin(), c.deps.end()), c.deps.end());
      uint32_t end = g_.add(std::move(c));
      if (update > Time()) {
        GraphNode d;
        d.kind = GraphNode::Kind::kDelay;
        d.duration = update;
        d.deps.push_back(end);
        d.category = g_.category("update");
        end = g_.add(std::move(d));
      }
      for (uint32_t r : members) (done != nullptr ? (*done)[r] : prev_[r]) = end;
    }
  }

  static Collective collective_of(SimaiComm c) {
    constexpr std::array<std::pair<SimaiComm, Collective>, 4> kMap{
        {{SimaiComm::kAllReduce, Collective::kAllReduceRing},
         {SimaiComm::kAllGather, Collective::kAllGather},
         {SimaiComm::kReduceScatter, Collective::kReduceScatter},
         {SimaiComm::kAllToAll, Collective::kAllToAll}}};
    for (const auto& [from, to] : kMap) {
      if (from == c) return to;
    }
    FABSIM_CHECK(false);
    return Collective::kAllReduceRing;
  }

  const SimaiWorkload& w_;
  uint32_t n_;
  TaskGraph g_;
  std::map<std::pair<size_t, size_t>, uint32_t> comms_;  // (group kind, instance) -> communicator
  std::array<std::vector<std::vector<uint32_t>>, 5> groups_;
  std::array<const char*, 5> names_{};
  std::vector<uint32_t> prev_;                  // per rank: its last blocking step
  std::vector<std::vector<uint32_t>> wg_done_;  // per line, per rank: its wg collective (+ delay)
};

}  // namespace

SimaiParse parse_simai(std::string_view text, const std::string& name) {
  return Parser(name).run(text);
}

std::vector<std::vector<uint32_t>> simai_groups(const SimaiWorkload& w, SimaiGroup g) {
  const auto tp = static_cast<uint32_t>(w.tp);
  const auto dp = static_cast<uint32_t>(w.dp());
  const auto ep = static_cast<uint32_t>(w.ep);
  std::vector<std::vector<uint32_t>> out;
  auto rank = [&](uint32_t t, uint32_t d) { return t + tp * d; };
  switch (g) {
    case SimaiGroup::kNone:
      break;
    case SimaiGroup::kTp:
      for (uint32_t d = 0; d < dp; ++d) {
        out.emplace_back();
        for (uint32_t t = 0; t < tp; ++t) out.back().push_back(rank(t, d));
      }
      break;
    case SimaiGroup::kDp:
      for (uint32_t t = 0; t < tp; ++t) {
        out.emplace_back();
        for (uint32_t d = 0; d < dp; ++d) out.back().push_back(rank(t, d));
      }
      break;
    case SimaiGroup::kEp:
      for (uint32_t b = 0; b < dp / ep; ++b) {
        for (uint32_t t = 0; t < tp; ++t) {
          out.emplace_back();
          for (uint32_t e = 0; e < ep; ++e) out.back().push_back(rank(t, b * ep + e));
        }
      }
      break;
    case SimaiGroup::kDpEp:
      for (uint32_t e = 0; e < ep; ++e) {
        for (uint32_t t = 0; t < tp; ++t) {
          out.emplace_back();
          for (uint32_t m = 0; m < dp / ep; ++m) out.back().push_back(rank(t, e + ep * m));
        }
      }
      break;
  }
  return out;
}

TaskGraph build_simai_graph(const SimaiWorkload& w, int passes) {
  return Builder(w).build(passes);
}

namespace {

struct SimaiKindConfig {
  std::string file;
  TracePlacement place;
  bool barrier = true;
  std::shared_ptr<const SimaiWorkload> workload;
  std::shared_ptr<const TaskGraph> graph;
  int passes() const { return barrier ? 1 : place.iterations; }
  int repeats() const { return barrier ? place.iterations : 1; }
};

class SimaiKind final : public WorkloadKind {
 public:
  std::string_view name() const override { return "simai"; }
  std::string_view description() const override {
    return "a SimAI/AICB workload file (REFERENCE.md §8.5) replayed as SimAI walks it: per layer "
           "line forward compute and blocking collective, then backward input- and weight-"
           "gradient compute and collectives (TP, DP, EP, DP_EP groups), over all_gpus ranks";
  }
  KindConfig load(Section& s, const HostShape& hosts) const override {
    SimaiKindConfig c;
    c.file = s.text("file", "",
                    "the SimAI/AICB workload file (relative to the scenario file); its header's "
                    "all_gpus ranks run from GPU `first`");
    c.place = load_placement(s, hosts);
    c.barrier = s.boolean("iteration_barrier", true,
                          "true: each iteration starts when the previous one is done (per-"
                          "iteration times); false: SimAI's own rule, a line's next forward waits "
                          "only for its weight-gradient collective (the iterations are one graph, "
                          "reported as one iteration)");
    if (s.describing()) return KindConfig::of(c);
    if (c.file.empty()) s.fail("file", "the path of a SimAI/AICB workload file");
    std::filesystem::path path(c.file);
    if (path.is_relative()) path = std::filesystem::path(s.file()).parent_path() / path;
    std::ifstream in(path);
    if (!in)
      s.fail("file",
             fmt::format("a readable SimAI/AICB workload file ({}: cannot open)", path.string()));
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    SimaiParse p = parse_simai(text, path.string());
    if (!p.error.empty()) s.fail("file", fmt::format("a SimAI/AICB workload file ({})", p.error));
    for (const std::string& w : p.warnings) s.warn("file", w);
    check_placement(s, c.place, hosts, static_cast<uint32_t>(p.workload.all_gpus), "file");
    c.workload = std::make_shared<const SimaiWorkload>(std::move(p.workload));
    auto graph = std::make_shared<TaskGraph>(build_simai_graph(*c.workload, c.passes()));
    FABSIM_CHECK(graph->check().empty());
    c.graph = std::move(graph);
    return KindConfig::of(c);
  }
  WorkloadPlan plan(const KindConfig& cfg, int /*hosts*/, Rng& /*rng*/) const override {
    const auto& c = cfg.get<SimaiKindConfig>();
    const SimaiWorkload& w = *c.workload;
    WorkloadPlan p;
    p.graphs.push_back(
        trace_job("simai", c.graph, static_cast<uint32_t>(w.all_gpus), c.place, c.repeats()));
    p.summary = {{"kind", "simai"},
                 {"file", c.file},
                 {"policy", w.policy},
                 {"ranks", w.all_gpus},
                 {"tp", w.tp},
                 {"dp", w.dp()},
                 {"ep", w.ep},
                 {"pp", w.pp},
                 {"vpp", w.vpp},
                 {"ga", w.ga},
                 {"pp_comm", w.pp_comm},
                 {"layers", w.layers.size()},
                 {"passes_per_iteration", c.passes()},
                 {"graph_nodes", c.graph->nodes.size()}};
    return p;
  }
  WorkloadDemand demand(const KindConfig& cfg, int /*hosts*/) const override {
    const auto& c = cfg.get<SimaiKindConfig>();
    return graph_demand(*c.graph, c.repeats(), c.place.channels, "workload.file");
  }
  std::vector<WorkloadStart> starts(const KindConfig& cfg) const override {
    return {{"start", cfg.get<SimaiKindConfig>().place.start}};
  }
};

}  // namespace

std::unique_ptr<WorkloadKind> make_simai_kind() {
  return std::make_unique<SimaiKind>();
}

}  // namespace fabsim
