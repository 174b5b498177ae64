// Chakra execution traces (issue 19 item 4; REFERENCE.md §8.6): one protobuf file per rank,
// `<prefix>.<rank>.et`, each message prefixed by its length as a varint32, a GlobalMetadata
// first and then Nodes (schema: workload/trace/et_def.proto). The per-rank nodes become one task
// graph (workload/graph.h):
//  - COMP_NODE -> compute on its rank's stream for duration_micros (µs, as ASTRA-sim replays it);
//    one with is_cpu_op true runs on the host CPU, beside the GPU stream: a delay of its duration
//    that occupies no stream (ASTRA-sim keeps CPU and GPU operations apart; PyTorch's converter
//    chains a rank's CPU operations, so they still run in order).
//  - COMM_COLL_NODE -> a collective by its comm_type attribute: ALL_REDUCE -> allreduce_ring,
//    ALL_GATHER -> allgather, REDUCE_SCATTER -> reducescatter, ALL_TO_ALL -> alltoall; BROADCAST
//    -> a delay of its duration on that rank (ASTRA-sim replays it so); REDUCE, GATHER, SCATTER,
//    REDUCE_SCATTER_BLOCK and BARRIER are errors (ASTRA-sim stops on them too). Bytes: comm_size
//    (PyTorch's converter records the op's input bytes, so an ALL_GATHER's is one rank's part and
//    counts group-size times by default: allgather_size = "per_rank"; "total" takes it as S).
//  - Its group: pg_name "" or "0" is every rank (ASTRA-sim's default communicator); another name
//    is looked up in the comm-group file (ASTRA-sim's JSON, id -> ranks) or the process groups
//    of METADATA nodes (ASTRA-sim's `[{"pg_name", "ranks"}]` in inputs.values); a name defined
//    by neither is the ranks whose traces hold a collective of that name (fabsim's reading;
//    ASTRA-sim stops). A group of one rank moves nothing.
//  - Merging: Chakra has a node per rank, fabsim one node per collective. As NCCL orders the
//    collectives of one communicator, the k-th collective of process group P in each member's
//    issue order (its file's dependency order; file order among independent nodes) are one
//    instance: one graph node over P whose dependencies are the union of the members'. The
//    members must agree on comm_type and comm_size, and every member must hold it. The
//    collectives of one process group share a communicator (GraphNode::comm): they run one at a
//    time, as on one NCCL stream.
//  - COMM_SEND_NODE on rank a to comm_dst b with comm_tag t and the COMM_RECV_NODE on b from
//    comm_src a with tag t: the k-th of each (in issue order) are one sendrecv of comm_size
//    bytes (they must agree). Eager (the default, as ASTRA-sim's backends: REFERENCE.md §8.7, a
//    message may arrive before its receive is posted): the transfer waits for the sender's
//    dependencies only, and the receive completes when both the transfer and its own
//    dependencies have; rendezvous: the transfer waits for both sides' dependencies.
//  - data_deps and ctrl_deps are the dependencies (ASTRA-sim's current feeder resolves both by
//    default; `ctrl_deps = false` reads data_deps alone, as the older reference feeder).
//    METADATA, INVALID, MEM_LOAD and MEM_STORE nodes complete at once: their dependents wait
//    for what they wait for.
// Not modelled: ASTRA-sim's one-communication-at-a-time per rank (collectives of different
// process groups overlap here, as NCCL communicators on separate streams), involved_dim,
// priorities, start_time_micros, tensor sizes and memory nodes.
#pragma once

#include <cstdint>   // ids, sizes
#include <map>       // process groups
#include <memory>    // the kind
#include <optional>  // attributes
#include <string>    // names
#include <vector>    // nodes

#include "workload/graph.h"
#include "workload/kind.h"

namespace fabsim {

/// ChakraProtoMsg::NodeType values (checked against the generated schema in chakra.cpp).
enum class EtNodeType : int32_t {
  kInvalid = 0,
  kMetadata = 1,
  kMemLoad = 2,
  kMemStore = 3,
  kComp = 4,
  kSend = 5,
  kRecv = 6,
  kColl = 7,
};

/// ChakraProtoMsg::CollectiveCommType values.
enum class EtCollective : int64_t {
  kAllReduce = 0,
  kReduce = 1,
  kAllGather = 2,
  kGather = 3,
  kScatter = 4,
  kBroadcast = 5,
  kAllToAll = 6,
  kReduceScatter = 7,
  kReduceScatterBlock = 8,
  kBarrier = 9,
};

/// What fabsim reads of one Node.
struct EtNode {
  uint64_t id = 0;
  std::string name;
  int32_t type = 0;  // EtNodeType
  std::vector<uint64_t> data_deps;
  std::vector<uint64_t> ctrl_deps;
  uint64_t duration_us = 0;
  bool cpu_op = false;               // the is_cpu_op attribute
  std::optional<int64_t> comm_type;  // EtCollective
  std::optional<int64_t> comm_size;
  std::optional<int64_t> comm_src;
  std::optional<int64_t> comm_dst;
  std::optional<int64_t> comm_tag;
  std::optional<std::string> pg_name;
  std::string inputs_values;  // METADATA: process groups
};

/// One rank's file.
struct EtRank {
  std::string file;
  std::string version;  // GlobalMetadata.version
  std::vector<EtNode> nodes;
};

/// Reads one per-rank file into `out`; returns "" or what is wrong, naming the file, the byte
/// offset or node and the expectation.
std::string read_chakra_file(const std::string& path, EtRank* out);

struct ChakraOptions {
  bool allgather_per_rank = true;  // comm_size of ALL_GATHER: one part
  bool ctrl_deps = true;           // ctrl_deps are dependencies too (else data_deps alone)
  bool eager_p2p = true;  // a send goes when the sender is ready (else when both sides are)
  std::map<std::string, std::vector<uint32_t>> pg_ranks;  // from a comm-group file
};

struct ChakraGraph {
  TaskGraph graph;
  std::string error;  // empty: built
  std::vector<std::string> warnings;
  std::map<std::string, uint64_t> counts;  // per-rank nodes read, by NodeType name
};

/// The task graph of `ranks` (rank r = ranks[r]) under the rules above.
ChakraGraph build_chakra_graph(const std::vector<EtRank>& ranks, const ChakraOptions& opt);

std::unique_ptr<WorkloadKind> make_chakra_kind();

}  // namespace fabsim
