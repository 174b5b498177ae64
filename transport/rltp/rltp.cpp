// RLTP (seed 004): what the seed specifies and what it leaves open.
//
// Specified (seed 004 §3.1, Fig. 5, §3.3, Fig. 6):
//  - RLTP rides on UDP/IP/Ethernet; its header has a frame type (which module takes the packet:
//    QP, CFG, DHCP), the source and destination device ids (looked up in the node table), a
//    sub-packet number and flags;
//  - loss is recovered by selective retransmission based on IRN: the receiver keeps a bitmap,
//    holds later packets within a configured range and answers a gap with a response carrying
//    a NACK; the sender retransmits the missing packets only;
//  - it provides timeouts, flow control and congestion management ("basic functions");
//  - host-to-GPU commands cost about 1 ms (§5.1, Fig. 15), GPU-to-GPU triggering tens of ns.
// Not specified, hence parameters marked [UNVERIFIED] in docs/MODEL.md: the width of each header
// field (the figure with the layout did not survive), the bitmap size, the timeouts, the
// congestion control (default: none, line rate), the MTU.
//
// The data path is RoceTransport's with recovery = "irn" (transport/selective_repeat.h) and op =
// "write" by default; this kind gives it RLTP's header on the wire and its defaults. The iRDMA
// control plane (DHCP registration, node-table sync, QP and CFG set-up) shows in the data path
// only as `connection_setup` (first use of a device pair) and `command_latency`.
#include "transport/rltp/rltp.h"

#include "transport/roce.h"

namespace fabsim {
namespace {

// Ethernet 14 + FCS 4 + IPv4 20 + UDP 8: what RLTP rides on.
constexpr int64_t kUdpIpEthBytes = 46;

struct RltpConfig {
  RoceConfig rdma;
  int64_t type_bytes = 1;       // frame type [UNVERIFIED width]
  int64_t device_id_bytes = 2;  // each of source and destination device id [UNVERIFIED]
  int64_t subpacket_bytes = 4;  // sub-packet number [UNVERIFIED; RoCE's PSN field is 4 B]
  int64_t flags_bytes = 1;      // flags, incl. the NACK flag [UNVERIFIED]
  int64_t header() const {
    return type_bytes + 2 * device_id_bytes + subpacket_bytes + flags_bytes;
  }
};

class RltpKind final : public TransportKind {
 public:
  std::string_view name() const override { return "rltp"; }
  std::string_view description() const override {
    return "RLTP of Direct xPU (seed 004): RDMA reads/writes over UDP, IRN-style selective "
           "repeat (bitmap + NACK), its own header on the wire";
  }
  KindConfig load(Section& s, const TransportEnv& env) const override {
    RltpConfig c;
    c.rdma.name = "rltp";
    c.rdma.op = RdmaOp::kWrite;
    c.type_bytes = s.integer("type_bytes", c.type_bytes, 1, 16, "RLTP frame type field bytes");
    c.device_id_bytes = s.integer("device_id_bytes", c.device_id_bytes, 1, 16,
                                  "bytes of each of the source and destination device ids");
    c.subpacket_bytes =
        s.integer("subpacket_bytes", c.subpacket_bytes, 1, 16, "sub-packet number field bytes");
    c.flags_bytes = s.integer("flags_bytes", c.flags_bytes, 1, 16, "flags field bytes");
    if (!s.describing() && env.wire.header_bytes != WireConfig{}.header_bytes) {
      s.fail("header_bytes",
             "unset for rltp: its header is Ethernet+IPv4+UDP (46 B) plus the RLTP fields "
             "(type_bytes, device_id_bytes x 2, subpacket_bytes, flags_bytes)");
    }
    load_rdma(s, env, "irn", "none", c.rdma);
    if (!s.describing() && c.rdma.op == RdmaOp::kSend) {
      s.fail("op", "\"write\" or \"read\" (RLTP carries RDMA-like reads and writes)");
    }
    return KindConfig::of(c);
  }
  bool reads_int(const KindConfig& cfg) const override {
    return rdma_reads_int(cfg.get<RltpConfig>().rdma);
  }
  bool reordering_is_loss() const override { return true; }
  std::unique_ptr<Transport> build(Network& net, FlowTable& flows, const KindConfig& cfg,
                                   const WireConfig& wire) const override {
    const RltpConfig& c = cfg.get<RltpConfig>();
    RoceConfig r = c.rdma;
    r.wire = wire;
    r.wire.header_bytes = kUdpIpEthBytes + c.header();
    return std::make_unique<RoceTransport>(net, flows, r);
  }
};

}  // namespace

std::unique_ptr<TransportKind> make_rltp_kind() {
  return std::make_unique<RltpKind>();
}

}  // namespace fabsim
