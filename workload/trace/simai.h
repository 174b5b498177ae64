// SimAI / AICB workload files (issue 19 item 4; REFERENCE.md §8.5): the text file SimAI reads for
// a job, replayed as a task graph (workload/graph.h) the way SimAI's workload layer walks it.
//  - The file: line 1 the parallelism policy and `key: value` tokens (model_parallel_NPU_group,
//    ep, pp, vpp, ga, all_gpus, checkpoints, checkpoint_initiates, pp_comm); line 2 the number N
//    of layer lines; N lines of 12 whitespace-separated fields (name, dependency, then for the
//    forward, input-gradient and weight-gradient phases a compute time in ns, a comm type and its
//    bytes, then the update time in ns). Comm types NONE, ALLREDUCE, ALLGATHER, REDUCESCATTER,
//    ALLTOALL, each optionally suffixed _EP or _DP_EP, decoded by prefix in SimAI's order
//    (ALLREDUCE, ALLTOALL, ALLREDUCEALLTOALL, ALLGATHER, REDUCESCATTER): anything else is no
//    communication, and a known prefix with another suffix (e.g. ALLREDUCEALLTOALL) has no group,
//    so it moves nothing here either (both are warnings).
//  - The walk (SimAI astra-sim-alibabacloud workload/Workload.cc,
//    iterate_hybrid_parallel_Transformer[_fwd_in_bckwd]), done by every rank: forward over the
//    lines, compute then the forward collective, blocking; backward from the last line, input-
//    gradient compute, its collective (blocking), weight-gradient compute, its collective issued
//    without blocking. A line's next forward waits for its weight-gradient collective. After each
//    collective completes, the line's update time passes before its waiter goes on (Layer.cc).
//    FWD_IN_BCKWD only: forward sizes in (0, 4096) B are raised to 4096, and a line listed in
//    checkpoint_initiates first recomputes the forward from the nearest checkpoint below it.
//  - Groups (SimAI MockNcclGroup, ranks r = tp + TP x dp, PP ignored as SimAI's Sys.cc does):
//    TP = TP consecutive ranks; DP = the ranks with the same TP index (DP = all_gpus / TP); EP =
//    EP consecutive DP indices of one TP index; DP_EP = the DP indices of one TP index that are
//    equal mod EP (DP / EP of them). Without suffix, forward and input-gradient columns use TP,
//    the weight-gradient column DP. A group of one rank moves nothing.
//  - Collectives: ALLREDUCE -> allreduce_ring, ALLGATHER -> allgather, REDUCESCATTER ->
//    reducescatter, ALLTOALL -> alltoall; the bytes are nccl-tests' S (the whole array).
// Only the transformer walks are replayed (AICB writes HYBRID_TRANSFORMER_FWD_IN_BCKWD); the other
// policies are errors. pp, vpp, ga and pp_comm feed only SimAI's analytical report, not its walk:
// they are read, checked as SimAI warns, and recorded.
#pragma once

#include <cstdint>      // sizes
#include <memory>       // the kind
#include <string>       // names, messages
#include <string_view>  // file text
#include <vector>       // layers

#include "core/units.h"
#include "workload/graph.h"
#include "workload/kind.h"

namespace fabsim {

enum class SimaiComm : uint8_t { kNone, kAllReduce, kAllGather, kReduceScatter, kAllToAll };
enum class SimaiGroup : uint8_t { kNone, kTp, kDp, kEp, kDpEp };

struct SimaiCollective {
  SimaiComm type = SimaiComm::kNone;
  SimaiGroup group = SimaiGroup::kNone;
  int64_t bytes = 0;
};

/// One layer line.
struct SimaiLayer {
  std::string name;
  int line = 0;  // in the file, from 1
  Time fwd_compute;
  SimaiCollective fwd;
  Time ig_compute;
  SimaiCollective ig;
  Time wg_compute;
  SimaiCollective wg;
  Time update;
};

struct SimaiWorkload {
  std::string policy;         // as written
  bool fwd_in_bckwd = false;  // HYBRID_TRANSFORMER_FWD_IN_BCKWD
  int tp = 1;                 // model_parallel_NPU_group (0 in the file: all_gpus, as SimAI)
  int ep = 1;                 // (0 or absent in the file: 1)
  int pp = 0;                 // pp, vpp, ga, pp_comm: recorded, not replayed (0 = absent)
  int vpp = 0;
  int ga = 0;
  int64_t pp_comm = 0;
  int all_gpus = 0;
  std::vector<int> checkpoints;           // FWD_IN_BCKWD: layer indices
  std::vector<int> checkpoint_initiates;  // FWD_IN_BCKWD: layer indices
  std::vector<SimaiLayer> layers;
  int dp() const { return all_gpus / tp; }
};

/// A parsed file, or the first error ("file:line: field F (what): expected ..., got '...'").
struct SimaiParse {
  SimaiWorkload workload;
  std::string error;                  // empty: parsed
  std::vector<std::string> warnings;  // what SimAI would warn about or read as no communication
};
SimaiParse parse_simai(std::string_view text, const std::string& name);

/// The groups of kind `g` over the file's all_gpus ranks, each in ring order (ascending ranks).
std::vector<std::vector<uint32_t>> simai_groups(const SimaiWorkload& w, SimaiGroup g);

/// `passes` walks of the file as one task graph over all_gpus ranks: per rank and line one
/// compute node per phase; per group instance one collective node (deps: the members' previous
/// steps) and, after it, a delay node of the update time when that is > 0. With passes > 1, a
/// line's forward compute in pass k waits for its weight-gradient collective of pass k - 1.
/// Categories: compute, tp, dp, ep, dp_ep (collectives by group), update (delays).
TaskGraph build_simai_graph(const SimaiWorkload& w, int passes);

std::unique_ptr<WorkloadKind> make_simai_kind();

}  // namespace fabsim
