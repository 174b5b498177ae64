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

void RedEcnHook::on_dequeue(Packet& p, EgressPort& port) {
  if (marker_.mark(p, port.queued_bytes(p.tclass))) ++port.counters().ecn_marks;
}

}  // namespace fabsim
