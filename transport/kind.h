// The transport family (`[transport] kind`): a kind declares its keys of `[transport]` (the
// wire keys are common) and builds the host transport (DESIGN.md "Seams"). Registered in
// scenario/kinds.cpp.
#pragma once

#include <memory>       // unique_ptr
#include <string_view>  // names

#include "cc/registry.h"
#include "config/reader.h"
#include "config/registry.h"
#include "transport/flow.h"
#include "transport/transport.h"

namespace fabsim {

class Network;

/// What a transport's keys may depend on.
struct TransportEnv {
  Rate line;                              // the hosts' NIC rate (rate presets scale with it)
  WireConfig wire;                        // the common wire keys, already read
  const Registry<CcKind>* ccs = nullptr;  // the congestion controls a transport may hold
  bool trimming = false;                  // network.trim.enabled (NSCC's delay target)
  /// network.trim.threshold (0 = one BDP) and its scale at a port of the NIC's rate (the NIC
  /// rate / network.trim.reference_rate; 1 without one): UET's default RTO.
  int64_t trim_threshold = 0;
  double trim_scale = 1.0;
};

class TransportKind {
 public:
  virtual ~TransportKind() = default;
  virtual std::string_view name() const = 0;
  virtual std::string_view description() const = 0;
  virtual KindConfig load(Section& s, const TransportEnv& env) const = 0;
  virtual std::unique_ptr<Transport> build(Network& net, FlowTable& flows, const KindConfig& cfg,
                                           const WireConfig& wire) const = 0;
  /// The header bytes of a full data packet (before security adds its own), when the kind puts
  /// its own header on the wire; `wire.header_bytes` otherwise. The switches' largest frame
  /// (buffer headroom, trimming thresholds) is computed from it.
  virtual int64_t header_bytes(const KindConfig& /*cfg*/, const WireConfig& wire) const {
    return wire.header_bytes;
  }
  /// True when the kind's receivers recognise a trimmed header (Packet kTrimmed) and recover
  /// its payload; `network.trim.enabled` is refused with any other kind.
  virtual bool handles_trim() const { return false; }
  /// True when the switches' ECN defaults for this kind are the Ultra Ethernet ones (REFERENCE.md
  /// §4.7: marking from 0.2 to 0.8 of one BDP, probability 1 at the top) rather than DCQCN's.
  virtual bool bdp_ecn_defaults() const { return false; }
  /// True when the configured congestion control reads INT records (HPCC): it compares each
  /// hop's record with the previous ACK's, so the scenario refuses per-packet path choices.
  virtual bool reads_int(const KindConfig& /*cfg*/) const { return false; }
  /// True when the kind's receivers take any out-of-order arrival for a loss (go-back-N, IRN and
  /// RLTP NACK it and the sender resends): with per-packet spraying the scenario warns.
  virtual bool reordering_is_loss() const { return false; }
};

/// `[transport]` keys every kind shares: payload, header and control frame sizes, class.
WireConfig load_wire(Section& s, uint8_t* tclass);

struct RoceConfig;
/// The keys of an RDMA transport built on RoceTransport (RoCE, RLTP): recovery and [.irn],
/// the operation and its start delays, QPs, ACKs, timeouts, and the congestion control, with
/// this kind's default recovery and CC.
void load_rdma(Section& s, const TransportEnv& env, std::string_view recovery, std::string_view cc,
               RoceConfig& r);

/// `transport.cc` (default `def`) and its table `[transport.<cc>]`.
CcConfig load_cc(Section& s, const TransportEnv& env, std::string_view def);
/// Whether an RDMA transport's congestion control reads INT (TransportKind::reads_int).
bool rdma_reads_int(const RoceConfig& r);

std::unique_ptr<TransportKind> make_datagram_kind();
std::unique_ptr<TransportKind> make_roce_kind();

}  // namespace fabsim
