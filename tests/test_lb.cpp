// Path-selection baselines: per-packet spraying cycles the ports; flowlets keep a port within a
// burst and may move after a gap.
#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "core/simulation.h"
#include "lb/spray.h"

namespace fabsim {
namespace {
using namespace literals;

Packet data_packet(uint32_t dst, uint16_t sport) {
  Packet p;
  p.type = PacketType::kData;
  p.src = 0;
  p.dst = dst;
  p.sport = sport;
  return p;
}

TEST(Spray, RoundRobinPerDestination) {
  SpraySelector s(1);
  const uint16_t ports[] = {10, 11, 12, 13};
  Packet p = data_packet(5, 1000);
  std::vector<uint16_t> seq;
  for (int i = 0; i < 8; ++i) seq.push_back(s.select(p, ports, 4));
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(seq[i + 4], seq[i]);             // period 4
    EXPECT_NE(seq[(i + 1) % 4], seq[i]);       // a new port every packet
  }
  EXPECT_EQ(std::set<uint16_t>(seq.begin(), seq.end()).size(), 4U);
  Packet ack = data_packet(5, 1000);
  ack.type = PacketType::kAck;
  const uint16_t first = s.select(ack, ports, 4);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(s.select(ack, ports, 4), first);  // control: ECMP
}

class Caller : public EventTarget {
 public:
  Caller(FlowletSelector& sel) : sel_(sel) {}
  void on_event(uint32_t /*tag*/, uint32_t /*gen*/) override {
    Packet p = data_packet(7, 4242);
    chosen.push_back(sel_.select(p, ports_, 8));
  }
  std::vector<uint16_t> chosen;

 private:
  FlowletSelector& sel_;
  const uint16_t ports_[8] = {0, 1, 2, 3, 4, 5, 6, 7};
};

TEST(Flowlet, KeepsThePortWithinAGapAndMovesAfterIt) {
  Simulation sim(1);
  FlowletSelector sel(sim, 99, 50_us);
  Caller c(sel);
  // 20 bursts of 10 packets 1 us apart, bursts 100 us apart.
  for (int b = 0; b < 20; ++b) {
    for (int k = 0; k < 10; ++k) sim.schedule(Time::us(b * 100 + k), &c, 0);
  }
  sim.run();
  ASSERT_EQ(c.chosen.size(), 200U);
  std::set<uint16_t> used;
  for (int b = 0; b < 20; ++b) {
    for (int k = 1; k < 10; ++k) EXPECT_EQ(c.chosen[b * 10 + k], c.chosen[b * 10]) << b;
    used.insert(c.chosen[b * 10]);
  }
  EXPECT_EQ(sel.flowlets(), 20U);  // one new flowlet per burst
  EXPECT_GT(used.size(), 3U);      // random re-picks over 8 ports
}

}  // namespace
}  // namespace fabsim
