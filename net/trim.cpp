// Packet trimming; see trim.h.
#include "net/trim.h"

#include <algorithm>  // max

#include "net/port.h"

namespace fabsim {

Admission TrimHook::on_enqueue(const Packet& p, const EgressPort& port, bool buffer_ok) {
  if (!is_data(p.type) || (p.flags & kTrimmed) != 0 || p.payload == 0) return Admission::kAdmit;
  if (!buffer_ok) return cfg_.trim_on_overflow ? Admission::kTrim : Admission::kAdmit;
  const int64_t after = port.queued_bytes(p.tclass) + static_cast<int64_t>(p.size) +
                        (cfg_.count_on_wire ? port.on_wire_bytes() : 0);
  // A threshold scaled below one frame still admits a frame into an empty queue.
  int64_t limit = threshold(port);
  if (cfg_.reference_rate.bps() > 0) limit = std::max<int64_t>(limit, p.size);
  if (after <= limit) return Admission::kAdmit;
  return cfg_.random_victim && rng_.bernoulli(0.5) ? Admission::kTrimTail : Admission::kTrim;
}

int64_t TrimHook::threshold(const EgressPort& port) const {
  if (cfg_.reference_rate.bps() <= 0) return cfg_.threshold.count();
  return scale_by_rate(cfg_.threshold.count(), port.link()->config().rate, cfg_.reference_rate);
}

}  // namespace fabsim
