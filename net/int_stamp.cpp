// INT stamping; see int_stamp.h.
#include "net/int_stamp.h"

#include "net/port.h"

namespace fabsim {

namespace {

uint64_t truncate(uint64_t v, int64_t unit) {
  return unit > 0 ? v / static_cast<uint64_t>(unit) * static_cast<uint64_t>(unit) : v;
}

Time truncate(Time t, Time unit) {
  return unit > Time() ? Time::ps(t.ps() / unit.ps() * unit.ps()) : t;
}

}  // namespace

void IntStampHook::on_dequeue(Packet& p, EgressPort& port) {
  // Data packets only, as HPCC ns-3 stamps UDP data alone (SwitchNotifyDequeue checks
  // l3Prot 0x11): an ACK carries its data packet's stack back unchanged, even when it shares
  // the data's class (transport.ack_class = "data") and so this port's hook. Until 2026-11-30
  // such an ACK took a record at every hop back while its stack had room, so HPCC saw the
  // reverse path's ports too on paths of fewer than five hops.
  if (p.block == 0 || !is_data(p.type)) return;
  ExtBlock& b = sim_.pool().block(p);
  IntStackHeader h = int_header(b);
  if (h.capacity == 0) return;
  if (h.hops >= h.capacity) {
    if (h.overflow < UINT8_MAX) ++h.overflow;
    ++full_;
    b.set_at<IntStackHeader, kIntHeaderOffset>(h);
    return;
  }
  IntHop hop;
  hop.ts = truncate(sim_.now(), units_.time);
  // Frames the port finished before this one, as HPCC ns-3 pushes m_txBytes before adding the
  // departing packet (switch-node.cc SwitchNotifyDequeue).
  hop.tx_bytes = truncate(port.counters().tx_bytes, units_.tx_bytes.count());
  hop.qlen = static_cast<uint32_t>(
      truncate(static_cast<uint64_t>(port.total_queued_bytes()), units_.qlen.count()));
  hop.rate_mbps = static_cast<uint32_t>(port.link()->config().rate.bps() / 1'000'000);
  b.set<IntHop>(int_hop_offset(h.hops), hop);
  ++h.hops;
  b.set_at<IntStackHeader, kIntHeaderOffset>(h);
  ++stamped_;
}

}  // namespace fabsim
