// The results of one run: everything a report, a table or a test reads. Nothing here depends
// on wall-clock time except `wall_seconds`, which is never written to the JSON summary.
#pragma once

#include <cstdint>  // counters
#include <string>   // names
#include <utility>  // pair
#include <vector>   // flows, ports

#include <nlohmann/json.hpp>  // effective scenario

#include "core/ledger.h"
#include "core/units.h"
#include "net/sampler.h"
#include "transport/flow.h"
#include "workload/job.h"

namespace fabsim {

/// Counters of one switch or NIC port with something to report.
struct PortReport {
  std::string node;
  uint16_t port = 0;
  uint64_t tx_bytes = 0;
  uint64_t drops = 0;
  uint64_t ecn_marks = 0;
  uint64_t pfc_sent = 0;
  Time paused;  // summed over classes
};

struct NetworkTotals {
  uint64_t drops = 0;
  uint64_t ecn_marks = 0;
  uint64_t trims = 0;  // data packets cut to their header (network.trim)
  uint64_t pfc_frames = 0;
  uint64_t link_losses = 0;  // lost to the links' loss models: random + burst (ledger splits)
  Time pause_time;           // summed over every port and class
  Time host_pause_time;      // part of it at host NICs
  uint64_t data_packets_delivered = 0;
};

struct RunResult {
  std::string name;
  uint64_t seed = 0;
  nlohmann::ordered_json scenario;  // effective scenario
  nlohmann::ordered_json topology;  // the topology contract's summary block
  std::vector<std::pair<std::string, std::string>> fabric_rows;  // the fabric's table rows
  std::string topology_line;  // e.g. "leaf_spine (32 hosts, 4 leaves, ...)"
  int hosts = 0;
  Time end_time;                  // simulated time when the run ended (stop_time if unfinished)
  Time stalled_at = Time::max();  // unfinished and nothing left to happen after this (no
                                  // packet, no timer): e.g. unreliable traffic that lost packets
  std::vector<std::string> warnings;  // found when the run was built (Run::warnings)
  bool all_done = false;              // every flow completed
  uint64_t failed_senders = 0;  // senders that gave up (RoCE QPs, UET PDCs past their retry limit)
  /// Every flow finished and no sender failed (otherwise the command exits with 3).
  bool complete() const { return all_done && failed_senders == 0; }
  uint64_t events = 0;
  std::vector<FlowRecord> flows;
  std::vector<TraceEvent> trace;
  NetworkTotals totals;
  std::vector<PortReport> ports;    // ports with pauses, drops or marks
  std::vector<JobResult> jobs;      // workload kind "jobs"
  nlohmann::ordered_json workload;  // the workload's own figures (cdf: offered load); null if none
  /// Ideal FCT of each flow (net/ideal_fct.h) when the run reports slowdown (a cdf workload, or
  /// output.slowdown); empty otherwise.
  std::vector<Time> ideal_fct;
  int slowdown_buckets = 20;         // output.slowdown_buckets
  bool slowdown_in_summary = false;  // summary.json gets a "slowdown" block (cdf workloads)
  struct Series {
    std::string node;
    uint16_t port = 0;
    Rate rate;
  };
  std::vector<Series> series;  // sampled ports (output.sample_interval)
  std::vector<PortSample> samples;
  Time sample_interval;
  nlohmann::ordered_json fabric;  // fabric kind, GSE and misordering figures
  std::string transport_kind;
  std::vector<std::pair<std::string, uint64_t>> transport_counters;
  std::vector<std::pair<std::string, std::string>> transport_files;  // written to the run dir
  uint64_t packets_live_at_end = 0;  // packets not returned to the pool (should be 0)
  LedgerReport ledger;               // the conservation ledger (core/ledger.h)
  /// The ledger balances and every packet went back to the pool at teardown; otherwise the
  /// simulator lost or invented a packet (an internal error, exit 1).
  bool conserved() const { return ledger.balanced() && packets_live_at_end == 0; }
  double wall_seconds = 0;  // not part of the JSON summary
};

/// Why `r` is not conserved ("" if it is).
inline std::string conservation_violation(const RunResult& r) {
  if (!r.ledger.balanced()) return r.ledger.violation();
  if (r.packets_live_at_end > 0) {
    return std::to_string(r.packets_live_at_end) + " packets not returned to the pool";
  }
  return "";
}

}  // namespace fabsim
