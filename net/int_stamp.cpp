// INT stamping; see int_stamp.h.
#include "net/int_stamp.h"

#include "net/port.h"

namespace fabsim {

void IntStampHook::on_dequeue(Packet& p, EgressPort& port) {
  if (p.block == 0) return;
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
  hop.ts = sim_.now();
  // Frames the port finished before this one, as HPCC ns-3 pushes m_txBytes before adding the
  // departing packet (switch-node.cc SwitchNotifyDequeue).
  hop.tx_bytes = port.counters().tx_bytes;
  hop.qlen = static_cast<uint32_t>(port.total_queued_bytes());
  hop.rate_mbps = static_cast<uint32_t>(port.link()->config().rate.bps() / 1'000'000);
  b.set<IntHop>(int_hop_offset(h.hops), hop);
  ++h.hops;
  b.set_at<IntStackHeader, kIntHeaderOffset>(h);
  ++stamped_;
}

}  // namespace fabsim
