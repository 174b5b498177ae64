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
  const Rate ref = marker_.config().reference_rate;
  if (ref.bps() <= 0) return threshold;
  return Bytes(scale_by_rate(threshold.count(), port.link()->config().rate, ref));
}

bool RedEcnHook::at_most_kmin(int64_t queued, const EgressPort& port) const {
  const EcnConfig& c = marker_.config();
  if (c.reference_rate.bps() <= 0) return queued <= c.kmin.count();
  return static_cast<Int128>(queued) * c.reference_rate.bps() <=
         static_cast<Int128>(c.kmin.count()) * port.link()->config().rate.bps();
}

bool RedEcnHook::may_act(const EgressPort& port, uint8_t cls) const {
  return !at_most_kmin(port.queued_bytes(cls), port);
}

void RedEcnHook::on_dequeue(Packet& p, EgressPort& port) {
  // Only an ECN-capable packet above Kmin can be marked, or draw (RedMarker::decide draws only
  // for a probability strictly between 0 and 1).
  if (p.ecn != Ecn::kEct) return;
  const EcnConfig& c = marker_.config();
  const int64_t queued = port.queued_bytes(p.tclass);
  if (at_most_kmin(queued, port)) return;
  bool marked = false;
  if (c.reference_rate.bps() > 0) {  // thresholds scale with this port's rate
    marked = marker_.mark(p, queued, scaled(c.kmin, port), scaled(c.kmax, port));
  } else {
    marked = marker_.mark(p, queued);
  }
  if (marked) ++port.counters().ecn_marks;
}

}  // namespace fabsim
