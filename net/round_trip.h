// The fabric's base round trip, for mechanisms sized by the bandwidth-delay product (IRN's
// BDP flow control, REFERENCE.md §1.8: "BDP cap = the network's max BDP"). Read off the built
// network: no topology arithmetic, only links, their rates and delays.
#pragma once

#include <cstdint>  // frame sizes
#include <vector>   // hop counts

#include "core/units.h"

namespace fabsim {

class Network;

/// The longest of the shortest unloaded round trips from host 0 to every other host: a
/// `data_frame`-byte frame out and an `ack_frame`-byte frame back, each store-and-forward
/// (serialization with framing, plus propagation and security latency, per hop). Fabrics in
/// fabsim are symmetric, so host 0 stands for every host. Zero with fewer than two hosts.
Time longest_base_rtt(Network& net, int64_t data_frame, int64_t ack_frame);

/// One bandwidth-delay product of the fabric for `frame`-byte data frames and `ack_frame`-byte
/// answers: the bytes host 0's NIC sends in longest_base_rtt(), rounded up to whole frames (at
/// least one), as uet-htsim counts its BDP in packets. Transports size windows and timeouts by
/// it, the scenario its switches' ECN and trim thresholds.
int64_t bdp_in_whole_frames(Network& net, int64_t frame, int64_t ack_frame);

/// The largest ratio, over switches with hosts attached, of the rate of their ports towards
/// hosts to the rate of their ports towards other switches (a leaf with 32 hosts and 8 equal
/// uplinks: 4). 1 when no switch has both. Read off the built links' rates and roles.
double tor_oversubscription(Network& net);

/// Switches on a shortest path (fewest hops) from host `src` to every host, indexed by host id
/// (-1 where unreachable, 0 for `src` itself).
std::vector<int> switch_hops(Network& net, uint32_t src);

}  // namespace fabsim
