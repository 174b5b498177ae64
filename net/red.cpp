// RED/ECN marking; see red.h.
#include "net/red.h"

#include "net/port.h"

namespace fabsim {

double ecn_mark_probability(int64_t queue_bytes, const EcnConfig& cfg) {
  if (queue_bytes <= cfg.kmin.count()) return 0.0;
  if (queue_bytes > cfg.kmax.count()) return 1.0;
  return cfg.pmax * static_cast<double>(queue_bytes - cfg.kmin.count()) /
         static_cast<double>(cfg.kmax.count() - cfg.kmin.count());
}

bool RedMarker::mark(Packet& p, int64_t queue_bytes, Bytes kmin, Bytes kmax) {
  if (p.ecn != Ecn::kEct) return false;
  EcnConfig e = cfg_;
  e.kmin = kmin;
  e.kmax = kmax;
  if (!decide(ecn_mark_probability(queue_bytes, e))) return false;
  p.ecn = Ecn::kCe;
  return true;
}

Bytes RedEcnHook::scaled(Bytes threshold, const EgressPort& port) const {
  const Int128 ref = marker_.config().reference_rate.bps();
  if (ref <= 0) return threshold;
  const Int128 rate = port.link()->config().rate.bps();
  return Bytes(static_cast<int64_t>(threshold.count() * rate / ref));
}

bool RedEcnHook::may_act(const EgressPort& port, uint8_t cls) const {
  return port.queued_bytes(cls) > scaled(marker_.config().kmin, port).count();
}

void RedEcnHook::on_dequeue(Packet& p, EgressPort& port) {
  const EcnConfig& c = marker_.config();
  const int64_t queued = port.queued_bytes(p.tclass);
  bool marked = false;
  if (c.reference_rate.bps() > 0) {  // thresholds scale with this port's rate
    marked = marker_.mark(p, queued, scaled(c.kmin, port), scaled(c.kmax, port));
  } else {
    marked = marker_.mark(p, queued);
  }
  if (marked) ++port.counters().ecn_marks;
}

}  // namespace fabsim
