// Chakra execution traces; see chakra.h.
#include "workload/trace/chakra.h"

#include <fmt/format.h>  // messages

#include <algorithm>   // sort, unique, find
#include <array>       // tables
#include <filesystem>  // paths relative to the scenario file
#include <fstream>     // trace files
#include <iterator>    // istreambuf_iterator
#include <limits>      // bounds
#include <queue>       // topological order
#include <set>         // dependency sets
#include <tuple>       // keys

#include <nlohmann/json.hpp>  // process groups (METADATA nodes, comm-group files)

#include "core/assert.h"
#include "workload/trace/et_def.pb.h"  // generated from et_def.proto (workload/CMakeLists.txt)
#include "workload/trace/placement.h"

namespace fabsim {

static_assert(static_cast<int>(EtNodeType::kColl) == ChakraProtoMsg::COMM_COLL_NODE);
static_assert(static_cast<int>(EtNodeType::kComp) == ChakraProtoMsg::COMP_NODE);
static_assert(static_cast<int>(EtNodeType::kSend) == ChakraProtoMsg::COMM_SEND_NODE);
static_assert(static_cast<int>(EtNodeType::kRecv) == ChakraProtoMsg::COMM_RECV_NODE);
static_assert(static_cast<int>(EtNodeType::kMetadata) == ChakraProtoMsg::METADATA_NODE);
static_assert(static_cast<int>(EtCollective::kAllToAll) == ChakraProtoMsg::ALL_TO_ALL);
static_assert(static_cast<int>(EtCollective::kReduceScatter) == ChakraProtoMsg::REDUCE_SCATTER);
static_assert(static_cast<int>(EtCollective::kBarrier) == ChakraProtoMsg::BARRIER);

namespace {

constexpr uint32_t kPass = std::numeric_limits<uint32_t>::max();  // completes at once
constexpr int64_t kMaxUs = INT64_MAX / 4 / 1000 / 1000;           // kDurationHorizon in µs
constexpr int64_t kMaxBytes = int64_t{1} << 53;

const char* type_name(int32_t t) {
  return ChakraProtoMsg::NodeType_IsValid(t)
             ? ChakraProtoMsg::NodeType_Name(static_cast<ChakraProtoMsg::NodeType>(t)).c_str()
             : "unknown";
}

// --- Reading ---------------------------------------------------------------------------------

// The integer an attribute holds, whichever integer variant carries it (the reference feeder
// reads comm_type and comm_size as int64, comm_src/dst/tag as int32; traces from other writers
// may use another width).
std::optional<int64_t> attr_integer(const ChakraProtoMsg::AttributeProto& a) {
  using A = ChakraProtoMsg::AttributeProto;
  switch (a.value_case()) {
    case A::kInt32Val:
      return a.int32_val();
    case A::kInt64Val:
      return a.int64_val();
    case A::kUint32Val:
      return a.uint32_val();
    case A::kUint64Val:
      if (a.uint64_val() > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
      return static_cast<int64_t>(a.uint64_val());
    case A::kSint32Val:
      return a.sint32_val();
    case A::kSint64Val:
      return a.sint64_val();
    case A::kFixed32Val:
      return a.fixed32_val();
    case A::kFixed64Val:
      if (a.fixed64_val() > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
      return static_cast<int64_t>(a.fixed64_val());
    case A::kSfixed32Val:
      return a.sfixed32_val();
    case A::kSfixed64Val:
      return a.sfixed64_val();
    default:
      return std::nullopt;
  }
}

// The integer attributes fabsim reads (REFERENCE.md §8.6, the reference feeder's names).
struct IntAttr {
  std::string_view name;
  std::optional<int64_t> EtNode::*field;
};
constexpr std::array<IntAttr, 5> kIntAttrs{{{"comm_type", &EtNode::comm_type},
                                            {"comm_size", &EtNode::comm_size},
                                            {"comm_src", &EtNode::comm_src},
                                            {"comm_dst", &EtNode::comm_dst},
                                            {"comm_tag", &EtNode::comm_tag}}};

// Reads a varint32 at `pos`; false if truncated or longer than 5 bytes.
bool varint32(const std::string& b, size_t* pos, uint32_t* out) {
  uint64_t v = 0;
  for (int i = 0; i < 5; ++i) {
    if (*pos >= b.size()) return false;
    const auto byte = static_cast<uint8_t>(b[(*pos)++]);
    v |= static_cast<uint64_t>(byte & 0x7f) << (7 * i);
    if ((byte & 0x80) == 0) {
      if (v > UINT32_MAX) return false;
      *out = static_cast<uint32_t>(v);
      return true;
    }
  }
  return false;
}

// --- Building --------------------------------------------------------------------------------

// A graph node being assembled from one or more per-rank nodes.
struct Unit {
  GraphNode node;
  std::string what;  // for messages
  std::string category;
  std::vector<std::pair<uint32_t, uint32_t>> members;  // (rank, position in its file)
  std::string pg;                                      // collectives: process group
  int64_t comm_type = 0;
  int64_t comm_size = 0;
};

constexpr std::array<std::pair<EtCollective, Collective>, 4> kCollectives{
    {{EtCollective::kAllReduce, Collective::kAllReduceRing},
     {EtCollective::kAllGather, Collective::kAllGather},
     {EtCollective::kReduceScatter, Collective::kReduceScatter},
     {EtCollective::kAllToAll, Collective::kAllToAll}}};

std::string ranks_text(const std::vector<uint32_t>& r) {
  std::string out;
  for (uint32_t x : r) out += fmt::format("{}{}", out.empty() ? "" : ", ", x);
  return "{" + out + "}";
}

class Builder {
 public:
  Builder(const std::vector<EtRank>& ranks, const ChakraOptions& opt)
      : ranks_(ranks), opt_(opt), n_(static_cast<uint32_t>(ranks.size())) {}

  ChakraGraph run() {
    if (n_ == 0) return fail("no rank's trace");
    if (!index() || !groups() || !units() || !match_p2p() || !complete() || !order() || !emit()) {
      return std::move(out_);
    }
    return std::move(out_);
  }

 private:
  ChakraGraph fail(const std::string& what) {
    if (out_.error.empty()) out_.error = what;
    return std::move(out_);
  }
  bool bad(const std::string& what) {
    if (out_.error.empty()) out_.error = what;
    return false;
  }
  std::string where(uint32_t r, uint32_t pos) const {
    const EtNode& e = ranks_[r].nodes[pos];
    return fmt::format("{}: node {} '{}'", ranks_[r].file, e.id, e.name);
  }

  // Node ids per rank; per-rank dependency positions; a per-rank topological order.
  bool index() {
    deps_.resize(n_);
    topo_.resize(n_);
    for (uint32_t r = 0; r < n_; ++r) {
      const auto& nodes = ranks_[r].nodes;
      std::map<uint64_t, uint32_t> pos;
      for (uint32_t i = 0; i < nodes.size(); ++i) {
        if (!pos.emplace(nodes[i].id, i).second) {
          return bad(fmt::format("{}: node id {} appears twice (ids are unique in a file)",
                                 ranks_[r].file, nodes[i].id));
        }
        out_.counts[type_name(nodes[i].type)] += 1;
      }
      deps_[r].resize(nodes.size());
      std::vector<uint32_t> missing(nodes.size(), 0);
      std::vector<std::vector<uint32_t>> children(nodes.size());
      for (uint32_t i = 0; i < nodes.size(); ++i) {
        for (const bool ctrl : {false, true}) {
          if (ctrl && !opt_.ctrl_deps) break;
          for (uint64_t d : ctrl ? nodes[i].ctrl_deps : nodes[i].data_deps) {
            const auto it = pos.find(d);
            if (it == pos.end()) {
              return bad(fmt::format("{}: {}: a node id of the same file, got {}", where(r, i),
                                     ctrl ? "ctrl_deps" : "data_deps", d));
            }
            deps_[r][i].push_back(it->second);
          }
        }
        std::sort(deps_[r][i].begin(), deps_[r][i].end());
        deps_[r][i].erase(std::unique(deps_[r][i].begin(), deps_[r][i].end()), deps_[r][i].end());
        missing[i] = static_cast<uint32_t>(deps_[r][i].size());
        for (uint32_t d : deps_[r][i]) children[d].push_back(i);
      }
      std::priority_queue<uint32_t, std::vector<uint32_t>, std::greater<>> ready;
      for (uint32_t i = 0; i < nodes.size(); ++i) {
        if (missing[i] == 0) ready.push(i);
      }
      while (!ready.empty()) {
        const uint32_t i = ready.top();
        ready.pop();
        topo_[r].push_back(i);
        for (uint32_t c : children[i]) {
          if (--missing[c] == 0) ready.push(c);
        }
      }
      if (topo_[r].size() != nodes.size()) {
        for (uint32_t i = 0; i < nodes.size(); ++i) {
          if (missing[i] > 0) {
            return bad(fmt::format("{}: its {} form a cycle (the file's dependencies "
                                   "must be acyclic)",
                                   where(r, i),
                                   opt_.ctrl_deps ? "data_deps and ctrl_deps" : "data_deps"));
          }
        }
      }
    }
    return true;
  }

  // Process groups: the comm-group file, then METADATA nodes, then the ranks that name a group.
  bool groups() {
    pg_ = opt_.pg_ranks;
    for (const auto& [name, members] : pg_) {
      if (!check_group(name, members, "the comm-group file")) return false;
    }
    for (uint32_t r = 0; r < n_; ++r) {
      for (uint32_t i = 0; i < ranks_[r].nodes.size(); ++i) {
        const EtNode& e = ranks_[r].nodes[i];
        if (e.type != static_cast<int32_t>(EtNodeType::kMetadata) || e.inputs_values.empty())
          continue;
        if (!metadata_groups(r, i)) return false;
      }
    }
    std::map<std::string, std::set<uint32_t>> named;
    for (uint32_t r = 0; r < n_; ++r) {
      for (const EtNode& e : ranks_[r].nodes) {
        if (e.type == static_cast<int32_t>(EtNodeType::kColl) && e.pg_name &&
            !default_pg(*e.pg_name) && pg_.find(*e.pg_name) == pg_.end()) {
          named[*e.pg_name].insert(r);
        }
      }
    }
    for (const auto& [name, members] : named) {
      pg_[name] = std::vector<uint32_t>(members.begin(), members.end());
      out_.warnings.push_back(fmt::format(
          "process group '{}' is defined by no comm-group file or METADATA node: taken as the "
          "ranks whose traces hold a collective on it, {}",
          name, ranks_text(pg_[name])));
    }
    return true;
  }

  static bool default_pg(const std::string& pg) { return pg.empty() || pg == "0"; }

  bool check_group(const std::string& name, const std::vector<uint32_t>& members,
                   const std::string& from) {
    std::vector<uint32_t> sorted = members;
    std::sort(sorted.begin(), sorted.end());
    if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
      return bad(fmt::format("{}: process group '{}' names a rank twice", from, name));
    }
    if (!sorted.empty() && sorted.back() >= n_) {
      return bad(fmt::format("{}: process group '{}': ranks below the {} traces, got {}", from,
                             name, n_, sorted.back()));
    }
    return true;
  }

  // ASTRA-sim's form (astra-sim Workload.cc issue_pytorch_pg_metadata): inputs.values is
  // "['<json>']" with <json> a list of {"pg_name": "...", "ranks": [...]}; empty ranks = all.
  bool metadata_groups(uint32_t r, uint32_t i) {
    std::string text = ranks_[r].nodes[i].inputs_values;
    if (text.size() >= 4 && text.starts_with("['") && text.ends_with("']")) {
      text = text.substr(2, text.size() - 4);
    }
    const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_array()) {
      out_.warnings.push_back(fmt::format("{}: METADATA inputs.values holds no process groups in "
                                          "ASTRA-sim's form [{{\"pg_name\", \"ranks\"}}]: ignored",
                                          where(r, i)));
      return true;
    }
    for (const auto& item : j) {
      if (!item.is_object() || !item.contains("pg_name") || !item["pg_name"].is_string() ||
          !item.contains("ranks") || !item["ranks"].is_array()) {
        return bad(fmt::format("{}: METADATA process group: an object with a string pg_name and "
                               "a list of ranks, got {}",
                               where(r, i), item.dump()));
      }
      const std::string name = item["pg_name"].get<std::string>();
      std::vector<uint32_t> members;
      for (const auto& x : item["ranks"]) {
        if (!x.is_number_unsigned() || x.get<uint64_t>() > UINT32_MAX) {
          return bad(fmt::format("{}: METADATA process group '{}': ranks are integers >= 0, got "
                                 "{}",
                                 where(r, i), name, x.dump()));
        }
        members.push_back(x.get<uint32_t>());
      }
      if (members.empty()) {
        for (uint32_t k = 0; k < n_; ++k) members.push_back(k);
      }
      if (!check_group(name, members, where(r, i))) return false;
      const auto [it, added] = pg_.emplace(name, members);
      if (!added && it->second != members) {
        return bad(fmt::format("{}: METADATA process group '{}' is {} here but {} elsewhere",
                               where(r, i), name, ranks_text(members), ranks_text(it->second)));
      }
    }
    return true;
  }

  const std::vector<uint32_t>& group_of(const EtNode& e) {
    if (!e.pg_name || default_pg(*e.pg_name)) {
      if (all_.empty()) {
        for (uint32_t k = 0; k < n_; ++k) all_.push_back(k);
      }
      return all_;
    }
    return pg_.at(*e.pg_name);
  }

  uint32_t add_unit(Unit u) {
    units_.push_back(std::move(u));
    return static_cast<uint32_t>(units_.size() - 1);
  }

  // One unit per compute node, collective instance, broadcast and send/recv pair.
  bool units() {
    unit_of_.resize(n_);
    joins_.resize(n_);
    for (uint32_t r = 0; r < n_; ++r) {
      const auto& nodes = ranks_[r].nodes;
      unit_of_[r].assign(nodes.size(), kPass);
      joins_[r].assign(nodes.size(), kPass);
      std::map<std::string, uint32_t> issued;  // per process group: collectives so far
      // Issue order: the file's dependency order (file order among independent nodes, so a file
      // written in dependency order is read in file order).
      for (uint32_t i : topo_[r]) {
        if (!node(r, i, issued)) return false;
      }
    }
    return true;
  }

  bool node(uint32_t r, uint32_t i, std::map<std::string, uint32_t>& issued) {
    const EtNode& e = ranks_[r].nodes[i];
    switch (static_cast<EtNodeType>(e.type)) {
      case EtNodeType::kComp: {
        if (e.duration_us > static_cast<uint64_t>(kMaxUs)) {
          return bad(fmt::format("{}: duration_micros: at most {}, got {}", where(r, i), kMaxUs,
                                 e.duration_us));
        }
        Unit u;
        u.node.kind = e.cpu_op ? GraphNode::Kind::kDelay : GraphNode::Kind::kCompute;
        u.node.rank = r;
        u.node.duration = Time::us(static_cast<int64_t>(e.duration_us));
        u.category = e.cpu_op ? "cpu" : "compute";
        u.what = where(r, i);
        u.members.emplace_back(r, i);
        unit_of_[r][i] = add_unit(std::move(u));
        return true;
      }
      case EtNodeType::kColl:
        return collective(r, i, issued);
      case EtNodeType::kSend:
      case EtNodeType::kRecv:
        return p2p(r, i);
      case EtNodeType::kInvalid:
      case EtNodeType::kMetadata:
      case EtNodeType::kMemLoad:
      case EtNodeType::kMemStore:
        return true;
    }
    return bad(fmt::format("{}: type: a NodeType from 0 to 7, got {}", where(r, i), e.type));
  }

  bool collective(uint32_t r, uint32_t i, std::map<std::string, uint32_t>& issued) {
    const EtNode& e = ranks_[r].nodes[i];
    if (!e.comm_type)
      return bad(fmt::format("{}: a COMM_COLL_NODE needs a comm_type", where(r, i)));
    if (*e.comm_type == static_cast<int64_t>(EtCollective::kBroadcast)) {
      Unit u;  // replayed as its duration, as ASTRA-sim does
      u.node.kind = GraphNode::Kind::kDelay;
      u.node.duration = Time::us(static_cast<int64_t>(std::min<uint64_t>(e.duration_us, kMaxUs)));
      u.category = "broadcast";
      u.what = where(r, i);
      u.members.emplace_back(r, i);
      unit_of_[r][i] = add_unit(std::move(u));
      return true;
    }
    const auto* row = std::find_if(kCollectives.begin(), kCollectives.end(), [&](const auto& c) {
      return static_cast<int64_t>(c.first) == *e.comm_type;
    });
    if (row == kCollectives.end()) {
      const bool known =
          *e.comm_type >= 0 && *e.comm_type <= static_cast<int64_t>(EtCollective::kBarrier);
      return bad(fmt::format(
          "{}: comm_type: ALL_REDUCE, ALL_GATHER, REDUCE_SCATTER, ALL_TO_ALL or BROADCAST (fabsim "
          "maps these; ASTRA-sim stops on the others too), got {}",
          where(r, i),
          known ? ChakraProtoMsg::CollectiveCommType_Name(
                      static_cast<ChakraProtoMsg::CollectiveCommType>(*e.comm_type))
                : fmt::format("{}", *e.comm_type)));
    }
    if (!e.comm_size || *e.comm_size < 0 || *e.comm_size > kMaxBytes) {
      return bad(fmt::format("{}: comm_size: bytes from 0 to {}", where(r, i), kMaxBytes));
    }
    const std::vector<uint32_t>& group = group_of(e);
    const std::string pg = e.pg_name ? *e.pg_name : "";
    if (std::find(group.begin(), group.end(), r) == group.end()) {
      return bad(fmt::format("{}: process group '{}' is {}, which does not hold this rank {}",
                             where(r, i), pg, ranks_text(group), r));
    }
    if (group.size() < 2) return true;  // a group of one rank moves nothing
    const std::string key = default_pg(pg) ? std::string() : pg;
    const uint32_t k = issued[key]++;
    const auto [it, added] = instances_.try_emplace({key, k}, 0U);
    if (added) {
      Unit u;
      u.node.kind = GraphNode::Kind::kCollective;
      u.node.collective = row->second;
      u.node.group = group;
      u.node.bytes = *e.comm_size;
      if (row->first == EtCollective::kAllGather && opt_.allgather_per_rank) {
        if (*e.comm_size > kMaxBytes / static_cast<int64_t>(group.size())) {
          return bad(fmt::format("{}: comm_size: at most {} bytes in all (x {} ranks), got {} per "
                                 "rank",
                                 where(r, i), kMaxBytes, group.size(), *e.comm_size));
        }
        u.node.bytes = *e.comm_size * static_cast<int64_t>(group.size());
      }
      u.category = collective_name(row->second);
      u.what = fmt::format("collective {} (in issue order) of process group '{}'", k + 1, key);
      u.pg = key;
      // One communicator per process group: its collectives run one at a time.
      u.node.comm = comms_.try_emplace(key, static_cast<uint32_t>(comms_.size() + 1)).first->second;
      u.comm_type = *e.comm_type;
      u.comm_size = *e.comm_size;
      it->second = add_unit(std::move(u));
    }
    Unit& u = units_[it->second];
    if (u.comm_type != *e.comm_type || u.comm_size != *e.comm_size) {
      const EtNode& first = ranks_[u.members[0].first].nodes[u.members[0].second];
      return bad(fmt::format("{}: the {} has comm_type {} and comm_size {} here but {} and {} "
                             "on rank {} ({}): the members of a collective must agree",
                             where(r, i), u.what, *e.comm_type, *e.comm_size, u.comm_type,
                             u.comm_size, u.members[0].first, first.name));
    }
    u.members.emplace_back(r, i);
    unit_of_[r][i] = it->second;
    return true;
  }

  bool p2p(uint32_t r, uint32_t i) {
    const EtNode& e = ranks_[r].nodes[i];
    const bool send = e.type == static_cast<int32_t>(EtNodeType::kSend);
    const auto& self = send ? e.comm_src : e.comm_dst;
    const auto& peer = send ? e.comm_dst : e.comm_src;
    const char* self_key = send ? "comm_src" : "comm_dst";
    const char* peer_key = send ? "comm_dst" : "comm_src";
    if (!peer || *peer < 0 || *peer >= n_ || *peer == r) {
      return bad(fmt::format("{}: {}: another rank below {}{}", where(r, i), peer_key, n_,
                             peer ? fmt::format(", got {}", *peer) : std::string(" (absent)")));
    }
    if (self && *self != r) {
      return bad(fmt::format("{}: {}: this file's rank {} (or absent), got {}", where(r, i),
                             self_key, r, *self));
    }
    if (!e.comm_size || *e.comm_size < 0 || *e.comm_size > kMaxBytes) {
      return bad(fmt::format("{}: comm_size: bytes from 0 to {}", where(r, i), kMaxBytes));
    }
    const auto p = static_cast<uint32_t>(*peer);
    const auto key =
        send ? std::tuple(r, p, e.comm_tag.value_or(0)) : std::tuple(p, r, e.comm_tag.value_or(0));
    (send ? sends_ : recvs_)[key].emplace_back(r, i);
    return true;
  }

  // The k-th send a -> b with tag t and the k-th receive on b from a with tag t are one transfer.
  bool match_p2p() {
    for (const auto& [key, sends] : sends_) {
      const auto& [a, b, tag] = key;
      const auto it = recvs_.find(key);
      const size_t recvs = it == recvs_.end() ? 0 : it->second.size();
      if (recvs != sends.size()) {
        const auto& [r, i] = sends[std::min(recvs, sends.size() - 1)];
        return bad(fmt::format("{}: {} sends from rank {} to rank {} with tag {} but {} matching "
                               "receives in rank {}'s trace (a send and a receive pair up in "
                               "issue order)",
                               where(r, i), sends.size(), a, b, tag, recvs, b));
      }
      for (size_t k = 0; k < sends.size(); ++k) {
        const auto& [sr, si] = sends[k];
        const auto& [rr, ri] = it->second[k];
        const int64_t bytes = *ranks_[sr].nodes[si].comm_size;
        if (*ranks_[rr].nodes[ri].comm_size != bytes) {
          return bad(fmt::format("{}: receives {} bytes, but its matching send ({}) sends {}",
                                 where(rr, ri), *ranks_[rr].nodes[ri].comm_size, where(sr, si),
                                 bytes));
        }
        Unit u;
        u.node.kind = GraphNode::Kind::kCollective;
        u.node.collective = Collective::kSendRecv;
        u.node.group = {a, b};
        u.node.bytes = bytes;
        u.category = collective_name(Collective::kSendRecv);
        u.what = fmt::format("send {} from rank {} to rank {} with tag {}", k + 1, a, b, tag);
        if (opt_.eager_p2p) {
          // The transfer waits for the sender alone; the receive passes on its own
          // dependencies and the transfer.
          u.members = {{sr, si}};
          const uint32_t id = add_unit(std::move(u));
          unit_of_[sr][si] = id;
          joins_[rr][ri] = id;
        } else {
          u.members = {{sr, si}, {rr, ri}};
          const uint32_t id = add_unit(std::move(u));
          unit_of_[sr][si] = id;
          unit_of_[rr][ri] = id;
        }
      }
    }
    for (const auto& [key, recvs] : recvs_) {
      if (sends_.find(key) == sends_.end()) {
        const auto& [a, b, tag] = key;
        const auto& [r, i] = recvs[0];
        return bad(fmt::format("{}: receives from rank {} with tag {}, but rank {}'s trace sends "
                               "rank {} nothing with that tag",
                               where(r, i), a, tag, a, b));
      }
    }
    return true;
  }

  // Every member of a collective's group holds it.
  bool complete() {
    for (const Unit& u : units_) {
      if (u.node.kind != GraphNode::Kind::kCollective || u.node.collective == Collective::kSendRecv)
        continue;
      if (u.members.size() == u.node.group.size()) continue;
      std::vector<uint32_t> missing;
      for (uint32_t g : u.node.group) {
        if (std::none_of(u.members.begin(), u.members.end(),
                         [&](const auto& m) { return m.first == g; })) {
          missing.push_back(g);
        }
      }
      return bad(fmt::format("the {} (comm_type {}, {} bytes) is missing from the traces of "
                             "ranks {}: every rank of its group {} must issue it",
                             u.what, u.comm_type, u.comm_size, ranks_text(missing),
                             ranks_text(u.node.group)));
    }
    return true;
  }

  // Dependencies between units (through pass-through nodes), then a topological order.
  bool order() {
    // Per rank: the units a node's dependents wait for (a unit: itself; a pass-through: what
    // its own dependencies wait for).
    std::vector<std::vector<std::vector<uint32_t>>> waits(n_);
    for (uint32_t r = 0; r < n_; ++r) {
      waits[r].resize(ranks_[r].nodes.size());
      for (uint32_t i : topo_[r]) {
        if (unit_of_[r][i] != kPass) {
          waits[r][i] = {unit_of_[r][i]};
          continue;
        }
        std::vector<uint32_t>& w = waits[r][i];
        for (uint32_t d : deps_[r][i]) w.insert(w.end(), waits[r][d].begin(), waits[r][d].end());
        if (joins_[r][i] != kPass) w.push_back(joins_[r][i]);
        std::sort(w.begin(), w.end());
        w.erase(std::unique(w.begin(), w.end()), w.end());
      }
    }
    std::vector<std::vector<uint32_t>> unit_deps(units_.size());
    std::vector<std::vector<uint32_t>> children(units_.size());
    std::vector<uint32_t> missing(units_.size(), 0);
    for (uint32_t u = 0; u < units_.size(); ++u) {
      auto& d = unit_deps[u];
      for (const auto& [r, i] : units_[u].members) {
        for (uint32_t p : deps_[r][i]) d.insert(d.end(), waits[r][p].begin(), waits[r][p].end());
      }
      std::sort(d.begin(), d.end());
      d.erase(std::unique(d.begin(), d.end()), d.end());
      missing[u] = static_cast<uint32_t>(d.size());
      for (uint32_t p : d) children[p].push_back(u);
    }
    std::priority_queue<uint32_t, std::vector<uint32_t>, std::greater<>> ready;
    for (uint32_t u = 0; u < units_.size(); ++u) {
      if (missing[u] == 0) ready.push(u);
    }
    position_.assign(units_.size(), kPass);
    while (!ready.empty()) {
      const uint32_t u = ready.top();
      ready.pop();
      position_[u] = static_cast<uint32_t>(sequence_.size());
      sequence_.push_back(u);
      for (uint32_t c : children[u]) {
        if (--missing[c] == 0) ready.push(c);
      }
    }
    if (sequence_.size() != units_.size()) {
      for (uint32_t u = 0; u < units_.size(); ++u) {
        if (missing[u] > 0) {
          return bad(fmt::format("{} waits, through the other ranks' dependencies, for itself: "
                                 "the ranks issue their collectives or send/receives in orders "
                                 "that would deadlock",
                                 units_[u].what));
        }
      }
    }
    unit_deps_ = std::move(unit_deps);
    return true;
  }

  bool emit() {
    TaskGraph& g = out_.graph;
    for (uint32_t u : sequence_) {
      GraphNode node = units_[u].node;
      for (uint32_t d : unit_deps_[u]) node.deps.push_back(position_[d]);
      std::sort(node.deps.begin(), node.deps.end());
      node.category = g.category(units_[u].category);
      g.add(std::move(node));
    }
    const std::string problem = g.check();
    FABSIM_CHECK(problem.empty());
    return problem.empty() || bad(problem);
  }

  const std::vector<EtRank>& ranks_;
  const ChakraOptions& opt_;
  uint32_t n_;
  ChakraGraph out_;
  std::vector<std::vector<std::vector<uint32_t>>> deps_;  // per rank, node: its deps' positions
  std::vector<std::vector<uint32_t>> topo_;               // per rank: positions, deps first
  std::map<std::string, std::vector<uint32_t>> pg_;
  std::vector<uint32_t> all_;
  std::vector<Unit> units_;
  std::vector<std::vector<uint32_t>> unit_of_;  // per rank, node: its unit or kPass
  std::map<std::pair<std::string, uint32_t>, uint32_t> instances_;
  std::map<std::string, uint32_t> comms_;  // process group -> communicator id (from 1)
  // Per rank, node: the transfer an eager receive also waits for (kPass: none).
  std::vector<std::vector<uint32_t>> joins_;
  using P2pKey = std::tuple<uint32_t, uint32_t, int64_t>;  // (sender, receiver, tag)
  std::map<P2pKey, std::vector<std::pair<uint32_t, uint32_t>>> sends_, recvs_;
  std::vector<uint32_t> sequence_;  // units in graph order
  std::vector<uint32_t> position_;  // per unit: its graph node
  std::vector<std::vector<uint32_t>> unit_deps_;
};

}  // namespace

std::string read_chakra_file(const std::string& path, EtRank* out) {
  out->file = path;
  std::ifstream in(path, std::ios::binary);
  if (!in) return fmt::format("{}: cannot open", path);
  const std::string b((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t pos = 0;
  bool metadata = true;
  while (pos < b.size()) {
    const size_t at = pos;
    uint32_t len = 0;
    if (!varint32(b, &pos, &len) || len > b.size() - pos || len > INT32_MAX) {
      return fmt::format("{}: byte {}: a message length (varint32) and that many bytes, {}", path,
                         at, pos >= b.size() ? "got the end of the file" : "got less");
    }
    if (metadata) {
      // Both GlobalMetadata fields (version, attr) are length-delimited (wire type 2); a Node
      // starts with its integer id (wire type 0) and would otherwise parse, its fields unknown.
      if (len > 0 && (static_cast<uint8_t>(b[pos]) & 7U) != 2) {
        return fmt::format("{}: byte {}: a GlobalMetadata message first, got a message whose "
                           "first field is not length-delimited (a Node? the file may lack its "
                           "GlobalMetadata)",
                           path, at);
      }
      ChakraProtoMsg::GlobalMetadata m;
      if (!m.ParseFromArray(b.data() + pos, static_cast<int>(len))) {
        return fmt::format("{}: byte {}: a GlobalMetadata message first, which does not parse",
                           path, at);
      }
      out->version = m.version();
      metadata = false;
      pos += len;
      continue;
    }
    ChakraProtoMsg::Node m;
    if (!m.ParseFromArray(b.data() + pos, static_cast<int>(len))) {
      return fmt::format("{}: byte {}: a Node message, which does not parse (message {} of the "
                         "file)",
                         path, at, out->nodes.size() + 2);
    }
    pos += len;
    EtNode e;
    e.id = m.id();
    e.name = m.name();
    e.type = static_cast<int32_t>(m.type());
    e.data_deps.assign(m.data_deps().begin(), m.data_deps().end());
    e.ctrl_deps.assign(m.ctrl_deps().begin(), m.ctrl_deps().end());
    e.duration_us = m.duration_micros();
    e.inputs_values = m.inputs().values();
    for (const auto& a : m.attr()) {
      if (a.name() == "pg_name") {
        if (a.value_case() != ChakraProtoMsg::AttributeProto::kStringVal) {
          return fmt::format("{}: node {} '{}': attribute pg_name: a string_val", path, e.id,
                             e.name);
        }
        e.pg_name = a.string_val();
        continue;
      }
      if (a.name() == "is_cpu_op") {
        if (a.value_case() != ChakraProtoMsg::AttributeProto::kBoolVal) {
          return fmt::format("{}: node {} '{}': attribute is_cpu_op: a bool_val", path, e.id,
                             e.name);
        }
        e.cpu_op = a.bool_val();
        continue;
      }
      for (const IntAttr& k : kIntAttrs) {
        if (a.name() != k.name) continue;
        const auto v = attr_integer(a);
        if (!v) {
          return fmt::format("{}: node {} '{}': attribute {}: an integer (int64_val by "
                             "convention)",
                             path, e.id, e.name, k.name);
        }
        e.*k.field = *v;
      }
    }
    out->nodes.push_back(std::move(e));
  }
  if (metadata) return fmt::format("{}: a GlobalMetadata message first, got an empty file", path);
  return "";
}

ChakraGraph build_chakra_graph(const std::vector<EtRank>& ranks, const ChakraOptions& opt) {
  return Builder(ranks, opt).run();
}

namespace {

struct ChakraKindConfig {
  std::string trace;
  std::string comm_groups;
  TracePlacement place;
  uint32_t ranks = 0;
  std::shared_ptr<const TaskGraph> graph;
  std::map<std::string, uint64_t> counts;
};

std::filesystem::path relative_to(const Section& s, const std::string& p) {
  std::filesystem::path path(p);
  if (path.is_relative()) path = std::filesystem::path(s.file()).parent_path() / path;
  return path;
}

// ASTRA-sim's comm-group file: {"<group id>": [ranks], ...}.
std::map<std::string, std::vector<uint32_t>> load_comm_groups(Section& s, const std::string& file) {
  const auto path = relative_to(s, file);
  std::ifstream in(path);
  if (!in)
    s.fail("comm_groups", fmt::format("a readable JSON file ({}: cannot open)", path.string()));
  const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
  const std::string form = fmt::format("a JSON object of process group -> list of ranks, as "
                                       "ASTRA-sim's comm-group file ({})",
                                       path.string());
  if (j.is_discarded() || !j.is_object()) s.fail("comm_groups", form);
  std::map<std::string, std::vector<uint32_t>> out;
  for (const auto& [name, ranks] : j.items()) {
    if (!ranks.is_array()) s.fail("comm_groups", form);
    for (const auto& r : ranks) {
      if (!r.is_number_unsigned() || r.get<uint64_t>() > UINT32_MAX) s.fail("comm_groups", form);
      out[name].push_back(r.get<uint32_t>());
    }
  }
  return out;
}

class ChakraKind final : public WorkloadKind {
 public:
  std::string_view name() const override { return "chakra"; }
  std::string_view description() const override {
    return "Chakra execution traces (REFERENCE.md §8.6), one <prefix>.<rank>.et per rank: "
           "compute nodes on their rank, collectives and send/receives merged across ranks into "
           "one task graph";
  }
  KindConfig load(Section& s, const HostShape& hosts) const override {
    ChakraKindConfig c;
    c.trace = s.text("trace", "",
                     "trace prefix (relative to the scenario file): rank r's file is "
                     "<trace>.<r>.et; rank r runs on GPU first + r");
    c.ranks = static_cast<uint32_t>(
        s.integer("ranks", 0, 0, 1 << 20, "ranks to read (0: every <trace>.<r>.et from r = 0 up)"));
    c.comm_groups = s.text("comm_groups", "",
                           "ASTRA-sim's comm-group JSON file, process group -> ranks (\"\": the "
                           "groups come from METADATA nodes, else from the traces)");
    ChakraOptions opt;
    opt.allgather_per_rank =
        s.choice("allgather_size", "per_rank", {"per_rank", "total"},
                 "what an ALL_GATHER's comm_size is: per_rank, one rank's input (PyTorch's "
                 "converter; S = comm_size x group size); total, nccl-tests' S") == "per_rank";
    opt.ctrl_deps = s.boolean("ctrl_deps", true,
                              "ctrl_deps are dependencies too, as ASTRA-sim's current feeder reads "
                              "them (false: data_deps alone, as the older reference feeder)");
    opt.eager_p2p =
        s.choice("p2p", "eager", {"eager", "rendezvous"},
                 "a send/receive pair: eager, the transfer starts when the sender is ready and "
                 "the receive completes once it has arrived and the receiver is ready (ASTRA-sim's "
                 "backends); rendezvous, the transfer waits for both sides") == "eager";
    c.place = load_placement(s, hosts);
    if (s.describing()) return KindConfig::of(c);
    if (c.trace.empty()) s.fail("trace", "the prefix of a Chakra trace's <prefix>.<rank>.et files");
    if (!c.comm_groups.empty()) opt.pg_ranks = load_comm_groups(s, c.comm_groups);
    const std::string prefix = relative_to(s, c.trace).string();
    std::vector<EtRank> ranks;
    for (uint32_t r = 0; c.ranks == 0 || r < c.ranks; ++r) {
      const std::string file = fmt::format("{}.{}.et", prefix, r);
      if (c.ranks == 0 && !std::filesystem::exists(file)) break;
      EtRank rank;
      const std::string error = read_chakra_file(file, &rank);
      if (!error.empty()) s.fail("trace", fmt::format("a Chakra execution trace ({})", error));
      ranks.push_back(std::move(rank));
    }
    if (ranks.empty()) {
      s.fail("trace", fmt::format("a Chakra trace, rank 0's file {}.0.et at least", prefix));
    }
    if (c.ranks == 0) {
      // Discovery stops at the first missing file: a later rank's file means one is missing.
      const std::filesystem::path pre(prefix);
      const std::string stem = pre.filename().string() + ".";
      std::error_code ec;
      for (const auto& f : std::filesystem::directory_iterator(
               pre.parent_path().empty() ? std::filesystem::path(".") : pre.parent_path(), ec)) {
        const std::string name = f.path().filename().string();
        if (!name.starts_with(stem) || !name.ends_with(".et")) continue;
        const std::string digits = name.substr(stem.size(), name.size() - stem.size() - 3);
        if (digits.empty() || digits.size() > 9 ||
            !std::all_of(digits.begin(), digits.end(),
                         [](char ch) { return ch >= '0' && ch <= '9'; }))
          continue;
        if (std::stoul(digits) > ranks.size()) {
          s.fail("trace", fmt::format("every rank's file from 0 up: {} exists but {}.{}.et does "
                                      "not (or set workload.ranks)",
                                      f.path().string(), prefix, ranks.size()));
        }
      }
    }
    c.ranks = static_cast<uint32_t>(ranks.size());
    check_placement(s, c.place, hosts, c.ranks, "trace");
    ChakraGraph g = build_chakra_graph(ranks, opt);
    if (!g.error.empty()) s.fail("trace", fmt::format("a Chakra execution trace ({})", g.error));
    for (const std::string& w : g.warnings) s.warn("trace", w);
    c.counts = std::move(g.counts);
    c.graph = std::make_shared<const TaskGraph>(std::move(g.graph));
    return KindConfig::of(c);
  }
  WorkloadPlan plan(const KindConfig& cfg, int /*hosts*/, Rng& /*rng*/) const override {
    const auto& c = cfg.get<ChakraKindConfig>();
    WorkloadPlan p;
    p.graphs.push_back(trace_job("chakra", c.graph, c.ranks, c.place, c.place.iterations));
    p.summary = {{"kind", "chakra"},
                 {"trace", c.trace},
                 {"ranks", c.ranks},
                 {"trace_nodes", c.counts},
                 {"graph_nodes", c.graph->nodes.size()}};
    return p;
  }
  WorkloadDemand demand(const KindConfig& cfg, int /*hosts*/) const override {
    const auto& c = cfg.get<ChakraKindConfig>();
    return graph_demand(*c.graph, c.place.iterations, c.place.channels, "workload.trace");
  }
  std::vector<WorkloadStart> starts(const KindConfig& cfg) const override {
    return {{"start", cfg.get<ChakraKindConfig>().place.start}};
  }
};

}  // namespace

std::unique_ptr<WorkloadKind> make_chakra_kind() {
  return std::make_unique<ChakraKind>();
}

}  // namespace fabsim
