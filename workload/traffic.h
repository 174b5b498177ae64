// Synthetic traffic patterns (issue 2): a random permutation, an N:1 incast, and explicit flow
// lists; and the driver that starts each flow at its start time through a transport.
#pragma once

#include <cstdint>  // ids
#include <vector>   // flow lists

#include "core/rng.h"
#include "core/simulation.h"
#include "transport/flow.h"
#include "transport/transport.h"

namespace fabsim {

/// A uniformly random derangement of `hosts` hosts: host i's partner (never i itself). Empty
/// below 2 hosts.
std::vector<uint32_t> derangement(int hosts, Rng& rng);
/// Every host sends `bytes` to a distinct other host: a uniformly random derangement.
std::vector<FlowSpec> permutation_flows(int hosts, int64_t bytes, Time start, Rng& rng);
/// `senders` hosts (the first ones other than `receiver`, in order) each send `bytes` to it.
std::vector<FlowSpec> incast_flows(int hosts, int senders, uint32_t receiver, int64_t bytes,
                                   Time start);

/// Schedules each flow's start and hands it to the transport then.
class FlowDriver : public EventTarget {
 public:
  FlowDriver(Simulation& sim, FlowTable& flows, Transport& transport)
      : sim_(sim), flows_(flows), transport_(transport) {}
  /// Schedules flow `id` to start at its spec's start time.
  void schedule(uint32_t id) { sim_.schedule(flows_[id].spec.start, this, id); }
  void on_event(uint32_t tag, uint32_t /*gen*/) override { transport_.start(tag); }

 private:
  Simulation& sim_;
  FlowTable& flows_;
  Transport& transport_;
};

}  // namespace fabsim
