// Misordering meter: at a switch, for data packets leaving towards hosts, the fraction of
// adjacent packets of a flow that arrive in the wrong order (a packet with a lower sequence
// number than the one before it). Placed before GSE's reorder stage it measures what the
// fabric delivers; seed 000 §3.1.1 analyses exactly this figure.
#pragma once

#include <cstdint>        // counters
#include <unordered_map>  // per-flow state
#include <vector>         // host-port mask

#include "net/path_selector.h"

namespace fabsim {

class MisorderMeter : public SwitchExtension {
 public:
  explicit MisorderMeter(std::vector<bool> host_port) : host_port_(std::move(host_port)) {}
  bool on_forward(Packet& p, uint16_t /*in_port*/, uint16_t out_port) override {
    if (!is_data(p.type) || !host_port_[out_port]) return true;
    auto [it, fresh] = last_.try_emplace(p.flow, p.seq);
    if (!fresh) {
      ++pairs_;
      if (p.seq < it->second) ++misordered_;
      it->second = p.seq;
    }
    return true;
  }
  uint64_t pairs() const { return pairs_; }
  uint64_t misordered() const { return misordered_; }

 private:
  std::vector<bool> host_port_;
  std::unordered_map<uint32_t, uint64_t> last_;  // flow -> last sequence number seen
  uint64_t pairs_ = 0;
  uint64_t misordered_ = 0;
};

}  // namespace fabsim
