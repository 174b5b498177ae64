// The shipped transports' keys and builders: datagram and RoCEv2; see kind.h.
#include <fmt/format.h>  // messages

#include <limits>  // bounds

#include "transport/datagram.h"
#include "transport/kind.h"
#include "transport/roce.h"

namespace fabsim {
namespace {

const Bytes kMaxBytes = Bytes(std::numeric_limits<int64_t>::max() / 16);

class DatagramKind final : public TransportKind {
 public:
  std::string_view name() const override { return "datagram"; }
  std::string_view description() const override {
    return "fixed-rate datagrams: no congestion control, no retransmission; numbered so the "
           "receiver counts loss and reordering";
  }
  KindConfig load(Section& s, const TransportEnv& env) const override {
    DatagramConfig c;
    c.rate = s.rate("rate", c.rate, "sending rate of each flow", "the NIC line rate");
    c.ecn_capable =
        s.boolean("ecn_capable", c.ecn_capable, "send packets as ECT so switches mark CE");
    c.payload_min = s.bytes("payload_min", Bytes(c.payload_min), Bytes(0), Bytes(65536),
                            "> 0: payload of each packet uniform in [payload_min, payload] "
                            "(varied packet sizes)")
                        .count();
    if (!s.describing() && c.payload_min > env.wire.payload) {
      s.fail("payload_min", "a size at most transport.payload");
    }
    return KindConfig::of(c);
  }
  std::unique_ptr<Transport> build(Network& net, FlowTable& flows, const KindConfig& cfg,
                                   const WireConfig& wire) const override {
    DatagramConfig c = cfg.get<DatagramConfig>();
    c.wire = wire;
    return std::make_unique<DatagramTransport>(net, flows, c);
  }
};

class RoceKind final : public TransportKind {
 public:
  std::string_view name() const override { return "roce"; }
  std::string_view description() const override {
    return "RoCEv2 RC queue pairs: DCQCN, coalesced ACKs, go-back-N with NACK, IB-style timeout";
  }
  KindConfig load(Section& s, const TransportEnv& env) const override {
    RoceConfig r;
    load_rdma(s, env, "gbn", "dcqcn", r);
    return KindConfig::of(r);
  }
  bool reads_int(const KindConfig& cfg) const override {
    return rdma_reads_int(cfg.get<RoceConfig>());
  }
  bool reordering_is_loss() const override { return true; }
  std::unique_ptr<Transport> build(Network& net, FlowTable& flows, const KindConfig& cfg,
                                   const WireConfig& wire) const override {
    RoceConfig c = cfg.get<RoceConfig>();
    c.wire = wire;
    return std::make_unique<RoceTransport>(net, flows, c);
  }
};

}  // namespace

void load_rdma(Section& s, const TransportEnv& env, std::string_view recovery, std::string_view cc,
               RoceConfig& r) {
  r.recovery = s.choice("recovery", std::string(recovery), {"gbn", "irn"},
                        "loss recovery: gbn = go-back-N (RoCE NICs), irn = selective repeat "
                        "with a receiver bitmap, SACK NACKs and BDP flow control "
                        "(REFERENCE.md §1.8); keys in [transport.irn]") == "irn"
                   ? Recovery::kSelective
                   : Recovery::kGoBackN;
  auto irn = s.table("irn", "selective repeat (recovery = \"irn\"), the IRN paper's values");
  r.irn.rto_low = irn.time("rto_low", r.irn.rto_low,
                           "retransmission timeout while at most low_packets are in flight");
  r.irn.rto_high = irn.time("rto_high", r.irn.rto_high, "retransmission timeout otherwise");
  r.irn.low_packets = static_cast<int>(
      irn.integer("low_packets", r.irn.low_packets, 0, 1 << 20,
                  "N of RTO_low, in packets in flight (sent, neither ACKed nor SACKed)"));
  r.irn.timeout_resends_all =
      irn.choice("timeout_resend", "all", {"all", "first"},
                 "what a timeout resends: all, every outstanding packet not SACKed (REFERENCE.md "
                 "§1.8, conweave's rewind to snd_una); first, the oldest unacknowledged packet "
                 "and the un-SACKed ones below the highest SACK, as a NACK's recovery "
                 "[UNVERIFIED: which one the IRN paper's NIC does]") == "all";
  r.irn.own_timers =
      irn.choice("timers", "irn", {"irn", "ib"},
                 "retransmission timers: irn, rto_low and rto_high; ib, only the IB local ACK "
                 "timeout (rto_base x 2^rto_exponent), as conweave-ns3 runs IRN when PFC is on "
                 "(REFERENCE.md §1.8): a PFC pause longer than rto_low then resends nothing") ==
      "irn";
  r.irn.bdp_cap = irn.bytes("bdp_cap", Bytes(r.irn.bdp_cap), Bytes(0), kMaxBytes,
                            "BDP flow control: payload bytes outstanding per QP, also the "
                            "receiver bitmap's reach (0 = the whole frames the NIC rate sends "
                            "in the fabric's longest unloaded round trip, as packets)")
                      .count();
  if (!irn.describing()) {
    if (r.irn.rto_low <= Time()) irn.fail("rto_low", "a positive duration");
    if (r.irn.rto_high < r.irn.rto_low) irn.fail("rto_high", "a duration at least rto_low");
  }
  irn.finish();
  const char* op_default = r.op == RdmaOp::kWrite  ? "write"
                           : r.op == RdmaOp::kRead ? "read"
                                                   : "send";
  const std::string op = s.choice("op", op_default, {"send", "write", "read"},
                                  "RDMA operation of every flow: send completes when the last "
                                  "byte is at the receiver, write when its ACK is back at the "
                                  "initiator, read is requested by the flow's destination");
  r.op = op == "write" ? RdmaOp::kWrite : op == "read" ? RdmaOp::kRead : RdmaOp::kSend;
  r.command_latency = s.time("command_latency", r.command_latency,
                             "delay before the initiator acts on a flow (host software "
                             "posting the operation; seed 004 §5.1 measures ~1 ms host-to-GPU)");
  r.connection_setup = s.time("connection_setup", r.connection_setup,
                              "added once, when a host pair's first flow starts (QP setup)");
  r.qp_per_flow = s.boolean("qp_per_flow", r.qp_per_flow,
                            "every flow gets QPs of its own (HPCC ns-3 does); default: the "
                            "flows of a host pair share its QPs, in order");
  r.nic_jitter = s.time("nic_jitter", r.nic_jitter,
                        "per-packet NIC processing jitter: up to this much later than pacing "
                        "allows, uniform (0 = none) [UNVERIFIED magnitude]");
  r.qps_per_connection = static_cast<int>(s.integer(
      "qps_per_connection", r.qps_per_connection, 1, 256,
      "queue pairs per host pair and NCCL channel (workload.channels); a message is split "
      "evenly over them"));
  r.ack_every_packets =
      static_cast<int>(s.integer("ack_every_packets", r.ack_every_packets, 1, 1 << 20,
                                 "ACK coalescing: one ACK per N packets"));
  r.ack_every_bytes = s.bytes("ack_every_bytes", Bytes(r.ack_every_bytes), Bytes(0), kMaxBytes,
                              "ACK coalescing by bytes (0 = off); a message's end is always ACKed")
                          .count();
  r.ack_in_data_class =
      s.choice("ack_class", "control", {"control", "data"},
               "the switch queue of ACKs and NACKs: control, the strict-priority control class; "
               "data, their QP's data class, behind its data and under its PFC (as a switch "
               "classifying on DSCP/PCP, and HPCC's ns-3 for every CC); the NIC sends them ahead "
               "of data either way, and holds them while the switch pauses their class; CNPs "
               "stay in the control class") == "data";
  r.nack_interval = s.time("nack_interval", r.nack_interval,
                           "no repeated NACK for the same PSN within this time");
  r.rto_base = s.time("rto_base", r.rto_base, "IB timeout unit (4.096 us)");
  if (!s.describing() && r.rto_base <= Time()) s.fail("rto_base", "a positive duration");
  r.rto_exponent = static_cast<int>(s.integer(
      "rto_exponent", r.rto_exponent, 0, 31, "retransmission timeout = rto_base x 2^rto_exponent"));
  r.retry_limit = static_cast<int>(
      s.integer("retry_limit", r.retry_limit, 0, 1000, "consecutive timeouts before the QP fails"));
  r.rto_backoff = s.boolean("rto_backoff", r.rto_backoff, "double the timeout after each expiry");
  r.max_inflight = s.bytes("max_inflight", Bytes(r.max_inflight), Bytes(0), kMaxBytes,
                           "outstanding bytes per QP (0 = unlimited)")
                       .count();
  r.cc = load_cc(s, env, cc);
}

bool rdma_reads_int(const RoceConfig& r) {
  return r.cc.make(Rate::gbps(100), Time())->needs().int_stack;
}

CcConfig load_cc(Section& s, const TransportEnv& env, std::string_view def) {
  const std::string cc_name = s.choice("cc", std::string(def), env.ccs->names(),
                                       "congestion control of every QP; its keys are in "
                                       "[transport.<cc>]");
  CcConfig c;
  c.kind = env.ccs->find(cc_name);
  auto t = s.table(c.kind->name(), c.kind->description());
  c.config = c.kind->load(t, env.line);
  t.finish();
  return c;
}

WireConfig load_wire(Section& s, uint8_t* tclass) {
  WireConfig w;
  w.payload = s.bytes("payload", Bytes(w.payload), Bytes(1), Bytes(65536),
                      "payload bytes per data packet (MTU payload)")
                  .count();
  w.header_bytes = s.integer("header_bytes", w.header_bytes, 0, 1024,
                             "header bytes per packet: Ethernet 14 + FCS 4 + IPv4 20 + UDP 8 "
                             "+ BTH 12 + ICRC 4");
  w.control_bytes = s.integer("control_bytes", w.control_bytes, 64, 1500,
                              "frame bytes of ACK, NACK and CNP packets");
  *tclass = static_cast<uint8_t>(
      s.integer("tclass", *tclass, 0, 6, "traffic class of data packets (7 is the control class)"));
  return w;
}

std::unique_ptr<TransportKind> make_datagram_kind() {
  return std::make_unique<DatagramKind>();
}
std::unique_ptr<TransportKind> make_roce_kind() {
  return std::make_unique<RoceKind>();
}

}  // namespace fabsim
