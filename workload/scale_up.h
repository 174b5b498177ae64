// The scale-up fabric inside a server (NVLink through an NVSwitch) as a fluid model: transfers
// between GPUs of one server share each GPU's scale-up ports with max-min fairness.
//
// Why a fluid and not packets: an NVSwitch server is non-blocking inside, so the only limits on
// a transfer are the sending GPU's egress and the receiving GPU's ingress, each `rate` per
// direction (A100: 12 NVLinks x 25 GB/s = 300 GB/s each way through the switch; H100: 450 GB/s).
// A GPU that sends to 7 peers at once (an expert-parallel AllToAll) gives each 1/7 of its egress;
// a ring gives each GPU one outgoing and one incoming transfer per channel, so c channels get
// rate/c each. The shares are max-min fair (progressive filling over the ports, the rate
// allocation a fair switch arbiter converges to) [UNVERIFIED model: NVLink's credit flow and
// the switch's arbitration are not public; REFERENCE.md §8.8 gives only the channel counts].
//
// A pure class like cc/dcqcn.h: no events, time passed in. The owner (workload/graph.cpp) adds
// transfers, asks for the next time a transfer drains, and calls drain() then; each server is
// independent, so a change re-shares only its own transfers. Adds are settled together: a
// collective releases its transfers at one instant, and re-sharing after each of T adds would
// cost O(T^2) (a 64-channel 8-GPU AllToAll: 3,584 transfers); the owner calls drain() at the
// instant of the adds, which re-shares once.
#pragma once

#include <cstdint>  // ids, bytes
#include <vector>   // transfers, ports

#include "core/units.h"

namespace fabsim {

class ScaleUpFabric {
 public:
  /// A transfer between two GPUs of one server; `cookie` is the owner's name for it.
  struct Transfer {
    uint32_t src = 0;  // sending GPU (host id)
    uint32_t dst = 0;  // receiving GPU (host id)
    uint64_t cookie = 0;
    double bits = 0;   // left to send at `since`
    double rate = 0;   // current share, bits per picosecond
    Time finish;       // when it drains at its current share
    uint32_t out = 0;  // index of the sender's egress port in the server's ports
    uint32_t in = 0;   // index of the receiver's ingress port
  };

  /// Starts a transfer of `bytes` (> 0) from GPU `src` to GPU `dst` (src != dst) of `server`, whose
  /// GPUs have scale-up ports of `rate` each way, at `now` (not before the server's last add or
  /// drain). The server is re-shared at `now` when next asked (drain, next_drain, transfers).
  /// Every transfer through a GPU's port gives the same `rate` (checked in checks builds).
  void add(uint32_t server, uint32_t src, uint32_t dst, int64_t bytes, Rate rate, uint64_t cookie,
           Time now);
  /// The earliest time a transfer of `server` drains (Time::max() if it has none).
  Time next_drain(uint32_t server);
  /// Removes the transfers of `server` that have drained by `now`, appends their cookies to
  /// `done` in the order they were added, and re-shares the rest.
  void drain(uint32_t server, Time now, std::vector<uint64_t>* done);
  /// Transfers of `server` in flight, in the order they were added (tests, reports).
  const std::vector<Transfer>& transfers(uint32_t server);

 private:
  struct Port {
    uint32_t gpu = 0;
    bool egress = false;
    double capacity = 0;  // bits per picosecond
  };
  struct Server {
    std::vector<Transfer> transfers;
    std::vector<Port> ports;  // every GPU port a transfer has used, in first-use order
    Time since;               // when `bits` were last brought up to date
    bool unshared = false;    // transfers were added since the last share
  };
  Server& server(uint32_t id);
  static uint32_t port_of(Server& s, uint32_t gpu, bool egress, double capacity);
  static void advance(Server& s, Time now);
  void share(Server& s, Time now);
  void settle(Server& s);  // shares at `since` if transfers were added

  std::vector<Server> servers_;
  std::vector<double> left_;     // share(): capacity left per port
  std::vector<uint32_t> users_;  // share(): transfers not yet given a rate, per port
  std::vector<bool> fixed_;      // share(): per transfer
};

}  // namespace fabsim
