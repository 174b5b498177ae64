// Training iterations as task graphs; see training.h.
#include "workload/training/training.h"

#include <fmt/format.h>  // messages

#include <algorithm>  // max, min, sort
#include <cmath>      // llround
#include <map>        // buckets per stage, communicators
#include <utility>    // pair
#include <vector>     // frontiers

#include "core/assert.h"
#include "workload/kind.h"

namespace fabsim {

int64_t ModelConfig::layer_params() const {
  const int64_t kv = static_cast<int64_t>(kv_heads) * head_dim();
  const int64_t attention = 2 * hidden * hidden + 2 * hidden * kv;           // Q, O; K, V (GQA)
  const int64_t mlp = 3 * hidden * ffn;                                      // gate, up, down
  const int64_t moe = experts > 0 ? experts * mlp + hidden * experts : mlp;  // + router
  return attention + moe + 2 * hidden;                                       // + two norms
}

double ModelConfig::attention_flops_per_token() const {
  const double h = static_cast<double>(hidden);
  const double kv = static_cast<double>(kv_heads) * static_cast<double>(head_dim());
  return 2.0 * (2.0 * h * h + 2.0 * h * kv) + 4.0 * static_cast<double>(seq) * h;
}

double ModelConfig::mlp_flops_per_token() const {
  const double h = static_cast<double>(hidden);
  const double dense = 2.0 * 3.0 * h * static_cast<double>(ffn);
  if (experts == 0) return dense;
  return static_cast<double>(top_k) * dense + 2.0 * h * static_cast<double>(experts);
}

namespace {

Time flops_time(double flops, const TrainingConfig& c) {
  return Time::ps(std::llround(flops / (c.peak_flops * c.efficiency) * 1e12));
}

// Builds the graph stage by stage in an order in which every node's dependencies come first.
class Builder {
 public:
  explicit Builder(const TrainingConfig& c)
      : c_(c), t_(c.parallel.tp), p_(c.parallel.pp), d_(c.parallel.dp), e_(c.parallel.ep),
        m_(c.parallel.micro_batches()), last_(static_cast<size_t>(c.parallel.ranks()), -1) {
    compute_ = g_.category("compute");
    tp_ = g_.category("tp");
    pp_ = g_.category("pp");
    dp_ = g_.category("dp");
    ep_ = g_.category("ep");
    const ModelConfig& mo = c.model;
    const double tokens = static_cast<double>(c.parallel.micro_batch * mo.seq);
    const double fwd_factor = 1.0 / t_;
    attn_fwd_ = flops_time(mo.attention_flops_per_token() * tokens * fwd_factor, c);
    mlp_fwd_ = flops_time(mo.mlp_flops_per_token() * tokens * fwd_factor, c);
    head_fwd_ =
        flops_time(2.0 * tokens * static_cast<double>(mo.hidden * mo.vocab) * fwd_factor, c);
    // Backward = 2 x forward; full recomputation replays each layer's forward, collectives
    // included, before its backward (backward_layer).
    attn_bwd_ = attn_fwd_ + attn_fwd_;
    mlp_bwd_ = mlp_fwd_ + mlp_fwd_;
    head_bwd_ = head_fwd_ + head_fwd_;  // the LM head is not recomputed (§8.2)
    const int64_t bsh = int64_t{c.parallel.micro_batch} * mo.seq * mo.hidden;
    activation_bytes_ = bsh * c.bytes_per_element;
    pp_bytes_ = t_ > 1 ? activation_bytes_ / t_ : activation_bytes_;
    a2a_bytes_ = bsh * std::max(mo.top_k, 1) * c.bytes_per_element / t_;
    // Per layer and rank: the dense gradients (attention, router, norms), reduced over all d
    // data-parallel ranks, and the local experts' (experts / ep of them), reduced over the
    // d / ep ranks that hold the same experts (§8.3: expert-data-parallel groups).
    layer_grad_bytes_ = (mo.layer_params() - mo.expert_params()) / t_ * c.grad_bytes;
    expert_grad_bytes_ = mo.expert_params() / e_ / t_ * c.grad_bytes;
    edge_params_ = mo.vocab * mo.hidden / t_;  // embedding (first stage), LM head (last stage)
    bucket_ = c.bucket_bytes > 0
                  ? c.bucket_bytes
                  : std::max<int64_t>(40'000'000, int64_t{1'000'000} * d_) * c.grad_bytes;
    layers_per_stage_ = mo.layers / p_;
  }

  TaskGraph build() {
    // Each stage's 1F1B order: +j = forward of micro-batch j, -(j+1) = its backward.
    std::vector<std::vector<int>> order(static_cast<size_t>(p_));
    for (int s = 0; s < p_; ++s) {
      const int warm = std::min(p_ - s - 1, m_);
      for (int j = 0; j < warm; ++j) order[s].push_back(j);
      for (int i = 0; i < m_ - warm; ++i) {
        order[s].push_back(warm + i);
        order[s].push_back(-(i + 1));
      }
      for (int i = m_ - warm; i < m_; ++i) order[s].push_back(-(i + 1));
    }
    fwd_send_.assign(static_cast<size_t>(p_ * m_), {});
    bwd_send_.assign(static_cast<size_t>(p_ * m_), {});
    std::vector<size_t> next(static_cast<size_t>(p_), 0);
    for (bool progress = true; progress;) {
      progress = false;
      for (int s = 0; s < p_; ++s) {
        while (next[s] < order[s].size()) {
          const int op = order[s][next[s]];
          const int j = op >= 0 ? op : -op - 1;
          if (op >= 0 && s > 0 && fwd_send_[idx(s - 1, j)].empty()) break;
          if (op < 0 && s < p_ - 1 && bwd_send_[idx(s + 1, j)].empty()) break;
          if (op >= 0) {
            forward(s, j);
          } else {
            backward(s, j);
          }
          ++next[s];
          progress = true;
        }
      }
    }
    for (int s = 0; s < p_; ++s) FABSIM_ASSERT(next[s] == order[s].size());
    finish();
    return std::move(g_);
  }

 private:
  size_t idx(int s, int j) const { return static_cast<size_t>(s * m_ + j); }
  uint32_t rank(int tp, int dp, int pp) const {
    return static_cast<uint32_t>(tp + t_ * (dp + d_ * pp));
  }

  // A compute node on rank `r` after the rank's previous one (the schedule's order) and `dep`.
  uint32_t compute(uint32_t r, Time d, int64_t dep) {
    GraphNode n;
    n.kind = GraphNode::Kind::kCompute;
    n.rank = r;
    n.duration = d;
    n.category = compute_;
    if (last_[r] >= 0) n.deps.push_back(static_cast<uint32_t>(last_[r]));
    if (dep >= 0 && dep != last_[r]) n.deps.push_back(static_cast<uint32_t>(dep));
    const uint32_t id = g_.add(std::move(n));
    last_[r] = id;
    return id;
  }

  // `experts`: an expert-data-parallel group's collective (its own process group, even where its
  // ranks are the dense DP group's, as with ep = 1).
  uint32_t collective(Collective k, std::vector<uint32_t> group, int64_t bytes,
                      std::vector<uint32_t> deps, uint16_t cat, bool experts = false) {
    GraphNode n;
    n.kind = GraphNode::Kind::kCollective;
    n.collective = k;
    n.group = std::move(group);
    n.bytes = bytes;
    n.deps = std::move(deps);
    n.category = cat;
    n.comm = comm_of(n, experts);
    return g_.add(std::move(n));
  }

  // Megatron makes one process group per TP, DP, expert-DP and EP group, and PyTorch runs a
  // group's collectives on one NCCL stream: a communicator per (kind, expert-DP or not, set of
  // ranks). Pipeline sends are point-to-point (their own communicators, a forward and a
  // backward send may overlap): none.
  uint32_t comm_of(const GraphNode& n, bool experts) {
    if (n.collective == Collective::kSendRecv) return 0;
    std::vector<uint32_t> ranks = n.group;
    std::sort(ranks.begin(), ranks.end());
    const auto [it, added] = comms_.try_emplace({{n.category, experts}, std::move(ranks)},
                                                static_cast<uint32_t>(comms_.size() + 1));
    return it->second;
  }

  // One compute phase on every TP rank of (dp, stage), each after `in[tp]`, then the TP
  // AllReduce over the group (t > 1). Returns the per-TP-rank node that follows: the
  // AllReduce (the same node for all) or each rank's compute.
  std::vector<int64_t> phase(int dp, int s, Time d, const std::vector<int64_t>& in, bool reduce) {
    std::vector<int64_t> out(static_cast<size_t>(t_));
    std::vector<uint32_t> deps;
    for (int tp = 0; tp < t_; ++tp) {
      out[tp] = compute(rank(tp, dp, s), d, in[tp]);
      deps.push_back(static_cast<uint32_t>(out[tp]));
    }
    if (t_ > 1 && reduce) {
      std::vector<uint32_t> group;
      for (int tp = 0; tp < t_; ++tp) group.push_back(rank(tp, dp, s));
      const uint32_t ar = collective(c_.tp_collective, group, activation_bytes_, deps, tp_);
      std::fill(out.begin(), out.end(), ar);
      blocks(group, ar);
    }
    return out;
  }

  // TP AllReduces and EP AllToAlls run on the compute stream (Megatron's f/g operators and MoE
  // dispatch are synchronous): the rank's next compute, whatever it belongs to, waits for them.
  // (Until 2026-11-28 only the compute fed by the collective waited: on stage 0 the next
  // micro-batch's forward overlapped the last backward AllReduce.)
  void blocks(const std::vector<uint32_t>& group, uint32_t node) {
    for (const uint32_t r : group) last_[r] = node;
  }

  // The MoE AllToAll of every EP group of stage `s`, TP rank by TP rank, after `in`
  // (per dp, per tp). Returns the same shape.
  std::vector<std::vector<int64_t>> all_to_all(int s, const std::vector<std::vector<int64_t>>& in) {
    std::vector<std::vector<int64_t>> out = in;
    if (e_ <= 1) return out;
    for (int block = 0; block < d_ / e_; ++block) {
      for (int tp = 0; tp < t_; ++tp) {
        std::vector<uint32_t> group;
        std::vector<uint32_t> deps;
        for (int k = 0; k < e_; ++k) {
          const int dp = block * e_ + k;
          group.push_back(rank(tp, dp, s));
          if (in[dp][tp] >= 0) deps.push_back(static_cast<uint32_t>(in[dp][tp]));
        }
        std::sort(deps.begin(), deps.end());
        deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
        const uint32_t a2a = collective(Collective::kAllToAll, group, a2a_bytes_, deps, ep_);
        for (int k = 0; k < e_; ++k) out[block * e_ + k][tp] = a2a;
        blocks(group, a2a);
      }
    }
    return out;
  }

  using Frontier = std::vector<std::vector<int64_t>>;  // [dp][tp]: the node to follow
  struct Bucket {
    int64_t bytes = 0;
    Frontier after;
  };

  // A micro-batch's point-to-point transfer from stage `s` to `to` after `f`, per TP rank.
  void send(int s, int to, const Frontier& f, std::vector<uint32_t>* sends) {
    for (int dp = 0; dp < d_; ++dp) {
      for (int tp = 0; tp < t_; ++tp) {
        std::vector<uint32_t> deps;
        if (f[dp][tp] >= 0) deps.push_back(static_cast<uint32_t>(f[dp][tp]));
        sends->push_back(collective(Collective::kSendRecv, {rank(tp, dp, s), rank(tp, dp, to)},
                                    pp_bytes_, deps, pp_));
      }
    }
  }

  Frontier input(const std::vector<uint32_t>& sends) const {
    Frontier f(static_cast<size_t>(d_), std::vector<int64_t>(static_cast<size_t>(t_), -1));
    if (sends.empty()) return f;
    for (int dp = 0; dp < d_; ++dp) {
      for (int tp = 0; tp < t_; ++tp) f[dp][tp] = sends[static_cast<size_t>(dp * t_ + tp)];
    }
    return f;
  }

  void forward(int s, int j) {
    Frontier f = input(s > 0 ? fwd_send_[idx(s - 1, j)] : std::vector<uint32_t>{});
    for (int l = 0; l < layers_per_stage_; ++l) forward_layer(s, f);
    if (s == p_ - 1) {
      for (int dp = 0; dp < d_; ++dp) f[dp] = phase(dp, s, head_fwd_, f[dp], false);
    }
    if (s < p_ - 1) send(s, s + 1, f, &fwd_send_[idx(s, j)]);
  }

  // One layer's forward on stage `s` after `f`: attention and its TP AllReduce, then the MLP
  // (dense: its AllReduce; MoE: dispatch, experts, combine, AllReduce).
  void forward_layer(int s, Frontier& f) {
    const bool moe = c_.model.experts > 0;
    for (int dp = 0; dp < d_; ++dp) f[dp] = phase(dp, s, attn_fwd_, f[dp], true);
    if (moe) f = all_to_all(s, f);  // dispatch
    for (int dp = 0; dp < d_; ++dp) f[dp] = phase(dp, s, mlp_fwd_, f[dp], !moe);
    if (moe) {
      f = all_to_all(s, f);  // combine
      for (int dp = 0; dp < d_; ++dp) f[dp] = reduce_only(dp, s, f[dp]);
    }
  }

  // The TP AllReduce after the MoE combine (the g operator of the MLP block).
  std::vector<int64_t> reduce_only(int dp, int s, const std::vector<int64_t>& in) {
    if (t_ <= 1) return in;
    std::vector<uint32_t> group;
    std::vector<uint32_t> deps;
    for (int tp = 0; tp < t_; ++tp) {
      group.push_back(rank(tp, dp, s));
      if (in[tp] >= 0) deps.push_back(static_cast<uint32_t>(in[tp]));
    }
    std::sort(deps.begin(), deps.end());
    deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
    const uint32_t ar = collective(c_.tp_collective, group, activation_bytes_, deps, tp_);
    blocks(group, ar);
    return std::vector<int64_t>(static_cast<size_t>(t_), ar);
  }

  void backward(int s, int j) {
    Frontier f = input(s < p_ - 1 ? bwd_send_[idx(s + 1, j)] : std::vector<uint32_t>{});
    const bool last_mb = j == m_ - 1;
    const bool moe = c_.model.experts > 0;
    if (s == p_ - 1) {
      for (int dp = 0; dp < d_; ++dp) f[dp] = phase(dp, s, head_bwd_, f[dp], false);
      if (last_mb) grads(s, f, edge_params_ * c_.grad_bytes);
    }
    for (int l = layers_per_stage_ - 1; l >= 0; --l) {
      // Full recomputation: the layer's forward runs again first, with its TP AllReduces and
      // AllToAlls (§8.3: AICB doubles that communication), then its backward.
      if (c_.recompute) forward_layer(s, f);
      if (moe) {
        for (int dp = 0; dp < d_; ++dp) f[dp] = reduce_only(dp, s, f[dp]);
        f = all_to_all(s, f);  // combine's backward
      }
      for (int dp = 0; dp < d_; ++dp) f[dp] = phase(dp, s, mlp_bwd_, f[dp], !moe);
      if (moe) f = all_to_all(s, f);  // dispatch's backward
      for (int dp = 0; dp < d_; ++dp) f[dp] = phase(dp, s, attn_bwd_, f[dp], true);
      if (last_mb) {
        grads(s, f, layer_grad_bytes_);
        grads(s, f, expert_grad_bytes_, /*experts=*/true);
      }
    }
    if (s == 0 && last_mb) grads(s, f, edge_params_ * c_.grad_bytes);
    if (s > 0) send(s, s - 1, f, &bwd_send_[idx(s, j)]);
    if (last_mb) flush(s, /*final=*/true);
  }

  // Gradients of `bytes` per rank became final on stage `s` after `f` (the last micro-batch's
  // backward). With overlap, a full bucket is reduced at once.
  // Expert gradients (`experts`) go to their own buckets, reduced over the expert-data-parallel
  // groups; with d = ep every group is one rank and they need no traffic.
  void grads(int s, const Frontier& f, int64_t bytes, bool experts = false) {
    if (bytes <= 0 || (experts ? d_ / e_ : d_) <= 1) return;
    auto& b = (experts ? pending_experts_ : pending_)[s];
    b.bytes += bytes;
    b.after = f;
    if (c_.dp_overlap && b.bytes >= bucket_) flush_bucket(s, experts, /*final=*/false);
  }

  void flush(int s, bool final) {
    flush_bucket(s, false, final);
    flush_bucket(s, true, final);
  }

  // The data-parallel groups of TP rank `tp` on stage `s`: all d ranks, or for expert gradients
  // the d / ep ranks at each position k of their EP groups (dp = k, k + ep, ...).
  std::vector<std::vector<int>> dp_groups(bool experts) const {
    const int stride = experts ? e_ : 1;
    std::vector<std::vector<int>> groups(static_cast<size_t>(stride));
    for (int dp = 0; dp < d_; ++dp) groups[static_cast<size_t>(dp % stride)].push_back(dp);
    return groups;
  }

  void flush_bucket(int s, bool experts, bool final) {
    if ((experts ? d_ / e_ : d_) <= 1) return;
    auto& b = (experts ? pending_experts_ : pending_)[s];
    if (b.bytes == 0 || (!final && !c_.dp_overlap)) return;
    for (int tp = 0; tp < t_; ++tp) {
      for (const auto& members : dp_groups(experts)) reduce_bucket(s, tp, members, b, experts);
    }
    b.bytes = 0;
  }

  void reduce_bucket(int s, int tp, const std::vector<int>& members, const Bucket& b,
                     bool experts) {
    {
      std::vector<uint32_t> group;
      std::vector<uint32_t> deps;
      for (const int dp : members) {
        group.push_back(rank(tp, dp, s));
        if (b.after[dp][tp] >= 0) deps.push_back(static_cast<uint32_t>(b.after[dp][tp]));
      }
      std::sort(deps.begin(), deps.end());
      deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
      uint32_t done = 0;
      if (c_.dp_algorithm == DpAlgorithm::kAllReduce) {
        done = collective(Collective::kAllReduceRing, group, b.bytes, deps, dp_, experts);
      } else {
        // Distributed optimizer (REFERENCE.md §8.3): the gradients are reduced and scattered
        // here, during backward; each rank steps its 1/d shard once all of its buckets are in,
        // and the updated parameters are gathered back after that step (finish()).
        done = collective(Collective::kReduceScatter, group, b.bytes, deps, dp_, experts);
        gathers_.push_back({group, b.bytes / c_.grad_bytes * c_.bytes_per_element, experts});
      }
      for (const int dp : members) dp_done_[rank(tp, dp, s)].push_back(done);
    }
  }

  void finish() {
    if (c_.optimizer_time > Time()) {
      for (uint32_t r = 0; r < last_.size(); ++r) {
        GraphNode n;
        n.kind = GraphNode::Kind::kCompute;
        n.rank = r;
        n.duration = c_.optimizer_time;
        n.category = compute_;
        if (last_[r] >= 0) n.deps.push_back(static_cast<uint32_t>(last_[r]));
        for (uint32_t d : dp_done_[r]) n.deps.push_back(d);
        last_[r] = g_.add(std::move(n));
      }
    }
    // Distributed optimizer: each bucket's parameters are gathered once every rank of its group
    // has stepped (its optimizer node, or with no optimizer time its last compute and all of its
    // ReduceScatters). Not overlapped with the next iteration's forward (Megatron's
    // overlap_param_gather is not modelled): the iteration ends with the gathers.
    for (const auto& g : gathers_) {
      std::vector<uint32_t> deps;
      for (const uint32_t r : g.group) {
        if (last_[r] >= 0) deps.push_back(static_cast<uint32_t>(last_[r]));
        for (uint32_t d : dp_done_[r]) deps.push_back(d);
      }
      std::sort(deps.begin(), deps.end());
      deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
      collective(Collective::kAllGather, g.group, g.bytes, std::move(deps), dp_, g.experts);
    }
  }

  const TrainingConfig& c_;
  int t_, p_, d_, e_, m_;
  TaskGraph g_;
  uint16_t compute_ = 0, tp_ = 0, pp_ = 0, dp_ = 0, ep_ = 0;
  Time attn_fwd_, mlp_fwd_, head_fwd_, attn_bwd_, mlp_bwd_, head_bwd_;
  int64_t activation_bytes_ = 0, pp_bytes_ = 0, a2a_bytes_ = 0;
  int64_t layer_grad_bytes_ = 0, expert_grad_bytes_ = 0, edge_params_ = 0, bucket_ = 0;
  int layers_per_stage_ = 0;
  std::vector<int64_t> last_;                               // per rank: its last compute node
  std::vector<std::vector<uint32_t>> fwd_send_, bwd_send_;  // [stage x m + j]: sends, per dp x tp
  // Communicator ids by (category, expert-DP, sorted ranks).
  std::map<std::pair<std::pair<uint16_t, bool>, std::vector<uint32_t>>, uint32_t> comms_;
  std::map<int, Bucket> pending_;                      // per stage
  std::map<int, Bucket> pending_experts_;              // per stage: expert gradients
  std::map<uint32_t, std::vector<uint32_t>> dp_done_;  // per rank: its DP collectives
  struct Gather {
    std::vector<uint32_t> group;
    int64_t bytes = 0;
    bool experts = false;
  };
  std::vector<Gather> gathers_;  // distributed optimizer: the parameter gathers after the step
};

}  // namespace

TaskGraph build_training_graph(const TrainingConfig& cfg) {
  return Builder(cfg).build();
}

Time layer_forward_time(const TrainingConfig& cfg) {
  const double tokens = static_cast<double>(cfg.parallel.micro_batch * cfg.model.seq);
  return flops_time((cfg.model.attention_flops_per_token() + cfg.model.mlp_flops_per_token()) *
                        tokens / cfg.parallel.tp,
                    cfg);
}

namespace {

struct TrainingWorkload {
  TrainingConfig train;
  int iterations = 1;
  Time start;
  uint32_t first = 0;
  std::vector<std::vector<uint32_t>> gpus;  // per job: rank -> host
  bool ideal_network = false;
  int channels = 1;
  Rate scale_up_rate;
  Time scale_up_latency;
  std::vector<int32_t> server;  // per host (-1: no servers)
};

// Presets (REFERENCE.md §8.4). Training sequence 4,096 tokens for both; Mixtral's context is
// 32,768, the sequence it was trained on is not published [UNVERIFIED].
void apply_preset(const std::string& name, ModelConfig* m) {
  m->preset = name;
  if (name == "mixtral-8x7b") {
    m->layers = 32;
    m->hidden = 4096;
    m->heads = 32;
    m->kv_heads = 8;
    m->ffn = 14336;
    m->vocab = 32000;
    m->seq = 4096;
    m->experts = 8;
    m->top_k = 2;
    return;
  }
  *m = ModelConfig{};  // llama2-13b
  m->preset = name;
}

void load_model(Section& w, ModelConfig* m) {
  auto s = w.table("model", "the model (REFERENCE.md §8.4): a preset, each field overridable");
  const std::string preset =
      s.choice("preset", "llama2-13b", {"llama2-13b", "mixtral-8x7b"},
               "llama2-13b: 40 layers, h 5120, 40 heads, FFN 13824, vocab 32000, seq 4096; "
               "mixtral-8x7b: 32 layers, h 4096, 32 heads (8 KV), FFN 14336 per expert, 8 "
               "experts, top-2, seq 4096 [UNVERIFIED training sequence]");
  apply_preset(preset, m);
  m->layers = static_cast<int>(s.integer("layers", m->layers, 1, 100000, "transformer layers"));
  m->hidden = s.integer("hidden", m->hidden, 1, int64_t{1} << 24, "hidden size h");
  m->heads = static_cast<int>(s.integer("heads", m->heads, 1, 1 << 16, "attention heads"));
  m->kv_heads = static_cast<int>(
      s.integer("kv_heads", m->kv_heads, 1, 1 << 16, "key/value heads (GQA; = heads for MHA)"));
  m->ffn = s.integer("ffn", m->ffn, 1, int64_t{1} << 24, "SwiGLU inner size (per expert)");
  m->vocab = s.integer("vocab", m->vocab, 0, int64_t{1} << 24, "vocabulary (0: no LM head)");
  m->seq = s.integer("seq", m->seq, 1, int64_t{1} << 24, "sequence length in tokens");
  m->experts = static_cast<int>(s.integer("experts", m->experts, 0, 1 << 16, "experts (0: dense)"));
  m->top_k = static_cast<int>(s.integer("top_k", m->top_k, 0, 1 << 16, "experts per token"));
  if (!s.describing()) {
    if (m->hidden % m->heads != 0) s.fail("heads", "a divisor of the hidden size");
    if (m->heads % m->kv_heads != 0) s.fail("kv_heads", "a divisor of the head count");
    if (m->experts > 0 && (m->top_k < 1 || m->top_k > m->experts)) {
      s.fail("top_k", fmt::format("1 to experts = {}", m->experts));
    }
  }
  s.finish();
}

void load_parallel(Section& w, ParallelConfig* p) {
  auto s = w.table("parallel", "the parallel layout: degrees and batch (REFERENCE.md §8.1)");
  p->tp = static_cast<int>(s.integer("tp", p->tp, 1, 1 << 16, "tensor-parallel degree t"));
  p->pp = static_cast<int>(s.integer("pp", p->pp, 1, 1 << 16, "pipeline stages p"));
  p->dp = static_cast<int>(s.integer("dp", p->dp, 1, 1 << 20, "data-parallel degree d"));
  p->ep = static_cast<int>(
      s.integer("ep", p->ep, 1, 1 << 20, "expert-parallel degree e (MoE; divides dp and experts)"));
  p->micro_batch =
      static_cast<int>(s.integer("micro_batch", p->micro_batch, 1, 1 << 20, "micro-batch b"));
  p->global_batch = static_cast<int>(
      s.integer("global_batch", p->global_batch, 1, 1 << 30, "global batch B, sequences"));
  if (!s.describing()) {
    if (p->global_batch % (p->micro_batch * p->dp) != 0) {
      s.fail("global_batch",
             fmt::format("a multiple of micro_batch x dp = {}", p->micro_batch * p->dp));
    }
    if (p->dp % p->ep != 0) s.fail("ep", fmt::format("a divisor of dp = {}", p->dp));
  }
  s.finish();
}

class TrainingKind final : public WorkloadKind {
 public:
  std::string_view name() const override { return "training"; }
  std::string_view description() const override {
    return "training iterations: a model (presets llama2-13b, mixtral-8x7b) and a DP/TP/PP/EP "
           "layout become compute phases and collectives per iteration (1F1B, DP buckets "
           "overlapped with backward); reports iteration time, samples/s and exposed "
           "communication";
  }
  KindConfig load(Section& s, const HostShape& hosts) const override {
    TrainingWorkload c;
    TrainingConfig& t = c.train;
    load_model(s, &t.model);
    load_parallel(s, &t.parallel);
    auto g = s.table("gpu", "the GPUs: throughput and the scale-up fabric inside a server");
    t.peak_flops = g.real("peak_tflops", t.peak_flops / 1e12, 0.001, 1e9,
                          "peak dense FLOP/s per GPU, in TFLOP/s (312: A100 bf16) [UNVERIFIED: "
                          "the seeds do not name the GPU]") *
                   1e12;
    t.efficiency = g.real("efficiency", t.efficiency, 0.001, 1.0,
                          "achieved / peak on the model's GEMMs [UNVERIFIED]");
    c.scale_up_rate =
        g.rate("scale_up_rate", Rate::gbps(2400),
               "per-direction rate of each GPU's scale-up ports (NVLink through an NVSwitch; 2400 "
               "Gb/s = 300 GB/s, A100), shared max-min fairly by the transfers "
               "that use a port [UNVERIFIED]; 0: every transfer crosses the network",
               "no scale-up fabric");
    c.scale_up_latency =
        g.time("scale_up_latency", Time::us(2), "latency of a scale-up transfer [UNVERIFIED]");
    g.finish();
    c.iterations = static_cast<int>(s.integer("iterations", 1, 1, 1 << 20, "iterations"));
    c.start = s.time("start", Time(), "start of the first iteration");
    c.first = static_cast<uint32_t>(
        s.integer("first", 0, 0, INT32_MAX, "block placement: GPU of job 0's rank 0"));
    const int jobs = static_cast<int>(
        s.integer("jobs", 1, 1, 1 << 16, "training jobs at once, each with this model and layout"));
    const bool per_server =
        s.choice("placement", "block", {"block", "per_server"},
                 "block: job k's rank r on GPU first + k x ranks + r; per_server: each (dp, pp) "
                 "replica of job k on its own server, its TP ranks on GPUs k x tp .. k x tp + tp "
                 "- 1 of that server (jobs side by side in every server)") == "per_server";
    c.ideal_network = s.boolean("ideal_network", false,
                                "every transfer takes no time: the iteration is its compute");
    const int64_t ch = s.integer("channels", 0, 0, kMaxChannels,
                                 "NCCL channels per collective (0 = NCCL's count towards a "
                                 "network peer for the NIC rate, REFERENCE.md §8.8)");
    c.channels = ch > 0 ? static_cast<int>(ch) : nccl_net_channels(hosts.nic_rate);
    t.recompute = s.boolean("recompute", false, "full activation recomputation (§8.2)");
    t.dp_algorithm = s.choice("dp_algorithm", "allreduce", {"allreduce", "reducescatter_allgather"},
                              "gradient sync: ring AllReduce, or ReduceScatter + AllGather "
                              "(distributed optimizer, §8.3)") == "allreduce"
                         ? DpAlgorithm::kAllReduce
                         : DpAlgorithm::kReduceScatterAllGather;
    t.dp_overlap = s.boolean("dp_overlap", true,
                             "reduce each gradient bucket as soon as the backward has made it");
    t.bucket_bytes = s.bytes("bucket", Bytes(0), Bytes(0), Bytes(int64_t{1} << 50),
                             "gradient bucket (0 = Megatron's max(40e6, 1e6 x dp) parameters)")
                         .count();
    t.grad_bytes = static_cast<int>(
        s.integer("grad_bytes", t.grad_bytes, 1, 8, "bytes per gradient element as reduced"));
    t.bytes_per_element = static_cast<int>(s.integer("bytes_per_element", t.bytes_per_element, 1, 8,
                                                     "bytes per activation/parameter"));
    t.optimizer_time =
        s.time("optimizer_time", Time(), "optimizer step after the gradients are in [UNVERIFIED]");
    if (s.describing()) return KindConfig::of(c);
    const ParallelConfig& p = t.parallel;
    if (t.model.layers % p.pp != 0) {
      s.fail("parallel.pp", fmt::format("a divisor of model.layers = {}", t.model.layers));
    }
    if (p.ep > 1 && t.model.experts == 0) s.fail("parallel.ep", "1 for a dense model");
    // Megatron splits the attention heads and the key-value groups over the TP ranks (it
    // asserts num_attention_heads % tp == 0 and num_query_groups % tp == 0) and the FFN columns;
    // a degree that does not divide them has no such layout.
    for (const auto& [key, count] : {std::pair{"model.heads", int64_t{t.model.heads}},
                                     std::pair{"model.kv_heads", int64_t{t.model.kv_heads}},
                                     std::pair{"model.ffn", t.model.ffn}}) {
      if (count % p.tp != 0) {
        s.fail("parallel.tp", fmt::format("a divisor of {} = {}", key, count));
      }
    }
    if (t.model.experts > 0 && t.model.experts % p.ep != 0) {
      // Each expert-parallel rank holds experts / ep whole experts (§8.3).
      s.fail("parallel.ep", fmt::format("a divisor of model.experts = {}", t.model.experts));
    }
    if (per_server) {
      if (hosts.servers == 0) s.fail("placement", "\"block\" on a topology without servers");
      if (jobs * p.tp > hosts.gpus_per_server) {
        s.fail("jobs", fmt::format("jobs x tp within gpus_per_server = {}", hosts.gpus_per_server));
      }
      if (p.dp * p.pp > hosts.servers) {
        s.fail("parallel.dp", fmt::format("dp x pp within the {} servers", hosts.servers));
      }
    } else {
      const int64_t last = int64_t{c.first} + int64_t{jobs} * p.ranks() - 1;
      if (last >= hosts.hosts) {
        s.fail("parallel", fmt::format("{} job(s) of tp x pp x dp = {} ranks from GPU {} within "
                                       "the topology's {} hosts",
                                       jobs, p.ranks(), c.first, hosts.hosts));
      }
    }
    for (int k = 0; k < jobs; ++k) {
      std::vector<uint32_t> placed;
      for (int r = 0; r < p.ranks(); ++r) {
        if (per_server) {
          const int tp = r % p.tp;
          const int replica = r / p.tp;  // dp + d x pp
          placed.push_back(static_cast<uint32_t>(replica * hosts.gpus_per_server + k * p.tp + tp));
        } else {
          placed.push_back(static_cast<uint32_t>(int64_t{c.first} + int64_t{k} * p.ranks() + r));
        }
      }
      c.gpus.push_back(std::move(placed));
    }
    c.server.assign(static_cast<size_t>(hosts.hosts), -1);
    if (hosts.servers > 0 && hosts.gpus_per_server > 0) {
      for (int h = 0; h < hosts.hosts; ++h) c.server[h] = h / hosts.gpus_per_server;
    }
    return KindConfig::of(c);
  }
  WorkloadPlan plan(const KindConfig& cfg, int /*hosts*/, Rng& /*rng*/) const override {
    const auto& c = cfg.get<TrainingWorkload>();
    WorkloadPlan p;
    auto graph = std::make_shared<TaskGraph>(build_training_graph(c.train));
    const uint32_t n = static_cast<uint32_t>(c.train.parallel.ranks());
    for (size_t k = 0; k < c.gpus.size(); ++k) {
      GraphJob j;
      j.name = c.gpus.size() == 1 ? "train" : fmt::format("train{}", k);
      j.gpus = c.gpus[k];
      for (uint32_t h : j.gpus) j.server.push_back(c.server[h]);
      j.iterations = c.iterations;
      j.start = c.start;
      j.ideal_network = c.ideal_network;
      j.channels = c.channels;
      j.scale_up_rate = c.scale_up_rate;
      j.scale_up_latency = c.scale_up_latency;
      j.samples = c.train.parallel.global_batch;
      j.graph = graph;
      p.graphs.push_back(std::move(j));
    }
    const ModelConfig& m = c.train.model;
    p.summary = {{"kind", "training"},
                 {"model", m.preset},
                 {"params", m.params()},
                 {"ranks", n},
                 {"tp", c.train.parallel.tp},
                 {"pp", c.train.parallel.pp},
                 {"dp", c.train.parallel.dp},
                 {"ep", c.train.parallel.ep},
                 {"micro_batches", c.train.parallel.micro_batches()},
                 {"global_batch", c.train.parallel.global_batch},
                 {"layer_forward_ps", layer_forward_time(c.train).ps()},
                 {"jobs", c.gpus.size()},
                 {"graph_nodes", graph->nodes.size()}};
    return p;
  }
  WorkloadDemand demand(const KindConfig& cfg, int /*hosts*/) const override {
    const auto& c = cfg.get<TrainingWorkload>();
    const TaskGraph g = build_training_graph(c.train);
    WorkloadDemand d;
    for (const GraphNode& n : g.nodes) {
      if (n.kind != GraphNode::Kind::kCollective) continue;
      CollectiveOptions opt;
      opt.channels = c.channels;
      const CollectiveSize z =
          collective_size(n.collective, static_cast<int>(n.group.size()), n.bytes, opt);
      const uint64_t times = static_cast<uint64_t>(c.iterations) * c.gpus.size();
      d.flows += z.transfers * times;
      d.bytes += z.bytes * times;
      d.plan_transfers = std::max(d.plan_transfers, z.transfers);
      d.plan_deps = std::max(d.plan_deps, z.deps);
    }
    d.ranks = static_cast<uint64_t>(c.train.parallel.ranks()) * c.gpus.size();
    d.key = "workload.parallel";
    d.why =
        fmt::format("{} graph nodes per iteration x {} iterations", g.nodes.size(), c.iterations);
    return d;
  }
  std::vector<WorkloadStart> starts(const KindConfig& cfg) const override {
    return {{"start", cfg.get<TrainingWorkload>().start}};
  }
};

}  // namespace

std::unique_ptr<WorkloadKind> make_training_kind() {
  return std::make_unique<TrainingKind>();
}

}  // namespace fabsim
