// The interface every host transport implements (datagram, RoCE, ...). The workload starts
// flows; the transport segments them into packets, drives them through the NICs and reports
// delivery to the flow table.
#pragma once

#include <cstdint>  // flow ids
#include <string>   // counter names
#include <utility>  // pair
#include <vector>   // counters

namespace fabsim {

/// What a flow's FCT spans besides its data's way from source to destination, for the ideal FCT
/// (net/ideal_fct.h): a control frame from the destination to the source before the data (an
/// RDMA read's request), and one from the destination back after the last byte (the ACK that a
/// write, or a UET message with completion = "acked", completes with). `control_bytes` is that
/// frame's size (telemetry riding on it, HPCC's INT, is the scheme's cost and not counted).
struct CompletionLegs {
  bool request = false;
  bool ack = false;
  int64_t control_bytes = 64;
};

class Transport {
 public:
  virtual ~Transport() = default;
  /// Starts flow `id` (described in the flow table) now.
  virtual void start(uint32_t id) = 0;
  /// End of run: releases any packets the transport still holds.
  virtual void finish() {}
  /// Transport-wide counters for reports (name, value), in a fixed order.
  virtual std::vector<std::pair<std::string, uint64_t>> counters() const { return {}; }
  /// Senders that gave up (a RoCE QP past its retry limit): the run did not succeed.
  virtual uint64_t failed_senders() const { return 0; }
  /// True when the transport's congestion control reads in-band telemetry: the assembly then
  /// has every switch stamp INT records at dequeue (net/int_stamp.h).
  virtual bool needs_int() const { return false; }
  /// Files of the transport's own for the run directory (name, contents), e.g. UET's
  /// credit.csv; written beside summary.json.
  virtual std::vector<std::pair<std::string, std::string>> files() const { return {}; }
  /// The control legs a flow's FCT includes (default: none, the FCT ends at the receiver).
  virtual CompletionLegs completion_legs() const { return {}; }
};

/// Wire layout shared by the transports: header bytes per data packet, ACK/CNP frame size.
struct WireConfig {
  int64_t payload = 4096;      // MTU payload bytes per data packet
  int64_t header_bytes = 62;   // Eth 14 + FCS 4 + IPv4 20 + UDP 8 + BTH 12 + ICRC 4
  int64_t control_bytes = 64;  // ACK, NACK, CNP frame size (minimum Ethernet frame)
};

}  // namespace fabsim
