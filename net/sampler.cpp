// Port sampling; see sampler.h.
#include "net/sampler.h"

namespace fabsim {

void PortSampler::add(const std::string& node, const EgressPort& port) {
  series_.push_back({node, port.index(), port.link()->config().rate, &port});
}

void PortSampler::on_event(uint32_t /*tag*/, uint32_t /*gen*/) {
  sim_.background_fired();
  for (uint32_t i = 0; i < series_.size(); ++i) {
    const EgressPort& p = *series_[i].egress;
    samples_.push_back(
        {sim_.now(), i, p.data_queued_bytes(), p.counters().tx_bytes, p.busy_time(sim_.now())});
  }
  if (sim_.foreground_pending()) sim_.schedule_background(sim_.now() + interval_, this, 0);
}

}  // namespace fabsim
