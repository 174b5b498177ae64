// Periodic sampling of queue depth and transmitted bytes on chosen ports, for time-series
// plots. Costs one event per interval and nothing when off. It stops re-arming when it is the
// only thing left to simulate, so it never keeps a finished run alive.
#pragma once

#include <cstdint>  // byte counts
#include <string>   // node names
#include <vector>   // samples

#include "core/simulation.h"
#include "net/network.h"

namespace fabsim {

struct PortSample {
  Time time;
  uint32_t series = 0;      // index into PortSampler::series()
  int64_t queue_bytes = 0;  // bytes queued in the data classes
  uint64_t tx_bytes = 0;    // cumulative frame bytes sent
  Time busy;                // cumulative time the link was transmitting
};

class PortSampler : public EventTarget {
 public:
  struct Series {
    std::string node;
    uint16_t port;
    Rate rate;
    const EgressPort* egress;
  };
  PortSampler(Simulation& sim, Time interval) : sim_(sim), interval_(interval) {}
  void add(const std::string& node, const EgressPort& port);
  void start() { sim_.schedule_background(sim_.now(), this, 0); }
  void on_event(uint32_t tag, uint32_t gen) override;
  const std::vector<Series>& series() const { return series_; }
  const std::vector<PortSample>& samples() const { return samples_; }
  Time interval() const { return interval_; }

 private:
  Simulation& sim_;
  Time interval_;
  std::vector<Series> series_;
  std::vector<PortSample> samples_;
};

}  // namespace fabsim
