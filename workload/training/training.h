// Training iterations (issue 19; REFERENCE.md §8.1-8.4): a model and a parallel layout become one
// iteration's task graph (workload/graph.h) of compute and collectives:
//  - compute per layer and micro-batch from the GEMM FLOPs of §8.2 (LLaMA/Mixtral layers: GQA
//    projections, SwiGLU MLP, core attention on the full s x s matrix as Megatron counts it),
//    divided by the tensor-parallel degree, at `peak x efficiency` FLOP/s; backward = 2 x
//    forward (full recomputation replays each layer's forward, collectives included, before
//    its backward); the LM head on the last stage;
//  - tensor parallel: an AllReduce of b.s.h elements after the attention and after the MLP
//    block, in forward and in backward (Megatron's f/g operators, §8.3), on the compute stream
//    (the rank's next compute waits for it);
//  - pipeline parallel: 1F1B (warm-up min(p - stage - 1, m) forwards, then one forward one
//    backward, then the cool-down backwards), each micro-batch's activation (forward) and
//    gradient (backward) sent between stages, b.s.h / t elements per TP rank (Megatron's
//    scatter/gather, §8.3);
//  - data parallel: the gradients (P / (t.p) per rank; a MoE layer's experts over their
//    expert-data-parallel group of d / ep ranks) in buckets, each reduced (AllReduce, or
//    ReduceScatter + AllGather for a distributed optimizer) as soon as the last micro-batch's
//    backward has produced it, overlapping the rest of the backward;
//  - expert parallel (MoE): per MoE layer and micro-batch, a dispatch and a combine AllToAll
//    of tokens x top_k x h elements / t in forward, and the same pair in backward (§8.3).
// Ranks: rank = tp + t x (dp + d x pp) (TP innermost, so a TP group shares a server when t
// divides the server's GPUs). Presets: LLaMA2-13B and Mixtral 8x7B (§8.4).
#pragma once

#include <cstdint>  // sizes
#include <string>   // names
#include <vector>   // layers

#include <memory>  // the kind

#include "core/units.h"
#include "workload/graph.h"
#include "workload/kind.h"

namespace fabsim {

struct ModelConfig {
  std::string preset = "llama2-13b";
  int layers = 40;
  int64_t hidden = 5120;
  int heads = 40;
  int kv_heads = 40;
  int64_t ffn = 13824;  // SwiGLU inner size (per expert for MoE)
  int64_t vocab = 32000;
  int64_t seq = 4096;
  int experts = 0;  // 0: dense
  int top_k = 0;
  int64_t head_dim() const { return hidden / heads; }
  /// Parameters of one transformer layer (attention, MLP or experts and router, two norms).
  int64_t layer_params() const;
  /// Of those, the experts' MLP parameters (all experts; 0 for a dense model). With expert
  /// parallelism a rank holds experts / ep of them and reduces their gradients over the d / ep
  /// ranks holding the same experts, not over all d (§8.3).
  int64_t expert_params() const { return experts > 0 ? int64_t{experts} * 3 * hidden * ffn : 0; }
  /// All parameters: layers, embedding, an untied LM head and the final norm.
  int64_t params() const { return layers * layer_params() + 2 * vocab * hidden + hidden; }
  /// Forward FLOPs per token of one layer's attention block (GQA projections and core attention
  /// on the full s x s matrix) and of its MLP block (SwiGLU, top_k experts and the router).
  double attention_flops_per_token() const;
  double mlp_flops_per_token() const;
};

enum class DpAlgorithm : uint8_t { kAllReduce, kReduceScatterAllGather };

struct ParallelConfig {
  int tp = 8;
  int pp = 1;
  int dp = 4;
  int ep = 1;             // experts spread over ep data-parallel ranks (MoE); divides dp
  int micro_batch = 1;    // b, sequences
  int global_batch = 32;  // B, sequences per iteration
  int micro_batches() const { return global_batch / (micro_batch * dp); }  // m
  int ranks() const { return tp * pp * dp; }
};

struct TrainingConfig {
  ModelConfig model;
  ParallelConfig parallel;
  double peak_flops = 312e12;  // per GPU [UNVERIFIED: A100 bf16 dense]
  double efficiency = 0.5;     // achieved / peak on GEMMs [UNVERIFIED]
  int bytes_per_element = 2;   // activations and parameters (bf16)
  int grad_bytes = 2;          // gradients as reduced (bf16; 4 = fp32)
  bool recompute = false;      // full activation recomputation
  DpAlgorithm dp_algorithm = DpAlgorithm::kAllReduce;
  bool dp_overlap = true;    // buckets reduced during the backward pass
  int64_t bucket_bytes = 0;  // 0 = Megatron's max(40e6, 1e6 x d) parameters x grad bytes
  Collective tp_collective = Collective::kAllReduceRing;
  Time optimizer_time;  // the optimizer step after the gradients are in
};

/// One iteration of `cfg` as a task graph over cfg.parallel.ranks() ranks.
TaskGraph build_training_graph(const TrainingConfig& cfg);

/// The forward compute time of one micro-batch through one layer on one TP rank.
Time layer_forward_time(const TrainingConfig& cfg);

std::unique_ptr<WorkloadKind> make_training_kind();

}  // namespace fabsim
