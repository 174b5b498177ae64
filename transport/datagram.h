// The datagram source (issue 2): sends a flow's bytes at a fixed rate with no congestion control
// and no retransmission, numbering its packets so that the receiver counts loss and reordering.
// It drives the network in tests and benchmarks before a real transport exists.
#pragma once

#include <cstdint>  // sequence numbers
#include <memory>   // per-flow state
#include <vector>   // flows

#include "net/network.h"
#include "transport/flow.h"
#include "transport/transport.h"

namespace fabsim {

struct DatagramConfig {
  WireConfig wire;
  Rate rate = Rate(0);  // sending rate; 0 = the NIC's line rate
  bool ecn_capable = true;
  int64_t payload_min = 0;  // > 0: each packet's payload is uniform in [payload_min, payload]
};

class DatagramTransport : public Transport {
 public:
  DatagramTransport(Network& net, FlowTable& flows, const DatagramConfig& cfg);
  ~DatagramTransport() override;
  void start(uint32_t id) override;

 private:
  class Flow;
  Network& net_;
  FlowTable& flows_;
  DatagramConfig cfg_;
  std::vector<std::unique_ptr<Flow>> state_;
};

}  // namespace fabsim
