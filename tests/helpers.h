// Shared test fixtures: a recording endpoint and packet construction.
#pragma once

#include <algorithm>   // min, max
#include <functional>  // At's action
#include <map>         // bytes per flow
#include <ostream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "core/simulation.h"
#include "net/host.h"
#include "transport/flow.h"

namespace fabsim::test {

/// Runs `fn` at simulated time `t` (Simulation::run(until) stops at the last event before
/// `until` without moving the clock there: a test that acts at a time schedules it).
class At : public EventTarget {
 public:
  At(Simulation& sim, Time t, std::function<void()> fn) : fn_(std::move(fn)) {
    sim.schedule(t, this, 0);
  }
  void on_event(uint32_t /*tag*/, uint32_t /*gen*/) override { fn_(); }

 private:
  std::function<void()> fn_;
};

/// Records every packet it receives, then returns it to the pool.
class RecordingSink : public Endpoint {
 public:
  struct Arrival {
    Time at;
    uint64_t seq;
    uint8_t tclass;
    uint32_t src;
    Ecn ecn;
  };
  explicit RecordingSink(Simulation& sim) : sim_(sim) {}
  void receive(Packet* p) override {
    arrivals.push_back({sim_.now(), p->seq, p->tclass, p->src, p->ecn});
    sim_.pool().release(p);
  }
  std::vector<Arrival> arrivals;

 private:
  Simulation& sim_;
};

/// Counts and frees what reaches the far end of one link (link-level tests).
class CountingNode : public Node {
 public:
  explicit CountingNode(Simulation& sim) : sim_(sim) {}
  void receive(Packet* p, uint16_t /*port*/) override {
    ++received;
    sim_.pool().release(p);
  }
  void on_dequeue(uint16_t /*port*/, Packet& /*p*/) override {}
  Packet* pull(uint16_t /*port*/, uint8_t /*mask*/) override { return nullptr; }
  const std::string& name() const override { return name_; }
  uint64_t received = 0;

 private:
  Simulation& sim_;
  std::string name_ = "sink";
};

/// A UET scenario on a two-tier fabric of `spines` spines, 16 hosts per leaf (fewer below 16
/// hosts), 100 Gb/s and 1 us everywhere, PFC off, 4,086 B payload; `extra` goes on inside
/// [transport] and may open further tables.
inline std::string uet_fabric(int hosts, int spines, const std::string& extra) {
  return fmt::format(R"(
name = "uet"
[simulation]
stop_time = "50ms"
[topology]
kind = "leaf_spine"
servers = {0}
gpus_per_server = 1
servers_per_leaf = {2}
spines = {1}
nic_rate = "100Gbps"
uplink_rate = "100Gbps"
host_link_delay = "1us"
fabric_link_delay = "1us"
[network.pfc]
enabled = false
[transport]
kind = "uet"
payload = 4086
{3}
)",
                     hosts, spines, hosts < 16 ? hosts / 2 : 16, extra);
}

/// A small leaf-spine (4 servers of 4 GPUs, 4 spines) with the given transport kind, its
/// congestion control (`cc`, "" for the kind's default), routing policy and fabric kind: for the
/// loader's checks of which transports may run over which path choices.
inline std::string paths_toml(const std::string& kind, const std::string& cc,
                              const std::string& policy, const std::string& fabric) {
  return fmt::format(R"(
[topology]
kind = "leaf_spine"
servers = 4
gpus_per_server = 4
spines = 4
[transport]
kind = "{}"
{}
[routing]
policy = "{}"
[fabric]
kind = "{}"
)",
                     kind, cc.empty() ? std::string() : "cc = \"" + cc + "\"", policy, fabric);
}

/// A 2:1 bottleneck: hosts 1 and 2 each send `bytes` to host 0 through one 100G switch, 1 us
/// links, PFC off, the second flow starting 100 us after the first, every arrival traced.
/// `tables` adds the scenario's own TOML tables ([transport], [network.ecn], ...); `output`
/// adds keys to [output].
inline std::string two_to_one_toml(const std::string& tables, const std::string& bytes,
                                   const std::string& output = "") {
  return R"(
[simulation]
stop_time = "100ms"
[topology]
kind = "single_switch"
hosts = 3
nic_rate = "100Gbps"
host_link_delay = "1us"
[network.pfc]
enabled = false
)" + tables +
         R"(
[workload]
kind = "flows"
[[workload.flows]]
src = 1
dst = 0
bytes = ")" +
         bytes + R"("
[[workload.flows]]
src = 2
dst = 0
bytes = ")" +
         bytes + R"("
start = "100us"
[output]
trace = true
)" + output;
}

/// Two flows' receive rates (Gb/s) over [from, to) from traced arrivals ('r' events) of flows
/// 0 and 1, and how close they are.
struct Shares {
  double a = 0;
  double b = 0;
  double ratio() const { return std::min(a, b) / std::max(a, b); }
};
inline Shares shares(const std::vector<TraceEvent>& trace, Time from, Time to) {
  std::map<uint32_t, int64_t> bytes;
  for (const TraceEvent& e : trace) {
    if (e.kind == 'r' && e.time >= from && e.time < to) bytes[e.flow] += e.bytes;
  }
  const double s = (to - from).sec_f();
  return {static_cast<double>(bytes[0]) * 8 / s / 1e9, static_cast<double>(bytes[1]) * 8 / s / 1e9};
}

inline Packet* make_packet(Simulation& sim, uint32_t src, uint32_t dst, uint32_t size,
                           uint8_t tclass, uint32_t endpoint, uint64_t seq = 0) {
  Packet* p = sim.pool().acquire();
  p->type = PacketType::kData;
  p->src = src;
  p->dst = dst;
  p->size = size;
  p->payload = size;
  p->tclass = tclass;
  p->endpoint = endpoint;
  p->seq = seq;
  return p;
}

}  // namespace fabsim::test

namespace fabsim {
/// GoogleTest prints a Time in a failed assertion as picoseconds (found by argument lookup).
inline void PrintTo(Time t, std::ostream* os) {
  *os << t.ps() << " ps";
}
}  // namespace fabsim
